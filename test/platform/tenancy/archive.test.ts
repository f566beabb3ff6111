import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenantMigrations } from '../../../migrations/index.js';
import { seedDemo } from '../../../src/demo/seed.js';
import { executorOf, inTransaction, migrateTenantSchemaIn } from '../../../src/platform/db/orm.js';
import { schemaTables } from '../../../src/platform/db/schema-copy.js';
import { qualified, sql, type Executor } from '../../../src/platform/db/sql.js';
import { queueMail } from '../../../src/platform/mail/outbox.js';
import { ArchiveError } from '../../../src/platform/tenancy/archive.js';
import { exportTenant } from '../../../src/platform/tenancy/archive-export.js';
import { importTenant } from '../../../src/platform/tenancy/archive-import.js';
import { loadTenants, upsertTenant } from '../../../src/platform/tenancy/registry.js';
import { ownDatabase, slugOf, startHarness, useHarness, type Harness, type Schema, type TestResponse, isRecord } from '../../harness/harness.js';
import * as webhooks from '../../factories/webhook.factory.js';

// Issue 24 (3): a municipality moves to another database: `tenant export` on one deployment, `tenant import` under
// a new slug and host on another, and every list answers the same records with the same uuids (tokens included:
// the source's admin token works on the copy). Refusals change nothing. (The CLI's commands: test/cli/tenant-admin.)
const dir = mkdtempSync(path.join(tmpdir(), 'hp-archive-'));
const { h, t } = useHarness({ tenant: { name: 'Ferienprogramm Musterstadt', settings: { retentionWeeks: 10, mailFrom: 'ferien@musterstadt.example' } } });
let target: Harness;
let dropTarget: () => Promise<void>;
const file = path.join(dir, 'musterstadt.hpt.gz');
const slug = slugOf('moved');
const host = `${slug}.example`;

beforeAll(async () => {
  await seedDemo(h.orm, t.slug);
  // What the demo has not: a subscription (a transaction id of this database in its cursor), a variant (a table
  // referring to itself, as receipts do with their reversal), mail waiting in the outbox.
  await webhooks.create(t);
  const base = (await t.get('/offers?itemsPerPage=1')).body[0];
  expect((await t.post(`/offers/${base.uuid}/variant`)).status).toBe(201);
  await queueMail({ tenant: t.tenant }, executorOf(h.orm), { kind: 'test', recipient: 'familie@musterstadt.example', subject: 'Zusage', body: 'Hallo' });
  const own = await ownDatabase('archive_target');
  dropTarget = own.drop;
  target = await startHarness({ databaseUrl: own.url });
}, 120_000);
afterAll(async () => {
  await target?.close();
  await dropTarget?.();
  rmSync(dir, { recursive: true, force: true });
});

/** Every record of a list, page by page while `page * itemsPerPage < X-Total-Count` (no `Link`, spec 4.1), as the caller reads them. */
async function everything(hh: Harness, hostName: string, basePath: string, listPath: string, token: string): Promise<{ total: number; rows: unknown[] }> {
  const rows: unknown[] = [];
  const perPage = 50;
  let total = -1;
  for (let page = 1; page === 1 || (page - 1) * perPage < total; page++) {
    const res = await hh.request('GET', `${basePath}${listPath}${listPath.includes('?') ? '&' : '?'}itemsPerPage=${perPage}&page=${page}`, { host: hostName, token });
    expect(res.status, `${listPath}: ${res.text.slice(0, 300)}`).toBe(200);
    if (!Array.isArray(res.body)) throw new Error(`${listPath}: not a list: ${res.text.slice(0, 300)}`);
    rows.push(...res.body);
    total = Number(res.headers['x-total-count']);
  }
  return { total, rows };
}

const LISTS = ['/offers', '/attendances', '/editions', '/organisers', '/categories', '/accounts', '/participants', '/debtors', '/ledgers', '/bookings', '/receipts', '/webhooks'];

/** Every table's rows as JSON text, sorted; transaction ids (xid8) belong to their database and are left out. */
async function tableContents(db: Executor, schema: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of await schemaTables(db, schema)) {
    const cols = table.columns.filter((c) => c.type !== 'xid8').map((c) => sql.id(c.name));
    const res = await sql<{ j: string }>`select json_build_array(${sql.join(cols)})::text as j from ${qualified(schema, table.name)} order by 1`.execute(db);
    out[table.name] = res.rows.map((r) => r.j);
  }
  return out;
}

