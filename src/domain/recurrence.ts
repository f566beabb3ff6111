// Offer dates with RFC 5545 recurrence (D5) and the `from`/`until` day filter (D5, D10 "Offers").
// Expansion runs in Europe/Berlin wall-clock time (spec 1: local time), so a weekly 10:00 date stays
// at 10:00 across the DST switch.

import * as rruleModule from 'rrule';
import { DateTime } from 'luxon';
import { BERLIN as ZONE } from './berlin-time.js';

// rrule 2.x ships CommonJS to Node (named exports are not detected) and ESM to bundlers: accept both.
type RRuleClass = typeof rruleModule.RRule;
const RRule: RRuleClass =
  (rruleModule as unknown as { RRule?: RRuleClass }).RRule ??
  (rruleModule as unknown as { default: { RRule: RRuleClass } }).default.RRule;

/** Upper bound of occurrences expanded from one date. */
export const MAX_OCCURRENCES = 1000;
/**
 * Upper bound of the work of one expansion, counted in reads of the rule's options by rrule's iterator.
 * rrule walks period by period until it finds an occurrence, up to the year 9999: a rule that matches
 * nothing (`FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30`) or nothing it can reach (`FREQ=HOURLY;INTERVAL=24;BYHOUR=5`
 * from 10:00) would block the process for seconds or hours. Real rules need far less: 1000 hourly
 * occurrences take about 20,000 reads, a year of daily ones about 7,000.
 */
export const MAX_EXPANSION_WORK = 200_000;

export interface Occurrence {
  begin: Date;
  end: Date;
}

const KNOWN_KEYS = new Set([
  'FREQ', 'UNTIL', 'COUNT', 'INTERVAL', 'BYSECOND', 'BYMINUTE', 'BYHOUR', 'BYDAY', 'BYMONTHDAY',
  'BYYEARDAY', 'BYWEEKNO', 'BYMONTH', 'BYSETPOS', 'WKST',
]);
const FREQS = new Set(['YEARLY', 'MONTHLY', 'WEEKLY', 'DAILY', 'HOURLY', 'MINUTELY', 'SECONDLY']);
const WEEKDAY = '(?:SU|MO|TU|WE|TH|FR|SA)';
const intList = (min: number, max: number, signed: boolean) => (v: string) =>
  v.split(',').every((x) => {
    if (!/^[+-]?\d{1,3}$/.test(x)) return false;
    const n = Number(x);
    if (!signed && n < 0) return false;
    return Math.abs(n) >= min && Math.abs(n) <= max && (signed ? n !== 0 : true);
  });
const VALUE_CHECKS: Record<string, (v: string) => boolean> = {
  FREQ: (v) => FREQS.has(v),
  UNTIL: (v) => /^\d{8}(T\d{6}Z?)?$/.test(v),
  COUNT: (v) => /^\d{1,6}$/.test(v) && Number(v) >= 1,
  INTERVAL: (v) => /^\d{1,6}$/.test(v) && Number(v) >= 1,
  BYSECOND: intList(0, 60, false),
  BYMINUTE: intList(0, 59, false),
  BYHOUR: intList(0, 23, false),
  BYDAY: (v) => v.split(',').every((x) => new RegExp(`^(?:[+-]?\\d{1,2})?${WEEKDAY}$`).test(x)),
  BYMONTHDAY: intList(1, 31, true),
  BYYEARDAY: intList(1, 366, true),
  BYWEEKNO: intList(1, 53, true),
  BYMONTH: intList(1, 12, false),
  BYSETPOS: intList(1, 366, true),
  WKST: (v) => new RegExp(`^${WEEKDAY}$`).test(v),
};

function stripPrefix(rule: string): string {
  return rule.trim().replace(/^RRULE:/i, '');
}

/**
 * Checks an RRULE (with or without the `RRULE:` prefix). Returns an error message, or null when valid.
 * DTSTART/TZID are not allowed inside: the date's own `begin` is the start (D5).
 */
