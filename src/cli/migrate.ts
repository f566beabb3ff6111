import cliProgress from 'cli-progress';
import { expectPositionals, parseCommandArgs } from './args.js';
import { CommandError, oneLine } from './errors.js';
import { note, out } from './output.js';
import { withRuntime } from './runtime.js';

// `migrate` (D1): the control schema, then every tenant schema (one version check finds those behind; they
// are migrated MIGRATE_CONCURRENCY at a time, default 8), with a progress bar on stderr (when it is a
// terminal) and a line per schema on stdout, in slug order:
//   control: applied <name>, <name>   |   control: up to date
//   tenant <slug>: applied <name>...  |   tenant <slug>: up to date   |   tenant <slug>: FAILED: <message>
// Exit 1 when any tenant schema failed; the others are migrated regardless.

function appliedText(applied: string[]): string {
  return applied.length ? `applied ${applied.join(', ')}` : 'up to date';
}

export async function migrateCommand(args: string[]): Promise<void> {
  const { positionals } = parseCommandArgs('migrate', args, {});
  expectPositionals('migrate', positionals, 0, 0);
  await withRuntime(async ({ orm, db, controlApplied }) => {
    const [{ loadTenants }, { migrateAll }] = await Promise.all([import('../platform/tenancy/registry.js'), import('../platform/tenancy/operations.js')]);
    await out(`control: ${appliedText(controlApplied)}`);
    const total = (await loadTenants(db)).length;
    const showBar = Boolean(process.stderr.isTTY) && total > 0;
    const bar = new cliProgress.SingleBar(
      { stream: process.stderr, format: 'migrating tenants [{bar}] {value}/{total} {slug}', hideCursor: true, clearOnComplete: true },
      cliProgress.Presets.shades_classic,
    );
    if (showBar) bar.start(total, 0, { slug: '' });
    const lines: Promise<void>[] = [];
    const { failed } = await migrateAll(orm, (e) => {
      const line = e.error ? `tenant ${e.slug}: FAILED: ${oneLine(e.error)}` : `tenant ${e.slug}: ${appliedText(e.applied)}`;
      // Clear the bar's line first when both streams share a terminal, then draw it again below.
      if (showBar && process.stdout.isTTY) process.stderr.write('\r\x1b[2K');
      lines.push(out(line));
      if (showBar) {
        if (e.total !== total) bar.setTotal(e.total);
        bar.update(e.index + 1, { slug: e.slug });
        bar.render();
      }
    });
    if (showBar) bar.stop();
    await Promise.all(lines);
    if (failed.length) throw new CommandError(`${failed.length} of ${total} tenant schema(s) failed to migrate: ${failed.join(', ')}`);
    note(`migrated the control schema and ${total} tenant schema(s)`);
  });
}
