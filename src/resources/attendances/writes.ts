import type { AttendanceState } from '../../domain/attendance-states.js';
import type { EditionWithTasks, Procedure, TaskType } from '../../domain/edition-phases.js';
import { firstComePhaseRunning } from '../../domain/participant-list-access.js';
import { LIST_GROUPS, refillCandidates, sortParticipantList, vacancies, type CreateStatus } from '../../domain/participant-list.js';
import { NOT_COUNTED_FOR_LIMIT } from '../../domain/edition-phases.js';
import type { ServiceContext } from '../../platform/context.js';
import { assertSchemaName, qualified, sql, type Executor } from '../../platform/db/sql.js';
import { queueMail, type QueuedMail } from '../../platform/mail/outbox.js';
import { newUuid } from '../../platform/http/ids.js';
import { QUEUES } from '../../platform/jobs/queue.js';
import type { ApplicationQuestion } from '../offers/entity.js';
import { editionProcedureSql } from '../editions/service.js';
import { syncCharges } from '../bookings/charges.js';
import { recordEvents } from '../../platform/events/events.js';
import { accountsOf, statusChanged } from './events.js';

// Shared steps of every write to a participant list. Each write runs in one transaction that first locks
// the offer's row (`for no key update`): writers of one offer take turns in the database, so places are
// never overbooked and `sorting` stays 1..n, across processes. Inserts referencing the offer only take a
// key-share lock, which `for no key update` does not block. Two offers (transfer) are locked in uuid order.
// A new application takes the same lock inside one statement of its own (`appendApplication` below).

export type LockedOffer = {
  uuid: string;
  name: string;
  editionUuid: string;
  maxParticipants: number | null;
  fee: number | null;
  applicationQuestions: ApplicationQuestion[];
  /** The edition's effective procedure now (D4). */
  procedure: Procedure;
  /** D5: called off (nothing of it is payable). */
  cancelled: boolean;
};

const table = (ctx: ServiceContext, name: string) => qualified(ctx.tenant.schema, name);

/** Locks the offers (in uuid order) for the rest of the transaction; returns those that exist. */
export async function lockOffers(ctx: ServiceContext, db: Executor, uuids: string[]): Promise<Map<string, LockedOffer>> {
  const out = new Map<string, LockedOffer>();
  for (const uuid of [...new Set(uuids)].sort()) {
    const res = await sql<LockedOffer>`
      select o.uuid, o.name, o.edition_uuid as "editionUuid", o.max_participants as "maxParticipants", o.fee,
        o.application_questions as "applicationQuestions", ${editionProcedureSql(ctx.tenant.schema, 'e')} as procedure,
        'cancelled' = any(o.places) as cancelled
      from ${table(ctx, 'offers')} o
      join ${table(ctx, 'editions')} e on e.uuid = o.edition_uuid
      where o.uuid = ${uuid}::uuid
      for no key update of o`.execute(db);
    if (res.rows[0]) out.set(uuid, res.rows[0]);
  }
  return out;
}

export async function lockOffer(ctx: ServiceContext, db: Executor, uuid: string): Promise<LockedOffer | null> {
  return (await lockOffers(ctx, db, [uuid])).get(uuid) ?? null;
}

/** One row of a participant list, as the ordering rule needs it. */
export type ListRow = { id: string; participant: string; status: AttendanceState; sorting: number | null; createdAt: Date };

/** The offer's participant list (unordered). Call with the offer locked. */
export async function loadList(ctx: ServiceContext, db: Executor, offerUuid: string): Promise<ListRow[]> {
  const res = await sql<{ id: string; participant: string; status: AttendanceState; sorting: number | null; createdMs: number }>`
    select uuid as id, participant_uuid as participant, status, sorting, (extract(epoch from created_at) * 1000)::float8 as "createdMs"
    from ${table(ctx, 'attendances')} where offer_uuid = ${offerUuid}::uuid`.execute(db);
  return res.rows.map((r) => ({ id: r.id, participant: r.participant, status: r.status, sorting: r.sorting, createdAt: new Date(r.createdMs) }));
}

