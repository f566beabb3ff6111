import type { BookingType } from '../../domain/money.js';
import { anyOf, inSchema, sql, tablesOf, type Executor } from '../../platform/db/sql.js';
import { newUuid } from '../../platform/http/ids.js';

// The write side of money (D8), shared by charges, receipts and transfers: debtors and ledgers are made on
// first need (insert … on conflict do nothing, so concurrent writers agree on one row), bookings are only
// ever inserted (the table refuses UPDATE and DELETE). Call inside the writing transaction.

/** Whoever owes an application's fee (D8): the participant's family account, else the participant. */
export type Party = { account: string | null; participant: string };

export async function ensureDebtor(db: Executor, schema: string, party: Party): Promise<string> {
  const tx = inSchema(db, schema);
  if (party.account) {
    await tx.insertInto('debtors').values({ uuid: newUuid(), account_uuid: party.account })
      .onConflict((oc) => oc.column('account_uuid').where('account_uuid', 'is not', null).doNothing()).execute();
    const row = await tx.selectFrom('debtors').select('uuid').where('account_uuid', '=', party.account).executeTakeFirstOrThrow();
    return row.uuid;
  }
  await tx.insertInto('debtors').values({ uuid: newUuid(), participant_uuid: party.participant })
    .onConflict((oc) => oc.column('participant_uuid').where('participant_uuid', 'is not', null).doNothing()).execute();
  const row = await tx.selectFrom('debtors').select('uuid').where('participant_uuid', '=', party.participant).executeTakeFirstOrThrow();
  return row.uuid;
}

/** The debtor's ledger for the edition (D8), made when missing. */
export async function ensureLedger(db: Executor, schema: string, debtor: string, edition: string): Promise<string> {
  const tx = inSchema(db, schema);
  await tx.insertInto('ledgers').values({ uuid: newUuid(), debtor_uuid: debtor, edition_uuid: edition })
    .onConflict((oc) => oc.columns(['debtor_uuid', 'edition_uuid']).doNothing()).execute();
  const row = await tx.selectFrom('ledgers').select('uuid')
    .where('debtor_uuid', '=', debtor).where('edition_uuid', '=', edition).executeTakeFirstOrThrow();
  return row.uuid;
}

/** A key for `ensureLedgers`: the party and the edition. */
export const ledgerKey = (party: Party, edition: string) => `${party.account ?? ''}|${party.account ? '' : party.participant}|${edition}`;

/**
 * The ledgers of many (party, edition) pairs at once, made when missing: a handful of statements however many
 * pairs (a commit charges thousands of applications). Returns them by `ledgerKey`.
 */
