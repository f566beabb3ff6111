import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, useHarness, type Schema } from '../../harness/harness.js';
import { uuidToBase58 } from '../../../src/platform/http/ids.js';
import {
  apply, createAccount, createOffer, createParticipant, expectDenseSorting, firstcome, list, lot, newApplication, outbox,
} from './helpers.js';

// POST /attendances and GET /attendances/{uuid} (spec 2.2, 3.2, 4.3 "Create"; D10 "Applications").
let fcfs: Schema<'Edition'>;
let byLot: Schema<'Edition'>;

const FIELDS = [
  'uuid', 'status', 'offer', 'edition', 'participant', 'participantAge', 'participantPseudonym', 'account', 'createdAt', 'modifiedAt', 'statusChangedAt', 'confirmedAt',
  'paid', 'payable', 'fee', 'sorting', 'userPriority', 'allAlternateDates', 'consentOutstanding', 'heldBack', 'decisionReason',
  'createdByAdmin', 'answers', 'files', 'receipts', 'transitions', 'piiMasked',
];
const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+0[12]:00$/;

const { h, t } = useHarness();
beforeAll(async () => {
  fcfs = await firstcome(t, { name: 'Sommer FCFS' });
  byLot = await lot(t, { name: 'Sommer Los' });
});

describe('POST /attendances without status: the edition’s procedure decides', () => {
  it('first come first served confirms while places remain, then waitlists', async () => {
    const offer = await createOffer(t, { edition: fcfs.uuid, maxParticipants: 2, fee: 1200, name: 'Kanu' });
    const family = await createAccount(t, { firstname: 'Erika', lastname: 'Muster' });
    const child = await createParticipant(t, { firstname: 'Kim', lastname: 'Muster', account: family.uuid });
    const first = await apply(t, offer.uuid, child.uuid);
    expect(Object.keys(first).every((k) => FIELDS.includes(k))).toBe(true);
    expect(first).toMatchObject({
      status: 'confirmed',
      offer: { uuid: offer.uuid, name: 'Kanu', alias: offer.alias },
      edition: { uuid: fcfs.uuid, name: 'Sommer FCFS', alias: fcfs.alias },
      participant: { uuid: child.uuid, name: 'Kim Muster' },
      account: { uuid: family.uuid, name: 'Erika Muster' },
      paid: false, payable: true, fee: 1200, sorting: 1, allAlternateDates: true, consentOutstanding: false,
      heldBack: false, createdByAdmin: true, answers: [], files: [], receipts: [], piiMasked: false,
      transitions: ['waitlist', 'reject', 'withdraw', 'reset', 'unfulfill', 'participated', 'noshow'],
    });
    expect(first.decisionReason).toMatch(/Platz/);
    for (const k of ['createdAt', 'modifiedAt', 'statusChangedAt', 'confirmedAt'] as const) expect(first[k]).toMatch(TS);
    expect(first).not.toHaveProperty('userPriority');

    const second = await newApplication(t, offer.uuid);
    expect(second).toMatchObject({ status: 'confirmed', sorting: 2 });
    const third = await newApplication(t, offer.uuid);
    expect(third).toMatchObject({ status: 'waitlisted', sorting: 3, payable: false });
    expect(third).not.toHaveProperty('confirmedAt');
    expect(third.decisionReason).toMatch(/Warteliste/);
    expect(third.transitions).toEqual(['confirm', 'reject', 'withdraw', 'reset', 'unfulfill', 'participated']);
    // The account omits nothing: a participant without an account has no `account`.
    expect(second).not.toHaveProperty('account');
  });

  it('a lot procedure leaves it waiting; waiting shows await_email and await_consents', async () => {
    const offer = await createOffer(t, { edition: byLot.uuid, maxParticipants: 5 });
    const a = await newApplication(t, offer.uuid);
    expect(a).toMatchObject({ status: 'waiting', payable: false, heldBack: false });
    expect(a.transitions).toEqual(['confirm', 'waitlist', 'reject', 'withdraw', 'unfulfill', 'await_email', 'await_consents']);
    expect(a.decisionReason).toMatch(/Losverfahren/);
  });

  it('uses the effective procedure: a running lot application phase in a first-come edition', async () => {
    const now = Date.now();
    const edition = await firstcome(t, {
      tasks: [{ type: 'application_system', applicationSystem: 'lot', begin: new Date(now - 86_400_000).toISOString(), end: new Date(now + 86_400_000).toISOString() }],
    });
    const offer = await createOffer(t, { edition: edition.uuid });
    expect((await newApplication(t, offer.uuid)).status).toBe('waiting');
  });

  it('confirms without limit on an offer with unlimited places', async () => {
    const offer = await createOffer(t, { edition: fcfs.uuid, maxParticipants: null });
    for (let i = 0; i < 3; i++) expect((await newApplication(t, offer.uuid)).status).toBe('confirmed');
  });
});

