import type { BookingType } from '../../domain/money.js';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { GERMAN } from '../../platform/db/search.js';
import { sql, tablesOf, type RawBuilder } from '../../platform/db/sql.js';
import { formatTimestamp } from '../../platform/http/dates.js';
import { pageOf } from '../../platform/http/fields.js';
import { emptyPage, LIST_TOTAL, reportTotal } from '../../platform/http/paging.js';
import { notFound } from '../../domain/errors.js';
import { debtorNameSql, editionFilter, debtorScope } from '../../engines/ledger/index.js';
import type { LedgerOut, ListLedgersInput } from './schema.js';

// Ledgers (D8, D10): read-only projections, one SQL statement per page with the book entries aggregated in.
// The balance is the sum of the entries, computed in the same statement. Order: debtor name, edition name.
type Entry = { uuid: string; type: BookingType; date: string; amount: number; text: string | null; receipt: string | null; attendance: string | null };
type Row = {
  uuid: string; createdAt: string; modifiedAt: string; balance: number; entries: Entry[]; listTotal: number;
  debtorUuid: string; debtorName: string | null; editionUuid: string; editionName: string; editionAlias: string;
};

function toOut(r: Row): LedgerOut {
  return {
    uuid: r.uuid,
    debtor: { uuid: r.debtorUuid, name: r.debtorName ?? undefined },
    edition: { uuid: r.editionUuid, name: r.editionName, alias: r.editionAlias },
    balance: r.balance,
    // Spec 1.6: inside bookEntries empty values stay null.
    bookEntries: r.entries.map((e) => ({
      uuid: e.uuid, type: e.type, date: formatTimestamp(e.date)!, amount: e.amount, text: e.text, receipt: e.receipt, attendance: e.attendance,
    })),
    createdAt: formatTimestamp(r.createdAt)!,
    modifiedAt: formatTimestamp(r.modifiedAt)!,
  };
}

/** Raw: the book entries aggregated as json in a lateral subquery, one statement per page. */
function projection(ctx: ServiceContext, where: RawBuilder<unknown>, limit: number, offset: number) {
  const t = tablesOf(ctx.tenant.schema);
  return sql<Row>`
    select l.uuid, l.created_at::text as "createdAt", ${LIST_TOTAL},
      greatest(l.created_at, bk.last)::text as "modifiedAt",
      coalesce(bk.balance, 0)::int as balance, coalesce(bk.entries, '[]'::json) as entries,
      d.uuid as "debtorUuid", ${debtorNameSql()} as "debtorName",
      e.uuid as "editionUuid", e.name as "editionName", e.alias as "editionAlias"
    from ${t('ledgers')} l
    join ${t('debtors')} d on d.uuid = l.debtor_uuid
    join ${t('editions')} e on e.uuid = l.edition_uuid
    left join ${t('accounts')} dacc on dacc.uuid = d.account_uuid
    left join ${t('participants')} dp on dp.uuid = d.participant_uuid
    left join lateral (
      select sum(b.amount) as balance, max(b.booked_at) as last,
        json_agg(json_build_object('uuid', b.uuid, 'type', b.type, 'date', b.booked_at::text, 'amount', b.amount,
          'text', b.text, 'receipt', b.receipt_uuid, 'attendance', b.attendance_uuid) order by b.seq) as entries
      from ${t('bookings')} b where b.ledger_uuid = l.uuid
    ) bk on true
    where ${where}
    order by ${debtorNameSql()} ${GERMAN} nulls last, e.name ${GERMAN}, l.uuid
    limit ${limit} offset ${offset}`;
}

export async function listLedgers(ctx: ServiceContext, input: ListLedgersInput): Promise<LedgerOut[]> {
  const db = dbOf(ctx.em);
  const { limit, offset } = pageOf(input);
  const conds = await debtorScope(ctx, db, input);
  if (!conds) return emptyPage(ctx, { limit, offset });
  if (input.edition !== undefined) conds.push(editionFilter('e', input.edition));
  const where = sql.join(conds, sql` and `);
  const res = await projection(ctx, where, limit, offset).execute(db);
  await reportTotal(ctx, { limit, offset }, res.rows, async () => (await projection(ctx, where, 1, 0).execute(db)).rows);
  return res.rows.map(toOut);
}

export async function getLedger(ctx: ServiceContext, uuid: string): Promise<LedgerOut> {
  const res = await projection(ctx, sql`l.uuid = ${uuid}::uuid`, 1, 0).execute(dbOf(ctx.em));
  if (!res.rows[0]) throw notFound(`No ledger with the identifier ${uuid} exists.`);
  return toOut(res.rows[0]);
}
