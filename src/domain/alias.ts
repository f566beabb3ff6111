// Aliases of editions, organisers, categories and offers (spec 1.5, D10 "Aliases").

export const ALIAS_MAX_LENGTH = 80;
const ALIAS_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

// German transliteration first (D10: ä→ae, ö→oe, ü→ue, ß→ss), then letters NFKD does not decompose.
const REPLACEMENTS: Record<string, string> = {
  ä: 'ae', ö: 'oe', ü: 'ue', Ä: 'ae', Ö: 'oe', Ü: 'ue', ß: 'ss', ẞ: 'ss',
  æ: 'ae', Æ: 'ae', œ: 'oe', Œ: 'oe', ø: 'o', Ø: 'o', ł: 'l', Ł: 'l', đ: 'd', Đ: 'd', ð: 'd', Ð: 'd',
  þ: 'th', Þ: 'th', ı: 'i', '&': ' und ',
};

function trimTo(slug: string, max: number): string {
  return slug.slice(0, max).replace(/-+$/, '');
}

/** Lower-case ASCII slug of a name, at most 80 characters, never empty ('x' as a last resort). */
export function slugify(name: string): string {
  const slug = name
    .replace(/[äöüÄÖÜßẞæÆœŒøØłŁđĐðÐþÞı&]/g, (c) => REPLACEMENTS[c])
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '') // strip accents
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return trimTo(slug, ALIAS_MAX_LENGTH) || 'x';
}

export function isValidAlias(value: string): boolean {
  return value.length <= ALIAS_MAX_LENGTH && ALIAS_PATTERN.test(value);
}

function candidate(base: string, n: number): string {
  if (n === 1) return trimTo(base, ALIAS_MAX_LENGTH);
  const suffix = `-${n}`;
  return `${trimTo(base, ALIAS_MAX_LENGTH - suffix.length)}${suffix}`;
}

/**
 * What every candidate of `base` starts with: a candidate cuts `base` to make room for its suffix, so a long
 * base's `-2` does not start with the whole base (issue 22: a look-up by `base-%` missed the taken ones).
 */
export function aliasCandidatePrefix(base: string): string {
  return base.slice(0, ALIAS_MAX_LENGTH - 20);
}

/** `base`, or `base-2`, `base-3`, ... : the first that is not taken (D10), kept within 80 characters. */
export function uniqueAlias(base: string, taken: (candidate: string) => boolean): string {
  for (let n = 1; ; n++) {
    const c = candidate(base, n);
    if (!taken(c)) return c;
  }
}

/** The same for an asynchronous check (e.g. a database query). */
export async function uniqueAliasAsync(base: string, taken: (candidate: string) => Promise<boolean>): Promise<string> {
  for (let n = 1; ; n++) {
    const c = candidate(base, n);
    if (!(await taken(c))) return c;
  }
}
