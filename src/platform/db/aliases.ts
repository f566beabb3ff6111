import { aliasCandidatePrefix, slugify, uniqueAlias, isValidAlias } from '../../domain/alias.js';
import { invalid, violation } from '../../domain/errors.js';
import { sql, tablesOf, type Executor, type TenantDB, type TenantTable } from './sql.js';

/** The tenant tables with an `alias` column (and a `<table>_alias_key` unique constraint). */
export type AliasTable = { [T in TenantTable]: 'alias' extends keyof TenantDB[T] ? T : never }[TenantTable];

// D10 aliases, for every table with an `alias` column: derived from the name when not sent, made unique
// with -2, -3; a sent alias is validated and must be free (a duplicate is 422 on `alias`).
//
// Concurrency (issue 13): inside a transaction the derivation takes a transaction-scoped advisory lock on
// (schema, table, base), so concurrent writers deriving from one name take turns until each has committed,
// and each sees the suffixes taken before it (READ COMMITTED: the look-up's snapshot follows the lock). A
// writer outside a transaction, or a race the lock does not cover (a hash collision only serialises more), is
// caught by `retryDerivedAlias`: the unique violation on `<table>_alias_key` runs the write again, which then
// derives the next free suffix. Only an alias the caller sent is ever refused (422). Raw SQL: one statement for
// whichever table, which kysely's types would need per table.
export async function deriveAlias(db: Executor, schema: string, table: AliasTable, name: string, exceptUuid?: string): Promise<string> {
  const base = slugify(name);
  await sql`select pg_advisory_xact_lock(hashtextextended(${`alias:${schema}.${table}:${base}`}, 0))`.execute(db);
  // Every candidate starts with this prefix (slugs hold only a-z, 0-9 and '-': nothing to escape for LIKE).
  const rows = await sql<{ alias: string }>`
    select alias from ${tablesOf(schema)(table)}
    where alias like ${`${aliasCandidatePrefix(base)}%`} and uuid is distinct from ${exceptUuid ?? null}::uuid`.execute(db);
  const taken = new Set(rows.rows.map((r) => r.alias));
  return uniqueAlias(base, (c) => taken.has(c));
}

export async function assertAliasFree(db: Executor, schema: string, table: AliasTable, alias: string, exceptUuid?: string): Promise<void> {
  if (!isValidAlias(alias)) {
    throw invalid([violation('alias', 'This value may contain only lower-case letters, digits and single hyphens.', 'format')]);
  }
  const rows = await sql<{ uuid: string }>`
    select uuid from ${tablesOf(schema)(table)} where alias = ${alias} and uuid is distinct from ${exceptUuid ?? null}::uuid`.execute(db);
  if (rows.rows.length > 0) throw invalid([violation('alias', 'This value is already used.', 'unique')]);
}

/** True when `err` (or its cause) is PostgreSQL's unique violation on `<table>_alias_key`. */
export function isAliasRace(err: unknown, table: AliasTable): boolean {
  let e = err as { code?: string; constraint?: string; cause?: unknown } | undefined;
  for (let i = 0; i < 4 && e; i++) {
    if (e.code === '23505') return e.constraint === `${table}_alias_key`;
    e = e.cause as typeof e;
  }
  return false;
}

/**
 * Runs a write whose alias is derived (not sent) again when it lost a race for that alias; the next run
 * derives the next free suffix. `write` must be a whole transaction.
 */
export async function retryDerivedAlias<T>(table: AliasTable, derived: boolean, write: () => Promise<T>, attempts = 10): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await write();
    } catch (err) {
      if (!derived || i >= attempts || !isAliasRace(err, table)) throw err;
    }
  }
}
