import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { anyOf, inSchema, sql, type Executor } from '../../platform/db/sql.js';
import { parseId } from '../../platform/http/ids.js';

// Families (spec 2.1): the accounts as other resources refer to them.

/**
 * An account named in a filter or a body (spec 1.5): its UUID, the base58 form, or its e-mail address
 * (ignoring case). Returns the account's UUID, or null when nothing matches. For other resources' filters
 * (null → `[]`) and bodies (null → 422 with `detail` only). Pass `db` inside a transaction.
 */
export async function resolveAccountRef(ctx: ServiceContext, value: string, db: Executor = dbOf(ctx.em)): Promise<string | null> {
  const v = value.trim();
  if (!v || v.length > 254) return null;
  const accounts = inSchema(db, ctx.tenant.schema).selectFrom('accounts').select('uuid');
  const id = parseId(v);
  const row = id
    ? await accounts.where('uuid', '=', id).executeTakeFirst()
    : await accounts.where(sql`lower(email)`, '=', sql`lower(${v})`).executeTakeFirst();
  return row?.uuid ?? null;
}

/**
 * An account's `participants` list shows its children's references: when a child joins, leaves or is renamed,
 * the account counts as modified too (`modifiedSince`). For the participants service, inside its transaction.
 */
export async function touchAccounts(ctx: ServiceContext, db: Executor, uuids: (string | null | undefined)[]): Promise<void> {
  const ids = [...new Set(uuids.filter((u): u is string => !!u))];
  if (ids.length === 0) return;
  await inSchema(db, ctx.tenant.schema).updateTable('accounts').set({ modified_at: sql`now()` })
    .where('uuid', '=', anyOf(ids)).execute();
}
