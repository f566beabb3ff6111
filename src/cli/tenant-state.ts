import { formatHostArgument, parseHostArgument } from '../platform/tenancy/tenant.js';
import { asUsage, expectPositionals, expectSlug, parseCommandArgs } from './args.js';
import { CommandError, UsageError } from './errors.js';
import { synopsis } from './help.js';
import { note, out } from './output.js';
import { requireTenant, withRuntime } from './runtime.js';
import { tenantLine } from './tenant-format.js';

// Issue 24: `tenant suspend|resume` and `tenant host add|remove`. Every running process sees the change within
// the registry's refresh (2 s, D10: 5 s), without a restart.

const asCommandError = (error: unknown) => {
  throw new CommandError(error instanceof Error ? error.message : String(error));
};

export async function suspendCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseCommandArgs('tenant suspend', args, { reason: { type: 'string' } });
  expectPositionals(synopsis('tenant suspend'), positionals, 1, 1);
  const slug = expectSlug(positionals[0]!);
  const reason = values.reason?.trim().replace(/\s+/g, ' ') || null;
  if (values.reason !== undefined && !reason) throw new UsageError('--reason must not be empty');
  if (reason && reason.length > 300) throw new UsageError('--reason takes at most 300 characters (callers read it in every answer)');
  await withRuntime(async ({ db }) => {
    await requireTenant(db, slug);
    const { setTenantSuspension } = await import('../platform/tenancy/registry.js');
    await setTenantSuspension(db, slug, { reason });
    note(`suspended tenant "${slug}": its hosts answer 503 within seconds, its jobs and mail wait; its data is kept ("tenant resume ${slug}" ends it)`);
  });
}

export async function resumeCommand(args: string[]): Promise<void> {
  const { positionals } = parseCommandArgs('tenant resume', args, {});
  expectPositionals(synopsis('tenant resume'), positionals, 1, 1);
  const slug = expectSlug(positionals[0]!);
  await withRuntime(async ({ db }) => {
    const tenant = await requireTenant(db, slug);
    if (!tenant.suspended) {
      note(`tenant "${slug}" is not suspended`);
      return;
    }
    const { setTenantSuspension } = await import('../platform/tenancy/registry.js');
    await setTenantSuspension(db, slug, null);
    note(`resumed tenant "${slug}": its hosts answer again within seconds; waiting jobs and mail run within a minute or two`);
  });
}

async function addHost(args: string[]): Promise<void> {
  const { positionals } = parseCommandArgs('tenant host add', args, {});
  expectPositionals(synopsis('tenant host add'), positionals, 2, 2);
  const slug = expectSlug(positionals[0]!);
  const host = asUsage(() => parseHostArgument(positionals[1]!));
  await withRuntime(async ({ db }) => {
    await requireTenant(db, slug);
    const { addTenantHost } = await import('../platform/tenancy/registry.js');
    await addTenantHost(db, slug, host).catch(asCommandError);
    note(`tenant "${slug}" now answers on ${formatHostArgument(host)} (API ${host.basePath === '/' ? 'at /' : `below ${host.basePath}`})`);
    await out(tenantLine(await requireTenant(db, slug)));
  });
}

async function removeHost(args: string[]): Promise<void> {
  const { positionals } = parseCommandArgs('tenant host remove', args, {});
  expectPositionals(synopsis('tenant host remove'), positionals, 2, 2);
  const slug = expectSlug(positionals[0]!);
  // The host name alone names it; a base path given along (as `tenant list` prints it) is ignored.
  const { host } = asUsage(() => parseHostArgument(positionals[1]!));
  await withRuntime(async ({ db }) => {
    await requireTenant(db, slug);
    const { removeTenantHost } = await import('../platform/tenancy/registry.js');
    const removed = await removeTenantHost(db, slug, host).catch(asCommandError);
    if (!removed) throw new CommandError(`tenant "${slug}" has no host "${host}"`);
    note(`tenant "${slug}" no longer answers on ${host}`);
    await out(tenantLine(await requireTenant(db, slug)));
  });
}

export async function hostCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'add':
      return addHost(rest);
    case 'remove':
      return removeHost(rest);
    case undefined:
      throw new UsageError(`tenant host needs add or remove: usage: ${synopsis('tenant host add')} | ${synopsis('tenant host remove')}`);
    default:
      throw new UsageError(`unknown command "tenant host ${sub}": use add or remove`);
  }
}
