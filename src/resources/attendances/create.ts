import { ForeignKeyConstraintViolationException } from '@mikro-orm/core';
import { beyondCapacityReason, confirmsBeyondCapacity, decideOnCreate, decisionsOnCreate, vacancies, type CreateStatus } from '../../domain/participant-list.js';
import { chargePostings, chargeTarget } from '../../domain/money.js';
import { applicationLimit, exceedsApplicationLimit, NOT_COUNTED_FOR_LIMIT, type PhaseTask, type Procedure, type TaskType } from '../../domain/edition-phases.js';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { inSchema, sql, tablesOf, type Executor } from '../../platform/db/sql.js';
import { prepared } from '../../platform/db/prepared.js';
import { newUuid } from '../../platform/http/ids.js';
import { conflict, unprocessable } from '../../domain/errors.js';
import { syncCharges } from '../../engines/ledger/index.js';
import { WAKE_COALESCE_MS, wakeMailSenderAfterCommit } from '../../platform/mail/outbox.js';
import { editionProcedureSql } from '../../engines/edition-phases/index.js';
import { roleOf } from '../../platform/auth/viewer.js';
import { Attendance } from './entity.js';
import { statusChanged } from '../../engines/participant-list/index.js';
import { recordEvent, recordEvents } from '../../platform/events/events.js';
import { wakeWebhookDeliveryAfterCommit } from '../../platform/webhooks/wake.js';
import { offerFirstDaySql, respond, toOut, type Row } from './list.js';
import { fullNameSql, participantNameSql } from '../../engines/families/index.js';
import type { AttendanceOut, CreateAttendanceInput } from './schema.js';
import { appendApplication, decisionMail, loadList, lockOffer, participantLockKey, queueDecisionMail, saveOrder, type AppendOutcome, type ListRow } from '../../engines/participant-list/index.js';

// Spec 4.3 "Create" (D10 "Applications"): a new application, decided by the edition's procedure. The opening
// rush (issue 10.1) takes `createAtOnce`: read and decided before the offer's lock, written by one statement
// that holds the lock only while it runs; anything unusual takes the general way in one transaction.

/** Decision reasons recorded when the procedure decides (spec 2.2 `decisionReason`). */
export const REASONS = {
  confirmed: 'Anmeldung nach Eingang: ein Platz war frei',
  waitlisted: 'Anmeldung nach Eingang: ausgebucht, auf der Warteliste',
  waiting: 'Losverfahren: wartet auf die Platzvergabe',
} as const;

/**
 * The participant, read with `for key share` (the lock the application's foreign key takes anyway): a retention run
 * pseudonymising it (`for update`, src/resources/retention/service.ts) either waits for this application or has
 * committed before we read, so no application is ever added to a child being pseudonymised.
 */
async function participantOf(ctx: ServiceContext, db: Executor, uuid: string): Promise<{ uuid: string; pseudonymised: boolean; account: string | null } | null> {
  const row = await inSchema(db, ctx.tenant.schema).selectFrom('participants')
    .select(['uuid', sql<boolean>`pseudonymised_at is not null`.as('pseudonymised'), 'account_uuid as account'])
    .where('uuid', '=', uuid).forKeyShare().executeTakeFirst();
  return row ?? null;
}

// ---- create -----------------------------------------------------------------------------------------

/**
 * Spec 4.3 "Create": without `status` the edition's current procedure decides (`decideOnCreate`); an existing
 * application of the participant for the offer is reused and decided again as if new (D10). `commit: false`
 * holds the decision back; `notify` queues the family's e-mail.
 */
export async function createAttendance(ctx: ServiceContext, input: CreateAttendanceInput): Promise<AttendanceOut> {
  try {
    return (await createAtOnce(ctx, input)) ?? (await respond(ctx, await createInTransaction(ctx, input)));
  } catch (err) {
    // The participant was deleted between our check and the insert.
    if (err instanceof ForeignKeyConstraintViolationException) throw unprocessable(`participant: No participant with the identifier ${input.participant} exists.`);
    throw err;
  }
}

