import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseHostArgument } from '../platform/tenancy/tenant.js';
import { asUsage, expectPositionals, expectSlug, parseCommandArgs } from './args.js';
import { CommandError, UsageError } from './errors.js';
import { synopsis } from './help.js';
import { note, out } from './output.js';
import { withRuntime } from './runtime.js';
import { tenantLine } from './tenant-format.js';

// Issue 24: `tenant export <slug> <file>` and `tenant import <file> [--slug] [--host]... [--name]`
// (src/platform/tenancy/archive*.ts). An archive the command cannot use is exit 1 with one sentence.

async function asCommand<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if ((error as Error | undefined)?.name === 'ArchiveError') throw new CommandError((error as Error).message);
    throw error;
  }
}

export async function exportCommand(args: string[]): Promise<void> {
  const { positionals } = parseCommandArgs('tenant export', args, {});
  expectPositionals(synopsis('tenant export'), positionals, 2, 2);
  const slug = expectSlug(positionals[0]!);
  const file = positionals[1]!;
  if (file !== '-' && !existsSync(path.dirname(path.resolve(file)))) throw new UsageError(`the folder of "${file}" does not exist`);
  if (file === '-' && process.stdout.isTTY) throw new UsageError('refusing to write the archive (gzip) to a terminal: redirect stdout or name a file');
  await withRuntime(async ({ orm }) => {
    const { exportTenant } = await import('../platform/tenancy/archive-export.js');
    const started = Date.now();
    const s = await asCommand(exportTenant(orm, slug, file, process.stdout));
    note(`exported tenant "${slug}" (schema version ${s.version}): ${s.tables} tables, ${s.rows} rows in ${Date.now() - started} ms${file === '-' ? '' : ` to ${file}`}`);
  });
}

export async function importCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseCommandArgs('tenant import', args, {
    slug: { type: 'string' },
    host: { type: 'string', multiple: true },
    name: { type: 'string' },
  });
  expectPositionals(synopsis('tenant import'), positionals, 1, 1);
  const file = positionals[0]!;
  if (!existsSync(file)) throw new UsageError(`no file "${file}"`);
  const slug = values.slug === undefined ? undefined : expectSlug(values.slug);
  const hosts = (values.host ?? []).map((h) => asUsage(() => parseHostArgument(h)));
  if (new Set(hosts.map((h) => h.host)).size !== hosts.length) throw new UsageError('a host is given twice');
  const name = values.name?.trim();
  if (values.name !== undefined && !name) throw new UsageError('--name must not be empty');
  await withRuntime(async ({ orm }) => {
    const { importTenant } = await import('../platform/tenancy/archive-import.js');
    const started = Date.now();
    const s = await asCommand(importTenant(orm, file, { slug, hosts, name }));
    note(`imported tenant "${s.tenant.slug}" (archive version ${s.archiveVersion}${s.migrated.length ? `, then migrated: ${s.migrated.join(', ')}` : ''}): ${s.tables} tables, ${s.rows} rows in ${Date.now() - started} ms`);
    await out(tenantLine(s.tenant));
  });
}
