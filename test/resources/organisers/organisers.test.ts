import { describe, expect, it } from 'vitest';
import { expectProblem, useHarness } from '../../harness/harness.js';
import { RULE_CODES } from '../../../src/domain/errors.js';
import { uuidToBase58 } from '../../../src/platform/http/ids.js';

const { h, t } = useHarness();

const full = {
  name: 'Jugendzentrum Süd',
  email: 'info@jz-sued.example.org',
  phone: '+49 30 1234567',
  website: 'https://jz-sued.example.org/ferien',
  street: 'Hauptstraße 1',
  zip: '10115',
  city: 'Berlin',
  description: 'Offene **Jugendarbeit** seit 1985.',
};

describe('POST /organisers', () => {
  it('creates with every field and a derived alias', async () => {
    const res = await t.post('/organisers', full);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ ...full, alias: 'jugendzentrum-sued' });
    expect(res.body.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(res.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);
    expect(res.body.modifiedAt).toBe(res.body.createdAt);
    expect(res.headers['cache-control']).toBe('private, no-store');
  });

  it('omits fields without a value, and treats empty strings as no value', async () => {
    const res = await t.post('/organisers', { name: 'Sportverein', phone: '', website: ' ', email: null, city: null });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['alias', 'createdAt', 'modifiedAt', 'name', 'uuid']);
    expect(res.text).not.toContain('null');
  });

  it('accepts a valid alias of its own and refuses a duplicate with a violation on alias', async () => {
    const own = await t.post('/organisers', { name: 'Musikschule', alias: 'musikschule-mitte' });
    expect(own.body.alias).toBe('musikschule-mitte');
    const second = await t.post('/organisers', { name: 'Musikschule Mitte' });
    expect(second.body.alias).toBe('musikschule-mitte-2');
    const dup = expectProblem(await t.post('/organisers', { name: 'Andere', alias: 'musikschule-mitte' }), 422);
    expect(dup.violations).toEqual([{ propertyPath: 'alias', message: expect.any(String), code: RULE_CODES.unique }]);
    expect(dup.type).toBe(`/validation_errors/${RULE_CODES.unique}`);
    const bad = expectProblem(await t.post('/organisers', { name: 'Andere', alias: 'Nicht Gültig' }), 422);
    expect(bad.violations?.[0].propertyPath).toBe('alias');
  });

  it('validates e-mail and website with violations', async () => {
    const email = expectProblem(await t.post('/organisers', { name: 'X', email: 'not-an-email' }), 422);
    expect(email.violations).toEqual([{ propertyPath: 'email', message: 'This value is not a valid email address.', code: RULE_CODES.email }]);
    expect(email.detail).toBe('email: This value is not a valid email address.');

    for (const website of ['ftp://example.org/x', 'example.org', '/relative/path', 'javascript:alert(1)', 'https://']) {
      const p = expectProblem(await t.post('/organisers', { name: 'X', website }), 422);
      expect(p.violations?.[0]).toMatchObject({ propertyPath: 'website', code: RULE_CODES.url });
    }
    const ok = await t.post('/organisers', { name: 'Plain http', website: 'http://example.org' });
    expect(ok.status).toBe(201);

    const both = expectProblem(await t.post('/organisers', { name: '', email: 'a@', website: 'nope' }), 422);
    expect(both.violations?.map((v) => v.propertyPath).sort()).toEqual(['email', 'name', 'website']);
    expect(both.detail.split('\n')).toHaveLength(3);
  });

  it('needs a name and checks types', async () => {
    expect(expectProblem(await t.post('/organisers', {}), 422).violations?.[0]).toMatchObject({ propertyPath: 'name', code: RULE_CODES.required });
    expectProblem(await t.post('/organisers', { name: '   ' }), 422);
    expectProblem(await t.post('/organisers', { name: 'X', phone: 123 }), 422);
    expectProblem(await t.post('/organisers', { name: 'X'.repeat(201) }), 422);
  });

  it('refuses a body that is not JSON', async () => {
    expectProblem(await t.request('POST', '/organisers', { rawBody: 'name=X', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415);
    expectProblem(await t.request('POST', '/organisers', { rawBody: '{"name":', headers: { 'content-type': 'application/json' } }), 400);
  });
});

