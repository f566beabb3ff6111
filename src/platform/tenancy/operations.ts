import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pLimit from 'p-limit';
import { z } from 'zod';
import { dropTenantSchema, executorOf, migrateControl, migrateTenantSchema, type Orm } from '../db/orm.js';
import { schemasBehind, migrateConcurrency } from './versions.js';
import { deleteTenantRow, loadTenants, setTenantSettings, upsertTenant } from './registry.js';
import { tenantSettingsSchema, type TenantSettings } from './settings.js';
import { parseHostArgument, schemaNameFor, SLUG_RE, type Tenant, type TenantHost } from './tenant.js';

// The operator's tenant operations (D1), shared by the CLI, `npm start` and the tests.
export type Progress = (event: { slug: string; index: number; total: number; applied: string[]; error?: unknown }) => void;

export async function addTenant(
  orm: Orm,
  input: { slug: string; name?: string; hosts: TenantHost[]; settings?: Partial<TenantSettings>; replaceHosts?: boolean },
): Promise<Tenant> {
  if (!SLUG_RE.test(input.slug)) throw new Error(`invalid slug "${input.slug}": use [a-z][a-z0-9-]{1,40}`);
  if (input.hosts.length === 0) throw new Error('a tenant needs at least one --host');
  const db = executorOf(orm);
  await upsertTenant(db, input);
  await migrateTenantSchema(orm, schemaNameFor(input.slug));
  const tenant = (await loadTenants(db)).find((t) => t.slug === input.slug);
  return tenant!;
}

export async function setTenant(orm: Orm, slug: string, settings: Partial<TenantSettings>): Promise<void> {
  const ok = await setTenantSettings(executorOf(orm), slug, settings);
  if (!ok) throw new Error(`no tenant "${slug}"`);
}

export async function removeTenant(orm: Orm, slug: string): Promise<void> {
  const ok = await deleteTenantRow(executorOf(orm), slug);
  if (!ok) throw new Error(`no tenant "${slug}"`);
  await dropTenantSchema(orm, schemaNameFor(slug));
}

export type MigrateOptions = {
  /** Schemas migrated at once (env MIGRATE_CONCURRENCY, default 8). */
  concurrency?: number;
  /** Only these tenants (default: every registered one). */
  tenants?: Tenant[];
};

/**
 * Control schema first, then the tenant schemas. One round trip per 200 schemas finds those already up to
 * date (versions.ts); only the schemas behind go through the migrator (each under its own transaction-scoped
 * lock), `concurrency` at once. Progress is reported once per tenant in registry order (slug), up-to-date
 * ones with `applied: []`, so the CLI's lines read as before. A failure is reported and the rest go on.
 */
export async function migrateAll(orm: Orm, progress?: Progress, opts: MigrateOptions = {}): Promise<{ failed: string[]; migrated: string[] }> {
  await migrateControl(orm);
  const db = executorOf(orm);
  const tenants = opts.tenants ?? (await loadTenants(db));
  const behind = await schemasBehind(db, tenants.map((t) => t.schema));
  const failed: string[] = [];
  const migrated: string[] = [];
  // Results arrive in any order; they are reported in order, each as soon as all before it are known.
  const results: ({ applied: string[]; error?: unknown } | undefined)[] = new Array(tenants.length);
  let reported = 0;
  const flush = () => {
    while (reported < tenants.length && results[reported]) {
      const t = tenants[reported]!;
      const r = results[reported]!;
      if (r.error !== undefined) failed.push(t.slug);
      else if (behind.has(t.schema)) migrated.push(t.slug);
      progress?.({ slug: t.slug, index: reported, total: tenants.length, applied: r.applied, ...(r.error !== undefined ? { error: r.error } : {}) });
      reported++;
    }
  };
  tenants.forEach((t, i) => {
    if (!behind.has(t.schema)) results[i] = { applied: [] };
  });
  flush();
  const todo = tenants.map((t, i) => ({ t, i })).filter(({ t }) => behind.has(t.schema));
  const limit = pLimit(Math.max(1, opts.concurrency ?? migrateConcurrency()));
  await Promise.all(todo.map(({ t, i }) => limit(async () => {
    try {
      results[i] = { applied: await migrateTenantSchema(orm, t.schema) };
    } catch (error) {
      results[i] = { applied: [], error: error ?? new Error('migration failed') };
    }
    flush();
  })));
  return { failed, migrated };
}

