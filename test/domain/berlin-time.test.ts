import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { berlinDayOfInstant, berlinTimestampText, instantOfText } from '../../src/domain/berlin-time.js';

// Issue 25: Berlin time without a luxon DateTime per value, held to luxon's own answers.
const ZONE = 'Europe/Berlin';
let seed = 20261127;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const END = Date.UTC(2100, 0, 1);

/** Random instants 1970-2100 (milliseconds included) and one second around every transition 1970-2100. */
function instants(): number[] {
  const out: number[] = [];
  for (let i = 0; i < 20_000; i++) out.push(Math.floor(random() * END));
  const offsetAt = (ms: number) => DateTime.fromMillis(ms, { zone: ZONE }).offset;
  for (let day = 0; (day + 1) * 86_400_000 < END; day++) {
    const from = day * 86_400_000;
    if (offsetAt(from) === offsetAt(from + 86_400_000)) continue;
    for (let ms = from + 3_600_000; ms <= from + 86_400_000; ms += 3_600_000) {
      if (offsetAt(ms) !== offsetAt(ms - 1000)) out.push(ms - 1001, ms - 1000, ms - 1, ms, ms + 999, ms + 1000);
    }
  }
  return out;
}
const ALL = instants();

describe('berlinTimestampText', () => {
  it("is luxon's text (whole seconds, offset) for any instant, also around every daylight-saving transition", () => {
    expect(ALL.length).toBeGreaterThan(21_000);
    for (const ms of ALL) {
      expect(berlinTimestampText(ms)).toBe(DateTime.fromMillis(ms, { zone: ZONE }).startOf('second').toISO({ suppressMilliseconds: true }));
    }
  });

  it('leaves instants before 1970 and after 9998 to luxon', () => {
    expect(berlinTimestampText(-1)).toBeUndefined();
    expect(berlinTimestampText(Date.UTC(9999, 5, 1))).toBeUndefined();
    expect(berlinTimestampText(Number.NaN)).toBeUndefined();
  });
});

describe('berlinDayOfInstant', () => {
  it("is luxon's Berlin day for any instant", () => {
    for (const ms of ALL) expect(berlinDayOfInstant(ms)).toBe(DateTime.fromMillis(ms, { zone: ZONE }).toISODate());
  });

  it('turns at Berlin midnight, not UTC midnight', () => {
    expect(berlinDayOfInstant(Date.parse('2027-07-01T21:59:59Z'))).toBe('2027-07-01');
    expect(berlinDayOfInstant(Date.parse('2027-07-01T22:00:00Z'))).toBe('2027-07-02');
    expect(berlinDayOfInstant(Date.parse('2027-01-15T22:59:59Z'))).toBe('2027-01-15');
    expect(berlinDayOfInstant(Date.parse('2027-01-15T23:00:00Z'))).toBe('2027-01-16');
  });
});

describe('instantOfText', () => {
  it("reads PostgreSQL's text form and ISO 8601 with any offset as luxon does", () => {
    const offsets = ['+00', '+02', '-05', '+05:30', '+0530', '-03:30', 'Z', '+00:00'];
    for (const ms of ALL.slice(0, 5_000)) {
      const iso = new Date(ms).toISOString();
      for (const offset of offsets) {
        const shift = offset === 'Z' ? 0 : (offset[0] === '-' ? -1 : 1) * (Number(offset.slice(1, 3)) * 60 + Number(offset.replace(':', '').slice(3, 5) || 0));
        const local = new Date(ms + shift * 60_000).toISOString().slice(0, 23);
        for (const text of [`${local}${offset}`, `${local.replace('T', ' ')}${offset}`, `${local.slice(0, 19)}${offset}`, `${local.slice(0, 16)}${offset}`, `${local}4567${offset}`]) {
          const luxon = DateTime.fromISO(text.replace(' ', 'T'), { setZone: true });
          expect(luxon.isValid, text).toBe(true);
          expect(instantOfText(text), `${text} (${iso})`).toBe(luxon.toMillis());
        }
      }
    }
  });

  it('answers undefined where luxon must decide: no offset, impossible dates and times, years before 1970', () => {
    for (const text of ['2027-07-01', '2027-07-01 10:00:00', '2027-02-30 10:00:00+00', '2027-13-01T10:00:00Z', '2027-07-01T24:00:00Z',
      '2027-07-01T10:60:00Z', '2027-07-01T10:00:60Z', '2027-07-01T10:00:00+02:75', '0075-07-01T10:00:00Z', '1969-12-31T23:59:59Z', 'soon']) {
      expect(instantOfText(text), text).toBeUndefined();
    }
  });
});
