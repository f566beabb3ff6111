import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Validator } from '@seriousme/openapi-schema-validator';
import { at, expectProblem, maybe, asRecord, useHarness, type TestResponse } from '../../harness/harness.js';
import { procedure, router } from '../../../src/platform/http/trpc.js';
import { bodyId, dateOnly, paginationQuery, pathId, query, timestamp } from '../../../src/platform/http/fields.js';
import { response } from '../../../src/platform/http/response.js';
import { formatTimestamp } from '../../../src/platform/http/dates.js';
import { uuidToBase58 } from '../../../src/platform/http/ids.js';
import { RULE_CODES } from '../../../src/domain/errors.js';
import { createRateLimiter } from '../../../src/platform/rate-limit/index.js';
import { categoriesRouter } from '../../../src/resources/categories/router.js';

// The platform's HTTP conventions (spec 1, 5, 7, 8; D3, D10) through the real express stack. Field types
// the categories resource lacks are exercised through a TEST-ONLY router built from the platform's own
// building blocks.
const tags = ['probe'];

const echoInput = z.object({
  at: timestamp(),
  day: dateOnly().optional(),
  ref: bodyId().optional(),
  dates: z.array(z.object({ begin: timestamp(), end: timestamp().optional() })).optional(),
  note: z.string().nullish(),
});
const echoOut = z.object({
  at: z.string(),
  day: z.string().optional(),
  ref: z.string().optional(),
  dates: z.array(z.object({ begin: z.string(), end: z.string().optional() })).optional(),
  note: z.string().optional(),
  list: z.array(z.string()),
  flag: z.boolean(),
});

const probeRouter = router({
  echo: procedure
    .meta({ access: 'write', successStatus: 201, openapi: { method: 'POST', path: '/probe/echo', tags } })
    .input(echoInput)
    .output(response(echoOut))
    .mutation(({ input }) => ({
      at: formatTimestamp(input.at)!,
      day: input.day,
      ref: input.ref ?? null,
      dates: input.dates?.map((d) => ({ begin: formatTimestamp(d.begin)!, end: formatTimestamp(d.end) ?? null })),
      note: input.note ?? null,
      list: [],
      flag: false,
    }) as z.input<typeof echoOut>),
  action: procedure
    .meta({ access: 'write', openapi: { method: 'POST', path: '/probe/action', tags } })
    .input(z.object({ notify: z.boolean().optional(), count: z.number().int().optional(), items: z.array(z.object({ amount: z.number().int() })).optional() }))
    .output(response(z.object({ done: z.boolean(), notify: z.boolean(), count: z.number().optional() })))
    .mutation(({ input }) => ({ done: true, notify: input.notify ?? false, count: input.count })),
  change: procedure
    .meta({ access: 'write', openapi: { method: 'PATCH', path: '/probe/things/{uuid}', tags } })
    .input(z.object({ uuid: pathId(), name: z.string().nullish() }))
    .output(response(z.object({ uuid: z.string(), name: z.string().optional() })))
    .mutation(({ input }) => ({ uuid: input.uuid, name: input.name ?? undefined })),
  thing: procedure
    .meta({ access: 'read', openapi: { method: 'GET', path: '/probe/things/{uuid}', tags } })
    .input(z.object({ uuid: pathId() }))
    .output(response(z.object({ uuid: z.string() })))
    .query(({ input }) => ({ uuid: input.uuid })),
  remove: procedure
    .meta({ access: 'write', successStatus: 204, openapi: { method: 'DELETE', path: '/probe/things/{uuid}', tags } })
    .input(z.object({ uuid: pathId() }))
    .output(z.void())
    .mutation(() => undefined),
  list: procedure
    .meta({ access: 'read', openapi: { method: 'GET', path: '/probe/list', tags } })
    .input(z.object({ ...paginationQuery, flag: query.boolean(), from: query.dateFilter() }))
    .output(response(z.object({ flag: z.boolean().optional(), from: z.string().optional(), page: z.number().optional(), itemsPerPage: z.number().optional() })))
    .query(({ input }) => ({ flag: input.flag, from: input.from?.day, page: input.page, itemsPerPage: input.itemsPerPage })),
  public: procedure
    .meta({ access: 'public', openapi: { method: 'GET', path: '/probe/public', tags } })
    .input(z.object({}))
    .output(response(z.object({ hello: z.string(), nothing: z.string().optional() })))
    .query(() => ({ hello: 'world', nothing: null }) as unknown as { hello: string }),
  boom: procedure
    .meta({ access: 'read', openapi: { method: 'GET', path: '/probe/boom', tags } })
    .input(z.object({}))
    .output(z.object({ never: z.string() }))
    .query((): { never: string } => {
      throw new Error('secret internals SELECT * FROM x');
    }),
  badOutput: procedure
    .meta({ access: 'read', openapi: { method: 'GET', path: '/probe/bad-output', tags } })
    .input(z.object({}))
    .output(z.object({ secretColumn: z.string() }))
    .query(() => ({ secretColumn: 42 }) as unknown as { secretColumn: string }),
});