export function validateRecurrence(rule: string, begin?: Date): string | null {
  const body = stripPrefix(rule);
  if (body === '') return 'The recurrence rule is empty.';
  if (/[\r\n]/.test(body)) return 'The recurrence must be a single RRULE line (without DTSTART).';
  const seen = new Set<string>();
  for (const part of body.split(';')) {
    const eq = part.indexOf('=');
    const key = (eq < 0 ? part : part.slice(0, eq)).toUpperCase();
    const value = eq < 0 ? '' : part.slice(eq + 1).toUpperCase();
    if (!KNOWN_KEYS.has(key)) return `Unknown recurrence rule part "${key}".`;
    if (seen.has(key)) return `The recurrence rule names "${key}" twice.`;
    seen.add(key);
    if (!VALUE_CHECKS[key](value)) return `Invalid value "${value}" for ${key} in the recurrence rule.`;
  }
  if (!seen.has('FREQ')) return 'The recurrence rule needs FREQ, for example FREQ=WEEKLY;COUNT=4.';
  if (seen.has('COUNT') && seen.has('UNTIL')) return 'The recurrence rule may not have both COUNT and UNTIL (RFC 5545).';
  // rrule steps an hourly/minutely/secondly rule forward until the time matches BYHOUR/BYMINUTE/BYSECOND, with
  // no bound: a time the INTERVAL never reaches (FREQ=HOURLY;INTERVAL=24;BYHOUR=5 from 10:00) loops forever.
  const freq = /(?:^|;)FREQ=([A-Z]+)/i.exec(body)?.[1]?.toUpperCase();
  if (freq && ['HOURLY', 'MINUTELY', 'SECONDLY'].includes(freq) && ['BYHOUR', 'BYMINUTE', 'BYSECOND'].some((k) => seen.has(k))) {
    return `BYHOUR, BYMINUTE and BYSECOND cannot be combined with FREQ=${freq}: the date's begin gives the time of day.`;
  }
  try {
    RRule.parseString(body.toUpperCase());
  } catch (e) {
    return `Invalid recurrence rule: ${(e as Error).message}`;
  }
  // With the date's begin: the rule must expand within the work bound (a year ahead, as a read would).
  if (begin && !expand(body.toUpperCase(), begin, new Date(begin.getTime() + 366 * 86_400_000)).complete) {
    return 'The recurrence rule yields no further date within reach of its begin; check FREQ, INTERVAL and the BY… parts.';
  }
  return null;
}

class ExpansionTooCostly extends Error {}

/** The rule's options as rrule's iterator reads them, throwing once the work bound is used up. */
function withWorkBound<T extends object>(options: T): T {
  let reads = 0;
  return new Proxy(options, {
    get(target, key, receiver) {
      if (++reads > MAX_EXPANSION_WORK) throw new ExpansionTooCostly();
      return Reflect.get(target, key, receiver);
    },
  });
}

// "Floating" dates: Berlin wall-clock fields stored as if they were UTC, which is how rrule computes.
const toFloating = (instant: Date): Date => {
  const local = DateTime.fromJSDate(instant, { zone: ZONE });
  return new Date(Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second, local.millisecond));
};
const fromFloating = (floating: Date): Date =>
  DateTime.fromObject(
    {
      year: floating.getUTCFullYear(),
      month: floating.getUTCMonth() + 1,
      day: floating.getUTCDate(),
      hour: floating.getUTCHours(),
      minute: floating.getUTCMinutes(),
      second: floating.getUTCSeconds(),
      millisecond: floating.getUTCMilliseconds(),
    },
    { zone: ZONE },
  ).toJSDate(); // a wall-clock time skipped by the spring switch moves forward (luxon)

/** D10: an open RRULE runs to the end of the edition's last task, or, without tasks, one year from its date. */
const ONE_YEAR_MS = 366 * 86_400_000;

