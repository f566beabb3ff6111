// A child's age at an offer (D10 "Lot and commit": "Age is taken at the offer's first date"), one rule for
// the three places that ask: the lottery (D7: age limits), retention (D9: the age an application keeps once the
// birth date is gone) and a family's own application (D11: the wish must fit minAge..maxAge).

import { DateTime } from 'luxon';
import { BERLIN as ZONE, berlinDayOfInstant, instantOfText } from './berlin-time.js';

/** Age in full years on `day` (both 'YYYY-MM-DD'); someone born on 29 Feb ages on 1 Mar in other years. */
export function ageOn(dateOfBirth: string, day: string): number {
  const [by, bmd] = [Number(dateOfBirth.slice(0, 4)), dateOfBirth.slice(5, 10)];
  const [y, md] = [Number(day.slice(0, 4)), day.slice(5, 10)];
  return y - by - (md < bmd ? 1 : 0);
}

/** The Berlin calendar day ('YYYY-MM-DD') of a moment, or of a day or timestamp string; null when unreadable. */
export function berlinDay(value: string | Date): string | null {
  // Issue 25: instants of 1970-9999 without a luxon DateTime (berlin-time.ts).
  const ms = typeof value === 'string' ? instantOfText(value) : value.getTime();
  const fast = ms === undefined ? undefined : berlinDayOfInstant(ms);
  if (fast !== undefined) return fast;
  const dt = typeof value === 'string' ? DateTime.fromISO(value, { zone: ZONE }) : DateTime.fromJSDate(value, { zone: ZONE });
  return dt.isValid ? dt.toISODate() : null;
}

/**
 * THE rule: the child's age in full years on the Berlin day of the offer's first date (negative: not born yet
 * on that day). Null when the birth date or the first date is unknown.
 */
export function ageAtFirstDate(dateOfBirth: string | null, firstDate: string | Date | null): number | null {
  if (!dateOfBirth || firstDate === null) return null;
  const day = berlinDay(firstDate);
  return day ? ageOn(dateOfBirth, day) : null;
}

export type AgeLimits = { minAge: number | null; maxAge: number | null };

/** Where an age stands against an offer's limits (both inclusive; a missing limit is open; unborn is too young). */
export function ageVerdict(age: number, limits: AgeLimits): 'fits' | 'too_young' | 'too_old' {
  if (age < 0 || (limits.minAge !== null && age < limits.minAge)) return 'too_young';
  if (limits.maxAge !== null && age > limits.maxAge) return 'too_old';
  return 'fits';
}

/** The limits as the German texts write them: `6–12`, `6–∞`, `0–12`. */
export function ageLimitsText(limits: AgeLimits): string {
  return `${limits.minAge ?? 0}–${limits.maxAge ?? '∞'}`;
}
