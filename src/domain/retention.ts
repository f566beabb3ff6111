// Retention (D2 `retentionWeeks`, D9 pseudonymisation; docs/decisions.md "Retention"): when a participant and a
// family account are due, the stable pseudonym, and the age an application keeps. Pure rules: no database, no
// transport; the use case (src/resources/retention/) feeds them what it read.

import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import { ageAtFirstDate } from './age.js';
import { expandOccurrences } from './recurrence.js';

export const WEEK_MS = 7 * 86_400_000;

/** A phase of type `holiday` of the offer's edition (D4); a missing end means "open", so not ended. */
export type HolidayTask = { begin: Date | null; end: Date | null };

export type RetentionOffer = {
  dates: readonly { begin: Date; end: Date; recurrence?: string | null }[];
  /** End of the edition's last task (D10: an RRULE without COUNT/UNTIL runs to it, else one year). */
  horizon: Date | null;
  /** The edition's `holiday` tasks: used only when the offer has no dates. */
  holidays: readonly HolidayTask[];
};

/** The moment before which an offer must have ended to be past retention: `now` − `retentionWeeks`. */
export function retentionCutoff(now: Date, retentionWeeks: number): Date {
  return new Date(now.getTime() - retentionWeeks * WEEK_MS);
}

/**
 * When an offer ended, for retention: the end of its last occurrence (recurrences expanded as everywhere else,
 * D10); an offer without dates ends with its edition's holidays (the latest end of its `holiday` tasks). Null
 * when that is unknown: no dates and no holiday task, or a holiday task without an end. Such an offer never
 * ends for retention, the same rule as the organisers' list access (an offer without dates has not ended).
 */
export function offerEnd(offer: RetentionOffer): Date | null {
  let end = -Infinity;
  for (const d of offer.dates) {
    for (const o of expandOccurrences({ begin: d.begin, end: d.end, recurrence: d.recurrence, horizon: offer.horizon })) {
      end = Math.max(end, o.end.getTime(), o.begin.getTime());
    }
  }
  if (offer.dates.length > 0) return Number.isFinite(end) ? new Date(end) : null;
  if (offer.holidays.length === 0 || offer.holidays.some((h) => h.end === null)) return null;
  return new Date(Math.max(...offer.holidays.map((h) => h.end!.getTime())));
}

/**
 * D2, issue 22: when retention starts for an application, `retentionWeeks` before pseudonymisation: when its
 * edition's holidays end (the latest end of its `holiday` tasks; a holiday task without an end: not ended; no
 * holiday task: the end of the edition's last offer date), and never before its own offer ended (an offer held
 * after the holidays keeps its participants until it took place). Null: not ended. `ownEnd` is the offer's
 * `offerEnd`; `editionOfferEnds` the ends of every offer of the edition (null for offers without dates).
 */
export function retentionStart(input: { holidays: readonly HolidayTask[]; editionOfferEnds: readonly (Date | null)[]; ownEnd: Date | null }): Date | null {
  let holidaysEnd: number;
  if (input.holidays.length > 0) {
    if (input.holidays.some((h) => h.end === null)) return null;
    holidaysEnd = Math.max(...input.holidays.map((h) => h.end!.getTime()));
  } else {
    const ends = input.editionOfferEnds.filter((e): e is Date => e !== null).map((e) => e.getTime());
    if (ends.length === 0) return null;
    holidaysEnd = Math.max(...ends);
  }
  return new Date(Math.max(holidaysEnd, input.ownEnd?.getTime() ?? -Infinity));
}

/** Whether an offer that ended at `end` (null: not ended) ended more than the retention period ago. */
export function endedBefore(end: Date | null, cutoff: Date): boolean {
  return end !== null && end.getTime() < cutoff.getTime();
}

/**
 * D9: a participant is due for pseudonymisation when every offer it applied for (in any state) ended before
 * the cutoff. A participant without any application is due when it was created and last changed before the
 * cutoff (a child registered and never entered for anything is not kept for ever either). One application
 * whose offer has not ended, or ended too recently, keeps the participant.
 */
export function participantDue(
  input: { lastChange: Date; applications: readonly { offerEnd: Date | null }[] },
  cutoff: Date,
): boolean {
  if (input.applications.length === 0) return input.lastChange.getTime() < cutoff.getTime();
  return input.applications.every((a) => endedBefore(a.offerEnd, cutoff));
}

/**
 * D9 "accounts left without a living child": an account is due when none of its children is still living
 * (every one pseudonymised) and it had at least one; an account that never had a child (or whose children were
 * deleted) is due once it was last changed before the cutoff.
 */
export function accountDue(input: { livingChildren: number; pseudonymisedChildren: number; lastChange: Date }, cutoff: Date): boolean {
  if (input.livingChildren > 0) return false;
  return input.pseudonymisedChildren > 0 || input.lastChange.getTime() < cutoff.getTime();
}

/**
 * The stable pseudonym of a participant: `P-` and the base58 form of the first 8 bytes of the SHA-256 of its
 * UUID (11-12 characters). The same participant always gets the same pseudonym, in every run and process;
 * it holds nothing of the person.
 */
export function pseudonymFor(participantUuid: string): string {
  const bytes = Buffer.from(participantUuid.toLowerCase().replace(/-/g, ''), 'hex');
  const digest = createHash('sha256').update(bytes).digest();
  return `P-${bs58.encode(digest.subarray(0, 8))}`;
}

/**
 * The first day of an offer for the age it keeps (D10: age is taken at the offer's first date): the earliest
 * begin of its dates; without dates, the earliest begin of its edition's holidays; else null.
 */
export function offerFirstDay(offer: Pick<RetentionOffer, 'dates' | 'holidays'>): Date | null {
  const begins = offer.dates.length > 0
    ? offer.dates.map((d) => d.begin.getTime())
    : offer.holidays.filter((h) => h.begin !== null).map((h) => h.begin!.getTime());
  return begins.length > 0 ? new Date(Math.min(...begins)) : null;
}

/** Age in full years on the Berlin calendar day of `firstDay` (the lottery's rule); null when either is unknown. */
export function ageAtOffer(dateOfBirth: string | null, firstDay: Date | null): number | null {
  const age = ageAtFirstDate(dateOfBirth, firstDay);
  return age !== null && age >= 0 ? age : null;
}
