import { readConfig } from '../config.js';
// A small per-process cache for anonymous reads that are public anyway (D10: `Cache-Control: public,
// max-age=60`). Keys always start with the tenant's slug, so nothing of one tenant is served to another;
// entries live a few seconds and the map is bounded (oldest entries go first).
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  /** Loads under way: callers that miss while one runs wait for it instead of loading the same page again. */
  private readonly loading = new Map<string, Promise<V>>();

  constructor(private readonly maxEntries = 500) {}

  async getOrLoad(key: string, ttlMs: number, load: () => Promise<V>): Promise<V> {
    if (ttlMs <= 0) return load();
    const hit = this.entries.get(key);
    if (hit && hit.expires > Date.now()) return hit.value;
    // Single flight: measured under 32 connections, every request that missed at expiry built the same 200-offer
    // page at once, and the cache served fewer requests per second than no cache (bench/README.md).
    const running = this.loading.get(key);
    if (running) return running;
    const started = Date.now();
    const promise = load().then(
      (value) => {
        this.loading.delete(key);
        this.entries.delete(key);
        this.entries.set(key, { value, expires: started + ttlMs });
        if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
        return value;
      },
      (err: unknown) => {
        this.loading.delete(key);
        throw err;
      },
    );
    this.loading.set(key, promise);
    return promise;
  }
}

/** How long anonymous offer lists are reused (`PUBLIC_CACHE_MS`, default 3000; 0 turns it off). */
export function publicCacheMs(): number {
  return readConfig().publicCacheMs;
}
