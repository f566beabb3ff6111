import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, useHarness, type TestTenant, type Schema } from '../../harness/harness.js';
import { NOT_ALLOWED, SPEC_MATRIX, TRANSITIONS } from '../../fixtures/spec-transitions.js';
import {
  apply, createAccount, createOffer, createOrganiser, createParticipant, expectDenseSorting, firstcome, list, lot,
  newApplication, outbox, setColumns, transition, transitionOk,
} from './helpers.js';

// POST /attendances/{uuid}/transition (spec 3.2, 3.4, 4.3 "Transition"; D10).
let byLot: Schema<'Edition'>;

const { h, t } = useHarness();
beforeAll(async () => {
  byLot = await lot(t);
});

// Spec 3.2 as a table independent of src/domain (test/fixtures/spec-transitions.ts).
const MATRIX = SPEC_MATRIX;
const _ = NOT_ALLOWED;
const C = 'confirmed', WL = 'waitlisted', R = 'rejected', WD = 'withdrawn', W = 'waiting';
const possible = (state: string) => TRANSITIONS.filter((_t, i) => MATRIX[state][i] !== _);
const shown = (state: string) => [...possible(state), ...(state === 'waiting' ? ['await_email', 'await_consents'] : [])];

/** An application in `state`, reached through the API where a client can reach it (system-only states by SQL). */
async function inState(offer: string, state: string): Promise<Schema<'Attendance'>> {
  const via: Record<string, [string, string | null]> = {
    waiting: ['waiting', null], confirmed: ['confirmed', null], waitlisted: ['waitlisted', null],
    rejected: ['waiting', 'reject'], withdrawn: ['waiting', 'withdraw'], unfulfilled: ['waiting', 'unfulfill'],
    participated: ['confirmed', 'participated'], noshow: ['confirmed', 'noshow'],
    email_unconfirmed: ['waiting', null], consents_outstanding: ['waiting', null],
  };
  const [status, step] = via[state];
  let a = await newApplication(t, offer, { status });
  if (step) a = await transitionOk(t, a.uuid, step);
  if (state === 'email_unconfirmed' || state === 'consents_outstanding') {
    await setColumns(h, t, a.uuid, { status: state });
    a = (await t.get(`/attendances/${a.uuid}`)).body;
  }
  expect(a.status).toBe(state);
  expect(a.transitions).toEqual(shown(state));
  return a;
}

describe('the full matrix of spec 3.2: every transition from every state', () => {
  for (const state of Object.keys(MATRIX)) {
    it(`from ${state}`, async () => {
      const offer = await createOffer(t, { edition: byLot.uuid, maxParticipants: null });
      for (const [i, name] of TRANSITIONS.entries()) {
        const a = await inState(offer.uuid, state);
        const res = await transition(t, a.uuid, name);
        const target = MATRIX[state][i];
        if (target === _) {
          const p = expectProblem(res, 409);
          expect(p.detail).toContain(`"${state}"`);
          const listed = possible(state);
          expect(p.detail).toContain(`Possible transitions: ${listed.length ? listed.join(', ') : 'none'}.`);
          expect(p.detail).not.toMatch(/await_/);
          expect((await t.get(`/attendances/${a.uuid}`)).body.status).toBe(state);
        } else {
          expect(res.status, `${state} --${name}--> ${res.text}`).toBe(200);
          expect(res.body.status).toBe(target);
          expect(res.body.transitions).toEqual(shown(target));
          expect(res.body.heldBack).toBe(false);
          if (target === 'confirmed') expect(res.body.confirmedAt).toBeDefined();
        }
      }
      expectDenseSorting(await list(t, offer.uuid));
    });
  }
});

describe('transition requests that are refused before the state is looked at', () => {
  let a: Schema<'Attendance'>;
  beforeAll(async () => {
    const offer = await createOffer(t, { edition: byLot.uuid });
    a = await newApplication(t, offer.uuid);
  });

  it('await_email and await_consents are system-only: 422, also from waiting', async () => {
    for (const name of ['await_email', 'await_consents']) {
      const p = expectProblem(await transition(t, a.uuid, name), 422);
      expect(p.violations?.[0].propertyPath).toBe('transition');
      expect(p.detail).toMatch(/system/);
    }
    expect((await t.get(`/attendances/${a.uuid}`)).body.status).toBe('waiting');
  });

  it('an unknown or missing transition is 422', async () => {
    expectProblem(await transition(t, a.uuid, 'fly'), 422);
    const p = expectProblem(await t.post(`/attendances/${a.uuid}/transition`, {}), 422);
    expect(p.violations?.[0].propertyPath).toBe('transition');
  });

  it('notify: true with commit: false is 422', async () => {
    const p = expectProblem(await transition(t, a.uuid, 'confirm', { notify: true, commit: false }), 422);
    expect(p.violations?.[0].propertyPath).toBe('notify');
  });

  it('an unknown application is 404; read tokens and anonymous callers may not', async () => {
    expectProblem(await transition(t, '6f1c3f0e-0000-4000-8000-000000000001', 'confirm'), 404);
    expectProblem(await transition(t, a.uuid, 'confirm', {}, await t.token({ access: 'read' })), 403);
    expectProblem(await t.post(`/attendances/${a.uuid}/transition`, { transition: 'confirm' }, { token: null }), 401);
  });
});

