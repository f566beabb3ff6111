import { availableTransitions, type AttendanceState } from '../../domain/attendance-states.js';
import { isPayable } from '../../domain/payable.js';
import { ageAtOffer } from '../../domain/retention.js';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { inSchema, sql, tablesOf, type Executor, type RawBuilder } from '../../platform/db/sql.js';
import { formatTimestamp } from '../../platform/http/dates.js';
import { pageOf } from '../../platform/http/fields.js';
import { emptyPage, LIST_TOTAL, reportTotal } from '../../platform/http/paging.js';
import { parseId } from '../../platform/http/ids.js';
import { notFound } from '../../domain/errors.js';
import { badRequest } from '../../platform/http/problem.js';
import { resolveAccountRef } from '../../engines/families/index.js';
import { filesJsonSql } from '../../engines/answer-files/index.js';
import { fullNameSql, participantNameSql } from '../../engines/families/index.js';
import { assertListReadable, seesApplicantNames, type Viewer } from '../../engines/access/index.js';
import type { StoredAnswer } from './entity.js';
import type { AttendanceOut, ListAttendancesInput, OfferAttendancesInput } from './schema.js';

// Reads of applications (spec 2.2, 4.3 "List"): one SQL projection per page, every reference joined in.

/** One application as the projection reads it; `toOut` makes the response of it. */
export type Row = {
  uuid: string; status: AttendanceState; sorting: number | null; userPriority: number | null;
  allAlternateDates: boolean; consentOutstanding: boolean; heldBack: boolean; decisionReason: string | null;
  createdByAdmin: boolean; fee: number | null; payableSwitchedOff: boolean; paid: boolean; answers: StoredAnswer[];
  confirmedAt: string | null; statusChangedAt: string; createdAt: string; modifiedAt: string;
  offerUuid: string; offerName: string; offerAlias: string; offerCancelled: boolean;
  editionUuid: string; editionName: string; editionAlias: string;
  participantUuid: string; pseudonymised: boolean; participantName: string | null;
  participantPseudonym: string | null; participantAge: number | null; dateOfBirth: string | null; offerFirstDay: number | null;
  accountUuid: string | null; accountName: string | null;
  receipts: string[];
  /** Spec 2.2 `files`: the answer files (src/engines/answer-files). */
  files: AttendanceOut['files'];
};

/**
 * `payable` as SQL for the filter: the same rule as `isPayable` (src/domain/payable.ts, D10), which computes
 * the field itself; the list tests check that both agree.
 */
export function payableSql(a = 'a', o = 'o'): RawBuilder<boolean> {
  const c = (col: string) => sql.ref(`${a}.${col}`);
  return sql<boolean>`(${c('status')} = 'confirmed' and not ${c('held_back')} and coalesce(${c('fee')}, 0) > 0 and not ${c('payable_switched_off')}
    and not ${sql.ref(`${o}.called_off`)})`;
}

/** The first day of the offer aliased `o` (its first date, else its edition's first holiday), epoch ms (D9 age). */
export function offerFirstDaySql(schema: string): RawBuilder<number | null> {
  const t = tablesOf(schema);
  return sql<number | null>`(extract(epoch from coalesce((select min(fd."begin") from ${t('offer_dates')} fd where fd.offer_uuid = o.uuid),
        (select min(ht.begin_at) from ${t('edition_tasks')} ht where ht.edition_uuid = o.edition_uuid and ht.type = 'holiday'))) * 1000)::float8`;
}

/** Raw: one statement per page with every reference joined in and the receipts aggregated as json. */
function projection(ctx: ServiceContext, where: RawBuilder<unknown>, orderBy: RawBuilder<unknown>, limit: number, offset: number) {
  const t = tablesOf(ctx.tenant.schema);
  // `listTotal`: how many rows the conditions match, for the paging headers (issue 24).
  return sql<Row & { listTotal: number }>`
    select a.uuid, ${LIST_TOTAL}, a.status, a.sorting, a.user_priority as "userPriority", a.all_alternate_dates as "allAlternateDates",
      a.consent_outstanding as "consentOutstanding", a.held_back as "heldBack", a.decision_reason as "decisionReason",
      a.created_by_admin as "createdByAdmin", a.fee, a.payable_switched_off as "payableSwitchedOff", a.paid, a.answers,
      a.confirmed_at::text as "confirmedAt", a.status_changed_at::text as "statusChangedAt",
      a.created_at::text as "createdAt", a.modified_at::text as "modifiedAt",
      o.uuid as "offerUuid", o.name as "offerName", o.alias as "offerAlias", o.called_off as "offerCancelled",
      e.uuid as "editionUuid", e.name as "editionName", e.alias as "editionAlias",
      p.uuid as "participantUuid", p.pseudonymised_at is not null as pseudonymised, ${participantNameSql('p')} as "participantName",
      -- D9: the pseudonym and the age kept once pseudonymised; until then the age follows the birth date (retention.ts).
      case when p.pseudonymised_at is not null then p.pseudonym end as "participantPseudonym", a.participant_age as "participantAge",
      case when p.pseudonymised_at is null then to_char(p.date_of_birth, 'YYYY-MM-DD') end as "dateOfBirth",
      ${offerFirstDaySql(ctx.tenant.schema)} as "offerFirstDay",
      acc.uuid as "accountUuid", ${fullNameSql('acc')} as "accountName",
      -- Spec 2.2 / D10: the paid receipts covering it (unreversed items of receipts that are no reversal).
      coalesce((select json_agg(ri.receipt_uuid order by rr.seq) from ${t('receipt_items')} ri
        join ${t('receipts')} rr on rr.uuid = ri.receipt_uuid
        where ri.attendance_uuid = a.uuid and ri.reversed_by_uuid is null and rr.reverses_uuid is null), '[]'::json) as receipts,
      ${filesJsonSql(ctx.tenant.schema, 'a')} as files
    from ${t('attendances')} a
    join ${t('offers')} o on o.uuid = a.offer_uuid
    join ${t('editions')} e on e.uuid = o.edition_uuid
    join ${t('participants')} p on p.uuid = a.participant_uuid
    left join ${t('accounts')} acc on acc.uuid = p.account_uuid
    where ${where}
    order by ${orderBy}
    limit ${limit} offset ${offset}`;
}

