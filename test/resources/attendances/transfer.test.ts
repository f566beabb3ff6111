import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, useHarness, type TestTenant, type Schema } from '../../harness/harness.js';
import { uuidToBase58 } from '../../../src/platform/http/ids.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import {
  apply, createOffer, createOrganiser, createParticipant, expectDenseSorting, firstcome, list, lot, newApplication, outbox,
  setColumns, transitionOk,
} from './helpers.js';

// POST /attendances/{uuid}/transfer (spec 3.2, 4.3 "Transfer" rules 1-7; D10).
let byLot: Schema<'Edition'>;

const { h, t } = useHarness();
beforeAll(async () => {
  byLot = await lot(t);
});

const transfer = (tt: TestTenant, uuid: string, body: Record<string, unknown>, token?: string) =>
  tt.post(`/attendances/${uuid}/transfer`, body, token ? { token } : {});

describe('transfer (rules 1, 2, 4)', () => {
  it('makes a new application for the target (waiting by default) and deletes the old one with its answers', async () => {
    const source = await createOffer(t, { edition: byLot.uuid, fee: 1200, applicationQuestions: [{ label: 'Frage', type: 'txt' }] });
    const target = await createOffer(t, { edition: byLot.uuid, fee: 3000 });
    const a = await newApplication(t, source.uuid, { status: 'confirmed', allAlternateDates: false });
    await t.patch(`/attendances/${a.uuid}`, { userPriority: 2, answers: { [source.applicationQuestions![0].uuid]: 'Antwort' } });
    const res = await transfer(t, a.uuid, { offer: uuidToBase58(target.uuid) });
    expect(res.status, res.text).toBe(201);
    const b = res.body;
    expect(b.uuid).not.toBe(a.uuid);
    expect(b).toMatchObject({
      status: 'waiting', offer: { uuid: target.uuid }, participant: { uuid: a.participant!.uuid },
      fee: 1200, paid: false, userPriority: 2, allAlternateDates: false, answers: [], heldBack: false, sorting: 1,
    });
    expectProblem(await t.get(`/attendances/${a.uuid}`), 404);
    expect(await list(t, source.uuid)).toEqual([]);
    expect((await list(t, target.uuid)).map((x) => x.uuid)).toEqual([b.uuid]);
  });

  it('sets waitlisted or confirmed directly (not the target’s procedure), from any state, into another edition', async () => {
    const fcfs = await firstcome(t);
    const source = await createOffer(t, { edition: byLot.uuid });
    const target = await createOffer(t, { edition: fcfs.uuid, maxParticipants: 1 });
    await newApplication(t, target.uuid); // fills the only place
    const a = await newApplication(t, source.uuid, { status: 'confirmed' });
    await transitionOk(t, a.uuid, 'participated');
    const res = await transfer(t, a.uuid, { offer: target.uuid, status: 'confirmed' });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'confirmed', edition: { uuid: fcfs.uuid } });
    expect(res.body.confirmedAt).toBeDefined();
    const c = await newApplication(t, source.uuid);
    expect((await transfer(t, c.uuid, { offer: target.uuid, status: 'waitlisted' })).body.status).toBe('waitlisted');
    const items = await list(t, target.uuid);
    expect(items.map((x) => x.status)).toEqual(['confirmed', 'confirmed', 'waitlisted']);
    expectDenseSorting(items);
  });

  it('a paid application stays paid and keeps its fee', async () => {
    const source = await createOffer(t, { edition: byLot.uuid, fee: 900 });
    const target = await createOffer(t, { edition: byLot.uuid, fee: 100 });
    const a = await newApplication(t, source.uuid, { status: 'confirmed' });
    await setColumns(h, t, a.uuid, { paid: true });
    const b = (await transfer(t, a.uuid, { offer: target.uuid, status: 'confirmed' })).body;
    expect(b).toMatchObject({ paid: true, fee: 900 });
  });

  it('commit: false holds the new decision back; notify e-mails a confirmation only', async () => {
    const u = await h.tenant();
    const e = await lot(u);
    const source = await createOffer(u, { edition: e.uuid });
    const target = await createOffer(u, { edition: e.uuid, name: 'Ziel' });
    const a = await newApplication(u, source.uuid, {}, { email: 'kind@example.org' });
    const held = await transfer(u, a.uuid, { offer: target.uuid, status: 'confirmed', commit: false });
    expect(held.body).toMatchObject({ status: 'confirmed', heldBack: true, payable: false });
    const back = await transfer(u, held.body.uuid, { offer: source.uuid, status: 'confirmed', notify: true });
    expect(back.status, back.text).toBe(201);
    expect((await outbox(h, u)).map((m) => [m.recipient, m.kind])).toEqual([['kind@example.org', 'attendance_confirmed']]);
    for (const body of [{ notify: true }, { notify: true, status: 'waitlisted' }, { notify: true, status: 'confirmed', commit: false }]) {
      const p = expectProblem(await transfer(u, back.body.uuid, { offer: target.uuid, ...body }), 422);
      expect(p.violations?.[0].propertyPath).toBe('notify');
    }
    expect((await u.get(`/attendances/${back.body.uuid}`)).status).toBe(200);
  });
});

