import { describe, expect, inject, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import { generateSchemaTypes, OUT } from '../../../scripts/db-types.js';
import { anyOf, inSchema, sql, tablesOf, type ControlDB } from '../../../src/platform/db/sql.js';

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

describe('typed tenant queries (src/platform/db/sql.ts)', () => {
  const db = new Kysely<ControlDB>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (k) => new PostgresIntrospector(k),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });

  it('inSchema qualifies every table, joined and in subqueries, and leaves aliases alone', () => {
    const q = inSchema(db, 't_demo').selectFrom('offers as o').innerJoin('editions', 'editions.uuid', 'o.edition_uuid')
      .select(['o.uuid', 'editions.name'])
      .where('o.uuid', 'in', (eb) => eb.selectFrom('attendances').select('offer_uuid').where('participant_uuid', '=', anyOf(['x'])))
      .compile();
    expect(q.sql).toBe('select "o"."uuid", "t_demo"."editions"."name" from "t_demo"."offers" as "o" '
      + 'inner join "t_demo"."editions" on "t_demo"."editions"."uuid" = "o"."edition_uuid" '
      + 'where "o"."uuid" in (select "offer_uuid" from "t_demo"."attendances" where "participant_uuid" = any($1::uuid[]))');
    expect(q.parameters).toEqual([['x']]);
  });

  it('tablesOf names only existing tables of a valid schema', () => {
    const t = tablesOf('t_demo');
    expect(sql`select 1 from ${t('outbox')}`.compile(db).sql).toBe('select 1 from "t_demo"."outbox"');
    // @ts-expect-error: no such table, a build error
    t('outboxes');
    expect(() => tablesOf('t_demo"; drop')).toThrow('invalid schema name');
  });
});
