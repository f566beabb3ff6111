import { describe, expect, it } from 'vitest';
import { ageAtFirstDate, ageLimitsText, ageOn, ageVerdict, berlinDay } from '../../src/domain/age.js';
import { allocateByLot } from '../../src/domain/lottery.js';
import { ageAtOffer } from '../../src/domain/retention.js';
import { ageWithinLimits } from '../../src/domain/family-applications.js';

// D10 "Age is taken at the offer's first date": one rule (src/domain/age.ts) for the lottery, retention and a
// family's own application. The table below is the rule; the last block shows the three users agree on it.

describe('ageAtFirstDate: full years on the Berlin day of the first date', () => {
  it.each([
    // date of birth, first date, age
    ['2017-07-10', '2027-07-10T09:00:00+02:00', 10], // birthday on the day
    ['2017-07-11', '2027-07-10T09:00:00+02:00', 9], // the day before the birthday
    ['2017-07-10', '2027-07-09T23:30:00Z', 10], // 01:30 on 10 July in Berlin
    ['2017-07-10', '2027-07-09T21:30:00Z', 9], // 23:30 on 9 July in Berlin
    ['2016-02-29', '2027-02-28T10:00:00+01:00', 10], // leap-day child: not yet on 28 Feb
    ['2016-02-29', '2027-03-01T10:00:00+01:00', 11],
    ['2016-02-29', '2028-02-29T10:00:00+01:00', 12],
    ['2027-08-01', '2027-07-10T09:00:00+02:00', -1], // not born yet
    ['2020-01-01', '2027-07-10', 7], // a day as first date
  ] as const)('born %s, first date %s -> %s', (dob, first, age) => {
    expect(ageAtFirstDate(dob, first)).toBe(age);
    expect(ageAtFirstDate(dob, new Date(first.length === 10 ? `${first}T12:00:00+02:00` : first))).toBe(age);
  });

  it('is unknown without a birth date or a first date', () => {
    expect(ageAtFirstDate(null, '2027-07-10')).toBeNull();
    expect(ageAtFirstDate('2017-07-10', null)).toBeNull();
    expect(ageAtFirstDate('2017-07-10', 'not a date')).toBeNull();
  });

  it('ageOn and berlinDay are its parts', () => {
    expect(ageOn('2000-12-31', '2001-12-30')).toBe(0);
    expect(ageOn('2000-12-31', '2001-12-31')).toBe(1);
    expect(berlinDay('2027-01-01T23:30:00Z')).toBe('2027-01-02');
    expect(berlinDay(new Date('2027-07-01T22:30:00Z'))).toBe('2027-07-02');
  });
});

describe('ageVerdict: limits inclusive, missing ones open, unborn too young', () => {
  it.each([
    [6, 6, 12, 'fits'], [12, 6, 12, 'fits'], [5, 6, 12, 'too_young'], [13, 6, 12, 'too_old'],
    [3, null, 12, 'fits'], [40, 6, null, 'fits'], [0, null, null, 'fits'], [-1, null, null, 'too_young'],
  ] as const)('age %s, %s..%s -> %s', (age, minAge, maxAge, verdict) => {
    expect(ageVerdict(age, { minAge, maxAge })).toBe(verdict);
  });

  it('writes the limits as the German texts do', () => {
    expect(ageLimitsText({ minAge: 6, maxAge: 12 })).toBe('6–12');
    expect(ageLimitsText({ minAge: null, maxAge: 12 })).toBe('0–12');
    expect(ageLimitsText({ minAge: 6, maxAge: null })).toBe('6–∞');
  });
});

describe('the lottery, retention and a family application use the same rule', () => {
  // A child who turns 6 on 10 July 2027 (Berlin), an offer for 6..12 whose first date is 9 July 22:30 UTC,
  // which is already 10 July in Berlin.
  const dob = '2021-07-10';
  const first = '2027-07-09T22:30:00Z';

  it('retention keeps the age of the rule', () => {
    expect(ageAtOffer(dob, new Date(first))).toBe(ageAtFirstDate(dob, first));
    expect(ageAtOffer(dob, new Date(first))).toBe(6);
  });

  it('the lottery admits the child on its birthday and refuses it a day earlier', () => {
    const draw = (firstDate: string) => allocateByLot({
      seed: 1, waitlist: true, existingConfirmed: [],
      applications: [{ id: 'a', participantId: 'p', offerId: 'o', userPriority: 1, createdOrder: 1, dateOfBirth: dob }],
      offers: [{ id: 'o', capacity: 1, confirmedCount: 0, minAge: 6, maxAge: 12, firstDate, dates: [] }],
    }).decisions[0]!.reasonCode;
    expect(draw(first)).toBe('won');
    expect(draw('2027-07-09T21:30:00Z')).toBe('age');
  });

  it('a family application is refused exactly where the lottery refuses', () => {
    expect(ageWithinLimits(dob, { minAge: 6, maxAge: 12, firstDate: new Date(first) })).toBeNull();
    expect(ageWithinLimits(dob, { minAge: 6, maxAge: 12, firstDate: new Date('2027-07-09T21:30:00Z') })?.rule).toBe('ageLimit');
  });
});

// D10: a date or timestamp is read as its Berlin day (one function for the lottery, retention and families).
describe('berlinDay', () => {
  it.each([
    ['2027-03-28', '2027-03-28'],
    ['2027-03-28T23:30:00Z', '2027-03-29'],
    ['2027-10-30T22:30:00Z', '2027-10-31'], // still CEST: 00:30 on the 31st
    ['2027-07-10T00:15:00+02:00', '2027-07-10'],
    ['2027-07-09 22:15:00+00', '2027-07-10'], // PostgreSQL's text form
    ['nonsense', null],
  ])('berlinDay(%s) = %s', (value, expected) => {
    expect(berlinDay(value)).toBe(expected);
  });
});