describe('GET /organisers/{uuid}', () => {
  it('reads by UUID and by base58, and never shows nulls', async () => {
    const created = (await t.post('/organisers', { name: 'Bibliothek', city: 'Köln' })).body;
    const byUuid = await t.get(`/organisers/${created.uuid}`);
    expect(byUuid.status).toBe(200);
    expect(byUuid.body).toEqual(created);
    const b58 = uuidToBase58(created.uuid);
    expect(b58).toHaveLength(22);
    const byBase58 = await t.get(`/organisers/${b58}`);
    expect(byBase58.status).toBe(200);
    expect(byBase58.body).toEqual(created);
    expect(byBase58.body.uuid).toBe(created.uuid);
  });

  it('answers 404 for unknown, malformed, alias and foreign identifiers', async () => {
    expectProblem(await t.get('/organisers/3f2b8c1e-0000-4000-8000-000000000000'), 404);
    expectProblem(await t.get('/organisers/not-an-id'), 404);
    expectProblem(await t.get('/organisers/123'), 404);
    const o = (await t.post('/organisers', { name: 'Per Alias' })).body;
    expectProblem(await t.get(`/organisers/${o.alias}`), 404);
    const other = await h.tenant();
    const foreign = (await other.post('/organisers', { name: 'Fremder Träger' })).body;
    expect((await other.get(`/organisers/${foreign.uuid}`)).status).toBe(200);
    const p = expectProblem(await t.get(`/organisers/${foreign.uuid}`), 404);
    expect(p.detail).toContain(foreign.uuid);
    expectProblem(await t.patch(`/organisers/${foreign.uuid}`, { name: 'Übernommen' }), 404);
    expectProblem(await t.del(`/organisers/${foreign.uuid}`), 404);
    expect((await other.get(`/organisers/${foreign.uuid}`)).body.name).toBe('Fremder Träger');
  });
});

describe('GET /organisers', () => {
  it('lists sorted by name with German collation, filters by q and modifiedSince, and pages', async () => {
    const u = await h.tenant();
    const before = new Date().toISOString();
    for (const name of ['Zirkus Zappelino', 'Ökostation', 'Abenteuerspielplatz', 'Ostsee-Camp', 'äpfel & birnen e.V.']) {
      expect((await u.post('/organisers', { name })).status).toBe(201);
    }
    const all = await u.get('/organisers');
    expect(all.status).toBe(200);
    expect(all.body.map((o) => o.name)).toEqual(['Abenteuerspielplatz', 'äpfel & birnen e.V.', 'Ökostation', 'Ostsee-Camp', 'Zirkus Zappelino']);
    expect((await u.get('/organisers?q=CAMP')).body.map((o) => o.name)).toEqual(['Ostsee-Camp']);
    expect((await u.get('/organisers?q=o')).body).toHaveLength(3);
    expect((await u.get(`/organisers?q=${encodeURIComponent('öKO')}`)).body.map((o) => o.name)).toEqual(['Ökostation']);
    expect((await u.get('/organisers?q=_')).body).toEqual([]);
    expect((await u.get('/organisers?q=nichts')).body).toEqual([]);

    const p1 = await u.get('/organisers?itemsPerPage=2&page=1');
    const p2 = await u.get('/organisers?itemsPerPage=2&page=2');
    const p3 = await u.get('/organisers?itemsPerPage=2&page=3');
    expect([...p1.body, ...p2.body, ...p3.body].map((o) => o.name)).toEqual(all.body.map((o) => o.name));
    expect(p3.body).toHaveLength(1);
    // Issue 24: the plain array of spec 4.1 with its total, and no `Link` (spec 4.1, 9.8).
    expect(p1.headers['x-total-count']).toBe('5');
    expect(p1.headers.link).toBeUndefined();
    expect((await u.get('/organisers?page=4&itemsPerPage=2')).body).toEqual([]);

    expect((await u.get('/organisers?modifiedSince=2999-01-01')).body).toEqual([]);
    expect((await u.get('/organisers?modifiedSince=2000-01-01T00:00:00%2B01:00')).body).toHaveLength(5);
    const target = all.body.find((o) => o.name === 'Ökostation');
    await new Promise((r) => setTimeout(r, 20));
    const since = new Date().toISOString();
    await u.patch(`/organisers/${target!.uuid}`, { city: 'Bonn' });
    expect((await u.get(`/organisers?modifiedSince=${encodeURIComponent(since)}`)).body.map((o) => o.name)).toEqual(['Ökostation']);
    expect((await u.get(`/organisers?modifiedSince=${encodeURIComponent(before)}`)).body).toHaveLength(5);
  });

  it('answers 400 naming a malformed filter', async () => {
    expect(expectProblem(await t.get('/organisers?modifiedSince=gestern'), 400).detail).toMatch(/^modifiedSince: /);
    expect(expectProblem(await t.get('/organisers?itemsPerPage=201'), 400).detail).toMatch(/^itemsPerPage: /);
    expect(expectProblem(await t.get('/organisers?page=0'), 400).detail).toMatch(/^page: /);
    expect((await t.get('/organisers?unknown=1')).status).toBe(200);
  });
});

