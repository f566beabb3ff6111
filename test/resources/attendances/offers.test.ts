import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, useHarness, type Schema } from '../../harness/harness.js';
import { QUEUES } from '../../../src/platform/jobs/queue.js';
import {
  createAccount, createOffer, createOrganiser, createParticipant, apply, firstcome, list, lot, newApplication, outbox, transitionOk,
} from './helpers.js';

// What applications change on offers (spec 2.3 vacancies/fullyBooked, D10 `attendances` counts) and the
// refill of spec 4.2 / D5 (`POST /offers/{uuid}/refill`, 202).
let byLot: Schema<'Edition'>;

const { h, t } = useHarness();
beforeAll(async () => {
  byLot = await lot(t);
});

const ZERO = {
  waiting: 0, confirmed: 0, waitlisted: 0, rejected: 0, withdrawn: 0, unfulfilled: 0, participated: 0, noshow: 0,
  email_unconfirmed: 0, consents_outstanding: 0,
};

describe('offers show real vacancies, fullyBooked and token-view counts', () => {
  it('counts every state; confirmed ones (held back too) take places; the list and one offer agree', async () => {
    const offer = await createOffer(t, { edition: byLot.uuid, maxParticipants: 3, name: 'Zählung' });
    await t.post(`/offers/${offer.uuid}/transition`, { transition: 'publish' });
    await newApplication(t, offer.uuid, { status: 'confirmed' });
    await newApplication(t, offer.uuid, { status: 'confirmed', commit: false });
    await newApplication(t, offer.uuid, { status: 'waitlisted' });
    await newApplication(t, offer.uuid);
    const r = await newApplication(t, offer.uuid);
    await transitionOk(t, r.uuid, 'reject');
    const view = (await t.get(`/offers/${offer.uuid}`)).body;
    expect(view).toMatchObject({ maxParticipants: 3, vacancies: 1, fullyBooked: false });
    expect(view.attendances).toEqual({ ...ZERO, confirmed: 2, waitlisted: 1, waiting: 1, rejected: 1 });
    const listed = (await t.get(`/offers?edition=${byLot.uuid}`)).body.find((o) => o.uuid === offer.uuid);
    expect(listed).toEqual(view);
    // Anonymous callers see vacancies and fullyBooked, never the counts.
    const anon = (await t.get(`/offers/${offer.uuid}`, { token: null })).body;
    expect(anon).toMatchObject({ vacancies: 1, fullyBooked: false });
    expect(anon).not.toHaveProperty('attendances');
    await newApplication(t, offer.uuid, { status: 'confirmed' });
    expect((await t.get(`/offers/${offer.uuid}`, { token: null })).body).toMatchObject({ vacancies: 0, fullyBooked: true });
    await newApplication(t, offer.uuid, { status: 'confirmed' }); // set directly beyond the places
    expect((await t.get(`/offers/${offer.uuid}`)).body).toMatchObject({ vacancies: 0, fullyBooked: true });
  });

  it('an unlimited offer has no vacancies and is never fully booked; an empty one counts zeros', async () => {
    const offer = await createOffer(t, { edition: byLot.uuid, maxParticipants: null });
    expect((await t.get(`/offers/${offer.uuid}`)).body.attendances).toEqual(ZERO);
    await newApplication(t, offer.uuid, { status: 'confirmed' });
    const view = (await t.get(`/offers/${offer.uuid}`)).body;
    expect(view).not.toHaveProperty('vacancies');
    expect(view.fullyBooked).toBe(false);
    expect(view.attendances!.confirmed).toBe(1);
  });

  it('cancel with notify e-mails the confirmed families once', async () => {
    const u = await h.tenant();
    const e = await lot(u);
    const offer = await createOffer(u, { edition: e.uuid, name: 'Absagefahrt' });
    await u.post(`/offers/${offer.uuid}/transition`, { transition: 'publish' });
    const family = await createAccount(u, { email: 'eltern@example.org' });
    for (const firstname of ['A', 'B']) await apply(u, offer.uuid, (await createParticipant(u, { firstname, account: family.uuid })).uuid, { status: 'confirmed' });
    await newApplication(u, offer.uuid, { status: 'waitlisted' }, { email: 'warte@example.org' });
    expect((await u.post(`/offers/${offer.uuid}/transition`, { transition: 'cancel', notify: true })).status).toBe(200);
    expect((await outbox(h, u)).map((m) => [m.recipient, m.kind])).toEqual([['eltern@example.org', 'offer_cancelled']]);
  });

  // Issue 22.1, spec 2.2: a held-back decision has not been told to the family, so neither is its offer's fate.
  it('cancel and relaunch with notify leave out the families whose confirmation is held back', async () => {
    const u = await h.tenant();
    const e = await firstcome(u);
    const offer = await createOffer(u, { edition: e.uuid, name: 'Geheimfahrt' });
    await u.post(`/offers/${offer.uuid}/transition`, { transition: 'publish' });
    await newApplication(u, offer.uuid, { status: 'confirmed' }, { email: 'bestaetigt@example.org' });
    const held = await newApplication(u, offer.uuid, { status: 'confirmed', commit: false }, { email: 'zurueckgehalten@example.org' });
    expect(held.heldBack).toBe(true);
    expect((await u.post(`/offers/${offer.uuid}/transition`, { transition: 'cancel', notify: true })).status).toBe(200);
    expect((await u.post(`/offers/${offer.uuid}/transition`, { transition: 'relaunch', notify: true })).status).toBe(200);
    expect((await outbox(h, u)).map((m) => [m.recipient, m.kind]).sort()).toEqual([
      ['bestaetigt@example.org', 'offer_cancelled'], ['bestaetigt@example.org', 'offer_relaunched'],
    ]);
  });
});

