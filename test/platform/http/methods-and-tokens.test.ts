import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, startHarness, type Harness, type TestTenant } from '../../harness/harness.js';
import { createRateLimiter } from '../../../src/platform/rate-limit/index.js';

// Issue 22.6: a missing token where one is needed is 401 (D3), also after the address spent its anonymous
// allowance (not the anonymous 429); a method a path does not have is 405 with Allow, not 404.
let h: Harness;
let t: TestTenant;
beforeAll(async () => {
  h = await startHarness({ rateLimiter: createRateLimiter({ log: { warn: () => {}, info: () => {} }, anonymous: { points: 2, durationSeconds: 3600 } }) });
  t = await h.tenant();
});
afterAll(() => h.close());

describe('a missing token', () => {
  it('is 401 with WWW-Authenticate after the anonymous allowance is spent, never 429', async () => {
    expect((await t.get('/offers', { token: null })).status).toBe(200);
    expect((await t.get('/offers', { token: null })).status).toBe(200);
    expect((await t.get('/offers', { token: null })).status).toBe(429);
    for (const [method, path] of [['GET', '/attendances'], ['GET', '/editions'], ['POST', '/categories'], ['GET', '/accounts']]) {
      const res = await t.request(method, path, { token: null, body: method === 'POST' ? { name: 'x' } : undefined });
      const p = expectProblem(res, 401);
      expect(res.headers['www-authenticate'], path).toBe('Bearer');
      expect(p.detail).toMatch(/needs an access token/);
      expect(res.headers['ratelimit-policy']).toBe('"failed-auth";q=300;w=3600');
    }
    // A token still works, and the public list stays limited for the anonymous caller.
    expect((await t.get('/attendances')).status).toBe(200);
    expectProblem(await t.get('/offers', { token: null }), 429);
  });

  it('with public access switched off, an anonymous read of offers is 401 too', async () => {
    const closed = await h.tenant({ settings: { publicAccess: false } });
    for (let i = 0; i < 4; i++) expectProblem(await closed.get('/offers', { token: null }), 401);
  });
});

describe('a method the path does not have', () => {
  it('is 405 with Allow on collections and records; a path nobody has stays 404', async () => {
    const cases: [string, string, string][] = [
      ['PUT', '/offers', 'GET, POST'],
      ['DELETE', '/offers', 'GET, POST'],
      ['PUT', '/offers/4c1f5a2e-9b7d-4e3a-8f21-6d0c9e8b7a65', 'GET, PATCH, DELETE'],
      ['PUT', '/attendances', 'GET, POST'],
      ['PUT', '/bookings', 'GET'],
      ['POST', '/bookings', 'GET'],
      ['GET', '/offers/4c1f5a2e-9b7d-4e3a-8f21-6d0c9e8b7a65/transition', 'POST'],
    ];
    for (const [method, path, allow] of cases) {
      const res = await t.request(method, path, { body: method === 'GET' || method === 'DELETE' ? undefined : {} });
      const p = expectProblem(res, 405);
      expect(res.headers.allow, `${method} ${path}`).toBe(allow);
      expect(p.detail).toContain(allow);
    }
    expectProblem(await t.request('PUT', '/no-such-collection', { body: {} }), 404);
    // The explicit 405 of a booking keeps its own answer (404 for an unknown one).
    expectProblem(await t.request('PATCH', '/bookings/4c1f5a2e-9b7d-4e3a-8f21-6d0c9e8b7a65', { body: {} }), 404);
  });
});
