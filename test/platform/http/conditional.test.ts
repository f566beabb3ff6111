import { describe, expect, it } from 'vitest';
import { expectProblem, useHarness } from '../../harness/harness.js';
import { etagOf, parseTagList, tagMatches } from '../../../src/platform/http/conditional.js';
import { uuidToBase58 } from '../../../src/platform/http/ids.js';
import { dueApplication, pay } from '../../resources/money/helpers.js';

// Issue 13 item 9: ETag on single records and lists, If-None-Match -> 304, If-Match on PATCH and DELETE ->
// 412 on a stale version; once in the platform layer, so every resource has it.

const { h, t } = useHarness();

describe('entity tags', () => {
  it('parses tag lists and compares weakly', () => {
    expect(parseTagList('W/"a", "b" ,*')).toEqual(['"a"', '"b"', '*']);
    expect(parseTagList('garbage')).toEqual([]);
    expect(tagMatches(['"a"'], 'W/"a"')).toBe(true);
    expect(tagMatches(['*'], 'W/"x"')).toBe(true);
    expect(tagMatches(['"b"'], 'W/"a"')).toBe(false);
    expect(etagOf('{}')).toMatch(/^W\/"[A-Za-z0-9_-]{22}"$/);
    expect(etagOf('{}')).toBe(etagOf('{}'));
    expect(etagOf('{}')).not.toBe(etagOf('{"a":1}'));
  });
});

