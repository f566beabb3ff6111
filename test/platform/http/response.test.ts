import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { omitNulls, response } from '../../../src/platform/http/response.js';

// Spec 1.6: null fields are omitted; empty lists stay; tasks/items/bookEntries keep their nulls.
describe('omitNulls', () => {
  it('drops null and undefined fields at every depth', () => {
    expect(omitNulls({ a: 1, b: null, c: undefined, d: { e: null, f: 'x', g: { h: null } }, list: [{ i: null, j: 2 }] }))
      .toEqual({ a: 1, d: { f: 'x', g: {} }, list: [{ j: 2 }] });
    const out = omitNulls({ a: null }) as object;
    expect('a' in out).toBe(false);
  });

  it('keeps empty arrays, false and 0', () => {
    expect(omitNulls({ list: [], flag: false, n: 0, s: '' })).toEqual({ list: [], flag: false, n: 0, s: '' });
  });

  it('keeps nulls inside tasks, items and bookEntries', () => {
    const value = {
      tasks: [{ name: 'Anmeldung', begin: null }],
      items: [{ attendance: 'u', text: null }],
      bookEntries: [{ receipt: null, amount: -500 }],
      other: [{ x: null }],
    };
    expect(omitNulls(value)).toEqual({
      tasks: [{ name: 'Anmeldung', begin: null }],
      items: [{ attendance: 'u', text: null }],
      bookEntries: [{ receipt: null, amount: -500 }],
      other: [{}],
    });
  });

  it('drops a null tasks list itself, and works inside arrays of records', () => {
    expect(omitNulls([{ tasks: null, name: 'E' }, { tasks: [[null, 'a']] }])).toEqual([{ name: 'E' }, { tasks: [[null, 'a']] }]);
  });

  it('leaves Dates and primitives untouched', () => {
    const d = new Date('2027-07-01T08:00:00Z');
    const out = omitNulls({ at: d }) as { at: Date };
    expect(out.at).toBe(d);
    expect(omitNulls(d)).toBe(d);
    expect(omitNulls(null)).toBeNull();
    expect(omitNulls(5)).toBe(5);
    expect(omitNulls('x')).toBe('x');
  });
});

describe('response()', () => {
  it('applies the null rule before the schema', () => {
    const schema = response(z.object({ name: z.string(), note: z.string().optional(), tags: z.array(z.string()) }));
    expect(schema.parse({ name: 'a', note: null, tags: [] })).toEqual({ name: 'a', tags: [] });
  });
});