const tenantFileSchema = z.object({
  slug: z.string().regex(SLUG_RE),
  name: z.string().min(1),
  hosts: z.array(z.string()).min(1),
  settings: tenantSettingsSchema.partial().optional(),
  /** A demo municipality with invented data: applied only when the demo is wanted (config.demoWanted). */
  demo: z.boolean().optional(),
});

export type TenantFile = { slug: string; name: string; hosts: TenantHost[]; settings?: Partial<TenantSettings>; demo?: boolean };

export function readTenantFiles(dir: string): TenantFile[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json')).sort();
  } catch (err) {
    // Only a folder that does not exist means "no tenant files"; one that cannot be read (EACCES, ENOTDIR, EIO)
    // stops the sync with its cause instead of silently serving no tenant file (issue 22).
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new Error(`${dir}: the tenants folder cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { cause: err });
  }
  return names.map((n) => {
    const file = path.join(dir, n);
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new Error(`${file}: not valid JSON (${(err as Error).message})`);
    }
    const parsed = tenantFileSchema.safeParse(json);
    if (!parsed.success) throw new Error(`${file}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    return { ...parsed.data, hosts: parsed.data.hosts.map(parseHostArgument) };
  });
}

/**
 * Applies `tenants/*.json` to the registry (D1). Files marked `"demo": true` only with `demo` (the embedded
 * database, `--demo` or DEMO=1); their slugs are returned as `skipped` otherwise.
 *
 * Cheap when nothing changed (issue 10): one registry read, each file compared with its tenant (name, hosts
 * in order, the settings it names), only new or changed tenants written, then one version check over the
 * files' schemas and only the schemas behind migrated (new ones included), `concurrency` at once.
 */
export async function syncTenants(
  orm: Orm,
  dir: string,
  opts: { demo: boolean; concurrency?: number; progress?: Progress },
): Promise<{ tenants: Tenant[]; skipped: string[]; written: string[]; failed: string[] }> {
  const skipped: string[] = [];
  const files: Omit<TenantFile, 'demo'>[] = [];
  for (const { demo, ...f } of readTenantFiles(dir)) {
    if (demo && !opts.demo) skipped.push(f.slug);
    else files.push(f);
  }
  const db = executorOf(orm);
  const before = new Map((await loadTenants(db)).map((t) => [t.slug, t]));
  const written: string[] = [];
  for (const f of files) {
    if (!SLUG_RE.test(f.slug)) throw new Error(`invalid slug "${f.slug}": use [a-z][a-z0-9-]{1,40}`);
    if (f.hosts.length === 0) throw new Error('a tenant needs at least one --host');
    const t = before.get(f.slug);
    if (t && !fileDiffers(f, t)) continue;
    await upsertTenant(db, { ...f, replaceHosts: true });
    written.push(f.slug);
  }
  const after = written.length ? new Map((await loadTenants(db)).map((t) => [t.slug, t])) : before;
  const tenants = files.map((f) => after.get(f.slug)!);
  const { failed } = await migrateAll(orm, opts.progress, { tenants, concurrency: opts.concurrency });
  if (failed.length) throw new Error(`${failed.length} tenant schema(s) could not be migrated: ${failed.join(', ')}`);
  return { tenants, skipped, written, failed };
}

/** Whether applying the file would change the tenant: name, hosts (order and base paths), a named setting. */
function fileDiffers(f: Omit<TenantFile, 'demo'>, t: Tenant): boolean {
  if (f.name !== t.name) return true;
  if (f.hosts.length !== t.hosts.length || f.hosts.some((h, i) => h.host !== t.hosts[i]!.host || h.basePath !== t.hosts[i]!.basePath)) return true;
  const current = t.settings as Record<string, unknown>;
  return Object.entries(f.settings ?? {}).some(([k, v]) => JSON.stringify(v) !== JSON.stringify(current[k]));
}
