// The ledger (spec 2.4-2.6; D8): debtors, their ledgers per edition, bookings and receipts' lines. The one
// entry for every resource that changes what a family owes: `syncCharges` brings an application's charge in
// line with its state (charges.ts), the store posts bookings (store.ts), receipts move their lines
// (lines.ts); the money resources share their filters (filters.ts) and refuse changes to records (immutable.ts).
export { syncCharges } from './charges.js';
export {
  currentLedgerOf, ensureDebtor, ensureLedger, ensureLedgers, ledgerKey, postBookings, refreshPaid, type NewBooking, type Party,
} from './store.js';
export { chargeLedgerOf, moveReceiptLines } from './lines.js';
export { accountFilter, debtorFilter, debtorNameSql, debtorScope, editionFilter } from './filters.js';
export { refuseChange } from './immutable.js';
