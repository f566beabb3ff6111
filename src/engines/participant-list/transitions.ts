import type { EntityManager } from '@mikro-orm/postgresql';
import { applyTransition, freesPlaceForRefill, notAllowedDetail, type AttendanceTransition } from '../../domain/attendance-states.js';
import { beyondCapacityReason, confirmsBeyondCapacity } from '../../domain/participant-list.js';
import type { ServiceContext } from '../../platform/context.js';
import { roleOf } from '../../platform/auth/viewer.js';
import { dbOf } from '../../platform/context.js';
import { inSchema, sql, type Executor } from '../../platform/db/sql.js';
import { recordEvents } from '../../platform/events/events.js';
import { conflict } from '../../domain/errors.js';
import type { Attendance } from '../../resources/attendances/entity.js';
import { syncCharges } from '../ledger/index.js';
import { queueDecisionMail } from './decision-mail.js';
import { accountsOf, statusChanged } from './events.js';
import { reorderList, type LockedOffer } from './lock.js';
import { refillIfFirstComeRunning } from './refill.js';

/**
 * Applies a transition to an application whose offer's row is locked (lock.ts), in the caller's transaction:
 * the state (409 when impossible), the list order, the charge (D8), the e-mail and, for a freed place during a
 * running first-come-first-served phase, the refill job. Also used by a receipt's reversal with `withdraw`.
 */
export async function transitionLocked(
  ctx: ServiceContext, em: EntityManager, offer: LockedOffer, a: Attendance, name: AttendanceTransition,
  opts: { commit: boolean; notify: boolean; cause?: string; eventCause?: 'reversal' },
): Promise<void> {
  const db = dbOf(em);
  const result = applyTransition(a.status, name);
  if (!result.ok) throw conflict(notAllowedDetail(a.status, name));
  const now = new Date();
  a.status = result.to;
  a.statusChangedAt = now;
  if (result.to === 'confirmed') a.confirmedAt = now;
  // Spec 4.3: `commit: false` holds the decision back (no fee due, family not told); otherwise it is final.
  a.heldBack = !opts.commit;
  a.decisionReason = null;
  // Issue 13: the team may confirm past the offer's capacity; that is recorded on the application.
  if (result.to === 'confirmed' && result.from !== 'confirmed') {
    const others = await confirmedCount(ctx, db, offer.uuid, a.uuid);
    if (confirmsBeyondCapacity(offer.maxParticipants, others)) a.decisionReason = beyondCapacityReason(roleOf(ctx.viewer));
  }
  a.modifiedAt = now;
  await em.flush();
  // Spec 3.2: transitions also update payment records (D8 charge / cancellation).
  await syncCharges(db, ctx.tenant.schema, [a.uuid]);
  await reorderList(ctx, db, offer.uuid);
  const account = (await accountsOf(db, ctx.tenant.schema, [a.participantUuid])).get(a.participantUuid);
  await recordEvents(ctx, db, [statusChanged(
    { attendance: a.uuid, offer: offer.uuid, edition: offer.editionUuid, participant: a.participantUuid, account },
    { from: result.from, to: result.to, heldBack: a.heldBack, decisionReason: a.decisionReason, cause: opts.eventCause ?? 'transition' },
  )]);
  if (opts.notify) await queueDecisionMail(ctx, db, a.uuid, opts.cause ?? `transition:${name}`);
  // D10: a freed place moves the waiting list up during a running first-come-first-served phase (a job).
  if (freesPlaceForRefill(result.from, result.to)) await refillIfFirstComeRunning(ctx, db, offer);
}

/** Confirmed applications of a locked offer other than `except` (held-back confirmations hold a place too). */
export async function confirmedCount(ctx: ServiceContext, db: Executor, offerUuid: string, except: string | null): Promise<number> {
  const row = await inSchema(db, ctx.tenant.schema).selectFrom('attendances').select(sql<number>`count(*)::int`.as('n'))
    .where('offer_uuid', '=', offerUuid).where('status', '=', 'confirmed').where(sql<boolean>`uuid is distinct from ${except}::uuid`)
    .executeTakeFirst();
  return row?.n ?? 0;
}
