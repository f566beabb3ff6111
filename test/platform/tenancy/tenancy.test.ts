import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { expectProblem, startHarness, useHarness, type TestResponse, at } from '../../harness/harness.js';
import { procedure, router } from '../../../src/platform/http/trpc.js';
import { addTenant, removeTenant, setTenant } from '../../../src/platform/tenancy/operations.js';
import { TenantRegistry } from '../../../src/platform/tenancy/registry.js';
import { categoriesRouter } from '../../../src/resources/categories/router.js';

// D1: host resolution, base paths, isolation between tenants, and registry changes reaching a running
// process. A TEST-ONLY public procedure tells which tenant answered.
const testRouter = router({
  categories: categoriesRouter,
  whoami: procedure
    .meta({ access: 'public', openapi: { method: 'GET', path: '/whoami', tags: ['probe'] } })
    .input(z.object({}))
    .output(z.object({ tenant: z.string() }))
    .query(({ ctx }) => ({ tenant: ctx.tenant.slug })),
});

const { h, t } = useHarness({ router: testRouter });

describe('host resolution', () => {
  it('answers an unknown host with a 404 problem', async () => {
    const res = await h.request('GET', '/api/categories', { host: 'nobody.example' });
    const p = expectProblem(res, 404);
    expect(p.detail).toMatch(/host/);
    expectProblem(await h.request('GET', '/api/openapi.json', { host: 'nobody.example' }), 404);
    // An unknown host is 404 whatever the token.
    expectProblem(await h.request('GET', '/api/categories', { host: 'nobody.example', token: t.adminToken }), 404);
  });

  it('answers a path outside the base path with 404', async () => {
    for (const path of ['/foo', '/', '/categories', '/apifoo/categories', '/API/categories', '/foo/api/categories']) {
      const res = await h.request('GET', path, { host: t.host, token: t.adminToken });
      expectProblem(res, 404);
    }
    expect((await t.get('/categories')).status).toBe(200);
    expect((await h.request('GET', '/api/categories?page=1', { host: t.host, token: t.adminToken })).status).toBe(200);
  });

  it('serves a tenant whose host has base path / at the root', async () => {
    const root = await h.tenant({ basePath: '/' });
    const res = await h.request('GET', '/categories', { host: root.host, token: root.adminToken });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
    expect((await h.request('GET', '/whoami', { host: root.host })).body).toEqual({ tenant: root.slug });
    expectProblem(await h.request('GET', '/api/categories', { host: root.host, token: root.adminToken }), 404);
    const doc = await h.request('GET', '/openapi.json', { host: root.host });
    // Issue 24: the scheme and port the request came in on (plain http here, no port in the Host header).
    expect(at(doc.body, 'servers', 0, 'url')).toBe(`http://${root.host}`);
  });

  it('resolves a Host header with a port and in upper case', async () => {
    for (const host of [`${t.host}:8443`, t.host.toUpperCase(), `${t.host.toUpperCase()}:80`]) {
      const res = await h.request('GET', '/api/whoami', { host });
      expect(res.status, host).toBe(200);
      expect(res.body).toEqual({ tenant: t.slug });
    }
  });

  it('ignores X-Forwarded-Host without TRUST_PROXY', async () => {
    const other = await h.tenant();
    const viaUnknown = await h.request('GET', '/api/whoami', { host: 'proxy.internal', headers: { 'x-forwarded-host': t.host } });
    expectProblem(viaUnknown, 404);
    const res = await h.request('GET', '/api/whoami', { host: t.host, headers: { 'x-forwarded-host': other.host } });
    expect(res.body).toEqual({ tenant: t.slug });
  });

  it('follows X-Forwarded-Host with TRUST_PROXY', async () => {
    const proxied = await startHarness({ router: testRouter, trustProxy: true });
    try {
      const u = await proxied.tenant();
      const res = await proxied.request('GET', '/api/whoami', { host: 'proxy.internal', headers: { 'x-forwarded-host': u.host } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ tenant: u.slug });
      const upper = await proxied.request('GET', '/api/whoami', { host: 'proxy.internal', headers: { 'x-forwarded-host': `${u.host.toUpperCase()}:443` } });
      expect(upper.body).toEqual({ tenant: u.slug });
      // A list: the entry our proxy (one hop) wrote is the last one; what the client put before it is not believed.
      const list = await proxied.request('GET', '/api/whoami', { host: 'proxy.internal', headers: { 'x-forwarded-host': `proxy.internal, ${u.host}` } });
      expect(list.body).toEqual({ tenant: u.slug });
      // Without the header the Host header decides.
      expect((await proxied.request('GET', '/api/whoami', { host: u.host })).body).toEqual({ tenant: u.slug });
      expectProblem(await proxied.request('GET', '/api/whoami', { host: 'proxy.internal' }), 404);
    } finally {
      await proxied.close();
    }
  });
});

