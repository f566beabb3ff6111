import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import {
  berlinDayBounds, formatDate, formatTimestamp, parseDate, parseDateFilter, parseTimestamp,
} from '../../../src/platform/http/dates.js';

// Spec 1.7 and D10: Berlin time with its offset out; an offset required in; date filters take either form.
describe('formatTimestamp', () => {
  it('formats a summer instant in Berlin with +02:00', () => {
    expect(formatTimestamp(new Date('2027-07-01T08:00:00Z'))).toBe('2027-07-01T10:00:00+02:00');
  });

  it('formats a winter instant in Berlin with +01:00', () => {
    expect(formatTimestamp(new Date('2027-01-15T08:00:00Z'))).toBe('2027-01-15T09:00:00+01:00');
  });

  it('moves to the next Berlin day late in the UTC evening', () => {
    expect(formatTimestamp(new Date('2027-07-01T22:30:00Z'))).toBe('2027-07-02T00:30:00+02:00');
  });

  it('crosses the spring clock change', () => {
    expect(formatTimestamp(new Date('2027-03-28T00:59:59Z'))).toBe('2027-03-28T01:59:59+01:00');
    expect(formatTimestamp(new Date('2027-03-28T01:00:00Z'))).toBe('2027-03-28T03:00:00+02:00');
  });

  it('drops milliseconds', () => {
    expect(formatTimestamp(new Date('2027-07-01T08:00:00.999Z'))).toBe('2027-07-01T10:00:00+02:00');
  });

  // The fast path for Dates (Berlin's offset looked up once per UTC hour) against luxon's own text: random
  // instants from 1970 to 2100 (milliseconds included) and one second around every transition 1970-2100.
  it('writes the same text as luxon for any instant, also around every daylight-saving transition', () => {
    const luxonText = (ms: number) => DateTime.fromMillis(ms, { zone: 'Europe/Berlin' }).startOf('second').toISO({ suppressMilliseconds: true });
    const instants: number[] = [];
    let seed = 20261127;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const end = Date.UTC(2100, 0, 1);
    for (let i = 0; i < 20_000; i++) instants.push(Math.floor(random() * end));
    const offsetAt = (ms: number) => DateTime.fromMillis(ms, { zone: 'Europe/Berlin' }).offset;
    let transitions = 0;
    // Day by day; on a day whose offset differs from the day before, the hour of the change.
    for (let day = 0; (day + 1) * 86_400_000 < end; day++) {
      const from = day * 86_400_000;
      if (offsetAt(from) === offsetAt(from + 86_400_000)) continue;
      for (let ms = from + 3_600_000; ms <= from + 86_400_000; ms += 3_600_000) {
        if (offsetAt(ms) === offsetAt(ms - 1000)) continue;
        transitions++;
        instants.push(ms - 1001, ms - 1000, ms - 1, ms, ms + 999, ms + 1000);
      }
    }
    expect(transitions).toBeGreaterThan(200);
    for (const ms of instants) expect(formatTimestamp(new Date(ms))).toBe(luxonText(ms));
  });

  it("reads PostgreSQL's text form", () => {
    expect(formatTimestamp('2027-07-01 08:00:00.12+00')).toBe('2027-07-01T10:00:00+02:00');
    expect(formatTimestamp('2027-01-15 08:00:00+00')).toBe('2027-01-15T09:00:00+01:00');
    expect(formatTimestamp('2027-07-01 10:00:00+02')).toBe('2027-07-01T10:00:00+02:00');
    expect(formatTimestamp('2027-07-01 13:30:00+05:30')).toBe('2027-07-01T10:00:00+02:00');
    expect(formatTimestamp('2027-07-01T08:00:00Z')).toBe('2027-07-01T10:00:00+02:00');
  });

  it('leaves null, undefined and garbage out', () => {
    expect(formatTimestamp(null)).toBeUndefined();
    expect(formatTimestamp(undefined)).toBeUndefined();
    expect(formatTimestamp('not a date')).toBeUndefined();
    expect(formatTimestamp(new Date(Number.NaN))).toBeUndefined();
  });
});

