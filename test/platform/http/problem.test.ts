import { describe, expect, it } from 'vitest';
import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import {
  conflict, DomainError, ERROR_CODES, forbidden, invalid, notFound, RULE_CODES, stillReferenced, unprocessable, violation,
} from '../../../src/domain/errors.js';
import { applyOfferTransition } from '../../../src/domain/offer-workflow.js';
import { problemFromError } from '../../../src/platform/http/errors.js';
import {
  badRequest, internalProblem, Problem, problemOf, renderProblem, STATUS_OF_CODE, unauthorized,
} from '../../../src/platform/http/problem.js';
import { createLogger } from '../../../src/platform/logging/logger.js';
import { customIssue, propertyPath, violationsFromZod } from '../../../src/platform/http/validation.js';
import { timestamp } from '../../../src/platform/http/fields.js';

// Spec 7 and D10: problem+json bodies, `/errors/<status>`, `/validation_errors/<first code>`.
describe('renderProblem', () => {
  it('types every plain error as /errors/<status> with a title', () => {
    for (const status of [400, 401, 403, 404, 405, 409, 413, 415, 422, 429, 500, 503]) {
      const body = renderProblem({ status, detail: 'why' });
      expect(body).toEqual({ type: `/errors/${status}`, title: expect.any(String), status, detail: 'why' });
      expect(body.title).not.toBe('Error');
    }
  });

  it('types a 422 with violations by the code of its first violation', () => {
    const p = invalid([
      violation('name', 'This value should not be blank.', 'required'),
      violation('dates[0].begin', 'This value is not a valid timestamp.', 'timestamp'),
    ]);
    const body = renderProblem(p);
    expect(body.type).toBe(`/validation_errors/${RULE_CODES.required}`);
    expect(body.status).toBe(422);
    expect(body.violations).toHaveLength(2);
    expect(body.detail).toBe('name: This value should not be blank.\ndates[0].begin: This value is not a valid timestamp.');
  });

  it('keeps /errors/422 for a 422 without violations, and drops violations from other statuses', () => {
    expect(renderProblem({ status: 422, detail: 'x' }).type).toBe('/errors/422');
    expect(renderProblem({ status: 422, detail: 'x', violations: [] })).toEqual({ type: '/errors/422', title: 'Unprocessable Content', status: 422, detail: 'x' });
    const b = renderProblem({ status: 400, detail: 'x', violations: [violation('a', 'b', 'type')] });
    expect(b.type).toBe('/errors/400');
    expect(b.violations).toBeUndefined();
  });

  it('gives 401 the Bearer challenge and 500 a generic detail', () => {
    expect(unauthorized('no').headers).toEqual({ 'WWW-Authenticate': 'Bearer' });
    expect(badRequest('x')).toBeInstanceOf(Problem);
    const body = internalProblem();
    expect(body.type).toBe('/errors/500');
    expect(body.detail).toMatch(/internal/i);
  });
});

describe('violationsFromZod', () => {
  const schema = z.object({
    name: z.string().min(1),
    count: z.number().int().max(10),
    dates: z.array(z.object({ begin: timestamp(), end: timestamp().optional() })),
    nested: z.object({ list: z.array(z.array(z.string())) }),
  });

  it('names nested fields like dates[0].begin, with readable messages and rule codes', () => {
    const r = schema.safeParse({
      name: '',
      count: 11,
      dates: [{ begin: '2027-07-01T10:00:00' }],
      nested: { list: [['a', 5]] },
    });
    expect(r.success).toBe(false);
    const v = violationsFromZod(r.error!.issues);
    const byPath = Object.fromEntries(v.map((x) => [x.propertyPath, x]));
    expect(Object.keys(byPath).sort()).toEqual(['count', 'dates[0].begin', 'name', 'nested.list[0][1]']);
    expect(byPath.name).toEqual({ propertyPath: 'name', message: 'This value should not be blank.', code: RULE_CODES.required });
    expect(byPath.count.code).toBe(RULE_CODES.tooHigh);
    expect(byPath['dates[0].begin'].code).toBe(RULE_CODES.timestamp);
    expect(byPath['nested.list[0][1]'].code).toBe(RULE_CODES.type);
  });

  it('tells a missing value from one of the wrong type', () => {
    const r = z.object({ a: z.string(), b: z.string() }).safeParse({ b: 1 });
    const v = violationsFromZod(r.error!.issues);
    expect(v).toEqual([
      { propertyPath: 'a', message: 'This value is required.', code: RULE_CODES.required },
      { propertyPath: 'b', message: 'This value should be of type string.', code: RULE_CODES.type },
    ]);
  });

  it('keeps the rule of a custom issue and falls back to invalid', () => {
    const s = z.string().superRefine((v, ctx) => {
      if (v === 'dup') customIssue(ctx, 'taken', 'unique');
      if (v === 'odd') ctx.addIssue({ code: 'custom', message: 'odd' });
    });
    expect(violationsFromZod(s.safeParse('dup').error!.issues)[0].code).toBe(RULE_CODES.unique);
    expect(violationsFromZod(s.safeParse('odd').error!.issues)[0].code).toBe(RULE_CODES.invalid);
  });

  it('maps unknown keys, choices, formats and lengths to their rules', () => {
    const s = z.strictObject({
      kind: z.enum(['a', 'b']),
      email: z.email(),
      short: z.string().max(2),
      list: z.array(z.string()).min(2),
    });
    const r = s.safeParse({ kind: 'c', email: 'nope', short: 'abc', list: [], extra: 1 });
    const codes = Object.fromEntries(violationsFromZod(r.error!.issues).map((x) => [x.propertyPath, x.code]));
    expect(codes).toEqual({
      kind: RULE_CODES.choice,
      email: RULE_CODES.email,
      short: RULE_CODES.tooLong,
      list: RULE_CODES.tooShort,
      '': RULE_CODES.unknownField,
    });
  });
});