describe('a larger maxParticipants (D10)', () => {
  it('moves the waiting list up during a running first-come phase and e-mails those families', async () => {
    const u = await h.tenant();
    const e = await firstcome(u);
    const offer = await createOffer(u, { edition: e.uuid, maxParticipants: 1 });
    await newApplication(u, offer.uuid);
    const w1 = await newApplication(u, offer.uuid, {}, { email: 'eins@example.org' });
    const w2 = await newApplication(u, offer.uuid, {}, { email: 'zwei@example.org' });
    const w3 = await newApplication(u, offer.uuid, {}, { email: 'drei@example.org' });
    const res = await u.patch(`/offers/${offer.uuid}`, { maxParticipants: 3 });
    expect(res.body).toMatchObject({ vacancies: 2, fullyBooked: false }); // as it is now; the refill is a job
    await h.jobs.drain();
    const after = (await u.get(`/offers/${offer.uuid}`)).body;
    expect(after).toMatchObject({ vacancies: 0, fullyBooked: true });
    expect(after.attendances).toMatchObject({ confirmed: 3, waitlisted: 1 });
    expect((await u.get(`/attendances/${w1.uuid}`)).body.status).toBe('confirmed');
    expect((await u.get(`/attendances/${w2.uuid}`)).body.status).toBe('confirmed');
    expect((await u.get(`/attendances/${w3.uuid}`)).body.status).toBe('waitlisted');
    expect((await outbox(h, u)).map((m) => m.recipient)).toEqual(['eins@example.org', 'zwei@example.org']);
    // Smaller again: nobody loses a place.
    await u.patch(`/offers/${offer.uuid}`, { maxParticipants: 1 });
    expect((await list(u, offer.uuid)).filter((a) => a.status === 'confirmed')).toHaveLength(3);
  });

  it('does not move anyone in a lot edition', async () => {
    const offer = await createOffer(t, { edition: byLot.uuid, maxParticipants: 1 });
    await newApplication(t, offer.uuid, { status: 'confirmed' });
    const w = await newApplication(t, offer.uuid, { status: 'waitlisted' });
    await t.patch(`/offers/${offer.uuid}`, { maxParticipants: 5 });
    expect((await t.get(`/attendances/${w.uuid}`)).body.status).toBe('waitlisted');
  });
});

