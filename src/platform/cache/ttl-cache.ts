// A small per-process cache for anonymous reads that are public anyway (D10: `Cache-Control: public,
// max-age=60`). Keys always start with the tenant's slug, so nothing of one tenant is served to another;
// entries live a few seconds and the map is bounded (oldest entries go first).
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();

  constructor(private readonly maxEntries = 500) {}

  async getOrLoad(key: string, ttlMs: number, load: () => Promise<V>): Promise<V> {
    if (ttlMs <= 0) return load();
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && hit.expires > now) return hit.value;
    const value = await load();
    this.entries.delete(key);
    this.entries.set(key, { value, expires: now + ttlMs });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return value;
  }
}

/** How long anonymous offer lists are reused (`PUBLIC_CACHE_MS`, default 3000; 0 turns it off). */
export function publicCacheMs(): number {
  const v = Number(process.env.PUBLIC_CACHE_MS ?? 3000);
  return Number.isFinite(v) && v >= 0 ? v : 3000;
}
