import { sql, type RawBuilder, type Kysely } from 'kysely';

// Raw SQL is not schema-aware (stack notes): every statement names its tables through `table()`, which
// quotes the tenant's schema and the table, and passes values as real bind parameters through kysely.
export { sql };
export type { RawBuilder };

const SCHEMA_RE = /^[a-z_][a-z0-9_]{0,62}$/;

export function assertSchemaName(schema: string): string {
  if (!SCHEMA_RE.test(schema)) throw new Error(`invalid schema name`);
  return schema;
}

export function qualified(schema: string, table: string) {
  return sql.table(`${assertSchemaName(schema)}.${table}`);
}

export type Executor = Kysely<any>;

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
