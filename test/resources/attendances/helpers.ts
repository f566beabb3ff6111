import { expect } from 'vitest';
import type { TestTenant } from '../../harness/harness.js';
import { create as createAccount } from '../../factories/account.factory.js';
import { create as createEdition } from '../../factories/edition.factory.js';
import { create as createOffer } from '../../factories/offer.factory.js';
import { create as createOrganiser } from '../../factories/organiser.factory.js';
import { create as createParticipant } from '../../factories/participant.factory.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import type { Harness } from '../../harness/harness.js';

// Builders for the application tests, through the real endpoints (test/factories).
export { createAccount, createEdition, createOffer, createOrganiser, createParticipant };

export const firstcome = (t: TestTenant, body: Record<string, unknown> = {}) => createEdition(t, { procedure: 'firstcome', ...body });
export const lot = (t: TestTenant, body: Record<string, unknown> = {}) => createEdition(t, { procedure: 'lot', ...body });

/** POST /attendances; expects 201 and returns the application. */
export async function apply(t: TestTenant, offer: string, participant: string, body: Record<string, unknown> = {}) {
  const res = await t.post('/attendances', { offer, participant, ...body });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** A new participant (optionally of an account) applying for `offer`. */
export async function newApplication(t: TestTenant, offer: string, body: Record<string, unknown> = {}, participant: Record<string, unknown> = {}) {
  const p = await createParticipant(t, participant);
  return apply(t, offer, p.uuid, body);
}

export async function transition(t: TestTenant, uuid: string, name: string, body: Record<string, unknown> = {}, token?: string) {
  return t.post(`/attendances/${uuid}/transition`, { transition: name, ...body }, token ? { token } : {});
}

export async function transitionOk(t: TestTenant, uuid: string, name: string, body: Record<string, unknown> = {}) {
  const res = await transition(t, uuid, name, body);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** The offer's participant list in order (admin). */
export async function list(t: TestTenant, offer: string, query = '') {
  const res = await t.get(`/offers/${offer}/attendances?itemsPerPage=200${query}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Outbox rows of the tenant (D9), oldest first (one transaction: by recipient). */
export type OutboxRow = { kind: string; recipient: string; subject: string; body: string; payload: Record<string, unknown> };

export async function outbox(h: Harness, t: TestTenant): Promise<OutboxRow[]> {
  const res = await sql<OutboxRow>`select kind, recipient, subject, body, payload from ${qualified(t.tenant.schema, 'outbox')}
    order by created_at, recipient`.execute(executorOf(h.orm));
  return res.rows;
}

/** Raw SQL on the tenant's attendances (for system-only states, and a `paid` flag without a receipt). */
export async function setColumns(h: Harness, t: TestTenant, uuid: string, set: { status?: string; paid?: boolean }): Promise<void> {
  const db = executorOf(h.orm);
  const table = qualified(t.tenant.schema, 'attendances');
  if (set.status !== undefined) await sql`update ${table} set status = ${set.status} where uuid = ${uuid}::uuid`.execute(db);
  if (set.paid !== undefined) await sql`update ${table} set paid = ${set.paid} where uuid = ${uuid}::uuid`.execute(db);
}

/** Sorting values of a list must be exactly 1..n. */
export function expectDenseSorting(items: { sorting?: number }[]): void {
  expect(items.map((a) => a.sorting)).toEqual(items.map((_, i) => i + 1));
}
