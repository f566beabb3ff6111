import { Migrator } from '@mikro-orm/migrations';
import { describe, expect, it } from 'vitest';
import { useHarness } from '../../harness/harness.js';
import { tenantMigrations } from '../../../migrations/index.js';
import { executorOf, migrateTenantSchema } from '../../../src/platform/db/orm.js';
import { sql } from '../../../src/platform/db/sql.js';

// Issue 10: a new tenant schema is made by one script (src/platform/db/orm.ts `newSchemaScript`) instead of the
// migrator's statement-by-statement run. It must give the very schema the migrator gives, bookkeeping included,
// and a schema at an older version must still be brought up to date by the migrator.

const { h } = useHarness({ tenant: false });

const name = (prefix: string) => `t_${prefix}_${Math.random().toString(36).slice(2, 8)}`;

/** Everything of a schema's catalog that a migration makes, with the schema's own name taken out. */
async function catalog(schema: string): Promise<Record<string, string[]>> {
  const db = executorOf(h.orm);
  // Names of the schema itself (qualified names; a function's `set search_path from current`) left out.
  const strip = (rows: { x: string }[]) =>
    rows.map((r) => r.x.split(`"${schema}".`).join('').split(`${schema}.`).join('').split(`'${schema}'`).join("'<schema>'")).sort();
  const columns = await sql<{ x: string }>`
    select concat_ws(' ', c.table_name, c.column_name, c.data_type, c.character_maximum_length, c.datetime_precision, c.is_nullable,
      c.column_default, c.is_identity, c.identity_generation, c.ordinal_position) as x
    from information_schema.columns c where c.table_schema = ${schema}`.execute(db);
  const indexes = await sql<{ x: string }>`select indexdef as x from pg_indexes where schemaname = ${schema}`.execute(db);
  const constraints = await sql<{ x: string }>`
    select concat_ws(' ', r.relname, c.conname, pg_get_constraintdef(c.oid)) as x
    from pg_constraint c join pg_class r on r.oid = c.conrelid join pg_namespace n on n.oid = r.relnamespace
    where n.nspname = ${schema}`.execute(db);
  const relations = await sql<{ x: string }>`
    select concat_ws(' ', c.relname, c.relkind, c.relpersistence) as x from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema}`.execute(db);
  const functions = await sql<{ x: string }>`
    select pg_get_functiondef(p.oid) as x from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = ${schema}`.execute(db);
  const triggers = await sql<{ x: string }>`
    select pg_get_triggerdef(t.oid) as x from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and not t.tgisinternal`.execute(db);
  const bookkeeping = await sql<{ x: string }>`select id || ' ' || name as x from ${sql.table(`${schema}.mikro_orm_migrations`)}`.execute(db);
  return {
    columns: strip(columns.rows), indexes: strip(indexes.rows), constraints: strip(constraints.rows), relations: strip(relations.rows),
    functions: strip(functions.rows), triggers: strip(triggers.rows), bookkeeping: bookkeeping.rows.map((r) => r.x),
  };
}

async function drop(...schemas: string[]) {
  for (const s of schemas) await sql`drop schema if exists ${sql.id(s)} cascade`.execute(executorOf(h.orm));
}

describe('a new tenant schema by one script', () => {
  it('is the schema the migrator makes, with the same bookkeeping, and a second migrate finds nothing to do', async () => {
    const byScript = name('script');
    const byMigrator = name('migrator');
    try {
      expect(await migrateTenantSchema(h.orm, byScript)).toEqual(tenantMigrations.map((m) => m.name));
      expect(await migrateTenantSchema(h.orm, byMigrator, { script: false })).toEqual(tenantMigrations.map((m) => m.name));
      const [a, b] = [await catalog(byScript), await catalog(byMigrator)];
      expect(a.columns.length).toBeGreaterThan(100);
      expect(a.indexes.length).toBeGreaterThan(30);
      expect(a.bookkeeping).toEqual(tenantMigrations.map((m, i) => `${i + 1} ${m.name}`));
      expect(a).toEqual(b);
      // Up to date now: the migrator applies nothing to either.
      expect(await migrateTenantSchema(h.orm, byScript)).toEqual([]);
      expect(await migrateTenantSchema(h.orm, byMigrator)).toEqual([]);
      // The search path set for the script did not outlive its transaction.
      const path = await sql<{ p: string }>`select current_setting('search_path') as p`.execute(executorOf(h.orm));
      expect(path.rows[0]!.p).not.toContain(byScript);
    } finally {
      await drop(byScript, byMigrator);
    }
  });

  it('a schema at an older version is brought up to date by the migrator (not the script), the same as a new one', async () => {
    const old = name('old');
    const fresh = name('fresh');
    try {
      // The first four migrations only, as an older release of the service left it.
      await h.orm.em.getConnection().transactional(async (trx) => {
        await h.orm.em.getConnection().execute(`create schema "${old}"`, [], 'run', trx);
        await new Migrator(h.orm.em).up({ schema: old, transaction: trx, to: tenantMigrations[3]!.name });
      });
      expect(await migrateTenantSchema(h.orm, old)).toEqual(tenantMigrations.slice(4).map((m) => m.name));
      await migrateTenantSchema(h.orm, fresh);
      expect(await catalog(old)).toEqual(await catalog(fresh));
    } finally {
      await drop(old, fresh);
    }
  });

  it('a script that fails leaves no schema half made (one transaction)', async () => {
    const broken = name('broken');
    try {
      // A table of the chain already there: the script fails on it and nothing of the schema is kept.
      await sql`create schema ${sql.id(broken)}`.execute(executorOf(h.orm));
      await sql`create table ${sql.table(`${broken}.offers`)} (x int)`.execute(executorOf(h.orm));
      await expect(migrateTenantSchema(h.orm, broken)).rejects.toThrow();
      const tables = await sql<{ n: number }>`select count(*)::int as n from pg_tables where schemaname = ${broken}`.execute(executorOf(h.orm));
      expect(tables.rows[0]!.n).toBe(1);
    } finally {
      await drop(broken);
    }
  });
});
