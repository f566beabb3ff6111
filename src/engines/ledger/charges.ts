import type { AttendanceState } from '../../domain/attendance-states.js';
import { CHARGE_TYPES, chargeHome, chargePostings, chargeTarget, keptCharge } from '../../domain/money.js';
import type { Selectable } from 'kysely';
import { anyOf, inSchema, sql, tablesOf, type Executor, type TenantDB } from '../../platform/db/sql.js';
import { ensureLedgers, ledgerKey, postBookings, type NewBooking } from './store.js';

// The one place that posts fee charges and their cancellations (D8, D10 "Money"; spec 3.2 "transitions also
// update payment records"), but for a new application's first charge, which the create statement posts with
// the amount `chargeTarget`/`chargePostings` give an application without bookings (issue 10.1,
// src/engines/participant-list `appendApplication`). Every write to an application calls `syncCharges` for the applications it
// touched, inside its transaction (after its changes are flushed): create, transition, PATCH payable,
// transfer (old and new), delete, refill, the commit of held-back decisions, a participant deleted or moved to
// another account, an account deleted, an offer moved to another edition, a receipt's reversal, an offer
// cancelled or relaunched (D5: no application of a cancelled offer is payable).
//
// It is an idempotent reconciler: for each application it compares what SHOULD be charged (`chargeTarget`,
// src/domain/money.ts: the fee while the decision is final with a confirmed place or while it is paid; kept
// when it moves on to participated/noshow; nothing otherwise or once deleted) with the sum of its existing
// charge and cancellation bookings, and posts the difference. Called twice, the second call posts nothing.
// An unpaid application's charge lives in its current debtor's ledger for its offer's edition (moved there,
// with a cancellation in the old ledger, when the child joins a family account or the offer changes edition);
// a paid one's stays with its payments. A deleted application's charges are cancelled where they are.

type A = Selectable<TenantDB['attendances']>;

/** An application asked for, left-joined (every column null once it is deleted). */
type Row = {
  id: string;
  exists: boolean;
  status: AttendanceState | null;
  heldBack: A['held_back'] | null;
  fee: A['fee'];
  payableSwitchedOff: A['payable_switched_off'] | null;
  paid: A['paid'] | null;
  offerCancelled: boolean | null;
  chargeKept: A['charge_kept'] | null;
  offerName: Selectable<TenantDB['offers']>['name'] | null;
  /** Who owes it now (D8: the participant's account, else the participant) and the offer's edition. */
  account: Selectable<TenantDB['participants']>['account_uuid'];
  participant: A['participant_uuid'] | null;
  edition: Selectable<TenantDB['offers']>['edition_uuid'] | null;
};

type Group = {
  attendance: string; ledger: string; amount: number; lastSeq: number;
  account: string | null; participant: string | null; edition: string;
};

/** The group's ledger belongs to the application's current debtor and edition. */
function isCurrent(g: Group, r: Row): boolean {
  if (g.edition !== r.edition) return false;
  return r.account ? g.account === r.account : g.account === null && g.participant === r.participant;
}

