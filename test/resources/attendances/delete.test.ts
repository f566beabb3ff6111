import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, useHarness, type Schema } from '../../harness/harness.js';
import { createOffer, createOrganiser, expectDenseSorting, firstcome, list, lot, newApplication, outbox, setColumns } from './helpers.js';

// DELETE /attendances/{uuid} (spec 4.3 "Delete"), and what other resources' deletes do with applications.
let byLot: Schema<'Edition'>;

const { h, t } = useHarness();
beforeAll(async () => {
  byLot = await lot(t);
});

describe('DELETE /attendances/{uuid}', () => {
  it('removes the application as if it had never been made: 204 without a body, then 404; the list is renumbered', async () => {
    const offer = await createOffer(t, { edition: byLot.uuid });
    const a = await newApplication(t, offer.uuid, { status: 'confirmed' });
    const b = await newApplication(t, offer.uuid, { status: 'waitlisted' });
    const res = await t.del(`/attendances/${a.uuid}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectProblem(await t.get(`/attendances/${a.uuid}`), 404);
    expectProblem(await t.del(`/attendances/${a.uuid}`), 404);
    const items = await list(t, offer.uuid);
    expect(items.map((x) => x.uuid)).toEqual([b.uuid]);
    expectDenseSorting(items);
    // Applying again makes a new application.
    const again = (await t.post('/attendances', { offer: offer.uuid, participant: a.participant!.uuid })).body;
    expect(again.uuid).not.toBe(a.uuid);
  });

  it('409 while a paid receipt refers to it', async () => {
    const offer = await createOffer(t, { edition: byLot.uuid });
    const a = await newApplication(t, offer.uuid, { status: 'confirmed' });
    await setColumns(h, t, a.uuid, { paid: true });
    expect(expectProblem(await t.del(`/attendances/${a.uuid}`), 409).detail).toMatch(/paid/);
    await setColumns(h, t, a.uuid, { paid: false });
    expect((await t.del(`/attendances/${a.uuid}`)).status).toBe(204);
  });

  it('admins only: organisers (even allowed to edit lists) and read tokens get 403', async () => {
    const u = await h.tenant({ settings: { organisersEditParticipantLists: true } });
    const host = await createOrganiser(u);
    const e = await lot(u, { releaseParticipantLists: true });
    const offer = await createOffer(u, { edition: e.uuid, hosts: [host.uuid] });
    const a = await newApplication(u, offer.uuid);
    expectProblem(await u.del(`/attendances/${a.uuid}`, { token: await u.token({ role: 'organiser', organiserIds: [host.uuid] }) }), 403);
    expectProblem(await u.del(`/attendances/${a.uuid}`, { token: await u.token({ access: 'read' }) }), 403);
    expectProblem(await u.del(`/attendances/${a.uuid}`, { token: null }), 401);
    expect((await u.get(`/attendances/${a.uuid}`)).status).toBe(200);
  });

  it('a deleted confirmed place is refilled during a running first-come phase', async () => {
    const u = await h.tenant();
    const e = await firstcome(u);
    const offer = await createOffer(u, { edition: e.uuid, maxParticipants: 1 });
    const a = await newApplication(u, offer.uuid);
    const b = await newApplication(u, offer.uuid, {}, { email: 'nach@example.org' });
    expect(b.status).toBe('waitlisted');
    expect((await u.del(`/attendances/${a.uuid}`)).status).toBe(204);
    // The refill runs as a job (D9): the list moves up when it has run.
    expect((await u.get(`/attendances/${b.uuid}`)).body.status).toBe('waitlisted');
    await h.jobs.drain();
    expect((await u.get(`/attendances/${b.uuid}`)).body.status).toBe('confirmed');
    expect((await outbox(h, u)).map((m) => m.recipient)).toEqual(['nach@example.org']);
  });
});

describe('deleting records applications refer to', () => {
  it('a participant: its unpaid applications go with it; a paid one refuses (409)', async () => {
    const offer = await createOffer(t, { edition: byLot.uuid });
    const a = await newApplication(t, offer.uuid);
    expect((await t.del(`/participants/${a.participant!.uuid}`)).status).toBe(204);
    expectProblem(await t.get(`/attendances/${a.uuid}`), 404);
    const b = await newApplication(t, offer.uuid, { status: 'confirmed' });
    await setColumns(h, t, b.uuid, { paid: true });
    expectProblem(await t.del(`/participants/${b.participant!.uuid}`), 409);
    expect((await t.get(`/attendances/${b.uuid}`)).status).toBe(200);
  });

  it('an offer: 409 while it has applications', async () => {
    const offer = await createOffer(t, { edition: byLot.uuid });
    const a = await newApplication(t, offer.uuid);
    expectProblem(await t.del(`/offers/${offer.uuid}`), 409);
    await t.del(`/attendances/${a.uuid}`);
    expect((await t.del(`/offers/${offer.uuid}`)).status).toBe(204);
  });
});
