import type { ServiceContext } from '../../platform/context.js';
import { anyOf, inSchema, sql, type Executor } from '../../platform/db/sql.js';

// The one lock order of every write that touches several rows of families and lists (issue 23; docs/decisions.md
// "Lock order"): accounts, then participants, then offers (src/engines/participant-list `lockOffers`), each kind
// in uuid order. `DELETE /participants/{uuid}` and `DELETE /accounts/{uuid}` of one family used to take the
// account and the child the other way round and deadlocked; now the second one waits at the account.
// `update` for a row that will be deleted, `no key update` for one that will only be changed.
// Before all of them, a family's own turn (`lockFamily`, an advisory lock per e-mail address, issue 21): a family's
// submissions (POST /family-applications) and the expiry of its links (which deletes the children and the account
// an unconfirmed submission made) take turns, so a submission never matches a child, or adds to an account, that
// an expiry is deleting.

export type RowLock = 'update' | 'no key update';

async function lockRows(ctx: ServiceContext, db: Executor, table: 'accounts' | 'participants', uuids: (string | null | undefined)[], mode: RowLock): Promise<string[]> {
  const ids = [...new Set(uuids.filter((u): u is string => !!u))].sort();
  if (ids.length === 0) return [];
  const q = inSchema(db, ctx.tenant.schema).selectFrom(table).select('uuid').where('uuid', '=', anyOf(ids)).orderBy('uuid');
  // Rows are locked as the sorted result is produced, so in uuid order.
  const rows = await (mode === 'update' ? q.forUpdate() : q.forNoKeyUpdate()).execute();
  return rows.map((r) => r.uuid);
}

/** Locks the accounts (uuid order) for the rest of the transaction; returns those that exist. Before any participant or offer. */
export function lockAccounts(ctx: ServiceContext, db: Executor, uuids: (string | null | undefined)[], mode: RowLock): Promise<string[]> {
  return lockRows(ctx, db, 'accounts', uuids, mode);
}

/** Locks the participants (uuid order) for the rest of the transaction; after their accounts, before any offer. */
export function lockParticipants(ctx: ServiceContext, db: Executor, uuids: (string | null | undefined)[], mode: RowLock): Promise<string[]> {
  return lockRows(ctx, db, 'participants', uuids, mode);
}

/** A family's turn (its e-mail address, ignoring case) for the rest of the transaction; before its account's row lock. */
export async function lockFamily(ctx: ServiceContext, db: Executor, email: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`family:${ctx.tenant.schema}:${email.toLowerCase()}`}, 0))`.execute(db);
}