export function toOut(viewer: Viewer, r: Row): AttendanceOut {
  // Spec 5.5: names the caller may not see are left out and flagged; a pseudonymised participant has none (D9).
  const masked = !seesApplicantNames(viewer, { status: r.status, heldBack: r.heldBack });
  const participantName = r.pseudonymised ? null : r.participantName;
  const withheld = masked && (participantName !== null || r.accountName !== null);
  const out = {
    uuid: r.uuid,
    status: r.status,
    offer: { uuid: r.offerUuid, name: r.offerName, alias: r.offerAlias },
    edition: { uuid: r.editionUuid, name: r.editionName, alias: r.editionAlias },
    // Spec 2.2: omitted once the participant was pseudonymised.
    participant: r.pseudonymised ? undefined : { uuid: r.participantUuid, name: masked ? undefined : participantName ?? undefined },
    // D9 (docs/decisions.md "Retention"): the child's age at the offer's first date, kept on the application when
    // the birth date is removed; the pseudonym stands in for the omitted participant.
    participantAge: r.participantAge ?? ageAtOffer(r.dateOfBirth, r.offerFirstDay != null ? new Date(r.offerFirstDay) : null) ?? undefined,
    participantPseudonym: r.participantPseudonym ?? undefined,
    // D9: a pseudonymised child's application names no family either (the link stays: the account is its debtor, D8).
    account: r.accountUuid ? { uuid: r.accountUuid, name: masked || r.pseudonymised ? undefined : r.accountName ?? undefined } : undefined,
    createdAt: formatTimestamp(r.createdAt)!,
    modifiedAt: formatTimestamp(r.modifiedAt)!,
    statusChangedAt: formatTimestamp(r.statusChangedAt)!,
    confirmedAt: formatTimestamp(r.confirmedAt),
    // D10: paid while an unreversed receipt covers it; the column is kept equal to that rule by the receipts
    // service (src/engines/ledger/store.ts `refreshPaid`) in the same transactions.
    paid: r.paid,
    payable: isPayable({ status: r.status, heldBack: r.heldBack, fee: r.fee, payableSwitchedOff: r.payableSwitchedOff, offerCancelled: r.offerCancelled }),
    fee: r.fee ?? 0,
    sorting: r.sorting ?? undefined,
    userPriority: r.userPriority ?? undefined,
    allAlternateDates: r.allAlternateDates,
    consentOutstanding: r.consentOutstanding,
    heldBack: r.heldBack,
    decisionReason: r.decisionReason ?? undefined,
    createdByAdmin: r.createdByAdmin,
    answers: r.answers ?? [],
    files: r.files ?? [],
    receipts: r.receipts ?? [],
    transitions: availableTransitions(r.status),
    piiMasked: withheld,
  };
  return out;
}

/** The applications of a family's submission (D11) as the caller sees them, in the order they were made; one statement. */
export async function readSubmission(ctx: ServiceContext, submission: string, participant: string | null = null, db: Executor = dbOf(ctx.em)): Promise<AttendanceOut[]> {
  const only = participant ? sql` and a.participant_uuid = ${participant}::uuid` : sql``;
  const res = await projection(ctx, sql`a.submission_uuid = ${submission}::uuid${only}`, sql`a.seq`, 1000, 0).execute(db);
  return res.rows.map((r) => toOut(ctx.viewer, r));
}

/** One application as the caller sees it, without access checks (for responses to writes); null when gone. */
export async function readAttendance(ctx: ServiceContext, uuid: string, db: Executor = dbOf(ctx.em)): Promise<AttendanceOut | null> {
  const res = await projection(ctx, sql`a.uuid = ${uuid}::uuid`, sql`a.uuid`, 1, 0).execute(db);
  return res.rows[0] ? toOut(ctx.viewer, res.rows[0]) : null;
}

export const attendanceNotFound = (uuid: string) =>
  notFound(`No application with the identifier ${uuid} exists, or you may not see it.`);

