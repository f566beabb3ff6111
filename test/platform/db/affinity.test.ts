import { describe, expect, it } from 'vitest';
import { laneOf, lanesOf, lanesPerKey } from '../../../src/platform/db/affinity.js';

// Which connections serve a schema (platform/db/affinity.ts): its own lane, and in pools of 10 or more one or two
// others, so that under load a released connection nearly always finds a waiting request of its schemas.
describe('lanesPerKey', () => {
  it('is 1 in pools under 10, 2 from 10, 3 from 15', () => {
    expect([1, 2, 4, 9].map(lanesPerKey)).toEqual([1, 1, 1, 1]);
    expect([10, 14].map(lanesPerKey)).toEqual([2, 2]);
    expect([15, 30, 100].map(lanesPerKey)).toEqual([3, 3, 3]);
  });
});

describe('lanesOf', () => {
  const keys = Array.from({ length: 1000 }, (_, i) => `t_m${String(i).padStart(4, '0')}`);

  it('starts with the schema\'s own lane and gives distinct lanes of the pool, the same every time', () => {
    for (const size of [1, 2, 4, 10, 12, 16, 40]) {
      for (const key of keys.slice(0, 200)) {
        const lanes = lanesOf(key, size);
        expect(lanes).toHaveLength(lanesPerKey(size));
        expect(lanes[0]).toBe(laneOf(key, size));
        expect(new Set(lanes).size).toBe(lanes.length);
        expect(lanes.every((l) => Number.isInteger(l) && l >= 0 && l < size)).toBe(true);
        expect(lanesOf(key, size)).toEqual(lanes);
      }
    }
  });

  it('spreads the schemas evenly over a pool of 10: each connection serves about a fifth of them', () => {
    const served = Array.from({ length: 10 }, () => 0);
    for (const key of keys) for (const lane of lanesOf(key, 10)) served[lane]!++;
    // 1,000 schemas × 2 lanes over 10 connections: 200 each when even.
    expect(Math.min(...served)).toBeGreaterThan(150);
    expect(Math.max(...served)).toBeLessThan(250);
  });

  it('rarely gives two schemas of one lane the same second lane (a busy pair does not crowd one connection)', () => {
    const byHome = new Map<number, string[]>();
    for (const key of keys) byHome.set(laneOf(key, 10), [...(byHome.get(laneOf(key, 10)) ?? []), key]);
    let pairs = 0;
    let same = 0;
    for (const group of byHome.values()) {
      for (let i = 0; i < group.length; i++) {
        for (let j = i + 1; j < group.length; j++) {
          pairs++;
          if (lanesOf(group[i]!, 10)[1] === lanesOf(group[j]!, 10)[1]) same++;
        }
      }
    }
    // 9 possible second lanes: 1 in 9 when drawn at random; a fixed step would make it every pair.
    expect(same / pairs).toBeLessThan(0.2);
  });
});
