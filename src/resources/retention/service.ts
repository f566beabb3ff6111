import {
  accountDue, ageAtOffer, endedBefore, offerEnd, offerFirstDay, participantDue, pseudonymFor, retentionCutoff,
} from '../../domain/retention.js';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { qualified, sql, type Executor } from '../../platform/db/sql.js';
import { purgeIdempotencyKeys } from '../../platform/http/idempotency.js';
import { purgeOutbox } from '../../platform/mail/outbox.js';
import { purgeEvents, recordEvents } from '../../platform/events/events.js';
import { purgeDeliveries } from '../webhooks/service.js';
import type { TenantJobData } from '../../platform/jobs/queue.js';

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

type OfferFacts = { end: Date | null; firstDay: Date | null };
type DateJson = { begin: number; end: number; recurrence: string | null };
type TaskJson = { begin: number | null; end: number | null };

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** The end (for the due rule) and the first day (for the age) of every offer a living participant applied for. */
async function loadOffers(ctx: ServiceContext, db: Executor): Promise<Map<string, OfferFacts>> {
  const t = (name: string) => qualified(ctx.tenant.schema, name);
  const res = await sql<{ uuid: string; dates: DateJson[]; horizon: number | null; holidays: TaskJson[] }>`
    select o.uuid,
      coalesce((select json_agg(json_build_object('begin', extract(epoch from d."begin") * 1000,
          'end', extract(epoch from d."end") * 1000, 'recurrence', d.recurrence))
        from ${t('offer_dates')} d where d.offer_uuid = o.uuid), '[]'::json) as dates,
      (select extract(epoch from max(gt.end_at)) * 1000 from ${t('edition_tasks')} gt
        where gt.edition_uuid = o.edition_uuid)::float8 as horizon,
      coalesce((select json_agg(json_build_object('begin', extract(epoch from ht.begin_at) * 1000,
          'end', extract(epoch from ht.end_at) * 1000))
        from ${t('edition_tasks')} ht where ht.edition_uuid = o.edition_uuid and ht.type = 'holiday'), '[]'::json) as holidays
    from ${t('offers')} o
    where exists (select 1 from ${t('attendances')} a join ${t('participants')} p on p.uuid = a.participant_uuid
      where a.offer_uuid = o.uuid and p.pseudonymised_at is null)`.execute(db);
  const offers = new Map<string, OfferFacts>();
  for (const r of res.rows) {
    const offer = {
      dates: r.dates.map((d) => ({ begin: new Date(d.begin), end: new Date(d.end), recurrence: d.recurrence })),
      horizon: r.horizon === null ? null : new Date(r.horizon),
      holidays: r.holidays.map((h) => ({ begin: h.begin === null ? null : new Date(h.begin), end: h.end === null ? null : new Date(h.end) })),
    };
    let end: Date | null;
    try {
      end = offerEnd(offer);
    } catch {
      end = null; // a stored rule that no longer expands: the offer is treated as not ended (keeps the data)
    }
    offers.set(r.uuid, { end, firstDay: offerFirstDay(offer) });
  }
  return offers;
}

type Candidate = { uuid: string; lastChange: number; offers: string[] };

/**
 * The next participants (after `after`, in uuid order) that may be due: not pseudonymised, no application for an
 * offer in `notEnded` (usually the current season's few offers, a short list to compare with), and, without
 * applications, last changed before the cutoff. The domain rule decides (an offer unknown to the run counts as
 * not ended there).
 */
