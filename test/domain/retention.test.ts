import { describe, expect, it } from 'vitest';
import {
  accountDue, ageAtOffer, endedBefore, offerEnd, offerFirstDay, participantDue, pseudonymFor, retentionCutoff, retentionStart, WEEK_MS,
} from '../../src/domain/retention.js';

const at = (iso: string) => new Date(iso);
const now = at('2027-11-24T12:00:00+01:00');
const weeksAgo = (w: number) => new Date(now.getTime() - w * WEEK_MS);
const cutoff = retentionCutoff(now, 12);

describe('retentionCutoff / endedBefore', () => {
  it('is now minus the retention weeks; an offer must have ended strictly before it', () => {
    expect(cutoff.getTime()).toBe(now.getTime() - 12 * WEEK_MS);
    expect(endedBefore(weeksAgo(13), cutoff)).toBe(true);
    expect(endedBefore(weeksAgo(11), cutoff)).toBe(false);
    expect(endedBefore(cutoff, cutoff)).toBe(false);
    expect(endedBefore(null, cutoff)).toBe(false);
  });

  it('0 weeks: every offer that has ended is past retention', () => {
    const c0 = retentionCutoff(now, 0);
    expect(endedBefore(new Date(now.getTime() - 1000), c0)).toBe(true);
    expect(endedBefore(new Date(now.getTime() + 1000), c0)).toBe(false);
  });
});

describe('offerEnd', () => {
  it('is the end of the last date', () => {
    const end = offerEnd({
      dates: [
        { begin: at('2027-07-20T09:00:00+02:00'), end: at('2027-07-20T12:00:00+02:00') },
        { begin: at('2027-07-10T09:00:00+02:00'), end: at('2027-07-10T12:00:00+02:00') },
      ],
      horizon: null,
      holidays: [{ begin: at('2027-07-01T00:00:00+02:00'), end: at('2027-09-01T00:00:00+02:00') }],
    });
    expect(end).toEqual(at('2027-07-20T12:00:00+02:00'));
  });

  it('expands recurrences: the last occurrence ends it (COUNT, and an open rule up to the horizon)', () => {
    const begin = at('2027-07-05T10:00:00+02:00');
    const end = at('2027-07-05T12:00:00+02:00');
    expect(offerEnd({ dates: [{ begin, end, recurrence: 'FREQ=WEEKLY;COUNT=4' }], horizon: null, holidays: [] }))
      .toEqual(at('2027-07-26T12:00:00+02:00'));
    // D10: without COUNT/UNTIL up to the end of the edition's last task.
    expect(offerEnd({ dates: [{ begin, end, recurrence: 'FREQ=WEEKLY' }], horizon: at('2027-08-10T00:00:00+02:00'), holidays: [] }))
      .toEqual(at('2027-08-09T12:00:00+02:00'));
    // … or one year.
    expect(offerEnd({ dates: [{ begin, end, recurrence: 'FREQ=MONTHLY' }], horizon: null, holidays: [] })!.getTime())
      .toBeGreaterThan(at('2028-06-01T00:00:00+02:00').getTime());
  });

  it('without dates: the latest end of the edition\'s holiday tasks; unknown without one or with an open one', () => {
    const holidays = [
      { begin: at('2027-07-01T00:00:00+02:00'), end: at('2027-08-15T23:59:59+02:00') },
      { begin: at('2027-10-25T00:00:00+01:00'), end: at('2027-11-05T23:59:59+01:00') },
    ];
    expect(offerEnd({ dates: [], horizon: null, holidays })).toEqual(at('2027-11-05T23:59:59+01:00'));
    expect(offerEnd({ dates: [], horizon: null, holidays: [] })).toBeNull();
    expect(offerEnd({ dates: [], horizon: null, holidays: [...holidays, { begin: null, end: null }] })).toBeNull();
  });
});

describe('participantDue', () => {
  const old = { offerEnd: weeksAgo(13) };
  const recent = { offerEnd: weeksAgo(11) };
  it('is due when every offer ended more than retentionWeeks ago', () => {
    expect(participantDue({ lastChange: weeksAgo(100), applications: [old] }, cutoff)).toBe(true);
    expect(participantDue({ lastChange: weeksAgo(100), applications: [old, { offerEnd: weeksAgo(52) }] }, cutoff)).toBe(true);
  });
  it('is not due with one offer ended recently, not ended, or without an end', () => {
    expect(participantDue({ lastChange: weeksAgo(100), applications: [recent] }, cutoff)).toBe(false);
    expect(participantDue({ lastChange: weeksAgo(100), applications: [old, recent] }, cutoff)).toBe(false);
    expect(participantDue({ lastChange: weeksAgo(100), applications: [old, { offerEnd: null }] }, cutoff)).toBe(false);
    expect(participantDue({ lastChange: weeksAgo(100), applications: [{ offerEnd: new Date(now.getTime() + WEEK_MS) }] }, cutoff)).toBe(false);
  });
  it('without applications: due once created and last changed before the cutoff', () => {
    expect(participantDue({ lastChange: weeksAgo(13), applications: [] }, cutoff)).toBe(true);
    expect(participantDue({ lastChange: weeksAgo(11), applications: [] }, cutoff)).toBe(false);
  });
  it('the last change does not keep a participant whose offers are all past retention', () => {
    expect(participantDue({ lastChange: weeksAgo(1), applications: [old] }, cutoff)).toBe(true);
  });
});

