import type { AttendanceState } from '../../domain/attendance-states.js';
import { formatReceiptNumber, resolveReceiptPrefix, splitPayment } from '../../domain/money.js';
import { isPayable } from '../../domain/payable.js';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import type { Selectable } from 'kysely';
import { anyOf, inSchema, sql, tablesOf, type Executor, type RawBuilder, type TenantDB } from '../../platform/db/sql.js';
import { formatTimestamp, ZONE } from '../../platform/http/dates.js';
import { pageOf } from '../../platform/http/fields.js';
import { emptyPage, LIST_TOTAL, reportTotal } from '../../platform/http/paging.js';
import { newUuid } from '../../platform/http/ids.js';
import { invalid, notFound, unprocessable, violation } from '../../domain/errors.js';
import { queueMail } from '../../platform/mail/outbox.js';
import { receiptMail } from '../../platform/mail/templates/de.js';
import { recordEvent } from '../../platform/events/events.js';
import { lockOffers } from '../../engines/participant-list/index.js';
import { syncCharges } from '../../engines/ledger/index.js';
import { postBookings, refreshPaid, type NewBooking } from '../../engines/ledger/index.js';
import { debtorNameSql, editionFilter, debtorScope } from '../../engines/ledger/index.js';
import { chargeLedgerOf } from '../../engines/ledger/index.js';
import type { CreateReceiptInput, ListReceiptsInput, ReceiptOut } from './schema.js';

// Receipts (D8, D10 "Money"): `POST /receipts` (admin) pays due applications of one debtor; reads are one SQL
// projection per page. Reversal lives in reverse.ts. Writers lock the applications' offers first (the same
// row locks every write to a participant list takes, src/engines/participant-list), so a receipt and a
// transition, transfer or second receipt of the same application take turns; the receipt number is taken
// last, from a per-prefix counter row in the same transaction (no gaps, no duplicates).

type Row = Pick<Selectable<TenantDB['receipts']>, 'uuid' | 'number' | 'total'> & {
  paidAt: string; createdAt: string; modifiedAt: string; listTotal: number;
  debtorUuid: string; debtorName: string | null; reversesUuid: string | null; reversesNumber: string | null;
  items: { attendance: string; amount: number; text: string | null }[];
  reversals: { uuid: string; name: string }[];
};

function toOut(r: Row): ReceiptOut {
  const latest = r.reversals[r.reversals.length - 1];
  return {
    uuid: r.uuid,
    number: r.number,
    debtor: { uuid: r.debtorUuid, name: r.debtorName ?? undefined },
    // Spec 1.6: inside items empty values stay null.
    items: r.items.map((i) => ({ attendance: i.attendance, amount: i.amount, text: i.text })),
    total: r.total,
    paidAt: formatTimestamp(r.paidAt)!,
    reverses: r.reversesUuid ? { uuid: r.reversesUuid, name: r.reversesNumber ?? undefined } : undefined,
    reversedBy: latest ? { uuid: latest.uuid, name: latest.name } : undefined,
    reversals: r.reversals,
    createdAt: formatTimestamp(r.createdAt)!,
    modifiedAt: formatTimestamp(r.modifiedAt)!,
  };
}

/** Raw: the items and reversals aggregated as json per receipt, one statement per page. */
function projection(schema: string, where: RawBuilder<unknown>, limit: number, offset: number) {
  const t = tablesOf(schema);
  return sql<Row>`
    select r.uuid, ${LIST_TOTAL}, r.number, r.total, r.paid_at::text as "paidAt", r.created_at::text as "createdAt", r.modified_at::text as "modifiedAt",
      d.uuid as "debtorUuid", ${debtorNameSql()} as "debtorName",
      rv.uuid as "reversesUuid", rv.number as "reversesNumber",
      coalesce((select json_agg(json_build_object('attendance', i.attendance_uuid, 'amount', i.amount, 'text', i.text) order by i.position)
        from ${t('receipt_items')} i where i.receipt_uuid = r.uuid), '[]'::json) as items,
      coalesce((select json_agg(json_build_object('uuid', x.uuid, 'name', x.number) order by x.seq)
        from ${t('receipts')} x where x.reverses_uuid = r.uuid), '[]'::json) as reversals
    from ${t('receipts')} r
    join ${t('debtors')} d on d.uuid = r.debtor_uuid
    left join ${t('accounts')} dacc on dacc.uuid = d.account_uuid
    left join ${t('participants')} dp on dp.uuid = d.participant_uuid
    left join ${t('receipts')} rv on rv.uuid = r.reverses_uuid
    where ${where}
    order by r.seq desc
    limit ${limit} offset ${offset}`;
}