describe('isolation between tenants', () => {
  it("never shows one tenant's record on another tenant's host", async () => {
    const a = await h.tenant();
    const b = await h.tenant();
    const c = (await a.post('/categories', { name: 'Nur bei A' })).body;
    expect((await a.get(`/categories/${c.uuid}`)).status).toBe(200);
    expectProblem(await b.get(`/categories/${c.uuid}`), 404);
    expect((await b.get('/categories')).body).toEqual([]);
    expectProblem(await b.del(`/categories/${c.uuid}`), 404);
    expect((await a.get(`/categories/${c.uuid}`)).status).toBe(200);
  });
});

describe('registry changes reach a running process', () => {
  // An independently created registry with the default refresh, as in a second API process.
  const { h: live } = useHarness({ router: testRouter, registry: (db) => new TenantRegistry(db), tenant: false });

  async function pollUntil(req: () => Promise<TestResponse>, done: (r: TestResponse) => boolean, limitMs = 5000): Promise<{ res: TestResponse; ms: number }> {
    const start = Date.now();
    for (;;) {
      const res = await req();
      const ms = Date.now() - start;
      if (done(res)) return { res, ms };
      if (ms > limitMs) throw new Error(`not reached within ${limitMs} ms; last answer ${res.status} ${res.text.slice(0, 200)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('serves a tenant added by another process, and a changed setting, within 5 seconds', async () => {
    const slug = `reg${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const host = `${slug}.test`;
    const whoami = () => live.request('GET', '/api/whoami', { host });

    // Warm the registry's snapshot while the host is still unknown.
    expectProblem(await whoami(), 404);

    await addTenant(live.orm, { slug, hosts: [{ host, basePath: '/api' }] });
    const added = await pollUntil(whoami, (r) => r.status !== 404);
    expect(added.res.status).toBe(200);
    expect(added.res.body).toEqual({ tenant: slug });
    expect(added.ms).toBeLessThanOrEqual(5000);

    await setTenant(live.orm, slug, { publicAccess: false });
    const changed = await pollUntil(whoami, (r) => r.status !== 200);
    expectProblem(changed.res, 401);
    expect(changed.ms).toBeLessThanOrEqual(5000);

    await removeTenant(live.orm, slug);
    const removed = await pollUntil(whoami, (r) => r.status === 404);
    expectProblem(removed.res, 404);
    expect(removed.ms).toBeLessThanOrEqual(5000);
  });
});

describe('registry writes', () => {
  it('keeps a tenant\'s name when re-added without one, and replaces hosts only when syncing files', async () => {
    const slug = `reg${Date.now().toString(36)}`;
    await addTenant(h.orm, { slug, name: 'Stadt Eins', hosts: [{ host: `${slug}.a.test`, basePath: '/api' }, { host: `${slug}.b.test`, basePath: '/' }] });
    const again = await addTenant(h.orm, { slug, hosts: [{ host: `${slug}.a.test`, basePath: '/api' }] });
    expect(again.name).toBe('Stadt Eins');
    expect(again.hosts.map((x) => x.host).sort()).toEqual([`${slug}.a.test`, `${slug}.b.test`]);
    const synced = await addTenant(h.orm, { slug, hosts: [{ host: `${slug}.a.test`, basePath: '/api' }], replaceHosts: true });
    expect(synced.hosts).toEqual([{ host: `${slug}.a.test`, basePath: '/api' }]);
    await removeTenant(h.orm, slug);
  });

  it('refuses a host that belongs to another tenant', async () => {
    await expect(addTenant(h.orm, { slug: `oth${Date.now().toString(36)}`, hosts: [{ host: t.host, basePath: '/api' }] })).rejects.toThrow(/already belongs/);
  });
});
