import { describe, expect, it } from 'vitest';
import { expandOccurrences, MAX_OCCURRENCES, validateRecurrence } from '../../src/domain/recurrence.js';

// Hostile recurrence rules (found by the security review): rrule walks period by period up to the year 9999
// looking for an occurrence, so a rule that matches nothing blocked the whole process for seconds (DAILY) to
// hours (sub-daily with an unreachable BYHOUR/BYSECOND), on every read that expands it. Expansion is bounded
// in work; a rule that cannot expand within the bound is refused when written.
const at = (s: string) => new Date(s);
const begin = at('2027-07-01T10:00:00+02:00');
const end = at('2027-07-01T11:00:00+02:00');
const horizon = at('2028-07-01T00:00:00+02:00');

const NEVER = [
  'FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30',
  'FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30',
  'FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=31',
  'FREQ=DAILY;BYSETPOS=366;BYMONTHDAY=31',
  'FREQ=SECONDLY;BYWEEKNO=53;BYMONTH=6',
  'FREQ=DAILY;INTERVAL=7;BYDAY=TU',
  'FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30',
  'FREQ=DAILY;BYMONTH=4;BYMONTHDAY=31;COUNT=3',
];

describe('recurrence work bound', () => {
  it.each(NEVER)('%s: refused with the date, and a read of it stays fast', (rule) => {
    expect(validateRecurrence(rule), 'without a begin only the syntax is checked').toBeNull();
    const started = Date.now();
    expect(validateRecurrence(rule, begin)).toMatch(/no further date/);
    expect(expandOccurrences({ begin, end, recurrence: rule, horizon })).toEqual([]);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it.each([
    'FREQ=HOURLY;INTERVAL=24;BYHOUR=5',
    'FREQ=SECONDLY;BYSECOND=60',
    'FREQ=MINUTELY;INTERVAL=120;BYHOUR=3',
    'FREQ=HOURLY;BYMINUTE=5',
  ])('%s: a time of day rrule would step towards forever is refused by the syntax check', (rule) => {
    expect(validateRecurrence(rule)).toMatch(/cannot be combined with FREQ=/);
  });

  it('BYHOUR and friends stay allowed with daily and coarser frequencies', () => {
    expect(validateRecurrence('FREQ=DAILY;BYHOUR=9,14;COUNT=4', begin)).toBeNull();
    expect(expandOccurrences({ begin, end, recurrence: 'FREQ=DAILY;BYHOUR=9,14;COUNT=4', horizon })).toHaveLength(4);
  });

  it.each([
    ['FREQ=WEEKLY;COUNT=4', 4],
    ['FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;UNTIL=20270831', 44],
    ['FREQ=DAILY', 367],
    ['FREQ=MONTHLY;BYDAY=-1SU', 12],
    ['FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29', 1],
    ['FREQ=YEARLY;COUNT=10', 10],
    ['FREQ=HOURLY', MAX_OCCURRENCES],
    ['FREQ=SECONDLY', MAX_OCCURRENCES],
  ] as const)('%s: still valid and fully expanded (%i)', (rule, n) => {
    expect(validateRecurrence(rule, begin)).toBeNull();
    expect(expandOccurrences({ begin, end, recurrence: rule, horizon: at('2028-07-02T00:00:00+02:00') })).toHaveLength(n);
  });
});
