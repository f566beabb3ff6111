import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, useHarness, type TestTenant, type Schema } from '../../harness/harness.js';
import { newUuid, uuidToBase58 } from '../../../src/platform/http/ids.js';
import { resolveAccountRef } from '../../../src/engines/families/index.js';

const { h, t } = useHarness();

const TS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/;

describe('POST /accounts', () => {
  it('creates a family with a derived name and an empty participants list', async () => {
    const res = await t.post('/accounts', {
      email: '  Familie.Meyer@Example.org ', firstname: 'Jana', lastname: 'Meyer', phone: '0171 2345678',
      street: 'Hauptstraße 1', zip: '79098', city: 'Freiburg', name: 'ignored',
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      email: 'Familie.Meyer@Example.org', firstname: 'Jana', lastname: 'Meyer', name: 'Jana Meyer',
      phone: '0171 2345678', street: 'Hauptstraße 1', zip: '79098', city: 'Freiburg',
      participants: [],
      createdAt: expect.stringMatching(TS), modifiedAt: expect.stringMatching(TS),
    });
  });

  it('needs only an e-mail address; null and empty fields are omitted, participants always present', async () => {
    const res = await t.post('/accounts', { email: 'nur-mail@example.org', firstname: '', phone: null });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['createdAt', 'email', 'modifiedAt', 'participants', 'uuid']);
    expect(res.body.participants).toEqual([]);
    const one = await t.get(`/accounts/${res.body.uuid}`);
    expect(one.body).toEqual(res.body);
  });

  it('validates the e-mail address and the field types', async () => {
    let p = expectProblem(await t.post('/accounts', { email: 'keine-adresse' }), 422);
    expect(p.violations?.[0].propertyPath).toBe('email');
    expect(p.detail).toMatch(/^email: /);
    p = expectProblem(await t.post('/accounts', { firstname: 'Ohne' }), 422);
    expect(p.violations?.map((v) => v.propertyPath)).toEqual(['email']);
    p = expectProblem(await t.post('/accounts', { email: 'x@example.org', lastname: 42 }), 422);
    expect(p.violations?.[0].propertyPath).toBe('lastname');
    p = expectProblem(await t.post('/accounts', { email: 'x@example.org', zip: '1'.repeat(21) }), 422);
    expect(p.violations?.[0].propertyPath).toBe('zip');
  });

  it('refuses a duplicate e-mail address in another case with a violation on email', async () => {
    await t.post('/accounts', { email: 'doppelt@example.org' });
    const p = expectProblem(await t.post('/accounts', { email: 'DOPPELT@Example.ORG' }), 422);
    expect(p.violations).toEqual([expect.objectContaining({ propertyPath: 'email' })]);
    expect(p.type).toBe(`/validation_errors/${p.violations![0].code}`);
  });

  it('allows the same e-mail address on another tenant', async () => {
    const u = await h.tenant();
    await t.post('/accounts', { email: 'mandanten@example.org' });
    expect((await u.post('/accounts', { email: 'mandanten@example.org' })).status).toBe(201);
  });
});

