import type { Selectable } from 'kysely';
import { sql, type ControlDB, type Executor } from '../db/sql.js';
import { settingsWithDefaults, type TenantSettings } from './settings.js';
import { schemaNameFor, type Tenant, type TenantHost } from './tenant.js';

// D1: the tenant registry in the control schema is the source of truth at run time. Each process keeps a
// snapshot for at most REFRESH_MS, so a tenant or setting changed by another process is served within
// seconds (D10: 5 s) without a restart.
const REFRESH_MS = 2000;

type Snapshot = { tenants: Map<string, Tenant>; byHost: Map<string, { tenant: Tenant; basePath: string }> };

export class TenantRegistry {
  private snapshot: Snapshot | null = null;
  private loadedAt = 0;
  private loading: Promise<Snapshot> | null = null;

  constructor(private readonly db: Executor, private readonly refreshMs = REFRESH_MS) {}

  async resolveHost(host: string): Promise<{ tenant: Tenant; basePath: string } | null> {
    return (await this.current()).byHost.get(host) ?? null;
  }

  async get(slug: string): Promise<Tenant | null> {
    return (await this.current()).tenants.get(slug) ?? null;
  }

  async list(): Promise<Tenant[]> {
    return [...(await this.current()).tenants.values()];
  }

  invalidate(): void {
    this.loadedAt = 0;
  }

  private async current(): Promise<Snapshot> {
    if (this.snapshot && Date.now() - this.loadedAt < this.refreshMs) return this.snapshot;
    // One load at a time; concurrent requests share it.
    this.loading ??= this.load().finally(() => (this.loading = null));
    const snap = await this.loading;
    return snap;
  }

  private async load(): Promise<Snapshot> {
    const tenants = await loadTenants(this.db);
    const snap: Snapshot = { tenants: new Map(), byHost: new Map() };
    for (const t of tenants) {
      snap.tenants.set(t.slug, t);
      for (const h of t.hosts) snap.byHost.set(h.host, { tenant: t, basePath: h.basePath });
    }
    this.snapshot = snap;
    this.loadedAt = Date.now();
    return snap;
  }
}

export async function loadTenants(db: Executor): Promise<Tenant[]> {
  // Raw: the hosts come as one json_agg per tenant, a projection plainer in SQL.
  const rows = await sql<Pick<Selectable<ControlDB['control.tenants']>, 'slug' | 'name' | 'schema_name' | 'settings' | 'suspended_at' | 'suspended_reason'> & { hosts: TenantHost[] | null }>`
    select t.slug, t.name, t.schema_name, t.settings, t.suspended_at, t.suspended_reason,
      (select json_agg(json_build_object('host', h.host, 'basePath', h.base_path) order by h.position, h.host)
         from control.tenant_hosts h where h.tenant_slug = t.slug) as hosts
    from control.tenants t order by t.slug`.execute(db);
  return rows.rows.map((r) => ({
    slug: r.slug,
    name: r.name,
    schema: r.schema_name,
    hosts: r.hosts ?? [],
    settings: settingsWithDefaults(r.settings),
    ...(r.suspended_at ? { suspended: { since: r.suspended_at, reason: r.suspended_reason } } : {}),
  }));
}

/** The tenants whose jobs and mail run now: every registered one but the suspended (issue 24). */
export async function activeTenants(db: Executor): Promise<Tenant[]> {
  return (await loadTenants(db)).filter((t) => !t.suspended);
}

/**
 * Registers or updates a tenant's row and hosts. Without a name an existing tenant keeps its own (a new one
 * is named after its slug). `replaceHosts` (tenant files are declarative) removes hosts no longer listed.
 */