const testRouter = router({ categories: categoriesRouter, probe: probeRouter });

const { h, t } = useHarness({ router: testRouter });

const json = (body: unknown) => ({ rawBody: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

describe('request bodies', () => {
  it('answers broken JSON with 400', async () => {
    const res = await t.request('POST', '/categories', { rawBody: '{"name": "x",', headers: { 'content-type': 'application/json' } });
    const p = expectProblem(res, 400);
    expect(p.detail).toMatch(/JSON/);
  });

  it('refuses a text/plain body with 415', async () => {
    const res = await t.request('POST', '/categories', { rawBody: JSON.stringify({ name: 'x' }), headers: { 'content-type': 'text/plain' } });
    expectProblem(res, 415);
  });

  it('refuses a body without a content type with 415', async () => {
    const res = await t.request('POST', '/categories', { rawBody: JSON.stringify({ name: 'x' }) });
    expectProblem(res, 415);
  });

  it('accepts application/json; charset=utf-8', async () => {
    const res = await t.request('POST', '/categories', { rawBody: JSON.stringify({ name: 'Zeltlager' }), headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(res.status).toBe(201);
    expect(res.body.name).toBe('Zeltlager');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
  });

  it('accepts application/merge-patch+json on PATCH but not on POST', async () => {
    const uuid = randomUUID();
    const patch = await t.request('PATCH', `/probe/things/${uuid}`, { rawBody: JSON.stringify({ name: 'neu' }), headers: { 'content-type': 'application/merge-patch+json' } });
    expect(patch.status).toBe(200);
    expect(patch.body).toEqual({ uuid, name: 'neu' });
    const post = await t.request('POST', '/categories', { rawBody: JSON.stringify({ name: 'x' }), headers: { 'content-type': 'application/merge-patch+json' } });
    expectProblem(post, 415);
  });

  it('lets a POST without body and without content type reach the procedure (optional-body actions)', async () => {
    const res = await t.request('POST', '/probe/action');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ done: true, notify: false });
    const withBody = await t.post('/probe/action', { notify: true });
    expect(withBody.body).toEqual({ done: true, notify: true });
  });

  it('answers a 10 MB body with 413 and keeps serving', async () => {
    const big = Buffer.alloc(10 * 1024 * 1024, 0x20);
    big[0] = 0x7b; // '{' ... mostly spaces: a body that would only fail by its size
    const res = await rawRequest({ method: 'POST', path: '/api/categories', host: t.host, token: t.adminToken, body: big, contentType: 'application/json' });
    expectProblem(res, 413);
    // The server is still healthy afterwards (no connection left hanging).
    expect((await t.get('/categories')).status).toBe(200);
  });

  it('answers a 10 MB chunked body (no content-length) with 413', async () => {
    const big = Buffer.alloc(10 * 1024 * 1024, 0x20);
    const res = await rawRequest({ method: 'POST', path: '/api/categories', host: t.host, token: t.adminToken, body: big, contentType: 'application/json', chunked: true });
    expectProblem(res, 413);
    expect((await t.get('/categories')).status).toBe(200);
  });

  it('answers JSON nested 100 levels deep with 400', async () => {
    const deep = '{"a":'.repeat(100) + '1' + '}'.repeat(100);
    const res = await t.request('POST', '/probe/action', { rawBody: deep, headers: { 'content-type': 'application/json' } });
    const p = expectProblem(res, 400);
    expect(p.detail).toMatch(/nested/);
    // A reasonable depth is read (and then answered as any body: `a` is no field of the action, D12).
    const twenty = '{"a":'.repeat(20) + '1' + '}'.repeat(20);
    expect(expectProblem(await t.request('POST', '/probe/action', { rawBody: twenty, headers: { 'content-type': 'application/json' } }), 422).detail).toBe('a: unknown field');
    const deepArray = '['.repeat(100) + ']'.repeat(100);
    expectProblem(await t.request('POST', '/probe/action', { rawBody: `{"a":${deepArray}}`, headers: { 'content-type': 'application/json' } }), 400);
  });

  it('answers a JSON array, a string, a number or null as the body with 422', async () => {
    for (const raw of ['[]', '[{"name":"x"}]', '"x"', '42', 'null']) {
      const res = await t.request('POST', '/categories', { rawBody: raw, headers: { 'content-type': 'application/json' } });
      expectProblem(res, 422);
    }
  });
});

describe('identifiers', () => {
  it('keeps JSON types in bodies: "false", "yes" and "5" are not coerced (422)', async () => {
    for (const body of [{ notify: 'false' }, { notify: 'yes' }, { notify: 0 }, { count: '5' }, { items: [{ amount: '7' }] }]) {
      const p = expectProblem(await t.post('/probe/action', body), 422);
      expect(p.violations?.[0].code).toBe(RULE_CODES.type);
    }
    const ok = await t.post('/probe/action', { notify: false, count: 5 });
    expect(ok.body).toEqual({ done: true, notify: false, count: 5 });
  });

  it('answers HEAD like GET without a body', async () => {
    const res = await t.request('HEAD', '/probe/list?flag=true');
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect((await t.request('HEAD', '/probe/list?flag=maybe')).status).toBe(400);
    expect((await t.request('HEAD', '/probe/nothing-here')).status).toBe(404);
  });

  it('answers base58 of the wrong length in a path with 404', async () => {
    const c = (await t.post('/categories', { name: 'Id-Test' })).body;
    const b58 = uuidToBase58(c.uuid);
    expect((await t.get(`/categories/${b58}`)).status).toBe(200);
    expectProblem(await t.get(`/categories/${b58.slice(1)}`), 404);
    expectProblem(await t.get(`/categories/${b58}1`), 404);
    expectProblem(await t.get(`/categories/${c.uuid.slice(0, -1)}`), 404);
    expectProblem(await t.patch(`/categories/${b58.slice(1)}`, { name: 'x' }), 404);
    expectProblem(await t.del(`/categories/${b58.slice(1)}`), 404);
  });

  it('answers an alias in a path with 404', async () => {
    const c = (await t.post('/categories', { name: 'Sport' })).body;
    expect(c.alias).toBe('sport');
    const p = expectProblem(await t.get('/categories/sport'), 404);
    expect(p.detail).not.toMatch(/uuid:/);
  });

  it('accepts an upper-case UUID in a path and answers in lower case', async () => {
    const uuid = randomUUID();
    const res = await t.get(`/probe/things/${uuid.toUpperCase()}`);
    expect(res.body).toEqual({ uuid });
  });

  it('normalises a base58 id in a body to the RFC 4122 form', async () => {
    const uuid = randomUUID();
    const res = await t.post('/probe/echo', { at: '2027-07-01T10:00:00+02:00', ref: uuidToBase58(uuid) });
    expect(res.status).toBe(201);
    expect(at(res.body, 'ref')).toBe(uuid);
    const upper = await t.post('/probe/echo', { at: '2027-07-01T10:00:00+02:00', ref: uuid.toUpperCase() });
    expect(at(upper.body, 'ref')).toBe(uuid);
  });

  it('refuses a malformed id in a body with 422 and the identifier rule', async () => {
    const p = expectProblem(await t.post('/probe/echo', { at: '2027-07-01T10:00:00+02:00', ref: 'sport' }), 422);
    expect(p.violations).toEqual([{ propertyPath: 'ref', message: expect.any(String), code: RULE_CODES.identifier }]);
  });
});

describe('query parameters', () => {
  it('refuses itemsPerPage above 200 with a 400 naming it', async () => {
    for (const path of ['/categories?itemsPerPage=500', '/probe/list?itemsPerPage=500']) {
      const p = expectProblem(await t.get(path), 400);
      expect(p.detail).toMatch(/^itemsPerPage: /);
      expect(p.violations).toBeUndefined();
    }
    expect((await t.get('/categories?itemsPerPage=200')).status).toBe(200);
  });

  it('refuses itemsPerPage=0, page=0, itemsPerPage=abc and other non-integers with 400', async () => {
    for (const [q, name] of [
      ['itemsPerPage=0', 'itemsPerPage'], ['page=0', 'page'], ['itemsPerPage=abc', 'itemsPerPage'],
      ['itemsPerPage=1.5', 'itemsPerPage'], ['page=-1', 'page'], ['itemsPerPage=', 'itemsPerPage'],
    ] as const) {
      const res = await t.get(`/probe/list?${q}`);
      if (q === 'itemsPerPage=') {
        // An empty value is as good as none.
        expect(res.status).toBe(200);
        continue;
      }
      const p = expectProblem(res, 400);
      expect(p.detail, q).toContain(`${name}: `);
    }
    expect((await t.get('/probe/list?page=2&itemsPerPage=5')).body).toEqual({ page: 2, itemsPerPage: 5 });
  });

  it('refuses flag=maybe with a 400 naming the flag', async () => {
    const p = expectProblem(await t.get('/probe/list?flag=maybe'), 400);
    expect(p.detail).toMatch(/^flag: /);
    expect(p.detail).toContain('maybe');
  });

  it('accepts 1/0, yes/no and true/false as booleans', async () => {
    for (const [v, b] of [['1', true], ['0', false], ['yes', true], ['no', false], ['true', true], ['false', false]] as const) {
      const res = await t.get(`/probe/list?flag=${v}`);
      expect(res.status, v).toBe(200);
      expect(at(res.body, 'flag'), v).toBe(b);
    }
  });

  it('refuses a repeated single-valued parameter with a 400 naming it', async () => {
    const p = expectProblem(await t.get('/probe/list?flag=true&flag=false'), 400);
    expect(p.detail).toMatch(/^flag: /);
  });

  it('ignores unknown parameters', async () => {
    const res = await t.get('/probe/list?flag=true&whatever=1&sort[x]=2&page=1');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ flag: true, page: 1 });
    expect((await t.get('/categories?unknown=yes')).status).toBe(200);
  });

  it('refuses an unreadable date filter with a 400 naming it, and reads a timestamp as its Berlin day', async () => {
    const p = expectProblem(await t.get('/probe/list?from=2027-13-40'), 400);
    expect(p.detail).toMatch(/^from: /);
    const q = expectProblem(await t.get('/categories?modifiedSince=yesterday'), 400);
    expect(q.detail).toMatch(/^modifiedSince: /);
    expect(at((await t.get('/probe/list?from=2027-07-01T23:30:00Z')).body, 'from')).toBe('2027-07-02');
    expect(at((await t.get('/probe/list?from=2027-07-01T23:30:00%2B02:00')).body, 'from')).toBe('2027-07-01');
    expect(at((await t.get('/probe/list?from=2027-07-01')).body, 'from')).toBe('2027-07-01');
    // An unencoded `+` in the offset (decoded as a space) is still read as the offset.
    expect(at((await t.get('/probe/list?from=2027-07-01T23:30:00+02:00')).body, 'from')).toBe('2027-07-01');
    expect(at((await t.get('/probe/list?from=2027-07-01T23:30:00-02:00')).body, 'from')).toBe('2027-07-02');
    expectProblem(await t.get('/probe/list?from=2027-07-01T23:30:00%20x'), 400);
  });
});

