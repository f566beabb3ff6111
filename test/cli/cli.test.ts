import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOrm, executorOf } from '../../src/platform/db/orm.js';
import { qualified, sql } from '../../src/platform/db/sql.js';
import { newUuid } from '../../src/platform/http/ids.js';
import { addTenant } from '../../src/platform/tenancy/operations.js';
import { loadTenants } from '../../src/platform/tenancy/registry.js';
import { slugOf, useHarness } from '../harness/harness.js';
import { entities } from '../../src/entities.js';

// The operator CLI (D1, D10) as outside checks drive it: the real entry point in a child process against
// this run's database. Each process costs about two seconds, so independent calls run side by side.
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

type Run = { code: number | null; stdout: string; stderr: string; lines: string[] };

function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: inject('databaseUrl'), LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, lines: stdout.split('\n').filter(Boolean) }));
  });
}

// Child processes compete for the CPU with the other test files: generous per-test limits.
const SLOW = 120_000;

const { h } = useHarness({ tenant: false });

async function schemaExists(schema: string): Promise<boolean> {
  const res = await sql<{ n: number }>`select count(*)::int as n from information_schema.schemata where schema_name = ${schema}`.execute(executorOf(h.orm));
  return res.rows[0].n > 0;
}

describe('usage', () => {
  it('prints usage for --help (exit 0) and for an unknown command (exit 2)', async () => {
    const [help, unknown, none] = await Promise.all([cli(['--help']), cli(['frobnicate']), cli([])]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('tenant add <slug> --host');
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toMatch(/^error: unknown command "frobnicate"\n/);
    expect(unknown.stderr).toContain('token issue <slug>');
    expect(none.code).toBe(2);
  }, SLOW);
});

describe('tenant', () => {
  it('adds a tenant idempotently and lists it as <slug>\\t<hosts>\\t<name>', async () => {
    const slug = slugOf('cli');
    const args = ['tenant', 'add', slug, '--host', `${slug}.example`, '--host', `api.${slug}.example/`, '--name', `Stadt ${slug}`, '--set', 'retentionWeeks=4'];
    const first = await cli(args);
    expect(first.code, first.stderr).toBe(0);
    // Issue 24: each host as --host takes it: the admin host bare, the API domain with its trailing slash.
    const line = `${slug}\t${slug}.example,api.${slug}.example/\tStadt ${slug}`;
    expect(first.lines).toEqual([line]);
    expect(await schemaExists(`t_${slug.replace(/-/g, '_')}`)).toBe(true);

    const other = slugOf('cli');
    const [again, list, taken] = await Promise.all([
      cli(args),
      cli(['tenant', 'list']),
      cli(['tenant', 'add', other, '--host', `api.${slug}.example`]),
    ]);
    expect(again.code).toBe(0);
    expect(again.lines).toEqual([line]);
    expect(list.code).toBe(0);
    expect(list.lines).toContain(line);
    for (const l of list.lines) expect(l.split('\t')).toHaveLength(3);
    expect(taken.code).toBe(1);
    expect(taken.stderr.trim()).toBe(`error: host "api.${slug}.example" already belongs to tenant "${slug}"`);
    expect(taken.stdout).toBe('');

    const t = (await loadTenants(executorOf(h.orm))).find((x) => x.slug === slug)!;
    expect(t.hosts).toEqual([{ host: `${slug}.example`, basePath: '/api' }, { host: `api.${slug}.example`, basePath: '/' }]);
    expect(t.settings.retentionWeeks).toBe(4);
    expect((await loadTenants(executorOf(h.orm))).some((x) => x.slug === other)).toBe(false);
  }, SLOW);

  it('refuses a bad slug, a bad host and a missing host with exit 2 and a one-line message', async () => {
    const [badSlug, badHost, noHost, badSetting] = await Promise.all([
      cli(['tenant', 'add', 'Bad_Slug', '--host', 'x.example']),
      cli(['tenant', 'add', slugOf('cli'), '--host', 'no spaces.example']),
      cli(['tenant', 'add', slugOf('cli')]),
      cli(['tenant', 'add', slugOf('cli'), '--host', 'y.example', '--set', 'publicAccess=maybe']),
    ]);
    for (const r of [badSlug, badHost, noHost, badSetting]) {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^error: .+\n$/);
    }
    expect(badSlug.stderr).toContain('invalid tenant slug "Bad_Slug"');
    expect(badHost.stderr).toContain('invalid host name "no spaces.example"');
    expect(noHost.stderr).toContain('--host');
    expect(badSetting.stderr).toContain('publicAccess');
  }, SLOW);

  it('sets a known setting and refuses an unknown one or an unknown tenant', async () => {
    const slug = slugOf('cli');
    await addTenant(h.orm, { slug, hosts: [{ host: `${slug}.example`, basePath: '/api' }] });
    const [ok, unknownKey, unknownTenant] = await Promise.all([
      cli(['tenant', 'set', slug, 'publicAccess=false', 'offerUrlTemplate=https://x.example/o/{alias}']),
      cli(['tenant', 'set', slug, 'colour=blue']),
      cli(['tenant', 'set', slugOf('nobody'), 'publicAccess=false']),
    ]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe('');
    expect(unknownKey.code).toBe(2);
    expect(unknownKey.stderr).toContain('unknown setting "colour"');
    expect(unknownTenant.code).toBe(1);
    expect(unknownTenant.stderr).toMatch(/^error: no tenant "nobody-/);
    const t = (await loadTenants(executorOf(h.orm))).find((x) => x.slug === slug)!;
    expect(t.settings.publicAccess).toBe(false);
    expect(t.settings.offerUrlTemplate).toBe('https://x.example/o/{alias}');
  }, SLOW);

  it('removes a tenant and its schema only with --yes', async () => {
    const slug = slugOf('cli');
    const schema = `t_${slug.replace(/-/g, '_')}`;
    await addTenant(h.orm, { slug, hosts: [{ host: `${slug}.example`, basePath: '/api' }] });
    const refused = await cli(['tenant', 'remove', slug]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('without --yes');
    expect(await schemaExists(schema)).toBe(true);
    const removed = await cli(['tenant', 'remove', slug, '--yes']);
    expect(removed.code).toBe(0);
    expect(await schemaExists(schema)).toBe(false);
    expect((await loadTenants(executorOf(h.orm))).some((t) => t.slug === slug)).toBe(false);
  }, SLOW);

  it('syncs tenants/*.json from the folder TENANTS_DIR names', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cli-sync-'));
    const broken = mkdtempSync(path.join(tmpdir(), 'cli-sync-broken-'));
    try {
      const a = slugOf('sync');
      const b = slugOf('sync');
      writeFileSync(path.join(dir, `${a}.json`), JSON.stringify({ slug: a, name: 'Stadt A', hosts: [`${a}.example/api`, `api.${a}.example/`], settings: { publicAccess: false } }));
      writeFileSync(path.join(dir, `${b}.json`), JSON.stringify({ slug: b, name: 'Stadt B', hosts: [`${b}.example`] }));
      writeFileSync(path.join(dir, 'README.md'), 'not a tenant');
      writeFileSync(path.join(broken, 'bad.json'), '{ "slug": ');
      const [synced, failed] = await Promise.all([cli(['tenant', 'sync'], { TENANTS_DIR: dir }), cli(['tenant', 'sync'], { TENANTS_DIR: broken })]);
      expect(synced.code).toBe(0);
      expect(synced.lines.sort()).toEqual([`${a}\t${a}.example,api.${a}.example/\tStadt A`, `${b}\t${b}.example\tStadt B`].sort());
      const tenants = await loadTenants(executorOf(h.orm));
      expect(tenants.find((t) => t.slug === a)?.settings.publicAccess).toBe(false);
      expect(await schemaExists(`t_${b.replace(/-/g, '_')}`)).toBe(true);
      expect(failed.code).toBe(1);
      expect(failed.stderr).toContain('bad.json');
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(broken, { recursive: true, force: true });
    }
  }, SLOW);
});

describe('token', () => {
  it('issues tokens that work on the API, lists and revokes them', async () => {
    const slug = slugOf('tok');
    const host = `${slug}.example`;
    const { schema } = await addTenant(h.orm, { slug, hosts: [{ host, basePath: '/api' }] });
    const organiser = newUuid();
    await sql`insert into ${qualified(schema, 'organisers')} (uuid, name, alias) values (${organiser}, 'Sportverein', 'sportverein')`.execute(executorOf(h.orm));

    const [admin, legacy, noOrganiser, unknownOrganiser, past, badDate, organiserToken] = await Promise.all([
      cli(['token', 'issue', slug, '--role', 'admin', '--name', 'Integration', '--expires', '2099-12-31', '--service']),
      cli(['token', 'issue', slug, '--role', 'admin', '--legacy']),
      cli(['token', 'issue', slug, '--role', 'organiser']),
      cli(['token', 'issue', slug, '--role', 'organiser', '--organiser', 'nobody']),
      cli(['token', 'issue', slug, '--role', 'admin', '--expires', '2020-01-01T00:00:00Z']),
      cli(['token', 'issue', slug, '--role', 'admin', '--expires', 'tomorrow']),
      cli(['token', 'issue', slug, '--role', 'organiser', '--organiser', 'sportverein', '--organiser', organiser, '--access', 'read']),
    ]);
    for (const ok of [admin, legacy, organiserToken]) {
      expect(ok.code).toBe(0);
      expect(ok.lines).toHaveLength(1);
      expect(ok.lines[0]).toMatch(/^hpt_[1-9A-HJ-NP-Za-km-z]+$/);
      expect(ok.stderr).not.toContain(ok.lines[0]);
    }
    expect(noOrganiser.code).toBe(2);
    expect(noOrganiser.stderr).toContain('--organiser');
    expect(unknownOrganiser.code).toBe(1);
    expect(unknownOrganiser.stderr).toContain('no organiser "nobody"');
    expect(past.code).toBe(2);
    expect(past.stderr).toContain('not in the future');
    expect(badDate.code).toBe(2);
    for (const bad of [noOrganiser, unknownOrganiser, past, badDate]) expect(bad.stdout).toBe('');

    const adminToken = admin.lines.at(-1)!;
    const ok = await h.request('GET', '/api/categories', { host, token: adminToken });
    expect(ok.status).toBe(200);
    const legacyRes = await h.request('GET', '/api/categories', { host, token: legacy.lines.at(-1)! });
    expect(legacyRes.status).toBe(403);
    const organiserRes = await h.request('GET', '/api/categories', { host, token: organiserToken.lines.at(-1)! });
    expect(organiserRes.status).toBe(200);

    const list = await cli(['token', 'list', slug]);
    expect(list.code).toBe(0);
    expect(list.lines).toHaveLength(3);
    const rows = list.lines.map((l) => l.split('\t'));
    for (const r of rows) {
      // D10's seven fields, then (issue 24) the organisers' aliases and the hour of the last use, and (issue 21)
      // the token's rate limit.
      expect(r).toHaveLength(10);
      expect(r[9]).toBe('100');
      expect(r[0]).toMatch(/^[0-9a-f-]{36}$/);
      expect(r[4]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);
      expect(r[6]).toBe('-');
    }
    const integration = rows.find((r) => r[1] === 'Integration')!;
    expect(integration.slice(2, 4)).toEqual(['admin', 'read-write']);
    expect(integration[5]).toBe('2099-12-31T00:00:00+01:00');
    expect(rows.find((r) => r[3] === 'legacy')?.[5]).toBe('-');
    expect(rows.find((r) => r[2] === 'organiser')?.[3]).toBe('read');
    expect(rows.find((r) => r[2] === 'organiser')?.[7]).toBe('sportverein');
    expect(integration[7]).toBe('-');
    const owners = await sql<{ owner_kind: string; organiser_ids: string[] | string }>`select owner_kind, organiser_ids from ${qualified(schema, 'api_tokens')} order by name`.execute(executorOf(h.orm));
    expect(owners.rows.map((r) => r.owner_kind).sort()).toEqual(['person', 'person', 'service']);
    expect(list.stdout).not.toContain('hpt_');

    const [revoked, badId] = await Promise.all([cli(['token', 'revoke', slug, integration[0]]), cli(['token', 'revoke', slug, 'not-a-uuid'])]);
    expect(revoked.code).toBe(0);
    expect(badId.code).toBe(2);
    const after = await h.request('GET', '/api/categories', { host, token: adminToken });
    expect(after.status).toBe(401);
    const revokedAt = await sql<{ revoked_at: unknown }>`select revoked_at from ${qualified(schema, 'api_tokens')} where uuid = ${integration[0]}`.execute(executorOf(h.orm));
    expect(revokedAt.rows[0].revoked_at).not.toBeNull();
  }, SLOW);

  it('issues a website token with its own rate; it reads public offers (publicAccess off too) and nothing else', async () => {
    const slug = slugOf('web');
    const host = `${slug}.example`;
    const { schema } = await addTenant(h.orm, { slug, hosts: [{ host, basePath: '/api' }], settings: { publicAccess: false } });
    const [website, plain, badRate, zero, withOrganiser, legacy] = await Promise.all([
      cli(['token', 'issue', slug, '--role', 'website', '--rate', '1200', '--name', 'Website']),
      cli(['token', 'issue', slug, '--role', 'website']),
      cli(['token', 'issue', slug, '--role', 'website', '--rate', 'fast']),
      cli(['token', 'issue', slug, '--role', 'website', '--rate', '0']),
      cli(['token', 'issue', slug, '--role', 'website', '--organiser', 'x']),
      cli(['token', 'issue', slug, '--role', 'website', '--legacy']),
    ]);
    for (const ok of [website, plain]) {
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.lines.at(-1)).toMatch(/^hpt_/);
    }
    expect(website.stderr).toContain('1200 requests per minute');
    for (const bad of [badRate, zero, withOrganiser, legacy]) {
      expect(bad.code).toBe(2);
      expect(bad.stdout).toBe('');
    }
    expect(badRate.stderr).toContain('--rate');
    const token = website.lines.at(-1)!;
    const offers = await h.request('GET', '/api/offers', { host, token });
    expect(offers.status).toBe(200);
    // The harness's generous default bucket refills in 60 s, so a token of 1200 a minute holds 1200 (D3's 3 minutes: 3600).
    expect(offers.headers['ratelimit-policy']).toBe('"token";q=1200;w=60');
    expect((await h.request('GET', '/api/offers', { host, token: plain.lines.at(-1)! })).headers['ratelimit-policy']).toBe('"token";q=1000000;w=60');
    expect((await h.request('GET', '/api/offers', { host, token: null })).status).toBe(401);
    expect((await h.request('GET', '/api/categories', { host, token })).status).toBe(403);
    expect((await h.request('GET', '/api/attendances', { host, token })).status).toBe(403);

    const list = await cli(['token', 'list', slug]);
    const rows = list.lines.map((l) => l.split('\t'));
    expect(rows.find((r) => r[1] === 'Website')?.slice(2)).toEqual(['website', 'read-write', expect.any(String), '-', '-', '-', expect.any(String), '1200']);
    expect(rows.filter((r) => r[2] === 'website').map((r) => r[9]).sort()).toEqual(['100', '1200']);
    const owners = await sql<{ owner_kind: string; user_uuid: string | null }>`select owner_kind, user_uuid from ${qualified(schema, 'api_tokens')}`.execute(executorOf(h.orm));
    expect(owners.rows).toEqual([{ owner_kind: 'service', user_uuid: null }, { owner_kind: 'service', user_uuid: null }]);
  }, SLOW);
});

describe('migrate', () => {
  // A database of its own: migrate walks every tenant, and other test files add tenants concurrently.
  let url: string;
  let dbName: string;
  beforeAll(async () => {
    dbName = `cli_migrate_${Date.now().toString(36)}_${process.pid}`;
    await sql`create database ${sql.id(dbName)}`.execute(executorOf(h.orm));
    const u = new URL(inject('databaseUrl'));
    u.pathname = `/${dbName}`;
    url = u.toString();
  });
  afterAll(async () => {
    await sql`drop database if exists ${sql.id(dbName)} with (force)`.execute(executorOf(h.orm));
  });

  it('migrates the control schema and each tenant with a line per schema, and exits 1 when one fails', async () => {
    const fresh = await cli(['migrate'], { DATABASE_URL: url });
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(fresh.lines).toEqual(['control: applied Migration20261121000000Registry, Migration20261127160000TenantSuspension']);

    const good = slugOf('mig');
    expect((await cli(['tenant', 'add', good, '--host', `${good}.example`], { DATABASE_URL: url })).code).toBe(0);
    // A tenant whose schema holds a table the first migration creates: its migration fails.
    const pool = await createOrm(url, { entities, poolMax: 1 });
    try {
      const db = executorOf(pool);
      await sql`insert into control.tenants (slug, name, schema_name) values ('broken', 'Broken', 't_broken')`.execute(db);
      await sql`create schema t_broken`.execute(db);
      await sql`create table t_broken.organisers (x int)`.execute(db);
    } finally {
      await pool.close();
    }
    const run = await cli(['migrate'], { DATABASE_URL: url });
    expect(run.code).toBe(1);
    expect(run.lines[0]).toBe('control: up to date');
    expect(run.lines).toContain(`tenant ${good}: up to date`);
    expect(run.lines.find((l) => l.startsWith('tenant broken: '))).toMatch(/^tenant broken: FAILED: .+/);
    expect(run.stderr).toMatch(/^error: 1 of 2 tenant schema\(s\) failed to migrate: broken\n$/);
  }, SLOW);
});

// Issue 12: the demo municipality is never registered silently on a deployment with DATABASE_URL.
describe('tenant sync and the demo file', () => {
  it('skips a file marked "demo": true with DATABASE_URL set, says so, and applies it with --demo or DEMO=1', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tenants-'));
    const demo = slugOf('demo');
    const real = slugOf('city');
    writeFileSync(path.join(dir, 'a.json'), JSON.stringify({ slug: demo, name: 'Demo', hosts: [`${demo}.example`], demo: true }));
    writeFileSync(path.join(dir, 'b.json'), JSON.stringify({ slug: real, name: 'Stadt', hosts: [`${real}.example`] }));
    try {
      const plain = await cli(['tenant', 'sync'], { TENANTS_DIR: dir, DEMO: '' });
      expect(plain.code, plain.stderr).toBe(0);
      expect(plain.lines).toEqual([`${real}\t${real}.example\tStadt`]);
      expect(plain.stderr).toContain(`skipped the demo municipality "${demo}" (DATABASE_URL is set): add --demo or DEMO=1 to apply it`);
      expect((await loadTenants(executorOf(h.orm))).map((t) => t.slug)).not.toContain(demo);

      const [flag, env] = await Promise.all([
        cli(['tenant', 'sync', '--demo'], { TENANTS_DIR: dir, DEMO: '' }),
        cli(['tenant', 'sync'], { TENANTS_DIR: dir, DEMO: '1' }),
      ]);
      for (const run of [flag, env]) {
        expect(run.code, run.stderr).toBe(0);
        expect(run.lines).toContain(`${demo}\t${demo}.example\tDemo`);
        expect(run.stderr).not.toContain('skipped');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, SLOW);
});

// Issue 12: a CLI error prints its real cause (it printed `error: undefined` when the embedded start failed).
describe('the embedded database', () => {
  it('names the setting to change when its port is taken, in one line, and exits 1', async () => {
    const home = mkdtempSync(path.join(tmpdir(), 'hp-cli-'));
    chmodSync(home, 0o755);
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const run = await cli(['tenant', 'list'], { DATABASE_URL: '', DATA_DIR: path.join(home, '.data'), EMBEDDED_PG_PORT: String(port) });
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      // Issue 24: one sentence naming the setting to change.
      expect(run.stderr).toBe(`error: port ${port} of the embedded PostgreSQL is taken by another program: set EMBEDDED_PG_PORT to a free port (for example EMBEDDED_PG_PORT=${port + 1}), or DATABASE_URL to use a PostgreSQL of your own\n`);
      expect(run.stderr).not.toContain('undefined');
      expect(run.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    } finally {
      blocker.close();
      rmSync(home, { recursive: true, force: true });
    }
  }, SLOW);
});

describe('an unreachable DATABASE_URL', () => {
  it('prints the connection\'s own error in one line and exits 1', async () => {
    const run = await cli(['tenant', 'list'], { DATABASE_URL: 'postgresql://postgres@localhost:1/none' });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: .*ECONNREFUSED.*\n$/);
    expect(run.stderr).not.toContain('undefined');
  }, SLOW);
});

describe('oneLine', () => {
  it('names a cause for a rejection without a value and appends an error\'s cause', async () => {
    const { oneLine } = await import('../../src/cli/errors.js');
    expect(oneLine(undefined)).toBe('failed without a reason (a library rejected with no error)');
    expect(oneLine(new Error('connect failed', { cause: Object.assign(new Error(''), { code: 'ECONNREFUSED' }) }))).toBe('connect failed (cause: Error ECONNREFUSED)');
    expect(oneLine(new Error('two\nlines'))).toBe('two lines');
  });
});
