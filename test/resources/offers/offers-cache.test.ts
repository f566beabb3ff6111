import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useHarness } from '../../harness/harness.js';
import { edition, names, offer, transition } from './helpers.js';

// Anonymous offer lists are reused for PUBLIC_CACHE_MS per tenant and query (then served stale once while one
// request reloads them); token holders always read fresh.
const previous = process.env.PUBLIC_CACHE_MS;

beforeAll(() => {
  process.env.PUBLIC_CACHE_MS = '400';
});
afterAll(() => {
  process.env.PUBLIC_CACHE_MS = previous;
});
const { h } = useHarness({ tenant: false });

describe('public offer list cache', () => {
  it('reuses an anonymous page briefly, per tenant, while tokens see changes at once', async () => {
    const a = await h.tenant();
    const b = await h.tenant();
    const ed = await edition(a);
    const first = await offer(a, { name: 'Erstes Angebot', edition: ed.uuid });
    await transition(a, first.uuid, 'publish');
    expect(names(await a.get('/offers', { token: null }))).toEqual(['Erstes Angebot']);
    expect(names(await b.get('/offers', { token: null }))).toEqual([]);

    const second = await offer(a, { name: 'Zweites Angebot', edition: ed.uuid });
    await transition(a, second.uuid, 'publish');
    expect(names(await a.get('/offers', { token: null }))).toEqual(['Erstes Angebot']);
    expect(names(await a.get('/offers'))).toEqual(['Erstes Angebot', 'Zweites Angebot']);
    expect(names(await a.get('/offers?itemsPerPage=10', { token: null }))).toHaveLength(2);

    await new Promise((r) => setTimeout(r, 500));
    // Past its time the old page is served once more while that request reloads it (issue 26: lru-cache's
    // allowStale, one reload for all callers); the requests after the reload get the new page.
    expect(names(await a.get('/offers', { token: null }))).toEqual(['Erstes Angebot']);
    let fresh: string[] = [];
    for (let i = 0; i < 40 && fresh.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 25));
      fresh = names(await a.get('/offers', { token: null }));
    }
    expect(fresh).toEqual(['Erstes Angebot', 'Zweites Angebot']);
  });
});
