import { beforeAll, describe, expect, it } from 'vitest';
import { useHarness, type Schema } from '../../harness/harness.js';
import { createOffer, createParticipant, expectDenseSorting, firstcome, list, newApplication } from './helpers.js';

// Zero overbooking under a rush (spec 4.3 "Create", D10): fifty families applying for the last places of one
// offer at the same second get exactly as many confirmations as places, distinct sorting values, and no 5xx.
// Writers of one offer take turns on the offer's row lock in PostgreSQL, not in process memory.
let edition: Schema<'Edition'>;

const FAMILIES = 50;
const PLACES = 10;
const TAKEN = 7;

const { h, t } = useHarness();
beforeAll(async () => {
  edition = await firstcome(t);
});

async function rush(round: number): Promise<number> {
  const offer = await createOffer(t, { edition: edition.uuid, maxParticipants: PLACES, name: `Ansturm ${round}` });
  for (let i = 0; i < TAKEN; i++) await newApplication(t, offer.uuid);
  const children = await Promise.all(Array.from({ length: FAMILIES }, () => createParticipant(t)));

  const started = performance.now();
  const responses = await Promise.all(children.map((c) => t.post('/attendances', { offer: offer.uuid, participant: c.uuid })));
  const ms = performance.now() - started;

  expect(responses.filter((r) => r.status >= 500)).toEqual([]);
  expect(responses.map((r) => r.status)).toEqual(children.map(() => 201));
  const statuses = responses.map((r) => r.body.status);
  expect(statuses.filter((s) => s === 'confirmed')).toHaveLength(PLACES - TAKEN);
  expect(statuses.filter((s) => s === 'waitlisted')).toHaveLength(FAMILIES - (PLACES - TAKEN));

  const items = await list(t, offer.uuid);
  expect(items).toHaveLength(TAKEN + FAMILIES);
  expectDenseSorting(items);
  expect(new Set(items.map((a) => a.sorting)).size).toBe(items.length);
  expect(items.filter((a) => a.status === 'confirmed')).toHaveLength(PLACES);
  expect(items.slice(0, PLACES).every((a) => a.status === 'confirmed')).toBe(true);
  const view = (await t.get(`/offers/${offer.uuid}`)).body;
  expect(view).toMatchObject({ vacancies: 0, fullyBooked: true });
  expect(view.attendances).toMatchObject({ confirmed: PLACES, waitlisted: FAMILIES - (PLACES - TAKEN) });
  return ms;
}

describe('a rush of fifty families on the last three places of one offer', () => {
  it('never overbooks, numbers the list 1..n and never fails, round after round', async () => {
    const rounds = 5;
    const timings: number[] = [];
    for (let round = 1; round <= rounds; round++) timings.push(await rush(round));
    const rates = timings.map((ms) => Math.round((FAMILIES / ms) * 1000));
    console.log(`[rush] ${FAMILIES} concurrent POST /attendances on one offer, ${rounds} rounds: ` +
      `${timings.map((ms) => `${Math.round(ms)} ms`).join(', ')} → ${rates.join(', ')} applications/s (no overbooking)`);
  }, 120_000);
});
