import { expect } from 'vitest';
import type { Harness, TestTenant } from '../../harness/harness.js';
import { apply, createAccount, createOffer, createParticipant, list, lot, outbox } from '../attendances/helpers.js';

// Builders for the lot and commit tests (D7), through the real endpoints.
export { apply, createAccount, createOffer, createParticipant, list, lot, outbox };

/** A date on day `d` of July 2027, 10-12 Berlin time: offers on different days never overlap. */
export const july = (d: number, from = 10, to = 12) => [{
  begin: `2027-07-${String(d).padStart(2, '0')}T${String(from).padStart(2, '0')}:00:00+02:00`,
  end: `2027-07-${String(d).padStart(2, '0')}T${String(to).padStart(2, '0')}:00:00+02:00`,
}];

/** An offer of `edition` with `places` places on July `day`. */
export function offerOn(t: TestTenant, edition: string, day: number, places: number | null, extra: Record<string, unknown> = {}) {
  return createOffer(t, { edition, maxParticipants: places, dates: july(day), ...extra });
}

/** `participant` applies for `offer` (waiting in a lot edition), with `userPriority` when given. */
export async function applyLot(t: TestTenant, offer: string, participant: string, userPriority?: number) {
  const a = await apply(t, offer, participant);
  expect(a.status).toBe('waiting');
  if (userPriority === undefined) return a;
  const res = await t.patch(`/attendances/${a.uuid}`, { userPriority });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** POST allocate; expects 202 and returns the edition. */
export async function allocate(t: TestTenant, edition: string, body?: Record<string, unknown>) {
  const res = body === undefined ? await t.request('POST', `/editions/${edition}/allocate`) : await t.post(`/editions/${edition}/allocate`, body);
  expect(res.status, res.text).toBe(202);
  return res.body;
}

/** POST commit; expects 202 and returns the edition. */
export async function commit(t: TestTenant, edition: string, body?: Record<string, unknown>) {
  const res = body === undefined ? await t.request('POST', `/editions/${edition}/commit`) : await t.post(`/editions/${edition}/commit`, body);
  expect(res.status, res.text).toBe(202);
  return res.body;
}

/** Allocates and runs the background job now (the harness's in-memory queue); returns the edition after. */
export async function allocateNow(h: Harness, t: TestTenant, edition: string, body?: Record<string, unknown>) {
  await allocate(t, edition, body);
  expect(await h.jobs.drain()).toBeGreaterThan(0);
  return getEdition(t, edition);
}

export async function getEdition(t: TestTenant, edition: string) {
  const res = await t.get(`/editions/${edition}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Every application of the edition, newest first. */
export async function applicationsOf(t: TestTenant, edition: string) {
  const res = await t.get(`/attendances?edition=${edition}&itemsPerPage=200`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** The draw position recorded in a lot decision reason ("… (Runde r, Ziehung n)"). */
export function drawPosition(decisionReason: string): number {
  const m = /Ziehung (\d+)\)/.exec(decisionReason);
  if (!m) throw new Error(`no draw position in "${decisionReason}"`);
  return Number(m[1]);
}

/** Outbox rows of the tenant of a given kind. */
export async function mailsOfKind(h: Harness, t: TestTenant, kind: string): Promise<Awaited<ReturnType<typeof outbox>>> {
  return (await outbox(h, t)).filter((m) => m.kind === kind);
}