export async function upsertTenant(
  db: Executor,
  input: { slug: string; name?: string; hosts: TenantHost[]; settings?: Partial<TenantSettings>; replaceHosts?: boolean },
): Promise<void> {
  const schema = schemaNameFor(input.slug);
  await db.transaction().execute(async (tx) => {
    await tx.insertInto('control.tenants')
      .values({ slug: input.slug, name: input.name ?? input.slug, schema_name: schema, settings: JSON.stringify(input.settings ?? {}) })
      .onConflict((oc) => oc.column('slug').doUpdateSet((eb) => ({
        name: eb.fn.coalesce(sql<string | null>`${input.name ?? null}::text`, eb.ref('control.tenants.name')),
        settings: sql`${eb.ref('control.tenants.settings')} || ${eb.ref('excluded.settings')}`,
        updated_at: sql`now()`,
      })))
      .execute();
    // Serialise host changes, so two tenants claiming one host cannot both succeed.
    await sql`select pg_advisory_xact_lock(hashtext('hp:tenant-hosts'))`.execute(tx);
    for (const [i, h] of input.hosts.entries()) {
      const owner = await tx.selectFrom('control.tenant_hosts').select('tenant_slug').where('host', '=', h.host).executeTakeFirst();
      if (owner && owner.tenant_slug !== input.slug) {
        throw new Error(`host "${h.host}" already belongs to tenant "${owner.tenant_slug}"`);
      }
      await tx.insertInto('control.tenant_hosts').values({ host: h.host, tenant_slug: input.slug, base_path: h.basePath, position: i })
        .onConflict((oc) => oc.column('host').doUpdateSet((eb) => ({ base_path: eb.ref('excluded.base_path'), position: eb.ref('excluded.position') })))
        .execute();
    }
    if (input.replaceHosts) {
      await tx.deleteFrom('control.tenant_hosts').where('tenant_slug', '=', input.slug)
        .where(sql<boolean>`not (host = any(${input.hosts.map((h) => h.host)}::text[]))`).execute();
    }
  });
}

export async function setTenantSettings(db: Executor, slug: string, settings: Partial<TenantSettings>): Promise<boolean> {
  const res = await db.updateTable('control.tenants')
    .set({ settings: sql`settings || ${JSON.stringify(settings)}::jsonb`, updated_at: sql`now()` })
    .where('slug', '=', slug).executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Issue 24: suspends (with an optional reason for the 503's sentence) or, with `null`, resumes a tenant. */
export async function setTenantSuspension(db: Executor, slug: string, suspension: { reason: string | null } | null): Promise<boolean> {
  const res = await db.updateTable('control.tenants')
    .set(suspension
      ? { suspended_at: sql`coalesce(suspended_at, now())`, suspended_reason: suspension.reason, updated_at: sql`now()` }
      : { suspended_at: null, suspended_reason: null, updated_at: sql`now()` })
    .where('slug', '=', slug).executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Issue 24: adds a host (or changes its base path) at the end of a tenant's hosts; refused when another tenant has it. */
export async function addTenantHost(db: Executor, slug: string, host: TenantHost): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await sql`select pg_advisory_xact_lock(hashtext('hp:tenant-hosts'))`.execute(tx);
    const owner = await tx.selectFrom('control.tenant_hosts').select('tenant_slug').where('host', '=', host.host).executeTakeFirst();
    if (owner && owner.tenant_slug !== slug) throw new Error(`host "${host.host}" already belongs to tenant "${owner.tenant_slug}"`);
    const last = await tx.selectFrom('control.tenant_hosts').select((eb) => eb.fn.max('position').as('max')).where('tenant_slug', '=', slug).executeTakeFirst();
    await tx.insertInto('control.tenant_hosts').values({ host: host.host, tenant_slug: slug, base_path: host.basePath, position: (last?.max ?? -1) + 1 })
      .onConflict((oc) => oc.column('host').doUpdateSet((eb) => ({ base_path: eb.ref('excluded.base_path') })))
      .execute();
    await tx.updateTable('control.tenants').set({ updated_at: sql`now()` }).where('slug', '=', slug).execute();
  });
}

/** Issue 24: removes one host of a tenant; a tenant keeps at least one. False when the tenant does not have it. */
export async function removeTenantHost(db: Executor, slug: string, host: string): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    await sql`select pg_advisory_xact_lock(hashtext('hp:tenant-hosts'))`.execute(tx);
    const hosts = await tx.selectFrom('control.tenant_hosts').select('host').where('tenant_slug', '=', slug).execute();
    if (!hosts.some((h) => h.host === host)) return false;
    if (hosts.length === 1) throw new Error(`"${host}" is the only host of tenant "${slug}": add another one first (a tenant needs at least one host)`);
    await tx.deleteFrom('control.tenant_hosts').where('host', '=', host).where('tenant_slug', '=', slug).execute();
    await tx.updateTable('control.tenants').set({ updated_at: sql`now()` }).where('slug', '=', slug).execute();
    return true;
  });
}

export async function deleteTenantRow(db: Executor, slug: string): Promise<boolean> {
  const res = await db.deleteFrom('control.tenants').where('slug', '=', slug).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}
