import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { expectProblem, useHarness, at } from '../../harness/harness.js';
import { uuidToBase58 } from '../../../src/platform/http/ids.js';
import { RULE_CODES } from '../../../src/domain/errors.js';
import { createLogger } from '../../../src/platform/logging/logger.js';

// Issue 14: webhook subscriptions, admin only, with the conventions of every resource (problem+json, UUID or
// base58 ids, PATCH of the keys sent). The signing secret is shown at creation and rotation only.
let log = '';
const PUBLIC = 'https://93.184.215.14/hooks';

beforeAll(() => {
  process.env.WEBHOOK_ALLOW_HOSTS = '127.0.0.2';
});
afterAll(() => {
  delete process.env.WEBHOOK_ALLOW_HOSTS;
});
const { h, t } = useHarness({ log: createLogger('trace', new Writable({ write(c, _e, cb) { log += String(c); cb(); } })) });

describe('/webhooks', () => {
  it('creates a subscription and shows its secret once: never in GET, lists, PATCH or the log', async () => {
    const created = await t.post('/webhooks', { url: `${PUBLIC}/a`, description: 'Kita-Verwaltung' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ url: `${PUBLIC}/a`, events: ['*'], enabled: true, description: 'Kita-Verwaltung' });
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);
    expect(created.body.failingSince).toBeUndefined();
    const secret: string = created.body.secret;
    const key = secret.slice('whsec_'.length);

    const one = await t.get(`/webhooks/${uuidToBase58(created.body.uuid)}`);
    expect(one.status).toBe(200);
    const { secret: _s, ...withoutSecret } = created.body;
    expect(one.body).toEqual(withoutSecret);
    const list = await t.get('/webhooks');
    const patched = await t.patch(`/webhooks/${created.body.uuid}`, { description: 'Neu' });
    expect(patched.status).toBe(200);
    for (const text of [one.text, list.text, patched.text, log]) expect(text).not.toContain(key);
    expect(log).toContain('/webhooks'); // the requests were logged, without the secret
  });

  it('keeps the event types asked for (sorted, once each); "*" means every type', async () => {
    const some = await t.post('/webhooks', { url: `${PUBLIC}/b`, events: ['offer.published', 'attendance.created', 'offer.published'] });
    expect(some.body.events).toEqual(['attendance.created', 'offer.published']);
    const all = await t.post('/webhooks', { url: `${PUBLIC}/c`, events: ['*', 'offer.published'], enabled: false });
    expect(all.body).toMatchObject({ events: ['*'], enabled: false });
  });

  it('refuses URLs that cannot safely receive webhooks: 422 on url', async () => {
    const cases: [string, RegExp][] = [
      ['http://93.184.215.14/hook', /only https URLs/],
      ['https://10.1.2.3/hook', /private, loopback or link-local/],
      ['https://169.254.169.254/latest/meta-data', /private, loopback or link-local/],
      ['https://[::1]/hook', /private, loopback or link-local/],
      ['https://[::ffff:127.0.0.1]/hook', /private, loopback or link-local/],
      ['https://localhost/hook', /private, loopback or link-local/], // resolves to 127.0.0.1 / ::1
      ['https://user:pw@93.184.215.14/hook', /credentials/],
      ['https://does-not-exist.invalid/hook', /could not be resolved/],
      ['ftp://93.184.215.14/hook', /only https/],
      ['not a url', /not a valid URL/],
    ];
    for (const [url, reason] of cases) {
      const p = expectProblem(await t.post('/webhooks', { url }), 422);
      expect(p.violations?.[0], url).toMatchObject({ propertyPath: 'url', code: RULE_CODES.url });
      expect(p.violations?.[0].message, url).toMatch(reason);
    }
    // A host the operator allows (WEBHOOK_ALLOW_HOSTS) may use http and any address (local receivers).
    expect((await t.post('/webhooks', { url: 'http://127.0.0.2:9/hook' })).status).toBe(201);
  });

  it('validates the other fields of the body: 422 with violations', async () => {
    const missing = expectProblem(await t.post('/webhooks', {}), 422);
    expect(missing.violations?.[0]).toMatchObject({ propertyPath: 'url', code: RULE_CODES.required });
    const unknown = expectProblem(await t.post('/webhooks', { url: `${PUBLIC}/d`, events: ['offer.published', 'offer.exploded'] }), 422);
    expect(unknown.violations?.[0]).toMatchObject({ propertyPath: 'events[1]', code: RULE_CODES.choice });
    const empty = expectProblem(await t.post('/webhooks', { url: `${PUBLIC}/d`, events: [] }), 422);
    expect(empty.violations?.[0]).toMatchObject({ propertyPath: 'events', code: RULE_CODES.tooShort });
    const enabled = expectProblem(await t.post('/webhooks', { url: `${PUBLIC}/d`, enabled: 'yes' }), 422);
    expect(enabled.violations?.[0]).toMatchObject({ propertyPath: 'enabled', code: RULE_CODES.type });
    const long = expectProblem(await t.post('/webhooks', { url: `${PUBLIC}/d`, description: 'x'.repeat(501) }), 422);
    expect(long.violations?.[0]).toMatchObject({ propertyPath: 'description', code: RULE_CODES.tooLong });
    expectProblem(await t.request('POST', '/webhooks', { rawBody: '{"url":', headers: { 'content-type': 'application/json' } }), 400);
    expectProblem(await t.request('POST', '/webhooks', { rawBody: 'url=x', headers: { 'content-type': 'text/plain' } }), 415);
  });

  it('patches the keys sent; refuses an empty body and an unsafe URL; switching off and on', async () => {
    const w = (await t.post('/webhooks', { url: `${PUBLIC}/e`, description: 'Alt' })).body;
    expectProblem(await t.patch(`/webhooks/${w.uuid}`, {}), 422);
    const bad = expectProblem(await t.patch(`/webhooks/${w.uuid}`, { url: 'https://192.168.1.10/x' }), 422);
    expect(bad.violations?.[0].propertyPath).toBe('url');
    const off = await t.patch(`/webhooks/${w.uuid}`, { enabled: false, events: ['receipt.created'], description: null });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ enabled: false, events: ['receipt.created'], url: `${PUBLIC}/e` });
    expect(off.body.description).toBeUndefined();
    expect(off.body.disabledAt).toBeDefined();
    expect(off.body.disabledReason).toBeUndefined(); // switched off by the admin, not by failures
    const on = await t.patch(`/webhooks/${w.uuid}`, { enabled: true, url: `${PUBLIC}/f` });
    expect(on.body).toMatchObject({ enabled: true, url: `${PUBLIC}/f` });
    expect(on.body.disabledAt).toBeUndefined();
    expectProblem(await t.patch(`/webhooks/${w.uuid}`, { enabled: 'no' }), 422);
  });

  it('rotates the secret: a new one, shown once; the previous one signs too for 24 hours', async () => {
    const w = (await t.post('/webhooks', { url: `${PUBLIC}/g` })).body;
    const before = Date.now();
    const rotated = await t.post(`/webhooks/${w.uuid}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(w.secret);
    const until = Date.parse(rotated.body.previousSecretValidUntil!);
    expect(until - before).toBeGreaterThan(24 * 3_600_000 - 60_000);
    expect(until - before).toBeLessThan(24 * 3_600_000 + 60_000);
    const read = await t.get(`/webhooks/${w.uuid}`);
    expect(at(read.body, 'secret')).toBeUndefined();
    expect(read.text).not.toContain(rotated.body.secret.slice(6));
  });

  it('lists with q, modifiedSince and pagination, oldest first', async () => {
    const u = await h.tenant();
    for (const d of ['Schulamt', 'Kita', 'Schwimmbad']) await u.post('/webhooks', { url: `${PUBLIC}/${d}`, description: d });
    expect((await u.get('/webhooks')).body.map((w) => w.description)).toEqual(['Schulamt', 'Kita', 'Schwimmbad']);
    expect((await u.get('/webhooks?q=sch')).body.map((w) => w.description)).toEqual(['Schulamt', 'Schwimmbad']);
    expect((await u.get('/webhooks?itemsPerPage=2&page=2')).body.map((w) => w.description)).toEqual(['Schwimmbad']);
    expect((await u.get('/webhooks?modifiedSince=2999-01-01')).body).toEqual([]);
    expectProblem(await u.get('/webhooks?itemsPerPage=201'), 400);
    expectProblem(await u.get('/webhooks?page=0'), 400);
  });

  it('deletes with 204, then 404 everywhere; unknown and malformed identifiers are 404', async () => {
    const w = (await t.post('/webhooks', { url: `${PUBLIC}/h` })).body;
    const del = await t.del(`/webhooks/${w.uuid}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expectProblem(await t.get(`/webhooks/${w.uuid}`), 404);
    expectProblem(await t.del(`/webhooks/${w.uuid}`), 404);
    expectProblem(await t.patch(`/webhooks/${w.uuid}`, { enabled: false }), 404);
    expectProblem(await t.post(`/webhooks/${w.uuid}/rotate-secret`), 404);
    expectProblem(await t.get(`/webhooks/${w.uuid}/deliveries`), 404);
    expectProblem(await t.get('/webhooks/not-an-id'), 404);
    expectProblem(await t.post(`/webhooks/${w.uuid}/deliveries/${w.uuid}/redeliver`), 404);
  });

  it('lists no deliveries for a new subscription; an unknown delivery cannot be redelivered (404)', async () => {
    const w = (await t.post('/webhooks', { url: `${PUBLIC}/i` })).body;
    const list = await t.get(`/webhooks/${w.uuid}/deliveries`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual([]);
    expectProblem(await t.get(`/webhooks/${w.uuid}/deliveries?itemsPerPage=0`), 400);
    const p = expectProblem(await t.post(`/webhooks/${w.uuid}/deliveries/${crypto.randomUUID()}/redeliver`), 404);
    expect(p.detail).toMatch(/has no delivery/);
    expectProblem(await t.post(`/webhooks/${w.uuid}/deliveries/xyz/redeliver`), 404);
  });

  it('is for admins only: 401 without a token, 403 for organisers and read-only tokens on writes', async () => {
    const w = (await t.post('/webhooks', { url: `${PUBLIC}/j` })).body;
    expectProblem(await t.get('/webhooks', { token: null }), 401);
    expectProblem(await t.post('/webhooks', { url: `${PUBLIC}/k` }, { token: null }), 401);
    const organiser = await t.token({ role: 'organiser' });
    expectProblem(await t.get('/webhooks', { token: organiser }), 403);
    expectProblem(await t.get(`/webhooks/${w.uuid}`, { token: organiser }), 403);
    expectProblem(await t.get(`/webhooks/${w.uuid}/deliveries`, { token: organiser }), 403);
    expectProblem(await t.post('/webhooks', { url: `${PUBLIC}/k` }, { token: organiser }), 403);
    const read = await t.token({ access: 'read' });
    expect((await t.get(`/webhooks/${w.uuid}`, { token: read })).status).toBe(200);
    expectProblem(await t.post(`/webhooks/${w.uuid}/rotate-secret`, undefined, { token: read }), 403);
    expectProblem(await t.del(`/webhooks/${w.uuid}`, { token: read }), 403);
    const legacy = await t.token({ access: 'legacy' });
    expectProblem(await t.get('/webhooks', { token: legacy }), 403);
  });
});