describe('validation of bodies', () => {
  it('refuses an offset-less timestamp with 422 and a violation on that field', async () => {
    const res = await t.post('/probe/echo', { at: '2027-07-01T10:00:00' });
    const p = expectProblem(res, 422);
    expect(p.type).toBe(`/validation_errors/${RULE_CODES.timestamp}`);
    expect(p.violations).toEqual([{ propertyPath: 'at', message: expect.any(String), code: RULE_CODES.timestamp }]);
    expect(p.detail).toMatch(/^at: /);
  });

  it('names a nested field dates[0].begin', async () => {
    const res = await t.post('/probe/echo', {
      at: '2027-07-01T10:00:00Z',
      dates: [{ begin: '2027-07-01 10:00' }, { begin: '2027-07-02T10:00:00+02:00', end: 'later' }],
    });
    const p = expectProblem(res, 422);
    expect(p.violations!.map((v) => v.propertyPath)).toEqual(['dates[0].begin', 'dates[1].end']);
    expect(p.detail.split('\n').map((l) => l.split(':')[0])).toEqual(['dates[0].begin', 'dates[1].end']);
  });

  it('accepts a date-only value and returns it as YYYY-MM-DD; Z and offsets come back in Berlin time', async () => {
    const res = await t.post('/probe/echo', {
      at: '2027-01-15T08:00:00Z',
      day: '2027-07-01',
      dates: [{ begin: '2027-07-01T08:00:00Z', end: '2027-07-01T12:00:00+02:00' }],
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      at: '2027-01-15T09:00:00+01:00',
      day: '2027-07-01',
      dates: [{ begin: '2027-07-01T10:00:00+02:00', end: '2027-07-01T12:00:00+02:00' }],
      list: [],
      flag: false,
    });
    const bad = expectProblem(await t.post('/probe/echo', { at: '2027-07-01T10:00:00Z', day: '2027-13-40' }), 422);
    expect(bad.violations![0]).toMatchObject({ propertyPath: 'day', code: RULE_CODES.date });
  });

  it('names a missing required field and a field of the wrong type', async () => {
    const p = expectProblem(await t.post('/probe/echo', { note: 5 }), 422);
    const byPath = Object.fromEntries(p.violations!.map((v) => [v.propertyPath, v.code]));
    expect(byPath).toEqual({ at: RULE_CODES.required, note: RULE_CODES.type });
  });
});

