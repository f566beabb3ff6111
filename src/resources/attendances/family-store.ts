import { createHash, randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import type { AttendanceState } from '../../domain/attendance-states.js';
import type { Procedure, TaskType } from '../../domain/edition-phases.js';
import type { ApplicationQuestion } from '../../domain/answers.js';
import { decideOnCreate, vacancies } from '../../domain/participant-list.js';
import type { WishOffer } from '../../domain/family-applications.js';
import { syncCharges } from '../../engines/ledger/index.js';
import { reorderList, statusChanged, type LockedOffer } from '../../engines/participant-list/index.js';
import { editionOnlineSql } from '../../engines/edition-phases/index.js';
import type { ServiceContext } from '../../platform/context.js';
import { anyOf, inSchema, sql, tablesOf, type Executor } from '../../platform/db/sql.js';
import { recordEvents } from '../../platform/events/events.js';
import { queueMail } from '../../platform/mail/outbox.js';
import { familyApplicationStateMail, type FamilyChild } from '../../platform/mail/templates/de.js';
import { REASONS } from './create.js';
import { offerFirstDaySql } from './list.js';

// What the family channel (D11; family-submit.ts, family-confirm.ts, family-expiry.ts) reads and writes: the
// offers as the wish rules read them, the single-use links, a submission's applications, and the decision the
// edition's procedure makes once nothing is outstanding.

/** Decision reasons of the two waits (spec 2.2 `decisionReason`: why the application is in its state). */
export const WAIT_REASONS = {
  email_unconfirmed: 'Wartet auf die Bestätigung der E-Mail-Adresse der Familie',
  consents_outstanding: 'Wartet auf das Einverständnis der sorgeberechtigten Person',
} as const;

export type WishOfferRow = WishOffer & { uuid: string; name: string; editionUuid: string; fee: number };

/** The offers named by wishes, as the rules of a wish read them (only those that exist on this tenant). */
export async function readWishOffers(ctx: ServiceContext, db: Executor, uuids: readonly string[]): Promise<Map<string, WishOfferRow>> {
  if (uuids.length === 0) return new Map();
  const t = tablesOf(ctx.tenant.schema);
  type Read = Omit<WishOfferRow, 'applicationDeadline' | 'firstDate' | 'tasks'> & {
    deadline: number | null; firstDay: number | null;
    tasks: { type: TaskType; begin: number | null; end: number | null; applicationSystem: Procedure | null; maxApplications: number | null }[];
  };
  // Raw: the phases aggregated as json, the edition's effective `online` and the first day as the projections write them.
  const res = await sql<Read>`
    select o.uuid, o.name, o.edition_uuid as "editionUuid", coalesce(o.fee, 0) as fee,
      'published' = any(o.places) as published, o.publish = 'public' as "publicListing", 'cancelled' = any(o.places) as cancelled,
      ${editionOnlineSql(ctx.tenant.schema, 'e')} as "editionOnline", o.requires_application as "requiresApplication",
      o.online_application as "onlineApplication", (extract(epoch from o.application_deadline) * 1000)::float8 as deadline,
      o.min_age as "minAge", o.max_age as "maxAge", ${offerFirstDaySql(ctx.tenant.schema)} as "firstDay", o.application_questions as questions,
      coalesce((select json_agg(json_build_object('type', k.type, 'begin', extract(epoch from k.begin_at) * 1000,
        'end', extract(epoch from k.end_at) * 1000, 'applicationSystem', k.application_system, 'maxApplications', k.max_applications))
        from ${t('edition_tasks')} k where k.edition_uuid = o.edition_uuid and k.type = 'application_system'), '[]'::json) as tasks
    from ${t('offers')} o join ${t('editions')} e on e.uuid = o.edition_uuid
    where o.uuid = any(${[...new Set(uuids)]}::uuid[])`.execute(db);
  const date = (ms: number | null) => (ms === null ? null : new Date(ms));
  return new Map(res.rows.map((r) => [r.uuid, {
    ...r, questions: (r.questions ?? []) as ApplicationQuestion[], applicationDeadline: date(r.deadline), firstDate: date(r.firstDay),
    tasks: r.tasks.map((k) => ({ ...k, begin: date(k.begin), end: date(k.end) })),
  }]));
}

// ---- single-use links (D11: random, at least 128 bits, stored only as a hash) -------------------------------

export function newLinkToken(): { token: string; hash: Buffer } {
  const token = bs58.encode(randomBytes(24));
  return { token, hash: hashLinkToken(token) };
}

export function hashLinkToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/**
 * Uses a link: marks it used, in one statement, when it is of `kind`, unused and not expired; null otherwise
 * (unknown, expired, used: one answer for all, D11). Concurrent uses of one link: one wins.
 */
export async function useLink(db: Executor, schema: string, kind: 'email' | 'consent', token: string): Promise<{ submission: string; participant: string | null } | null> {
  const row = await inSchema(db, schema).updateTable('family_confirmations').set({ used_at: sql`now()` })
    .where('token_hash', '=', hashLinkToken(token)).where('kind', '=', kind).where('used_at', 'is', null).where('expires_at', '>', sql<string>`now()`)
    .returning(['submission_uuid as submission', 'participant_uuid as participant']).executeTakeFirst();
  return row ?? null;
}

// ---- a submission's applications ------------------------------------------------------------------------------

export type FamilyApplicationRow = {
  uuid: string; offer: string; participant: string; account: string | null; status: AttendanceState; consentOutstanding: boolean;
  decisionReason: string | null;
};

export async function submissionApplications(db: Executor, schema: string, submission: string, participant: string | null = null): Promise<FamilyApplicationRow[]> {
  return inSchema(db, schema).selectFrom('attendances as a').innerJoin('participants as p', 'p.uuid', 'a.participant_uuid')
    .select(['a.uuid', 'a.offer_uuid as offer', 'a.participant_uuid as participant', 'p.account_uuid as account', 'a.status',
      'a.consent_outstanding as consentOutstanding', 'a.decision_reason as decisionReason'])
    .where('a.submission_uuid', '=', submission)
    .$if(participant !== null, (q) => q.where('a.participant_uuid', '=', participant!))
    .orderBy('a.seq')
    .$narrowType<{ status: AttendanceState }>().execute();
}

/** A change of one application of the family channel: to a wait, or to what the procedure decides. */
export type FamilyChange = { row: FamilyApplicationRow; to: 'decide' } | { row: FamilyApplicationRow; to: 'email_unconfirmed' | 'consents_outstanding'; consentOutstanding: boolean };

/**
 * Writes the changes of confirmations and consents under the offers' locks (`offers`, locked by the caller):
 * the waits; for the others the edition's procedure decides now, as for a new application (first come first
 * served: a free place confirms, none waitlists; a lot leaves it `waiting`), in the order given (the order of
 * confirmation). Lists renumbered (the decided go to the end of their group), charges posted, one event each
 * (none with `cause` null: a new application's decision, reported by its `attendance.created`).
 */
export async function applyFamilyChanges(
  ctx: ServiceContext, db: Executor, offers: ReadonlyMap<string, LockedOffer>, changes: readonly FamilyChange[],
  cause: 'await_email' | 'await_consents' | null,
): Promise<void> {
  if (changes.length === 0) return;
  const t = tablesOf(ctx.tenant.schema);
  // Few round trips while the offers are locked: the confirmed places of all offers in one read, every change
  // in one update.
  const counted = await inSchema(db, ctx.tenant.schema).selectFrom('attendances').select(['offer_uuid as offer', sql<number>`count(*)::int`.as('n')])
    .where('offer_uuid', '=', anyOf([...offers.keys()])).where('status', '=', 'confirmed').groupBy('offer_uuid').execute();
  const confirmed = new Map(counted.map((r) => [r.offer, r.n]));
  const events = [];
  const writes: { uuid: string; status: AttendanceState; reason: string; consent: boolean }[] = [];
  for (const c of changes) {
    const offer = offers.get(c.row.offer)!;
    let status: AttendanceState;
    let reason: string;
    let consent: boolean;
    if (c.to === 'decide') {
      status = decideOnCreate({ procedure: offer.procedure, vacancies: vacancies(offer.maxParticipants, confirmed.get(offer.uuid) ?? 0) });
      if (status === 'confirmed') confirmed.set(offer.uuid, (confirmed.get(offer.uuid) ?? 0) + 1);
      reason = REASONS[status as keyof typeof REASONS];
      consent = false;
    } else {
      status = c.to;
      reason = WAIT_REASONS[c.to];
      consent = c.consentOutstanding;
    }
    writes.push({ uuid: c.row.uuid, status, reason, consent });
    if (cause && status !== c.row.status) {
      events.push(statusChanged(
        { attendance: c.row.uuid, offer: offer.uuid, edition: offer.editionUuid, participant: c.row.participant, account: c.row.account },
        { from: c.row.status, to: status, heldBack: false, decisionReason: reason, cause },
      ));
    }
  }
  // Raw: every change from `unnest(arrays)`. `sorting` null: a changed state goes to the end of its new group
  // when the list is renumbered below (D10), in the order of `changes` (the order of confirmation).
  await sql`update ${t('attendances')} a set status = v.status, consent_outstanding = v.consent, decision_reason = v.reason,
      held_back = false, sorting = case when a.status = v.status then a.sorting end,
      status_changed_at = case when a.status = v.status then a.status_changed_at else now() end,
      confirmed_at = case when v.status = 'confirmed' then now() else a.confirmed_at end, modified_at = now()
    from unnest(${writes.map((w) => w.uuid)}::uuid[], ${writes.map((w) => w.status)}::text[], ${writes.map((w) => w.consent)}::boolean[],
      ${writes.map((w) => w.reason)}::text[]) as v(uuid, status, consent, reason)
    where a.uuid = v.uuid`.execute(db);
  await syncCharges(db, ctx.tenant.schema, changes.map((c) => c.row.uuid));
  for (const offer of new Set(changes.map((c) => c.row.offer))) await reorderList(ctx, db, offer);
  await recordEvents(ctx, db, events);
}

/** The family's mail of where its submission stands (after it was confirmed, or vouched for by the website). */
export async function queueFamilyStateMail(ctx: ServiceContext, db: Executor, submission: string): Promise<void> {
  const rows = await inSchema(db, ctx.tenant.schema).selectFrom('attendances as a')
    .innerJoin('participants as p', 'p.uuid', 'a.participant_uuid').innerJoin('offers as o', 'o.uuid', 'a.offer_uuid')
    .innerJoin('family_submissions as s', 's.uuid', 'a.submission_uuid').innerJoin('accounts as acc', 'acc.uuid', 's.account_uuid')
    .select(['acc.email', 'p.uuid as child', 'p.firstname', 'o.name as offerName', 'a.status', 'a.fee', 'a.uuid'])
    .where('a.submission_uuid', '=', submission).orderBy('a.seq')
    .$narrowType<{ status: AttendanceState; email: string }>().execute();
  if (rows.length === 0 || !rows[0]!.email) return;
  const children = new Map<string, FamilyChild>();
  for (const r of rows) {
    const c = children.get(r.child) ?? { firstname: r.firstname ?? 'Ihr Kind', offers: [] };
    c.offers.push({ offerName: r.offerName, status: r.status, fee: r.fee });
    children.set(r.child, c);
  }
  await queueMail(ctx, db, {
    kind: 'family_application_state', recipient: rows[0]!.email,
    ...familyApplicationStateMail({ programme: ctx.tenant.name, children: [...children.values()] }),
    payload: { submission, attendances: rows.map((r) => r.uuid) },
  });
}

