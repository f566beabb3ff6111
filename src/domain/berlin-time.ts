import { DateTime } from 'luxon';

// Berlin wall-clock time of an instant without a luxon DateTime per value (issue 25: luxon took ~150 µs a value;
// in the create answer's timestamps and the child's age it was 5 % of the API's CPU in the opening morning).
// Berlin's offset changes only on whole UTC hours (every transition since 1970), so it is looked up with luxon
// once per UTC hour and kept; the text is built from the shifted instant. test/domain/berlin-time.test.ts holds
// every function here to luxon's answer over random instants and every transition 1970-2100. Outside 1970-9999
// (and for a text these functions do not read) they answer undefined and the caller asks luxon.

export const BERLIN = 'Europe/Berlin';

const HOUR_MS = 3_600_000;
const LAST_FAST_MS = Date.UTC(9999, 0, 1);
const offsetsByHour = new Map<number, number>();

/** Berlin's offset from UTC in minutes at the instant `ms` (1970-9999), luxon's answer, once per UTC hour. */
function offsetMinutes(ms: number): number | undefined {
  if (!Number.isFinite(ms) || ms < 0 || ms >= LAST_FAST_MS) return undefined;
  const hour = Math.floor(ms / HOUR_MS);
  let offset = offsetsByHour.get(hour);
  if (offset === undefined) {
    offset = DateTime.fromMillis(hour * HOUR_MS, { zone: BERLIN }).offset;
    if (offsetsByHour.size >= 100_000) offsetsByHour.clear();
    offsetsByHour.set(hour, offset);
  }
  // East of Greenwich, whole minutes: anything else is left to luxon.
  return Number.isInteger(offset) && offset >= 0 ? offset : undefined;
}

const two = (n: number) => String(n).padStart(2, '0');

/** `2027-07-01T10:00:00+02:00`: the Berlin time of `ms`, whole seconds, with its offset. */
export function berlinTimestampText(ms: number): string | undefined {
  const offset = offsetMinutes(ms);
  if (offset === undefined) return undefined;
  const local = new Date(Math.floor(ms / 1000) * 1000 + offset * 60_000).toISOString();
  return `${local.slice(0, 19)}+${two(Math.floor(offset / 60))}:${two(offset % 60)}`;
}

/** The Berlin calendar day (`YYYY-MM-DD`) of the instant `ms`. */
export function berlinDayOfInstant(ms: number): string | undefined {
  const offset = offsetMinutes(ms);
  if (offset === undefined) return undefined;
  return new Date(ms + offset * 60_000).toISOString().slice(0, 10);
}

// PostgreSQL's text form (`2027-07-01 08:00:00.12+00`, `+05:30`) and ISO 8601 with an offset or `Z`.
const INSTANT_TEXT = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:(Z)|([+-])(\d{2})(?::?(\d{2}))?)$/i;

/** The instant a timestamp text with an offset names, in ms; undefined for anything else (luxon decides). */
export function instantOfText(text: string): number | undefined {
  const m = INSTANT_TEXT.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [number, number, number, number, number];
  const second = m[6] === undefined ? 0 : Number(m[6]);
  const millis = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  if (year < 1970 || month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return undefined;
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  // 2027-02-30 rolls over in Date.UTC; luxon calls it invalid.
  if (new Date(utc).getUTCDate() !== day) return undefined;
  if (m[8]) return utc;
  const offsetHours = Number(m[10]);
  const offsetMins = m[11] === undefined ? 0 : Number(m[11]);
  if (offsetMins > 59) return undefined;
  const sign = m[9] === '-' ? -1 : 1;
  return utc - sign * (offsetHours * 60 + offsetMins) * 60_000;
}