describe('side effects', () => {
  it('notify queues the family’s e-mail in the same transaction; no e-mail without notify', async () => {
    const u = await h.tenant();
    const e = await lot(u);
    const offer = await createOffer(u, { edition: e.uuid, name: 'Theater' });
    const family = await createAccount(u, { email: 'familie@example.org' });
    const child = await createParticipant(u, { firstname: 'Mia', account: family.uuid });
    const a = await apply(u, offer.uuid, child.uuid);
    await transitionOk(u, a.uuid, 'waitlist');
    expect(await outbox(h, u)).toEqual([]);
    await transitionOk(u, a.uuid, 'confirm', { notify: true });
    await transitionOk(u, a.uuid, 'reject', { notify: true });
    const mails = await outbox(h, u);
    expect(mails.map((m) => [m.recipient, m.kind, m.subject])).toEqual([
      ['familie@example.org', 'attendance_confirmed', 'Platzzusage: Theater'],
      ['familie@example.org', 'attendance_rejected', 'Absage: Theater'],
    ]);
    expect(mails[0].payload).toMatchObject({ attendance: a.uuid, status: 'confirmed' });
    // A refused transition queues nothing.
    expectProblem(await transition(u, a.uuid, 'noshow', { notify: true }), 409);
    expect(await outbox(h, u)).toHaveLength(2);
  });

  it('commit: false holds the decision back (heldBack, no fee due); a committed transition releases it', async () => {
    const offer = await createOffer(t, { edition: byLot.uuid, fee: 1000 });
    const a = await newApplication(t, offer.uuid);
    const held = await transitionOk(t, a.uuid, 'confirm', { commit: false });
    expect(held).toMatchObject({ status: 'confirmed', heldBack: true, payable: false });
    const waitlisted = await transitionOk(t, a.uuid, 'waitlist');
    expect(waitlisted.heldBack).toBe(false);
    expect(await transitionOk(t, a.uuid, 'confirm')).toMatchObject({ heldBack: false, payable: true });
  });

  it('records when the state changed and when it was confirmed', async () => {
    const offer = await createOffer(t, { edition: byLot.uuid });
    const a = await newApplication(t, offer.uuid);
    expect(a).not.toHaveProperty('confirmedAt');
    const c = await transitionOk(t, a.uuid, 'confirm');
    expect(c.confirmedAt).toBeDefined();
    expect(Date.parse(c.statusChangedAt)).toBeGreaterThanOrEqual(Date.parse(a.statusChangedAt));
    expect(Date.parse(c.modifiedAt)).toBeGreaterThanOrEqual(Date.parse(a.modifiedAt));
  });

  it('reorders the participant list on every change: confirmed, waitlisted, waiting, the rest', async () => {
    const offer = await createOffer(t, { edition: byLot.uuid, maxParticipants: 10 });
    const [w1, w2, w3, w4] = [await newApplication(t, offer.uuid), await newApplication(t, offer.uuid), await newApplication(t, offer.uuid), await newApplication(t, offer.uuid)];
    expect((await list(t, offer.uuid)).map((a) => a.uuid)).toEqual([w1.uuid, w2.uuid, w3.uuid, w4.uuid]);
    await transitionOk(t, w3.uuid, 'waitlist');
    await transitionOk(t, w4.uuid, 'confirm');
    await transitionOk(t, w1.uuid, 'reject');
    const items = await list(t, offer.uuid);
    expect(items.map((a) => [a.uuid, a.status])).toEqual([[w4.uuid, C], [w3.uuid, WL], [w2.uuid, W], [w1.uuid, R]]);
    expectDenseSorting(items);
    const modified = (await t.get(`/attendances/${w2.uuid}`)).body;
    expect(modified.sorting).toBe(3);
  });

  it('a withdrawn confirmed application frees its place (vacancies); a lot edition does not move anyone up', async () => {
    const offer = await createOffer(t, { edition: byLot.uuid, maxParticipants: 1 });
    const c = await newApplication(t, offer.uuid, { status: 'confirmed' });
    const w = await newApplication(t, offer.uuid, { status: 'waitlisted' });
    expect((await t.get(`/offers/${offer.uuid}`)).body).toMatchObject({ vacancies: 0, fullyBooked: true });
    await transitionOk(t, c.uuid, 'withdraw');
    expect((await t.get(`/offers/${offer.uuid}`)).body).toMatchObject({ vacancies: 1, fullyBooked: false });
    expect((await t.get(`/attendances/${w.uuid}`)).body.status).toBe('waitlisted');
  });

  it('during a running first-come phase a withdrawal moves the waiting list up and e-mails that family', async () => {
    const u = await h.tenant();
    const e = await firstcome(u);
    const offer = await createOffer(u, { edition: e.uuid, maxParticipants: 2, name: 'Reiten' });
    const c1 = await newApplication(u, offer.uuid);
    await newApplication(u, offer.uuid);
    const w1 = await newApplication(u, offer.uuid, {}, { email: 'w1@example.org' });
    const w2 = await newApplication(u, offer.uuid, {}, { email: 'w2@example.org' });
    expect([w1.status, w2.status]).toEqual([WL, WL]);
    const withdrawn = await transitionOk(u, c1.uuid, 'withdraw');
    expect(withdrawn.status).toBe(WD);
    expect((await u.get(`/attendances/${w1.uuid}`)).body.status).toBe(WL); // until the refill job ran (D9)
    await h.jobs.drain();
    const moved = (await u.get(`/attendances/${w1.uuid}`)).body;
    expect(moved).toMatchObject({ status: C, heldBack: false });
    expect(moved.decisionReason).toMatch(/Warteliste/);
    expect((await u.get(`/attendances/${w2.uuid}`)).body.status).toBe(WL);
    expect((await outbox(h, u)).map((m) => [m.recipient, m.kind])).toEqual([['w1@example.org', 'attendance_confirmed']]);
    const items = await list(u, offer.uuid);
    expect(items.map((a) => a.status)).toEqual([C, C, WL, WD]);
    expectDenseSorting(items);
  });
});

