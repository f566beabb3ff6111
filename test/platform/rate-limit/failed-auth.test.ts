import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { expectProblem, useHarness } from '../../harness/harness.js';
import { createRateLimiter, type RateLimiter } from '../../../src/platform/rate-limit/index.js';
import { revokeToken, splitToken } from '../../../src/platform/auth/tokens.js';
import { executorOf } from '../../../src/platform/db/orm.js';

// Issue 13 item 2, through the real express stack and the real Redis: an unknown, revoked, expired or
// foreign token is 401 whatever the address's anonymous allowance (it still counts against it, D10), and
// only a separate allowance of failed authentications per address answers 429.
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
if (!redisUp) console.warn('\n*** failed-authentication Redis tests SKIPPED: no Redis at 127.0.0.1:6379 ***\n');

describe.skipIf(!redisUp)('invalid tokens and the rate limits (Redis)', () => {
  let limiter: RateLimiter;
  const keyPrefix = `rltest-${randomBytes(6).toString('hex')}`;

  beforeAll(async () => {
    limiter = createRateLimiter({
      redisUrl: REDIS_URL,
      keyPrefix,
      log: { warn: () => {}, info: () => {} },
      tokenBucket: { capacity: 1000, refillPerMinute: 1000 },
      anonymous: { points: 2, durationSeconds: 3600 },
      failedAuth: { points: 10, durationSeconds: 3600 },
    });
    for (let i = 0; i < 100 && limiter.status().backend !== 'redis'; i++) await sleep(20);
    expect(limiter.status()).toEqual({ backend: 'redis', degraded: false });
  });
  afterAll(async () => {
    await limiter?.close();
    const c = new Redis(REDIS_URL);
    const keys = await c.keys(`${keyPrefix}:*`);
    if (keys.length) await c.del(...keys);
    await c.quit();
  });
  const { h } = useHarness(() => ({ rateLimiter: limiter, tenant: false }));

  it('answers 401 to unknown, revoked, expired and foreign tokens after the anonymous allowance is spent', async () => {
    const t = await h.tenant();
    const other = await h.tenant();
    // Spend the address's anonymous allowance (2).
    expect((await t.get('/offers', { token: null })).status).toBe(200);
    expect((await t.get('/offers', { token: null })).status).toBe(200);
    expectProblem(await t.get('/offers', { token: null }), 429);

    const revoked = await t.token();
    expect(await revokeToken(executorOf(h.orm), t.tenant.schema, splitToken(revoked)!.uuid)).toBe(true);
    const expired = await t.token({ expiresAt: new Date(Date.now() - 60_000) });
    const bad = { unknown: 'hpt_garbage', revoked, expired, foreign: other.adminToken };
    for (const [kind, token] of Object.entries(bad)) {
      for (const path of ['/offers', '/categories']) {
        const res = await t.get(path, { token });
        const p = expectProblem(res, 401);
        expect(p.type, kind).toBe('/errors/401');
        expect(res.headers['www-authenticate'], kind).toMatch(/^Bearer/);
        expect(res.headers['retry-after'], kind).toBeUndefined();
        expect(res.headers['ratelimit-policy']).toBe('"failed-auth";q=10;w=3600');
      }
    }
    // A valid token on the same address is served from its own bucket.
    expect((await t.get('/categories')).status).toBe(200);
  });

  it('counts invalid tokens against the anonymous allowance, and refuses them with 429 only past the failed-authentication allowance', async () => {
    const t = await h.tenant();
    const first = await t.get('/categories', { token: 'hpt_garbage' });
    expectProblem(first, 401);
    expect(first.headers.ratelimit).toMatch(/^"failed-auth";r=9;t=\d+$/);
    expectProblem(await t.get('/categories', { token: 'hpt_garbage' }), 401);
    // Two invalid tokens spent the anonymous allowance (D10: they count against it).
    expectProblem(await t.get('/offers', { token: null }), 429);
    for (let i = 0; i < 8; i++) expectProblem(await t.get('/offers', { token: 'hpt_other_garbage' }), 401);
    const refused = await t.get('/categories', { token: 'hpt_garbage' });
    const p = expectProblem(refused, 429);
    expect(p.type).toBe('/errors/429');
    expect(p.detail).toMatch(/invalid access token/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3000);
    expect(refused.headers['ratelimit-policy']).toBe('"failed-auth";q=10;w=3600');
    // Counted per tenant: the same address on another tenant still gets its 401.
    const u = await h.tenant();
    expectProblem(await u.get('/categories', { token: 'hpt_garbage' }), 401);
    // The key lives in Redis with the window's lifetime.
    const c = new Redis(REDIS_URL);
    const ttl = await c.ttl(`${keyPrefix}:authfail:${t.slug}:127.0.0.1`);
    await c.quit();
    expect(ttl).toBeGreaterThan(3590);
  });
});
