import { closeSync, openSync, readSync, createReadStream } from 'node:fs';
import readline from 'node:readline';
import { createGunzip } from 'node:zlib';
import { tenantMigrations } from '../../../migrations/index.js';
import type { TenantHost } from './tenant.js';

// Issue 24: the archive of one municipality (`tenant export` / `tenant import`), portable between deployments and
// databases. A gzip'd text file of JSON lines; every line that is not a table row is a two-element array
// `[kind, payload]`, and every row is the JSON object PostgreSQL's `row_to_json` wrote, so the two never mix:
//
//   ["archive", {format, formatVersion, exportedAt, tenant: {slug, name, hosts, settings, suspended}, schema: {migrations, version}}]
//   ["table", {name, columns: [{name, type}]}]      then one line per row of that table, then
//   ["end", {table, rows}]                          (the row count, checked on import)
//   … every table of the schema, parents before the tables that refer to them …
//   ["sequences", [{name, lastValue}]]
//   ["done", {tables, rows}]                        (a missing last line: the archive is truncated)
//
// `formatVersion` changes only when this layout changes; `schema.migrations` is the tenant schema's version (the
// migrations applied, in order). An archive of a later version than this deployment knows is refused.

export const ARCHIVE_FORMAT = 'holiday-programme-tenant';
export const ARCHIVE_FORMAT_VERSION = 1;

export type ArchiveHeader = {
  format: typeof ARCHIVE_FORMAT;
  formatVersion: number;
  exportedAt: string;
  tenant: { slug: string; name: string; hosts: TenantHost[]; settings: Record<string, unknown>; suspended: { since: string; reason: string | null } | null };
  schema: { migrations: string[]; version: string };
};

export type ArchiveLine =
  | { kind: 'archive'; header: ArchiveHeader }
  | { kind: 'table'; name: string; columns: { name: string; type: string }[] }
  | { kind: 'end'; table: string; rows: number }
  | { kind: 'sequences'; sequences: { name: string; lastValue: string | null }[] }
  | { kind: 'done'; tables: number; rows: number }
  | { kind: 'row'; json: string };

/** An archive the command cannot use; its message is the sentence the operator reads. */
export class ArchiveError extends Error {
  override readonly name = 'ArchiveError';
}

export function controlLine(kind: Exclude<ArchiveLine['kind'], 'row'>, payload: unknown): string {
  return `${JSON.stringify([kind, payload])}\n`;
}

export function parseLine(text: string, lineNo: number): ArchiveLine {
  if (text.startsWith('{')) return { kind: 'row', json: text };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ArchiveError(`line ${lineNo} of the archive is not JSON: the file is damaged or not a tenant archive`);
  }
  if (!Array.isArray(value) || value.length !== 2 || typeof value[0] !== 'string') throw new ArchiveError(`line ${lineNo} of the archive is not a tenant archive line`);
  // The payload as this file's own writer wrote it (controlLine); what a kind needs is checked where it is used.
  const [kind, p] = value as [string, Record<string, unknown> | null];
  const at = <T>(key: string) => p?.[key] as T;
  switch (kind) {
    case 'archive': return { kind, header: p as ArchiveHeader };
    case 'table': return { kind, name: at<string>('name'), columns: at<{ name: string; type: string }[]>('columns') ?? [] };
    case 'end': return { kind, table: at<string>('table'), rows: at<number>('rows') };
    case 'sequences': return { kind, sequences: (p ?? []) as unknown as { name: string; lastValue: string | null }[] };
    case 'done': return { kind, tables: at<number>('tables'), rows: at<number>('rows') };
    default: throw new ArchiveError(`line ${lineNo} of the archive has an unknown kind "${kind}"`);
  }
}

/** The archive's lines, gunzipped when the file is gzip'd (a plain JSON-lines file is read as it is). */
export async function* archiveLines(file: string): AsyncGenerator<ArchiveLine> {
  let gzipped = false;
  try {
    const fd = openSync(file, 'r');
    const magic = Buffer.alloc(2);
    readSync(fd, magic, 0, 2, 0);
    closeSync(fd);
    gzipped = magic[0] === 0x1f && magic[1] === 0x8b;
  } catch (error) {
    throw new ArchiveError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const raw = createReadStream(file);
  const input = gzipped ? raw.pipe(createGunzip()) : raw;
  const lines = readline.createInterface({ input, crlfDelay: Infinity });
  let n = 0;
  try {
    for await (const text of lines) {
      n++;
      if (text) yield parseLine(text, n);
    }
  } catch (error) {
    if (error instanceof ArchiveError) throw error;
    throw new ArchiveError(`the archive ${file} cannot be read past line ${n}: ${(error as Error).message} (a damaged or truncated file)`);
  } finally {
    lines.close();
    raw.destroy();
  }
}

/**
 * Refuses an archive this deployment cannot load: another format, a newer layout, or a schema version with a
 * migration this deployment does not have (written by a newer release). Returns the archive's version.
 */
export function checkHeader(header: ArchiveHeader | undefined): ArchiveHeader {
  if (!header || header.format !== ARCHIVE_FORMAT) throw new ArchiveError('this file is not a tenant archive (written by "tenant export")');
  if (!(header.formatVersion <= ARCHIVE_FORMAT_VERSION)) {
    throw new ArchiveError(`the archive has format version ${header.formatVersion}, this deployment reads up to ${ARCHIVE_FORMAT_VERSION}: upgrade this deployment first`);
  }
  const known = tenantMigrations.map((m) => m.name);
  const migrations = header.schema?.migrations ?? [];
  const unknown = migrations.find((m) => !known.includes(m));
  if (unknown) {
    throw new ArchiveError(`the archive's schema version ${header.schema.version} is newer than this deployment's ${known.at(-1)} (it has the migration ${unknown}, unknown here): upgrade this deployment first`);
  }
  if (migrations.length === 0 || migrations.some((m, i) => m !== known[i])) {
    throw new ArchiveError(`the archive's schema version does not match this deployment's migrations (${migrations.length} applied, not in this deployment's order)`);
  }
  return header;
}
