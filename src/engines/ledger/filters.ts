import type { ServiceContext } from '../../platform/context.js';
import { sql, type Executor, type RawBuilder } from '../../platform/db/sql.js';
import { parseId } from '../../platform/http/ids.js';
import { resolveAccountRef } from '../families/index.js';
import { fullNameSql, participantNameSql } from '../families/index.js';

// What the money resources (debtors, ledgers, bookings, receipts; D8, D10 "Money") share on the read side:
// the debtor's display name and the reference filters. A filter value that matches nothing gives `[]`
// (spec 1.9): the builders return null then.

/**
 * A debtor's name (spec 2.1 reference `name`): the account's full name, else its e-mail address; a participant
 * debtor's full name (none once pseudonymised, D9); else the name retained for the debtor's receipts when its
 * account or participant lost its personal data (D9, docs/decisions.md "Retention"). `acc`, `dp` and `d` alias
 * the debtor's account, its participant and the debtor.
 */
export function debtorNameSql(acc = 'dacc', dp = 'dp', d = 'd') {
  return sql<string | null>`coalesce(${fullNameSql(acc)}, ${sql.ref(`${acc}.email`)}, ${participantNameSql(dp)}, ${sql.ref(`${d}.retained_name`)})`;
}

/** `debtor=<uuid>`: the column equals the debtor's id; null (→ `[]`) for a value that is no identifier. */
export function debtorFilter(column: string, value: string): RawBuilder<unknown> | null {
  const id = parseId(value);
  return id ? sql`${sql.ref(column)} = ${id}::uuid` : null;
}

/** `account=<uuid or e-mail>`: the debtor is that family account. */
export async function accountFilter(ctx: ServiceContext, db: Executor, debtorAccountColumn: string, value: string): Promise<RawBuilder<unknown> | null> {
  const account = await resolveAccountRef(ctx, value, db);
  return account ? sql`${sql.ref(debtorAccountColumn)} = ${account}::uuid` : null;
}

/** `edition=<uuid or alias>` on an edition table alias. */
export function editionFilter(editionAlias: string, value: string): RawBuilder<unknown> {
  const id = parseId(value);
  return sql`(${sql.ref(`${editionAlias}.uuid`)} = ${id}::uuid or ${sql.ref(`${editionAlias}.alias`)} = ${value})`;
}

/**
 * The `account` and `debtor` filters every money list takes (D10), on a query whose debtor is `d`: the
 * conditions to AND, or null when a filter names nothing (the page is then empty, not an error).
 */
export async function debtorScope(
  ctx: ServiceContext,
  db: Executor,
  input: { account?: string; debtor?: string },
): Promise<RawBuilder<unknown>[] | null> {
  const conds: RawBuilder<unknown>[] = [sql`true`];
  if (input.account !== undefined) {
    const c = await accountFilter(ctx, db, 'd.account_uuid', input.account);
    if (!c) return null;
    conds.push(c);
  }
  if (input.debtor !== undefined) {
    const c = debtorFilter('d.uuid', input.debtor);
    if (!c) return null;
    conds.push(c);
  }
  return conds;
}
