import { applyTransition, type AttendanceState } from '../../domain/attendance-states.js';
import { selectReversal } from '../../domain/money.js';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { anyOf, inSchema, sql, tablesOf, type Executor } from '../../platform/db/sql.js';
import { newUuid } from '../../platform/http/ids.js';
import { conflict, unprocessable } from '../../domain/errors.js';
import { queueMail } from '../../platform/mail/outbox.js';
import { receiptReversalMail } from '../../platform/mail/templates/de.js';
import { recordEvent } from '../../platform/events/events.js';
import { Attendance } from '../attendances/entity.js';
import { transitionLocked } from '../../engines/participant-list/index.js';
import { lockOffers, type LockedOffer } from '../../engines/participant-list/index.js';
import { syncCharges } from '../../engines/ledger/index.js';
import { postBookings, refreshPaid, type NewBooking } from '../../engines/ledger/index.js';
import type { ReceiptOut, ReverseReceiptInput } from './schema.js';
import { debtorAddress, getReceipt, nextReceiptNumber, receiptNotFound } from './service.js';

// D8, D10: `POST /receipts/{uuid}/reverse` (admin, 200; body `{items?, withdraw?, notify?}`). Creates a reversal
// receipt with the negated lines (`reverses` the original, a number of its own), makes those applications
// unpaid again (the charge stays: they are open payments again, or, with `withdraw`, are withdrawn, which
// frees the places and cancels the charge) and answers with the original receipt showing `reversedBy`.
// A receipt may be reversed line by line; reversing a reversal, a line already reversed, or a receipt with
// nothing left to reverse is 409; an application that is not on the receipt is 422.
// Locks: the applications' offers (as every participant-list write) in uuid order, all of them before anything
// else, then the receipt's row, then the number; the order a transfer takes too (its offers, then the receipt
// row its lines move on). A transfer that committed between the unlocked look-up of the lines and the locks may
// have moved a line to an application of an offer not locked: then the whole transaction is run again with
// that offer in the set, never locking one more offer while holding others out of order (issue 13: that
// deadlocked with a transfer and surfaced as a 5xx).

/** Thrown inside the transaction when the lines name offers that were not locked: roll back, lock them too. */
class MoreOffers extends Error {
  constructor(readonly offers: string[]) {
    super('the receipt\'s lines moved to offers not locked');
  }
}

type Line = {
  position: number; attendance: string; ledger: string; amount: number; discount: number; text: string | null; reversed: boolean;
  offer: string | null; status: AttendanceState | null;
};

async function loadLines(db: Executor, schema: string, receipt: string): Promise<Line[]> {
  return inSchema(db, schema).selectFrom('receipt_items as i')
    .leftJoin('attendances as a', 'a.uuid', 'i.attendance_uuid')
    .select((eb) => [
      'i.position', 'i.attendance_uuid as attendance', 'i.ledger_uuid as ledger', 'i.amount', 'i.discount', 'i.text',
      eb('i.reversed_by_uuid', 'is not', null).as('reversed'), 'a.offer_uuid as offer', 'a.status',
    ])
    .where('i.receipt_uuid', '=', receipt)
    .orderBy('i.position')
    .$narrowType<Line>().execute();
}

export async function reverseReceipt(ctx: ServiceContext, input: ReverseReceiptInput): Promise<ReceiptOut> {
  const known = new Set<string>();
  for (let attempt = 1; ; attempt++) {
    try {
      await reverseOnce(ctx, input, known);
      break;
    } catch (err) {
      if (!(err instanceof MoreOffers)) throw err;
      if (attempt >= 5) throw conflict('The receipt changed while it was being reversed; try again.');
      for (const o of err.offers) known.add(o);
    }
  }
  return getReceipt(ctx, input.uuid);
}