describe('propertyPath', () => {
  it('joins keys with dots and indexes with brackets', () => {
    expect(propertyPath(['dates', 0, 'begin'])).toBe('dates[0].begin');
    expect(propertyPath([0, 'a'])).toBe('[0].a');
    expect(propertyPath(['a', 'b', 2, 3])).toBe('a.b[2][3]');
    expect(propertyPath([])).toBe('');
  });
});

describe('RULE_CODES', () => {
  it('gives every rule its own UUID', () => {
    const codes = Object.values(RULE_CODES);
    expect(codes.length).toBeGreaterThan(10);
    for (const c of codes) expect(c).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(new Set(codes).size).toBe(codes.length);
  });
});

// Issue 15: the domain says what went wrong (a code); this table is the one place that turns it into a status.
describe('domain error codes', () => {
  it('maps every code to a status that has a title', () => {
    expect(Object.keys(STATUS_OF_CODE).sort()).toEqual([...ERROR_CODES].sort());
    for (const code of ERROR_CODES) {
      const body = renderProblem(new DomainError(code, 'why'));
      expect(body.status).toBe(STATUS_OF_CODE[code]);
      expect(body.title).not.toBe('Error');
      expect(body.type).toBe(`/errors/${body.status}`);
    }
  });

  it('answers each helper with the status its callers had before (D10)', () => {
    expect(problemOf(notFound('x'))).toMatchObject({ status: 404, detail: 'x' });
    expect(problemOf(forbidden('x')).status).toBe(403);
    expect(problemOf(conflict('x')).status).toBe(409);
    expect(problemOf(stillReferenced('x')).status).toBe(409);
    expect(problemOf(unprocessable('x')).status).toBe(422);
    expect(problemOf(invalid([violation('name', 'm', 'required')])).status).toBe(422);
  });

  it('maps the offer workflow: unknown transition 422, permission 403, state 409 (spec 3.4, D10)', () => {
    const caller = { role: 'organiser' as const, ownOffer: true, firstDateBegin: null, now: new Date() };
    const statusOf = (places: ['draft'] | ['published', 'cancelled'], transition: string) => {
      const r = applyOfferTransition({ ...caller, places, transition });
      if (r.ok) throw new Error('expected a refusal');
      return renderProblem(new DomainError(r.code, r.detail));
    };
    expect(statusOf(['draft'], 'nope')).toMatchObject({ status: 422, type: '/errors/422', title: 'Unprocessable Content' });
    expect(statusOf(['draft'], 'publish')).toMatchObject({ status: 403, type: '/errors/403', title: 'Forbidden' });
    expect(statusOf(['published', 'cancelled'], 'cancel')).toMatchObject({ status: 409, type: '/errors/409', title: 'Conflict' });
  });

  it('renders a thrown domain error, also inside a tRPC error, as the same body a Problem of its status gives', () => {
    const log = createLogger('silent');
    const cases: [DomainError, Problem][] = [
      [notFound('gone'), new Problem(404, 'gone')],
      [conflict('busy'), new Problem(409, 'busy')],
      [invalid([violation('a', 'm', 'tooLong')]), new Problem(422, 'a: m', [violation('a', 'm', 'tooLong')])],
    ];
    for (const [domain, problem] of cases) {
      const expected = problemFromError(problem, 'POST', log, 'r1');
      expect(problemFromError(domain, 'POST', log, 'r1')).toEqual(expected);
      expect(problemFromError(new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: domain }), 'POST', log, 'r1')).toEqual(expected);
    }
  });
});