describe('GET /accounts/{uuid}', () => {
  it('reads by UUID and base58, privately cached', async () => {
    const a = (await t.post('/accounts', { email: 'lesen@example.org', firstname: 'Lea', lastname: 'Sommer' })).body;
    const byUuid = await t.get(`/accounts/${a.uuid}`);
    expect(byUuid.status).toBe(200);
    expect(byUuid.body).toEqual(a);
    expect(byUuid.headers['cache-control']).toBe('private, no-store');
    expect((await t.get(`/accounts/${uuidToBase58(a.uuid)}`)).body).toEqual(a);
  });

  it('answers 404 for unknown, malformed, e-mail and other tenants\' identifiers', async () => {
    expectProblem(await t.get(`/accounts/${newUuid()}`), 404);
    expectProblem(await t.get('/accounts/not-an-id'), 404);
    await t.post('/accounts', { email: 'pfad@example.org' });
    expectProblem(await t.get('/accounts/pfad@example.org'), 404); // aliases never in paths (spec 1.5)
    const u = await h.tenant();
    const foreign = (await u.post('/accounts', { email: 'fremd@example.org' })).body;
    expectProblem(await t.get(`/accounts/${foreign.uuid}`), 404);
    expectProblem(await t.patch(`/accounts/${foreign.uuid}`, { city: 'X' }), 404);
    expectProblem(await t.del(`/accounts/${foreign.uuid}`), 404);
    expect((await u.get(`/accounts/${foreign.uuid}`)).status).toBe(200);
  });

  it('lists the account\'s participants as references, sorted by name', async () => {
    const a = (await t.post('/accounts', { email: 'kinder@example.org', firstname: 'Eva', lastname: 'Kind' })).body;
    const ben = (await t.post('/participants', { firstname: 'Ben', lastname: 'Kind', account: a.uuid })).body;
    const ali = (await t.post('/participants', { firstname: 'Ali', lastname: 'Kind', account: 'KINDER@example.org' })).body;
    await t.post('/participants', { firstname: 'Other', lastname: 'Child' });
    const res = await t.get(`/accounts/${a.uuid}`);
    expect(res.body.participants).toEqual([{ uuid: ali.uuid, name: 'Ali Kind' }, { uuid: ben.uuid, name: 'Ben Kind' }]);
  });
});

describe('GET /accounts', () => {
  let u: TestTenant;
  const made: Record<string, Schema<'Account'>> = {};
  beforeAll(async () => {
    u = await h.tenant();
    for (const [email, firstname, lastname] of [
      ['zoe@example.org', 'Zoë', 'Özdemir'],
      ['anna@example.org', 'Anna', 'Abel'],
      ['bernd@example.org', 'Bernd', 'Abel'],
      ['oscar@familie-ortmann.de', 'Oscar', 'Ortmann'],
      ['clara@example.org', 'Clara', 'Zimmer'],
    ]) made[firstname] = (await u.post('/accounts', { email, firstname, lastname })).body;
    await u.post('/participants', { firstname: 'Mia', lastname: 'Abel', account: made.Anna.uuid });
    await u.post('/participants', { firstname: 'Max', lastname: 'Abel', account: made.Anna.uuid });
    await u.post('/participants', { firstname: 'Lou', lastname: 'Zimmer', account: made.Clara.uuid });
  });

  it('sorts by lastname, firstname with German collation and embeds every page\'s participants', async () => {
    const res = await u.get('/accounts');
    expect(res.status).toBe(200);
    expect(res.body.map((a) => a.name)).toEqual(['Anna Abel', 'Bernd Abel', 'Oscar Ortmann', 'Zoë Özdemir', 'Clara Zimmer']);
    expect(res.body[0].participants.map((p) => p.name)).toEqual(['Max Abel', 'Mia Abel']);
    expect(res.body[1].participants).toEqual([]);
    expect(res.body[4].participants.map((p) => p.name)).toEqual(['Lou Zimmer']);
    for (const a of res.body) expect(Array.isArray(a.participants)).toBe(true);
  });

  it('searches name and e-mail with q, ignoring case', async () => {
    expect((await u.get('/accounts?q=ABEL')).body.map((a) => a.firstname)).toEqual(['Anna', 'Bernd']);
    expect((await u.get('/accounts?q=anna%20abel')).body.map((a) => a.firstname)).toEqual(['Anna']);
    expect((await u.get('/accounts?q=FAMILIE-ortmann')).body.map((a) => a.firstname)).toEqual(['Oscar']);
    expect((await u.get('/accounts?q=example.org')).body).toHaveLength(4);
    expect((await u.get('/accounts?q=%25')).body).toEqual([]);
  });

  it('filters by modifiedSince and paginates', async () => {
    expect((await u.get('/accounts?modifiedSince=2999-01-01')).body).toEqual([]);
    expect((await u.get('/accounts?modifiedSince=2000-01-01T00:00:00Z')).body).toHaveLength(5);
    expectProblem(await u.get('/accounts?modifiedSince=gestern'), 400);
    const p2 = await u.get('/accounts?itemsPerPage=2&page=2');
    expect(p2.body.map((a) => a.name)).toEqual(['Oscar Ortmann', 'Zoë Özdemir']);
    expect((await u.get('/accounts?itemsPerPage=2&page=9')).body).toEqual([]);
    expectProblem(await u.get('/accounts?itemsPerPage=201'), 400);
    expectProblem(await u.get('/accounts?page=0'), 400);
  });

  it('marks an account modified when a child joins, is renamed or leaves', async () => {
    const a = (await u.post('/accounts', { email: 'sync@example.org' })).body;
    const changedSince = async () => {
      const res = await u.get(`/accounts?modifiedSince=${encodeURIComponent(since)}`);
      return res.body.map((x) => x.uuid);
    };
    let since = new Date().toISOString();
    expect(await changedSince()).toEqual([]);
    const child = (await u.post('/participants', { firstname: 'Neu', lastname: 'Kind', account: 'sync@example.org' })).body;
    expect(await changedSince()).toEqual([a.uuid]);
    since = new Date().toISOString();
    await u.patch(`/participants/${child.uuid}`, { phone: '0123' });
    expect(await changedSince()).toEqual([]);
    await u.patch(`/participants/${child.uuid}`, { firstname: 'Umbenannt' });
    expect(await changedSince()).toEqual([a.uuid]);
    since = new Date().toISOString();
    await u.del(`/participants/${child.uuid}`);
    expect(await changedSince()).toEqual([a.uuid]);
    expect((await u.get(`/accounts/${a.uuid}`)).body.participants).toEqual([]);
  });
});

