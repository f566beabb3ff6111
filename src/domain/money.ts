import { DateTime } from 'luxon';
import { BERLIN } from './berlin-time.js';
import type { AttendanceState } from './attendance-states.js';
import { isPayable } from './payable.js';

// Money rules (spec 2.2 paid/payable, 4.3; D8, D10 "Money"), pure. Amounts are integer cents. Signs: a charge
// is positive (owed), a payment negative; a ledger's balance is what the debtor owes.

export const BOOKING_TYPES = ['charge', 'cancellation', 'payment', 'discount', 'reversal', 'transfer'] as const;
export type BookingType = (typeof BOOKING_TYPES)[number];

/** The bookings that make up an application's fee charge (the rest are payments and their moves). */
export const CHARGE_TYPES = ['charge', 'cancellation'] as const satisfies readonly BookingType[];

/** A ledger's balance: the sum of its bookings. */
export function ledgerBalance(amounts: readonly number[]): number {
  return amounts.reduce((sum, a) => sum + a, 0);
}

// ---- the charge rule ------------------------------------------------------------------------------------

export interface ChargeInput {
  status: AttendanceState;
  heldBack: boolean;
  fee: number | null;
  payableSwitchedOff: boolean;
  /** An unreversed receipt covers the application. */
  paid: boolean;
  /** What is charged for it now (sum of its charge and cancellation bookings). */
  charged: number;
  /** Its offer is cancelled (D5): unpaid charges are cancelled until a relaunch. Absent: false. */
  offerCancelled?: boolean;
  /**
   * In `participated`/`noshow`: whether it held a charge when it moved on (recorded by the reconciler); null or
   * absent: not recorded yet, so whether it is charged now (`keptCharge`).
   */
  chargeKept?: boolean | null;
}

/** States that keep an existing charge (D10: leaving `confirmed` for them does not cancel it). */
const KEEPS_CHARGE: readonly AttendanceState[] = ['participated', 'noshow'];

/**
 * What should be charged for an application (D8, D10):
 * - the fee while its decision is final with a confirmed place (`payable`: confirmed, not held back, fee above
 *   0, not switched off);
 * - the fee while it is paid: a paid application keeps its charge whatever its state (the charge is cancelled
 *   only when an UNPAID application leaves `confirmed`), so the receipt balances it;
 * - the charge it has when it moved on to `participated` or `noshow` (they took the place), unless
 *   `PATCH payable:false` switched it off;
 * - otherwise nothing (left `confirmed` unpaid, switched off, held back, never confirmed, or its offer is
 *   cancelled: D5, unpaid charges are cancelled and a relaunch charges the payable ones again); a deleted
 *   application is charged nothing (`null`).
 */
export function chargeTarget(a: ChargeInput | null): number {
  if (!a) return 0;
  const fee = Math.max(0, a.fee ?? 0);
  if (a.paid) return fee;
  if (isPayable(a)) return fee;
  // Issue 22: the kept charge is remembered, so a relaunch brings back what a cancel cancelled (D5), and it
  // follows the application's fee (issue 22: the ledger follows a changed fee).
  if (keptCharge(a) && !a.payableSwitchedOff && !a.offerCancelled) return fee;
  return 0;
}

/**
 * Whether a `participated`/`noshow` application keeps a charge (D10): it held one when it moved on. The first
 * reconcile in that state records it (`chargeKept`), later ones read the record; null in any other state.
 */
export function keptCharge(a: Pick<ChargeInput, 'status' | 'charged' | 'chargeKept'>): boolean | null {
  if (!KEEPS_CHARGE.includes(a.status)) return null;
  return a.chargeKept ?? a.charged > 0;
}

export type ChargeGroup = { ledger: string; amount: number };
export type ChargePosting = { ledger: string; type: 'charge' | 'cancellation'; amount: number };

/**
 * The postings that bring an application's charge to `target` (the reconciler's core; idempotent: applied
 * twice, the second call posts nothing). `groups` are its net charges per ledger; `home` is the ledger a new
 * charge goes to (the one already holding its charge, else the debtor's ledger for the offer's edition; null
 * when the application is gone). Charges left in other ledgers are cancelled there.
 */