export async function listReceipts(ctx: ServiceContext, input: ListReceiptsInput): Promise<ReceiptOut[]> {
  const db = dbOf(ctx.em);
  const { limit, offset } = pageOf(input);
  const t = tablesOf(ctx.tenant.schema);
  const conds = await debtorScope(ctx, db, input);
  if (!conds) return emptyPage(ctx, { limit, offset });
  if (input.edition !== undefined) {
    // Raw: a condition of the raw projection.
    conds.push(sql`exists (select 1 from ${t('receipt_items')} fi join ${t('ledgers')} fl on fl.uuid = fi.ledger_uuid
      join ${t('editions')} fe on fe.uuid = fl.edition_uuid where fi.receipt_uuid = r.uuid and ${editionFilter('fe', input.edition)})`);
  }
  if (input.modifiedSince) conds.push(sql`r.modified_at >= ${input.modifiedSince.instant}`);
  const where = sql.join(conds, sql` and `);
  const res = await projection(ctx.tenant.schema, where, limit, offset).execute(db);
  await reportTotal(ctx, { limit, offset }, res.rows, async () => (await projection(ctx.tenant.schema, where, 1, 0).execute(db)).rows);
  return res.rows.map(toOut);
}

export const receiptNotFound = (uuid: string) => notFound(`No receipt with the identifier ${uuid} exists.`);

export async function readReceipt(ctx: ServiceContext, uuid: string, db: Executor = dbOf(ctx.em)): Promise<ReceiptOut | null> {
  const res = await projection(ctx.tenant.schema, sql`r.uuid = ${uuid}::uuid`, 1, 0).execute(db);
  return res.rows[0] ? toOut(res.rows[0]) : null;
}

export async function getReceipt(ctx: ServiceContext, uuid: string): Promise<ReceiptOut> {
  const out = await readReceipt(ctx, uuid);
  if (!out) throw receiptNotFound(uuid);
  return out;
}

// ---- shared by create and reverse -----------------------------------------------------------------------

/**
 * The next receipt number for `paidAt` (D10: the prefix's `{year}` is paidAt's year in Berlin; the counter
 * runs per resolved prefix). The counter row stays locked until the transaction ends: concurrent receipts
 * take turns, a rolled-back receipt leaves no gap.
 */
export async function nextReceiptNumber(db: Executor, schema: string, template: string, paidAt: Date): Promise<string> {
  const prefix = resolveReceiptPrefix(template, paidAt, ZONE);
  const row = await inSchema(db, schema).insertInto('receipt_counters').values({ prefix, value: 1 })
    .onConflict((oc) => oc.column('prefix').doUpdateSet((eb) => ({ value: eb('receipt_counters.value', '+', 1) })))
    .returning('value').executeTakeFirstOrThrow();
  return formatReceiptNumber(prefix, Number(row.value));
}

/** The offers of the applications that exist, by application. */
export async function offersOf(db: Executor, schema: string, attendanceUuids: readonly string[]): Promise<Map<string, string>> {
  const rows = await inSchema(db, schema).selectFrom('attendances').select(['uuid', 'offer_uuid as offer'])
    .where('uuid', '=', anyOf([...new Set(attendanceUuids)])).execute();
  return new Map(rows.map((r) => [r.uuid, r.offer]));
}

/** The debtor's e-mail address (the account's, else the participant's own) and a salutation name. */
export async function debtorAddress(db: Executor, schema: string, debtorUuid: string): Promise<string | null> {
  const row = await inSchema(db, schema).selectFrom('debtors as d')
    .leftJoin('accounts as acc', 'acc.uuid', 'd.account_uuid')
    .leftJoin('participants as p', 'p.uuid', 'd.participant_uuid')
    .select((eb) => eb.fn.coalesce('acc.email', 'p.email').as('email'))
    .where('d.uuid', '=', debtorUuid).executeTakeFirst();
  return row?.email ?? null;
}

// ---- create ---------------------------------------------------------------------------------------------

type Application = {
  uuid: string; offer: string; offerName: string; status: AttendanceState; heldBack: boolean; fee: number | null;
  payableSwitchedOff: boolean; paid: boolean; offerCancelled: boolean;
};

/**
 * D8, D10: `POST /receipts` `{items: [{attendance, amount?, text?}], paidAt?, notify?}`. Every application must
 * exist on this tenant and be due (`payable`, not yet paid); an amount may not exceed the fee (a smaller one
 * pays too, the difference is posted as a discount); all must share one debtor. Problems with the request's
 * meaning are one 422 whose detail has a line per problem (no violations, spec 7).
 */