async function nextCandidates(ctx: ServiceContext, db: Executor, after: string, notEnded: string[], cutoff: Date, limit: number): Promise<Candidate[]> {
  const t = (name: string) => qualified(ctx.tenant.schema, name);
  const res = await sql<Candidate>`
    select p.uuid, (extract(epoch from greatest(p.created_at, p.modified_at)) * 1000)::float8 as "lastChange",
      coalesce((select array_agg(a.offer_uuid) from ${t('attendances')} a where a.participant_uuid = p.uuid), '{}') as offers
    from ${t('participants')} p
    where p.pseudonymised_at is null and p.uuid > ${after}::uuid
      and not exists (select 1 from ${t('attendances')} x where x.participant_uuid = p.uuid and x.offer_uuid = any(${notEnded}::uuid[]))
      and (exists (select 1 from ${t('attendances')} y where y.participant_uuid = p.uuid) or greatest(p.created_at, p.modified_at) < ${cutoff})
    order by p.uuid
    limit ${limit}`.execute(db);
  return res.rows;
}

function decide(c: Candidate, offers: Map<string, OfferFacts>, cutoff: Date): boolean {
  return participantDue(
    { lastChange: new Date(c.lastChange), applications: c.offers.map((o) => ({ offerEnd: offers.get(o)?.end ?? null })) },
    cutoff,
  );
}

/** Accounts among `ids` that still hold personal data, with their children not pseudonymised and not in `due`. */
async function accountFacts(ctx: ServiceContext, db: Executor, ids: string[], due: string[]) {
  const t = (name: string) => qualified(ctx.tenant.schema, name);
  const res = await sql<{ uuid: string; lastChange: number; living: number; pseudonymised: number }>`
    select acc.uuid, (extract(epoch from acc.modified_at) * 1000)::float8 as "lastChange",
      (select count(*) from ${t('participants')} c where c.account_uuid = acc.uuid and c.pseudonymised_at is null
        and c.uuid <> all(${due}::uuid[]))::int as living,
      (select count(*) from ${t('participants')} c where c.account_uuid = acc.uuid
        and (c.pseudonymised_at is not null or c.uuid = any(${due}::uuid[])))::int as pseudonymised
    from ${t('accounts')} acc
    where acc.uuid = any(${ids}::uuid[]) and ${accountHoldsData('acc')}
    order by acc.uuid`.execute(db);
  return res.rows;
}

function accountHoldsData(alias: string) {
  const c = (col: string) => sql.ref(`${alias}.${col}`);
  return sql`(${c('email')} is not null or ${c('firstname')} is not null or ${c('lastname')} is not null
    or ${c('phone')} is not null or ${c('street')} is not null or ${c('zip')} is not null or ${c('city')} is not null)`;
}

/** Which of `ids` are due (domain rule), given the participants `due` in this run. */
async function dueAccounts(ctx: ServiceContext, db: Executor, ids: string[], due: string[], cutoff: Date): Promise<string[]> {
  if (ids.length === 0) return [];
  const facts = await accountFacts(ctx, db, ids, due);
  return facts
    .filter((a) => accountDue({ livingChildren: a.living, pseudonymisedChildren: a.pseudonymised, lastChange: new Date(a.lastChange) }, cutoff))
    .map((a) => a.uuid);
}

/**
 * Removes the accounts' personal data. Where the account is a debtor with a receipt, the name the receipts
 * showed (full name, else the e-mail address that stood for it) is kept on the debtor first: receipts are
 * accounting records with a statutory retention period of their own.
 */
async function pseudonymiseAccounts(ctx: ServiceContext, db: Executor, ids: string[]): Promise<{ accounts: string[]; retained: number }> {
  if (ids.length === 0) return { accounts: [], retained: 0 };
  const t = (name: string) => qualified(ctx.tenant.schema, name);
  const retained = await sql`update ${t('debtors')} d
    set retained_name = coalesce(d.retained_name, nullif(concat_ws(' ', acc.firstname, acc.lastname), ''), acc.email)
    from ${t('accounts')} acc
    where d.account_uuid = acc.uuid and acc.uuid = any(${ids}::uuid[])
      and exists (select 1 from ${t('receipts')} r where r.debtor_uuid = d.uuid)`.execute(db);
  const done = await sql<{ uuid: string }>`update ${t('accounts')}
    set email = null, firstname = null, lastname = null, phone = null, street = null, zip = null, city = null,
      pseudonymised_at = now(), modified_at = now()
    where uuid = any(${ids}::uuid[])
    returning uuid`.execute(db);
  return { accounts: done.rows.map((r) => r.uuid).sort(), retained: Number(retained.numAffectedRows ?? 0) };
}

