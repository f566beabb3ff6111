import { beforeAll, describe, expect, it } from 'vitest';
import { seedDemo } from '../../../src/demo/seed.js';
import { buildOpenApiDocument } from '../../../src/platform/http/openapi-document.js';
import { appRouter } from '../../../src/router.js';
import { expectProblem, useHarness, type TestResponse, asRecord, maybe, asList, at } from '../../harness/harness.js';
import * as webhooks from '../../factories/webhook.factory.js';

// Issue 24 (14): every list answer says how many records match (`X-Total-Count`), the hint of more: more records
// follow while `page * itemsPerPage < X-Total-Count`. The body stays the plain array of spec 4.1, and no answer
// carries a `Link` header (spec 4.1 "No `Link` header is sent", 9.8). Checked on every list the OpenAPI document
// names (each GET that answers an array), filled by the demo season, by walking each list page by page.
const { h, t } = useHarness();
let offerUuid: string;
let webhookUuid: string;

beforeAll(async () => {
  await seedDemo(h.orm, t.slug);
  offerUuid = (await t.get('/attendances?itemsPerPage=1')).body[0].offer.uuid;
  webhookUuid = (await webhooks.create(t)).uuid;
}, 120_000);

/** Every list of the API: the document's GET operations that answer an array, their `{uuid}` filled in. */
function lists(): string[] {
  const doc = buildOpenApiDocument(appRouter, 'https://demo.example/api');
  const ids: Record<string, string> = { offers: offerUuid, webhooks: webhookUuid };
  return Object.entries(asRecord(doc.paths))
    .filter(([, ops]) => maybe(ops, 'get', 'responses', '200', 'content', 'application/json', 'schema', 'type') === 'array')
    .map(([path]) => path.replace(/^\/(\w+)\/\{uuid\}/, (_, resource: string) => `/${resource}/${ids[resource] ?? '{uuid}'}`));
}

const noLink = (res: TestResponse, what: string) => expect(res.headers.link, `${what}: Link header (spec 4.1: none)`).toBeUndefined();
const totalOf = (res: TestResponse, what: string) => {
  expect(res.headers['x-total-count'], what).toMatch(/^\d+$/);
  return Number(res.headers['x-total-count']);
};

describe('paging headers', () => {
  it('every list: no Link header on any page; X-Total-Count is what its pages hold; more follow while page * itemsPerPage < total', async () => {
    const all = lists();
    expect(all).toEqual(expect.arrayContaining([
      '/offers', '/attendances', `/offers/${offerUuid}/attendances`, '/editions', '/organisers', '/categories', '/accounts', '/participants',
      '/debtors', '/ledgers', '/bookings', '/receipts', '/webhooks', `/webhooks/${webhookUuid}/deliveries`,
    ]));
    for (const list of all) {
      expect(list, 'every {uuid} filled').not.toContain('{');
      const perPage = 7;
      const first = await t.get(`${list}?itemsPerPage=${perPage}`);
      expect(first.status, list).toBe(200);
      expect(Array.isArray(first.body), list).toBe(true);
      noLink(first, list);
      const total = totalOf(first, list);
      const seen: unknown[] = [...asList(first.body)];
      let page = 1;
      while (page * perPage < total) {
        page++;
        const res = await t.get(`${list}?itemsPerPage=${perPage}&page=${page}`);
        expect(res.status, `${list} page ${page}`).toBe(200);
        noLink(res, `${list} page ${page}`);
        expect(totalOf(res, list), `${list} page ${page}`).toBe(total);
        expect(at(res.body, 'length'), `${list} page ${page}`).toBe(Math.min(perPage, total - (page - 1) * perPage));
        seen.push(...asList(res.body));
      }
      expect(seen.length, list).toBe(total);
      // The page after the last: empty, with the same total and no Link either.
      const past = await t.get(`${list}?itemsPerPage=${perPage}&page=${page + 1}`);
      expect(past.body, list).toEqual([]);
      expect(totalOf(past, list), list).toBe(total);
      noLink(past, `${list} past the end`);
    }
  }, 120_000);

  it('counts with the filters; anonymous (cached) pages too, without Link', async () => {
    const published = await t.get('/offers?status=published&itemsPerPage=5');
    const everyPublished = await t.get('/offers?status=published&itemsPerPage=200');
    expect(published.headers['x-total-count']).toBe(String(everyPublished.body.length));
    expect(everyPublished.body.length).toBeGreaterThan(5);
    noLink(published, 'filtered');
    for (let i = 0; i < 2; i++) {
      const anonymous = await t.get('/offers?itemsPerPage=5', { token: null });
      const everything = await t.get('/offers?itemsPerPage=200', { token: null });
      expect(anonymous.headers['x-total-count']).toBe(String(everything.body.length));
      expect(anonymous.headers['cache-control']).toBe('public, max-age=60');
      noLink(anonymous, `anonymous ${i}`);
    }
  });

  it('a filter naming nothing counts 0; an error and a single record carry neither header', async () => {
    const nobody = await t.get('/participants?account=nobody@nowhere.example');
    expect(nobody.body).toEqual([]);
    expect(nobody.headers['x-total-count']).toBe('0');
    noLink(nobody, 'filter naming nothing');
    const bad = await t.get('/categories?itemsPerPage=0');
    expectProblem(bad, 400);
    noLink(bad, 'problem');
    expect(bad.headers['x-total-count']).toBeUndefined();
    const one = await t.get(`/offers/${offerUuid}`);
    noLink(one, 'one record');
    expect(one.headers['x-total-count']).toBeUndefined();
  });

  it('a long query string (unknown parameters) still counts; browsers may read X-Total-Count, and no Link is exposed', async () => {
    const res = await t.get(`/categories?itemsPerPage=2&unknown=${'A'.repeat(5000)}`);
    expect(res.status).toBe(200);
    expect(res.headers['x-total-count']).toMatch(/^\d+$/);
    noLink(res, 'long query');
    const exposed = String((await t.get('/editions?itemsPerPage=1')).headers['access-control-expose-headers']).split(/,\s*/);
    expect(exposed).toContain('X-Total-Count');
    expect(exposed).not.toContain('Link');
  });
});
