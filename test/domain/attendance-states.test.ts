import { describe, it, expect } from 'vitest';
import {
  ATTENDANCE_STATES,
  ATTENDANCE_TRANSITIONS,
  applySystemTransition,
  applyTransition,
  availableTransitions,
  cancelsCharge,
  freesPlace,
  freesPlaceForRefill,
  isAttendanceState,
  notAllowedDetail,
  organiserMayApply,
  possibleTransitions,
  type AttendanceState,
} from '../../src/domain/attendance-states.js';
import { SPEC_MATRIX, TRANSITIONS } from '../fixtures/spec-transitions.js';

// Spec 3.2, written out once in test/fixtures/spec-transitions.ts; its columns follow ATTENDANCE_TRANSITIONS.
const EXPECTED = SPEC_MATRIX as Record<AttendanceState, string[]>;

it('lists the transitions in the order of the spec table', () => {
  expect([...ATTENDANCE_TRANSITIONS]).toEqual([...TRANSITIONS]);
});

describe('attendance states', () => {
  it('has the 10 states and 8 client transitions', () => {
    expect(ATTENDANCE_STATES).toHaveLength(10);
    expect(ATTENDANCE_TRANSITIONS).toEqual([
      'confirm', 'waitlist', 'reject', 'withdraw', 'reset', 'unfulfill', 'participated', 'noshow',
    ]);
    expect(isAttendanceState('waiting')).toBe(true);
    expect(isAttendanceState('published')).toBe(false);
  });

  const cases = ATTENDANCE_STATES.flatMap((state) =>
    ATTENDANCE_TRANSITIONS.map((transition, i) => ({ state, transition, expected: EXPECTED[state][i] })),
  );
  it.each(cases)('$state --$transition--> $expected', ({ state, transition, expected }) => {
    const result = applyTransition(state, transition);
    if (expected === '-') {
      expect(result).toEqual({
        ok: false,
        reason: 'not_allowed',
        current: state,
        possible: possibleTransitions(state),
      });
    } else {
      expect(result).toEqual({ ok: true, from: state, to: expected });
    }
  });

  it.each(ATTENDANCE_STATES)('possibleTransitions(%s) matches the table, in stable order', (state) => {
    const expected = ATTENDANCE_TRANSITIONS.filter((_t, i) => EXPECTED[state][i] !== '-');
    expect(possibleTransitions(state)).toEqual(expected);
    const withSystem = state === 'waiting' ? [...expected, 'await_email', 'await_consents'] : expected;
    expect(availableTransitions(state)).toEqual(withSystem);
  });

  it('rejects system-only transitions from every state, without listing them as possible', () => {
    for (const state of ATTENDANCE_STATES) {
      for (const t of ['await_email', 'await_consents']) {
        const r = applyTransition(state, t);
        expect(r).toMatchObject({ ok: false, reason: 'system_only', current: state });
        if (!r.ok) expect(r.possible).not.toContain(t);
      }
    }
  });

  it.each(['', 'CONFIRM', 'publish', 'approve', 'toString'])('unknown transition %j', (t) => {
    expect(applyTransition('waiting', t)).toMatchObject({ ok: false, reason: 'unknown_transition' });
  });

  it('lets the system apply await_email / await_consents from waiting only', () => {
    expect(applySystemTransition('waiting', 'await_email')).toEqual({ ok: true, from: 'waiting', to: 'email_unconfirmed' });
    expect(applySystemTransition('waiting', 'await_consents')).toEqual({
      ok: true, from: 'waiting', to: 'consents_outstanding',
    });
    expect(applySystemTransition('confirmed', 'await_email')).toMatchObject({ ok: false, reason: 'not_allowed' });
  });

  it('formats the 409 detail with current state and possible transitions', () => {
    expect(notAllowedDetail('noshow', 'confirm')).toBe(
      'Transition "confirm" is not possible from state "noshow". Possible transitions: none.',
    );
    expect(notAllowedDetail('email_unconfirmed', 'confirm')).toContain('Possible transitions: reject, withdraw.');
  });

  it('organisers cannot withdraw', () => {
    expect(organiserMayApply('withdraw')).toBe(false);
    expect(organiserMayApply('confirm')).toBe(true);
  });

  it.each([
    ['confirmed', 'withdrawn', false, true, true],
    ['confirmed', 'participated', false, true, false],
    ['confirmed', 'noshow', false, true, false],
    ['confirmed', 'waitlisted', true, true, false],
    ['waitlisted', 'confirmed', false, false, false],
  ] as const)('%s -> %s (paid %s): frees place %s, cancels charge %s', (from, to, paid, frees, cancels) => {
    expect(freesPlace(from, to)).toBe(frees);
    expect(cancelsCharge(from, to, paid)).toBe(cancels);
  });

  it.each([
    ['confirmed', 'withdrawn', true], ['confirmed', 'rejected', true], ['confirmed', 'waiting', true], ['confirmed', 'unfulfilled', true],
    ['confirmed', 'waitlisted', false], ['confirmed', 'participated', false], ['confirmed', 'noshow', false],
    ['waitlisted', 'withdrawn', false], ['waiting', 'rejected', false],
  ] as const)('%s -> %s moves the waiting list up (D10 refill): %s', (from, to, refills) => {
    expect(freesPlaceForRefill(from, to)).toBe(refills);
  });
});
