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

  it('loads a missing key once for all callers that miss while it loads, and not at all after a failed load is over', async () => {
    const cache = new TtlCache<number>();
    let loads = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const load = async () => {
      loads++;
      await gate;
      return loads;
    };
    const waiting = Array.from({ length: 10 }, () => cache.getOrLoad('page', 10_000, load));
    release();
    expect(await Promise.all(waiting)).toEqual(Array(10).fill(1));
    expect(loads).toBe(1);

    let fail = true;
    const flaky = async () => {
      if (fail) throw new Error('database down');
      return 7;
    };
    await expect(Promise.all([cache.getOrLoad('x', 10_000, flaky), cache.getOrLoad('x', 10_000, flaky)])).rejects.toThrow('database down');
    fail = false;
    expect(await cache.getOrLoad('x', 10_000, flaky)).toBe(7);
  });
});
