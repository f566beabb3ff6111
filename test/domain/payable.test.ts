import { describe, it, expect } from 'vitest';
import { canSwitchPayableOn, isPayable } from '../../src/domain/payable.js';

describe('isPayable (D10)', () => {
  it.each([
    // status, heldBack, fee, switchedOff, expected
    ['confirmed', false, 1500, false, true],
    ['confirmed', true, 1500, false, false],
    ['confirmed', false, 0, false, false],
    ['confirmed', false, null, false, false],
    ['confirmed', false, 1500, true, false],
    ['waitlisted', false, 1500, false, false],
    ['waiting', false, 1500, false, false],
    ['participated', false, 1500, false, false],
    ['withdrawn', false, 1500, false, false],
  ] as const)('%s heldBack=%s fee=%s off=%s -> %s', (status, heldBack, fee, payableSwitchedOff, expected) => {
    expect(isPayable({ status, heldBack, fee, payableSwitchedOff })).toBe(expected);
  });

  it('is never payable while the offer is cancelled (D5, issue 13)', () => {
    expect(isPayable({ status: 'confirmed', heldBack: false, fee: 1500, payableSwitchedOff: false, offerCancelled: true })).toBe(false);
    expect(isPayable({ status: 'confirmed', heldBack: false, fee: 1500, payableSwitchedOff: false, offerCancelled: false })).toBe(true);
    expect(canSwitchPayableOn({ status: 'confirmed', heldBack: false, fee: 100, offerCancelled: true })).toBe(false);
  });

  it('allows switching payable on only where it could be payable', () => {
    expect(canSwitchPayableOn({ status: 'confirmed', heldBack: false, fee: 100 })).toBe(true);
    expect(canSwitchPayableOn({ status: 'confirmed', heldBack: true, fee: 100 })).toBe(false);
    expect(canSwitchPayableOn({ status: 'waiting', heldBack: false, fee: 100 })).toBe(false);
  });
});
