import { describe, expect, it } from 'vitest';
import { useHarness } from '../../harness/harness.js';
import { formatTimestamp } from '../../../src/platform/http/dates.js';
import { edition, offer, transition } from './helpers.js';

// The offer projection formats its timestamps in SQL (platform/http/dates.ts apiTimestampSql); they must read exactly as
// formatTimestamp writes them (spec 1.7): Berlin time, whole seconds, the offset of that instant, across both
// DST switches and for instants given in other offsets.

const INSTANTS = [
  '2027-01-15T08:00:00Z', // winter, +01:00
  '2027-07-05T07:00:00Z', // summer, +02:00
  '2027-03-28T00:59:59Z', // last second of winter time
  '2027-03-28T01:00:00Z', // first second of summer time (02:00 → 03:00)
  '2027-10-31T00:30:00Z', // 02:30 summer time, the first of the two
  '2027-10-31T01:30:00Z', // 02:30 winter time, the second
  '2027-12-31T23:59:59.999Z', // fractional seconds are cut, not rounded, and the Berlin date is the next day
  '2027-06-30T18:15:30-04:00', // sent with another offset
];

const { h, t } = useHarness();

describe('offer timestamps', () => {
  it('match formatTimestamp for dates, deadline, createdAt and modifiedAt, with and without a token', async () => {
    const ed = await edition(t);
    const created = await offer(t, {
      name: 'Zeitreise', edition: ed.uuid, applicationDeadline: '2027-03-28T01:30:00Z',
      dates: INSTANTS.map((begin) => ({ begin, end: begin })),
    });
    await transition(t, created.uuid, 'publish');
    for (const token of [undefined, null]) {
      const res = await t.get(`/offers/${created.uuid}`, token === null ? { token } : {});
      expect(res.status, res.text).toBe(200);
      expect(res.body.dates.map((d) => d.begin)).toEqual(INSTANTS.map((i) => formatTimestamp(new Date(i))));
      expect(res.body.dates.map((d) => d.end)).toEqual(INSTANTS.map((i) => formatTimestamp(new Date(i))));
      expect(res.body.applicationDeadline).toBe('2027-03-28T03:30:00+02:00');
      for (const k of ['createdAt', 'modifiedAt'] as const) {
        expect(res.body[k]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0[12]:00$/);
        expect(Math.abs(Date.parse(res.body[k]) - Date.now())).toBeLessThan(60_000);
      }
    }
    const list = await t.get('/offers', { token: null });
    expect(list.body[0].dates[2].begin).toBe('2027-03-28T01:59:59+01:00');
    expect(list.body[0].dates[3].begin).toBe('2027-03-28T03:00:00+02:00');
    expect(list.body[0].dates[4].begin).toBe('2027-10-31T02:30:00+02:00');
    expect(list.body[0].dates[5].begin).toBe('2027-10-31T02:30:00+01:00');
    expect(list.body[0].dates[6].begin).toBe('2028-01-01T00:59:59+01:00');
  });
});