/**
 * Expands one offer date into occurrences (D5). Without `recurrence` it is the date itself. An RRULE
 * without COUNT or UNTIL runs up to `horizon`, the end of the edition's last task (D10; the database reads it
 * with `editionHorizonSql`, src/engines/edition-phases), or, when the edition has no task (null), one year;
 * at most MAX_OCCURRENCES are returned. Each occurrence keeps the wall-clock length of the first one
 * (a multi-day date stays multi-day). Throws on an invalid rule (validate writes first).
 */
export function expandOccurrences(input: { begin: Date; end: Date; recurrence?: string | null; horizon: Date | null }): Occurrence[] {
  const { begin, end, recurrence } = input;
  if (!recurrence || stripPrefix(recurrence) === '') return [{ begin, end }];
  const error = validateRecurrence(recurrence);
  if (error) throw new Error(error);

  const horizon = input.horizon ?? new Date(begin.getTime() + ONE_YEAR_MS);
  const { floating } = expand(stripPrefix(recurrence).toUpperCase(), begin, horizon);
  const lengthMs = toFloating(end).getTime() - toFloating(begin).getTime();
  return floating.map((d) => ({
    begin: fromFloating(d),
    end: fromFloating(new Date(d.getTime() + lengthMs)),
  }));
}

/**
 * The rule's occurrences as floating dates, at most MAX_OCCURRENCES, up to `horizon` unless the rule has
 * COUNT or UNTIL. `complete` is false when the work bound stopped the expansion early (what was found is
 * kept: a read shows those dates rather than failing).
 */
function expand(body: string, begin: Date, horizon: Date): { floating: Date[]; complete: boolean } {
  const options = RRule.parseString(body);
  const untilMatch = /(?:^|;)UNTIL=(\d{8})(T\d{6}(Z?))?/.exec(body);
  if (untilMatch && options.until) {
    if (!untilMatch[2]) {
      // Date-only UNTIL: the whole Berlin day is included.
      options.until = new Date(options.until.getTime() + 86_400_000 - 1);
    } else if (untilMatch[3] === 'Z') {
      options.until = toFloating(options.until); // a UTC instant -> Berlin wall clock
    } // else: already a floating (local) time
  }

  const startFloating = toFloating(begin);
  const bounded = options.count != null || options.until != null;
  const horizonFloating = toFloating(horizon).getTime();

  const rule = new RRule({ ...options, dtstart: startFloating });
  // rrule's iterator reads `this.options` (RRule.prototype._iter): bounded there, not only per occurrence.
  const bound = rule as unknown as { options: object };
  bound.options = withWorkBound(bound.options);
  const floating: Date[] = [];
  try {
    rule.all((date, i) => {
      if (i >= MAX_OCCURRENCES || (!bounded && date.getTime() > horizonFloating)) return false;
      floating.push(date);
      return true;
    });
  } catch (e) {
    if (e instanceof ExpansionTooCostly) return { floating, complete: false };
    throw e;
  }
  return { floating, complete: true };
}

/** Start of a Berlin day 'YYYY-MM-DD' as an instant, or null when unreadable. */
function dayStart(day: string, plusDays = 0): number | null {
  const dt = DateTime.fromISO(day, { zone: ZONE });
  return dt.isValid ? dt.startOf('day').plus({ days: plusDays }).toMillis() : null;
}

/**
 * Whether any occurrence touches the Berlin days `fromDay`..`untilDay` (both inclusive, either null =
 * open-ended; D5, D10). An occurrence ending exactly at midnight does not touch the next day.
 */
export function touchesDays(occurrences: readonly Occurrence[], fromDay: string | null, untilDay: string | null): boolean {
  const rangeStart = fromDay === null ? -Infinity : dayStart(fromDay);
  const rangeEnd = untilDay === null ? Infinity : dayStart(untilDay, 1);
  if (rangeStart === null || rangeEnd === null) throw new Error(`Unreadable day: ${fromDay} / ${untilDay}`);
  return occurrences.some(({ begin, end }) => {
    const b = begin.getTime();
    const e = Math.max(end.getTime(), b);
    return b < rangeEnd && (e > rangeStart || b >= rangeStart);
  });
}