/** The offer of an application, or null when no application has the id. */
export async function offerOfAttendance(ctx: ServiceContext, db: Executor, uuid: string): Promise<string | null> {
  const row = await inSchema(db, ctx.tenant.schema).selectFrom('attendances').select('offer_uuid').where('uuid', '=', uuid).executeTakeFirst();
  return row?.offer_uuid ?? null;
}

export async function getAttendance(ctx: ServiceContext, uuid: string): Promise<AttendanceOut> {
  const db = dbOf(ctx.em);
  const offerUuid = await offerOfAttendance(ctx, db, uuid);
  if (!offerUuid) throw attendanceNotFound(uuid);
  // D10: organisers read single applications of their released lists.
  await assertListReadable(ctx, db, offerUuid, () => attendanceNotFound(uuid));
  const out = await readAttendance(ctx, uuid, db);
  if (!out) throw attendanceNotFound(uuid);
  return out;
}

/** A reference filter value as id (UUID/base58) and as alias. */
function refParams(value: string): { id: string | null; alias: string } {
  return { id: parseId(value), alias: value };
}

type Filters = Omit<ListAttendancesInput, 'offer'>;

export async function listAttendances(ctx: ServiceContext, input: ListAttendancesInput): Promise<AttendanceOut[]> {
  const db = dbOf(ctx.em);
  const viewer = ctx.viewer;
  let offerUuid: string | null = null;
  if (input.offer !== undefined) {
    // Spec 1.9: the one reference filter where matching nothing is an error (404).
    offerUuid = parseId(input.offer);
    if (!offerUuid) throw notFound(`No offer with the identifier ${input.offer.slice(0, 80)} exists.`);
  } else if (viewer.kind === 'organiser') {
    throw badRequest('offer: organiser users must name an offer to list its applications.');
  }
  // An unknown offer is named as the caller sent it (UUID or base58 form).
  return listOf(ctx, db, offerUuid, input, () => notFound(`No offer with the identifier ${input.offer!.slice(0, 80)} exists, or you may not see it.`));
}

export async function listOfferAttendances(ctx: ServiceContext, input: OfferAttendancesInput): Promise<AttendanceOut[]> {
  return listOf(ctx, dbOf(ctx.em), input.uuid, input);
}

async function listOf(ctx: ServiceContext, db: Executor, offerUuid: string | null, input: Filters, missing?: () => Error): Promise<AttendanceOut[]> {
  const viewer = ctx.viewer;
  if (offerUuid) await assertListReadable(ctx, db, offerUuid, missing, { list: true });
  const { limit, offset } = pageOf(input);
  const conds: RawBuilder<unknown>[] = [sql`true`];
  if (offerUuid) conds.push(sql`a.offer_uuid = ${offerUuid}::uuid`);
  if (input.participant !== undefined) {
    const id = parseId(input.participant);
    if (!id) return emptyPage(ctx, { limit, offset });
    conds.push(sql`a.participant_uuid = ${id}::uuid`);
  }
  if (input.account !== undefined) {
    const account = await resolveAccountRef(ctx, input.account, db);
    if (!account) return emptyPage(ctx, { limit, offset });
    conds.push(sql`p.account_uuid = ${account}::uuid`);
  }
  if (input.edition !== undefined) {
    const r = refParams(input.edition);
    conds.push(sql`(e.uuid = ${r.id}::uuid or e.alias = ${r.alias})`);
  }
  if (input.host !== undefined) {
    const r = refParams(input.host);
    const t = tablesOf(ctx.tenant.schema);
    conds.push(sql`exists (select 1 from ${t('offer_hosts')} fh
      join ${t('organisers')} g on g.uuid = fh.organiser_uuid
      where fh.offer_uuid = a.offer_uuid and (g.uuid = ${r.id}::uuid or g.alias = ${r.alias}))`);
  }
  if (input.status) conds.push(sql`a.status = any(${input.status}::text[])`);
  if (input.paid !== undefined) conds.push(sql`a.paid = ${input.paid}`);
  if (input.payable !== undefined) conds.push(sql`${payableSql('a')} = ${input.payable}`);
  if (input.heldBack !== undefined) conds.push(sql`a.held_back = ${input.heldBack}`);
  if (input.modifiedSince) conds.push(sql`a.modified_at >= ${input.modifiedSince.instant}`);
  // Spec 4.3: newest first; with an offer, participant-list order.
  const orderBy = offerUuid ? sql`a.sorting, a.uuid` : sql`a.created_at desc, a.uuid desc`;
  const where = sql.join(conds, sql` and `);
  const res = await projection(ctx, where, orderBy, limit, offset).execute(db);
  await reportTotal(ctx, { limit, offset }, res.rows, async () => (await projection(ctx, where, orderBy, 1, 0).execute(db)).rows);
  return res.rows.map((r) => toOut(viewer, r));
}

/** The application as the caller sees it, read after the transaction committed. */
export async function respond(ctx: ServiceContext, uuid: string): Promise<AttendanceOut> {
  const out = await readAttendance(ctx, uuid);
  if (!out) throw attendanceNotFound(uuid);
  return out;
}
