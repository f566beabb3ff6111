import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { expectProblem, useHarness, type TestResponse } from '../../harness/harness.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import { procedure, router } from '../../../src/platform/http/trpc.js';
import { listTokens, revokeToken, splitToken, TOKEN_PREFIX } from '../../../src/platform/auth/tokens.js';
import { categoriesRouter } from '../../../src/resources/categories/router.js';

// Spec 5 and D3: bearer tokens, valid only on their own tenant; 401 with `WWW-Authenticate: Bearer` for a
// missing (where needed), unknown, expired, revoked or foreign token, also on public endpoints; 403 for a
// valid token lacking the right. A TEST-ONLY public procedure stands in for the public offer reads.
const testRouter = router({
  categories: categoriesRouter,
  public: procedure
    .meta({ access: 'public', openapi: { method: 'GET', path: '/public', tags: ['probe'] } })
    .input(z.object({}))
    .output(z.object({ token: z.string().optional() }))
    .query(({ ctx }) => ({ token: 'actor' in ctx.viewer ? ctx.viewer.actor.access : undefined })),
});

const { h, t } = useHarness({ router: testRouter });

function expectUnauthorized(res: TestResponse) {
  const p = expectProblem(res, 401);
  expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
  return p;
}

/** Flips the last character of the token's secret: right id, wrong secret. */
function tampered(token: string): string {
  const last = token.at(-1) === 'a' ? 'b' : 'a';
  return token.slice(0, -1) + last;
}

describe('missing and invalid tokens', () => {
  it('answers a request without a token where one is needed with 401 and the Bearer challenge', async () => {
    expectUnauthorized(await t.get('/categories', { token: null }));
    expectUnauthorized(await t.post('/categories', { name: 'x' }, { token: null }));
  });

  it('answers a garbage token with 401', async () => {
    for (const token of ['garbage', `${TOKEN_PREFIX}garbage`, `${TOKEN_PREFIX}${'1'.repeat(22)}${'a'.repeat(44)}`, tampered(t.adminToken)]) {
      expectUnauthorized(await t.get('/categories', { token }));
    }
  });

  it('answers an unknown token with 401 also on a public endpoint', async () => {
    expect((await t.get('/public', { token: null })).status).toBe(200);
    expectUnauthorized(await t.get('/public', { token: 'garbage' }));
    expectUnauthorized(await t.get('/public', { token: tampered(t.adminToken) }));
  });

  it("answers another tenant's valid token with 401", async () => {
    const other = await h.tenant();
    expect((await other.get('/categories')).status).toBe(200);
    expectUnauthorized(await t.get('/categories', { token: other.adminToken }));
    expectUnauthorized(await t.get('/public', { token: other.adminToken }));
  });

  it('answers an expired token with 401, and accepts one expiring later', async () => {
    const expired = await t.token({ expiresAt: new Date(Date.now() - 60_000) });
    expectUnauthorized(await t.get('/categories', { token: expired }));
    expectUnauthorized(await t.get('/public', { token: expired }));
    const later = await t.token({ expiresAt: new Date(Date.now() + 3_600_000) });
    expect((await t.get('/categories', { token: later })).status).toBe(200);
  });

  it('answers a token expiring within the second it is used with 401 once it has passed', async () => {
    const soon = await t.token({ expiresAt: new Date(Date.now() + 1500) });
    expect((await t.get('/categories', { token: soon })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1600));
    expectUnauthorized(await t.get('/categories', { token: soon }));
  });

  it('answers a revoked token with 401', async () => {
    const token = await t.token();
    expect((await t.get('/categories', { token })).status).toBe(200);
    const { uuid } = splitToken(token)!;
    expect(await revokeToken(executorOf(h.orm), t.tenant.schema, uuid)).toBe(true);
    expectUnauthorized(await t.get('/categories', { token }));
    expectUnauthorized(await t.get('/public', { token }));
  });

  it('answers Authorization: Basic with 401', async () => {
    const basic = `Basic ${Buffer.from('admin:secret').toString('base64')}`;
    expectUnauthorized(await t.get('/categories', { token: null, headers: { authorization: basic } }));
    expectUnauthorized(await t.get('/public', { token: null, headers: { authorization: basic } }));
    expectUnauthorized(await t.get('/categories', { token: null, headers: { authorization: 'Bearer' } }));
    expectUnauthorized(await t.get('/categories', { token: null, headers: { authorization: `Bearer ${t.adminToken} extra` } }));
  });

  it('accepts the scheme name in any case', async () => {
    expect((await t.get('/categories', { token: null, headers: { authorization: `bearer ${t.adminToken}` } })).status).toBe(200);
  });
});

