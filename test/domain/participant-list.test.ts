import { describe, it, expect } from 'vitest';
import {
  beyondCapacityReason,
  confirmsBeyondCapacity,
  overbooked,
  appendPosition,
  decideOnCreate,
  decisionsOnCreate,
  fullyBooked,
  numberedInOrder,
  refillCandidates,
  sortParticipantList,
  vacancies,
} from '../../src/domain/participant-list.js';

const t = (minute: number) => new Date(Date.UTC(2027, 0, 1, 10, minute));
const app = (id: string, status: string, sorting: number | null, minute: number) => ({
  id, status, sorting, createdAt: t(minute),
});

describe('sortParticipantList (D10)', () => {
  it('orders confirmed, waitlisted, waiting, then the rest, keeping previous order and renumbering', () => {
    const result = sortParticipantList([
      app('r1', 'rejected', 1, 0),
      app('w1', 'waiting', 2, 1),
      app('c2', 'confirmed', 7, 2),
      app('l1', 'waitlisted', 3, 3),
      app('c1', 'confirmed', 4, 4),
      app('x1', 'withdrawn', 5, 5),
      app('n1', 'confirmed', null, 6), // new: end of the confirmed group
      app('n0', 'confirmed', null, 1), // new, earlier
    ]);
    expect(result.map((a) => a.id)).toEqual(['c1', 'c2', 'n0', 'n1', 'l1', 'w1', 'r1', 'x1']);
    expect(result.map((a) => a.sorting)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('moves a newly confirmed application to the end of the confirmed group, keeping its old relative rank', () => {
    // l2 was waitlisted at 4 and is confirmed now; it keeps sorting 4, after the confirmed 1,2.
    const result = sortParticipantList([
      app('c1', 'confirmed', 1, 0),
      app('c2', 'confirmed', 2, 1),
      app('l1', 'waitlisted', 3, 2),
      app('l2', 'confirmed', 4, 3),
    ]);
    expect(result.map((a) => a.id)).toEqual(['c1', 'c2', 'l2', 'l1']);
  });

  it('breaks ties deterministically and keeps extra fields', () => {
    const result = sortParticipantList([
      { ...app('b', 'waiting', null, 0), extra: 1 },
      { ...app('a', 'waiting', null, 0), extra: 2 },
    ]);
    expect(result).toEqual([
      { ...app('a', 'waiting', 1, 0), extra: 2 },
      { ...app('b', 'waiting', 2, 0), extra: 1 },
    ]);
    expect(sortParticipantList([])).toEqual([]);
  });
});

describe('vacancies and fullyBooked', () => {
  it.each([
    [null, 0, null, false],
    [null, 50, null, false],
    [10, 0, 10, false],
    [10, 9, 1, false],
    [10, 10, 0, true],
    [10, 12, 0, true], // over-booked by an admin: never below 0
    [0, 0, 0, true],
  ] as const)('max %s, confirmed %s -> vacancies %s, fullyBooked %s', (max, confirmed, v, full) => {
    expect(vacancies(max, confirmed)).toBe(v);
    expect(fullyBooked(max, confirmed)).toBe(full);
  });
});

describe('decideOnCreate (spec 3.2, 4.3)', () => {
  it.each([
    ['firstcome', undefined, 3, 'confirmed'],
    ['firstcome', undefined, null, 'confirmed'],
    ['firstcome', undefined, 0, 'waitlisted'],
    ['firstcome', 'waiting', 3, 'waiting'],
    ['firstcome', 'confirmed', 0, 'confirmed'],
    ['lot', undefined, 3, 'waiting'],
    ['lot', undefined, 0, 'waiting'],
    ['lot', 'confirmed', 0, 'confirmed'],
    ['lot', 'waitlisted', null, 'waitlisted'],
  ] as const)('%s, requested %s, vacancies %s -> %s', (procedure, requestedStatus, v, expected) => {
    expect(decideOnCreate({ procedure, requestedStatus, vacancies: v })).toBe(expected);
  });
});

describe('refillCandidates', () => {
  const list = [
    { id: 'c', status: 'confirmed' },
    { id: 'a', status: 'waitlisted' },
    { id: 'b', status: 'waitlisted' },
    { id: 'w', status: 'waiting' },
  ];
  it.each([
    [0, []],
    [1, ['a']],
    [5, ['a', 'b']],
    [null, ['a', 'b']],
  ] as const)('%s free places -> %j', (free, ids) => {
    expect(refillCandidates(list, free).map((a) => a.id)).toEqual(ids);
  });
});

describe('confirmations past capacity (issue 13)', () => {
  it('counts confirmed places beyond maxParticipants', () => {
    expect(overbooked(null, 50)).toBe(0);
    expect(overbooked(3, 2)).toBe(0);
    expect(overbooked(3, 3)).toBe(0);
    expect(overbooked(3, 5)).toBe(2);
    expect(overbooked(0, 1)).toBe(1);
  });

  it('tells when one more confirmation goes past capacity', () => {
    expect(confirmsBeyondCapacity(null, 100)).toBe(false);
    expect(confirmsBeyondCapacity(2, 1)).toBe(false);
    expect(confirmsBeyondCapacity(2, 2)).toBe(true);
    expect(confirmsBeyondCapacity(0, 0)).toBe(true);
  });

  it('names who confirmed in the reason', () => {
    expect(beyondCapacityReason('admin')).toMatch(/Admin/);
    expect(beyondCapacityReason('organiser')).toMatch(/Veranstalter/);
  });
});

const STATES = ['confirmed', 'waitlisted', 'waiting', 'rejected', 'withdrawn', 'unfulfilled', 'participated', 'noshow'];

describe('appendPosition (D10: a new application at the end of its group, in one step)', () => {
  it('gives the position and the moves that sorting the whole list again gives, on many random lists', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let round = 0; round < 500; round++) {
      const size = Math.floor(random() * 12);
      const list = sortParticipantList(Array.from({ length: size }, (_, i) =>
        app(`a${i}`, STATES[Math.floor(random() * STATES.length)]!, random() < 0.5 ? i : null, i)));
      const status = STATES[Math.floor(random() * STATES.length)]!;
      const fresh = app('new', status, null, 100);
      const resorted = new Map(sortParticipantList([...list, fresh]).map((a) => [a.id, a.sorting]));
      const step = appendPosition(list, status)!;
      expect(step.sorting).toBe(resorted.get('new'));
      const moved = new Set(step.behind.map((a) => a.id));
      for (const a of list) expect(resorted.get(a.id)).toBe(moved.has(a.id) ? a.sorting + 1 : a.sorting);
    }
  });

  it('appends at the end of the confirmed group, moving the waiting list down', () => {
    const list = [app('c', 'confirmed', 1, 0), app('w', 'waitlisted', 2, 1), app('r', 'rejected', 3, 2)];
    const step = appendPosition(list, 'confirmed')!;
    expect(step.sorting).toBe(2);
    expect(step.behind.map((a) => a.id)).toEqual(['w', 'r']);
    expect(appendPosition(list, 'waitlisted')).toMatchObject({ sorting: 3 });
    expect(appendPosition([], 'waiting')).toEqual({ sorting: 1, behind: [] });
  });

  it('refuses a list that is not numbered 1..n in list order (the whole list is sorted then)', () => {
    expect(appendPosition([app('a', 'confirmed', 1, 0), app('b', 'confirmed', null, 1)], 'confirmed')).toBeNull();
    expect(appendPosition([app('a', 'confirmed', 1, 0), app('b', 'confirmed', 3, 1)], 'confirmed')).toBeNull();
    expect(appendPosition([app('a', 'confirmed', 1, 0), app('b', 'confirmed', 1, 1)], 'confirmed')).toBeNull();
    expect(appendPosition([app('a', 'waitlisted', 1, 0), app('b', 'confirmed', 2, 1)], 'confirmed')).toBeNull();
    expect(numberedInOrder([app('a', 'confirmed', 1, 0), app('b', 'rejected', 2, 1)])).toBe(true);
  });
});

describe('decisionsOnCreate (the two outcomes before the places are counted)', () => {
  it('agrees with decideOnCreate with a place free, places unlimited, and no place left', () => {
    for (const procedure of ['firstcome', 'lot'] as const) {
      for (const requestedStatus of [null, 'confirmed', 'waitlisted', 'waiting'] as const) {
        const both = decisionsOnCreate({ procedure, requestedStatus });
        expect(both.placeFree).toBe(decideOnCreate({ procedure, requestedStatus, vacancies: 3 }));
        expect(both.placeFree).toBe(decideOnCreate({ procedure, requestedStatus, vacancies: null }));
        expect(both.full).toBe(decideOnCreate({ procedure, requestedStatus, vacancies: 0 }));
      }
    }
    expect(decisionsOnCreate({ procedure: 'firstcome' })).toEqual({ placeFree: 'confirmed', full: 'waitlisted' });
  });
});