export async function syncCharges(db: Executor, schema: string, attendanceUuids: readonly string[]): Promise<void> {
  const ids = [...new Set(attendanceUuids)].sort();
  if (ids.length === 0) return;
  const t = tablesOf(schema);
  // Callers hold the offers' row locks (src/engines/participant-list), so no two writers reconcile
  // one application at once. Raw: a row for every id asked for, from `unnest(ids)`, also for one deleted since.
  const state = await sql<Row>`
    select x.id, a.uuid is not null as exists, a.status, a.held_back as "heldBack", a.fee,
      a.payable_switched_off as "payableSwitchedOff", a.paid, o.name as "offerName",
      o.called_off as "offerCancelled", a.charge_kept as "chargeKept",
      p.account_uuid as account, a.participant_uuid as participant, o.edition_uuid as edition
    from unnest(${ids}::uuid[]) as x(id)
    left join ${t('attendances')} a on a.uuid = x.id
    left join ${t('offers')} o on o.uuid = a.offer_uuid
    left join ${t('participants')} p on p.uuid = a.participant_uuid
    order by x.id`.execute(db);
  const groups = await inSchema(db, schema).selectFrom('bookings as b')
    .innerJoin('ledgers as l', 'l.uuid', 'b.ledger_uuid')
    .innerJoin('debtors as d', 'd.uuid', 'l.debtor_uuid')
    .select([
      'b.attendance_uuid as attendance', 'b.ledger_uuid as ledger', sql<number>`sum(b.amount)::int`.as('amount'),
      sql<number>`max(b.seq)::float8`.as('lastSeq'), 'd.account_uuid as account', 'd.participant_uuid as participant',
      'l.edition_uuid as edition',
    ])
    .where('b.attendance_uuid', '=', anyOf(ids)).where('b.type', '=', anyOf([...CHARGE_TYPES], 'text'))
    .groupBy(['b.attendance_uuid', 'b.ledger_uuid', 'd.account_uuid', 'd.participant_uuid', 'l.edition_uuid'])
    .$narrowType<Group>()
    .execute();

  const byAttendance = new Map<string, Group[]>();
  for (const g of groups) byAttendance.set(g.attendance, [...(byAttendance.get(g.attendance) ?? []), g]);
  const kept: { id: string; kept: boolean | null }[] = [];
  const plans = state.rows.map((r) => {
    const mine = byAttendance.get(r.id) ?? [];
    const charged = mine.reduce((s, g) => s + g.amount, 0);
    // participated/noshow: whether it keeps a charge is recorded when it first gets here (issue 22, D5).
    const chargeKept = r.exists ? keptCharge({ status: r.status!, charged, chargeKept: r.chargeKept }) : null;
    if (r.exists && chargeKept !== r.chargeKept) kept.push({ id: r.id, kept: chargeKept });
    const target = r.exists
      ? chargeTarget({
          status: r.status!, heldBack: !!r.heldBack, fee: r.fee, payableSwitchedOff: !!r.payableSwitchedOff, paid: !!r.paid, charged,
          offerCancelled: !!r.offerCancelled, chargeKept,
        })
      : 0;
    // Where the charge belongs: a paid application's stays where its payments are; an unpaid one's follows
    // the application to its current debtor's ledger for the offer's edition (a child that joined a family
    // account, an offer moved to another edition), so the ledger matches the family's open payments.
    const home = !r.exists ? null : r.paid ? chargeHome(mine) : mine.find((g) => isCurrent(g, r))?.ledger ?? null;
    return { r, mine, target, home };
  });
  // Ledgers still missing are made together (a commit charges thousands of applications at once).
  const missing = plans.filter((p) => p.r.exists && p.home === null && p.target !== 0);
  const made = await ensureLedgers(db, schema, missing.map((p) => ({ account: p.r.account, participant: p.r.participant!, edition: p.r.edition! })));
  const out: NewBooking[] = [];
  for (const { r, mine, target, home: known } of plans) {
    const home = known ?? (r.exists && target !== 0 ? made.get(ledgerKey({ account: r.account, participant: r.participant! }, r.edition!)) ?? null : null);
    for (const p of chargePostings(mine, home, target)) {
      const what = r.offerName ? `Teilnahmebeitrag „${r.offerName}“` : 'Teilnahmebeitrag (Anmeldung gelöscht)';
      out.push({
        ledger: p.ledger, type: p.type, amount: p.amount, attendance: r.id, receipt: null,
        text: p.type === 'charge' ? what : `Storno ${what}`,
      });
    }
  }
  await postBookings(db, schema, out);
  if (kept.length > 0) {
    await sql`update ${t('attendances')} a set charge_kept = k.kept
      from unnest(${kept.map((k) => k.id)}::uuid[], ${kept.map((k) => k.kept)}::boolean[]) as k(id, kept) where a.uuid = k.id`.execute(db);
  }
}
