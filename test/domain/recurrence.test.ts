import { describe, it, expect } from 'vitest';
import { DateTime } from 'luxon';
import {
  MAX_OCCURRENCES,
  expandOccurrences,
  touchesDays,
  validateRecurrence,
} from '../../src/domain/recurrence.js';

const berlin = (d: Date) => DateTime.fromJSDate(d, { zone: 'Europe/Berlin' }).toISO({ suppressMilliseconds: true });
const at = (iso: string) => new Date(iso);
const horizon = at('2028-12-31T00:00:00+01:00');

describe('validateRecurrence', () => {
  it.each([
    'FREQ=WEEKLY;COUNT=4',
    'RRULE:FREQ=WEEKLY;COUNT=4',
    'rrule:freq=daily;interval=2',
    'FREQ=WEEKLY;BYDAY=MO,WE,FR;UNTIL=20270801',
    'FREQ=MONTHLY;BYDAY=-1SU;UNTIL=20271231T230000Z',
    'FREQ=YEARLY;BYMONTH=3;BYMONTHDAY=-1',
  ])('accepts %s', (rule) => {
    expect(validateRecurrence(rule)).toBeNull();
  });

  it.each([
    ['', /empty/],
    ['RRULE:', /empty/],
    ['COUNT=4', /FREQ/],
    ['FREQ=FORTNIGHTLY', /FREQ/],
    ['FREQ=WEEKLY;COUNT=0', /COUNT/],
    ['FREQ=WEEKLY;COUNT=abc', /COUNT/],
    ['FREQ=WEEKLY;BYDAY=XX', /BYDAY/],
    ['FREQ=WEEKLY;FOO=1', /FOO/],
    ['FREQ=WEEKLY;COUNT=2;UNTIL=20270101', /both COUNT and UNTIL/],
    ['FREQ=WEEKLY;FREQ=DAILY', /twice/],
    ['DTSTART:20270101T100000Z\nRRULE:FREQ=WEEKLY', /single RRULE/],
    ['FREQ=MONTHLY;BYMONTHDAY=32', /BYMONTHDAY/],
    ['garbage', /garbage|GARBAGE/],
  ])('rejects %j', (rule, message) => {
    expect(validateRecurrence(rule)).toMatch(message);
  });
});

describe('expandOccurrences', () => {
  it('returns the date itself without a recurrence', () => {
    const begin = at('2027-07-10T09:00:00+02:00'), end = at('2027-07-10T12:00:00+02:00');
    expect(expandOccurrences({ begin, end, horizon })).toEqual([{ begin, end }]);
    expect(expandOccurrences({ begin, end, recurrence: null, horizon })).toEqual([{ begin, end }]);
  });

  it('keeps 10:00 Berlin time across the spring DST switch (28 March 2027)', () => {
    const occ = expandOccurrences({
      begin: at('2027-03-21T10:00:00+01:00'),
      end: at('2027-03-21T12:00:00+01:00'),
      recurrence: 'FREQ=WEEKLY;COUNT=3',
      horizon,
    });
    expect(occ.map((o) => berlin(o.begin))).toEqual([
      '2027-03-21T10:00:00+01:00',
      '2027-03-28T10:00:00+02:00',
      '2027-04-04T10:00:00+02:00',
    ]);
    expect(occ.map((o) => berlin(o.end))).toEqual([
      '2027-03-21T12:00:00+01:00',
      '2027-03-28T12:00:00+02:00',
      '2027-04-04T12:00:00+02:00',
    ]);
  });

  it('keeps 10:00 Berlin time across the autumn DST switch (31 October 2027), with RRULE: prefix', () => {
    const occ = expandOccurrences({
      begin: at('2027-10-24T10:00:00+02:00'),
      end: at('2027-10-24T11:30:00+02:00'),
      recurrence: 'RRULE:FREQ=WEEKLY;COUNT=2',
      horizon,
    });
    expect(occ.map((o) => [berlin(o.begin), berlin(o.end)])).toEqual([
      ['2027-10-24T10:00:00+02:00', '2027-10-24T11:30:00+02:00'],
      ['2027-10-31T10:00:00+01:00', '2027-10-31T11:30:00+01:00'],
    ]);
    expect(occ[1].begin.toISOString()).toBe('2027-10-31T09:00:00.000Z');
  });

  it('expands a daily rule over the DST night keeping the wall-clock length of a multi-day event', () => {
    // Friday 09:00 to Sunday 16:00, weekly: the second one spans the switch and keeps its wall-clock times.
    const occ = expandOccurrences({
      begin: at('2027-03-19T09:00:00+01:00'),
      end: at('2027-03-21T16:00:00+01:00'),
      recurrence: 'FREQ=WEEKLY;COUNT=2',
      horizon,
    });
    expect(occ.map((o) => [berlin(o.begin), berlin(o.end)])).toEqual([
      ['2027-03-19T09:00:00+01:00', '2027-03-21T16:00:00+01:00'],
      ['2027-03-26T09:00:00+01:00', '2027-03-28T16:00:00+02:00'],
    ]);
  });

  it('expands a rule without COUNT or UNTIL up to the horizon', () => {
    const occ = expandOccurrences({
      begin: at('2027-07-05T09:00:00+02:00'),
      end: at('2027-07-05T10:00:00+02:00'),
      recurrence: 'FREQ=WEEKLY',
      horizon: at('2027-07-26T09:00:00+02:00'), // inclusive
    });
    expect(occ.map((o) => berlin(o.begin)?.slice(0, 10))).toEqual(['2027-07-05', '2027-07-12', '2027-07-19', '2027-07-26']);
  });

  it('ignores the horizon for bounded rules and caps the count', () => {
    const bounded = expandOccurrences({
      begin: at('2027-07-05T09:00:00+02:00'),
      end: at('2027-07-05T10:00:00+02:00'),
      recurrence: 'FREQ=DAILY;COUNT=5',
      horizon: at('2027-07-06T00:00:00+02:00'),
    });
    expect(bounded).toHaveLength(5);
    const capped = expandOccurrences({
      begin: at('2027-07-05T09:00:00+02:00'),
      end: at('2027-07-05T10:00:00+02:00'),
      recurrence: 'FREQ=HOURLY',
      horizon: at('2030-01-01T00:00:00+01:00'),
    });
    expect(capped).toHaveLength(MAX_OCCURRENCES);
  });

  it.each([
    ['FREQ=DAILY;UNTIL=20270707', 3], // date-only UNTIL includes that whole Berlin day
    ['FREQ=DAILY;UNTIL=20270707T070000Z', 3], // 09:00 Berlin, inclusive
    ['FREQ=DAILY;UNTIL=20270707T065959Z', 2],
    ['FREQ=DAILY;UNTIL=20270707T090000', 3], // floating local time
  ])('UNTIL %s gives %i occurrences', (recurrence, n) => {
    const occ = expandOccurrences({
      begin: at('2027-07-05T09:00:00+02:00'),
      end: at('2027-07-05T10:00:00+02:00'),
      recurrence,
      horizon,
    });
    expect(occ).toHaveLength(n);
  });

  it('throws on an invalid rule', () => {
    expect(() => expandOccurrences({ begin: at('2027-07-05T09:00:00+02:00'), end: at('2027-07-05T10:00:00+02:00'), recurrence: 'FREQ=NEVER', horizon })).toThrow(/FREQ/);
  });
});

