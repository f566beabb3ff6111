import { LRUCache } from 'lru-cache';
import { readConfig } from '../config.js';

// A small per-process cache for anonymous reads that are public anyway (D10: `Cache-Control: public,
// max-age=60`), on lru-cache (issue 26). Keys always start with the tenant's slug, so nothing of one tenant is
// served to another; entries live a few seconds and the cache is bounded (least recently used go first).
//
// - Single flight: lru-cache's `fetch` runs one load per key at a time, every caller that misses meanwhile
//   waits for it. Measured under 32 connections, every request that missed at expiry built the same 200-offer
//   page at once, and the cache served fewer requests per second than no cache (bench/README.md).
// - Stale while reloading (`allowStale`): once a page's time is up, the callers get the old page at once while
//   one of them reloads it; the next ones get the new page. A page expired longer ago than `maxStaleMs` (the
//   60 s a client may keep it anyway, D10) is not served: it is loaded afresh.
// - A failed load is not cached: its callers get the error, the next caller loads again.
export class TtlCache<V extends object> {
  private readonly cache: LRUCache<string, V, () => Promise<V>>;

  constructor(maxEntries = 500, private readonly maxStaleMs = 60_000) {
    this.cache = new LRUCache<string, V, () => Promise<V>>({
      max: maxEntries,
      allowStale: true,
      fetchMethod: (_key, _stale, { context }) => context(),
    });
  }

  async getOrLoad(key: string, ttlMs: number, load: () => Promise<V>): Promise<V> {
    if (ttlMs <= 0) return load();
    // Past its time for longer than a client would keep it: not worth serving once more.
    if (this.cache.getRemainingTTL(key) < -this.maxStaleMs) this.cache.delete(key);
    const value = await this.cache.fetch(key, { ttl: ttlMs, context: load });
    // fetch answers undefined only when the load is aborted, which nothing here does.
    return value ?? load();
  }
}

/** How long anonymous offer lists are reused (`PUBLIC_CACHE_MS`, default 3000; 0 turns it off). */
export function publicCacheMs(): number {
  return readConfig().publicCacheMs;
}