describe('POST /offers/{uuid}/refill', () => {
  it('fills free places from the waiting list in list order, e-mails them (notify defaults to true), 202 with the offer', async () => {
    const u = await h.tenant();
    const e = await lot(u);
    const offer = await createOffer(u, { edition: e.uuid, maxParticipants: 3 });
    await newApplication(u, offer.uuid, { status: 'confirmed' });
    const w1 = await newApplication(u, offer.uuid, { status: 'waitlisted' }, { email: 'w1@example.org' });
    const w2 = await newApplication(u, offer.uuid, { status: 'waitlisted' }, { email: 'w2@example.org' });
    const w3 = await newApplication(u, offer.uuid, { status: 'waitlisted' }, { email: 'w3@example.org' });
    const waiting = await newApplication(u, offer.uuid);
    // A request without a body or content type (optional-body action).
    const res = await u.request('POST', `/offers/${offer.uuid}/refill`);
    expect(res.status, res.text).toBe(202);
    // Spec 1.11: 202 with the offer as it is now; the refill is a job, one queued per offer (D9).
    expect(res.body).toMatchObject({ uuid: offer.uuid, vacancies: 2, fullyBooked: false });
    expect((await u.request('POST', `/offers/${offer.uuid}/refill`)).status).toBe(202);
    expect(h.jobs.pending().filter((j) => j.name === QUEUES.offerRefill && j.data.tenant === u.slug)).toEqual([
      { name: QUEUES.offerRefill, data: { tenant: u.slug, offer: offer.uuid, notify: true } },
    ]);
    await h.jobs.drain();
    expect((await u.get(`/offers/${offer.uuid}`)).body).toMatchObject({ vacancies: 0, fullyBooked: true });
    const items = await list(u, offer.uuid);
    expect(items.map((a) => [a.uuid, a.status])).toEqual([
      [items[0].uuid, 'confirmed'], [w1.uuid, 'confirmed'], [w2.uuid, 'confirmed'], [w3.uuid, 'waitlisted'], [waiting.uuid, 'waiting'],
    ]);
    expect(items[1]).toMatchObject({ heldBack: false, decisionReason: 'Von der Warteliste nachgerückt' });
    expect((await outbox(h, u)).map((m) => m.recipient)).toEqual(['w1@example.org', 'w2@example.org']);
    // Idempotent: nothing left to do.
    expect((await u.post(`/offers/${offer.uuid}/refill`, { notify: true })).status).toBe(202);
    await h.jobs.drain();
    expect(await outbox(h, u)).toHaveLength(2);
  });

  it('notify: false moves up without e-mails; an unlimited offer takes every waitlisted application', async () => {
    const u = await h.tenant();
    const e = await lot(u);
    const offer = await createOffer(u, { edition: e.uuid, maxParticipants: null });
    await newApplication(u, offer.uuid, { status: 'waitlisted' }, { email: 'a@example.org' });
    await newApplication(u, offer.uuid, { status: 'waitlisted' }, { email: 'b@example.org' });
    expect((await u.post(`/offers/${offer.uuid}/refill`, { notify: false })).status).toBe(202);
    await h.jobs.drain();
    expect((await list(u, offer.uuid)).map((a) => a.status)).toEqual(['confirmed', 'confirmed']);
    expect(await outbox(h, u)).toEqual([]);
  });

  it('admins only; unknown offers are 404; bad bodies 422', async () => {
    const host = await createOrganiser(t);
    const offer = await createOffer(t, { edition: byLot.uuid, hosts: [host.uuid] });
    expectProblem(await t.post(`/offers/${offer.uuid}/refill`, {}, { token: await t.token({ role: 'organiser', organiserIds: [host.uuid] }) }), 403);
    expectProblem(await t.post(`/offers/${offer.uuid}/refill`, {}, { token: await t.token({ access: 'read' }) }), 403);
    expectProblem(await t.post('/offers/6f1c3f0e-0000-4000-8000-000000000001/refill', {}), 404);
    expectProblem(await t.post(`/offers/${offer.uuid}/refill`, { notify: 'ja' }), 422);
  });
});