/**
 * Stores the positions `sortParticipantList` gives `rows` (D10 `sorting`: 1..n, groups by state, each keeping
 * its previous order, new ones last in their group). Rows whose position changed count as modified
 * (`modifiedSince`); `skip` names a row its caller writes itself. Returns the new positions.
 */
export async function saveOrder(ctx: ServiceContext, db: Executor, rows: ListRow[], skip: string | null = null): Promise<Map<string, number>> {
  const before = new Map(rows.map((r) => [r.id, r.sorting]));
  const sorted = sortParticipantList(rows);
  const changed = sorted.filter((a) => a.id !== skip && before.get(a.id) !== a.sorting);
  if (changed.length > 0) {
    await sql`update ${table(ctx, 'attendances')} a set sorting = v.s, modified_at = now()
      from unnest(${changed.map((c) => c.id)}::uuid[], ${changed.map((c) => c.sorting)}::int[]) as v(id, s)
      where a.uuid = v.id`.execute(db);
  }
  return new Map(sorted.map((a) => [a.id, a.sorting]));
}

/** Renumbers the offer's participant list. Call with the offer locked, after the change is flushed. */
export async function reorderList(ctx: ServiceContext, db: Executor, offerUuid: string): Promise<void> {
  await saveOrder(ctx, db, await loadList(ctx, db, offerUuid));
}

// ---- a new application in one statement (the opening rush, issue 10.1) -------------------------------

/** What a new application becomes in one of the two cases (a place free, or none), decided before the lock. */
export type AppendOutcome = {
  status: CreateStatus;
  decisionReason: string | null;
  /** The charge to post (D8 `chargeTarget`/`chargePostings` for an application without bookings); 0 for none. */
  charge: number;
  /** The family's e-mail, when asked for and there is an address. */
  mail: QueuedMail | null;
};

export type AppendInput = {
  uuid: string;
  participant: string;
  /** The offer as read before the lock; the function writes nothing when it changed meanwhile. */
  offer: { uuid: string; editionUuid: string; fee: number; cancelled: boolean; name: string };
  /** The participant's account (D8: the debtor; else the participant). */
  account: string | null;
  heldBack: boolean;
  allAlternateDates: boolean;
  /** Booking text of the charge. */
  chargeText: string;
  /** The running application phase's maxApplications (D4), null for none. */
  limit: number | null;
  placeFree: AppendOutcome;
  full: AppendOutcome;
};

export type AppendResult =
  | {
    done: true; status: CreateStatus; sorting: number; mailed: boolean;
    /** The tenant has an enabled webhook: the caller wakes the delivery of the `attendance.created` event. */
    subscribed: boolean;
    /** Which outcome it took: a place was free (or places are unlimited), or none. */
    placeFree: boolean;
    /** Its createdAt, as the projection reads it. */
    at: string;
  }
  | { done: false; counted: number }
  | null;

/**
 * Writes a new application (spec 4.3 "Create") in ONE autocommit statement, the tenant's `append_application`
 * (migrations/tenant/Migration20261125000200AppendApplication.ts): participant's key-share lock, the child's
 * maxApplications lock and count when a limit runs, the offer's row lock, a count on a snapshot taken after
 * it, the outcome for a free place or for none, the application at the end of its group (`appendPosition`),
 * its charge and the family's outbox row. The offer's lock ends with the statement, so no round trip to this
 * process happens while it is held. Everything else was read, checked and computed before (the caller).
 * Returns `{done: false, counted}` when the child has as many applications as the limit allows (nothing
 * written), and null, nothing written, when the general way must decide (see the migration).
 * Call outside a transaction: inside one, the locks would last until its commit.
 */
