import { parseId } from '../platform/http/ids.js';
import { expectPositionals, expectSlug, parseCommandArgs } from './args.js';
import { CommandError, UsageError } from './errors.js';
import { note, out, outJson } from './output.js';
import { requireTenant, withRuntime } from './runtime.js';

// `mail list <slug> [--failed]` and `mail retry <slug> <uuid>|--all-failed` (D9, issue 9): the operator's view of
// a municipality's outbox. Lines carry the mail's uuid, kind, state, attempts, times and the last SMTP error,
// never a recipient or a text (families' personal data stays in the database):
//   <uuid>\t<kind>\t<sent|waiting|failed>\t<attempts>\t<createdAt>\t<sentAt or next attempt or ->\t<last error or ->
const LIST = 'mail list <slug> [--failed] [--limit <n>] [--json]';
const RETRY = 'mail retry <slug> <mail-uuid>|--all-failed';

async function list(args: string[]): Promise<void> {
  const { values, positionals } = parseCommandArgs('mail list', args, { failed: { type: 'boolean' }, limit: { type: 'string' }, json: { type: 'boolean' } });
  expectPositionals(LIST, positionals, 1, 1);
  const slug = expectSlug(positionals[0]!);
  const limit = values.limit === undefined ? 100 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError(`--limit takes a whole number from 1 to 10000, not "${values.limit}"`);
  await withRuntime(async ({ db }) => {
    const tenant = await requireTenant(db, slug);
    const { listOutbox } = await import('../platform/mail/outbox.js');
    const rows = await listOutbox(db, tenant.schema, { failedOnly: values.failed ?? false, limit });
    if (values.json) {
      const iso = (v: string | null) => (v ? new Date(v).toISOString() : null);
      return outJson(rows.map((r) => ({ ...r, createdAt: iso(r.createdAt), sentAt: iso(r.sentAt), nextAttemptAt: iso(r.nextAttemptAt) })));
    }
    for (const r of rows) {
      const when = r.sentAt ?? r.nextAttemptAt;
      await out([r.uuid, r.kind, r.state, r.attempts, new Date(r.createdAt).toISOString(), when ? new Date(when).toISOString() : '-', r.lastError ?? '-'].join('\t'));
    }
    if (rows.length === 0) note(values.failed ? `no failed mail for "${slug}"` : `no mail for "${slug}"`);
  });
}

async function retry(args: string[]): Promise<void> {
  const { values, positionals } = parseCommandArgs('mail retry', args, { 'all-failed': { type: 'boolean' } });
  expectPositionals(RETRY, positionals, 1, 2);
  const slug = expectSlug(positionals[0]!);
  const uuid = positionals[1] === undefined ? null : parseId(positionals[1]);
  if (positionals[1] !== undefined && !uuid) throw new UsageError(`"${positionals[1]}" is not a mail's uuid`);
  if (!uuid === !values['all-failed']) throw new UsageError(`name one failed mail or --all-failed: ${RETRY}`);
  await withRuntime(async ({ db }) => {
    const tenant = await requireTenant(db, slug);
    const { retryFailed } = await import('../platform/mail/outbox.js');
    const n = await retryFailed(db, tenant.schema, uuid ? { uuid } : { allFailed: true });
    if (uuid && n === 0) throw new CommandError(`no failed mail ${uuid} for "${slug}" (it was sent, is still being retried, or does not exist)`);
    note('the workers send them within a minute (the outbox sweep)');
    await out(`${slug}\tretried=${n}`);
  });
}

export async function mailCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'list':
      return list(rest);
    case 'retry':
      return retry(rest);
    case undefined:
      throw new UsageError(`mail needs a subcommand: ${LIST} | ${RETRY}`);
    default:
      throw new UsageError(`unknown command "mail ${sub}": use ${LIST} | ${RETRY}`);
  }
}
