import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { inSchema, sql } from '../../platform/db/sql.js';
import { newUuid } from '../../platform/http/ids.js';
import { conflict } from '../../domain/errors.js';
import { syncCharges } from '../../engines/ledger/index.js';
import { moveReceiptLines } from '../../engines/ledger/index.js';
import { assertMayTransfer, offerNotFound } from '../../engines/access/index.js';
import { roleOf } from '../../platform/auth/viewer.js';
import { Attendance } from './entity.js';
import { accountsOf } from '../../engines/participant-list/index.js';
import { recordEvent } from '../../platform/events/events.js';
import { attendanceNotFound, offerOfAttendance, readAttendance } from './list.js';
import type { AttendanceOut, TransferAttendanceInput } from './schema.js';
import { beyondCapacityReason, confirmsBeyondCapacity } from '../../domain/participant-list.js';
import { confirmedCount } from '../../engines/participant-list/index.js';
import { lockOffers, queueDecisionMail, refillIfFirstComeRunning, reorderList } from '../../engines/participant-list/index.js';

// Spec 3.2 (last line) and 4.3 "Transfer", rules 1-7; D10 (any edition, any source state, commit:false).
// 1. a new application (new uuid) for the target; the old one is deleted with its answers;
// 2. fee, paid and payable carry over (amounts are not recalculated); the receipt lines and the charge move
//    with it (src/engines/ledger/lines.ts, src/engines/ledger/charges.ts);
// 3. the target list is renumbered and, during a running first-come-first-served phase, refilled by the
//    refill job (e-mails);
// 4. the source's freed place is not refilled (POST /offers/{uuid}/refill does that), only renumbered;
// 5. organisers need organisersTransferParticipants and a source list they can see (403);
// 6. a target the caller cannot see: 404;
// 7. 409 for the own offer, an existing application for the target (any state), a pseudonymised participant.
// Both offers are locked (in uuid order) for the whole transaction.

export async function transferAttendance(ctx: ServiceContext, input: TransferAttendanceInput): Promise<AttendanceOut> {
  const created = await ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const missing = () => attendanceNotFound(input.uuid);
    const sourceUuid = await offerOfAttendance(ctx, db, input.uuid);
    if (!sourceUuid) throw missing();
    const targetInfo = await assertMayTransfer(ctx, db, sourceUuid, input.offer, missing);
    if (targetInfo.uuid === sourceUuid) throw conflict('The application is already for this offer; a transfer needs another offer.');

    const locked = await lockOffers(ctx, db, [sourceUuid, targetInfo.uuid]);
    const source = locked.get(sourceUuid);
    const target = locked.get(targetInfo.uuid);
    const old = await em.findOne(Attendance, { uuid: input.uuid });
    if (!source || !old || old.offerUuid !== sourceUuid) throw missing();
    if (!target) throw offerNotFound(input.offer);

    // `for key share`: waits for a retention run pseudonymising the child (it locks `for update`), then sees it.
    const participant = await inSchema(db, ctx.tenant.schema).selectFrom('participants')
      .select(sql<boolean>`pseudonymised_at is not null`.as('pseudonymised'))
      .where('uuid', '=', old.participantUuid).forKeyShare().executeTakeFirst();
    if (participant?.pseudonymised) throw conflict('The participant was pseudonymised; the application cannot be transferred.');
    const clash = await em.findOne(Attendance, { offerUuid: target.uuid, participantUuid: old.participantUuid });
    if (clash) {
      throw conflict(`The participant already has an application for the target offer (${clash.uuid}, ${clash.status}); it cannot be transferred there.`);
    }

    const now = new Date();
    const status = input.status ?? 'waiting';
    // Issue 13: a transfer into a full offer as `confirmed` is allowed, and recorded.
    const beyond = status === 'confirmed' && confirmsBeyondCapacity(target.maxParticipants, await confirmedCount(ctx, db, target.uuid, null));
    const next = em.create(Attendance, {
      uuid: newUuid(), offerUuid: target.uuid, participantUuid: old.participantUuid, status, sorting: null,
      userPriority: old.userPriority ?? null, allAlternateDates: old.allAlternateDates, consentOutstanding: old.consentOutstanding,
      heldBack: input.commit === false, decisionReason: beyond ? beyondCapacityReason(roleOf(ctx.viewer)) : null, createdByAdmin: true,
      fee: old.fee ?? null, payableSwitchedOff: old.payableSwitchedOff, paid: old.paid,
      answers: [], confirmedAt: status === 'confirmed' ? now : null, statusChangedAt: now, createdAt: now, modifiedAt: now,
    });
    const account = (await accountsOf(db, ctx.tenant.schema, [old.participantUuid])).get(old.participantUuid);
    em.remove(old);
    await em.flush();
    await recordEvent(ctx, db, 'attendance.transferred', {
      attendance: next.uuid, previousAttendance: old.uuid, offer: target.uuid, edition: target.editionUuid, previousOffer: source.uuid,
      previousEdition: source.editionUuid, participant: old.participantUuid, account: account ?? undefined, from: old.status, status, heldBack: next.heldBack,
    });
    // D10 and rule 2: the charge moves with the application (a charge on the new one, a cancellation on the
    // old, each in its edition's ledger), and so do the receipt lines with their payments; it stays paid.
    await syncCharges(db, ctx.tenant.schema, [next.uuid]);
    await moveReceiptLines(db, ctx.tenant.schema, old.uuid, next.uuid);
    await syncCharges(db, ctx.tenant.schema, [old.uuid]);
    await reorderList(ctx, db, source.uuid);
    await reorderList(ctx, db, target.uuid);
    if (input.notify) await queueDecisionMail(ctx, db, next.uuid, 'transfer');
    await refillIfFirstComeRunning(ctx, db, target);
    return next.uuid;
  });
  const out = await readAttendance(ctx, created);
  if (!out) throw attendanceNotFound(created);
  return out;
}
