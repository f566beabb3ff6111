import { tenantMigrations } from '../../../migrations/index.js';
import { assertSchemaName, sql, tablesOf, unionAll, type Executor } from '../db/sql.js';
import { readConfig } from '../config.js';

// Issue 10 (a thousand municipalities): which tenant schemas are behind, found without touching each schema
// with the migrator. One catalog query lists the schemas that have a migrations table; then one statement per
// 200 schemas (a `union all` over `<schema>.mikro_orm_migrations`, schema-qualified, names validated)
// returns the names applied in each. A schema is up to date when every expected migration is applied.

export async function appliedMigrations(db: Executor, schemas: string[]): Promise<Map<string, string[]>> {
  const applied = new Map<string, string[]>();
  for (const s of schemas) assertSchemaName(s);
  if (schemas.length === 0) return applied;
  const withTable = await sql<{ schema: string }>`
    select n.nspname as schema from pg_catalog.pg_namespace n join pg_catalog.pg_class c on c.relnamespace = n.oid
    where c.relname = 'mikro_orm_migrations' and c.relkind in ('r', 'p') and n.nspname = any(${schemas}::text[])`.execute(db);
  const present = withTable.rows.map((r) => r.schema);
  for (const s of present) applied.set(s, []);
  const rows = await unionAll<string, { schema: string; name: string }>(db, present,
    (s) => sql`select ${s}::text as schema, name from ${tablesOf(s)('mikro_orm_migrations')}`);
  for (const r of rows) applied.get(r.schema)!.push(r.name);
  return applied;
}

/** The schemas (of those given) that miss a migration of `expected` or have no migrations table at all. */
export async function schemasBehind(db: Executor, schemas: string[], expected: readonly { name: string }[] = tenantMigrations): Promise<Set<string>> {
  const applied = await appliedMigrations(db, schemas);
  const behind = new Set<string>();
  for (const s of schemas) {
    const names = applied.get(s);
    // MikroORM stores names with or without an extension depending on the version; compare without one.
    const have = new Set((names ?? []).map((n) => n.replace(/\.[jt]s$/, '')));
    if (!names || expected.some((m) => !have.has(m.name))) behind.add(s);
  }
  return behind;
}

/**
 * Schemas migrated at once. Default 8: creating a schema is PostgreSQL DDL that also waits (catalog writes,
 * relation files), so more than one per core pays: 200 new schemas took 13.2 s at 4 and 10.4 s at 8 on 2 cores
 * (docs/benchmarks.md). At most 16; beyond the pool's 10 connections per process the rest only queue.
 */
export function migrateConcurrency(env?: NodeJS.ProcessEnv): number {
  return readConfig(env).migrateConcurrency;
}