/**
 * A new application without a transaction of ours (issue 10.1, the opening rush): one statement reads and
 * checks what does not depend on the places taken (the participant, the offer, its edition's phases, an
 * existing application); the domain rules decide the two possible outcomes (a place free, or none: status,
 * reason, charge, e-mail); one autocommit statement (`appendApplication`) locks, counts, picks one and writes
 * it all. The offer's lock is held for that statement only. Null when the general way (`createInTransaction`)
 * must decide: a reused application, or a list or offer not as expected.
 */
async function createAtOnce(ctx: ServiceContext, input: CreateAttendanceInput): Promise<AttendanceOut | null> {
  const db = dbOf(ctx.em);
  const pre = await readBeforeLock(ctx, db, input);
  if (!pre) throw unprocessable(`participant: No participant with the identifier ${input.participant} exists.`);
  if (pre.pseudonymised) throw unprocessable(`participant: The participant ${input.participant} was pseudonymised and cannot apply.`);
  if (!pre.offer) throw unprocessable(`offer: No offer with the identifier ${input.offer} exists.`);
  // A reused application, or a fee of its own (issue 22), take the general way.
  if (pre.previous || input.fee != null) return null;
  const { offer } = pre;
  const id = newUuid();
  const heldBack = input.commit === false;
  const limit = applicationLimit(pre.tasks, new Date());
  const decisions = decisionsOnCreate({ procedure: offer.procedure, requestedStatus: input.status ?? null });
  const outcome = (status: CreateStatus, placeFree: boolean): AppendOutcome => {
    // Issue 13: a confirmation the caller asked for past the offer's capacity is allowed, and recorded.
    const beyond = input.status === 'confirmed' && !placeFree;
    // D8: what the reconciler (`syncCharges`) would post for an application without bookings.
    const target = chargeTarget({ status, heldBack, fee: offer.fee, payableSwitchedOff: false, paid: false, charged: 0, offerCancelled: offer.cancelled });
    return {
      status,
      decisionReason: beyond ? beyondCapacityReason(roleOf(ctx.viewer)) : input.status ? null : REASONS[status],
      charge: chargePostings([], 'home', target).reduce((sum, posting) => sum + posting.amount, 0),
      mail: input.notify && pre.email
        ? decisionMail({ attendance: id, status, offer: offer.uuid, offerName: offer.name, firstname: pre.firstname, email: pre.email, cause: 'created' })
        : null,
    };
  };
  const placeFree = outcome(decisions.placeFree, true);
  const full = outcome(decisions.full, false);
  const result = await appendApplication(ctx, db, {
    uuid: id, participant: pre.participant, offer, account: pre.account, heldBack,
    allAlternateDates: input.allAlternateDates ?? true, chargeText: `Teilnahmebeitrag „${offer.name}“`, limit,
    placeFree, full,
  });
  if (!result) return null;
  if (!result.done) throw limitReached(result.counted, limit!);
  const chosen = result.placeFree ? placeFree : full;
  // The application, its charge, mail row and `attendance.created` event are committed; the send jobs wake
  // the mail sender and the webhook delivery, one job per tenant and a few hundred ms however many applications
  // (issue 25). Should writing a job fail, the application stands and the minute's sweeps find the rows: not a
  // reason to answer 5xx.
  const wake = (what: string, job: Promise<void>) => job.catch((err: unknown) =>
    ctx.log.warn({ code: (err as { code?: string }).code, attendance: id }, `${what} job not written; the sweep picks it up`));
  if (result.mailed) await wake('mail send', wakeMailSenderAfterCommit(ctx));
  if (result.subscribed) await wake('webhook delivery', wakeWebhookDeliveryAfterCommit(ctx, WAKE_COALESCE_MS));
  // The answer from what was read and written (the projection's row of it), without reading it again.
  const at = result.at;
  return toOut(ctx.viewer, {
    uuid: id, status: result.status, sorting: result.sorting, userPriority: null, allAlternateDates: input.allAlternateDates ?? true,
    consentOutstanding: false, heldBack, decisionReason: chosen.decisionReason, createdByAdmin: true, fee: offer.fee,
    payableSwitchedOff: false, paid: false, answers: [], confirmedAt: result.status === 'confirmed' ? at : null,
    statusChangedAt: at, createdAt: at, modifiedAt: at,
    offerUuid: offer.uuid, offerName: offer.name, offerAlias: pre.view.offerAlias, offerCancelled: offer.cancelled,
    editionUuid: offer.editionUuid, editionName: pre.view.editionName, editionAlias: pre.view.editionAlias,
    participantUuid: pre.participant, pseudonymised: false, participantName: pre.view.participantName, participantPseudonym: null,
    participantAge: null, dateOfBirth: pre.view.dateOfBirth, offerFirstDay: pre.view.offerFirstDay,
    accountUuid: pre.account, accountName: pre.view.accountName, receipts: [], files: [],
  });
}

