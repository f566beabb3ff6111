import { describe, expect, it } from 'vitest';
import { KeyedSemaphore, placesOf, ShareFull } from '../../../src/platform/db/bulkhead.js';
import { offerPoolShare, poolWaitMs, tenantPoolShare } from '../../../src/platform/db/pool-guard.js';

// Issue 23: the shares of the pool (bulkhead.ts): per key at most `limit` places, the rest waiting in order,
// refused after the wait; other keys unaffected.
describe('KeyedSemaphore', () => {
  it('gives each key its own places; a full key waits in arrival order while other keys go on', async () => {
    const s = new KeyedSemaphore('tenant', 2, 1_000);
    const a1 = await s.acquire('a');
    const a2 = await s.acquire('a');
    expect(s.tryAcquire('a')).toBeNull();
    const order: number[] = [];
    const w3 = s.acquire('a').then((r) => { order.push(3); return r; });
    const w4 = s.acquire('a').then((r) => { order.push(4); return r; });
    // Another key is not held up.
    const b1 = s.tryAcquire('b');
    expect(b1).not.toBeNull();
    expect(s.stats()).toEqual(expect.arrayContaining([{ key: 'a', held: 2, waiting: 2 }, { key: 'b', held: 1, waiting: 0 }]));
    a1();
    a1(); // a second release of the same place does nothing
    const r3 = await w3;
    expect(order).toEqual([3]);
    a2();
    const r4 = await w4;
    expect(order).toEqual([3, 4]);
    r3();
    r4();
    b1!();
    expect(s.stats()).toEqual([]);
  });

  it('refuses after the wait with ShareFull naming the key, and tells when a key first has to wait', async () => {
    const full: string[] = [];
    const s = new KeyedSemaphore('offer', 1, 50, (key) => full.push(key));
    const held = await s.acquire('t_x:o1');
    const started = Date.now();
    const err = await s.acquire('t_x:o1').catch((e) => e);
    expect(err).toBeInstanceOf(ShareFull);
    expect(err).toMatchObject({ scope: 'offer', key: 't_x:o1' });
    expect(err.waitedMs).toBeGreaterThanOrEqual(45);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(full).toEqual(['t_x:o1']);
    // The refused waiter left the queue: the next release frees the key.
    held();
    expect(s.stats()).toEqual([]);
    expect(s.tryAcquire('t_x:o1')).not.toBeNull();
  });

  it('computes places from shares and reads the settings', () => {
    expect(placesOf(0.5, 10)).toBe(5);
    expect(placesOf(0.3, 10)).toBe(3);
    expect(placesOf(0.3, 8)).toBe(2);
    expect(placesOf(0.1, 4)).toBe(1);
    expect(placesOf(1, 10)).toBe(10);
    expect(tenantPoolShare({ PG_TENANT_POOL_SHARE: '0.25' })).toBe(0.25);
    // A wrong value is refused with one sentence naming the setting (the one settings schema, config.ts).
    for (const bad of ['0', '-1', '1.5', 'x']) expect(() => tenantPoolShare({ PG_TENANT_POOL_SHARE: bad })).toThrow(/^PG_TENANT_POOL_SHARE must be a fraction/);
    expect(tenantPoolShare({ PG_TENANT_POOL_SHARE: '' })).toBe(0.6);
    expect(() => poolWaitMs({ PG_POOL_WAIT_MS: '0' })).toThrow(/^PG_POOL_WAIT_MS must be a whole number from 1/);
    expect(tenantPoolShare({})).toBe(0.6);
    expect(offerPoolShare({})).toBe(0.2);
    expect(placesOf(0.6, 8)).toBe(4);
    expect(placesOf(0.2, 8)).toBe(1);
    expect(tenantPoolShare({ PG_TENANT_POOL_SHARE: '0.7' })).toBe(0.7);
    expect(poolWaitMs({})).toBe(5_000);
    expect(poolWaitMs({ PG_POOL_WAIT_MS: '1500' })).toBe(1_500);
  });
});