describe('GET with ETag and If-None-Match', () => {
  it('tags single records and lists, and answers 304 to a matching If-None-Match', async () => {
    const c = (await t.post('/categories', { name: 'Sport' })).body;
    const one = await t.get(`/categories/${c.uuid}`);
    expect(one.headers.etag).toMatch(/^W\/"[A-Za-z0-9_-]{22}"$/);
    expect(one.headers.etag).toBe(etagOf(one.text));
    const list = await t.get('/categories');
    expect(list.headers.etag).toMatch(/^W\//);
    expect(list.headers.etag).not.toBe(one.headers.etag);

    const notModified = await t.get(`/categories/${c.uuid}`, { headers: { 'if-none-match': one.headers.etag! } });
    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe('');
    expect(notModified.headers.etag).toBe(one.headers.etag);
    expect(notModified.headers['cache-control']).toBe('private, no-store');
    // The base58 form of the same id is the same representation.
    expect((await t.get(`/categories/${uuidToBase58(c.uuid)}`, { headers: { 'if-none-match': `"x", ${one.headers.etag}` } })).status).toBe(304);
    expect((await t.get('/categories', { headers: { 'if-none-match': list.headers.etag! } })).status).toBe(304);
    expect((await t.get('/categories', { headers: { 'if-none-match': '*' } })).status).toBe(304);

    // A change gives a new tag: the old one no longer matches.
    await t.patch(`/categories/${c.uuid}`, { name: 'Sport und Spiel' });
    const changed = await t.get(`/categories/${c.uuid}`, { headers: { 'if-none-match': one.headers.etag! } });
    expect(changed.status).toBe(200);
    expect(changed.body.name).toBe('Sport und Spiel');
    expect(changed.headers.etag).not.toBe(one.headers.etag);
    // Errors carry no tag.
    const missing = await t.get('/categories/00000000-0000-4000-8000-000000000000', { headers: { 'if-none-match': '*' } });
    expectProblem(missing, 404);
    expect(missing.headers.etag).toBeUndefined();
  });

  it('tags anonymous reads of public offers too', async () => {
    const ed = (await t.post('/editions', { name: 'Sommer' })).body;
    const o = (await t.post('/offers', { name: 'Öffentlich', edition: ed.uuid })).body;
    await t.post(`/offers/${o.uuid}/transition`, { transition: 'publish' });
    const anon = await t.get(`/offers/${o.uuid}`, { token: null });
    expect(anon.status).toBe(200);
    const admin = await t.get(`/offers/${o.uuid}`);
    // Different callers see different fields, so different tags.
    expect(anon.headers.etag).not.toBe(admin.headers.etag);
    const again = await t.get(`/offers/${o.uuid}`, { token: null, headers: { 'if-none-match': anon.headers.etag! } });
    expect(again.status).toBe(304);
    expect(again.headers['cache-control']).toBe('public, max-age=60');
  });
});

describe('If-Match on PATCH and DELETE', () => {
  it('applies a PATCH with the current tag, and refuses a stale one with 412', async () => {
    const ed = (await t.post('/editions', { name: 'Herbst' })).body;
    const o = (await t.post('/offers', { name: 'Zwei Bearbeiter', edition: ed.uuid })).body;
    const read = await t.get(`/offers/${o.uuid}`);
    const tag = read.headers.etag!;
    // Team member A saves with the tag she read; the PATCH answer carries the new tag.
    const a = await t.patch(`/offers/${o.uuid}`, { fee: 500 }, { headers: { 'if-match': tag } });
    expect(a.status, a.text).toBe(200);
    expect(a.headers.etag).toBe((await t.get(`/offers/${o.uuid}`)).headers.etag);
    // Team member B still has the old tag: 412, nothing changed.
    const b = await t.patch(`/offers/${o.uuid}`, { fee: 900 }, { headers: { 'if-match': tag } });
    const p = expectProblem(b, 412);
    expect(p.type).toBe('/errors/412');
    expect(p.title).toBe('Precondition Failed');
    expect(p.detail).toMatch(/changed since you read it/);
    expect((await t.get(`/offers/${o.uuid}`)).body.fee).toBe(500);
    // `*` matches any existing record; the strong form of the tag matches too.
    expect((await t.patch(`/offers/${o.uuid}`, { fee: 700 }, { headers: { 'if-match': '*' } })).status).toBe(200);
    const now = (await t.get(`/offers/${o.uuid}`)).headers.etag!;
    expect((await t.patch(`/offers/${o.uuid}`, { fee: 800 }, { headers: { 'if-match': now.replace(/^W\//, '') } })).status).toBe(200);
    // A malformed header is 400.
    expectProblem(await t.patch(`/offers/${o.uuid}`, { fee: 1 }, { headers: { 'if-match': 'nonsense' } }), 400);
    // An unknown record keeps its own answer.
    expectProblem(await t.patch('/offers/00000000-0000-4000-8000-000000000000', { fee: 1 }, { headers: { 'if-match': tag } }), 404);
  });

  it('refuses a DELETE with a stale tag with 412 and deletes with the current one', async () => {
    const c = (await t.post('/categories', { name: 'Basteln' })).body;
    const tag = (await t.get(`/categories/${c.uuid}`)).headers.etag!;
    await t.patch(`/categories/${c.uuid}`, { name: 'Basteln und Malen' });
    expectProblem(await t.del(`/categories/${c.uuid}`, { headers: { 'if-match': tag } }), 412);
    expect((await t.get(`/categories/${c.uuid}`)).status).toBe(200);
    const current = (await t.get(`/categories/${c.uuid}`)).headers.etag!;
    expect((await t.del(`/categories/${c.uuid}`, { headers: { 'if-match': current } })).status).toBe(204);
    // A path that only answers 405 keeps its 405 (receipts are immutable).
    const receipt = await pay(t, [{ attendance: (await dueApplication(t)).uuid }]);
    const r405 = await t.patch(`/receipts/${receipt.uuid}`, { total: 1 }, { headers: { 'if-match': tag } });
    expectProblem(r405, 405);
    expectProblem(await t.del(`/receipts/${receipt.uuid}`, { headers: { 'if-match': tag } }), 405);
    // Without If-Match nothing changes for clients that do not use it.
    const d = (await t.post('/categories', { name: 'Ohne' })).body;
    expect((await t.del(`/categories/${d.uuid}`)).status).toBe(204);
  });
});