describe('places (rules 3 and 4)', () => {
  it('the freed place in the source is not refilled; the target is refilled during a running first-come phase', async () => {
    const u = await h.tenant();
    const e = await firstcome(u);
    const source = await createOffer(u, { edition: e.uuid, maxParticipants: 1 });
    const target = await createOffer(u, { edition: e.uuid, maxParticipants: 2 });
    const mover = await newApplication(u, source.uuid);
    const stays = await newApplication(u, source.uuid, {}, { email: 'bleibt@example.org' });
    expect(stays.status).toBe('waitlisted');
    await newApplication(u, target.uuid);
    const lucky = await newApplication(u, target.uuid, { status: 'waitlisted' }, { email: 'ziel@example.org' });
    const res = await transfer(u, mover.uuid, { offer: target.uuid });
    expect(res.status, res.text).toBe(201);
    expect(res.body.status).toBe('waiting');
    expect((await u.get(`/attendances/${stays.uuid}`)).body.status).toBe('waitlisted');
    expect((await u.get(`/offers/${source.uuid}`)).body.vacancies).toBe(1);
    await h.jobs.drain(); // the target's refill job (rule 3: in the background)
    expect((await u.get(`/attendances/${lucky.uuid}`)).body.status).toBe('confirmed');
    expect((await outbox(h, u)).map((m) => m.recipient)).toEqual(['ziel@example.org']);
    expectDenseSorting(await list(u, source.uuid));
    expect((await list(u, target.uuid)).map((x) => x.status)).toEqual(['confirmed', 'confirmed', 'waiting']);
    // POST /offers/{uuid}/refill moves the source's waiting list up.
    const refill = await u.post(`/offers/${source.uuid}/refill`);
    expect(refill.status).toBe(202);
    // Spec 1.11: 202 with the offer as it is now; the job moves the list up.
    expect(refill.body).toMatchObject({ uuid: source.uuid, vacancies: 1, fullyBooked: false });
    await h.jobs.drain();
    expect((await u.get(`/attendances/${stays.uuid}`)).body.status).toBe('confirmed');
  });
});

