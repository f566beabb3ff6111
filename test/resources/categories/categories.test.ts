import { describe, expect, it } from 'vitest';
import { expectProblem, useHarness } from '../../harness/harness.js';
import { uuidToBase58 } from '../../../src/platform/http/ids.js';

const { h, t } = useHarness();

describe('/categories', () => {
  it('creates with a derived alias and reads it back by UUID and base58', async () => {
    const created = await t.post('/categories', { name: 'Spiel & Spaß für Größere' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Spiel & Spaß für Größere', alias: 'spiel-und-spass-fuer-groessere' });
    expect(created.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);
    const byUuid = await t.get(`/categories/${created.body.uuid}`);
    expect(byUuid.status).toBe(200);
    const byBase58 = await t.get(`/categories/${uuidToBase58(created.body.uuid)}`);
    expect(byBase58.body).toEqual(byUuid.body);
    expect(byUuid.headers['cache-control']).toBe('private, no-store');
  });

  it('makes aliases unique and refuses a taken one with a violation', async () => {
    const a = await t.post('/categories', { name: 'Musik' });
    const b = await t.post('/categories', { name: 'Musik' });
    expect(a.body.alias).toBe('musik');
    expect(b.body.alias).toBe('musik-2');
    const dup = await t.post('/categories', { name: 'Noch mehr Musik', alias: 'musik' });
    const p = expectProblem(dup, 422);
    expect(p.violations?.[0].propertyPath).toBe('alias');
  });

  it('validates the create body', async () => {
    const p = expectProblem(await t.post('/categories', { name: '' }), 422);
    expect(p.detail).toMatch(/^name: /);
    expectProblem(await t.post('/categories', { name: 42 }), 422);
    expectProblem(await t.post('/categories', {}), 422);
  });

  it('patches only the keys sent, ignores null for the name, and refuses an empty body', async () => {
    const c = (await t.post('/categories', { name: 'Natur' })).body;
    const renamed = await t.patch(`/categories/${c.uuid}`, { name: 'Natur & Umwelt' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Natur & Umwelt', alias: 'natur' });
    const nullName = await t.patch(`/categories/${c.uuid}`, { name: null, alias: 'natur-umwelt' });
    expect(nullName.body).toMatchObject({ name: 'Natur & Umwelt', alias: 'natur-umwelt' });
    expectProblem(await t.patch(`/categories/${c.uuid}`, {}), 422);
    expectProblem(await t.request('PATCH', `/categories/${c.uuid}`, { rawBody: '', headers: { 'content-type': 'application/json' } }), 422);
    const merge = await t.request('PATCH', `/categories/${c.uuid}`, { rawBody: JSON.stringify({ name: 'Natur pur' }), headers: { 'content-type': 'application/merge-patch+json' } });
    expect(merge.body.name).toBe('Natur pur');
  });

  it('lists with q, modifiedSince and pagination', async () => {
    const u = await h.tenant();
    for (const name of ['Basteln', 'Bauen', 'Backen', 'Zirkus']) await u.post('/categories', { name });
    const all = await u.get('/categories');
    expect(all.body.map((c) => c.name)).toEqual(['Backen', 'Basteln', 'Bauen', 'Zirkus']);
    expect((await u.get('/categories?q=BA')).body).toHaveLength(3);
    expect((await u.get('/categories?q=%25')).body).toHaveLength(0);
    const page2 = await u.get('/categories?itemsPerPage=3&page=2');
    expect(page2.body.map((c) => c.name)).toEqual(['Zirkus']);
    // Issue 24: the body stays the plain array of spec 4.1; X-Total-Count says how many there are; no `Link` (spec 4.1, 9.8).
    expect(page2.headers['x-total-count']).toBe('4');
    expect(page2.headers.link).toBeUndefined();
    expect((await u.get('/categories?page=9')).body).toEqual([]);
    expect((await u.get('/categories?modifiedSince=2999-01-01')).body).toEqual([]);
    expect((await u.get('/categories?modifiedSince=2000-01-01T00:00:00Z')).body).toHaveLength(4);
    expect((await u.get('/categories?unknown=1')).status).toBe(200);
  });

  it('deletes with 204 and then answers 404', async () => {
    const c = (await t.post('/categories', { name: 'Weg damit' })).body;
    const del = await t.del(`/categories/${c.uuid}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expectProblem(await t.get(`/categories/${c.uuid}`), 404);
    expectProblem(await t.del(`/categories/${c.uuid}`), 404);
  });

  it('needs a token, and admin read-write rights to write', async () => {
    expectProblem(await t.get('/categories', { token: null }), 401);
    const read = await t.token({ access: 'read' });
    expect((await t.get('/categories', { token: read })).status).toBe(200);
    expectProblem(await t.post('/categories', { name: 'X' }, { token: read }), 403);
    const organiser = await t.token({ role: 'organiser' });
    expectProblem(await t.post('/categories', { name: 'X' }, { token: organiser }), 403);
    const legacy = await t.token({ access: 'legacy' });
    expectProblem(await t.get('/categories', { token: legacy }), 403);
  });
});

describe('alias races', () => {
  it('answers a duplicate that slipped past the check (database 23505) as the same 422 on alias', async () => {
    const { Category } = await import('../../../src/resources/categories/entity.js');
    const { problemFromError } = await import('../../../src/platform/http/errors.js');
    const { createLogger } = await import('../../../src/platform/logging/logger.js');
    const first = t.context().em;
    first.create(Category, { uuid: crypto.randomUUID(), name: 'Rennen', alias: 'rennen-race' });
    await first.flush();
    const second = t.context().em;
    second.create(Category, { uuid: crypto.randomUUID(), name: 'Rennen', alias: 'rennen-race' });
    const err = await second.flush().catch((e: unknown) => e);
    const { body } = problemFromError(err, 'POST', createLogger('silent'));
    expect(body.status).toBe(422);
    expect(body.violations?.[0].propertyPath).toBe('alias');
  });
});
