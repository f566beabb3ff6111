import { sql, type CompiledQuery, type RawBuilder, type Kysely } from 'kysely';
import type { ControlDB, TenantDB } from './schema.generated.js';

// Tables are typed from the migrated schema (schema.generated.ts, `npm run db:types`; CI fails while it is
// stale), so a renamed column or table breaks the build. Tenant tables live in one schema per tenant and are named
// without it in the types: a typed query qualifies them with `inSchema(db, schema)` (kysely's `withSchema`,
// which also qualifies joined tables and subqueries). Raw SQL is not schema-aware (stack notes): a `sql`
// template names its tables through `tablesOf(schema)`, which quotes the tenant's schema and the table and
// accepts only tables that exist, and passes values as real bind parameters through kysely.
export { sql };
export type { CompiledQuery, RawBuilder, ControlDB, TenantDB };

const SCHEMA_RE = /^[a-z_][a-z0-9_]{0,62}$/;

export function assertSchemaName(schema: string): string {
  if (!SCHEMA_RE.test(schema)) throw new Error(`invalid schema name`);
  return schema;
}

/** A table of every tenant schema. */
export type TenantTable = keyof TenantDB & string;

/**
 * The pool's or a transaction's executor: runs `sql` templates, and typed queries on the control schema
 * (`control.tenants`). Tenant tables are reachable only through `inSchema`.
 */
export type Executor = Kysely<ControlDB>;

/** Typed queries on one tenant's tables (an executor with `withSchema(schema)`). */
export type TenantExecutor = Kysely<TenantDB>;

/** `db` (the pool or the current transaction) with every tenant table of its queries qualified by `schema`. */
export function inSchema(db: Executor, schema: string): TenantExecutor {
  return db.withSchema(assertSchemaName(schema)) as unknown as TenantExecutor;
}

/** The table names of one tenant schema for raw `sql` templates: `const t = tablesOf(schema); sql\`… from ${t('offers')}\``. */
export function tablesOf(schema: string): (table: TenantTable) => RawBuilder<unknown> {
  assertSchemaName(schema);
  return (table) => sql.table(`${schema}.${table}`);
}

/**
 * `any($1::uuid[])` (or text[]): the right side of `=` for a list of values in a typed query, one parameter
 * however long the list, as the raw statements write it: `.where('uuid', '=', anyOf(ids))`.
 */
export function anyOf<T extends string>(values: readonly T[], type: 'uuid' | 'text' = 'uuid'): RawBuilder<T> {
  return sql<T>`any(${values}::${sql.raw(type)}[])`;
}

/** One table of one schema for raw SQL; prefer `tablesOf`, which accepts only existing tenant tables. */
export function qualified(schema: string, table: string) {
  return sql.table(`${assertSchemaName(schema)}.${table}`);
}

/**
 * One `union all` statement per `chunk` items (tenant schemas, say): the rows of `part(item)` for every item, in
 * a handful of round trips however many municipalities there are, and statements small enough to plan.
 */
export async function unionAll<I, R>(db: Executor, items: readonly I[], part: (item: I) => RawBuilder<unknown>, chunk = 200): Promise<R[]> {
  const rows: R[] = [];
  for (let i = 0; i < items.length; i += chunk) {
    const parts = items.slice(i, i + chunk).map(part);
    rows.push(...(await sql<R>`${sql.join(parts, sql` union all `)}`.execute(db)).rows);
  }
  return rows;
}