type BatchResult = { participants: string[]; accounts: string[]; applications: number; retained: number };

/** One batch in one transaction: lock, decide again on what is committed, keep ages, remove, then the accounts. */
async function pseudonymiseBatch(ctx: ServiceContext, uuids: string[], offers: Map<string, OfferFacts>, cutoff: Date): Promise<BatchResult> {
  const t = (name: string) => qualified(ctx.tenant.schema, name);
  return ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    // The lock waits for a transaction that is adding an application (its foreign key takes a share lock on the
    // participant) and blocks new ones until we commit. A participant pseudonymised meanwhile drops out.
    const locked = await sql<{ uuid: string; dob: string | null; accountUuid: string | null; lastChange: number }>`
      select p.uuid, to_char(p.date_of_birth, 'YYYY-MM-DD') as dob, p.account_uuid as "accountUuid",
        (extract(epoch from greatest(p.created_at, p.modified_at)) * 1000)::float8 as "lastChange"
      from ${t('participants')} p
      where p.uuid = any(${uuids}::uuid[]) and p.pseudonymised_at is null
      order by p.uuid
      for update`.execute(db);
    if (locked.rows.length === 0) return { participants: [], accounts: [], applications: 0, retained: 0 };
    // A new statement, so a new snapshot: applications committed while we waited for the lock are seen.
    const apps = await sql<{ uuid: string; participantUuid: string; offerUuid: string }>`
      select a.uuid, a.participant_uuid as "participantUuid", a.offer_uuid as "offerUuid"
      from ${t('attendances')} a where a.participant_uuid = any(${locked.rows.map((r) => r.uuid)}::uuid[])`.execute(db);
    const appsOf = new Map<string, { uuid: string; offerUuid: string }[]>();
    for (const a of apps.rows) appsOf.set(a.participantUuid, [...(appsOf.get(a.participantUuid) ?? []), a]);
    const due = locked.rows.filter((p) =>
      decide({ uuid: p.uuid, lastChange: p.lastChange, offers: (appsOf.get(p.uuid) ?? []).map((a) => a.offerUuid) }, offers, cutoff));
    if (due.length === 0) return { participants: [], accounts: [], applications: 0, retained: 0 };
    const dueIds = due.map((p) => p.uuid);

    // The age at the offer's first date, while the birth date is still there; free-text and file answers go.
    const ageRows = due.flatMap((p) => (appsOf.get(p.uuid) ?? []).map((a) => ({
      uuid: a.uuid, age: ageAtOffer(p.dob, offers.get(a.offerUuid)?.firstDay ?? null),
    })));
    if (ageRows.length > 0) {
      await sql`update ${t('attendances')} a
        set participant_age = coalesce(a.participant_age, v.age), modified_at = now(),
          answers = (select coalesce(jsonb_agg(x.value order by x.ordinality), '[]'::jsonb)
            from jsonb_array_elements(a.answers) with ordinality as x(value, ordinality)
            where x.value->>'type' in ('yn', 'int'))
        from unnest(${ageRows.map((r) => r.uuid)}::uuid[], ${ageRows.map((r) => r.age)}::int[]) as v(uuid, age)
        where a.uuid = v.uuid`.execute(db);
    }
    // A child without an account is its own debtor (D8): its receipts keep the name they were made out to.
    const retainedChildren = await sql`update ${t('debtors')} d
      set retained_name = coalesce(d.retained_name, nullif(concat_ws(' ', p.firstname, p.lastname), ''))
      from ${t('participants')} p
      where d.participant_uuid = p.uuid and p.uuid = any(${dueIds}::uuid[])
        and exists (select 1 from ${t('receipts')} r where r.debtor_uuid = d.uuid)`.execute(db);
    await sql`update ${t('participants')} p
      set firstname = null, lastname = null, date_of_birth = null, email = null, phone = null,
        pseudonym = v.pseudonym, pseudonymised_at = now(), modified_at = now()
      from unnest(${dueIds}::uuid[], ${due.map((p) => pseudonymFor(p.uuid))}::text[]) as v(uuid, pseudonym)
      where p.uuid = v.uuid`.execute(db);

    // The families: every account of these children changed (its `participants` names); those left without a
    // living child lose their personal data. Locked before they are counted (a child being added waits).
    const accountIds = [...new Set(due.map((p) => p.accountUuid).filter((a): a is string => a !== null))].sort();
    let accounts: { accounts: string[]; retained: number } = { accounts: [], retained: 0 };
    if (accountIds.length > 0) {
      await sql`select uuid from ${t('accounts')} where uuid = any(${accountIds}::uuid[]) order by uuid for update`.execute(db);
      await sql`update ${t('accounts')} set modified_at = now() where uuid = any(${accountIds}::uuid[])`.execute(db);
      accounts = await pseudonymiseAccounts(ctx, db, await dueAccounts(ctx, db, accountIds, [], cutoff));
    }
    // Issue 14: one event per child, in one statement.
    await recordEvents(ctx, db, due.map((p) => ({ type: 'participant.pseudonymised' as const, data: {
      participant: p.uuid, account: p.accountUuid ?? undefined, accountPseudonymised: p.accountUuid !== null && accounts.accounts.includes(p.accountUuid),
    } })));
    return {
      participants: dueIds,
      accounts: accounts.accounts,
      applications: ageRows.length,
      retained: Number(retainedChildren.numAffectedRows ?? 0) + accounts.retained,
    };
  });
}

