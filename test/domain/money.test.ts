import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ATTENDANCE_STATES } from '../../src/domain/attendance-states.js';
import {
  chargeHome, chargePostings, chargeTarget, formatEuro, formatReceiptNumber, isOpenPayment, ledgerBalance, resolveReceiptPrefix,
  keptCharge, selectReversal, splitPayment,
} from '../../src/domain/money.js';

// The pure money rules (D8, D10 "Money").
const base = { status: 'confirmed' as const, heldBack: false, fee: 500, payableSwitchedOff: false, paid: false, charged: 0 };

describe('chargeTarget', () => {
  it('charges the fee while the decision is final with a confirmed place', () => {
    expect(chargeTarget(base)).toBe(500);
    expect(chargeTarget({ ...base, heldBack: true })).toBe(0);
    expect(chargeTarget({ ...base, fee: 0 })).toBe(0);
    expect(chargeTarget({ ...base, fee: null })).toBe(0);
    expect(chargeTarget({ ...base, payableSwitchedOff: true })).toBe(0);
  });

  it('cancels when an unpaid application leaves confirmed, except for participated and noshow', () => {
    for (const status of ATTENDANCE_STATES.filter((s) => s !== 'confirmed')) {
      const keeps = status === 'participated' || status === 'noshow';
      expect(chargeTarget({ ...base, status, charged: 500 }), status).toBe(keeps ? 500 : 0);
      // Never charged before (e.g. waitlisted → participated): nothing to keep.
      expect(chargeTarget({ ...base, status, charged: 0 }), status).toBe(0);
    }
    // payable:false switches off a kept charge too.
    expect(chargeTarget({ ...base, status: 'participated', charged: 500, payableSwitchedOff: true })).toBe(0);
  });

  it('keeps the fee charged while paid, whatever the state', () => {
    for (const status of ATTENDANCE_STATES) expect(chargeTarget({ ...base, status, paid: true, charged: 500 }), status).toBe(500);
  });

  it('cancels unpaid charges while the offer is cancelled, keeps paid ones (D5, issue 13)', () => {
    expect(chargeTarget({ ...base, offerCancelled: true, charged: 500 })).toBe(0);
    expect(chargeTarget({ ...base, offerCancelled: true, paid: true, charged: 500 })).toBe(500);
    expect(chargeTarget({ ...base, status: 'participated', offerCancelled: true, charged: 500 })).toBe(0);
    // Relaunched: charged again.
    expect(chargeTarget({ ...base, offerCancelled: false, charged: 0 })).toBe(500);
  });

  it('charges nothing for a deleted application', () => {
    expect(chargeTarget(null)).toBe(0);
  });
});

describe('chargePostings (the reconciler core)', () => {
  it('posts the difference at home and cancels charges left elsewhere', () => {
    expect(chargePostings([], 'L1', 500)).toEqual([{ ledger: 'L1', type: 'charge', amount: 500 }]);
    expect(chargePostings([{ ledger: 'L1', amount: 500 }], 'L1', 0)).toEqual([{ ledger: 'L1', type: 'cancellation', amount: -500 }]);
    expect(chargePostings([{ ledger: 'L1', amount: 500 }], 'L1', 500)).toEqual([]);
    expect(chargePostings([{ ledger: 'L1', amount: 500 }], null, 0)).toEqual([{ ledger: 'L1', type: 'cancellation', amount: -500 }]);
    expect(chargePostings([{ ledger: 'L1', amount: 500 }], 'L2', 500)).toEqual([
      { ledger: 'L1', type: 'cancellation', amount: -500 }, { ledger: 'L2', type: 'charge', amount: 500 },
    ]);
  });

  it('is idempotent: after applying its postings, nothing more is posted', () => {
    const ledger = fc.constantFrom('L1', 'L2', 'L3');
    fc.assert(fc.property(
      fc.array(fc.record({ ledger, amount: fc.integer({ min: -2000, max: 2000 }) }), { maxLength: 5 }),
      fc.option(ledger, { nil: null }),
      fc.integer({ min: 0, max: 2000 }),
      (groups, home, target) => {
        const merged = new Map<string, number>();
        for (const g of groups) merged.set(g.ledger, (merged.get(g.ledger) ?? 0) + g.amount);
        const first = chargePostings([...merged].map(([l, a]) => ({ ledger: l, amount: a })), home, target);
        for (const p of first) merged.set(p.ledger, (merged.get(p.ledger) ?? 0) + p.amount);
        const after = [...merged].map(([l, a]) => ({ ledger: l, amount: a }));
        expect(chargePostings(after, home, target)).toEqual([]);
        // Everything is at home afterwards, and equals the target.
        expect(ledgerBalance(after.map((g) => g.amount))).toBe(home === null ? 0 : target);
      },
    ));
  });

  it('chargeHome is the ledger holding a charge (the latest posting when several)', () => {
    expect(chargeHome([])).toBeNull();
    expect(chargeHome([{ ledger: 'L1', amount: 0, lastSeq: 9 }])).toBeNull();
    expect(chargeHome([{ ledger: 'L1', amount: 500, lastSeq: 1 }, { ledger: 'L2', amount: 500, lastSeq: 5 }])).toBe('L2');
  });
});

