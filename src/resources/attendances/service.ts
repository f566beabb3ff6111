import { canSwitchPayableOn } from '../../domain/payable.js';
import { ANSWER_TYPE_NAMES, answerFits } from '../../domain/answers.js';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { inSchema, sql, type Executor } from '../../platform/db/sql.js';
import { parseId } from '../../platform/http/ids.js';
import { assertPatchNotEmpty, wasSent } from '../../platform/http/patch.js';
import { conflict, forbidden, invalid, unprocessable, violation, type Violation } from '../../domain/errors.js';
import { syncCharges } from '../../engines/ledger/index.js';
import { setAnswerFiles, uploadsOf } from '../../engines/answer-files/index.js';
import type { ApplicationQuestion } from '../offers/entity.js';
import { assertListEditable } from '../../engines/access/index.js';
import { Attendance, type StoredAnswer } from './entity.js';
import { accountsOf } from '../../engines/participant-list/index.js';
import { recordEvent } from '../../platform/events/events.js';
import { attendanceNotFound, offerOfAttendance, respond } from './list.js';
import type { AttendanceOut, UpdateAttendanceInput } from './schema.js';
import { lockOffer, refillIfFirstComeRunning, reorderList } from '../../engines/participant-list/index.js';

// Applications (spec 4.3; D10 "Applications"): update and delete here; create, transitions and transfer have
// their own files. Every write locks the offer's row first (src/engines/participant-list), then changes the application
// through the entity, renumbers the participant list and queues e-mails, all in one transaction. A new
// application (the opening rush, issue 10.1) is read and decided before the lock and written by one
// statement that holds the offer's lock only while it runs (`createAtOnce`).

export { getAttendance, listAttendances, listOfferAttendances } from './list.js';
export { transitionAttendance } from './transitions.js';
export { transferAttendance } from './transfer.js';
export { createAttendance } from './create.js';
export { respond } from './list.js';

// ---- update -----------------------------------------------------------------------------------------

/**
 * Spec 4.3 "Update" `answers`: keys are question UUIDs of the offer's applicationQuestions (an unknown one is
 * 422, D10), values of the question's type; null removes an answer. Returns the new answers in question order.
 */
function mergeAnswers(current: StoredAnswer[], sent: Record<string, string | boolean | number | null>, questions: ApplicationQuestion[]): StoredAnswer[] {
  const byId = new Map(questions.map((q) => [q.uuid, q]));
  const next = new Map(current.map((a) => [a.question, a]));
  const violations: Violation[] = [];
  for (const [key, value] of Object.entries(sent)) {
    const id = parseId(key);
    const q = id ? byId.get(id) : undefined;
    const path = `answers.${key.slice(0, 100)}`;
    if (!q) {
      violations.push(violation(path, 'This offer has no application question with this identifier.', 'choice'));
      continue;
    }
    if (value === null) {
      next.delete(q.uuid);
      continue;
    }
    if (!answerFits(q.type, value, (v) => parseId(v) !== null)) {
      violations.push(violation(path, `The answer to "${q.label}" (type ${q.type}) must be ${ANSWER_TYPE_NAMES[q.type]}.`, 'type'));
      continue;
    }
    next.set(q.uuid, { question: q.uuid, label: q.label, type: q.type, answer: q.type === 'file' ? parseId(value as string)! : value });
  }
  if (violations.length > 0) throw invalid(violations);
  const order = new Map(questions.map((q, i) => [q.uuid, i]));
  return [...next.values()].sort((a, b) => (order.get(a.question) ?? 1e9) - (order.get(b.question) ?? 1e9));
}

/**
 * The files the `file` answers name (D10: a file answer is the file's uuid): each an upload of this municipality
 * that no other application uses (422 on `answers.<question>` otherwise). The team may name any such upload.
 */
async function answerFilesOf(ctx: ServiceContext, db: Executor, attendance: string, answers: StoredAnswer[]): Promise<{ file: string; question: string }[]> {
  const files = answers.filter((x) => x.type === 'file').map((x) => ({ file: String(x.answer), question: x.question }));
  const uploads = await uploadsOf(db, ctx.tenant.schema, files.map((f) => f.file));
  const seen = new Set<string>();
  const violations = files.filter((f) => {
    const u = uploads.get(f.file);
    const twice = seen.has(f.file);
    seen.add(f.file);
    return !u || twice || (u.attendance !== null && u.attendance !== attendance);
  }).map((f) => violation(`answers.${f.question}`, 'No unused file with this identifier was uploaded (POST /files).', 'fileUnavailable'));
  if (violations.length > 0) throw invalid(violations);
  return files;
}

