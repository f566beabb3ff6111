import { expect } from 'vitest';
import type { Harness, RequestBody, TestTenant } from '../../harness/harness.js';
import { create as createEdition } from '../../factories/edition.factory.js';
import { create as createOffer } from '../../factories/offer.factory.js';
import { unique } from '../../factories/factory.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';

// Builders for the family channel's tests (D11, issue 21): published offers families may apply for, a website
// token, a family's request body, and the single-use links from the mails in the outbox.

/** A published, public offer in an online edition (first come first served unless `edition` says otherwise). */
export async function publishedOffer(t: TestTenant, overrides: Record<string, unknown> = {}, edition: Record<string, unknown> = {}) {
  const e = overrides.edition ?? (await createEdition(t, { procedure: 'firstcome', ...edition })).uuid;
  const offer = await createOffer(t, { edition: e, ...overrides });
  const res = await t.post(`/offers/${offer.uuid}/transition`, { transition: 'publish' });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

export const websiteToken = (t: TestTenant, ratePerMinute?: number) => t.token({ role: 'website', name: 'Website', ratePerMinute });

/** The body of POST /family-applications. */
export type FamilyBody = RequestBody<'post', '/family-applications'>;

/** A family's body: one child per entry of `wishes` (a list of offer uuids each). */
export function familyBody(wishes: string[][], o: { email?: string; emailVerified?: boolean; children?: Record<string, unknown>[] } = {}): FamilyBody {
  return {
    account: { email: o.email ?? `familie-${unique()}@example.org`, firstname: 'Katrin', lastname: 'Müller', phone: '0170 1234567', street: 'Hauptstr. 1', zip: '12345', city: 'Musterstadt' },
    ...(o.emailVerified !== undefined ? { emailVerified: o.emailVerified } : {}),
    participants: wishes.map((offers, i) => ({
      firstname: ['Emma', 'Paul', 'Mia', 'Ben'][i % 4], lastname: 'Müller', dateOfBirth: '2018-03-0' + ((i % 9) + 1),
      ...(o.children?.[i] ?? {}),
      wishes: offers.map((offer) => ({ offer })),
    })),
  };
}

export async function submit(t: TestTenant, token: string, body: unknown) {
  return t.post('/family-applications', body, { token });
}

export async function submitOk(t: TestTenant, token: string, body: unknown) {
  const res = await submit(t, token, body);
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export type MailRow = { uuid: string; kind: string; recipient: string; subject: string; body: string; payload: Record<string, unknown>; sentAt: string | null };

/** The tenant's outbox rows of one kind, oldest first. */
export async function mails(h: Harness, t: TestTenant, kind?: string): Promise<MailRow[]> {
  const res = await sql<MailRow>`select uuid, kind, recipient, subject, body, payload, sent_at as "sentAt" from ${qualified(t.tenant.schema, 'outbox')}
    where ${kind ?? null}::text is null or kind = ${kind ?? null} order by created_at, uuid`.execute(executorOf(h.orm));
  return res.rows;
}

/** The token of a confirmation or consent link in a mail's text. */
export function linkToken(text: string, path: 'bestaetigen' | 'einwilligen' = 'bestaetigen'): string {
  const m = new RegExp(`/anmeldung/${path}/([1-9A-HJ-NP-Za-km-z]+)`).exec(text);
  if (!m) throw new Error(`no ${path} link in: ${text.slice(0, 500)}`);
  return m[1]!;
}

/** Moves every open confirmation link of the tenant `hours` into the past (the 72 h expiry, without waiting). */
export async function ageLinks(h: Harness, t: TestTenant, hours: number): Promise<void> {
  await sql`update ${qualified(t.tenant.schema, 'family_confirmations')} set expires_at = expires_at - make_interval(hours => ${hours}),
    created_at = created_at - make_interval(hours => ${hours})`.execute(executorOf(h.orm));
}
