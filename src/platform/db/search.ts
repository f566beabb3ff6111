import { sql } from './sql.js';

// Spec 1.9: free-text `q` matches any part of the named fields, ignoring case. LIKE wildcards in the
// input are escaped, so `%` and `_` match themselves.
export function likePattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** German collation for name sorting (D10). */
export const GERMAN = sql.raw('collate "de-DE-x-icu"');