describe('POST /attendances with status, commit, notify, allAlternateDates', () => {
  it('an explicit status sets the state directly, also beyond the places', async () => {
    const offer = await createOffer(t, { edition: fcfs.uuid, maxParticipants: 1 });
    expect((await newApplication(t, offer.uuid, { status: 'waiting' })).status).toBe('waiting');
    expect((await newApplication(t, offer.uuid, { status: 'waitlisted' })).status).toBe('waitlisted');
    const c1 = await newApplication(t, offer.uuid, { status: 'confirmed' });
    const c2 = await newApplication(t, offer.uuid, { status: 'confirmed' });
    expect([c1.status, c2.status]).toEqual(['confirmed', 'confirmed']);
    expect(c1).not.toHaveProperty('decisionReason');
    const items = await list(t, offer.uuid);
    expect(items.map((a) => a.status)).toEqual(['confirmed', 'confirmed', 'waitlisted', 'waiting']);
    expectDenseSorting(items);
  });

  it('commit: false holds the decision back: heldBack, no fee due; notify must then be false (422)', async () => {
    const offer = await createOffer(t, { edition: fcfs.uuid, fee: 900 });
    const held = await newApplication(t, offer.uuid, { commit: false });
    expect(held).toMatchObject({ status: 'confirmed', heldBack: true, payable: false, fee: 900 });
    const child = await createParticipant(t, { email: 'kind@example.org' });
    const p = expectProblem(await t.post('/attendances', { offer: offer.uuid, participant: child.uuid, commit: false, notify: true }), 422);
    expect(p.violations?.[0].propertyPath).toBe('notify');
    expect((await t.get(`/attendances?participant=${child.uuid}`)).body).toEqual([]);
  });

  it('notify queues one e-mail to the account (else the participant’s own address), none without notify', async () => {
    const u = await h.tenant();
    const e = await firstcome(u);
    const offer = await createOffer(u, { edition: e.uuid, name: 'Zirkus', maxParticipants: 1 });
    const family = await createAccount(u, { email: 'eltern@example.org' });
    const child = await createParticipant(u, { firstname: 'Lea', account: family.uuid, email: 'lea@example.org' });
    await apply(u, offer.uuid, child.uuid, { notify: true });
    const own = await createParticipant(u, { firstname: 'Tom', email: 'tom@example.org' });
    await apply(u, offer.uuid, own.uuid, { notify: true });
    await newApplication(u, offer.uuid, { notify: false }, { email: 'still@example.org' });
    await newApplication(u, offer.uuid, { notify: true }); // no address: nothing to send
    const mails = await outbox(h, u);
    expect(mails.map((m) => [m.recipient, m.kind])).toEqual([
      ['eltern@example.org', 'attendance_confirmed'],
      ['tom@example.org', 'attendance_waitlisted'],
    ]);
    expect(mails[0].subject).toBe('Platzzusage: Zirkus');
    expect(mails[0].body).toContain('Lea');
    expect(mails[1].subject).toBe('Warteliste: Zirkus');
  });

  it('allAlternateDates defaults to true and can be sent as false', async () => {
    const offer = await createOffer(t, { edition: fcfs.uuid });
    expect((await newApplication(t, offer.uuid, { allAlternateDates: false })).allAlternateDates).toBe(false);
  });

  it('copies the offer’s fee at creation; a free offer gives fee 0 and is never payable', async () => {
    const free = await createOffer(t, { edition: fcfs.uuid, fee: null });
    expect(await newApplication(t, free.uuid)).toMatchObject({ status: 'confirmed', fee: 0, payable: false });
    const paidOffer = await createOffer(t, { edition: fcfs.uuid, fee: 700 });
    const a = await newApplication(t, paidOffer.uuid);
    await t.patch(`/offers/${paidOffer.uuid}`, { fee: 9900 });
    expect((await t.get(`/attendances/${a.uuid}`)).body.fee).toBe(700);
  });

  it('accepts base58 identifiers in the body and answers with RFC 4122 ones', async () => {
    const offer = await createOffer(t, { edition: fcfs.uuid });
    const child = await createParticipant(t);
    const a = await apply(t, uuidToBase58(offer.uuid), uuidToBase58(child.uuid));
    expect(a.offer.uuid).toBe(offer.uuid);
    expect(a.participant!.uuid).toBe(child.uuid);
  });
});

