import { expect } from 'vitest';
import type { Harness, TestTenant } from '../../harness/harness.js';
import { create as createAccount } from '../../factories/account.factory.js';
import { create as createEdition } from '../../factories/edition.factory.js';
import { create as createOffer } from '../../factories/offer.factory.js';
import { create as createParticipant } from '../../factories/participant.factory.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import { WEEK_MS } from '../../../src/domain/retention.js';

// Builders for the retention tests (D9): offers that ended a given number of weeks ago, children applying.
export { createAccount, createEdition, createOffer, createParticipant };

/** An instant `weeks` weeks before now (ISO with Z: D10 "Z is an offset"). */
export const weeksAgo = (weeks: number, extraMs = 0) => new Date(Date.now() - weeks * WEEK_MS - extraMs).toISOString();

/** A first-come-first-served offer with a fee whose only date ended `weeks` weeks ago (3 hours long). */
export async function offerEndedWeeksAgo(t: TestTenant, weeks: number, edition?: string, fee = 500) {
  const e = edition ?? (await createEdition(t, { procedure: 'firstcome' })).uuid;
  const end = weeksAgo(weeks);
  const begin = new Date(Date.parse(end) - 3 * 3_600_000).toISOString();
  return createOffer(t, { edition: e, fee, maxParticipants: null, minAge: null, maxAge: null, dates: [{ begin, end }] });
}

/** POST /attendances with status confirmed (payable when the offer has a fee). */
export async function apply(t: TestTenant, offer: string, participant: string) {
  const res = await t.post('/attendances', { offer, participant, status: 'confirmed' });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** Sets a participant's or account's created/modified time into the past (records made long ago). */
export async function age(h: Harness, t: TestTenant, table: 'participants' | 'accounts', uuid: string, weeks: number): Promise<void> {
  const at = new Date(Date.parse(weeksAgo(weeks)));
  await sql`update ${qualified(t.tenant.schema, table)} set created_at = ${at}, modified_at = ${at} where uuid = ${uuid}::uuid`
    .execute(executorOf(h.orm));
}

/** Raw columns of a participant (to prove the data is gone from the table, not only from the responses). */
export async function participantRow(h: Harness, t: TestTenant, uuid: string): Promise<Record<string, unknown>> {
  const res = await sql<Record<string, unknown>>`select firstname, lastname, date_of_birth, email, phone, pseudonym, pseudonymised_at
    from ${qualified(t.tenant.schema, 'participants')} where uuid = ${uuid}::uuid`.execute(executorOf(h.orm));
  return res.rows[0];
}

export async function accountRow(h: Harness, t: TestTenant, uuid: string): Promise<Record<string, unknown>> {
  const res = await sql<Record<string, unknown>>`select email, firstname, lastname, phone, street, zip, city, pseudonymised_at
    from ${qualified(t.tenant.schema, 'accounts')} where uuid = ${uuid}::uuid`.execute(executorOf(h.orm));
  return res.rows[0];
}

/** Latest modified_at over the tenant's participants, accounts and applications (idempotence: nothing written). */
export async function lastWrites(h: Harness, t: TestTenant): Promise<string> {
  const q = (table: string) => qualified(t.tenant.schema, table);
  const res = await sql<{ w: string }>`select concat_ws('|', (select max(modified_at) from ${q('participants')}),
    (select max(modified_at) from ${q('accounts')}), (select max(modified_at) from ${q('attendances')}),
    (select count(*) from ${q('participants')} where pseudonymised_at is not null)) as w`.execute(executorOf(h.orm));
  return res.rows[0].w;
}