type BeforeLock = {
  participant: string; pseudonymised: boolean; account: string | null; firstname: string | null; email: string | null;
  /** The offer as the decision needs it; null when there is no such offer. */
  offer: { uuid: string; editionUuid: string; name: string; fee: number; cancelled: boolean; procedure: Procedure } | null;
  /** The edition's application phases (D4 maxApplications). */
  tasks: (PhaseTask & { maxApplications: number | null })[];
  /** The participant's application for the offer, if any. */
  previous: string | null;
  /** What the answer shows besides the application (`Row` of list.ts). */
  view: Pick<Row, 'offerAlias' | 'editionName' | 'editionAlias' | 'participantName' | 'dateOfBirth' | 'offerFirstDay' | 'accountName'>;
};

/** Everything a new application's decision needs but the places taken, in one statement; null without participant. */
async function readBeforeLock(ctx: ServiceContext, db: Executor, input: CreateAttendanceInput): Promise<BeforeLock | null> {
  const t = tablesOf(ctx.tenant.schema);
  type Read = Omit<BeforeLock, 'tasks' | 'offer' | 'view'> & BeforeLock['view'] & {
    offer: string | null; editionUuid: string; name: string; fee: number; cancelled: boolean; procedure: Procedure;
    tasks: { type: TaskType; begin: number | null; end: number | null; applicationSystem: Procedure | null; maxApplications: number | null }[];
  };
  // Raw: the hot path's one round trip, with the phases aggregated as json and the answer's joins. A named statement
  // (platform/db/prepared.ts; issue 25): planned once per connection, where PostgreSQL spent ~0.5 ms planning it
  // for every application against ~0.1 ms running it (pg_stat_statements, `bench/rush.ts`).
  const res = await prepared(sql<Read>`
    select p.uuid as participant, p.pseudonymised_at is not null as pseudonymised, p.account_uuid as account,
      case when p.pseudonymised_at is null then p.firstname end as firstname, coalesce(acc.email, p.email) as email,
      o.uuid as offer, o.edition_uuid as "editionUuid", o.name, coalesce(o.fee, 0) as fee, o.called_off as cancelled,
      ${editionProcedureSql(ctx.tenant.schema, 'e')} as procedure,
      o.alias as "offerAlias", e.name as "editionName", e.alias as "editionAlias", ${participantNameSql('p')} as "participantName",
      case when p.pseudonymised_at is null then to_char(p.date_of_birth, 'YYYY-MM-DD') end as "dateOfBirth",
      ${offerFirstDaySql(ctx.tenant.schema)} as "offerFirstDay", ${fullNameSql('acc')} as "accountName",
      coalesce((select json_agg(json_build_object('type', k.type, 'begin', extract(epoch from k.begin_at) * 1000,
        'end', extract(epoch from k.end_at) * 1000, 'applicationSystem', k.application_system, 'maxApplications', k.max_applications))
        from ${t('edition_tasks')} k where k.edition_uuid = o.edition_uuid and k.type = 'application_system'), '[]'::json) as tasks,
      (select a.uuid from ${t('attendances')} a where a.offer_uuid = o.uuid and a.participant_uuid = p.uuid) as previous
    from ${t('participants')} p
    left join ${t('accounts')} acc on acc.uuid = p.account_uuid
    left join ${t('offers')} o on o.uuid = ${input.offer}::uuid
    left join ${t('editions')} e on e.uuid = o.edition_uuid
    where p.uuid = ${input.participant}::uuid`).execute(db);
  const r = res.rows[0];
  if (!r) return null;
  return {
    participant: r.participant, pseudonymised: r.pseudonymised, account: r.account, firstname: r.firstname, email: r.email, previous: r.previous,
    offer: r.offer ? { uuid: r.offer, editionUuid: r.editionUuid, name: r.name, fee: r.fee, cancelled: r.cancelled, procedure: r.procedure } : null,
    view: {
      offerAlias: r.offerAlias, editionName: r.editionName, editionAlias: r.editionAlias, participantName: r.participantName,
      dateOfBirth: r.dateOfBirth, offerFirstDay: r.offerFirstDay, accountName: r.accountName,
    },
    tasks: r.tasks.map((k) => ({ ...k, begin: k.begin === null ? null : new Date(k.begin), end: k.end === null ? null : new Date(k.end) })),
  };
}