describe('touchesDays', () => {
  const occ = (b: string, e: string) => [{ begin: at(b), end: at(e) }];
  const morning = occ('2027-07-10T09:00:00+02:00', '2027-07-10T12:00:00+02:00');
  const multiDay = occ('2027-07-10T09:00:00+02:00', '2027-07-13T16:00:00+02:00');
  const lateNight = occ('2027-07-10T23:30:00+02:00', '2027-07-11T00:00:00+02:00'); // ends at midnight
  const utcLate = occ('2027-07-10T22:30:00Z', '2027-07-10T23:00:00Z'); // 11 July 00:30 in Berlin

  it.each([
    ['same day', morning, '2027-07-10', '2027-07-10', true],
    ['day before only', morning, '2027-07-09', '2027-07-09', false],
    ['day after only', morning, '2027-07-11', '2027-07-11', false],
    ['open from', morning, null, '2027-07-10', true],
    ['open until', morning, '2027-07-10', null, true],
    ['open until, later', morning, '2027-07-11', null, false],
    ['open from, earlier', morning, null, '2027-07-09', false],
    ['no bounds', morning, null, null, true],
    ['multi-day, middle day', multiDay, '2027-07-12', '2027-07-12', true],
    ['multi-day, last day', multiDay, '2027-07-13', null, true],
    ['multi-day, after', multiDay, '2027-07-14', null, false],
    ['multi-day, before', multiDay, null, '2027-07-09', false],
    ['ends at midnight, next day', lateNight, '2027-07-11', null, false],
    ['ends at midnight, own day', lateNight, null, '2027-07-10', true],
    ['Berlin day, not UTC day', utcLate, '2027-07-11', '2027-07-11', true],
    ['Berlin day, not UTC day (2)', utcLate, '2027-07-10', '2027-07-10', false],
    ['empty list', [], null, null, false],
  ] as const)('%s', (_name, occurrences, from, until, expected) => {
    expect(touchesDays(occurrences, from, until)).toBe(expected);
  });

  it('works with expanded recurrences, e.g. across the October switch', () => {
    const list = expandOccurrences({
      begin: at('2027-10-24T10:00:00+02:00'),
      end: at('2027-10-24T11:00:00+02:00'),
      recurrence: 'FREQ=WEEKLY;COUNT=3',
      horizon,
    });
    expect(touchesDays(list, '2027-10-31', '2027-10-31')).toBe(true);
    expect(touchesDays(list, '2027-10-25', '2027-10-30')).toBe(false);
    expect(touchesDays(list, '2027-11-08', null)).toBe(false);
  });
});