describe('splitPayment', () => {
  it('pays the fee by default; a smaller amount leaves the rest as a discount', () => {
    expect(splitPayment(500)).toEqual({ ok: true, amount: 500, discount: 0 });
    expect(splitPayment(500, null)).toEqual({ ok: true, amount: 500, discount: 0 });
    expect(splitPayment(500, 300)).toEqual({ ok: true, amount: 300, discount: 200 });
    expect(splitPayment(500, 0)).toEqual({ ok: true, amount: 0, discount: 500 });
    expect(splitPayment(500, 500)).toEqual({ ok: true, amount: 500, discount: 0 });
  });

  it('refuses amounts above the fee, negative and fractional amounts', () => {
    expect(splitPayment(500, 501)).toEqual({ ok: false, reason: 'above_fee' });
    expect(splitPayment(500, -1)).toEqual({ ok: false, reason: 'negative' });
    expect(splitPayment(500, 1.5)).toEqual({ ok: false, reason: 'not_integer' });
  });

  it('payment and discount always add up to the fee', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: 100_000 }), (fee, amount) => {
      const s = splitPayment(fee, amount);
      if (amount > fee) expect(s.ok).toBe(false);
      else if (s.ok) expect(s.amount + s.discount).toBe(fee);
    }));
  });
});

describe('receipt numbers', () => {
  it('resolve the year of paidAt in Berlin', () => {
    expect(resolveReceiptPrefix('R-{year}-', new Date('2027-06-01T10:00:00Z'))).toBe('R-2027-');
    // 31 Dec 23:30 UTC is already New Year in Berlin.
    expect(resolveReceiptPrefix('R-{year}-', new Date('2026-12-31T23:30:00Z'))).toBe('R-2027-');
    expect(resolveReceiptPrefix('Q{year}/{year}-', new Date('2027-06-01T10:00:00Z'))).toBe('Q2027/2027-');
    expect(resolveReceiptPrefix('FP-', new Date('2027-06-01T10:00:00Z'))).toBe('FP-');
  });

  it('are prefix plus a running number padded to four digits', () => {
    expect(formatReceiptNumber('R-2027-', 1)).toBe('R-2027-0001');
    expect(formatReceiptNumber('R-2027-', 12345)).toBe('R-2027-12345');
  });
});

describe('selectReversal', () => {
  const lines = [{ attendance: 'a', reversed: false }, { attendance: 'b', reversed: true }, { attendance: 'c', reversed: false }];

  it('defaults to every line not yet reversed, in the receipt order', () => {
    expect(selectReversal(lines)).toEqual({ ok: true, attendances: ['a', 'c'] });
    expect(selectReversal(lines, ['c', 'a', 'c'])).toEqual({ ok: true, attendances: ['a', 'c'] });
  });

  it('refuses applications not on the receipt, lines already reversed, and a fully reversed receipt', () => {
    expect(selectReversal(lines, ['x'])).toEqual({ ok: false, reason: 'not_on_receipt', attendance: 'x' });
    expect(selectReversal(lines, ['b'])).toEqual({ ok: false, reason: 'already_reversed', attendance: 'b' });
    expect(selectReversal(lines.map((l) => ({ ...l, reversed: true })))).toEqual({ ok: false, reason: 'nothing_left' });
  });
});

describe('balances and open payments', () => {
  it('a balance is the sum of its bookings; open payments are due and unpaid', () => {
    expect(ledgerBalance([])).toBe(0);
    expect(ledgerBalance([500, -300, -200, 300])).toBe(300);
    expect(isOpenPayment({ payable: true, paid: false })).toBe(true);
    expect(isOpenPayment({ payable: true, paid: true })).toBe(false);
    expect(isOpenPayment({ payable: false, paid: false })).toBe(false);
  });

  it('formats euros the German way', () => {
    expect(formatEuro(1250)).toBe('12,50 €');
    expect(formatEuro(-5)).toBe('-0,05 €');
    expect(formatEuro(123456789)).toBe('1.234.567,89 €');
  });
});

describe('chargeTarget agrees with the state machine\'s cancelsCharge', () => {
  it('for every transition out of a charged, confirmed application, paid or not', async () => {
    const { TRANSITION_TABLE, cancelsCharge } = await import('../../src/domain/attendance-states.js');
    for (const [name, def] of Object.entries(TRANSITION_TABLE)) {
      if (!def.from.includes('confirmed')) continue;
      for (const paid of [false, true]) {
        const after = chargeTarget({ ...base, status: def.to, paid, charged: 500 });
        expect(after === 0, `${name} paid=${paid}`).toBe(cancelsCharge('confirmed', def.to, paid));
      }
    }
  });
});

describe('kept charges of participated and noshow (issue 22.8)', () => {
  const base = { heldBack: false, fee: 500, payableSwitchedOff: false, paid: false };
  it('are recorded when the application moves on, survive a cancel and follow the fee', () => {
    expect(keptCharge({ status: 'participated', charged: 500, chargeKept: null })).toBe(true);
    expect(keptCharge({ status: 'noshow', charged: 0, chargeKept: null })).toBe(false);
    expect(keptCharge({ status: 'participated', charged: 0, chargeKept: true })).toBe(true);
    expect(keptCharge({ status: 'confirmed', charged: 500, chargeKept: true })).toBeNull();
    expect(chargeTarget({ ...base, status: 'participated', charged: 0, chargeKept: true, offerCancelled: true })).toBe(0);
    expect(chargeTarget({ ...base, status: 'participated', charged: 0, chargeKept: true })).toBe(500);
    expect(chargeTarget({ ...base, status: 'noshow', charged: 500, chargeKept: false })).toBe(0);
  });
});