/**
 * The general way, in a transaction: a reused application (decided again as if new, D10), or whatever the
 * one statement of `createAtOnce` left to it. The offer's lock first, then the list read whole.
 */
async function createInTransaction(ctx: ServiceContext, input: CreateAttendanceInput): Promise<string> {
  return ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const participant = await participantOf(ctx, db, input.participant);
    if (!participant) throw unprocessable(`participant: No participant with the identifier ${input.participant} exists.`);
    if (participant.pseudonymised) throw unprocessable(`participant: The participant ${input.participant} was pseudonymised and cannot apply.`);
    // The child's lock before the offer's, in the order `append_application` takes them (no deadlock between them).
    if (await limitRunsFor(ctx, db, input.offer)) await lockParticipantApplications(ctx, db, participant.uuid);
    const offer = await lockOffer(ctx, db, input.offer);
    if (!offer) throw unprocessable(`offer: No offer with the identifier ${input.offer} exists.`);

    // One read of the list under the lock gives the existing application, the places taken and the order.
    const rows = await loadList(ctx, db, offer.uuid);
    const previous = rows.find((r) => r.participant === participant.uuid) ?? null;
    if (!previous || previous.status === 'withdrawn') await assertApplicationLimit(ctx, db, offer.editionUuid, participant.uuid);
    // D10: held-back confirmations hold a place too; a reused application's own place counts as free.
    const confirmed = rows.filter((r) => r.status === 'confirmed' && r !== previous).length;
    const status = decideOnCreate({
      procedure: offer.procedure,
      requestedStatus: input.status ?? null,
      vacancies: vacancies(offer.maxParticipants, confirmed),
    });
    const now = new Date();
    const changed = previous?.status !== status;
    const id = previous?.id ?? newUuid();
    // Decided again as if new (D10): a changed state goes to the end of its new group.
    const row: ListRow = { id, participant: participant.uuid, status, sorting: changed ? null : previous!.sorting, createdAt: previous?.createdAt ?? now };
    const order = await saveOrder(ctx, db, [...rows.filter((r) => r !== previous), row], id);
    // Issue 13: a confirmation the caller asked for past the offer's capacity is allowed, and recorded.
    const beyond = input.status === 'confirmed' && confirmsBeyondCapacity(offer.maxParticipants, confirmed);
    const reason = beyond ? beyondCapacityReason(roleOf(ctx.viewer)) : input.status ? null : REASONS[status];
    const fields = {
      status, sorting: order.get(id)!, heldBack: input.commit === false, decisionReason: reason, modifiedAt: now,
    };
    let a: Attendance;
    if (previous) {
      a = (await em.findOne(Attendance, { uuid: id }))!;
      if (input.fee != null && input.fee !== a.fee) {
        if (a.paid) throw conflict('This application is paid; reverse its receipt before changing its fee.');
        a.fee = input.fee;
      }
      Object.assign(a, fields);
      if (changed) a.statusChangedAt = now;
      if (status === 'confirmed' && (changed || a.confirmedAt == null)) a.confirmedAt = now;
      if (input.allAlternateDates != null) a.allAlternateDates = input.allAlternateDates;
    } else {
      a = em.create(Attendance, {
        uuid: id, offerUuid: offer.uuid, participantUuid: participant.uuid, ...fields,
        userPriority: null, allAlternateDates: input.allAlternateDates ?? true, consentOutstanding: false,
        createdByAdmin: true, fee: input.fee ?? offer.fee ?? 0, payableSwitchedOff: false, paid: false,
        answers: [], confirmedAt: status === 'confirmed' ? now : null, statusChangedAt: now, createdAt: now,
      });
    }
    await em.flush();
    // D8: a final confirmed place is charged (a reused application's charge follows its new decision).
    await syncCharges(db, ctx.tenant.schema, [a.uuid]);
    if (input.notify) await queueDecisionMail(ctx, db, a.uuid, 'created');
    // Issue 14: one insert; the references come from the reads above.
    const refs = { attendance: a.uuid, offer: offer.uuid, edition: offer.editionUuid, participant: participant.uuid, account: participant.account ?? undefined };
    if (previous) await recordEvents(ctx, db, [statusChanged(refs, { from: previous.status, to: status, heldBack: a.heldBack, decisionReason: reason, cause: 'reapplication' })]);
    else await recordEvent(ctx, db, 'attendance.created', { ...refs, status, heldBack: a.heldBack, decisionReason: reason ?? undefined });
    return a.uuid;
  });
}

