import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { executorOf } from '../../src/platform/db/orm.js';
import { qualified, sql } from '../../src/platform/db/sql.js';
import { queueMail } from '../../src/platform/mail/outbox.js';
import { loadTenants } from '../../src/platform/tenancy/registry.js';
import { expectProblem, slugOf, useHarness, at, asList } from '../harness/harness.js';
import * as offers from '../factories/offer.factory.js';
import * as organisers from '../factories/organiser.factory.js';
import * as webhooks from '../factories/webhook.factory.js';

// Issue 24: the operator's day with a hundred municipalities, through the real CLI entry point (a child process
// against this run's database, as test/cli/cli.test.ts): seeing a municipality (`tenant list`, `tenant show`,
// `--json`), suspending it, its hosts, moving it (`tenant export` / `tenant import`), tokens with their organisers
// and last use, and each command's own `--help`.
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

const SLOW = 120_000;
const dir = mkdtempSync(path.join(tmpdir(), 'hp-cli-archive-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const { h } = useHarness({ tenant: false });
const db = () => executorOf(h.orm);

describe('help', () => {
  it('prints a command\'s own usage for <command> --help, a group for tenant --help, everything for --help', async () => {
    const [suspend, hostAdd, group, all, arg] = await Promise.all([
      cli(['tenant', 'suspend', '--help']), cli(['tenant', 'host', 'add', '--help']), cli(['tenant', '--help']), cli(['--help']),
      cli(['token', 'issue', 'demo', '--role', 'admin', '--help']),
    ]);
    for (const r of [suspend, hostAdd, group, all, arg]) expect(r.code).toBe(0);
    expect(suspend.lines[0]).toBe('usage: npm run --silent cli -- tenant suspend <slug> [--reason <text>]');
    expect(suspend.stdout).not.toContain('token issue');
    expect(suspend.lines.length).toBeLessThan(8);
    expect(hostAdd.lines[0]).toBe('usage: npm run --silent cli -- tenant host add <slug> <hostname>[/<basePath>]');
    expect(group.stdout).toContain('tenant export <slug> <file>');
    expect(group.stdout).not.toContain('token issue');
    expect(arg.lines[0]).toMatch(/^usage: npm run --silent cli -- token issue <slug> --role/);
    expect(arg.stdout).not.toContain('tenant add');
    for (const c of ['tenant show', 'tenant suspend', 'tenant resume', 'tenant host add', 'tenant export', 'tenant import', 'token list <slug> [--json]']) {
      expect(all.stdout).toContain(c);
    }
    expect(all.lines.length).toBeGreaterThan(45);
  }, SLOW);
});

describe('seeing a municipality', () => {
  it('lists an admin host bare and an API domain with its trailing slash, and --json with base paths', async () => {
    const slug = slugOf('list');
    const add = await cli(['tenant', 'add', slug, '--host', `ferien.${slug}.example`, '--host', `api.${slug}.example/`, '--host', `www.${slug}.example/ferienpass`, '--name', 'Stadt Nord']);
    expect(add.code, add.stderr).toBe(0);
    const line = `${slug}\tferien.${slug}.example,api.${slug}.example/,www.${slug}.example/ferienpass\tStadt Nord`;
    expect(add.lines).toEqual([line]);
    const [list, json] = await Promise.all([cli(['tenant', 'list']), cli(['tenant', 'list', '--json'])]);
    expect(list.lines).toContain(line);
    for (const l of list.lines) expect(l.split('\t')).toHaveLength(3);
    const mine = asList(JSON.parse(json.stdout)).find((x) => at(x, 'slug') === slug);
    expect(mine).toEqual({
      slug, name: 'Stadt Nord', schema: `t_${slug.replace(/-/g, '_')}`, suspended: null,
      hosts: [
        { host: `ferien.${slug}.example`, basePath: '/api', argument: `ferien.${slug}.example` },
        { host: `api.${slug}.example`, basePath: '/', argument: `api.${slug}.example/` },
        { host: `www.${slug}.example`, basePath: '/ferienpass', argument: `www.${slug}.example/ferienpass` },
      ],
    });
    // What the list prints is what --host takes: the same tenant again, idempotently.
    const again = await cli(['tenant', 'add', slug, ...line.split('\t')[1]!.split(',').flatMap((h) => ['--host', h])]);
    expect(again.lines).toEqual([line]);
  }, SLOW);

  it('shows settings, hosts, schema version, counts, mail backlog, webhooks and last activity; --json the same', async () => {
    const t = await h.tenant({ name: 'Ferienpass Ostdorf', settings: { retentionWeeks: 8 } });
    await offers.create(t);
    await offers.create(t);
    await webhooks.create(t);
    await queueMail({ tenant: t.tenant }, db(), { kind: 'test', recipient: 'a@ostdorf.example', subject: 'S', body: 'B' });
    expect((await t.get('/categories')).status).toBe(200);
    const [text, json] = await Promise.all([cli(['tenant', 'show', t.slug]), cli(['tenant', 'show', t.slug, '--json'])]);
    expect(text.code, text.stderr).toBe(0);
    const o = JSON.parse(json.stdout);
    expect(o).toMatchObject({
      slug: t.slug, name: 'Ferienpass Ostdorf', suspended: null,
      hosts: [{ host: t.host, basePath: '/api', argument: t.host }],
      settings: { retentionWeeks: 8, publicAccess: true },
      schemaVersion: { upToDate: true },
      counts: { offers: 2, editions: 2, families: 0, applications: 0, tokens: 1 },
      mail: { waiting: 1, failed: 0 },
      webhooks: { enabled: 1, disabled: 0, failing: 0 },
    });
    expect(o.schemaVersion.current).toMatch(/^Migration\d{14}\w+$/);
    expect(o.schemaVersion.applied).toBe(o.schemaVersion.expected);
    expect(o.lastActivity).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0[12]:00$/);
    expect(o.mail.oldestWaitingSince).toMatch(/^\d{4}-/);
    expect(text.stdout).toMatch(/^state +active$/m);
    expect(text.stdout).toMatch(new RegExp(`^host +${t.host} \\(API below /api\\)$`, 'm'));
    expect(text.stdout).toMatch(/^offers +2$/m);
    expect(text.stdout).toMatch(/^mail +1 waiting \(oldest .+\), 0 failed$/m);
    expect(text.stdout).toMatch(/^setting +retentionWeeks=8$/m);
    expect(text.stdout).toMatch(/^schema +t_\w+ at Migration\d+\w+ \(\d+ of \d+, up to date\)$/m);
    const missing = await cli(['tenant', 'show', slugOf('nobody')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: no tenant "nobody-\w+"\n$/);
  }, SLOW);
});

describe('suspending a municipality and its hosts', () => {
  it('suspends with a reason (503 with a sentence), shows it, resumes; adds and removes hosts', async () => {
    const t = await h.tenant({ name: 'Ferienpass Westheim' });
    const suspended = await cli(['tenant', 'suspend', t.slug, '--reason', 'Umzug auf einen neuen Server']);
    expect(suspended.code, suspended.stderr).toBe(0);
    expect(suspended.stderr).toContain(`suspended tenant "${t.slug}"`);
    const p = expectProblem(await t.get('/categories'), 503);
    expect(p.detail).toContain('"Ferienpass Westheim" is suspended by its provider: Umzug auf einen neuen Server.');
    const [show, list] = await Promise.all([cli(['tenant', 'show', t.slug]), cli(['tenant', 'list', '--json'])]);
    expect(show.stdout).toMatch(/^state +suspended since \d{4}-.+: Umzug auf einen neuen Server$/m);
    expect(at(asList(JSON.parse(list.stdout)).find((x) => at(x, 'slug') === t.slug), 'suspended')).toMatchObject({ reason: 'Umzug auf einen neuen Server' });
    expect((await cli(['tenant', 'resume', t.slug])).code).toBe(0);
    expect((await t.get('/categories')).status).toBe(200);
    const twice = await cli(['tenant', 'resume', t.slug]);
    expect(twice.code).toBe(0);
    expect(twice.stderr).toContain('is not suspended');

    const other = await h.tenant();
    const [added, taken, bad, unknown] = await Promise.all([
      cli(['tenant', 'host', 'add', t.slug, `api.${t.host}/`]),
      cli(['tenant', 'host', 'add', t.slug, other.host]),
      cli(['tenant', 'host', 'add', t.slug, 'no spaces.example']),
      cli(['tenant', 'host', 'add', slugOf('nobody'), 'x.example']),
    ]);
    expect(added.code, added.stderr).toBe(0);
    expect(added.lines).toEqual([`${t.slug}\t${t.host},api.${t.host}/\tFerienpass Westheim`]);
    expect((await h.request('GET', '/categories', { host: `api.${t.host}`, token: t.adminToken })).status).toBe(200);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toBe(`error: host "${other.host}" already belongs to tenant "${other.slug}"\n`);
    expect(bad.code).toBe(2);
    expect(unknown.code).toBe(1);
    const removed = await cli(['tenant', 'host', 'remove', t.slug, t.host]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.lines).toEqual([`${t.slug}\tapi.${t.host}/\tFerienpass Westheim`]);
    expectProblem(await t.get('/categories'), 404);
    const last = await cli(['tenant', 'host', 'remove', t.slug, `api.${t.host}`]);
    expect(last.code).toBe(1);
    expect(last.stderr).toContain('is the only host of tenant');
    const none = await cli(['tenant', 'host', 'remove', t.slug, 'elsewhere.example']);
    expect(none.stderr).toBe(`error: tenant "${t.slug}" has no host "elsewhere.example"\n`);
  }, SLOW);
});

describe('moving a municipality', () => {
  it('exports it and imports it under a new slug and host: the same records with the same uuids; refusals in a sentence', async () => {
    const t = await h.tenant({ name: 'Ferienpass Südstadt' });
    const offer = await offers.create(t);
    const file = path.join(dir, 'suedstadt.hpt.gz');
    const exported = await cli(['tenant', 'export', t.slug, file]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).toMatch(/exported tenant ".+" \(schema version Migration\d+\w+\): \d+ tables, \d+ rows/);
    const slug = slugOf('moved');
    const [imported, taken, takenHost, missing] = await Promise.all([
      cli(['tenant', 'import', file, '--slug', slug, '--host', `${slug}.example/`]),
      cli(['tenant', 'import', file]),
      cli(['tenant', 'import', file, '--slug', slugOf('other'), '--host', t.host]),
      cli(['tenant', 'import', path.join(dir, 'none.gz')]),
    ]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.lines).toEqual([`${slug}\t${slug}.example/\tFerienpass Südstadt`]);
    const moved = await h.request('GET', `/offers/${offer.uuid}`, { host: `${slug}.example`, token: t.adminToken });
    expect(moved.status).toBe(200);
    expect(moved.body.name).toBe(offer.name);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toBe(`error: tenant "${t.slug}" already exists here: import it under another slug (--slug <new-slug>)\n`);
    expect(takenHost.code).toBe(1);
    expect(takenHost.stderr).toBe(`error: host "${t.host}" already belongs to tenant "${t.slug}" here: import with hosts of its own (--host <hostname>[/<basePath>])\n`);
    expect(missing.code).toBe(2);
    expect((await loadTenants(db())).filter((x) => x.name === 'Ferienpass Südstadt').map((x) => x.slug).sort()).toEqual([t.slug, slug].sort());
  }, SLOW);
});

describe('tokens', () => {
  it('lists the organisers a token is bound to and the hour of its last use, written once an hour, not per request', async () => {
    const t = await h.tenant();
    const organiser = await organisers.create(t, { alias: 'tsv-sued' });
    const issued = await cli(['token', 'issue', t.slug, '--role', 'organiser', '--organiser', 'tsv-sued', '--name', 'Vereinsportal']);
    expect(issued.code, issued.stderr).toBe(0);
    const token = issued.lines.at(-1)!;
    const before = await cli(['token', 'list', t.slug]);
    const unused = before.lines.map((l) => l.split('\t')).find((r) => r[1] === 'Vereinsportal')!;
    expect(unused).toHaveLength(10);
    expect(unused.slice(7)).toEqual(['tsv-sued', '-', '100']);

    const version = async () => (await sql<{ v: string }>`select xmin::text as v from ${qualified(t.tenant.schema, 'api_tokens')} where name = 'Vereinsportal'`.execute(db())).rows[0]!.v;
    const initial = await version();
    expect((await t.get('/editions', { token })).status).toBe(200);
    // The use is written beside the request, not awaited by it.
    const deadline = Date.now() + 5_000;
    let written = await version();
    while (written === initial && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      written = await version();
    }
    expect(written).not.toBe(initial);
    for (let i = 0; i < 5; i++) expect((await t.get('/editions', { token })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    // The row was not written again (its xmin, the writing transaction, is the same).
    expect(await version()).toBe(written);

    const [after, json] = await Promise.all([cli(['token', 'list', t.slug]), cli(['token', 'list', t.slug, '--json'])]);
    const used = after.lines.map((l) => l.split('\t')).find((r) => r[1] === 'Vereinsportal')!;
    expect(used[8]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:00:00\+0[12]:00$/);
    const entry = asList(JSON.parse(json.stdout)).find((x) => at(x, 'name') === 'Vereinsportal');
    expect(entry).toMatchObject({
      role: 'organiser', access: 'read-write', ownerKind: 'person', revokedAt: null, expiresAt: null, lastUsedAt: used[8],
      organisers: [{ uuid: organiser.uuid, name: organiser.name, alias: 'tsv-sued' }],
    });
    expect(json.stdout).not.toContain('hpt_');
  }, SLOW);

  it('mail list --json gives the same entries as objects', async () => {
    const t = await h.tenant();
    await queueMail({ tenant: t.tenant }, db(), { kind: 'decision', recipient: 'b@example.org', subject: 'S', body: 'B' });
    const [text, json] = await Promise.all([cli(['mail', 'list', t.slug]), cli(['mail', 'list', t.slug, '--json'])]);
    const [row] = JSON.parse(json.stdout);
    expect(row).toMatchObject({ kind: 'decision', state: 'waiting', attempts: 0, sentAt: null, lastError: null });
    expect(text.lines[0]!.split('\t')[0]).toBe(row.uuid);
    expect(json.stdout).not.toContain('b@example.org');
  }, SLOW);
});
