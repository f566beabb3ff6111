import { describe, expect, it } from 'vitest';
import { ATTENDANCE_STATES } from '../../src/domain/attendance-states.js';
import {
  firstComePhaseRunning, listAccessDetail, organiserListAccess, organiserSeesNames,
} from '../../src/domain/participant-list-access.js';
import type { EditionWithTasks } from '../../src/domain/edition-phases.js';

const now = new Date('2027-07-15T12:00:00+02:00');
const day = 86_400_000;
const at = (offsetDays: number) => new Date(now.getTime() + offsetDays * day);

describe('organiserListAccess (spec 4.3)', () => {
  const base = { ownOffer: true, listsReleased: true, offerEnd: at(-1), retentionWeeks: 12, now };
  it('allows own offers of released lists within the retention period', () => {
    expect(organiserListAccess(base)).toBe('ok');
    expect(organiserListAccess({ ...base, offerEnd: null })).toBe('ok');
    expect(organiserListAccess({ ...base, offerEnd: at(30) })).toBe('ok');
    expect(organiserListAccess({ ...base, offerEnd: at(-12 * 7) })).toBe('ok'); // exactly at the end of the period
  });
  it('refuses others’ offers, unreleased lists, and lists past the retention period, in that order', () => {
    expect(organiserListAccess({ ...base, ownOffer: false, listsReleased: false })).toBe('not_own');
    expect(organiserListAccess({ ...base, listsReleased: false })).toBe('not_released');
    expect(organiserListAccess({ ...base, offerEnd: at(-12 * 7 - 1) })).toBe('retention_over');
    expect(organiserListAccess({ ...base, retentionWeeks: 0, offerEnd: at(-0.01) })).toBe('retention_over');
  });
  it('explains each refusal', () => {
    for (const a of ['not_own', 'not_released', 'retention_over'] as const) expect(listAccessDetail(a)).toMatch(/\w/);
  });
});

describe('organiserSeesNames (spec 5.5)', () => {
  it('names the participants who hold, held or may still get a place, once the decision is final', () => {
    const named = ATTENDANCE_STATES.filter((status) => organiserSeesNames({ status, heldBack: false }));
    expect(named).toEqual(['confirmed', 'waitlisted', 'participated', 'noshow']);
    expect(ATTENDANCE_STATES.filter((status) => organiserSeesNames({ status, heldBack: true }))).toEqual([]);
  });
});

describe('firstComePhaseRunning (D10)', () => {
  const edition = (procedure: 'firstcome' | 'lot', tasks: EditionWithTasks['tasks'] = []): EditionWithTasks =>
    ({ procedure, online: true, releaseParticipantLists: false, tasks });
  it('without application phases the stored procedure decides', () => {
    expect(firstComePhaseRunning(edition('firstcome'), now)).toBe(true);
    expect(firstComePhaseRunning(edition('lot'), now)).toBe(false);
    expect(firstComePhaseRunning(edition('firstcome', [{ type: 'holiday', begin: at(-1), end: at(1) }]), now)).toBe(true);
  });
  it('with application phases only while a first-come one runs', () => {
    const task = (b: number, e: number, applicationSystem: 'firstcome' | 'lot' | null) =>
      ({ type: 'application_system' as const, begin: at(b), end: at(e), applicationSystem });
    expect(firstComePhaseRunning(edition('lot', [task(-1, 1, 'firstcome')]), now)).toBe(true);
    expect(firstComePhaseRunning(edition('firstcome', [task(-1, 1, 'lot')]), now)).toBe(false);
    expect(firstComePhaseRunning(edition('firstcome', [task(-10, -5, 'firstcome')]), now)).toBe(false);
    expect(firstComePhaseRunning(edition('firstcome', [task(5, 10, 'firstcome')]), now)).toBe(false);
    expect(firstComePhaseRunning(edition('firstcome', [task(-1, 1, null)]), now)).toBe(true);
    expect(firstComePhaseRunning(edition('firstcome', [task(-10, -5, 'lot'), task(-1, 1, 'firstcome')]), now)).toBe(true);
  });
});