describe('tenant export and import', () => {
  it('moves the municipality to another database under a new slug and host: every list and every row the same, same uuids, tokens working', async () => {
    const exported = await exportTenant(h.orm, t.slug, file);
    expect(exported.version).toBe(tenantMigrations.at(-1)!.name);
    expect(exported.rows).toBeGreaterThan(900);
    const imported = await importTenant(target.orm, file, { slug, hosts: [{ host, basePath: '/' }] });
    expect(imported.tenant).toMatchObject({ slug, name: 'Ferienprogramm Musterstadt', hosts: [{ host, basePath: '/' }] });
    expect(imported.tenant.settings).toMatchObject({ retentionWeeks: 10, mailFrom: 'ferien@musterstadt.example' });
    expect(imported.tables).toBe(exported.tables);
    expect(imported.rows).toBe(exported.rows);

    // The tables, row for row (the schema's every table, including any a later migration adds).
    const source = await tableContents(executorOf(h.orm), t.tenant.schema);
    const copy = await tableContents(executorOf(target.orm), imported.tenant.schema);
    expect(Object.keys(copy).sort()).toEqual(Object.keys(source).sort());
    for (const table of Object.keys(source)) expect(copy[table], table).toEqual(source[table]);

    // The API, list by list, with the source's own admin token.
    const url = (o: unknown) => (isRecord(o) && typeof o.url === 'string' ? { ...o, url: o.url.replace(`https://${t.host}/`, `https://${host}/`) } : o);
    for (const list of LISTS) {
      const a = await everything(h, t.host, '/api', list, t.adminToken);
      const b = await everything(target, host, '', list, t.adminToken);
      expect(a.rows.length, list).toBeGreaterThan(0);
      expect(b.total, list).toBe(a.total);
      expect(list === '/offers' ? b.rows.map(url) : b.rows, list).toEqual(list === '/offers' ? a.rows.map(url) : a.rows);
    }
    const anonymous = await target.request('GET', '/offers?itemsPerPage=200', { host });
    expect(anonymous.body.map((o) => o.uuid)).toEqual((await t.get('/offers?itemsPerPage=200', { token: null })).body.map((o) => o.uuid));
    // The event feed: the same events in the same order (cursors are the new database's own).
    const feed = async (hh: Harness, hostName: string, base: '/api' | '', after: string | null = null) => {
      const all: Schema<'Event'>[] = [];
      let cursor: string | null | undefined = after;
      for (;;) {
        const res: TestResponse<Schema<'EventPage'>> = await hh.request('GET', `${base}/events?itemsPerPage=200${cursor ? `&after=${cursor}` : ''}`, { host: hostName, token: t.adminToken });
        expect(res.status, res.text.slice(0, 200)).toBe(200);
        all.push(...res.body.events);
        if (res.body.events.length === 0) return { events: all, next: cursor };
        cursor = res.body.next;
      }
    };
    // An event shows once every older transaction of the database cluster has ended (the feed's rule): wait for it
    // while other work runs beside this test.
    const eventually = async <T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> => {
      const deadline = Date.now() + 20_000;
      let v = await read();
      while (!done(v) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        v = await read();
      }
      return v;
    };
    const original = await feed(h, t.host, '/api');
    const moved = await eventually(() => feed(target, host, ''), (f) => f.events.length >= original.events.length);
    expect(moved.events.length).toBeGreaterThan(0);
    expect(moved.events).toEqual(original.events);

    // Numbering goes on after the copied rows (the event log's identity, restored with the sequences), and the feed
    // continues from where a reader of the new database stands.
    const draft = (await target.request('GET', '/offers?status=draft&itemsPerPage=1', { host, token: t.adminToken })).body[0];
    const published = await target.request('POST', `/offers/${draft.uuid}/transition`, { host, token: t.adminToken, body: { transition: 'publish' } });
    expect(published.status, published.text).toBe(200);
    const after = await eventually(() => feed(target, host, '', moved.next), (f) => f.events.length > 0);
    expect(after.events.map((e) => e.type)).toEqual(['offer.published']);
  }, 180_000);

  it('refuses, in a sentence and changing nothing, a taken slug or host, a newer schema version and a damaged file', async () => {
    const refuse = async (f: string, opts: Parameters<typeof importTenant>[2]) => {
      const before = (await loadTenants(executorOf(target.orm))).length;
      const error = await importTenant(target.orm, f, opts).then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(ArchiveError);
      expect((await loadTenants(executorOf(target.orm))).length).toBe(before);
      return (error as Error).message;
    };
    expect(await refuse(file, { slug, hosts: [{ host: `other-${host}`, basePath: '/api' }] }))
      .toBe(`tenant "${slug}" already exists here: import it under another slug (--slug <new-slug>)`);
    const other = slugOf('moved');
    expect(await refuse(file, { slug: other, hosts: [{ host, basePath: '/api' }] }))
      .toBe(`host "${host}" already belongs to tenant "${slug}" here: import with hosts of its own (--host <hostname>[/<basePath>])`);
    const schemas = async () => (await sql<{ n: number }>`select count(*)::int as n from pg_catalog.pg_namespace where nspname = ${`t_${other.replace(/-/g, '_')}`}`.execute(executorOf(target.orm))).rows[0]!.n;
    expect(await schemas()).toBe(0);

    const lines = gunzipSync(readFileSync(file)).toString('utf8').split('\n');
    const [kind, header] = JSON.parse(lines[0]!);
    expect(kind).toBe('archive');
    header.schema.migrations.push('Migration29991231000000FromTheFuture');
    header.schema.version = 'Migration29991231000000FromTheFuture';
    const newer = path.join(dir, 'newer.hpt.gz');
    writeFileSync(newer, gzipSync([JSON.stringify(['archive', header]), ...lines.slice(1)].join('\n')));
    expect(await refuse(newer, { slug: other, hosts: [{ host: `${other}.example`, basePath: '/api' }] })).toBe(
      `the archive's schema version Migration29991231000000FromTheFuture is newer than this deployment's ${tenantMigrations.at(-1)!.name} (it has the migration Migration29991231000000FromTheFuture, unknown here): upgrade this deployment first`,
    );

    const truncated = path.join(dir, 'truncated.hpt.gz');
    writeFileSync(truncated, gzipSync(lines.filter(Boolean).slice(0, -1).join('\n')));
    expect(await refuse(truncated, { slug: other, hosts: [{ host: `${other}.example`, basePath: '/api' }] }))
      .toBe('the archive ends too early (no "done" line): the file is truncated');
    expect(await schemas()).toBe(0);

    const notAnArchive = path.join(dir, 'other.json');
    writeFileSync(notAnArchive, '{"slug": "x"}\n');
    expect(await refuse(notAnArchive, {})).toMatch(/is not a tenant archive/);
  }, 120_000);

  it('imports an archive of an older schema version: loaded at its version, then migrated to this one', async () => {
    const old = slugOf('old');
    const schema = `t_${old.replace(/-/g, '_')}`;
    const version = tenantMigrations[3]!.name;
    await upsertTenant(executorOf(h.orm), { slug: old, name: 'Alte Gemeinde', hosts: [{ host: `${old}.example`, basePath: '/api' }] });
    await inTransaction(h.orm, (trx) => migrateTenantSchemaIn(h.orm, schema, trx, { to: version }));
    await sql`insert into ${qualified(schema, 'organisers')} (uuid, name, alias) values ('0b7d2c44-6a51-4e0c-9b6f-3c2a1d4e5f60', 'Heimatverein', 'heimatverein')`.execute(executorOf(h.orm));
    const oldFile = path.join(dir, 'old.hpt.gz');
    expect((await exportTenant(h.orm, old, oldFile)).version).toBe(version);
    const imported = await importTenant(target.orm, oldFile);
    expect(imported.archiveVersion).toBe(version);
    expect(imported.migrated).toEqual(tenantMigrations.slice(4).map((m) => m.name));
    const rows = await sql<{ name: string }>`select name from ${qualified(schema, 'organisers')}`.execute(executorOf(target.orm));
    expect(rows.rows).toEqual([{ name: 'Heimatverein' }]);
    const migrations = await sql<{ n: number }>`select count(*)::int as n from ${qualified(schema, 'mikro_orm_migrations')}`.execute(executorOf(target.orm));
    expect(migrations.rows[0]!.n).toBe(tenantMigrations.length);
  }, 120_000);

  it('writes an archive that is gzip\'d JSON lines, a row per line, readable without this service', () => {
    const text = execFileSync('gzip', ['-dc', file], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    const lines = text.split('\n').filter(Boolean);
    expect(JSON.parse(lines[0]!)[0]).toBe('archive');
    expect(JSON.parse(lines.at(-1)!)[0]).toBe('done');
    expect(lines.filter((l) => l.startsWith('["table"')).length).toBe(JSON.parse(lines.at(-1)!)[1].tables);
    expect((readFileSync(file).readUInt16BE(0))).toBe(0x1f8b);
  });
});
