import { DateTime } from 'luxon';
import { sql, type RawBuilder } from '../db/sql.js';
import { BERLIN, berlinTimestampText, instantOfText } from '../../domain/berlin-time.js';

// Spec 1.7 and D10: responses always use Europe/Berlin with its offset; a sent timestamp must carry an
// offset (`Z` counts); date-only values are `YYYY-MM-DD`; date filters take a date or a timestamp.
export const ZONE = BERLIN;

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
const TIMESTAMP_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** `2027-07-01T10:00:00+02:00`; accepts Dates and PostgreSQL's text form (`2027-07-01 08:00:00.12+00`). */
export function formatTimestamp(value: Date | string | null | undefined): string | undefined {
  if (value == null) return undefined;
  // Issue 25: without a luxon DateTime where the value is an instant of 1970-9999 (domain/berlin-time.ts).
  const ms = typeof value === 'string' ? instantOfText(value) : value.getTime();
  const fast = ms === undefined ? undefined : berlinTimestampText(ms);
  if (fast !== undefined) return fast;
  const dt =
    typeof value === 'string'
      ? DateTime.fromISO(value.replace(' ', 'T'), { zone: ZONE })
      : DateTime.fromJSDate(value, { zone: ZONE });
  return dt.isValid ? dt.startOf('second').toISO({ suppressMilliseconds: true })! : undefined;
}

/**
 * formatTimestamp's text made by PostgreSQL, for projections that return many timestamps (the offer list):
 * Berlin wall-clock time, whole seconds, the offset of that instant, e.g. `2027-07-05T09:00:00+02:00`.
 * Formatting with luxon in Node cost ~150 µs per value, over half the CPU of a 200-offer page
 * (bench/README.md); test/resources/offers/offers-timestamps.test.ts holds both to the same text.
 */
export function apiTimestampSql(column: string): RawBuilder<string> {
  const col = sql.ref(column);
  const local = sql`(${col} at time zone ${sql.lit(ZONE)})`;
  const utc = sql`(${col} at time zone 'UTC')`;
  // Berlin is east of Greenwich: its offset is never negative, so the sign is always '+'. The shorter expression
  // matters: the page names five timestamps per offer, and parsing and planning them was ~1 ms of every
  // statement PostgreSQL has not planned before (issue 10.4, bench/README.md).
  return sql<string>`(to_char(${local}, 'YYYY-MM-DD"T"HH24:MI:SS') || to_char(${local} - ${utc}, '"+"HH24:MI'))`;
}

/** Date-only values; `pg` may hand them back as strings or as local-midnight Dates. */
export function formatDate(value: Date | string | null | undefined): string | undefined {
  if (value == null) return undefined;
  if (typeof value === 'string') return value.slice(0, 10);
  const y = value.getFullYear();
  const m = String(value.getMonth() + 1).padStart(2, '0');
  const d = String(value.getDate()).padStart(2, '0');
  return `${y}-${m}-${d}`;
}

/** A full timestamp with an offset; null when unreadable or missing its offset. */
export function parseTimestamp(value: string): Date | null {
  if (!TIMESTAMP_RE.test(value)) return null;
  const dt = DateTime.fromISO(value, { setZone: true });
  return dt.isValid ? dt.toJSDate() : null;
}

/** A calendar date `YYYY-MM-DD`; null when unreadable (2027-13-40) . */
export function parseDate(value: string): string | null {
  if (!DATE_RE.test(value)) return null;
  const dt = DateTime.fromISO(value, { zone: ZONE });
  return dt.isValid ? value : null;
}

/**
 * A date filter (`from`, `until`, `modifiedSince`): a date or a full timestamp. A date means the start of
 * that day in Berlin; `day` is the Berlin calendar day the value falls on (D10: a timestamp is read as its day).
 */
export function parseDateFilter(value: string): { instant: Date; day: string } | null {
  const day = parseDate(value);
  if (day) return { instant: DateTime.fromISO(day, { zone: ZONE }).toJSDate(), day };
  const ts = parseTimestamp(value);
  if (!ts) return null;
  return { instant: ts, day: DateTime.fromJSDate(ts, { zone: ZONE }).toISODate()! };
}

/** The instant a Berlin calendar day starts, and the instant the following day starts. */
export function berlinDayBounds(day: string): { start: Date; end: Date } {
  const start = DateTime.fromISO(day, { zone: ZONE });
  return { start: start.toJSDate(), end: start.plus({ days: 1 }).toJSDate() };
}
