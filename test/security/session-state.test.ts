import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

// Through PgBouncer in transaction pooling mode no session state survives between transactions
// (docs/operations.md): src/ takes no session advisory lock, sets no search_path outside SET LOCAL, uses no
// LISTEN/NOTIFY (pg-boss polls) and no named prepared statements. A run-time check over every statement of a
// workload is in citus-eligibility.test.ts; this one reads the source.
const ROOT = path.resolve(import.meta.dirname, '../../src');
const files = (dir: string): string[] => readdirSync(dir).flatMap((n) => {
  const p = path.join(dir, n);
  return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
});
const RULES: [RegExp, string][] = [
  [/pg_(try_)?advisory_lock(_shared)?\s*\(/i, 'a session advisory lock (use pg_advisory_xact_lock in a transaction)'],
  [/\bLISTEN\s+["\w]/, 'LISTEN (a session; poll instead)'],
  [/useListenNotify\s*:\s*true/, 'pg-boss LISTEN/NOTIFY'],
  [/\bset\s+(session\s+)?search_path\b/i, 'SET search_path outside SET LOCAL'],
  [/\bname\s*:\s*['"`][^'"`]+['"`]\s*,\s*text\s*:/, 'a named prepared statement'],
];

describe('no session state in src/', () => {
  it('takes no session lock, sets no session search_path, uses no LISTEN and no named prepared statement', () => {
    const offenders: string[] = [];
    for (const file of files(ROOT)) {
      const lines = readFileSync(file, 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (/^\s*(\/\/|\*)/.test(line)) return;
        for (const [re, what] of RULES) if (re.test(line)) offenders.push(`${path.relative(ROOT, file)}:${i + 1}: ${what}`);
      });
    }
    expect(offenders).toEqual([]);
  });
});
