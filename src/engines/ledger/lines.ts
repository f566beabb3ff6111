import { CHARGE_TYPES, chargeHome } from '../../domain/money.js';
import { qualified, sql, type Executor } from '../../platform/db/sql.js';
import { currentLedgerOf, postBookings, type NewBooking } from './store.js';

// Spec 4.3 "Transfer" rule 2, D10: the receipt lines move to the new application, which stays paid; amounts
// are not recalculated. The unreversed lines of the old application now name the new one and its ledger, and
// the money moves with them: in the old ledger the payment (and discount) is booked out, in the new one in
// (type `transfer`, naming the receipt). Together with `syncCharges` (cancellation on the old application, a
// charge on the new) every ledger stays balanced. Call inside the transfer's transaction, after
// `syncCharges` ran for the new application (so its charge ledger exists).

type Line = { receipt: string; number: string; position: number; ledger: string; amount: number; discount: number };

/** The ledger holding the application's charge, else its debtor's ledger for its edition. */
export async function chargeLedgerOf(db: Executor, schema: string, attendanceUuid: string): Promise<string | null> {
  const groups = await sql<{ ledger: string; amount: number; lastSeq: number }>`
    select ledger_uuid as ledger, sum(amount)::int as amount, max(seq)::float8 as "lastSeq" from ${qualified(schema, 'bookings')}
    where attendance_uuid = ${attendanceUuid}::uuid and type = any(${[...CHARGE_TYPES]}::text[])
    group by ledger_uuid`.execute(db);
  return chargeHome(groups.rows) ?? (await currentLedgerOf(db, schema, attendanceUuid));
}

export async function moveReceiptLines(db: Executor, schema: string, from: string, to: string): Promise<number> {
  const t = (name: string) => qualified(schema, name);
  const res = await sql<Line>`
    select i.receipt_uuid as receipt, r.number, i.position, i.ledger_uuid as ledger, i.amount, i.discount
    from ${t('receipt_items')} i join ${t('receipts')} r on r.uuid = i.receipt_uuid
    where i.attendance_uuid = ${from}::uuid and i.reversed_by_uuid is null and r.reverses_uuid is null
    order by r.seq, i.position`.execute(db);
  if (res.rows.length === 0) return 0;
  const ledger = await chargeLedgerOf(db, schema, to);
  if (!ledger) throw new Error(`moveReceiptLines: the application ${to} does not exist`);
  const out: NewBooking[] = [];
  for (const l of res.rows) {
    out.push(
      { ledger: l.ledger, type: 'transfer', amount: l.amount, attendance: from, receipt: l.receipt, text: `Umbuchung Zahlung ${l.number} auf die neue Anmeldung` },
      { ledger: l.ledger, type: 'transfer', amount: l.discount, attendance: from, receipt: l.receipt, text: `Umbuchung Nachlass ${l.number} auf die neue Anmeldung` },
      { ledger, type: 'transfer', amount: -l.amount, attendance: to, receipt: l.receipt, text: `Umbuchung Zahlung ${l.number} von der bisherigen Anmeldung` },
      { ledger, type: 'transfer', amount: -l.discount, attendance: to, receipt: l.receipt, text: `Umbuchung Nachlass ${l.number} von der bisherigen Anmeldung` },
    );
  }
  await postBookings(db, schema, out);
  await sql`update ${t('receipt_items')} set attendance_uuid = ${to}::uuid, ledger_uuid = ${ledger}::uuid
    where attendance_uuid = ${from}::uuid and reversed_by_uuid is null
      and receipt_uuid = any(${res.rows.map((l) => l.receipt)}::uuid[])`.execute(db);
  await sql`update ${t('receipts')} set modified_at = now() where uuid = any(${res.rows.map((l) => l.receipt)}::uuid[])`.execute(db);
  return res.rows.length;
}
