import { afterEach, describe, expect, it } from 'vitest';
import { expectProblem, startHarness, type Harness } from '../../harness/harness.js';
import { createRateLimiter } from '../../../src/platform/rate-limit/index.js';
import { loadConfig, type TrustProxy } from '../../../src/platform/config.js';

// Issue 22.10 (D12): behind a proxy that appends the address it received the request from, the client is the
// first untrusted address from the right of X-Forwarded-For. A client that writes made-up addresses in front
// of the proxy's entry spends the same anonymous allowance (5 an hour); the forwarded host is the proxy's entry.
let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function harness(trustProxy: TrustProxy | boolean) {
  const rateLimiter = createRateLimiter({ log: { warn: () => {}, info: () => {} }, anonymous: { points: 5, durationSeconds: 3600 } });
  h = await startHarness({ trustProxy, rateLimiter });
  return { h, t: await h.tenant() };
}

/** Seven anonymous reads of one client, each with another address of its own making before the proxy's entry. */
async function statusesWithMadeUpAddresses(t: Awaited<ReturnType<typeof harness>>['t'], proxyEntry = '203.0.113.9') {
  const statuses: number[] = [];
  for (let i = 1; i <= 7; i++) {
    statuses.push((await t.get('/offers', { token: null, headers: { 'x-forwarded-for': `198.51.100.${i}, ${proxyEntry}` } })).status);
  }
  return statuses;
}

describe('TRUST_PROXY and X-Forwarded-For', () => {
  it.each([
    ['true (one hop)', true],
    ['a hop count, TRUST_PROXY=1', loadConfig({ TRUST_PROXY: '1' }).trustProxy],
    ['the proxy\'s address, TRUST_PROXY=127.0.0.1', loadConfig({ TRUST_PROXY: '127.0.0.1' }).trustProxy],
    ['a CIDR, TRUST_PROXY=127.0.0.0/8', loadConfig({ TRUST_PROXY: '127.0.0.0/8' }).trustProxy],
  ])('with %s a client cannot escape the anonymous limit by made-up addresses', async (_name, trust) => {
    const { t } = await harness(trust);
    const statuses = await statusesWithMadeUpAddresses(t);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
  });

  it('two hops: the address the outer proxy appended is the client, whatever the client wrote before it', async () => {
    const { t } = await harness(loadConfig({ TRUST_PROXY: '2' }).trustProxy);
    const statuses: number[] = [];
    for (let i = 1; i <= 6; i++) {
      statuses.push((await t.get('/offers', { token: null, headers: { 'x-forwarded-for': `198.51.100.${i}, 203.0.113.9, 10.0.0.2` } })).status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });

  it('a peer that is not a listed proxy: X-Forwarded-For and X-Forwarded-Host are not believed at all', async () => {
    const { h: harnessOf, t } = await harness(loadConfig({ TRUST_PROXY: '10.0.0.0/8' }).trustProxy);
    const statuses = await statusesWithMadeUpAddresses(t, '');
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    const res = await harnessOf.request('GET', '/api/offers', { host: 'proxy.internal', headers: { 'x-forwarded-host': t.host } });
    expectProblem(res, 404);
  });
});

describe('TRUST_PROXY and X-Forwarded-Host', () => {
  it('takes the entry the trusted proxy wrote, not one the client put in front of it', async () => {
    const { h: harnessOf, t } = await harness(true);
    const other = await harnessOf.tenant();
    const res = await harnessOf.request('GET', '/api/offers', { host: 'proxy.internal', headers: { 'x-forwarded-host': `${other.host}, ${t.host}` } });
    expect(res.status).toBe(200);
    // The same through the tenant's own answer: a record of `other` is not found on `t`'s host.
    const c = (await other.post('/categories', { name: 'Nur bei B' })).body;
    const viaProxy = await harnessOf.request('GET', `/api/categories/${c.uuid}`, { host: 'proxy.internal', token: other.adminToken, headers: { 'x-forwarded-host': `${other.host}, ${t.host}` } });
    expectProblem(viaProxy, 401);
  });
});
