import { describe, it, expect } from 'vitest';
import { createRateLimiter, MemoryTokenBucket, stepBucket, type BucketTake } from '../../../src/platform/rate-limit/index.js';

// Pure arithmetic and the in-memory bucket, with a fake clock: exactness without waiting.

const policy = { capacity: 300, refillPerMinute: 100 };

function consume(bucket: MemoryTokenBucket, key = 'k'): BucketTake {
  return bucket.take(key);
}

describe('token bucket arithmetic (GCRA)', () => {
  it('a full bucket gives capacity tokens, then one every 600 ms', () => {
    let fullAt: number | undefined;
    for (let i = 0; i < 300; i++) {
      const s = stepBucket(policy, fullAt, 0);
      expect(s.allowed).toBe(true);
      if (s.allowed) {
        expect(s.remaining).toBe(299 - i);
        expect(s.msToFull).toBe((i + 1) * 600);
        fullAt = s.fullAt;
      }
    }
    const refused = stepBucket(policy, fullAt, 0);
    expect(refused).toEqual({ allowed: false, msToAvailable: 600 });
    expect(stepBucket(policy, fullAt, 599).allowed).toBe(false);
    expect(stepBucket(policy, fullAt, 600).allowed).toBe(true);
  });

  it('refills exactly 100 per minute and never above capacity', () => {
    let now = 0;
    const bucket = new MemoryTokenBucket(policy, () => now);
    for (let i = 0; i < 300; i++) expect(consume(bucket).allowed).toBe(true);
    expect(consume(bucket).allowed).toBe(false);

    now += 60_000;
    let allowed = 0;
    while (consume(bucket).allowed) allowed++;
    expect(allowed).toBe(100);

    now += 10 * 60_000; // long idle: full again, not more
    allowed = 0;
    while (consume(bucket).allowed) allowed++;
    expect(allowed).toBe(300);
  });

  it('a refused request does not consume (hammering does not delay recovery)', () => {
    let now = 0;
    const bucket = new MemoryTokenBucket({ capacity: 2, refillPerMinute: 60 }, () => now);
    consume(bucket);
    consume(bucket);
    for (let i = 0; i < 50; i++) {
      const r = consume(bucket);
      expect(r.allowed).toBe(false);
    }
    now += 1000;
    const r = consume(bucket);
    expect(r.allowed).toBe(true);
    expect(r).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('keys are independent', () => {
    const bucket = new MemoryTokenBucket({ capacity: 1, refillPerMinute: 1 }, () => 0);
    expect(consume(bucket, 'a').allowed).toBe(true);
    expect(consume(bucket, 'a').allowed).toBe(false);
    expect(consume(bucket, 'b').allowed).toBe(true);
  });
});

describe('rate limiter without Redis (REDIS_URL unset)', () => {
  it('runs in memory from the start, not degraded, with the D10 headers', async () => {
    const lines: string[] = [];
    const log = { warn: (m: string) => lines.push(`warn ${m}`), info: (m: string) => lines.push(`info ${m}`) };
    const rl = createRateLimiter({ log });
    expect(rl.status()).toEqual({ backend: 'memory', degraded: false });

    const first = await rl.consumeToken('t1', 'tok');
    expect(first).toMatchObject({ allowed: true, policy: 'token', limit: 300, remaining: 299, resetSeconds: 1 });
    expect(first.headers).toEqual({ 'RateLimit-Policy': '"token";q=300;w=180', RateLimit: '"token";r=299;t=1' });

    for (let i = 0; i < 4; i++) await rl.consumeAnonymous('t1', '10.0.0.1');
    const fifth = await rl.consumeAnonymous('t1', '10.0.0.1');
    expect(fifth.headers).toEqual({ 'RateLimit-Policy': '"anonymous";q=5;w=3600', RateLimit: '"anonymous";r=0;t=3600' });
    const sixth = await rl.consumeAnonymous('t1', '10.0.0.1');
    expect(sixth.allowed).toBe(false);
    expect(sixth.headers['Retry-After']).toBe('3600');

    expect(lines).toEqual(['info rate limiter: REDIS_URL not set, counting in memory per process']);
    await rl.close();
  });

  it('derives the policy numbers from the options', async () => {
    const log = { warn() {}, info() {} };
    const rl = createRateLimiter({ log, tokenBucket: { capacity: 60, refillPerMinute: 30 }, anonymous: { points: 7, durationSeconds: 600 } });
    expect((await rl.consumeToken('t', 'x')).headers['RateLimit-Policy']).toBe('"token";q=60;w=120');
    expect((await rl.consumeAnonymous('t', '::1')).headers['RateLimit-Policy']).toBe('"anonymous";q=7;w=600');
    await rl.close();
  });
});
