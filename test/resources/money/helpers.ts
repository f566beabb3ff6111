import { expect } from 'vitest';
import type { ResponseBody, TestTenant } from '../../harness/harness.js';
import { create as createAccount } from '../../factories/account.factory.js';
import { create as createEdition } from '../../factories/edition.factory.js';
import { create as createOffer } from '../../factories/offer.factory.js';
import { create as createParticipant } from '../../factories/participant.factory.js';
import { dueApplication } from '../../factories/receipt.factory.js';

// Builders and reads for the money tests (D8, D10), through the real endpoints.
export { createAccount, createEdition, createOffer, createParticipant, dueApplication };
export { transitionOk } from '../attendances/helpers.js';

/** A first-come-first-served edition with an unlimited offer of the given fee. */
export async function offerWithFee(t: TestTenant, fee = 500, edition?: string) {
  const e = edition ?? (await createEdition(t, { procedure: 'firstcome' })).uuid;
  return createOffer(t, { edition: e, fee, maxParticipants: null });
}

/** A child of `account` (or without one) applying for `offer` with the given body. */
export async function applyFor(t: TestTenant, offer: string, account: string | null, body: Record<string, unknown> = { status: 'confirmed' }) {
  const p = await createParticipant(t, account ? { account } : {});
  const res = await t.post('/attendances', { offer, participant: p.uuid, ...body });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export async function pay(t: TestTenant, items: Record<string, unknown>[], extra: Record<string, unknown> = {}) {
  const res = await t.post('/receipts', { items, ...extra });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export async function reverse(t: TestTenant, receipt: string, body?: Record<string, unknown>) {
  return body === undefined ? t.request('POST', `/receipts/${receipt}/reverse`) : t.post(`/receipts/${receipt}/reverse`, body);
}

export async function getOk<P extends string>(t: TestTenant, path: P): Promise<ResponseBody<'get', P>> {
  const res = await t.get(path);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

export async function attendance(t: TestTenant, uuid: string) {
  return getOk(t, `/attendances/${uuid}`);
}

/** The bookings of an application, in posting order: [type, amount] pairs. */
export async function postingsOf(t: TestTenant, attendanceUuid: string): Promise<[string, number][]> {
  const rows = await getOk(t, `/bookings?itemsPerPage=200&attendance=${attendanceUuid}`);
  return rows.map((b) => [b.type, b.amount]);
}

/** The single ledger of an account (fails when there is not exactly one). */
export async function ledgerOfAccount(t: TestTenant, account: string) {
  const rows = await getOk(t, `/ledgers?account=${account}`);
  expect(rows, JSON.stringify(rows)).toHaveLength(1);
  return rows[0];
}