describe('organisers', () => {
  let u: TestTenant;
  let host: Schema<'Organiser'>;
  let offer: Schema<'Offer'>;
  let org: string;
  beforeAll(async () => {
    u = await h.tenant({ settings: { organisersEditParticipantLists: true } });
    host = await createOrganiser(u);
    const e = await lot(u, { releaseParticipantLists: true });
    offer = await createOffer(u, { edition: e.uuid, hosts: [host.uuid] });
    org = await u.token({ role: 'organiser', organiserIds: [host.uuid] });
  });

  it('apply transitions to their own released lists where the installation lets them, never withdraw (403 whatever the state)', async () => {
    const a = await newApplication(u, offer.uuid);
    const res = await transition(u, a.uuid, 'confirm', {}, org);
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe(C);
    expectProblem(await transition(u, a.uuid, 'withdraw', {}, org), 403);
    await transitionOk(u, a.uuid, 'participated');
    // withdraw is impossible from participated (409 for admins), but permission comes first: 403.
    expectProblem(await transition(u, a.uuid, 'withdraw'), 409);
    expectProblem(await transition(u, a.uuid, 'withdraw', {}, org), 403);
  });

  it('without organisersEditParticipantLists: 403', async () => {
    const v = await h.tenant();
    const vHost = await createOrganiser(v);
    const e = await lot(v, { releaseParticipantLists: true });
    const o = await createOffer(v, { edition: e.uuid, hosts: [vHost.uuid] });
    const a = await newApplication(v, o.uuid);
    const token = await v.token({ role: 'organiser', organiserIds: [vHost.uuid] });
    const p = expectProblem(await transition(v, a.uuid, 'confirm', {}, token), 403);
    expect(p.detail).toMatch(/edit/);
  });

  it('on another organiser’s offer: 403 (published) or 404 (not visible to them)', async () => {
    const other = await createOrganiser(u);
    const e = await lot(u, { releaseParticipantLists: true });
    const foreign = await createOffer(u, { edition: e.uuid, hosts: [other.uuid] });
    const a = await newApplication(u, foreign.uuid);
    expectProblem(await transition(u, a.uuid, 'confirm', {}, org), 404);
    expect((await u.post(`/offers/${foreign.uuid}/transition`, { transition: 'publish' })).status).toBe(200);
    expectProblem(await transition(u, a.uuid, 'confirm', {}, org), 403);
  });

  it('read-only organiser tokens never write', async () => {
    const a = await newApplication(u, offer.uuid);
    const read = await u.token({ role: 'organiser', access: 'read', organiserIds: [host.uuid] });
    expectProblem(await transition(u, a.uuid, 'confirm', {}, read), 403);
  });
});
