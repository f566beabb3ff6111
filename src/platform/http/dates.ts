import { DateTime } from 'luxon';
import { sql, type RawBuilder } from '../db/sql.js';

// Spec 1.7 and D10: responses always use Europe/Berlin with its offset; a sent timestamp must carry an
// offset (`Z` counts); date-only values are `YYYY-MM-DD`; date filters take a date or a timestamp.
export const ZONE = 'Europe/Berlin';

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
const TIMESTAMP_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** `2027-07-01T10:00:00+02:00`; accepts Dates and PostgreSQL's text form (`2027-07-01 08:00:00.12+00`). */
export function formatTimestamp(value: Date | string | null | undefined): string | undefined {
  if (value == null) return undefined;
  if (typeof value !== 'string') {
    const fast = formatInstant(value.getTime());
    if (fast !== undefined) return fast;
  }
  const dt =
    typeof value === 'string'
      ? DateTime.fromISO(value.replace(' ', 'T'), { zone: ZONE })
      : DateTime.fromJSDate(value, { zone: ZONE });
  return dt.isValid ? dt.startOf('second').toISO({ suppressMilliseconds: true })! : undefined;
}

// Issue 25: luxon took ~150 µs a value, 0.23 ms of every application's answer (the API's CPU profile during the
// rush). Berlin's offset changes only on whole UTC hours (every transition since 1970), so it is looked up with
// luxon once per UTC hour and the text built from the shifted instant; test/platform/http/dates.test.ts holds it
// to luxon's text over random instants and every transition. Outside 1970-9999 luxon formats as before.
const HOUR_MS = 3_600_000;
const LAST_FAST_MS = Date.UTC(9999, 0, 1);
const offsetsByHour = new Map<number, number>();

function berlinOffsetMinutes(ms: number): number {
  const hour = Math.floor(ms / HOUR_MS);
  let offset = offsetsByHour.get(hour);
  if (offset === undefined) {
    offset = DateTime.fromMillis(hour * HOUR_MS, { zone: ZONE }).offset;
    if (offsetsByHour.size >= 100_000) offsetsByHour.clear();
    offsetsByHour.set(hour, offset);
  }
  return offset;
}

const two = (n: number) => String(n).padStart(2, '0');

function formatInstant(ms: number): string | undefined {
  if (!Number.isFinite(ms) || ms < 0 || ms >= LAST_FAST_MS) return undefined;
  const offset = berlinOffsetMinutes(ms);
  if (!Number.isInteger(offset) || offset < 0) return undefined;
  const local = new Date(Math.floor(ms / 1000) * 1000 + offset * 60_000).toISOString();
  return `${local.slice(0, 19)}+${two(Math.floor(offset / 60))}:${two(offset % 60)}`;
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
