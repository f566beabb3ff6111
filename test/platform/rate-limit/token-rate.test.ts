import { afterAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createRateLimiter, type RateLimiter } from '../../../src/platform/rate-limit/index.js';

// Issue 21: a token's own rate (`token issue --rate <n per minute>`, e.g. a website carrying an opening
// morning). The bucket keeps D3's refill window (300 at 100/min: 3 minutes), so a token of rate r holds 3r
// requests and gets one back every 60/r seconds; tokens without a rate keep D3's bucket. In memory and on Redis.

const REDIS_URL = 'redis://127.0.0.1:6379';
async function redisAnswers(): Promise<boolean> {
  const c = new Redis(REDIS_URL, { lazyConnect: true, enableOfflineQueue: false, connectTimeout: 500, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  c.on('error', () => {});
  try {
    await c.connect();
    return (await c.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    c.disconnect();
  }
}
const redisUp = await redisAnswers();
if (!redisUp) console.warn('\n*** token-rate Redis tests SKIPPED: no Redis answering at 127.0.0.1:6379 ***\n');

const quiet = { warn: () => {}, info: () => {} };
const limiters: RateLimiter[] = [];
afterAll(async () => {
  await Promise.all(limiters.map((l) => l.close()));
});

async function ready(redis: boolean): Promise<RateLimiter> {
  const rl = createRateLimiter({ log: quiet, ...(redis ? { redisUrl: REDIS_URL, keyPrefix: `rlrate-${randomBytes(6).toString('hex')}` } : {}) });
  limiters.push(rl);
  if (redis) {
    const deadline = Date.now() + 5000;
    while (rl.status().backend !== 'redis') {
      if (Date.now() > deadline) throw new Error('Redis limiter not ready');
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  return rl;
}

for (const backend of ['memory', 'redis'] as const) {
  describe.skipIf(backend === 'redis' && !redisUp)(`a token's own rate (${backend})`, () => {
    it('a rate of 1000 a minute holds 3000 requests, then refuses with the wait for one more', async () => {
      const rl = await ready(backend === 'redis');
      const first = await rl.consumeToken('t', 'website', 1000);
      expect(first).toMatchObject({ allowed: true, policy: 'token', limit: 3000, remaining: 2999 });
      expect(first.headers['RateLimit-Policy']).toBe('"token";q=3000;w=180');
      // The bucket refills while we spend it (one every 60 ms): spend until refused and allow for the time taken.
      const started = performance.now();
      let allowed = 1;
      let refused = await rl.consumeToken('t', 'website', 1000);
      while (refused.allowed && allowed < 10_000) {
        allowed++;
        refused = await rl.consumeToken('t', 'website', 1000);
      }
      const refilled = Math.ceil((performance.now() - started) / 60) + 1;
      expect(allowed).toBeGreaterThanOrEqual(3000);
      expect(allowed).toBeLessThanOrEqual(3000 + refilled);
      expect(refused.allowed).toBe(false);
      // One request every 60 ms: the next one within a second.
      expect(refused.retryAfterSeconds).toBe(1);
      expect(refused.headers['Retry-After']).toBe('1');
    }, 60_000);

    it('a slow rate: 2 a minute holds 6, the seventh waits about 30 s', async () => {
      const rl = await ready(backend === 'redis');
      const got = [];
      for (let i = 0; i < 7; i++) got.push(await rl.consumeToken('t', 'slow', 2));
      expect(got.map((d) => d.allowed)).toEqual([true, true, true, true, true, true, false]);
      expect(got.slice(0, 6).map((d) => d.remaining)).toEqual([5, 4, 3, 2, 1, 0]);
      expect(got[6]!.retryAfterSeconds).toBeGreaterThanOrEqual(29);
      expect(got[6]!.retryAfterSeconds).toBeLessThanOrEqual(30);
      expect(got[5]!.headers.RateLimit).toMatch(/^"token";r=0;t=(29|30)$/);
    });

    it('a token without a rate keeps D3\'s bucket, and the default rate is the same bucket', async () => {
      const rl = await ready(backend === 'redis');
      expect(await rl.consumeToken('t', 'admin')).toMatchObject({ limit: 300, remaining: 299 });
      expect(await rl.consumeToken('t', 'admin', null)).toMatchObject({ limit: 300, remaining: 298 });
      expect(await rl.consumeToken('t', 'admin', 100)).toMatchObject({ limit: 300, remaining: 297 });
      // Another token's rate counts on its own.
      expect(await rl.consumeToken('t', 'other', 50)).toMatchObject({ limit: 150, remaining: 149 });
    });
  });
}