export async function updateAttendance(ctx: ServiceContext, input: UpdateAttendanceInput): Promise<AttendanceOut> {
  assertPatchNotEmpty(input);
  await ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const offerUuid = await offerOfAttendance(ctx, db, input.uuid);
    if (!offerUuid) throw attendanceNotFound(input.uuid);
    await assertListEditable(ctx, db, offerUuid, () => attendanceNotFound(input.uuid));
    const offer = await lockOffer(ctx, db, offerUuid);
    const a = await em.findOne(Attendance, { uuid: input.uuid });
    if (!offer || !a) throw attendanceNotFound(input.uuid);
    // Spec 2.2: an application's own fee (a discount), set by admins; the ledger follows (syncCharges below). A
    // paid one keeps its fee: its receipt balances it (reverse the receipt first).
    if (wasSent(input, 'fee')) {
      if (ctx.viewer.kind !== 'admin' && ctx.viewer.kind !== 'system') throw forbidden('Only admins set an application\'s fee.');
      const fee = input.fee ?? offer.fee ?? 0;
      if (fee !== a.fee && a.paid) throw conflict('This application is paid; reverse its receipt before changing its fee.');
      a.fee = fee;
    }
    // The state never changes here (spec 4.3).
    if (input.payable === false) {
      if (a.paid) throw conflict('This application is paid; reverse its receipt instead of making it non-payable.');
      a.payableSwitchedOff = true;
    } else if (input.payable === true) {
      // D5: nothing is payable while the offer is cancelled.
      const cancelled = await inSchema(db, ctx.tenant.schema).selectFrom('offers')
        .select('called_off as c').where('uuid', '=', offerUuid).executeTakeFirst();
      const offerCancelled = !!cancelled?.c;
      if (!canSwitchPayableOn({ status: a.status, heldBack: a.heldBack, fee: a.fee ?? null, offerCancelled })) {
        throw unprocessable(`payable: Only a confirmed, committed application with a fee, of an offer that is not cancelled, can be payable; this one is ${a.status}${a.heldBack ? ' and held back' : ''}${(a.fee ?? 0) > 0 ? '' : ' and free'}${offerCancelled ? ' and its offer is cancelled' : ''}.`);
      }
      a.payableSwitchedOff = false;
    }
    if (input.allAlternateDates != null) a.allAlternateDates = input.allAlternateDates;
    // Spec 4.3 and 8: negative values become 0; null clears.
    if (wasSent(input, 'userPriority')) a.userPriority = input.userPriority == null ? null : Math.max(0, input.userPriority);
    let files: { file: string; question: string }[] | null = null;
    if (wasSent(input, 'answers')) {
      a.answers = input.answers == null ? [] : mergeAnswers(a.answers ?? [], input.answers, offer.applicationQuestions ?? []);
      files = await answerFilesOf(ctx, db, a.uuid, a.answers);
    }
    a.modifiedAt = new Date();
    await em.flush();
    // Spec 2.2 `files`: the application's files are those its `file` answers name.
    if (files) await setAnswerFiles(db, ctx.tenant.schema, a.uuid, files);
    // D10: payable:false cancels the charge, payable:true charges again.
    await syncCharges(db, ctx.tenant.schema, [a.uuid]);
  });
  return respond(ctx, input.uuid);
}

// ---- delete -----------------------------------------------------------------------------------------

/**
 * Spec 4.3 "Delete": removes the application as if it had never been made (admins only; 409 while paid).
 * The list is renumbered; a confirmed place freed during a running first-come-first-served phase is refilled
 * by the refill job (D10: any change to a participant list).
 */
export async function deleteAttendance(ctx: ServiceContext, uuid: string): Promise<void> {
  await ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const offerUuid = await offerOfAttendance(ctx, db, uuid);
    if (!offerUuid) throw attendanceNotFound(uuid);
    const offer = await lockOffer(ctx, db, offerUuid);
    const a = await em.findOne(Attendance, { uuid });
    if (!offer || !a) throw attendanceNotFound(uuid);
    if (a.paid) throw conflict('A paid receipt refers to this application; reverse the receipt before deleting it.');
    const wasConfirmed = a.status === 'confirmed';
    const account = (await accountsOf(db, ctx.tenant.schema, [a.participantUuid])).get(a.participantUuid);
    em.remove(a);
    await em.flush();
    await recordEvent(ctx, db, 'attendance.deleted', {
      attendance: uuid, offer: offer.uuid, edition: offer.editionUuid, participant: a.participantUuid, account: account ?? undefined, status: a.status,
    });
    // D8: an unpaid application's charge is cancelled (bookings are never deleted).
    await syncCharges(db, ctx.tenant.schema, [uuid]);
    await reorderList(ctx, db, offer.uuid);
    if (wasConfirmed) await refillIfFirstComeRunning(ctx, db, offer);
  });
}
