import { refillCandidates, vacancies } from '../../domain/participant-list.js';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { anyOf, inSchema, sql, type Executor } from '../../platform/db/sql.js';
import { recordEvents } from '../../platform/events/events.js';
import { QUEUES, type TenantJobData } from '../../platform/jobs/queue.js';
import { syncCharges } from '../ledger/index.js';
import { firstComeRunning } from '../edition-phases/index.js';
import { queueDecisionMail } from './decision-mail.js';
import { accountsOf, statusChanged } from './events.js';
import { loadList, lockOffer, saveOrder, type ListRow, type LockedOffer } from './lock.js';

// ---- refill (spec 4.2, D5, D10) ---------------------------------------------------------------------

export const REFILL_REASON = 'Von der Warteliste nachgerückt';

/**
 * Whether the edition's decisions wait for a commit (D7): it has a lottery run no commit was asked for since
 * (`commit_requested_at` null), still being drawn or with decisions held back. Until then a refill's decisions
 * are held back too (spec 2.2 heldBack: no fee due, the family not told), and the commit releases them with the
 * rest. Nothing else holds a refill back (issue 22): a `commit: false` decision elsewhere in the edition, or a
 * first-come edition, leaves the move-ups final, charged and e-mailed, as D10 asks.
 */
async function editionAwaitsCommit(ctx: ServiceContext, db: Executor, editionUuid: string): Promise<boolean> {
  const tx = inSchema(db, ctx.tenant.schema);
  const row = await tx.selectNoFrom((eb) => eb.and([
    eb.exists(tx.selectFrom('edition_allocations as r').select(sql`1`.as('one'))
      .where('r.edition_uuid', '=', editionUuid).where('r.commit_requested_at', 'is', null)),
    eb.or([
      eb.exists(tx.selectFrom('edition_allocations as r').select(sql`1`.as('one'))
        .where('r.edition_uuid', '=', editionUuid).where('r.finished_at', 'is', null)),
      eb.exists(tx.selectFrom('attendances as a').innerJoin('offers as o', 'o.uuid', 'a.offer_uuid').select(sql`1`.as('one'))
        .where('o.edition_uuid', '=', editionUuid).where((w) => w.ref('a.held_back'))),
    ]),
  ]).as('pending')).executeTakeFirst();
  return !!row?.pending;
}

/**
 * Fills the offer's free places from its waiting list in participant-list order (`refillCandidates`): each
 * becomes a confirmation, final (charged, and with `notify` its family e-mailed) unless the edition still
 * awaits its commit, when it is held back like the lot's decisions; a decision already held back stays held
 * back. Call with the offer locked. Returns the applications moved up.
 */
export async function refillLocked(ctx: ServiceContext, db: Executor, offer: LockedOffer, notify: boolean): Promise<string[]> {
  const rows = await loadList(ctx, db, offer.uuid);
  const order = await saveOrder(ctx, db, rows);
  const sorted = rows.map((r) => ({ ...r, sorting: order.get(r.id)! })).sort((a, b) => a.sorting - b.sorting);
  const confirmed = sorted.filter((r) => r.status === 'confirmed').length;
  const moved = refillCandidates(sorted, vacancies(offer.maxParticipants, confirmed)).map((r) => r.id);
  if (moved.length === 0) return [];
  const holdBack = await editionAwaitsCommit(ctx, db, offer.editionUuid);
  const released = await inSchema(db, ctx.tenant.schema).updateTable('attendances')
    .set({
      status: 'confirmed', held_back: sql`held_back or ${holdBack}`, decision_reason: REFILL_REASON,
      confirmed_at: sql`now()`, status_changed_at: sql`now()`, modified_at: sql`now()`,
    })
    .where('uuid', '=', anyOf(moved))
    .returning(['uuid', 'held_back as heldBack'])
    .execute();
  // D8: the committed confirmations are charged (held-back ones are not due yet).
  await syncCharges(db, ctx.tenant.schema, moved);
  await saveOrder(ctx, db, sorted.map((r) => (moved.includes(r.id) ? { ...r, status: 'confirmed' as const } : r)));
  await recordRefillEvents(ctx, db, offer, sorted, released);
  if (notify) {
    for (const r of released) if (!r.heldBack) await queueDecisionMail(ctx, db, r.uuid, 'refill');
  }
  ctx.log.info({ offer: offer.uuid, moved: moved.length, heldBack: holdBack }, 'waiting list moved up');
  return moved;
}

