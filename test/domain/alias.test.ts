import { describe, it, expect } from 'vitest';
import { ALIAS_MAX_LENGTH, isValidAlias, slugify, uniqueAlias, uniqueAliasAsync } from '../../src/domain/alias.js';

describe('slugify (D10)', () => {
  it.each([
    ['Sommerferien 2027', 'sommerferien-2027'],
    ['Töpfern für Kinder', 'toepfern-fuer-kinder'],
    ['ÄÖÜ äöü ß Straße', 'aeoeue-aeoeue-ss-strasse'],
    ['Café Crème à la carte', 'cafe-creme-a-la-carte'],
    ['Kochen & Backen', 'kochen-und-backen'],
    ['  --Hello,   World!!  ', 'hello-world'],
    ['Øresund Łódź Ærø', 'oresund-lodz-aero'],
    ['ﬁne ½', 'fine-1-2'],
    ['', 'x'],
    ['!!!', 'x'],
    ['日本語', 'x'],
  ])('%j -> %j', (name, slug) => {
    expect(slugify(name)).toBe(slug);
    expect(isValidAlias(slugify(name))).toBe(true);
  });

  it('cuts at 80 characters without a trailing hyphen', () => {
    const slug = slugify(`${'a'.repeat(79)} b`);
    expect(slug).toBe('a'.repeat(79));
    expect(slugify('b'.repeat(200))).toHaveLength(ALIAS_MAX_LENGTH);
  });
});

describe('isValidAlias', () => {
  it.each([
    ['abc', true],
    ['a-b-2', true],
    ['2027', true],
    ['a'.repeat(80), true],
    ['a'.repeat(81), false],
    ['', false],
    ['-abc', false],
    ['abc-', false],
    ['a--b', false],
    ['Abc', false],
    ['a_b', false],
    ['ä', false],
  ])('%j -> %s', (value, valid) => {
    expect(isValidAlias(value)).toBe(valid);
  });
});

describe('uniqueAlias', () => {
  it.each([
    [[], 'ferien'],
    [['ferien'], 'ferien-2'],
    [['ferien', 'ferien-2', 'ferien-3'], 'ferien-4'],
    [['ferien-2'], 'ferien'],
  ])('taken %j -> %s', (taken, expected) => {
    expect(uniqueAlias('ferien', (c) => taken.includes(c))).toBe(expected);
  });

  it('stays within 80 characters with a suffix', () => {
    const base = 'a'.repeat(80);
    const alias = uniqueAlias(base, (c) => c === base);
    expect(alias).toBe(`${'a'.repeat(78)}-2`);
    expect(isValidAlias(alias)).toBe(true);
  });

  it('has an async variant', async () => {
    await expect(uniqueAliasAsync('x', async (c) => c === 'x')).resolves.toBe('x-2');
  });
});
