import { describe, expect, it } from 'vitest';
import { TtlCache } from '../../../src/platform/cache/ttl-cache.js';

describe('TtlCache', () => {
  it('reuses a value within its time to live and loads again after', async () => {
    const cache = new TtlCache<number>();
    let loads = 0;
    const load = async () => ++loads;
    expect(await cache.getOrLoad('a', 50, load)).toBe(1);
    expect(await cache.getOrLoad('a', 50, load)).toBe(1);
    expect(await cache.getOrLoad('b', 50, load)).toBe(2);
    await new Promise((r) => setTimeout(r, 70));
    expect(await cache.getOrLoad('a', 50, load)).toBe(3);
  });

  it('never caches with a time to live of 0, and stays bounded', async () => {
    const cache = new TtlCache<number>(3);
    let loads = 0;
    const load = async () => ++loads;
    await cache.getOrLoad('a', 0, load);
    await cache.getOrLoad('a', 0, load);
    expect(loads).toBe(2);
    for (const k of ['k1', 'k2', 'k3', 'k4']) await cache.getOrLoad(k, 10_000, load);
    const before = loads;
    await cache.getOrLoad('k1', 10_000, load); // evicted as the oldest
    await cache.getOrLoad('k4', 10_000, load); // still there
    expect(loads).toBe(before + 1);
  });
});