describe('responses', () => {
  it('omits null fields and keeps empty lists and defaults', async () => {
    const res = await t.post('/probe/echo', { at: '2027-07-01T10:00:00+02:00', note: null });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ at: '2027-07-01T10:00:00+02:00', list: [], flag: false });
    expect(res.text).not.toContain('null');
    const pub = await t.get('/probe/public', { token: null });
    expect(pub.body).toEqual({ hello: 'world' });
  });

  it('marks responses to a token as private, no-store', async () => {
    const res = await t.get('/categories');
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect((await t.get('/probe/public')).headers['cache-control']).toBe('private, no-store');
    expect((await t.post('/probe/action')).headers['cache-control']).toBe('private, no-store');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
  });

  it('lets anonymous reads of a public procedure be cached, but never an anonymous error', async () => {
    const res = await t.get('/probe/public', { token: null });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=60');
    const denied = await t.get('/categories', { token: null });
    expectProblem(denied, 401);
    expect(denied.headers['cache-control']).not.toMatch(/public/);
    const missing = await t.get('/nothing-here', { token: null });
    expectProblem(missing, 404);
    expect(String(missing.headers['cache-control'] ?? '')).not.toMatch(/public/);
  });

  it('sends 204 without a body or content type', async () => {
    const res = await t.del(`/probe/things/${randomUUID()}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(res.headers['content-type']).toBeUndefined();
    expect(res.headers['content-length'] ?? '0').toBe('0');
  });

  it('answers a thrown Error with a 500 problem that does not reveal it', async () => {
    const res = await t.get('/probe/boom');
    const p = expectProblem(res, 500);
    expect(res.text).not.toContain('secret');
    expect(res.text).not.toContain('SELECT');
    expect(p.detail).toMatch(/internal/i);
  });

  it('answers an output that breaks its own schema with a 500 problem, not a client error', async () => {
    const res = await t.get('/probe/bad-output');
    expectProblem(res, 500);
    expect(res.text).not.toContain('secretColumn');
  });

  it('answers an unknown path or method on a known host with a 404/405 problem', async () => {
    expectProblem(await t.get('/probe/nowhere'), 404);
    const res = await t.request('PUT', '/categories', json({ name: 'x' }));
    expect([404, 405]).toContain(res.status);
    expectProblem(res, res.status);
  });

  it('answers a CORS preflight with 204 and the allowed methods and headers', async () => {
    const res = await t.request('OPTIONS', '/categories', {
      token: null,
      headers: { origin: 'https://www.example.org', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-methods']).toMatch(/POST/);
    expect(res.headers['access-control-allow-methods']).toMatch(/PATCH/);
    expect(res.headers['access-control-allow-methods']).toMatch(/DELETE/);
    expect(String(res.headers['access-control-allow-headers']).toLowerCase()).toContain('authorization');
    expect(String(res.headers['access-control-allow-headers']).toLowerCase()).toContain('content-type');
  });

  it('exposes the rate-limit headers to browsers and sends a request id', async () => {
    const res = await t.get('/categories');
    expect(res.headers['access-control-expose-headers']).toMatch(/RateLimit/);
    expect(res.headers['x-request-id']).toBeTruthy();
  });
});

describe('OpenAPI document', () => {
  let doc: Record<string, unknown>;

  const { t: u } = useHarness();
  beforeAll(async () => {
    const res = await u.get('/openapi.json', { token: null });
    expect(res.status).toBe(200);
    doc = asRecord(res.body);
  });

  it('is valid OpenAPI 3.1', async () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    // Issue 24: the scheme and port the request came in on.
    expect(maybe(doc, 'servers', 0, 'url')).toBe(`http://${u.host}/api`);
  });

  it('shows the real success statuses of categories', () => {
    const post = asRecord(at(doc, 'paths', '/categories', 'post', 'responses'));
    expect(Object.keys(post)).toContain('201');
    expect(post['200']).toBeUndefined();
    const del = asRecord(at(doc, 'paths', '/categories/{uuid}', 'delete', 'responses'));
    expect(Object.keys(del)).toContain('204');
    expect(del['200']).toBeUndefined();
    expect(at(del, '204', 'content')).toBeUndefined();
    expect(Object.keys(asRecord(at(doc, 'paths', '/categories/{uuid}', 'get', 'responses')))).toContain('200');
  });

  it('references the Problem schema as application/problem+json for every 4xx of every operation', () => {
    expect(at(doc, 'components', 'schemas', 'Problem')).toBeDefined();
    let operations = 0;
    for (const [path, ops] of Object.entries(asRecord(doc.paths))) {
      for (const [method, op] of Object.entries(asRecord(ops))) {
        if (!['get', 'post', 'patch', 'put', 'delete'].includes(method)) continue;
        operations++;
        const responses = asRecord(at(op, 'responses'));
        const errors = Object.keys(responses).filter((s) => /^4\d\d$/.test(s));
        expect(errors.length, `${method} ${path}`).toBeGreaterThan(0);
        for (const s of errors) {
          const content = asRecord(at(responses, s, 'content'));
          expect(Object.keys(content), `${method} ${path} ${s}`).toEqual(['application/problem+json']);
          expect(at(content, 'application/problem+json', 'schema')).toEqual({ $ref: '#/components/schemas/Problem' });
        }
      }
    }
    expect(operations).toBeGreaterThanOrEqual(5);
  });

  it('is also valid with the test router (transforms, public access, 204)', async () => {
    const res = await t.get('/openapi.json', { token: null });
    const result = await new Validator().validate(asRecord(res.body));
    expect(result.errors ?? []).toEqual([]);
    expect(at(res.body, 'paths', '/probe/public', 'get', 'security')).toEqual([{}, { bearer: [] }]);
  });
});

