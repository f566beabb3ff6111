import { tenantMigrations } from '../../../migrations/index.js';
import { executorOf, inTransaction, migrateTenantSchemaIn, type Orm } from '../db/orm.js';
import {
  CyclicGroupLoader, insertRows, loadOrder, restoreSequences, schemaTables, setUserTriggers, type Table,
} from '../db/schema-copy.js';
import { sql, type Executor } from '../db/sql.js';
import { archiveLines, ArchiveError, checkHeader, type ArchiveHeader, type ArchiveLine } from './archive.js';
import { loadTenants } from './registry.js';
import { schemaNameFor, SLUG_RE, type Tenant, type TenantHost } from './tenant.js';

// Issue 24: `tenant import <file> [--slug] [--host]... [--name]`: an exported municipality recreated in this
// deployment, in ONE transaction: the schema is created and migrated to the archive's version, every row is
// loaded (parents first; tables that refer to each other by one statement, schema-copy.ts), the sequences are set,
// the schema is migrated on to this deployment's version, and the registry entry is written last. Whatever goes
// wrong (a taken slug or host, a damaged file), nothing is left behind.

export type ImportOptions = { slug?: string; hosts?: TenantHost[]; name?: string };
export type ImportSummary = { tenant: Tenant; tables: number; rows: number; archiveVersion: string; migrated: string[] };

/** Reads only the archive's first line: what it holds, and whether this deployment can load it. */
export async function readArchiveHeader(file: string): Promise<ArchiveHeader> {
  for await (const line of archiveLines(file)) {
    if (line.kind !== 'archive') break;
    return checkHeader(line.header);
  }
  throw new ArchiveError(`${file} is not a tenant archive (written by "tenant export")`);
}

/** Refuses a slug, schema or host this database already has, with the sentence the operator reads. */
async function assertFree(db: Executor, slug: string, schema: string, hosts: TenantHost[]): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('hp:tenant-hosts'))`.execute(db);
  if ((await loadTenants(db)).some((t) => t.slug === slug)) {
    throw new ArchiveError(`tenant "${slug}" already exists here: import it under another slug (--slug <new-slug>)`);
  }
  const schemaTaken = await sql<{ n: number }>`select count(*)::int as n from pg_catalog.pg_namespace where nspname = ${schema}`.execute(db);
  if (schemaTaken.rows[0]!.n > 0) throw new ArchiveError(`the schema ${schema} already exists in this database: import under another slug (--slug <new-slug>)`);
  const owners = await db.selectFrom('control.tenant_hosts').select(['host', 'tenant_slug']).where('host', 'in', hosts.map((h) => h.host)).execute();
  if (owners[0]) {
    throw new ArchiveError(`host "${owners[0].host}" already belongs to tenant "${owners[0].tenant_slug}" here: import with hosts of its own (--host <hostname>[/<basePath>])`);
  }
}

/** Loads the rows of the archive's tables into `schema`, checking each table's count and the archive's end. */
export async function loadRows(db: Executor, schema: string, lines: AsyncIterable<ArchiveLine>): Promise<{ tables: number; rows: number }> {
  const tables = await schemaTables(db, schema);
  const byName = new Map(tables.map((t) => [t.name, t]));
  const groups = loadOrder(tables);
  const groupOf = new Map(groups.flatMap((g) => g.tables.map((t) => [t, g] as const)));
  const done = new Set<string>();
  await setUserTriggers(db, schema, tables.map((t) => t.name), false);
  let current: { table: Table; columns: Set<string>; rows: number; cyclic: CyclicGroupLoader | null } | null = null;
  let cyclic: CyclicGroupLoader | null = null;
  let batch: string[] = [];
  let size = 0;
  let total = { tables: 0, rows: 0 };
  const flush = async () => {
    if (!current || batch.length === 0) return;
    if (current.cyclic) await current.cyclic.add(current.table, current.columns, batch);
    else await insertRows(db, schema, current.table, current.columns, batch);
    batch = [];
    size = 0;
  };
  for await (const line of lines) {
    switch (line.kind) {
      case 'table': {
        if (current) throw new ArchiveError(`the archive starts table ${line.name} before the end of ${current.table.name}`);
        const table = byName.get(line.name);
        if (!table) throw new ArchiveError(`the archive holds a table "${line.name}" this deployment's schema does not have at the archive's version`);
        const have = new Set(table.columns.map((c) => c.name));
        const extra = line.columns.find((c) => !have.has(c.name));
        if (extra) throw new ArchiveError(`the archive's table ${line.name} has a column "${extra.name}" this deployment's schema does not have`);
        const group = groupOf.get(line.name)!;
        const missing = table.references.find((r) => r !== line.name && !done.has(r) && !group.tables.includes(r));
        if (missing) throw new ArchiveError(`the archive lists table ${line.name} before ${missing}, which it refers to`);
        if (group.cyclic) cyclic ??= new CyclicGroupLoader(db, schema);
        current = { table, columns: new Set(line.columns.map((c) => c.name)), rows: 0, cyclic: group.cyclic ? cyclic : null };
        break;
      }
      case 'row':
        if (!current) throw new ArchiveError('the archive has a row outside of a table');
        batch.push(line.json);
        size += line.json.length;
        current.rows++;
        if (batch.length >= 1000 || size >= 8 * 1024 * 1024) await flush();
        break;
      case 'end': {
        if (!current || current.table.name !== line.table) throw new ArchiveError(`the archive ends table ${line.table} it did not start`);
        if (current.rows !== line.rows) throw new ArchiveError(`the archive's table ${line.table} holds ${current.rows} rows, its end says ${line.rows}: the file is damaged`);
        await flush();
        done.add(line.table);
        total = { tables: total.tables + 1, rows: total.rows + current.rows };
        const group = groupOf.get(line.table)!;
        if (current.cyclic && group.tables.every((t) => done.has(t))) {
          await current.cyclic.flush();
          cyclic = null;
        }
        current = null;
        break;
      }
      case 'sequences':
        await restoreSequences(db, schema, line.sequences);
        break;
      case 'done':
        if (current || line.tables !== total.tables || line.rows !== total.rows) throw new ArchiveError('the archive\'s end does not match its tables: the file is damaged');
        await cyclic?.flush();
        await setUserTriggers(db, schema, tables.map((t) => t.name), true);
        return total;
      case 'archive':
        throw new ArchiveError('the archive has a second header line');
    }
  }
  throw new ArchiveError('the archive ends too early (no "done" line): the file is truncated');
}