describe('PATCH /organisers/{uuid}', () => {
  it('applies only the keys sent, clears with null, ignores null for the name', async () => {
    const o = (await t.post('/organisers', { ...full, name: 'Kunstwerkstatt' })).body;
    const city = await t.patch(`/organisers/${uuidToBase58(o.uuid)}`, { city: 'Potsdam' });
    expect(city.status).toBe(200);
    expect(city.body).toMatchObject({ ...full, name: 'Kunstwerkstatt', alias: 'kunstwerkstatt', city: 'Potsdam' });
    expect(city.body.modifiedAt >= o.modifiedAt).toBe(true);

    const cleared = await t.patch(`/organisers/${o.uuid}`, { email: null, website: null, phone: null, description: null, name: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.name).toBe('Kunstwerkstatt');
    for (const k of ['email', 'website', 'phone', 'description']) expect(cleared.body).not.toHaveProperty(k);
    expect(cleared.body).toMatchObject({ street: full.street, zip: full.zip, city: 'Potsdam' });
    expect((await t.get(`/organisers/${o.uuid}`)).body).toEqual(cleared.body);

    const renamed = await t.patch(`/organisers/${o.uuid}`, { name: 'Kunstwerkstatt am See' });
    expect(renamed.body).toMatchObject({ name: 'Kunstwerkstatt am See', alias: 'kunstwerkstatt' });
    const rederived = await t.patch(`/organisers/${o.uuid}`, { alias: null });
    expect(rederived.body.alias).toBe('kunstwerkstatt-am-see');
  });

  it('refuses an empty body, invalid values and a taken alias with 422', async () => {
    const o = (await t.post('/organisers', { name: 'Feuerwehr' })).body;
    await t.post('/organisers', { name: 'Polizei' });
    expectProblem(await t.patch(`/organisers/${o.uuid}`, {}), 422);
    expectProblem(await t.request('PATCH', `/organisers/${o.uuid}`, { rawBody: '', headers: { 'content-type': 'application/json' } }), 422);
    expect(expectProblem(await t.patch(`/organisers/${o.uuid}`, { email: 'feuerwehr.example.org' }), 422).violations?.[0].propertyPath).toBe('email');
    expect(expectProblem(await t.patch(`/organisers/${o.uuid}`, { website: 'www.example.org' }), 422).violations?.[0].propertyPath).toBe('website');
    const dup = expectProblem(await t.patch(`/organisers/${o.uuid}`, { alias: 'polizei' }), 422);
    expect(dup.violations?.[0]).toMatchObject({ propertyPath: 'alias', code: RULE_CODES.unique });
    // Its own alias is no conflict.
    expect((await t.patch(`/organisers/${o.uuid}`, { alias: 'feuerwehr' })).status).toBe(200);
    expect((await t.get(`/organisers/${o.uuid}`)).body).toMatchObject({ name: 'Feuerwehr', alias: 'feuerwehr' });
  });

  it('accepts merge-patch+json', async () => {
    const o = (await t.post('/organisers', { name: 'Tierheim' })).body;
    const res = await t.request('PATCH', `/organisers/${o.uuid}`, { rawBody: JSON.stringify({ zip: '50667' }), headers: { 'content-type': 'application/merge-patch+json' } });
    expect(res.status).toBe(200);
    expect(res.body.zip).toBe('50667');
  });

  it('answers 404 for an unknown or malformed identifier', async () => {
    expectProblem(await t.patch('/organisers/3f2b8c1e-0000-4000-8000-000000000000', { name: 'X' }), 404);
    expectProblem(await t.patch('/organisers/xyz', { name: 'X' }), 404);
  });
});

describe('DELETE /organisers/{uuid}', () => {
  it('deletes with 204 and no body, then answers 404', async () => {
    const o = (await t.post('/organisers', { name: 'Weg damit' })).body;
    const del = await t.del(`/organisers/${uuidToBase58(o.uuid)}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expectProblem(await t.get(`/organisers/${o.uuid}`), 404);
    expectProblem(await t.del(`/organisers/${o.uuid}`), 404);
    expectProblem(await t.del('/organisers/nope'), 404);
  });
});

describe('access', () => {
  it('needs a token for everything', async () => {
    const o = (await t.post('/organisers', { name: 'Geschützt' })).body;
    for (const res of [
      await t.get('/organisers', { token: null }),
      await t.get(`/organisers/${o.uuid}`, { token: null }),
      await t.post('/organisers', { name: 'X' }, { token: null }),
      await t.patch(`/organisers/${o.uuid}`, { name: 'X' }, { token: null }),
      await t.del(`/organisers/${o.uuid}`, { token: null }),
    ]) {
      expectProblem(res, 401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
    expectProblem(await t.get('/organisers', { token: 'hpt_invalid' }), 401);
  });

  it('lets read tokens and organiser tokens read, and only admin read-write tokens write', async () => {
    const o = (await t.post('/organisers', { name: 'Lesbar' })).body;
    const read = await t.token({ access: 'read' });
    const organiser = await t.token({ role: 'organiser', organiserIds: [o.uuid] });
    const organiserRead = await t.token({ role: 'organiser', access: 'read', organiserIds: [o.uuid] });
    const legacy = await t.token({ access: 'legacy' });
    for (const token of [read, organiser, organiserRead]) {
      expect((await t.get('/organisers', { token })).status).toBe(200);
      expect((await t.get(`/organisers/${o.uuid}`, { token })).body.name).toBe('Lesbar');
    }
    for (const token of [read, organiser, organiserRead, legacy]) {
      expectProblem(await t.post('/organisers', { name: 'X' }, { token }), 403);
      expectProblem(await t.patch(`/organisers/${o.uuid}`, { name: 'X' }, { token }), 403);
      expectProblem(await t.del(`/organisers/${o.uuid}`, { token }), 403);
    }
    expectProblem(await t.get('/organisers', { token: legacy }), 403);
    expect((await t.get(`/organisers/${o.uuid}`)).body.name).toBe('Lesbar');
  });

  it('refuses another tenant\'s token', async () => {
    const other = await h.tenant();
    expectProblem(await t.get('/organisers', { token: other.adminToken }), 401);
  });
});