/** Issue 14: each application moved up is a status change (cause `refill`), recorded in one statement. */
async function recordRefillEvents(ctx: ServiceContext, db: Executor, offer: LockedOffer, rows: ListRow[], released: { uuid: string; heldBack: boolean }[]): Promise<void> {
  const before = new Map(rows.map((r) => [r.id, r]));
  const accounts = await accountsOf(db, ctx.tenant.schema, released.map((r) => before.get(r.uuid)!.participant));
  await recordEvents(ctx, db, released.map((r) => {
    const participant = before.get(r.uuid)!.participant;
    return statusChanged(
      { attendance: r.uuid, offer: offer.uuid, edition: offer.editionUuid, participant, account: accounts.get(participant) },
      { from: before.get(r.uuid)!.status, to: 'confirmed', heldBack: r.heldBack, decisionReason: REFILL_REASON, cause: 'refill' },
    );
  }));
}

export type RefillJob = { tenant: string; offer: string; notify: boolean };

/**
 * Asks for a refill of the offer (spec 4.2, D9): a job written in the caller's transaction, one queued per
 * offer (and `notify`) at a time, so a burst of freed places is one run after the burst. Without a job queue
 * (the CLI, tools) the refill runs at once, in the caller's transaction.
 */
export async function requestRefill(ctx: ServiceContext, db: Executor, offerUuid: string, notify: boolean): Promise<void> {
  if (ctx.jobs) {
    const job: RefillJob = { tenant: ctx.tenant.slug, offer: offerUuid, notify };
    await ctx.jobs.send(QUEUES.offerRefill, job, { db, singletonKey: `${ctx.tenant.slug}:${offerUuid}:${notify}` });
    return;
  }
  const offer = await lockOffer(ctx, db, offerUuid);
  if (offer) await refillLocked(ctx, db, offer, notify);
}

/**
 * D10: any change to a participant list during a running first-come-first-served phase (a freed place, a
 * transfer in, a larger `maxParticipants`) moves the waiting list up in the background, families e-mailed.
 */
export async function refillIfFirstComeRunning(ctx: ServiceContext, db: Executor, offer: { uuid: string; editionUuid: string }): Promise<void> {
  if (await firstComeRunning(ctx, db, offer.editionUuid)) await requestRefill(ctx, db, offer.uuid, true);
}

/**
 * D10: a larger `maxParticipants` during a running first-come-first-served phase moves the waiting list up
 * (families e-mailed). For the offers service, inside its transaction, after the offer row was updated.
 */
export async function refillAfterCapacityChange(ctx: ServiceContext, db: Executor, offerUuid: string, before: number | null, after: number | null): Promise<void> {
  const grew = before !== null && (after === null || after > before);
  if (!grew) return;
  const offer = await lockOffer(ctx, db, offerUuid);
  if (offer) await refillIfFirstComeRunning(ctx, db, offer);
}

/** The `offer-refill` job (src/jobs.ts). An offer deleted meanwhile has nothing to refill. */
export async function runRefillJob(ctx: ServiceContext, data: TenantJobData): Promise<void> {
  if (typeof data.offer !== 'string') throw new Error('job data: offer missing');
  const offerUuid = data.offer;
  await ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const offer = await lockOffer(ctx, db, offerUuid);
    if (offer) await refillLocked(ctx, db, offer, data.notify !== false);
  });
}
