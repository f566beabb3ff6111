import { CHARGE_TYPES, chargeHome } from '../../domain/money.js';
import { anyOf, inSchema, sql, type Executor } from '../../platform/db/sql.js';
import { currentLedgerOf, postBookings, type NewBooking } from './store.js';

// Spec 4.3 "Transfer" rule 2, D10: the receipt lines move to the new application, which stays paid; amounts
// are not recalculated. The unreversed lines of the old application now name the new one and its ledger, and
// the money moves with them: in the old ledger the payment (and discount) is booked out, in the new one in
// (type `transfer`, naming the receipt). Together with `syncCharges` (cancellation on the old application, a
// charge on the new) every ledger stays balanced. Call inside the transfer's transaction, after
// `syncCharges` ran for the new application (so its charge ledger exists).

/** The ledger holding the application's charge, else its debtor's ledger for its edition. */
export async function chargeLedgerOf(db: Executor, schema: string, attendanceUuid: string): Promise<string | null> {
  const groups = await inSchema(db, schema).selectFrom('bookings')
    .select(['ledger_uuid as ledger', sql<number>`sum(amount)::int`.as('amount'), sql<number>`max(seq)::float8`.as('lastSeq')])
    .where('attendance_uuid', '=', attendanceUuid).where('type', '=', anyOf([...CHARGE_TYPES], 'text'))
    .groupBy('ledger_uuid').execute();
  return chargeHome(groups) ?? (await currentLedgerOf(db, schema, attendanceUuid));
}

export async function moveReceiptLines(db: Executor, schema: string, from: string, to: string): Promise<number> {
  const tx = inSchema(db, schema);
  const lines = await tx.selectFrom('receipt_items as i').innerJoin('receipts as r', 'r.uuid', 'i.receipt_uuid')
    .select(['i.receipt_uuid as receipt', 'r.number', 'i.position', 'i.ledger_uuid as ledger', 'i.amount', 'i.discount'])
    .where('i.attendance_uuid', '=', from).where('i.reversed_by_uuid', 'is', null).where('r.reverses_uuid', 'is', null)
    .orderBy('r.seq').orderBy('i.position').execute();
  if (lines.length === 0) return 0;
  const ledger = await chargeLedgerOf(db, schema, to);
  if (!ledger) throw new Error(`moveReceiptLines: the application ${to} does not exist`);
  const out: NewBooking[] = [];
  for (const l of lines) {
    out.push(
      { ledger: l.ledger, type: 'transfer', amount: l.amount, attendance: from, receipt: l.receipt, text: `Umbuchung Zahlung ${l.number} auf die neue Anmeldung` },
      { ledger: l.ledger, type: 'transfer', amount: l.discount, attendance: from, receipt: l.receipt, text: `Umbuchung Nachlass ${l.number} auf die neue Anmeldung` },
      { ledger, type: 'transfer', amount: -l.amount, attendance: to, receipt: l.receipt, text: `Umbuchung Zahlung ${l.number} von der bisherigen Anmeldung` },
      { ledger, type: 'transfer', amount: -l.discount, attendance: to, receipt: l.receipt, text: `Umbuchung Nachlass ${l.number} von der bisherigen Anmeldung` },
    );
  }
  await postBookings(db, schema, out);
  const receipts = lines.map((l) => l.receipt);
  await tx.updateTable('receipt_items').set({ attendance_uuid: to, ledger_uuid: ledger })
    .where('attendance_uuid', '=', from).where('reversed_by_uuid', 'is', null).where('receipt_uuid', '=', anyOf(receipts))
    .execute();
  await tx.updateTable('receipts').set({ modified_at: sql`now()` }).where('uuid', '=', anyOf(receipts)).execute();
  return lines.length;
}