describe('rights of valid tokens', () => {
  it('answers a read token writing with 403', async () => {
    const read = await t.token({ access: 'read' });
    expect((await t.get('/categories', { token: read })).status).toBe(200);
    const p = expectProblem(await t.post('/categories', { name: 'Lesen' }, { token: read }), 403);
    expect(p.detail).toMatch(/read-only/);
    expect((await t.get('/categories', { token: read })).headers['www-authenticate']).toBeUndefined();
  });

  it('answers a legacy token on /categories with 403, and lets it read public endpoints', async () => {
    const legacy = await t.token({ access: 'legacy' });
    const p = expectProblem(await t.get('/categories', { token: legacy }), 403);
    expect(p.detail).toMatch(/api:offer:read/);
    const pub = await t.get('/public', { token: legacy });
    expect(pub.status).toBe(200);
    expect(pub.body).toEqual({ token: 'legacy' });
    expect(pub.headers['cache-control']).toBe('private, no-store');
  });

  it('lets the legacy token read public endpoints while public access is off, but not anonymous callers', async () => {
    const closed = await h.tenant({ settings: { publicAccess: false } });
    expectUnauthorized(await closed.get('/public', { token: null }));
    const legacy = await closed.token({ access: 'legacy' });
    expect((await closed.get('/public', { token: legacy })).status).toBe(200);
  });
});

describe('token storage', () => {
  it('stores tokens only hashed: no column holds the token or its secret', async () => {
    const token = await t.token({ name: 'Hash check' });
    const { uuid, secret } = splitToken(token)!;
    expect(token.startsWith(TOKEN_PREFIX)).toBe(true);
    const rows = await sql<Record<string, unknown>>`select * from ${qualified(t.tenant.schema, 'api_tokens')} where uuid = ${uuid}`.execute(executorOf(h.orm));
    expect(rows.rows).toHaveLength(1);
    const row = rows.rows[0];
    const secretBytes = Buffer.from(secret);
    for (const [column, value] of Object.entries(row)) {
      const forms: string[] = [];
      if (Buffer.isBuffer(value)) {
        expect(value.includes(secretBytes), column).toBe(false);
        forms.push(value.toString('hex'), value.toString('base64'), value.toString('utf8'), value.toString('latin1'));
      } else {
        forms.push(value instanceof Date ? value.toISOString() : typeof value === 'string' ? value : JSON.stringify(value) ?? '');
      }
      for (const f of forms) {
        expect(f.includes(secret), column).toBe(false);
        expect(f.includes(token), column).toBe(false);
      }
    }
    const listed = await listTokens(executorOf(h.orm), t.tenant.schema);
    expect(JSON.stringify(listed)).not.toContain(secret);
  });
});

describe('token owners', () => {
  it('links a person\'s tokens to one user of the tenant, and leaves service accounts alone', async () => {
    const { executorOf } = await import('../../../src/platform/db/orm.js');
    const { insertToken } = await import('../../../src/platform/auth/tokens.js');
    const { qualified, sql } = await import('../../../src/platform/db/sql.js');
    const u = await h.tenant();
    const db = executorOf(h.orm);
    const o1 = '11111111-1111-4111-8111-111111111111';
    const o2 = '22222222-2222-4222-8222-222222222222';
    await insertToken(db, u.tenant.schema, { name: 'Erika Muster', role: 'organiser', access: 'read', ownerKind: 'person', organiserIds: [o1], expiresAt: null });
    await insertToken(db, u.tenant.schema, { name: 'Erika Muster', role: 'organiser', access: 'read-write', ownerKind: 'person', organiserIds: [o2], expiresAt: null });
    await insertToken(db, u.tenant.schema, { name: 'Website', role: 'admin', access: 'read', ownerKind: 'service', organiserIds: [], expiresAt: null });
    const users = await sql<{ name: string; organiser_ids: string[] | string }>`select name, organiser_ids from ${qualified(u.tenant.schema, 'users')} where role = 'organiser'`.execute(db);
    expect(users.rows).toHaveLength(1);
    expect(String(users.rows[0].organiser_ids)).toContain(o1);
    expect(String(users.rows[0].organiser_ids)).toContain(o2);
    const service = await sql<{ user_uuid: string | null }>`select user_uuid from ${qualified(u.tenant.schema, 'api_tokens')} where owner_kind = 'service'`.execute(db);
    expect(service.rows[0].user_uuid).toBeNull();
  });
});