describe('PATCH /accounts/{uuid}', () => {
  it('applies only the keys sent, clears optional fields with null and ignores null for the e-mail', async () => {
    const a = (await t.post('/accounts', { email: 'patch@example.org', firstname: 'Paul', lastname: 'Patch', city: 'Kassel', phone: '123' })).body;
    const r1 = await t.patch(`/accounts/${a.uuid}`, { city: 'Köln' });
    expect(r1.status).toBe(200);
    expect(r1.body).toMatchObject({ email: 'patch@example.org', firstname: 'Paul', lastname: 'Patch', name: 'Paul Patch', city: 'Köln', phone: '123' });
    const r2 = await t.patch(`/accounts/${a.uuid}`, { phone: null, email: null, firstname: null });
    expect(r2.body.phone).toBeUndefined();
    expect(r2.body.firstname).toBeUndefined();
    expect(r2.body.email).toBe('patch@example.org');
    expect(r2.body.name).toBe('Patch');
    expect(r2.body.participants).toEqual([]);
    const r3 = await t.patch(`/accounts/${a.uuid}`, { email: 'PATCH@example.org' });
    expect(r3.body.email).toBe('PATCH@example.org'); // a change of case only is no duplicate
  });

  it('refuses an empty body, a bad e-mail and a duplicate e-mail', async () => {
    const a = (await t.post('/accounts', { email: 'leer@example.org' })).body;
    await t.post('/accounts', { email: 'vergeben@example.org' });
    expectProblem(await t.patch(`/accounts/${a.uuid}`, {}), 422);
    expectProblem(await t.request('PATCH', `/accounts/${a.uuid}`, { rawBody: '', headers: { 'content-type': 'application/json' } }), 422);
    let p = expectProblem(await t.patch(`/accounts/${a.uuid}`, { email: 'kaputt@' }), 422);
    expect(p.violations?.[0].propertyPath).toBe('email');
    p = expectProblem(await t.patch(`/accounts/${a.uuid}`, { email: 'Vergeben@Example.org' }), 422);
    expect(p.violations?.[0]).toMatchObject({ propertyPath: 'email' });
    const merge = await t.request('PATCH', `/accounts/${a.uuid}`, { rawBody: JSON.stringify({ city: 'Ulm' }), headers: { 'content-type': 'application/merge-patch+json' } });
    expect(merge.body.city).toBe('Ulm');
    expectProblem(await t.patch(`/accounts/${newUuid()}`, { city: 'Ulm' }), 404);
  });
});

