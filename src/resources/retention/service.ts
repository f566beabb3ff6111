import { endedBefore, retentionCutoff } from '../../domain/retention.js';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { anyOf, inSchema } from '../../platform/db/sql.js';
import { purgeIdempotencyKeys } from '../../platform/http/idempotency.js';
import { purgeOutbox } from '../../platform/mail/outbox.js';
import { purgeEvents } from '../../platform/events/events.js';
import { purgeDeliveries } from '../../platform/webhooks/purge.js';
import type { TenantJobData } from '../../platform/jobs/queue.js';
import { decide, dueAccounts, loadOffers, nextCandidates, NIL_UUID } from './reads.js';
import { pseudonymiseBatch, sweepAccounts } from './writes.js';

// Retention (D2 `retentionWeeks`, D9; docs/decisions.md "Retention"): pseudonymises the participants whose
// applications' offers all ended more than `retentionWeeks` ago, and the family accounts left without a living
// child. The rules are in src/domain/retention.ts; this is the use case: read, decide, write in batches.
//
// - Batched: at most `batchSize` participants (default 500) per transaction; each batch commits on its own, so a
//   run that dies keeps what it finished and the next run carries on.
// - Idempotent: only participants not yet pseudonymised and accounts that still hold personal data are looked at;
//   a second run finds nothing and writes nothing.
// - Safe against concurrent writes: a batch locks its participants (`for update`, which also waits for and blocks
//   a new application's foreign-key lock) and decides again on what is committed then, before writing.
// - Logs counts only, never a name or an address.

export const RETENTION_BATCH_SIZE = 500;

export type RetentionOptions = {
  /** Only report what would be done. */
  dryRun?: boolean;
  /** Participants per transaction. */
  batchSize?: number;
  /** The moment the retention period is measured back from (tests). */
  now?: Date;
};

export type RetentionResult = {
  dryRun: boolean;
  /** Participants pseudonymised (or due, with dryRun), in uuid order. */
  participantUuids: string[];
  /** Accounts whose personal data was removed (or would be). */
  accountUuids: string[];
  /** Applications that kept the age and now show the pseudonym. */
  applications: number;
  /** Debtors that keep a name for their receipts. */
  retainedDebtorNames: number;
  batches: number;
  ms: number;
};

/** Runs retention for the context's tenant (D9): see the header. */
export async function runRetention(ctx: ServiceContext, opts: RetentionOptions = {}): Promise<RetentionResult> {
  const started = Date.now();
  const dryRun = opts.dryRun ?? false;
  const batchSize = opts.batchSize ?? RETENTION_BATCH_SIZE;
  const cutoff = retentionCutoff(opts.now ?? new Date(), ctx.tenant.settings.retentionWeeks);
  const db = dbOf(ctx.em);
  const offers = await loadOffers(ctx, db);
  const notEnded = [...offers].filter(([, o]) => !endedBefore(o.end, cutoff)).map(([uuid]) => uuid);

  const participants: string[] = [];
  const accounts: string[] = [];
  let applications = 0;
  let retained = 0;
  let batches = 0;
  let after = NIL_UUID;
  for (;;) {
    const page = await nextCandidates(ctx, db, after, notEnded, cutoff, batchSize);
    if (page.length === 0) break;
    after = page[page.length - 1].uuid;
    const due = page.filter((c) => decide(c, offers, cutoff));
    if (due.length === 0) continue;
    if (dryRun) {
      participants.push(...due.map((c) => c.uuid));
      applications += due.reduce((n, c) => n + c.offers.length, 0);
      continue;
    }
    const done = await pseudonymiseBatch(ctx, due.map((c) => c.uuid), offers, cutoff);
    batches++;
    participants.push(...done.participants);
    accounts.push(...done.accounts);
    applications += done.applications;
    retained += done.retained;
  }
  if (dryRun) {
    // The families of the children that would go, then those without any child.
    const ids = participants.length === 0 ? [] : (await inSchema(db, ctx.tenant.schema).selectFrom('participants')
      .select('account_uuid as accountUuid').distinct()
      .where('uuid', '=', anyOf(participants)).where('account_uuid', 'is not', null)
      .execute()).map((r) => r.accountUuid!);
    accounts.push(...(await dueAccounts(ctx, db, ids, participants, cutoff)));
  }
  const swept = await sweepAccounts(ctx, cutoff, dryRun ? participants : [], dryRun, batchSize);
  const accountUuids = [...new Set([...accounts, ...swept.accounts])].sort();
  const result: RetentionResult = {
    dryRun,
    participantUuids: participants,
    accountUuids,
    applications,
    retainedDebtorNames: retained + swept.retained,
    batches: batches + swept.batches,
    ms: Date.now() - started,
  };
  // Counts only: never a name, an address or a uuid list in the log.
  ctx.log.info({
    tenant: ctx.tenant.slug, dryRun, retentionWeeks: ctx.tenant.settings.retentionWeeks,
    participants: participants.length, accounts: accountUuids.length, applications,
    retainedDebtorNames: result.retainedDebtorNames, batches: result.batches, ms: result.ms,
  }, dryRun ? 'retention dry run' : 'retention run');
  return result;
}

/**
 * The `retention` job (D9): one tenant's daily run; idempotent, so a retried or repeated job is harmless. Old
 * e-mails (addresses, children's first names) go too (src/platform/mail/outbox.ts `purgeOutbox`), and so do the
 * stored answers of Idempotency-Keys past their 24 hours (they can hold a child's data).
 */
export async function runRetentionJob(ctx: ServiceContext, _data: TenantJobData): Promise<void> {
  await runRetention(ctx);
  const purged = await purgeOutbox(dbOf(ctx.em), ctx.tenant.schema);
  if (purged > 0) ctx.log.info({ tenant: ctx.tenant.slug, purged }, 'old e-mails deleted');
  const keys = await purgeIdempotencyKeys(dbOf(ctx.em), ctx.tenant.schema);
  if (keys > 0) ctx.log.info({ tenant: ctx.tenant.slug, keys }, 'expired idempotency keys deleted');
  // Issue 14: the event feed keeps 30 days.
  const events = await purgeEvents(dbOf(ctx.em), ctx.tenant.schema);
  if (events > 0) ctx.log.info({ tenant: ctx.tenant.slug, events }, 'old events deleted');
  // Issue 14: webhook delivery attempts are kept as long as their events.
  const deliveries = await purgeDeliveries(dbOf(ctx.em), ctx.tenant.schema);
  if (deliveries > 0) ctx.log.info({ tenant: ctx.tenant.slug, deliveries }, 'old webhook deliveries deleted');
}
