import { describe, it, expect } from 'vitest';
import { sortAfterDecisions } from '../../src/domain/participant-list.js';

// `sortAfterDecisions` (D7: the lot's waiting list follows the draw; D10 `sorting`).
const t = (minute: number) => new Date(Date.UTC(2027, 0, 1, 10, minute));
const app = (id: string, status: string, sorting: number | null, minute = 0) => ({ id, status, sorting, createdAt: t(minute) });

describe('sortAfterDecisions', () => {
  it('puts the decided ones at the end of their new group in rank order; the others keep their place', () => {
    const result = sortAfterDecisions(
      [
        app('c0', 'confirmed', 1), // confirmed before the draw
        app('l0', 'waitlisted', 2), // waitlisted before the draw
        app('a', 'waitlisted', 3, 1), // drawn 4th
        app('b', 'confirmed', 4, 2), // drawn 2nd
        app('c', 'waitlisted', 5, 3), // drawn 3rd
        app('d', 'confirmed', 6, 4), // drawn 1st
        app('r0', 'rejected', 7),
        app('e', 'unfulfilled', 8, 5), // drawn 5th
      ],
      new Map([['d', 1], ['b', 2], ['c', 3], ['a', 4], ['e', 5]]),
    );
    expect(result.map((a) => a.id)).toEqual(['c0', 'd', 'b', 'l0', 'c', 'a', 'r0', 'e']);
    expect(result.map((a) => a.sorting)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('follows the ranks, not creation time or previous positions', () => {
    const result = sortAfterDecisions(
      [app('x', 'waitlisted', 1, 1), app('y', 'waitlisted', 2, 2), app('z', 'waitlisted', 3, 3)],
      new Map([['z', 1], ['x', 2], ['y', 3]]),
    );
    expect(result.map((a) => a.id)).toEqual(['z', 'x', 'y']);
  });

  it('keeps the other fields and returns a copy', () => {
    const input = [{ ...app('a', 'confirmed', 2), extra: 'kept' }, { ...app('b', 'confirmed', 1), extra: 'too' }];
    const result = sortAfterDecisions(input, new Map([['a', 1]]));
    expect(result).toEqual([{ ...input[1], sorting: 1 }, { ...input[0], sorting: 2 }]);
    expect(input[0].sorting).toBe(2);
  });

  it('with no decisions is sortParticipantList', () => {
    const rows = [app('w', 'waiting', 1), app('c', 'confirmed', 2)];
    expect(sortAfterDecisions(rows, new Map()).map((a) => a.id)).toEqual(['c', 'w']);
  });
});