/**
 * Accounts without any living child that were last changed before the cutoff and still hold personal data (a
 * family that never registered a child, or whose children were deleted), in batches.
 */
async function sweepAccounts(
  ctx: ServiceContext, cutoff: Date, due: string[], dryRun: boolean, batchSize: number,
): Promise<{ accounts: string[]; retained: number; batches: number }> {
  const t = (name: string) => qualified(ctx.tenant.schema, name);
  const found: string[] = [];
  let retained = 0;
  let batches = 0;
  let after = NIL_UUID;
  for (;;) {
    const page = await sql<{ uuid: string }>`
      select acc.uuid from ${t('accounts')} acc
      where acc.uuid > ${after}::uuid and acc.modified_at < ${cutoff} and ${accountHoldsData('acc')}
        and not exists (select 1 from ${t('participants')} c where c.account_uuid = acc.uuid and c.pseudonymised_at is null
          and c.uuid <> all(${due}::uuid[]))
      order by acc.uuid limit ${batchSize}`.execute(dbOf(ctx.em));
    if (page.rows.length === 0) break;
    after = page.rows[page.rows.length - 1].uuid;
    const ids = page.rows.map((r) => r.uuid);
    if (dryRun) {
      found.push(...(await dueAccounts(ctx, dbOf(ctx.em), ids, due, cutoff)));
      continue;
    }
    batches++;
    const done = await ctx.em.transactional(async (em) => {
      const db = dbOf(em);
      await sql`select uuid from ${t('accounts')} where uuid = any(${ids}::uuid[]) order by uuid for update`.execute(db);
      return pseudonymiseAccounts(ctx, db, await dueAccounts(ctx, db, ids, [], cutoff));
    });
    found.push(...done.accounts);
    retained += done.retained;
  }
  return { accounts: found, retained, batches };
}

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
    const ids = participants.length === 0 ? [] : (await sql<{ accountUuid: string }>`
      select distinct account_uuid as "accountUuid" from ${qualified(ctx.tenant.schema, 'participants')}
      where uuid = any(${participants}::uuid[]) and account_uuid is not null`.execute(db)).rows.map((r) => r.accountUuid);
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