export async function appendApplication(ctx: ServiceContext, db: Executor, input: AppendInput): Promise<AppendResult> {
  const p = {
    uuid: input.uuid, offer: input.offer.uuid, participant: input.participant, edition: input.offer.editionUuid,
    fee: input.offer.fee, cancelled: input.offer.cancelled, name: input.offer.name, account: input.account,
    heldBack: input.heldBack, allAlternateDates: input.allAlternateDates, chargeText: input.chargeText,
    groups: LIST_GROUPS, placeFree: input.placeFree, full: input.full,
    limit: input.limit, limitLock: participantLockKey(ctx, input.participant), notCounted: NOT_COUNTED_FOR_LIMIT,
    debtorUuid: newUuid(), ledgerUuid: newUuid(), bookingUuid: newUuid(), mailUuid: newUuid(), eventUuid: newUuid(),
  };
  const res = await sql<{ r: { status?: CreateStatus; placeFree?: boolean; sorting?: number; mailed?: boolean; subscribed?: boolean; at?: string; counted?: number } | null }>`
    select ${sql.id(assertSchemaName(ctx.tenant.schema), 'append_application')}(${JSON.stringify(p)}::jsonb) as r`.execute(db);
  const r = res.rows[0]?.r ?? null;
  if (!r) return null;
  if (r.counted !== undefined) return { done: false, counted: r.counted };
  return { done: true, status: r.status!, placeFree: !!r.placeFree, sorting: r.sorting!, mailed: !!r.mailed, subscribed: !!r.subscribed, at: r.at! };
}

/** The key of the child's advisory lock its creations take turns on (D4 maxApplications). */
export function participantLockKey(ctx: ServiceContext, participantUuid: string): string {
  return `max-applications:${ctx.tenant.schema}:${participantUuid}`;
}

// ---- e-mail to the family (D9: an outbox row in the same transaction) -------------------------------

const SUBJECTS: Record<AttendanceState, string> = {
  waiting: 'Anmeldung eingegangen',
  confirmed: 'Platzzusage',
  waitlisted: 'Warteliste',
  rejected: 'Absage',
  withdrawn: 'Abmeldung',
  unfulfilled: 'Leider kein Platz',
  participated: 'Teilnahme',
  noshow: 'Nicht erschienen',
  email_unconfirmed: 'Bitte E-Mail-Adresse bestätigen',
  consents_outstanding: 'Einverständnis fehlt',
};

function bodyFor(status: AttendanceState, child: string, offer: string): string {
  const lines: Record<AttendanceState, string> = {
    waiting: `die Anmeldung von ${child} für „${offer}“ ist eingegangen. Über die Plätze wird noch entschieden.`,
    confirmed: `${child} hat einen Platz für „${offer}“ bekommen.`,
    waitlisted: `${child} steht für „${offer}“ auf der Warteliste. Wird ein Platz frei, melden wir uns.`,
    rejected: `für „${offer}“ können wir ${child} leider keinen Platz geben.`,
    withdrawn: `die Anmeldung von ${child} für „${offer}“ wurde zurückgezogen.`,
    unfulfilled: `bei der Platzvergabe für „${offer}“ hat ${child} leider keinen Platz bekommen.`,
    participated: `schön, dass ${child} an „${offer}“ teilgenommen hat.`,
    noshow: `${child} ist zu „${offer}“ nicht erschienen.`,
    email_unconfirmed: `bitte bestätigen Sie Ihre E-Mail-Adresse für die Anmeldung von ${child} zu „${offer}“.`,
    consents_outstanding: `für die Anmeldung von ${child} zu „${offer}“ fehlt noch ein Einverständnis.`,
  };
  return `Guten Tag,\n\n${lines[status]}\n\nIhr Ferienprogramm-Team\n`;
}

/**
 * Queues the family's e-mail about the application's current state: to the account's address, else the
 * participant's own. Returns false when there is no address to write to.
 */
export async function queueDecisionMail(ctx: ServiceContext, db: Executor, attendanceUuid: string, cause: string): Promise<boolean> {
  const res = await sql<{ status: AttendanceState; offer: string; offerUuid: string; firstname: string | null; email: string | null }>`
    select a.status, o.name as offer, o.uuid as "offerUuid",
      case when p.pseudonymised_at is null then p.firstname end as firstname, coalesce(acc.email, p.email) as email
    from ${table(ctx, 'attendances')} a
    join ${table(ctx, 'offers')} o on o.uuid = a.offer_uuid
    join ${table(ctx, 'participants')} p on p.uuid = a.participant_uuid
    left join ${table(ctx, 'accounts')} acc on acc.uuid = p.account_uuid
    where a.uuid = ${attendanceUuid}::uuid`.execute(db);
  const r = res.rows[0];
  if (!r?.email) return false;
  await queueMail(ctx, db, decisionMail({ attendance: attendanceUuid, status: r.status, offer: r.offerUuid, offerName: r.offer, firstname: r.firstname, email: r.email, cause }));
  return true;
}

