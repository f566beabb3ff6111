import { offerEnd, offerFirstDay, participantDue, accountDue, retentionStart } from '../../domain/retention.js';
import type { ServiceContext } from '../../platform/context.js';
import { sql, tablesOf, type Executor } from '../../platform/db/sql.js';
import { editionHorizonSql } from '../../engines/edition-phases/index.js';

// Retention's reads (service.ts): the offers' ends, the participants that may be due, the facts of their
// families. Raw SQL with typed rows: json and array aggregates per row, which read plainer as SQL.

export type OfferFacts = { end: Date | null; firstDay: Date | null };
type DateJson = { begin: number; end: number; recurrence: string | null };
type TaskJson = { begin: number | null; end: number | null };

export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/**
 * When retention starts (for the due rule: the edition's holidays end, `retentionStart`) and the first day (for
 * the age) of every offer a living participant applied for. Every offer of those offers' editions is read: an
 * edition without a holiday task ends with its last offer date.
 */
export async function loadOffers(ctx: ServiceContext, db: Executor): Promise<Map<string, OfferFacts>> {
  const t = tablesOf(ctx.tenant.schema);
  const res = await sql<{ uuid: string; edition: string; wanted: boolean; dates: DateJson[]; horizon: number | null; holidays: TaskJson[] }>`
    select o.uuid, o.edition_uuid as edition,
      exists (select 1 from ${t('attendances')} a join ${t('participants')} p on p.uuid = a.participant_uuid
        where a.offer_uuid = o.uuid and p.pseudonymised_at is null) as wanted,
      coalesce((select json_agg(json_build_object('begin', extract(epoch from d."begin") * 1000,
          'end', extract(epoch from d."end") * 1000, 'recurrence', d.recurrence))
        from ${t('offer_dates')} d where d.offer_uuid = o.uuid), '[]'::json) as dates,
      ${editionHorizonSql(ctx.tenant.schema, 'o.edition_uuid')} as horizon,
      coalesce((select json_agg(json_build_object('begin', extract(epoch from ht.begin_at) * 1000,
          'end', extract(epoch from ht.end_at) * 1000))
        from ${t('edition_tasks')} ht where ht.edition_uuid = o.edition_uuid and ht.type = 'holiday'), '[]'::json) as holidays
    from ${t('offers')} o
    where o.edition_uuid in (select w.edition_uuid from ${t('offers')} w where exists (select 1 from ${t('attendances')} a
      join ${t('participants')} p on p.uuid = a.participant_uuid where a.offer_uuid = w.uuid and p.pseudonymised_at is null))`.execute(db);
  const own = new Map<string, OfferFacts & { edition: string; holidays: { begin: Date | null; end: Date | null }[]; broken: boolean }>();
  const endsOfEdition = new Map<string, (Date | null)[]>();
  for (const r of res.rows) {
    const offer = {
      dates: r.dates.map((d) => ({ begin: new Date(d.begin), end: new Date(d.end), recurrence: d.recurrence })),
      horizon: r.horizon === null ? null : new Date(r.horizon),
      holidays: r.holidays.map((h) => ({ begin: h.begin === null ? null : new Date(h.begin), end: h.end === null ? null : new Date(h.end) })),
    };
    let end: Date | null = null;
    let broken = false;
    try {
      if (offer.dates.length > 0) end = offerEnd(offer);
    } catch {
      broken = true; // a stored rule that no longer expands: the offer is treated as not ended (keeps the data)
    }
    endsOfEdition.set(r.edition, [...(endsOfEdition.get(r.edition) ?? []), end]);
    if (r.wanted) own.set(r.uuid, { end, firstDay: offerFirstDay(offer), edition: r.edition, holidays: offer.holidays, broken });
  }
  const offers = new Map<string, OfferFacts>();
  for (const [uuid, o] of own) {
    const end = o.broken ? null : retentionStart({ holidays: o.holidays, editionOfferEnds: endsOfEdition.get(o.edition) ?? [], ownEnd: o.end });
    offers.set(uuid, { end, firstDay: o.firstDay });
  }
  return offers;
}

export type Candidate = { uuid: string; lastChange: number; offers: string[] };

/**
 * The next participants (after `after`, in uuid order) that may be due: not pseudonymised, no application for an
 * offer in `notEnded` (usually the current season's few offers, a short list to compare with), and, without
 * applications, last changed before the cutoff. The domain rule decides (an offer unknown to the run counts as
 * not ended there).
 */
export async function nextCandidates(ctx: ServiceContext, db: Executor, after: string, notEnded: string[], cutoff: Date, limit: number): Promise<Candidate[]> {
  const t = tablesOf(ctx.tenant.schema);
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

export function decide(c: Candidate, offers: Map<string, OfferFacts>, cutoff: Date): boolean {
  return participantDue(
    { lastChange: new Date(c.lastChange), applications: c.offers.map((o) => ({ offerEnd: offers.get(o)?.end ?? null })) },
    cutoff,
  );
}

/** Accounts among `ids` that still hold personal data, with their children not pseudonymised and not in `due`. */
async function accountFacts(ctx: ServiceContext, db: Executor, ids: string[], due: string[]) {
  const t = tablesOf(ctx.tenant.schema);
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

export function accountHoldsData(alias: string) {
  const c = (col: string) => sql.ref(`${alias}.${col}`);
  return sql<boolean>`(${c('email')} is not null or ${c('firstname')} is not null or ${c('lastname')} is not null
    or ${c('phone')} is not null or ${c('street')} is not null or ${c('zip')} is not null or ${c('city')} is not null)`;
}

/** Which of `ids` are due (domain rule), given the participants `due` in this run. */
export async function dueAccounts(ctx: ServiceContext, db: Executor, ids: string[], due: string[], cutoff: Date): Promise<string[]> {
  if (ids.length === 0) return [];
  const facts = await accountFacts(ctx, db, ids, due);
  return facts
    .filter((a) => accountDue({ livingChildren: a.living, pseudonymisedChildren: a.pseudonymised, lastChange: new Date(a.lastChange) }, cutoff))
    .map((a) => a.uuid);
}
