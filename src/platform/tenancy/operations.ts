import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { dropTenantSchema, executorOf, migrateControl, migrateTenantSchema, type Orm } from '../db/orm.js';
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

/** Control schema first, then every tenant one after another; a failure is reported and the rest go on. */
export async function migrateAll(orm: Orm, progress?: Progress): Promise<{ failed: string[] }> {
  await migrateControl(orm);
  const tenants = await loadTenants(executorOf(orm));
  const failed: string[] = [];
  for (const [index, t] of tenants.entries()) {
    try {
      const applied = await migrateTenantSchema(orm, t.schema);
      progress?.({ slug: t.slug, index, total: tenants.length, applied });
    } catch (error) {
      failed.push(t.slug);
      progress?.({ slug: t.slug, index, total: tenants.length, applied: [], error });
    }
  }
  return { failed };
}

const tenantFileSchema = z.object({
  slug: z.string().regex(SLUG_RE),
  name: z.string().min(1),
  hosts: z.array(z.string()).min(1),
  settings: tenantSettingsSchema.partial().optional(),
});

export type TenantFile = { slug: string; name: string; hosts: TenantHost[]; settings?: Partial<TenantSettings> };

export function readTenantFiles(dir: string): TenantFile[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json')).sort();
  } catch {
    return [];
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

/** Applies `tenants/*.json` to the registry (D1). */
export async function syncTenants(orm: Orm, dir: string): Promise<Tenant[]> {
  const out: Tenant[] = [];
  for (const f of readTenantFiles(dir)) out.push(await addTenant(orm, { ...f, replaceHosts: true }));
  return out;
}