/** The family's e-mail about an application's state (German, D9), as the outbox stores it. */
export function decisionMail(m: {
  attendance: string; status: AttendanceState; offer: string; offerName: string; firstname: string | null; email: string; cause: string;
}): QueuedMail {
  return {
    kind: `attendance_${m.status}`,
    recipient: m.email,
    subject: `${SUBJECTS[m.status]}: ${m.offerName}`,
    body: bodyFor(m.status, m.firstname ?? 'Ihr Kind', m.offerName),
    payload: { attendance: m.attendance, offer: m.offer, status: m.status, cause: m.cause },
  };
}

// ---- refill (spec 4.2, D5, D10) ---------------------------------------------------------------------

/** The edition with its phases, for the phase rules (D4). */
export async function editionWithTasks(ctx: ServiceContext, db: Executor, editionUuid: string): Promise<EditionWithTasks | null> {
  const res = await sql<{
    procedure: Procedure; online: boolean; releaseParticipantLists: boolean;
    tasks: { type: TaskType; begin: number | null; end: number | null; applicationSystem: Procedure | null }[];
  }>`select e.procedure, e.online, e.release_participant_lists as "releaseParticipantLists",
      coalesce((select json_agg(json_build_object('type', t.type, 'begin', extract(epoch from t.begin_at) * 1000,
        'end', extract(epoch from t.end_at) * 1000, 'applicationSystem', t.application_system))
        from ${table(ctx, 'edition_tasks')} t where t.edition_uuid = e.uuid), '[]'::json) as tasks
    from ${table(ctx, 'editions')} e where e.uuid = ${editionUuid}::uuid`.execute(db);
  const r = res.rows[0];
  if (!r) return null;
  return {
    procedure: r.procedure, online: r.online, releaseParticipantLists: r.releaseParticipantLists,
    tasks: r.tasks.map((t) => ({
      type: t.type, applicationSystem: t.applicationSystem,
      begin: t.begin === null ? null : new Date(t.begin), end: t.end === null ? null : new Date(t.end),
    })),
  };
}

export async function firstComeRunning(ctx: ServiceContext, db: Executor, editionUuid: string): Promise<boolean> {
  const edition = await editionWithTasks(ctx, db, editionUuid);
  return !!edition && firstComePhaseRunning(edition, new Date());
}

export const REFILL_REASON = 'Von der Warteliste nachgerückt';

/**
 * Whether the edition still has decisions waiting for its commit (D7). Until then a refill's decisions are held
 * back too (spec 2.2 heldBack: no fee due, the family not told), and the commit releases them with the rest.
 */
async function editionAwaitsCommit(ctx: ServiceContext, db: Executor, editionUuid: string): Promise<boolean> {
  const res = await sql<{ pending: boolean }>`select exists (
      select 1 from ${table(ctx, 'attendances')} a join ${table(ctx, 'offers')} o on o.uuid = a.offer_uuid
      where o.edition_uuid = ${editionUuid}::uuid and a.held_back) as pending`.execute(db);
  return res.rows[0]?.pending ?? false;
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
  const released = await sql<{ uuid: string; heldBack: boolean }>`update ${table(ctx, 'attendances')}
    set status = 'confirmed', held_back = held_back or ${holdBack}, decision_reason = ${REFILL_REASON},
      confirmed_at = now(), status_changed_at = now(), modified_at = now()
    where uuid = any(${moved}::uuid[])
    returning uuid, held_back as "heldBack"`.execute(db);
  // D8: the committed confirmations are charged (held-back ones are not due yet).
  await syncCharges(db, ctx.tenant.schema, moved);
  await saveOrder(ctx, db, sorted.map((r) => (moved.includes(r.id) ? { ...r, status: 'confirmed' as const } : r)));
  await recordRefillEvents(ctx, db, offer, sorted, released.rows);
  if (notify) {
    for (const r of released.rows) if (!r.heldBack) await queueDecisionMail(ctx, db, r.uuid, 'refill');
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