export async function importTenant(orm: Orm, file: string, opts: ImportOptions = {}): Promise<ImportSummary> {
  const header = await readArchiveHeader(file);
  const slug = opts.slug ?? header.tenant.slug;
  if (!SLUG_RE.test(slug)) throw new ArchiveError(`invalid slug "${slug}": use [a-z][a-z0-9-]{1,40}`);
  const schema = schemaNameFor(slug);
  const hosts = opts.hosts?.length ? opts.hosts : header.tenant.hosts;
  if (hosts.length === 0) throw new ArchiveError('the archive names no host: give one with --host <hostname>[/<basePath>]');
  const name = opts.name ?? header.tenant.name;
  const version = header.schema.version;
  const atLatest = version === tenantMigrations.at(-1)!.name;

  const result = await inTransaction(orm, async (trx, db) => {
    await assertFree(db, slug, schema, hosts);
    await migrateTenantSchemaIn(orm, schema, trx, atLatest ? {} : { to: version });
    const lines = archiveLines(file);
    const first = await lines.next();
    if (first.done || first.value.kind !== 'archive') throw new ArchiveError(`${file} is not a tenant archive`);
    const counts = await loadRows(db, schema, lines);
    const migrated = atLatest ? [] : await migrateTenantSchemaIn(orm, schema, trx);
    await db.insertInto('control.tenants').values({ slug, name, schema_name: schema, settings: JSON.stringify(header.tenant.settings ?? {}) }).execute();
    await db.insertInto('control.tenant_hosts').values(hosts.map((h, i) => ({ host: h.host, tenant_slug: slug, base_path: h.basePath, position: i }))).execute();
    return { ...counts, migrated };
  });
  const tenant = (await loadTenants(executorOf(orm))).find((t) => t.slug === slug)!;
  return { tenant, ...result, archiveVersion: version };
}
