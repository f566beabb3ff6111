import { createWriteStream, renameSync, rmSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { executorOf, type Orm } from '../db/orm.js';
import { fetchSize, loadOrder, schemaSequences, schemaTables, tableRows } from '../db/schema-copy.js';
import { qualified, sql, type Executor } from '../db/sql.js';
import { ARCHIVE_FORMAT, ARCHIVE_FORMAT_VERSION, ArchiveError, controlLine, type ArchiveHeader } from './archive.js';
import { loadTenants } from './registry.js';

// Issue 24: `tenant export <slug> <file>`: the municipality's registry entry and every row of every table of its
// schema (archive.ts has the layout), read in ONE read-only repeatable-read transaction, so the archive is one
// consistent picture even while the municipality is in use. Written to `<file>.partial` and renamed at the end,
// so a file under the given name is always a complete archive.

export type ExportSummary = { tables: number; rows: number; version: string };

async function* archiveText(tx: Executor, slug: string, summary: ExportSummary): AsyncGenerator<string> {
  const tenant = (await loadTenants(tx)).find((t) => t.slug === slug);
  if (!tenant) throw new ArchiveError(`no tenant "${slug}"`);
  const stored = await tx.selectFrom('control.tenants').select('settings').where('slug', '=', slug).executeTakeFirstOrThrow();
  const migrations = (await sql<{ name: string }>`select name from ${qualified(tenant.schema, 'mikro_orm_migrations')} order by id`.execute(tx)).rows
    .map((r) => r.name.replace(/\.[jt]s$/, ''));
  if (migrations.length === 0) throw new ArchiveError(`the schema of tenant "${slug}" has no migrations applied: run migrate first`);
  const header: ArchiveHeader = {
    format: ARCHIVE_FORMAT,
    formatVersion: ARCHIVE_FORMAT_VERSION,
    exportedAt: new Date().toISOString(),
    tenant: { slug, name: tenant.name, hosts: tenant.hosts, settings: (stored.settings ?? {}) as Record<string, unknown>, suspended: tenant.suspended ?? null },
    schema: { migrations, version: migrations.at(-1)! },
  };
  summary.version = header.schema.version;
  yield controlLine('archive', header);
  yield* schemaLines(tx, tenant.schema, summary);
  yield controlLine('done', { tables: summary.tables, rows: summary.rows });
}

/** Every table of `schema` (parents first) with its rows, then the sequences: the archive's body, whatever tables there are. */
export async function* schemaLines(tx: Executor, schema: string, summary: { tables: number; rows: number }): AsyncGenerator<string> {
  const tables = await schemaTables(tx, schema);
  const byName = new Map(tables.map((t) => [t.name, t]));
  for (const group of loadOrder(tables)) {
    for (const name of group.tables) {
      const table = byName.get(name)!;
      yield controlLine('table', { name, columns: table.columns.map((c) => ({ name: c.name, type: c.type })) });
      let rows = 0;
      for await (const batch of tableRows(tx, schema, name, fetchSize(table))) {
        rows += batch.length;
        yield `${batch.join('\n')}\n`;
      }
      yield controlLine('end', { table: name, rows });
      summary.tables++;
      summary.rows += rows;
    }
  }
  yield controlLine('sequences', await schemaSequences(tx, schema));
}

/** Writes the archive of `slug` to `file` (`-`: to `stdout`). */
export async function exportTenant(orm: Orm, slug: string, file: string, stdout?: Writable): Promise<ExportSummary> {
  const summary: ExportSummary = { tables: 0, rows: 0, version: '' };
  const partial = `${file}.partial`;
  const target = file === '-' ? stdout! : createWriteStream(partial, { mode: 0o600 });
  try {
    await executorOf(orm).transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute(async (tx) => {
      await pipeline(archiveText(tx, slug, summary), createGzip(), target, { end: file !== '-' });
    });
  } catch (error) {
    if (file !== '-') rmSync(partial, { force: true });
    throw error;
  }
  if (file !== '-') renameSync(partial, file);
  return summary;
}