describe('accountDue', () => {
  it('is due when every child was pseudonymised', () => {
    expect(accountDue({ livingChildren: 0, pseudonymisedChildren: 2, lastChange: weeksAgo(1) }, cutoff)).toBe(true);
  });
  it('is not due while one child is living', () => {
    expect(accountDue({ livingChildren: 1, pseudonymisedChildren: 2, lastChange: weeksAgo(100) }, cutoff)).toBe(false);
  });
  it('without children: due once last changed before the cutoff', () => {
    expect(accountDue({ livingChildren: 0, pseudonymisedChildren: 0, lastChange: weeksAgo(13) }, cutoff)).toBe(true);
    expect(accountDue({ livingChildren: 0, pseudonymisedChildren: 0, lastChange: weeksAgo(11) }, cutoff)).toBe(false);
  });
});

describe('pseudonymFor', () => {
  it('is stable, depends only on the uuid (any case), and looks like P-<base58>', () => {
    const u = '0b9f6c3e-5d7a-4c1e-9f3a-2b8d4e6f7a10';
    expect(pseudonymFor(u)).toBe(pseudonymFor(u.toUpperCase()));
    expect(pseudonymFor(u)).toMatch(/^P-[1-9A-HJ-NP-Za-km-z]{10,12}$/);
    expect(pseudonymFor(u)).not.toBe(pseudonymFor('0b9f6c3e-5d7a-4c1e-9f3a-2b8d4e6f7a11'));
  });
  it('has no collisions among 20,000 uuids', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) seen.add(pseudonymFor(crypto.randomUUID()));
    expect(seen.size).toBe(20_000);
  });
});

describe('offerFirstDay / ageAtOffer', () => {
  it('takes the earliest date, else the earliest holiday begin, else none', () => {
    const dates = [
      { begin: at('2027-07-20T09:00:00+02:00'), end: at('2027-07-20T12:00:00+02:00') },
      { begin: at('2027-07-10T09:00:00+02:00'), end: at('2027-07-10T12:00:00+02:00') },
    ];
    const holidays = [{ begin: at('2027-07-01T00:00:00+02:00'), end: at('2027-08-15T00:00:00+02:00') }];
    expect(offerFirstDay({ dates, holidays })).toEqual(at('2027-07-10T09:00:00+02:00'));
    expect(offerFirstDay({ dates: [], holidays })).toEqual(at('2027-07-01T00:00:00+02:00'));
    expect(offerFirstDay({ dates: [], holidays: [{ begin: null, end: null }] })).toBeNull();
  });
  it('is the age in full years on the Berlin day of the first date', () => {
    expect(ageAtOffer('2017-07-10', at('2027-07-10T09:00:00+02:00'))).toBe(10);
    expect(ageAtOffer('2017-07-11', at('2027-07-10T09:00:00+02:00'))).toBe(9);
    // 23:30 UTC on 9 July is already 10 July in Berlin.
    expect(ageAtOffer('2017-07-10', at('2027-07-09T23:30:00Z'))).toBe(10);
    // Born on 29 February: a year older on 1 March.
    expect(ageAtOffer('2016-02-29', at('2027-02-28T10:00:00+01:00'))).toBe(10);
    expect(ageAtOffer('2016-02-29', at('2027-03-01T10:00:00+01:00'))).toBe(11);
    expect(ageAtOffer(null, at('2027-07-10T09:00:00+02:00'))).toBeNull();
    expect(ageAtOffer('2017-07-10', null)).toBeNull();
  });
});

describe('retentionStart (D2, issue 22.9)', () => {
  const d = (iso: string) => new Date(iso);
  it('is the end of the edition\'s holidays, or the offer\'s own end when it lies after them', () => {
    const holidays = [{ begin: d('2027-07-01T00:00:00Z'), end: d('2027-08-15T00:00:00Z') }, { begin: null, end: d('2027-08-31T00:00:00Z') }];
    expect(retentionStart({ holidays, editionOfferEnds: [], ownEnd: d('2027-07-10T00:00:00Z') })).toEqual(d('2027-08-31T00:00:00Z'));
    expect(retentionStart({ holidays, editionOfferEnds: [], ownEnd: d('2027-10-20T00:00:00Z') })).toEqual(d('2027-10-20T00:00:00Z'));
    expect(retentionStart({ holidays, editionOfferEnds: [], ownEnd: null })).toEqual(d('2027-08-31T00:00:00Z'));
  });
  it('without a holiday task: the edition\'s last offer date; a holiday without an end, or no date at all: not ended', () => {
    const ends = [d('2027-07-10T00:00:00Z'), null, d('2027-08-20T00:00:00Z')];
    expect(retentionStart({ holidays: [], editionOfferEnds: ends, ownEnd: d('2027-07-10T00:00:00Z') })).toEqual(d('2027-08-20T00:00:00Z'));
    expect(retentionStart({ holidays: [], editionOfferEnds: [null], ownEnd: null })).toBeNull();
    expect(retentionStart({ holidays: [{ begin: null, end: null }], editionOfferEnds: ends, ownEnd: d('2027-07-10T00:00:00Z') })).toBeNull();
  });
});
