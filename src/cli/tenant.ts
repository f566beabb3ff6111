import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { schemaNameFor, parseHostArgument, type Tenant, type TenantHost } from '../platform/tenancy/tenant.js';
import { parseSettingAssignment, type TenantSettings } from '../platform/tenancy/settings.js';
import { asUsage, expectPositionals, expectSlug, parseCommandArgs } from './args.js';
import { CommandError, UsageError } from './errors.js';
import { field, note, out } from './output.js';
import { findTenant, withRuntime } from './runtime.js';

// `tenant add|set|list|remove|sync` (D1).

/**
 * A host as `tenant list` prints it: the host name alone, as D10's `<host>` reads (the base path of each
 * host lives in the registry and in the tenant files).
 */
export function formatHost(h: TenantHost): string {
  return h.host;
}

/** `<slug>\t<host>[,<host>...]\t<name>` (D10). */
export function tenantLine(t: Tenant): string {
  return `${t.slug}\t${t.hosts.map(formatHost).join(',') || '-'}\t${field(t.name)}`;
}

function parseSettings(assignments: string[]): Partial<TenantSettings> {
  const settings: Record<string, unknown> = {};
  for (const a of assignments) {
    const { key, value } = asUsage(() => parseSettingAssignment(a));
    settings[key] = value;
  }
  return settings as Partial<TenantSettings>;
}

const ADD = 'tenant add <slug> --host <hostname>[/<basePath>]... [--name <text>] [--set key=value]...';

async function add(args: string[]): Promise<void> {
  const { values, positionals } = parseCommandArgs('tenant add', args, {
    host: { type: 'string', multiple: true },
    name: { type: 'string' },
    set: { type: 'string', multiple: true },
  });
  expectPositionals(ADD, positionals, 1, 1);
  const slug = expectSlug(positionals[0]);
  const hostArgs = values.host ?? [];
  if (hostArgs.length === 0) throw new UsageError(`tenant add needs at least one --host: usage: ${ADD}`);
  const hosts = hostArgs.map((h) => asUsage(() => parseHostArgument(h)));
  const seen = new Set<string>();
  for (const h of hosts) {
    if (seen.has(h.host)) throw new UsageError(`host "${h.host}" is given twice`);
    seen.add(h.host);
  }
  const name = values.name?.trim();
  if (values.name !== undefined && !name) throw new UsageError('--name must not be empty');
  const settings = parseSettings(values.set ?? []);

  await withRuntime(async ({ orm, db }) => {
    const { addTenant } = await import('../platform/tenancy/operations.js');
    const before = await findTenant(db, slug);
    // Without --name a re-run keeps the name the tenant has (addTenant would fall back to the slug).
    const tenant = await addTenant(orm, { slug, name: name ?? before?.name, hosts, settings });
    note(before ? `updated tenant "${slug}" (schema ${tenant.schema} migrated)` : `added tenant "${slug}" with schema ${tenant.schema}`);
    await out(tenantLine(tenant));
  });
}

const SET = 'tenant set <slug> key=value...';

async function set(args: string[]): Promise<void> {
  const { positionals } = parseCommandArgs('tenant set', args, {});
  expectPositionals(SET, positionals, 2, Infinity);
  const slug = expectSlug(positionals[0]);
  const settings = parseSettings(positionals.slice(1));
  await withRuntime(async ({ orm }) => {
    const { setTenant } = await import('../platform/tenancy/operations.js');
    await setTenant(orm, slug, settings).catch((error: unknown) => {
      throw new CommandError(error instanceof Error ? error.message : String(error));
    });
    note(`updated tenant "${slug}": ${Object.entries(settings).map(([k, v]) => `${k}=${String(v)}`).join(' ')}`);
  });
}

async function list(args: string[]): Promise<void> {
  const { positionals } = parseCommandArgs('tenant list', args, {});
  expectPositionals('tenant list', positionals, 0, 0);
  await withRuntime(async ({ db }) => {
    const { loadTenants } = await import('../platform/tenancy/registry.js');
    for (const t of await loadTenants(db)) await out(tenantLine(t));
  });
}

const REMOVE = 'tenant remove <slug> --yes';

async function remove(args: string[]): Promise<void> {
  const { values, positionals } = parseCommandArgs('tenant remove', args, { yes: { type: 'boolean' } });
  expectPositionals(REMOVE, positionals, 1, 1);
  const slug = expectSlug(positionals[0]);
  if (!values.yes) {
    throw new UsageError(`refusing to remove tenant "${slug}" without --yes: it drops schema ${schemaNameFor(slug)} with all its data`);
  }
  await withRuntime(async ({ orm }) => {
    const { removeTenant } = await import('../platform/tenancy/operations.js');
    await removeTenant(orm, slug).catch((error: unknown) => {
      throw new CommandError(error instanceof Error ? error.message : String(error));
    });
    note(`removed tenant "${slug}" and dropped schema ${schemaNameFor(slug)}`);
  });
}

/** Each file must at least be JSON; readTenantFiles would report a syntax error without the file's name. */
function checkTenantFolder(dir: string): number {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new CommandError(`tenant folder "${dir}" does not exist`);
  const files = readdirSync(dir).filter((n) => n.endsWith('.json'));
  for (const n of files) {
    const file = path.join(dir, n);
    try {
      JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      throw new CommandError(`${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return files.length;
}

async function sync(args: string[]): Promise<void> {
  const { values, positionals } = parseCommandArgs('tenant sync', args, { demo: { type: 'boolean' } });
  expectPositionals('tenant sync [--demo]', positionals, 0, 0);
  await withRuntime(async ({ orm, config }) => {
    const { demoWanted } = await import('../platform/config.js');
    const dir = path.resolve(config.tenantsDir);
    if (checkTenantFolder(dir) === 0) {
      note(`no tenant files (*.json) in ${dir}`);
      return;
    }
    const { syncTenants } = await import('../platform/tenancy/operations.js');
    const synced = await syncTenants(orm, dir, { demo: values.demo === true || demoWanted(config) }).catch((error: unknown) => {
      throw new CommandError(error instanceof Error ? error.message : String(error));
    });
    for (const t of synced.tenants) await out(tenantLine(t));
    note(`applied ${synced.tenants.length} tenant file(s) from ${dir}`);
    for (const slug of synced.skipped) note(`skipped the demo municipality "${slug}" (DATABASE_URL is set): add --demo or DEMO=1 to apply it`);
  });
}

export async function tenantCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'add':
      return add(rest);
    case 'set':
      return set(rest);
    case 'list':
      return list(rest);
    case 'remove':
      return remove(rest);
    case 'sync':
      return sync(rest);
    case undefined:
      throw new UsageError('tenant needs a subcommand: add, set, list, remove or sync');
    default:
      throw new UsageError(`unknown command "tenant ${sub}": use add, set, list, remove or sync`);
  }
}
