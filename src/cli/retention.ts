import { expectPositionals, expectSlug, parseCommandArgs } from './args.js';
import { UsageError } from './errors.js';
import { systemViewer } from '../platform/auth/viewer.js';
import { note, out } from './output.js';
import { requireTenant, withRuntime } from './runtime.js';

// `retention run <slug> [--dry-run]` (D9, issue 9): pseudonymises the tenant's participants whose offers all ended
// more than `retentionWeeks` ago, and the accounts left without a living child (docs/decisions.md "Retention"),
// the same use case as the daily job. With --dry-run nothing is changed. Prints uuids only, never a name:
//   participant\t<uuid>     one line per participant pseudonymised (or due, with --dry-run)
//   account\t<uuid>         one line per account whose personal data was removed (or would be)
//   <slug>\t<done|dry-run>\tparticipants=<n>\taccounts=<n>\tapplications=<n>     last line
const SYNOPSIS = 'retention run <slug> [--dry-run]';

async function run(args: string[]): Promise<void> {
  const { values, positionals } = parseCommandArgs('retention run', args, { 'dry-run': { type: 'boolean' } });
  expectPositionals(SYNOPSIS, positionals, 1, 1);
  const slug = expectSlug(positionals[0]);
  const dryRun = values['dry-run'] ?? false;
  await withRuntime(async ({ orm, db, log }) => {
    const tenant = await requireTenant(db, slug);
    const [{ migrateTenantSchema }, { runRetention }] = await Promise.all([
      import('../platform/db/orm.js'),
      import('../resources/retention/service.js'),
    ]);
    // The run needs the tenant's schema up to date (the retention columns); a no-op when it is.
    const applied = await migrateTenantSchema(orm, tenant.schema);
    if (applied.length) note(`migrated tenant "${slug}": ${applied.join(', ')}`);
    const result = await runRetention({ tenant, em: orm.em.fork({ schema: tenant.schema }), viewer: systemViewer('cli'), log }, { dryRun });
    for (const uuid of result.participantUuids) await out(`participant\t${uuid}`);
    for (const uuid of result.accountUuids) await out(`account\t${uuid}`);
    note(dryRun
      ? `dry run on tenant "${slug}" (retentionWeeks ${tenant.settings.retentionWeeks}): nothing was changed`
      : `retention on tenant "${slug}" (retentionWeeks ${tenant.settings.retentionWeeks}) done in ${result.ms} ms`);
    await out([
      slug, dryRun ? 'dry-run' : 'done', `participants=${result.participantUuids.length}`,
      `accounts=${result.accountUuids.length}`, `applications=${result.applications}`,
    ].join('\t'));
  });
}

export async function retentionCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'run':
      return run(rest);
    case undefined:
      throw new UsageError(`retention needs a subcommand: ${SYNOPSIS}`);
    default:
      throw new UsageError(`unknown command "retention ${sub}": use ${SYNOPSIS}`);
  }
}