export async function ensureLedgers(db: Executor, schema: string, pairs: readonly (Party & { edition: string })[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (pairs.length === 0) return out;
  const t = tablesOf(schema);
  const debtors = t('debtors');
  const ledgers = t('ledgers');
  const accounts = [...new Set(pairs.filter((p) => p.account).map((p) => p.account!))];
  const children = [...new Set(pairs.filter((p) => !p.account).map((p) => p.participant))];
  // Raw: `insert … select from unnest(arrays)`, one statement however many debtors and ledgers are missing.
  if (accounts.length) {
    await sql`insert into ${debtors} (uuid, account_uuid) select * from unnest(${accounts.map(() => newUuid())}::uuid[], ${accounts}::uuid[])
      on conflict (account_uuid) where account_uuid is not null do nothing`.execute(db);
  }
  if (children.length) {
    await sql`insert into ${debtors} (uuid, participant_uuid) select * from unnest(${children.map(() => newUuid())}::uuid[], ${children}::uuid[])
      on conflict (participant_uuid) where participant_uuid is not null do nothing`.execute(db);
  }
  const found = await inSchema(db, schema).selectFrom('debtors')
    .select(['uuid', 'account_uuid as account', 'participant_uuid as participant'])
    .where((eb) => eb.or([eb('account_uuid', '=', anyOf(accounts)), eb('participant_uuid', '=', anyOf(children))]))
    .execute();
  const debtorOf = new Map(found.map((d) => [d.account ? `a:${d.account}` : `p:${d.participant}`, d.uuid]));
  const wanted = [...new Map(pairs.map((p) => [ledgerKey(p, p.edition), { key: ledgerKey(p, p.edition), debtor: debtorOf.get(p.account ? `a:${p.account}` : `p:${p.participant}`)!, edition: p.edition }])).values()];
  await sql`insert into ${ledgers} (uuid, debtor_uuid, edition_uuid)
    select * from unnest(${wanted.map(() => newUuid())}::uuid[], ${wanted.map((w) => w.debtor)}::uuid[], ${wanted.map((w) => w.edition)}::uuid[])
    on conflict (debtor_uuid, edition_uuid) do nothing`.execute(db);
  // Raw: the ledgers of the (debtor, edition) pairs, joined from `unnest(arrays)`.
  const rows = await sql<{ uuid: string; debtor: string; edition: string }>`
    select l.uuid, l.debtor_uuid as debtor, l.edition_uuid as edition from ${ledgers} l
    join unnest(${wanted.map((w) => w.debtor)}::uuid[], ${wanted.map((w) => w.edition)}::uuid[]) as v(debtor, edition)
      on l.debtor_uuid = v.debtor and l.edition_uuid = v.edition`.execute(db);
  const ledgerOf = new Map(rows.rows.map((r) => [`${r.debtor}|${r.edition}`, r.uuid]));
  for (const w of wanted) out.set(w.key, ledgerOf.get(`${w.debtor}|${w.edition}`)!);
  return out;
}

/** The ledger an application's new bookings go to when it has none yet: its debtor's, for its offer's edition. */
export async function currentLedgerOf(db: Executor, schema: string, attendanceUuid: string): Promise<string | null> {
  const r = await inSchema(db, schema).selectFrom('attendances as a')
    .innerJoin('participants as p', 'p.uuid', 'a.participant_uuid')
    .innerJoin('offers as o', 'o.uuid', 'a.offer_uuid')
    .select(['p.account_uuid as account', 'p.uuid as participant', 'o.edition_uuid as edition'])
    .where('a.uuid', '=', attendanceUuid).executeTakeFirst();
  if (!r) return null;
  return ensureLedger(db, schema, await ensureDebtor(db, schema, r), r.edition);
}

export type NewBooking = {
  ledger: string;
  type: BookingType;
  amount: number;
  text: string | null;
  attendance: string | null;
  receipt: string | null;
};

/** Appends bookings in the given order (their `seq` keeps it); zero amounts are skipped. */
export async function postBookings(db: Executor, schema: string, bookings: readonly NewBooking[]): Promise<void> {
  const rows = bookings.filter((b) => b.amount !== 0);
  if (rows.length === 0) return;
  // Raw: one statement from `unnest(arrays)`; `with ordinality` keeps the array order for the identity column.
  await sql`insert into ${tablesOf(schema)('bookings')} (uuid, ledger_uuid, type, amount, text, attendance_uuid, receipt_uuid)
    select v.uuid, v.ledger, v.type, v.amount, v.text, v.attendance, v.receipt
    from unnest(${rows.map(() => newUuid())}::uuid[], ${rows.map((b) => b.ledger)}::uuid[], ${rows.map((b) => b.type)}::text[],
      ${rows.map((b) => b.amount)}::int[], ${rows.map((b) => b.text)}::text[], ${rows.map((b) => b.attendance)}::uuid[],
      ${rows.map((b) => b.receipt)}::uuid[]) with ordinality as v(uuid, ledger, type, amount, text, attendance, receipt, n)
    order by v.n`.execute(db);
}

/**
 * Keeps `attendances.paid` equal to the receipts rule (D10: paid while an unreversed item of a receipt that is
 * not a reversal covers it). Rows whose flag changes count as modified. Call after receipts or reversals are
 * written, in the same transaction.
 */
export async function refreshPaid(db: Executor, schema: string, attendanceUuids: readonly string[]): Promise<void> {
  const ids = [...new Set(attendanceUuids)];
  if (ids.length === 0) return;
  const t = tablesOf(schema);
  // Raw: the flag of every application computed over `unnest(ids)` and written in one statement.
  await sql`update ${t('attendances')} a set paid = v.paid, modified_at = now()
    from (select x.id, exists (select 1 from ${t('receipt_items')} i join ${t('receipts')} r on r.uuid = i.receipt_uuid
        where i.attendance_uuid = x.id and i.reversed_by_uuid is null and r.reverses_uuid is null) as paid
      from unnest(${ids}::uuid[]) as x(id)) v
    where a.uuid = v.id and a.paid is distinct from v.paid`.execute(db);
}
