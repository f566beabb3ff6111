import type { BookingType } from '../../domain/money.js';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import type { Selectable } from 'kysely';
import { sql, tablesOf, type RawBuilder, type TenantDB } from '../../platform/db/sql.js';
import { formatTimestamp } from '../../platform/http/dates.js';
import { pageOf } from '../../platform/http/fields.js';
import { emptyPage, LIST_TOTAL, reportTotal } from '../../platform/http/paging.js';
import { parseId } from '../../platform/http/ids.js';
import { notFound } from '../../domain/errors.js';
import { debtorNameSql, editionFilter, debtorScope } from '../../engines/ledger/index.js';
import type { BookingOut, ListBookingsInput } from './schema.js';

// Bookings (D8, D10): read-only projections, one SQL statement per page, in posting order (`seq`).
type Row = Pick<Selectable<TenantDB['bookings']>, 'uuid' | 'amount' | 'text'> & {
  listTotal: number;
  type: BookingType; date: string; attendance: string | null;
  ledger: string; debtorUuid: string; debtorName: string | null;
  editionUuid: string; editionName: string; editionAlias: string;
  receiptUuid: string | null; receiptNumber: string | null;
};

function toOut(r: Row): BookingOut {
  return {
    uuid: r.uuid,
    type: r.type,
    date: formatTimestamp(r.date)!,
    amount: r.amount,
    text: r.text ?? undefined,
    debtor: { uuid: r.debtorUuid, name: r.debtorName ?? undefined },
    edition: { uuid: r.editionUuid, name: r.editionName, alias: r.editionAlias },
    ledger: r.ledger,
    attendance: r.attendance ?? undefined,
    receipt: r.receiptUuid ? { uuid: r.receiptUuid, name: r.receiptNumber ?? undefined } : undefined,
  };
}

/** Raw: the debtor's name and the reference filters are SQL fragments over these aliases (ledger engine). */
function projection(ctx: ServiceContext, where: RawBuilder<unknown>, limit: number, offset: number) {
  const t = tablesOf(ctx.tenant.schema);
  return sql<Row>`
    select b.uuid, ${LIST_TOTAL}, b.type, b.booked_at::text as date, b.amount, b.text, b.attendance_uuid as attendance,
      l.uuid as ledger, d.uuid as "debtorUuid", ${debtorNameSql()} as "debtorName",
      e.uuid as "editionUuid", e.name as "editionName", e.alias as "editionAlias",
      r.uuid as "receiptUuid", r.number as "receiptNumber"
    from ${t('bookings')} b
    join ${t('ledgers')} l on l.uuid = b.ledger_uuid
    join ${t('debtors')} d on d.uuid = l.debtor_uuid
    join ${t('editions')} e on e.uuid = l.edition_uuid
    left join ${t('accounts')} dacc on dacc.uuid = d.account_uuid
    left join ${t('participants')} dp on dp.uuid = d.participant_uuid
    left join ${t('receipts')} r on r.uuid = b.receipt_uuid
    where ${where}
    order by b.seq
    limit ${limit} offset ${offset}`;
}

export async function listBookings(ctx: ServiceContext, input: ListBookingsInput): Promise<BookingOut[]> {
  const db = dbOf(ctx.em);
  const { limit, offset } = pageOf(input);
  const conds = await debtorScope(ctx, db, input);
  if (!conds) return emptyPage(ctx, { limit, offset });
  if (input.edition !== undefined) conds.push(editionFilter('e', input.edition));
  for (const [value, column] of [[input.attendance, 'b.attendance_uuid'], [input.receipt, 'b.receipt_uuid']] as const) {
    if (value === undefined) continue;
    const id = parseId(value);
    if (!id) return emptyPage(ctx, { limit, offset });
    conds.push(sql`${sql.ref(column)} = ${id}::uuid`);
  }
  const where = sql.join(conds, sql` and `);
  const res = await projection(ctx, where, limit, offset).execute(db);
  await reportTotal(ctx, { limit, offset }, res.rows, async () => (await projection(ctx, where, 1, 0).execute(db)).rows);
  return res.rows.map(toOut);
}

const bookingNotFound = (uuid: string) => notFound(`No booking with the identifier ${uuid} exists.`);

export async function getBooking(ctx: ServiceContext, uuid: string): Promise<BookingOut> {
  const res = await projection(ctx, sql`b.uuid = ${uuid}::uuid`, 1, 0).execute(dbOf(ctx.em));
  if (!res.rows[0]) throw bookingNotFound(uuid);
  return toOut(res.rows[0]);
}
