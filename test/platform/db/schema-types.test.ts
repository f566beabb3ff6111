import { describe, expect, inject, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generateSchemaTypes, OUT } from '../../../scripts/db-types.js';

// Issue 15: the database types are generated from the migrated schema (`npm run db:types`) and CI fails while
// the checked-in file is stale (`npm run db:types:check`), so a renamed column breaks the build.
const ROOT = path.resolve(import.meta.dirname, '../../..');
const server = (() => {
  const url = new URL(inject('directDatabaseUrl'));
  url.pathname = '/postgres';
  return url.toString();
})();

describe('database types (scripts/db-types.ts)', () => {
  it('the checked-in file is what the migrations make', async () => {
    const text = await generateSchemaTypes(server);
    expect(text, 'run npm run db:types').toBe(readFileSync(path.join(ROOT, OUT), 'utf8'));
    expect(text).toMatch(/^export interface TenantDB \{\n[^}]*\n  offers: Offers;/m);
    expect(text).toMatch(/^export interface ControlDB \{\n[^}]*\n  "control\.tenants": ControlTenants;/m);
  }, 60_000);

  it('the check fails on a stale file and names the difference', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'db-types-test-'));
    try {
      const stale = path.join(dir, 'schema.generated.ts');
      writeFileSync(stale, readFileSync(path.join(ROOT, OUT), 'utf8').replace('  secret_hash: Buffer;', '  secret_digest: Buffer;'));
      const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/db-types.ts', '--check', stale], {
        cwd: ROOT, encoding: 'utf8', env: { ...process.env, TEST_PG_URL: server },
      });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain('-  secret_digest: Buffer;');
      expect(run.stderr).toContain('+  secret_hash: Buffer;');
      expect(run.stderr).toContain('is stale');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
