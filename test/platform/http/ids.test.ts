import { randomUUID } from 'node:crypto';
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { base58ToUuid, isUuid, newUuid, parseId, uuidToBase58 } from '../../../src/platform/http/ids.js';

// Spec 1.4: UUID (RFC 4122) and its 22-character base58 form name the same record.
describe('uuidToBase58 / base58ToUuid', () => {
  it('round-trips 20,000 random UUIDs, including ones whose plain bs58 is shorter than 22 characters', () => {
    let short = 0;
    const failures: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const uuid = randomUUID();
      const plain = bs58.encode(Buffer.from(uuid.replace(/-/g, ''), 'hex'));
      if (plain.length < 22) short++;
      const b58 = uuidToBase58(uuid);
      if (!/^[1-9A-HJ-NP-Za-km-z]{22}$/.test(b58) || base58ToUuid(b58) !== uuid || parseId(b58) !== uuid) {
        failures.push(`${uuid} -> ${b58} -> ${base58ToUuid(b58)}`);
      }
    }
    expect(failures).toEqual([]);
    // About 3 % of UUIDs encode shorter; the padding must have been exercised.
    expect(short).toBeGreaterThan(100);
  });

  it('round-trips UUIDs with leading zero bytes and small values', () => {
    for (const uuid of [
      '00000000-0000-0000-0000-000000000001',
      '00000000-0000-4000-8000-000000000000',
      '00ffffff-ffff-4fff-bfff-ffffffffffff',
      '0000ffff-0000-4000-8000-00000000ffff',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
    ]) {
      const b58 = uuidToBase58(uuid);
      expect(b58).toHaveLength(22);
      expect(base58ToUuid(b58)).toBe(uuid);
    }
  });

  it('maps the all-zero UUID to 22 ones and back', () => {
    const zero = '00000000-0000-0000-0000-000000000000';
    expect(uuidToBase58(zero)).toBe('1'.repeat(22));
    expect(base58ToUuid('1'.repeat(22))).toBe(zero);
  });

  it('refuses base58 of the wrong length, invalid characters and the excluded 0 O I l', () => {
    const good = uuidToBase58(randomUUID());
    expect(base58ToUuid(good.slice(1))).toBeNull();
    expect(base58ToUuid(good + '2')).toBeNull();
    expect(base58ToUuid('')).toBeNull();
    for (const bad of ['0', 'O', 'I', 'l', '-', '_', ' ', 'ä']) {
      expect(base58ToUuid(bad + good.slice(1))).toBeNull();
      expect(parseId(good.slice(0, 10) + bad + good.slice(11))).toBeNull();
    }
  });

  it('refuses a 22-character base58 value above 128 bits', () => {
    expect(base58ToUuid('z'.repeat(22))).toBeNull();
  });
});

describe('parseId', () => {
  it('normalises an upper-case UUID to lower case', () => {
    const uuid = randomUUID();
    expect(parseId(uuid.toUpperCase())).toBe(uuid);
    expect(isUuid(uuid.toUpperCase())).toBe(true);
  });

  it('refuses anything that is neither form', () => {
    const uuid = randomUUID();
    for (const v of [
      '',
      'sport',
      uuid.replace(/-/g, ''),
      uuid.slice(0, -1),
      `${uuid}0`,
      `{${uuid}}`,
      uuid.replace(/^./, 'g'),
      ` ${uuid}`,
    ]) {
      expect(parseId(v), v).toBeNull();
    }
  });

  it('newUuid gives RFC 4122 lower-case UUIDs', () => {
    const u = newUuid();
    expect(u).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