describe('DELETE /accounts/{uuid}', () => {
  it('deletes with 204 and keeps the participants without an account', async () => {
    const a = (await t.post('/accounts', { email: 'weg@example.org', firstname: 'Wilma', lastname: 'Weg' })).body;
    const child = (await t.post('/participants', { firstname: 'Willi', lastname: 'Weg', account: a.uuid })).body;
    expect(child.account).toEqual({ uuid: a.uuid, name: 'Wilma Weg' });
    const del = await t.del(`/accounts/${a.uuid}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expectProblem(await t.get(`/accounts/${a.uuid}`), 404);
    expectProblem(await t.del(`/accounts/${a.uuid}`), 404);
    const after = await t.get(`/participants/${child.uuid}`);
    expect(after.status).toBe(200);
    expect(after.body.account).toBeUndefined();
    expect(after.body.name).toBe('Willi Weg');
    expect(Date.parse(after.body.modifiedAt)).toBeGreaterThanOrEqual(Date.parse(child.modifiedAt));
    // The e-mail address is free again.
    expect((await t.post('/accounts', { email: 'weg@example.org' })).status).toBe(201);
  });
});

describe('access', () => {
  it('needs an admin token; read tokens read, read-write tokens write; organisers get 403', async () => {
    const a = (await t.post('/accounts', { email: 'zugriff@example.org' })).body;
    expectProblem(await t.get('/accounts', { token: null }), 401);
    expectProblem(await t.get(`/accounts/${a.uuid}`, { token: null }), 401);
    expectProblem(await t.post('/accounts', { email: 'anon@example.org' }, { token: null }), 401);
    expectProblem(await t.get('/accounts', { token: 'hpt_invalid' }), 401);
    const read = await t.token({ access: 'read' });
    expect((await t.get('/accounts', { token: read })).status).toBe(200);
    expect((await t.get(`/accounts/${a.uuid}`, { token: read })).status).toBe(200);
    expectProblem(await t.post('/accounts', { email: 'lesend@example.org' }, { token: read }), 403);
    expectProblem(await t.patch(`/accounts/${a.uuid}`, { city: 'X' }, { token: read }), 403);
    expectProblem(await t.del(`/accounts/${a.uuid}`, { token: read }), 403);
    const organiser = await t.token({ role: 'organiser' });
    expectProblem(await t.get('/accounts', { token: organiser }), 403);
    expectProblem(await t.get(`/accounts/${a.uuid}`, { token: organiser }), 403);
    expectProblem(await t.post('/accounts', { email: 'org@example.org' }, { token: organiser }), 403);
    const legacy = await t.token({ access: 'legacy' });
    expectProblem(await t.get('/accounts', { token: legacy }), 403);
    const u = await h.tenant();
    expectProblem(await t.get('/accounts', { token: u.adminToken }), 401); // another tenant's token
  });
});

describe('resolveAccountRef', () => {
  it('resolves UUID, base58 and e-mail (any case) to the UUID, and anything else to null', async () => {
    const a = (await t.post('/accounts', { email: 'Ref@Example.org' })).body;
    const ctx = t.context();
    expect(await resolveAccountRef(ctx, a.uuid)).toBe(a.uuid);
    expect(await resolveAccountRef(ctx, a.uuid.toUpperCase())).toBe(a.uuid);
    expect(await resolveAccountRef(ctx, uuidToBase58(a.uuid))).toBe(a.uuid);
    expect(await resolveAccountRef(ctx, 'ref@example.ORG')).toBe(a.uuid);
    expect(await resolveAccountRef(ctx, ' ref@example.org ')).toBe(a.uuid);
    expect(await resolveAccountRef(ctx, 'unbekannt@example.org')).toBeNull();
    expect(await resolveAccountRef(ctx, newUuid())).toBeNull();
    expect(await resolveAccountRef(ctx, '')).toBeNull();
    expect(await resolveAccountRef(ctx, '%')).toBeNull();
  });
});