describe('refused transfers (rules 5, 6, 7)', () => {
  let source: Schema<'Offer'>;
  let target: Schema<'Offer'>;
  beforeAll(async () => {
    source = await createOffer(t, { edition: byLot.uuid });
    target = await createOffer(t, { edition: byLot.uuid });
  });

  it('to the application’s own offer: 409', async () => {
    const a = await newApplication(t, source.uuid);
    const p = expectProblem(await transfer(t, a.uuid, { offer: source.uuid }), 409);
    expect(p.detail).toMatch(/already for this offer/);
  });

  it('when the participant already has an application for the target, even a withdrawn one: 409', async () => {
    const child = await createParticipant(t);
    const a = await apply(t, source.uuid, child.uuid);
    const existing = await apply(t, target.uuid, child.uuid);
    await transitionOk(t, existing.uuid, 'withdraw');
    expectProblem(await transfer(t, a.uuid, { offer: target.uuid }), 409);
    expect((await t.get(`/attendances/${a.uuid}`)).status).toBe(200);
  });

  it('when the participant was pseudonymised: 409', async () => {
    const a = await newApplication(t, source.uuid);
    await sql`update ${qualified(t.tenant.schema, 'participants')} set pseudonymised_at = now() where uuid = ${a.participant!.uuid}::uuid`
      .execute(executorOf(h.orm));
    expect(expectProblem(await transfer(t, a.uuid, { offer: target.uuid }), 409).detail).toMatch(/pseudonymised/);
  });

  it('a target the caller cannot see: 404 (unknown, another tenant’s); an unknown application: 404', async () => {
    const a = await newApplication(t, source.uuid);
    expectProblem(await transfer(t, a.uuid, { offer: '6f1c3f0e-0000-4000-8000-000000000001' }), 404);
    const other = await h.tenant();
    const foreign = await createOffer(other);
    expectProblem(await transfer(t, a.uuid, { offer: foreign.uuid }), 404);
    expectProblem(await transfer(t, '6f1c3f0e-0000-4000-8000-000000000001', { offer: target.uuid }), 404);
    expectProblem(await transfer(t, a.uuid, { offer: 'kein-angebot' }), 422);
    expectProblem(await transfer(t, a.uuid, {}), 422);
  });

  it('organisers: only with organisersTransferParticipants and a list they can see (403); targets they cannot see: 404', async () => {
    const u = await h.tenant({ settings: { organisersTransferParticipants: true } });
    const host = await createOrganiser(u);
    const stranger = await createOrganiser(u);
    const released = await lot(u, { releaseParticipantLists: true });
    const closed = await lot(u);
    const own = await createOffer(u, { edition: released.uuid, hosts: [host.uuid] });
    const ownTarget = await createOffer(u, { edition: closed.uuid, hosts: [host.uuid] });
    const hiddenTarget = await createOffer(u, { edition: released.uuid, hosts: [stranger.uuid] });
    const ownClosed = await createOffer(u, { edition: closed.uuid, hosts: [host.uuid] });
    const org = await u.token({ role: 'organiser', organiserIds: [host.uuid] });
    const a = await newApplication(u, own.uuid);
    expectProblem(await transfer(u, a.uuid, { offer: hiddenTarget.uuid }, org), 404);
    const c = await newApplication(u, ownClosed.uuid);
    expectProblem(await transfer(u, c.uuid, { offer: own.uuid }, org), 403); // its list is not released
    const ok = await transfer(u, a.uuid, { offer: ownTarget.uuid }, org);
    expect(ok.status, ok.text).toBe(201);
    expectProblem(await transfer(u, a.uuid, { offer: ownTarget.uuid }, await u.token({ access: 'read' })), 403);

    const v = await h.tenant();
    const vHost = await createOrganiser(v);
    const ve = await lot(v, { releaseParticipantLists: true });
    const vo = await createOffer(v, { edition: ve.uuid, hosts: [vHost.uuid] });
    const vt = await createOffer(v, { edition: ve.uuid, hosts: [vHost.uuid] });
    const va = await newApplication(v, vo.uuid);
    const vOrg = await v.token({ role: 'organiser', organiserIds: [vHost.uuid] });
    expect(expectProblem(await transfer(v, va.uuid, { offer: vt.uuid }, vOrg), 403).detail).toMatch(/transfer/);
  });
});
