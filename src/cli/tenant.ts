import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { schemaNameFor, parseHostArgument } from '../platform/tenancy/tenant.js';
import { parseSettingAssignment, type TenantSettings } from '../platform/tenancy/settings.js';
import { asUsage, expectPositionals, expectSlug, parseCommandArgs } from './args.js';
import { CommandError, UsageError } from './errors.js';
import { synopsis } from './help.js';
import { field, note, out, outJson } from './output.js';
import { findTenant, requireTenant, withRuntime } from './runtime.js';
import { exportCommand, importCommand } from './tenant-archive.js';
import { tenantJson, tenantLine } from './tenant-format.js';
import { hostCommand, resumeCommand, suspendCommand } from './tenant-state.js';

// `tenant add|set|list|show|remove|sync` (D1, issue 24); suspend, resume and hosts: tenant-state.ts; export and
// import: tenant-archive.ts.

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
  const { values, positionals } = parseCommandArgs('tenant list', args, { json: { type: 'boolean' } });
  expectPositionals(synopsis('tenant list'), positionals, 0, 0);
  await withRuntime(async ({ db }) => {
    const { loadTenants } = await import('../platform/tenancy/registry.js');
    const tenants = await loadTenants(db);
    if (values.json) return outJson(tenants.map(tenantJson));
    for (const t of tenants) await out(tenantLine(t));
  });
}

async function show(args: string[]): Promise<void> {
  const { values, positionals } = parseCommandArgs('tenant show', args, { json: { type: 'boolean' } });
  expectPositionals(synopsis('tenant show'), positionals, 1, 1);
  const slug = expectSlug(positionals[0]);
  await withRuntime(async ({ db }) => {
    const { tenantOverview } = await import('../platform/tenancy/overview.js');
    const o = await tenantOverview(db, await requireTenant(db, slug));
    if (values.json) return outJson(o);
    const rows: [string, string][] = [
      ['slug', o.slug],
      ['name', o.name],
      ['state', o.suspended ? `suspended since ${o.suspended.since}${o.suspended.reason ? `: ${o.suspended.reason}` : ''}` : 'active'],
      ...o.hosts.map((h): [string, string] => ['host', `${h.argument} (${h.basePath === '/' ? 'API domain, API at /' : `API below ${h.basePath}`})`]),
      ['schema', `${o.schema} at ${o.schemaVersion.current ?? 'no migration'} (${o.schemaVersion.applied} of ${o.schemaVersion.expected}${o.schemaVersion.upToDate ? ', up to date' : ', behind: run migrate'})`],
      ...Object.entries(o.settings).map(([k, v]): [string, string] => ['setting', `${k}=${String(v)}`]),
      ...Object.entries(o.counts).map(([k, v]): [string, string] => [k, String(v)]),
      ['mail', `${o.mail.waiting} waiting${o.mail.oldestWaitingSince ? ` (oldest ${o.mail.oldestWaitingSince})` : ''}, ${o.mail.failed} failed`],
      ['webhooks', `${o.webhooks.enabled} enabled (${o.webhooks.failing} failing), ${o.webhooks.disabled} disabled`],
      ['last activity', o.lastActivity ?? '-'],
    ];
    for (const [k, v] of rows) await out(`${k.padEnd(14)}${field(v)}`);
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

const SUBCOMMANDS = 'add, set, list, show, suspend, resume, host, export, import, remove or sync';

export async function tenantCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'add':
      return add(rest);
    case 'set':
      return set(rest);
    case 'list':
      return list(rest);
    case 'show':
      return show(rest);
    case 'suspend':
      return suspendCommand(rest);
    case 'resume':
      return resumeCommand(rest);
    case 'host':
      return hostCommand(rest);
    case 'export':
      return exportCommand(rest);
    case 'import':
      return importCommand(rest);
    case 'remove':
      return remove(rest);
    case 'sync':
      return sync(rest);
    case undefined:
      throw new UsageError(`tenant needs a subcommand: ${SUBCOMMANDS}`);
    default:
      throw new UsageError(`unknown command "tenant ${sub}": use ${SUBCOMMANDS}`);
  }
}