describe('formatDate', () => {
  it('returns YYYY-MM-DD from strings and local-midnight Dates', () => {
    expect(formatDate('2027-07-01')).toBe('2027-07-01');
    expect(formatDate('2027-07-01T00:00:00.000Z')).toBe('2027-07-01');
    expect(formatDate(new Date(2027, 6, 1))).toBe('2027-07-01');
    expect(formatDate(null)).toBeUndefined();
  });
});

describe('parseTimestamp', () => {
  it('requires an offset', () => {
    expect(parseTimestamp('2027-07-01T10:00:00')).toBeNull();
    expect(parseTimestamp('2027-07-01T10:00')).toBeNull();
    expect(parseTimestamp('2027-07-01')).toBeNull();
    expect(parseTimestamp('2027-07-01 10:00:00')).toBeNull();
  });

  it('accepts Z and numeric offsets as the same instant', () => {
    const z = parseTimestamp('2027-07-01T08:00:00Z');
    expect(z?.toISOString()).toBe('2027-07-01T08:00:00.000Z');
    expect(parseTimestamp('2027-07-01T08:00:00z')?.toISOString()).toBe('2027-07-01T08:00:00.000Z');
    expect(parseTimestamp('2027-07-01T10:00:00+02:00')?.getTime()).toBe(z!.getTime());
    expect(parseTimestamp('2027-07-01T10:00:00+0200')?.getTime()).toBe(z!.getTime());
    expect(parseTimestamp('2027-07-01T03:00:00-05:00')?.getTime()).toBe(z!.getTime());
    expect(parseTimestamp('2027-07-01T10:00:00.5+02:00')?.toISOString()).toBe('2027-07-01T08:00:00.500Z');
  });

  it('refuses impossible dates and times', () => {
    expect(parseTimestamp('2027-13-40T10:00:00+02:00')).toBeNull();
    expect(parseTimestamp('2027-02-29T10:00:00+01:00')).toBeNull();
    expect(parseTimestamp('2027-07-01T25:00:00+02:00')).toBeNull();
    expect(parseTimestamp('garbage')).toBeNull();
    expect(parseTimestamp('')).toBeNull();
  });
});

describe('parseDate', () => {
  it('accepts calendar dates', () => {
    expect(parseDate('2027-07-01')).toBe('2027-07-01');
    expect(parseDate('2028-02-29')).toBe('2028-02-29');
  });

  it('refuses 2027-13-40 and other unreadable dates', () => {
    for (const v of ['2027-13-40', '2027-02-29', '2027-00-10', '2027-7-1', '01.07.2027', '2027-07-01T10:00:00+02:00', '']) {
      expect(parseDate(v), v).toBeNull();
    }
  });
});

describe('parseDateFilter', () => {
  it('reads a date as the start of that Berlin day', () => {
    const f = parseDateFilter('2027-07-01');
    expect(f?.day).toBe('2027-07-01');
    expect(f?.instant.toISOString()).toBe('2027-06-30T22:00:00.000Z');
    expect(parseDateFilter('2027-01-15')?.instant.toISOString()).toBe('2027-01-14T23:00:00.000Z');
  });

  it('reads a late-evening UTC timestamp as the following Berlin day', () => {
    const f = parseDateFilter('2027-07-01T23:30:00Z');
    expect(f?.instant.toISOString()).toBe('2027-07-01T23:30:00.000Z');
    expect(f?.day).toBe('2027-07-02');
    expect(parseDateFilter('2027-01-15T22:59:59Z')?.day).toBe('2027-01-15');
    expect(parseDateFilter('2027-01-15T23:00:00Z')?.day).toBe('2027-01-16');
  });

  it('refuses unreadable values and timestamps without an offset', () => {
    for (const v of ['2027-13-40', 'tomorrow', '2027-07-01T10:00:00', '']) expect(parseDateFilter(v), v).toBeNull();
  });
});

describe('berlinDayBounds', () => {
  it('gives a 23-hour day at the spring clock change and 24 hours otherwise', () => {
    const spring = berlinDayBounds('2027-03-28');
    expect(spring.start.toISOString()).toBe('2027-03-27T23:00:00.000Z');
    expect(spring.end.toISOString()).toBe('2027-03-28T22:00:00.000Z');
    const summer = berlinDayBounds('2027-07-01');
    expect(summer.end.getTime() - summer.start.getTime()).toBe(24 * 3600 * 1000);
  });
});
