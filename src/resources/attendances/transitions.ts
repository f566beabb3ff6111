import type { EntityManager } from '@mikro-orm/postgresql';
import {
  ATTENDANCE_TRANSITIONS, type AttendanceTransition, applyTransition, freesPlaceForRefill, isAttendanceTransition, isSystemTransition, notAllowedDetail, organiserMayApply,
} from '../../domain/attendance-states.js';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { beyondCapacityReason, confirmsBeyondCapacity } from '../../domain/participant-list.js';
import { qualified, sql, type Executor } from '../../platform/db/sql.js';
import { conflict, forbidden, invalid, violation } from '../../platform/http/problem.js';
import { syncCharges } from '../bookings/charges.js';
import { assertListEditable, viewerOf } from './access.js';
import { Attendance } from './entity.js';
import { accountsOf, statusChanged } from './events.js';
import { recordEvents } from '../../platform/events/events.js';
import { attendanceNotFound, offerOfAttendance, readAttendance } from './list.js';
import type { AttendanceOut, TransitionAttendanceInput } from './schema.js';
import { lockOffer, queueDecisionMail, refillIfFirstComeRunning, reorderList, type LockedOffer } from './writes.js';

// Spec 3.2, 3.4, 4.3 "Transition". The matrix and its messages are the domain's (attendance-states.ts).
// Order of checks: the application (404), the caller's right to change this list (403), the transition's
// name (422: unknown, or system-only await_email/await_consents), the caller's right to this transition
// (organisers never withdraw: 403), then the state (409 naming the current state and the possible ones);
// D10: permission before state.

export async function transitionAttendance(ctx: ServiceContext, input: TransitionAttendanceInput): Promise<AttendanceOut> {
  await ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const missing = () => attendanceNotFound(input.uuid);
    const offerUuid = await offerOfAttendance(ctx, db, input.uuid);
    if (!offerUuid) throw missing();
    await assertListEditable(ctx, db, offerUuid, missing);
    const name = input.transition;
    if (isSystemTransition(name)) {
      throw invalid([violation('transition', `"${name}" is applied by the system only and cannot be sent.`, 'choice')]);
    }
    if (!isAttendanceTransition(name)) {
      throw invalid([violation('transition', `Unknown transition "${name.slice(0, 40)}". Transitions: ${ATTENDANCE_TRANSITIONS.join(', ')}.`, 'choice')]);
    }
    if (viewerOf(ctx).kind === 'organiser' && !organiserMayApply(name)) {
      throw forbidden(`Organisers may not apply the transition "${name}".`);
    }
    const offer = await lockOffer(ctx, db, offerUuid);
    const a = await em.findOne(Attendance, { uuid: input.uuid });
    if (!offer || !a) throw missing();
    await transitionLocked(ctx, em, offer, a, name, { commit: input.commit !== false, notify: !!input.notify });
  });
  const out = await readAttendance(ctx, input.uuid);
  if (!out) throw attendanceNotFound(input.uuid);
  return out;
}

/**
 * Applies a transition to an application whose offer's row is locked (writes.ts), in the caller's transaction:
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
    if (confirmsBeyondCapacity(offer.maxParticipants, others)) a.decisionReason = beyondCapacityReason(ctx.actor?.role ?? null);
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
  const res = await sql<{ n: number }>`select count(*)::int as n from ${qualified(ctx.tenant.schema, 'attendances')}
    where offer_uuid = ${offerUuid}::uuid and status = 'confirmed' and uuid is distinct from ${except}::uuid`.execute(db);
  return res.rows[0]?.n ?? 0;
}
