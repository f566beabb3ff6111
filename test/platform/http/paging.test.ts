import { beforeAll, describe, expect, it } from 'vitest';
import { seedDemo } from '../../../src/demo/seed.js';
import { expectProblem, useHarness, type TestResponse, asList } from '../../harness/harness.js';
import * as webhooks from '../../factories/webhook.factory.js';

// Issue 24 (14): every list answer says how many records match (`X-Total-Count`) and links its pages (`Link`,
// RFC 8288), while the body stays the plain array of spec 4.1. Checked on every list of the router, filled by the
// demo season, by walking each list along its `next` links.
const { h, t } = useHarness();
let offerUuid: string;
let webhookUuid: string;

beforeAll(async () => {
  await seedDemo(h.orm, t.slug);
  offerUuid = (await t.get('/attendances?itemsPerPage=1')).body[0].offer.uuid;
  webhookUuid = (await webhooks.create(t)).uuid;
}, 120_000);

const LISTS = () => [
  '/offers', '/attendances', `/offers/${offerUuid}/attendances`, '/editions', '/organisers', '/categories', '/accounts', '/participants',
  '/debtors', '/ledgers', '/bookings', '/receipts', '/webhooks', `/webhooks/${webhookUuid}/deliveries`,
];

type Links = Record<string, string>;
function links(res: TestResponse): Links {
  const out: Links = {};
  for (const m of String(res.headers.link ?? '').matchAll(/<([^>]+)>; rel="(\w+)"/g)) out[m[2]!] = m[1]!;
  return out;
}
const pageOf = (url: string) => Number(new URL(url).searchParams.get('page'));
const local = (url: string) => { const u = new URL(url); return `${u.pathname}${u.search}`; };

describe('paging headers', () => {
  it('every list: X-Total-Count is what its pages hold, Link walks them first to last with the filters kept', async () => {
    const lists = LISTS();
    expect(lists).toHaveLength(14);
    for (const list of lists) {
      const first = await t.get(`${list}?itemsPerPage=7`);
      expect(first.status, list).toBe(200);
      expect(Array.isArray(first.body), list).toBe(true);
      const total = Number(first.headers['x-total-count']);
      expect(first.headers['x-total-count'], list).toMatch(/^\d+$/);
      const l = links(first);
      expect(l.first, list).toBe(`http://${t.host}/api${list}?itemsPerPage=7&page=1`);
      expect(pageOf(l.last!), list).toBe(Math.max(1, Math.ceil(total / 7)));
      expect(l.prev, list).toBeUndefined();
      const seen: unknown[] = [...asList(first.body)];
      let next = l.next;
      let pages = 1;
      while (next) {
        const res = await t.request('GET', local(next).replace(/^\/api/, ''));
        expect(res.headers['x-total-count'], list).toBe(String(total));
        expect(pageOf(links(res).prev!), list).toBe(pages);
        seen.push(...asList(res.body));
        next = links(res).next;
        pages++;
      }
      expect(seen.length, list).toBe(total);
      expect(pages, list).toBe(Math.max(1, Math.ceil(total / 7)));
    }
  }, 120_000);

  it('counts with the filters and keeps them in the links; anonymous (cached) pages too', async () => {
    const published = await t.get('/offers?status=published&itemsPerPage=5');
    const all = await t.get('/offers?status=published&itemsPerPage=200');
    expect(published.headers['x-total-count']).toBe(String(all.body.length));
    expect(links(published).next).toBe(`http://${t.host}/api/offers?status=published&itemsPerPage=5&page=2`);
    for (let i = 0; i < 2; i++) {
      const anonymous = await t.get('/offers?itemsPerPage=5', { token: null });
      const everything = await t.get('/offers?itemsPerPage=200', { token: null });
      expect(anonymous.headers['x-total-count']).toBe(String(everything.body.length));
      expect(anonymous.headers['cache-control']).toBe('public, max-age=60');
    }
  });

  it('answers a page past the end with [] and the true total; a filter naming nothing with 0; an error without them', async () => {
    const categories = Number((await t.get('/categories')).headers['x-total-count']);
    expect(categories).toBeGreaterThan(0);
    const past = await t.get('/categories?page=99');
    expect(past.body).toEqual([]);
    expect(past.headers['x-total-count']).toBe(String(categories));
    expect(pageOf(links(past).prev!)).toBe(Math.ceil(categories / 30));
    expect(links(past).next).toBeUndefined();
    const anonymousPast = await t.get('/offers?page=99', { token: null });
    expect(anonymousPast.body).toEqual([]);
    expect(Number(anonymousPast.headers['x-total-count'])).toBeGreaterThan(0);
    const nobody = await t.get('/participants?account=nobody@nowhere.example');
    expect(nobody.body).toEqual([]);
    expect(nobody.headers['x-total-count']).toBe('0');
    expect(pageOf(links(nobody).last!)).toBe(1);
    const bad = await t.get('/categories?itemsPerPage=0');
    expectProblem(bad, 400);
    expect(bad.headers.link).toBeUndefined();
    expect(bad.headers['x-total-count']).toBeUndefined();
    const one = await t.get(`/offers/${offerUuid}`);
    expect(one.headers.link).toBeUndefined();
  });

  it('leaves the Link out for a query string too long to repeat (unknown parameters), still counting', async () => {
    const res = await t.get(`/categories?itemsPerPage=2&unknown=${'A'.repeat(5000)}`);
    expect(res.status).toBe(200);
    expect(res.headers['x-total-count']).toMatch(/^\d+$/);
    expect(res.headers.link).toBeUndefined();
    const filtered = await t.get(`/offers?itemsPerPage=2&q=${'a'.repeat(500)}`);
    expect(filtered.headers.link).toContain(`q=${'a'.repeat(500)}&page=1>; rel="first"`);
  });

  it('links at the address the request came in on, and lets browsers read both headers', async () => {
    const res = await t.get('/editions?itemsPerPage=1', { host: `${t.host}:8443` });
    expect(links(res).first).toBe(`http://${t.host}:8443/api/editions?itemsPerPage=1&page=1`);
    expect(String(res.headers['access-control-expose-headers'])).toMatch(/\bLink\b.*\bX-Total-Count\b/);
  });
});