/**
 * The running application phase's maxApplications of an edition (D4), null for none: the edition by its uuid,
 * or by an offer of it.
 */
async function applicationLimitOf(ctx: ServiceContext, db: Executor, of: { edition: string } | { offer: string }): Promise<number | null> {
  const tx = inSchema(db, ctx.tenant.schema);
  const tasks = await tx.selectFrom('edition_tasks')
    .select(['type', 'begin_at as begin', 'end_at as end', 'application_system as applicationSystem', 'max_applications as maxApplications'])
    .$narrowType<{ type: TaskType; applicationSystem: Procedure | null }>()
    .where('edition_uuid', '=', 'edition' in of ? of.edition : tx.selectFrom('offers').select('offers.edition_uuid').where('offers.uuid', '=', of.offer))
    .where('type', '=', 'application_system')
    .execute();
  return applicationLimit(tasks.map((r) => ({ ...r, begin: r.begin === null ? null : new Date(r.begin), end: r.end === null ? null : new Date(r.end) })), new Date());
}

async function limitRunsFor(ctx: ServiceContext, db: Executor, offerUuid: string): Promise<boolean> {
  return (await applicationLimitOf(ctx, db, { offer: offerUuid })) !== null;
}

async function lockParticipantApplications(ctx: ServiceContext, db: Executor, participantUuid: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${participantLockKey(ctx, participantUuid)}, 0))`.execute(db);
}

/**
 * D4 `maxApplications` (issue 13; rule in src/domain/edition-phases.ts): 422 when the child already has as many
 * counted applications in the edition as the running application phase allows. Concurrent creations for one
 * child take turns on a lock of their own, taken before the offer's (here again: it is held already then).
 */
async function assertApplicationLimit(ctx: ServiceContext, db: Executor, editionUuid: string, participantUuid: string): Promise<void> {
  const limit = await applicationLimitOf(ctx, db, { edition: editionUuid });
  if (limit === null) return;
  await lockParticipantApplications(ctx, db, participantUuid);
  const res = await inSchema(db, ctx.tenant.schema).selectFrom('attendances as a').innerJoin('offers as o', 'o.uuid', 'a.offer_uuid')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('a.participant_uuid', '=', participantUuid).where('o.edition_uuid', '=', editionUuid)
    .where('a.status', '<>', sql<string>`all(${[...NOT_COUNTED_FOR_LIMIT]}::text[])`)
    .executeTakeFirst();
  const counted = res?.n ?? 0;
  if (exceedsApplicationLimit(limit, counted)) throw limitReached(counted, limit);
}

const limitReached = (counted: number, limit: number) =>
  unprocessable(`participant: The participant already has ${counted} application${counted === 1 ? '' : 's'} in this edition; its running application phase allows at most ${limit} per participant (maxApplications).`);