async function reverseOnce(ctx: ServiceContext, input: ReverseReceiptInput, known: Set<string>): Promise<void> {
  const schema = ctx.tenant.schema;
  await ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const tx = inSchema(db, schema);
    const find = (lock: boolean) => tx.selectFrom('receipts')
      .select(['uuid', 'number', 'debtor_uuid as debtor', 'reverses_uuid as reverses'])
      .where('uuid', '=', input.uuid)
      .$if(lock, (q) => q.forUpdate())
      .executeTakeFirst();
    const first = await find(false);
    if (!first) throw receiptNotFound(input.uuid);
    if (first.reverses) throw conflict(`The receipt ${first.number} is itself a reversal; a reversal cannot be reversed.`);

    // Every offer lock first, in uuid order (lockOffers sorts): the lines' offers as read now, plus those an
    // earlier attempt found. Then the receipt's row; then the lines again, under the locks.
    const offersOf = (ls: Line[]) => ls.map((l) => l.offer).filter((o): o is string => !!o);
    const candidates = [...new Set([...known, ...offersOf(await loadLines(db, schema, input.uuid))])];
    const locked: Map<string, LockedOffer> = await lockOffers(ctx, db, candidates);
    await find(true);
    const lines = await loadLines(db, schema, input.uuid);
    const missing = [...new Set(offersOf(lines).filter((o) => !locked.has(o)))];
    if (missing.length > 0) throw new MoreOffers(missing);

    const selection = selectReversal(lines, input.items ?? null);
    if (!selection.ok) {
      switch (selection.reason) {
        case 'not_on_receipt':
          throw unprocessable(`items: The application ${selection.attendance} is not on the receipt ${first.number}.`);
        case 'already_reversed':
          throw conflict(`The line of the application ${selection.attendance} on the receipt ${first.number} is already reversed.`);
        case 'nothing_left':
          throw conflict(`The receipt ${first.number} is already reversed.`);
      }
    }
    const chosen = lines.filter((l) => selection.attendances.includes(l.attendance));
    // `withdraw`: every chosen application must be withdrawable (or withdrawn already), checked before writing.
    if (input.withdraw) {
      const refused = chosen.filter((l) => l.status && l.status !== 'withdrawn' && !applyTransition(l.status, 'withdraw').ok);
      if (refused.length > 0) {
        throw conflict(refused.map((l) => `The application ${l.attendance} is ${l.status} and cannot be withdrawn.`).join('\n'));
      }
    }

    const paidAt = new Date();
    const number = await nextReceiptNumber(db, schema, ctx.tenant.settings.receiptNumberPrefix, paidAt);
    const reversal = newUuid();
    const total = -chosen.reduce((s, l) => s + l.amount, 0);
    await tx.insertInto('receipts')
      .values({ uuid: reversal, number, debtor_uuid: first.debtor, reverses_uuid: first.uuid, total, paid_at: paidAt })
      .execute();
    // Raw: the negated lines in one `insert … select from unnest(arrays) with ordinality`, in the lines' order.
    await sql`insert into ${tablesOf(schema)('receipt_items')} (receipt_uuid, position, attendance_uuid, ledger_uuid, amount, discount, text)
      select ${reversal}::uuid, v.n, v.attendance, v.ledger, v.amount, v.discount, v.text
      from unnest(${chosen.map((l) => l.attendance)}::uuid[], ${chosen.map((l) => l.ledger)}::uuid[], ${chosen.map((l) => -l.amount)}::int[],
        ${chosen.map((l) => -l.discount)}::int[], ${chosen.map((l) => l.text)}::text[]) with ordinality as v(attendance, ledger, amount, discount, text, n)`.execute(db);
    await tx.updateTable('receipt_items').set({ reversed_by_uuid: reversal })
      .where('receipt_uuid', '=', first.uuid).where('attendance_uuid', '=', anyOf(selection.attendances))
      .execute();
    await tx.updateTable('receipts').set({ modified_at: sql`now()` }).where('uuid', '=', first.uuid).execute();
    const bookings: NewBooking[] = chosen.flatMap((l) => [
      { ledger: l.ledger, type: 'reversal' as const, amount: l.amount, attendance: l.attendance, receipt: reversal, text: `Storno Zahlung ${first.number} (${number})` },
      { ledger: l.ledger, type: 'reversal' as const, amount: l.discount, attendance: l.attendance, receipt: reversal, text: `Storno Nachlass ${first.number} (${number})` },
    ]);
    await postBookings(db, schema, bookings);
    await refreshPaid(db, schema, selection.attendances);
    // A paid application keeps its charge whatever its state; unpaid again, the charge rule applies anew
    // (a line of an application that left `confirmed` while paid has its charge cancelled now).
    await syncCharges(db, schema, selection.attendances);
    await recordEvent(ctx, db, 'receipt.reversed', {
      receipt: first.uuid, reversal, debtor: first.debtor, attendances: selection.attendances, total, withdraw: !!input.withdraw,
    });

    // Unpaid again: withdrawn on request (frees the place, cancels the charge, refills where the phase says so).
    if (input.withdraw) {
      for (const l of chosen) {
        if (!l.offer || l.status === 'withdrawn') continue;
        const a = await em.findOne(Attendance, { uuid: l.attendance });
        const offer = locked.get(l.offer);
        if (!a || !offer) continue;
        await transitionLocked(ctx, em, offer, a, 'withdraw', { commit: true, notify: false, eventCause: 'reversal' });
      }
    }

    if (input.notify) {
      const to = await debtorAddress(db, schema, first.debtor);
      if (to) {
        await queueMail(ctx, db, {
          kind: 'receipt_reversal',
          recipient: to,
          ...receiptReversalMail({
            number: first.number, reversalNumber: number, paidAt, total, withdrawn: !!input.withdraw,
            items: chosen.map((l) => ({ text: l.text, amount: -l.amount })),
          }),
          payload: { receipt: first.uuid, reversal, number },
        });
      }
    }
  });
}