describe('rate limits at the HTTP layer', () => {
  const { h: rl } = useHarness({
    router: testRouter,
    rateLimiter: createRateLimiter({
      log: { warn: () => {}, info: () => {} },
      tokenBucket: { capacity: 3, refillPerMinute: 60 },
      anonymous: { points: 2, durationSeconds: 3600 },
    }),
    tenant: false,
  });

  it('refuses the 4th quick token request with a 429 problem and the IETF headers', async () => {
    const u = await rl.tenant();
    const ok = await Promise.all([u.get('/categories'), u.get('/categories'), u.get('/categories')]);
    for (const r of ok) expect(r.status).toBe(200);
    expect(ok[0].headers['ratelimit-policy']).toBe('"token";q=3;w=3');
    expect(ok.map((r) => r.headers.ratelimit).sort()).toEqual(expect.arrayContaining([expect.stringMatching(/^"token";r=0;t=\d+$/)]));
    const res = await u.get('/categories');
    const p = expectProblem(res, 429);
    expect(p.type).toBe('/errors/429');
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
    expect(res.headers['ratelimit-policy']).toBe('"token";q=3;w=3');
    expect(res.headers.ratelimit).toMatch(/^"token";r=0;t=\d+$/);
    // Spec 1.10: a response to an authenticated request, refusals included, is private.
    expect(res.headers['cache-control']).toBe('private, no-store');
  });

  it('refuses the 3rd anonymous request with 429 (errors count too)', async () => {
    const u = await rl.tenant();
    const first = await u.get('/probe/public', { token: null });
    expect(first.status).toBe(200);
    expect(first.headers['ratelimit-policy']).toBe('"anonymous";q=2;w=3600');
    expect(first.headers.ratelimit).toMatch(/^"anonymous";r=1;t=\d+$/);
    expectProblem(await u.get('/categories', { token: null }), 401);
    const res = await u.get('/probe/public', { token: null });
    expectProblem(res, 429);
    expect(res.headers['ratelimit-policy']).toBe('"anonymous";q=2;w=3600');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    // The token bucket is separate: a token holder is still served.
    expect((await u.get('/categories')).status).toBe(200);
  });

  it('counts a request with an invalid token against the IP anonymous allowance, but answers it 401 (issue 13)', async () => {
    const u = await rl.tenant();
    for (let i = 0; i < 2; i++) {
      const res = await u.get('/categories', { token: 'hpt_garbage' });
      expectProblem(res, 401);
      expect(res.headers['ratelimit-policy']).toBe('"failed-auth";q=300;w=3600');
    }
    expectProblem(await u.get('/probe/public', { token: null }), 429);
    const res = await u.get('/categories', { token: 'hpt_garbage' });
    expectProblem(res, 401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it('keeps anonymous allowances apart per tenant', async () => {
    const a = await rl.tenant();
    const b = await rl.tenant();
    await a.get('/probe/public', { token: null });
    await a.get('/probe/public', { token: null });
    expectProblem(await a.get('/probe/public', { token: null }), 429);
    expect((await b.get('/probe/public', { token: null })).status).toBe(200);
  });
});

/** A request on its own connection, for bodies the server refuses before reading them. */
function rawRequest(o: { method: string; path: string; host: string; token?: string; body: Buffer; contentType?: string; chunked?: boolean }): Promise<TestResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: o.host };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    if (o.contentType) headers['content-type'] = o.contentType;
    if (!o.chunked) headers['content-length'] = String(o.body.length);
    let response: TestResponse | undefined;
    const timer = setTimeout(() => { req.destroy(new Error('request timed out')); }, 15_000);
    const req = http.request({ host: '127.0.0.1', port: h.port, method: o.method, path: o.path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try { body = JSON.parse(text); } catch { body = undefined; }
        response = { status: res.statusCode ?? 0, headers: res.headers, body, text };
        resolve(response);
      });
    });
    // The server may answer and close before the whole body is written: that is fine once answered.
    req.on('error', (e) => { clearTimeout(timer); if (!response) reject(e); });
    if (o.chunked) {
      const size = 64 * 1024;
      let off = 0;
      const pump = () => {
        while (off < o.body.length) {
          const ok = req.write(o.body.subarray(off, off + size));
          off += size;
          if (!ok) { req.once('drain', pump); return; }
        }
        req.end();
      };
      pump();
    } else {
      req.end(o.body);
    }
  });
}
