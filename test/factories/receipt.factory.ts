import type { TestTenant } from '../harness/harness.js';
import { create as createAccount } from './account.factory.js';
import { create as createEdition } from './edition.factory.js';
import { createThroughApi, type Overrides } from './factory.js';
import { create as createOffer } from './offer.factory.js';
import { create as createParticipant } from './participant.factory.js';

// Money (D8, D10). A receipt pays a due application: a confirmed place in a first-come-first-served edition,
// fee 500, of a child of a family account, all made through the API unless `items` are passed.

/** A confirmed, committed application with a fee (so `payable`), of a new family's child. */
export async function dueApplication(t: TestTenant, opts: { fee?: number; account?: string | null; edition?: string; offer?: string } = {}) {
  const offer = opts.offer ?? (await createOffer(t, { edition: opts.edition ?? (await createEdition(t, { procedure: 'firstcome' })).uuid, fee: opts.fee ?? 500, maxParticipants: null })).uuid;
  const account = opts.account === null ? null : opts.account ?? (await createAccount(t)).uuid;
  const participant = await createParticipant(t, account ? { account } : {});
  return createThroughApi(t, '/attendances', { offer, participant: participant.uuid, status: 'confirmed' });
}

export async function create(t: TestTenant, overrides: Overrides = {}) {
  const items = overrides.items ?? [{ attendance: (await dueApplication(t)).uuid }];
  return createThroughApi(t, '/receipts', { ...overrides, items });
}

/** PATCH is 405 on an existing receipt, 404 on an unknown one. */
export const updateBody = { total: 1 };

export const actionBodies: Record<string, Record<string, unknown> | undefined> = {
  reverse: {},
};