export function chargePostings(groups: readonly ChargeGroup[], home: string | null, target: number): ChargePosting[] {
  const out: ChargePosting[] = [];
  const push = (ledger: string, amount: number) => {
    if (amount !== 0) out.push({ ledger, type: amount > 0 ? 'charge' : 'cancellation', amount });
  };
  for (const g of groups) if (g.ledger !== home) push(g.ledger, -g.amount);
  if (home !== null) {
    const atHome = groups.filter((g) => g.ledger === home).reduce((s, g) => s + g.amount, 0);
    push(home, target - atHome);
  }
  return out;
}

/** The ledger an application's charge lives in: the one holding a non-zero charge (the latest if several). */
export function chargeHome(groups: readonly (ChargeGroup & { lastSeq: number })[]): string | null {
  const held = groups.filter((g) => g.amount !== 0).sort((a, b) => b.lastSeq - a.lastSeq);
  return held[0]?.ledger ?? null;
}

// ---- receipts -------------------------------------------------------------------------------------------

export type PaymentSplit = { ok: true; amount: number; discount: number } | { ok: false; reason: 'negative' | 'above_fee' | 'not_integer' };

/**
 * D10: an item without `amount` pays the fee; a smaller amount pays it too and the difference is posted as a
 * discount; an amount above the fee is refused; negative amounts are refused.
 */
export function splitPayment(fee: number, amount?: number | null): PaymentSplit {
  const due = Math.max(0, fee);
  if (amount == null) return { ok: true, amount: due, discount: 0 };
  if (!Number.isInteger(amount)) return { ok: false, reason: 'not_integer' };
  if (amount < 0) return { ok: false, reason: 'negative' };
  if (amount > due) return { ok: false, reason: 'above_fee' };
  return { ok: true, amount, discount: due - amount };
}

/** Width the running number is padded to (`R-2027-0001`); larger numbers simply grow. */
export const RECEIPT_NUMBER_DIGITS = 4;

/** The tenant's prefix template (D2 `receiptNumberPrefix`, default `R-{year}-`) for a receipt paid at `paidAt`. */
export function resolveReceiptPrefix(template: string, paidAt: Date, zone = BERLIN): string {
  const year = DateTime.fromJSDate(paidAt, { zone }).year;
  return template.replaceAll('{year}', String(year));
}

/** Prefix + running number. */
export function formatReceiptNumber(prefix: string, counter: number): string {
  return `${prefix}${String(counter).padStart(RECEIPT_NUMBER_DIGITS, '0')}`;
}

export type ReceiptLine = { attendance: string; reversed: boolean };

export type ReversalSelection =
  | { ok: true; attendances: string[] }
  | { ok: false; reason: 'not_on_receipt' | 'already_reversed' | 'nothing_left'; attendance?: string };

/**
 * Which lines a reversal covers (D10 reverse body `items`: application ids, default all). Requested ids not on
 * the receipt are refused; a requested line already reversed, or a receipt with nothing left to
 * reverse, is a state conflict. Duplicates count once; the result keeps the receipt's order.
 */
export function selectReversal(lines: readonly ReceiptLine[], requested?: readonly string[] | null): ReversalSelection {
  const open = lines.filter((l) => !l.reversed).map((l) => l.attendance);
  if (requested == null) return open.length > 0 ? { ok: true, attendances: open } : { ok: false, reason: 'nothing_left' };
  const wanted = new Set(requested);
  for (const id of wanted) {
    const line = lines.find((l) => l.attendance === id);
    if (!line) return { ok: false, reason: 'not_on_receipt', attendance: id };
    if (line.reversed) return { ok: false, reason: 'already_reversed', attendance: id };
  }
  const out = lines.filter((l) => wanted.has(l.attendance)).map((l) => l.attendance);
  return out.length > 0 ? { ok: true, attendances: out } : { ok: false, reason: 'nothing_left' };
}

/** Open payments (spec 2.2): due and unpaid. */
export function isOpenPayment(a: { payable: boolean; paid: boolean }): boolean {
  return a.payable && !a.paid;
}

/** `1250` → `12,50 €` (German format, for e-mails). */
export function formatEuro(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  const euros = Math.floor(abs / 100).toString().replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  return `${sign}${euros},${String(abs % 100).padStart(2, '0')} €`;
}