describe('an existing application of the participant for the offer is reused', () => {
  it('returns the same application with 201, decided again as if new', async () => {
    const offer = await createOffer(t, { edition: fcfs.uuid, maxParticipants: 1 });
    const child = await createParticipant(t);
    const first = await apply(t, offer.uuid, child.uuid, { status: 'waitlisted' });
    const other = await newApplication(t, offer.uuid); // takes the only place
    expect(other.status).toBe('confirmed');
    const again = await apply(t, offer.uuid, child.uuid);
    expect(again.uuid).toBe(first.uuid);
    expect(again.status).toBe('waitlisted'); // fully booked: decided again, waitlisted
    await t.post(`/attendances/${other.uuid}/transition`, { transition: 'withdraw' });
    await h.jobs.drain();
    // The running first-come phase moved the waiting list up (D10, a job): the child now has the place.
    expect((await t.get(`/attendances/${first.uuid}`)).body.status).toBe('confirmed');
    const withdrawnOnce = await apply(t, offer.uuid, other.participant!.uuid);
    expect(withdrawnOnce.uuid).toBe(other.uuid);
    expect(withdrawnOnce.status).toBe('waitlisted'); // withdrawn, applied again: fully booked
    const reused = await apply(t, offer.uuid, other.participant!.uuid, { status: 'confirmed', commit: false });
    expect(reused).toMatchObject({ uuid: other.uuid, status: 'confirmed', heldBack: true });
    const items = await list(t, offer.uuid);
    expect(items).toHaveLength(2);
    expectDenseSorting(items);
  });

  it('re-deciding a confirmed application counts its own place as free', async () => {
    const offer = await createOffer(t, { edition: fcfs.uuid, maxParticipants: 1 });
    const a = await newApplication(t, offer.uuid);
    const again = await apply(t, offer.uuid, a.participant!.uuid);
    expect(again).toMatchObject({ uuid: a.uuid, status: 'confirmed', sorting: 1, statusChangedAt: a.statusChangedAt });
  });
});

describe('POST /attendances bad input', () => {
  let offer: Schema<'Offer'>;
  let child: Schema<'Participant'>;
  beforeAll(async () => {
    offer = await createOffer(t, { edition: fcfs.uuid });
    child = await createParticipant(t);
  });

  it('an unknown participant is 422 naming it', async () => {
    const p = expectProblem(await t.post('/attendances', { offer: offer.uuid, participant: '6f1c3f0e-0000-4000-8000-000000000001' }), 422);
    expect(p.detail).toMatch(/^participant: /);
    expect(p.type).toBe('/errors/422');
  });

  it('an offer of another tenant is 422 naming it', async () => {
    const other = await h.tenant();
    const foreign = await createOffer(other);
    const p = expectProblem(await t.post('/attendances', { offer: foreign.uuid, participant: child.uuid }), 422);
    expect(p.detail).toMatch(/^offer: /);
  });

  it('status: participated on create is 422 with a violation', async () => {
    const p = expectProblem(await t.post('/attendances', { offer: offer.uuid, participant: child.uuid, status: 'participated' }), 422);
    expect(p.violations?.map((v) => v.propertyPath)).toEqual(['status']);
  });

  it('missing or malformed identifiers and wrongly typed flags are 422', async () => {
    const p = expectProblem(await t.post('/attendances', { participant: 'kein-kind', notify: 'yes' }), 422);
    expect(p.violations?.map((v) => v.propertyPath).sort()).toEqual(['notify', 'offer', 'participant']);
  });

  it('needs ROLE_ADMIN and a read-write token; no token is 401', async () => {
    const body = { offer: offer.uuid, participant: child.uuid };
    expectProblem(await t.post('/attendances', body, { token: await t.token({ access: 'read' }) }), 403);
    expectProblem(await t.post('/attendances', body, { token: await t.token({ role: 'organiser', organiserIds: [] }) }), 403);
    expectProblem(await t.post('/attendances', body, { token: null }), 401);
    expect((await t.get(`/attendances?participant=${child.uuid}`)).body).toEqual([]);
  });
});

describe('GET /attendances/{uuid}', () => {
  it('returns one application, by UUID or base58; unknown or malformed ids are 404', async () => {
    const offer = await createOffer(t, { edition: fcfs.uuid });
    const a = await newApplication(t, offer.uuid);
    expect((await t.get(`/attendances/${a.uuid}`)).body).toEqual(a);
    expect((await t.get(`/attendances/${uuidToBase58(a.uuid)}`)).body.uuid).toBe(a.uuid);
    const read = await t.token({ access: 'read' });
    expect((await t.get(`/attendances/${a.uuid}`, { token: read })).status).toBe(200);
    expectProblem(await t.get('/attendances/6f1c3f0e-0000-4000-8000-000000000001'), 404);
    expectProblem(await t.get('/attendances/nope'), 404);
    expectProblem(await t.get(`/attendances/${a.uuid}`, { token: null }), 401);
    expect((await t.get(`/attendances/${a.uuid}`)).headers['cache-control']).toBe('private, no-store');
  });
});
