import { slugify, uniqueAlias, isValidAlias } from '../../domain/alias.js';
import { invalid, violation } from '../http/problem.js';
import { qualified, sql, type Executor } from './sql.js';

// D10 aliases, for every table with an `alias` column: derived from the name when not sent, made unique
// with -2, -3; a sent alias is validated and must be free (a duplicate is 422 on `alias`).
export async function deriveAlias(db: Executor, schema: string, table: string, name: string, exceptUuid?: string): Promise<string> {
  const base = slugify(name);
  const rows = await sql<{ alias: string }>`
    select alias from ${qualified(schema, table)}
    where (alias = ${base} or alias like ${`${base}-%`}) and uuid is distinct from ${exceptUuid ?? null}::uuid`.execute(db);
  const taken = new Set(rows.rows.map((r) => r.alias));
  return uniqueAlias(base, (c) => taken.has(c));
}

export async function assertAliasFree(db: Executor, schema: string, table: string, alias: string, exceptUuid?: string): Promise<void> {
  if (!isValidAlias(alias)) {
    throw invalid([violation('alias', 'This value may contain only lower-case letters, digits and single hyphens.', 'format')]);
  }
  const rows = await sql<{ uuid: string }>`
    select uuid from ${qualified(schema, table)} where alias = ${alias} and uuid is distinct from ${exceptUuid ?? null}::uuid`.execute(db);
  if (rows.rows.length > 0) throw invalid([violation('alias', 'This value is already used.', 'unique')]);
}
