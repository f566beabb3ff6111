import { describe, expect, it } from 'vitest';
import {
  conflict, DomainError, ERROR_CODES, forbidden, invalid, notFound, RULE_CODES, stillReferenced, unprocessable, violation,
} from '../../src/domain/errors.js';
import { applyOfferTransition } from '../../src/domain/offer-workflow.js';

// Issue 15: rules say what went wrong as a code, never as an HTTP status (mapped in src/platform/http/problem.ts).
describe('domain errors', () => {
  it('gives each helper its code and keeps the detail as the message', () => {
    const cases: [DomainError, string][] = [
      [notFound('a'), 'not_found'],
      [forbidden('a'), 'not_permitted'],
      [conflict('a'), 'state_conflict'],
      [stillReferenced('a'), 'still_referenced'],
      [unprocessable('a'), 'refused'],
    ];
    for (const [err, code] of cases) {
      expect(err).toBeInstanceOf(DomainError);
      expect(err).toBeInstanceOf(Error);
      expect(err.code).toBe(code);
      expect(ERROR_CODES).toContain(err.code);
      expect(err.detail).toBe('a');
      expect(err.message).toBe('a');
      expect(err).not.toHaveProperty('status');
    }
  });

  it('lists the violations of invalid input, one detail line each', () => {
    const err = invalid([violation('name', 'Too long.', 'tooLong'), violation('dates[0].begin', 'Not a timestamp.', 'timestamp')]);
    expect(err.code).toBe('invalid_input');
    expect(err.detail).toBe('name: Too long.\ndates[0].begin: Not a timestamp.');
    expect(err.violations).toEqual([
      { propertyPath: 'name', message: 'Too long.', code: RULE_CODES.tooLong },
      { propertyPath: 'dates[0].begin', message: 'Not a timestamp.', code: RULE_CODES.timestamp },
    ]);
  });

  it('lets the offer workflow refuse with codes only', () => {
    const admin = { role: 'admin' as const, ownOffer: false, firstDateBegin: null, now: new Date() };
    const organiser = { ...admin, role: 'organiser' as const, ownOffer: true };
    const refusals = [
      applyOfferTransition({ ...admin, places: ['draft'], transition: 'nope' }),
      applyOfferTransition({ ...organiser, places: ['draft'], transition: 'publish' }),
      applyOfferTransition({ ...admin, places: ['draft'], transition: 'relaunch' }),
    ];
    expect(refusals.map((r) => (r.ok ? null : r.code))).toEqual(['unknown_transition', 'not_permitted', 'state_conflict']);
    for (const r of refusals) expect(r).not.toHaveProperty('status');
  });
});
