import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { GERMAN, likePattern } from '../../platform/db/search.js';
import { sql, tablesOf, type RawBuilder } from '../../platform/db/sql.js';
import { formatTimestamp } from '../../platform/http/dates.js';
import { pageOf } from '../../platform/http/fields.js';
import { emptyPage, LIST_TOTAL, reportTotal } from '../../platform/http/paging.js';
import { notFound } from '../../domain/errors.js';
import { fullNameSql, participantNameSql } from '../../engines/families/index.js';
import { debtorNameSql, debtorScope } from '../../engines/ledger/index.js';
import type { DebtorOut, ListDebtorsInput } from './schema.js';

// Debtors (D8, D10): read-only; made by the money writes on first need. One SQL projection per page.
type Row = {
  uuid: string; name: string | null; createdAt: string; balance: number; listTotal: number;
  accountUuid: string | null; accountName: string | null; participantUuid: string | null; participantName: string | null;
};

function toOut(r: Row): DebtorOut {
  return {
    uuid: r.uuid,
    name: r.name ?? undefined,
    account: r.accountUuid ? { uuid: r.accountUuid, name: r.accountName ?? undefined } : undefined,
    participant: r.participantUuid ? { uuid: r.participantUuid, name: r.participantName ?? undefined } : undefined,
    balance: r.balance,
    createdAt: formatTimestamp(r.createdAt)!,
  };
}

/** Raw: the balance as a correlated sum, the debtor's name and the filters as SQL fragments (ledger engine). */
function projection(ctx: ServiceContext, where: RawBuilder<unknown>, limit: number, offset: number) {
  const t = tablesOf(ctx.tenant.schema);
  return sql<Row>`
    select d.uuid, ${debtorNameSql()} as name, d.created_at::text as "createdAt", ${LIST_TOTAL},
      dacc.uuid as "accountUuid", coalesce(${fullNameSql('dacc')}, dacc.email) as "accountName",
      dp.uuid as "participantUuid", ${participantNameSql('dp')} as "participantName",
      coalesce((select sum(b.amount) from ${t('bookings')} b join ${t('ledgers')} l on l.uuid = b.ledger_uuid
        where l.debtor_uuid = d.uuid), 0)::int as balance
    from ${t('debtors')} d
    left join ${t('accounts')} dacc on dacc.uuid = d.account_uuid
    left join ${t('participants')} dp on dp.uuid = d.participant_uuid
    where ${where}
    order by ${debtorNameSql()} ${GERMAN} nulls last, d.uuid
    limit ${limit} offset ${offset}`;
}

export async function listDebtors(ctx: ServiceContext, input: ListDebtorsInput): Promise<DebtorOut[]> {
  const db = dbOf(ctx.em);
  const { limit, offset } = pageOf(input);
  const conds = await debtorScope(ctx, db, input);
  if (!conds) return emptyPage(ctx, { limit, offset });
  if (input.q) {
    const q = likePattern(input.q);
    conds.push(sql`(${debtorNameSql()} ilike ${q} or dacc.email ilike ${q})`);
  }
  const where = sql.join(conds, sql` and `);
  const res = await projection(ctx, where, limit, offset).execute(db);
  await reportTotal(ctx, { limit, offset }, res.rows, async () => (await projection(ctx, where, 1, 0).execute(db)).rows);
  return res.rows.map(toOut);
}

export async function getDebtor(ctx: ServiceContext, uuid: string): Promise<DebtorOut> {
  const res = await projection(ctx, sql`d.uuid = ${uuid}::uuid`, 1, 0).execute(dbOf(ctx.em));
  if (!res.rows[0]) throw notFound(`No debtor with the identifier ${uuid} exists.`);
  return toOut(res.rows[0]);
}
