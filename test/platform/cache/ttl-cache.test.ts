import { describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { TtlCache } from '../../../src/platform/cache/ttl-cache.js';

// Values are objects (lru-cache keeps objects, like the offer pages it holds): a box around a number.
type Box = { n: number };
const box = (n: number): Box => ({ n });
const get = async (cache: TtlCache<Box>, key: string, ttlMs: number, load: () => Promise<Box>) => (await cache.getOrLoad(key, ttlMs, load)).n;

describe('TtlCache', () => {
  it('reuses a value within its time to live and loads again after (the old value served while it reloads)', async () => {
    const cache = new TtlCache<Box>();
    let loads = 0;
    const load = async () => box(++loads);
    expect(await get(cache, 'a', 50, load)).toBe(1);
    expect(await get(cache, 'a', 50, load)).toBe(1);
    expect(await get(cache, 'b', 50, load)).toBe(2);
    await sleep(70);
    expect(await get(cache, 'a', 50, load)).toBe(1); // stale: served at once, one reload started
    await sleep(0);
    expect(loads).toBe(3);
    expect(await get(cache, 'a', 50, load)).toBe(3);
  });

  it('serves the old page to every caller while ONE of them reloads it', async () => {
    const cache = new TtlCache<Box>();
    let loads = 0;
    let release!: () => void;
    let gate: Promise<void> = Promise.resolve();
    const load = async () => {
      loads++;
      await gate;
      return box(loads);
    };
    expect(await get(cache, 'page', 30, load)).toBe(1);
    await sleep(50);
    gate = new Promise<void>((r) => (release = r));
    const during = await Promise.all(Array.from({ length: 10 }, () => get(cache, 'page', 30, load)));
    expect(during).toEqual(Array(10).fill(1));
    expect(loads).toBe(2);
    release();
    await sleep(0);
    expect(await get(cache, 'page', 30, load)).toBe(2);
    expect(loads).toBe(2);
  });

  it('does not serve a value expired for longer than the stale limit', async () => {
    const cache = new TtlCache<Box>(500, 20);
    let loads = 0;
    const load = async () => box(++loads);
    expect(await get(cache, 'a', 10, load)).toBe(1);
    await sleep(60);
    expect(await get(cache, 'a', 10, load)).toBe(2);
  });

  it('never caches with a time to live of 0, and stays bounded', async () => {
    const cache = new TtlCache<Box>(3);
    let loads = 0;
    const load = async () => box(++loads);
    await cache.getOrLoad('a', 0, load);
    await cache.getOrLoad('a', 0, load);
    expect(loads).toBe(2);
    for (const k of ['k1', 'k2', 'k3', 'k4']) await cache.getOrLoad(k, 10_000, load);
    const before = loads;
    await cache.getOrLoad('k1', 10_000, load); // evicted as the least recently used
    await cache.getOrLoad('k4', 10_000, load); // still there
    expect(loads).toBe(before + 1);
  });

  it('loads a missing key once for all callers that miss while it loads, and not at all after a failed load is over', async () => {
    const cache = new TtlCache<Box>();
    let loads = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const load = async () => {
      loads++;
      await gate;
      return box(loads);
    };
    const waiting = Array.from({ length: 10 }, () => get(cache, 'page', 10_000, load));
    release();
    expect(await Promise.all(waiting)).toEqual(Array(10).fill(1));
    expect(loads).toBe(1);

    let fail = true;
    const flaky = async () => {
      if (fail) throw new Error('database down');
      return box(7);
    };
    await expect(Promise.all([get(cache, 'x', 10_000, flaky), get(cache, 'x', 10_000, flaky)])).rejects.toThrow('database down');
    fail = false;
    expect(await get(cache, 'x', 10_000, flaky)).toBe(7);
  });
});