export async function createReceipt(ctx: ServiceContext, input: CreateReceiptInput): Promise<ReceiptOut> {
  const ids = input.items.map((i) => i.attendance);
  const dup = ids.findIndex((id, i) => ids.indexOf(id) !== i);
  if (dup >= 0) throw invalid([violation(`items[${dup}].attendance`, 'This application is already listed on this receipt.', 'unique')]);
  const schema = ctx.tenant.schema;

  const uuid = await ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const tx = inSchema(db, schema);
    const offersBefore = await offersOf(db, schema, ids);
    await lockOffers(ctx, db, [...new Set(offersBefore.values())]);
    // Read again under the locks: a transfer or delete may have committed meanwhile.
    const rows = await tx.selectFrom('attendances as a').innerJoin('offers as o', 'o.uuid', 'a.offer_uuid')
      .select((eb) => [
        'a.uuid', 'a.offer_uuid as offer', 'o.name as offerName', 'a.status', 'a.held_back as heldBack', 'a.fee',
        'a.payable_switched_off as payableSwitchedOff', 'a.paid', 'o.called_off as offerCancelled',
      ])
      .where('a.uuid', '=', anyOf(ids)).$narrowType<Application>().execute();
    const apps = new Map(rows.map((r) => [r.uuid, r]));

    const problems: string[] = [];
    const splits: { amount: number; discount: number }[] = [];
    input.items.forEach((item, i) => {
      const a = apps.get(item.attendance);
      if (!a || a.offer !== offersBefore.get(item.attendance)) {
        problems.push(`items[${i}].attendance: No application with the identifier ${item.attendance} exists.`);
        return;
      }
      if (a.paid) {
        problems.push(`items[${i}].attendance: The application ${a.uuid} is already paid; reverse its receipt first to pay it again.`);
        return;
      }
      if (!isPayable(a)) {
        const why = a.status !== 'confirmed' ? `it is ${a.status}` : a.offerCancelled ? 'its offer is cancelled' : a.heldBack ? 'its decision is held back'
          : (a.fee ?? 0) <= 0 ? 'it is free' : 'payable was switched off';
        problems.push(`items[${i}].attendance: The application ${a.uuid} is not due (payable is false: ${why}).`);
        return;
      }
      const split = splitPayment(a.fee ?? 0, item.amount);
      if (!split.ok) {
        problems.push(`items[${i}].amount: The amount ${item.amount} is above the application's fee of ${a.fee ?? 0}.`);
        return;
      }
      splits[i] = split;
    });
    if (problems.length > 0) throw unprocessable(problems.join('\n'));

    // The charges are in place (idempotent), and each application's lies in its debtor's ledger.
    await syncCharges(db, schema, ids);
    const ledgers: string[] = [];
    for (const id of ids) ledgers.push((await chargeLedgerOf(db, schema, id))!);
    const owners = await tx.selectFrom('ledgers').select(['uuid', 'debtor_uuid as debtor']).where('uuid', '=', anyOf(ledgers)).execute();
    const debtorOf = new Map(owners.map((r) => [r.uuid, r.debtor]));
    const debtors = [...new Set(ledgers.map((l) => debtorOf.get(l)!))];
    if (debtors.length > 1) {
      const lines = ids.map((id, i) => `items[${i}].attendance: The application ${id} is owed by the debtor ${debtorOf.get(ledgers[i]!)}.`);
      throw unprocessable(['items: A receipt covers the applications of one debtor; these belong to several.', ...lines].join('\n'));
    }
    const debtor = debtors[0]!;

    const paidAt = input.paidAt ?? new Date();
    const number = await nextReceiptNumber(db, schema, ctx.tenant.settings.receiptNumberPrefix, paidAt);
    const receipt = newUuid();
    const texts = input.items.map((item) => item.text || apps.get(item.attendance)!.offerName);
    const total = splits.reduce((s, x) => s + x.amount, 0);
    await tx.insertInto('receipts').values({ uuid: receipt, number, debtor_uuid: debtor, total, paid_at: paidAt }).execute();
    // Raw: the lines in one `insert … select from unnest(arrays) with ordinality`, numbered in the items' order.
    await sql`insert into ${tablesOf(schema)('receipt_items')} (receipt_uuid, position, attendance_uuid, ledger_uuid, amount, discount, text)
      select ${receipt}::uuid, v.n, v.attendance, v.ledger, v.amount, v.discount, v.text
      from unnest(${ids}::uuid[], ${ledgers}::uuid[], ${splits.map((s) => s.amount)}::int[], ${splits.map((s) => s.discount)}::int[],
        ${texts}::text[]) with ordinality as v(attendance, ledger, amount, discount, text, n)`.execute(db);
    const bookings: NewBooking[] = [];
    ids.forEach((id, i) => {
      bookings.push(
        { ledger: ledgers[i]!, type: 'payment', amount: -splits[i]!.amount, attendance: id, receipt, text: `Zahlung ${number}: ${texts[i]}` },
        { ledger: ledgers[i]!, type: 'discount', amount: -splits[i]!.discount, attendance: id, receipt, text: `Nachlass ${number}: ${texts[i]}` },
      );
    });
    await postBookings(db, schema, bookings);
    await refreshPaid(db, schema, ids);
    await recordEvent(ctx, db, 'receipt.created', { receipt, debtor, attendances: ids, total });

    // D9: the receipt e-mail is queued in the same transaction.
    if (input.notify) {
      const to = await debtorAddress(db, schema, debtor);
      if (to) {
        await queueMail(ctx, db, {
          kind: 'receipt',
          recipient: to,
          ...receiptMail({ number, paidAt, items: texts.map((text, i) => ({ text, amount: splits[i]!.amount })), total }),
          payload: { receipt, number },
        });
      }
    }
    return receipt;
  });
  return getReceipt(ctx, uuid);
}
