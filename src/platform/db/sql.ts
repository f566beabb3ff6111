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
