import { describe, expect, it } from 'vitest';
import { useHarness } from '../../harness/harness.js';
import { apply, createOffer, createParticipant, firstcome, newApplication, transitionOk } from './helpers.js';

// Issue 13 item 6: an admin may confirm past the offer's capacity (`confirm`, create with `status: confirmed`,
// transfer with `status: confirmed`); it is recorded in the application's `decisionReason`, and the offer's
// token view shows `overbooked` (confirmed places beyond maxParticipants, 0 otherwise).

const { h, t } = useHarness();

const BEYOND = /über die Kapazität des Angebots hinaus bestätigt/;
const offerView = async (uuid: string) => (await t.get(`/offers/${uuid}`)).body;

describe('confirming past capacity', () => {
  it('create with status confirmed, confirm and transfer past capacity are allowed and recorded; the offer shows overbooked', async () => {
    const ed = (await firstcome(t)).uuid;
    const o = await createOffer(t, { edition: ed, maxParticipants: 1 });
    const first = await newApplication(t, o.uuid);
    expect(first.status).toBe('confirmed');
    expect(first.decisionReason ?? '').not.toMatch(BEYOND);
    expect((await offerView(o.uuid)).overbooked).toBe(0);
    // Full: the procedure waitlists; no override.
    const second = await newApplication(t, o.uuid);
    expect(second.status).toBe('waitlisted');
    expect(second.decisionReason ?? '').not.toMatch(BEYOND);

    // 1. create with status confirmed
    const third = await newApplication(t, o.uuid, { status: 'confirmed' });
    expect(third.status).toBe('confirmed');
    expect(third.decisionReason).toMatch(BEYOND);
    let view = await offerView(o.uuid);
    expect(view).toMatchObject({ maxParticipants: 1, vacancies: 0, fullyBooked: true, overbooked: 1 });

    // 2. confirm transition
    const confirmed = await transitionOk(t, second.uuid, 'confirm');
    expect(confirmed.decisionReason).toMatch(BEYOND);
    expect((await offerView(o.uuid)).overbooked).toBe(2);

    // 3. transfer into the full offer as confirmed
    const other = await createOffer(t, { edition: ed, maxParticipants: 5 });
    const mover = await newApplication(t, other.uuid);
    const moved = await t.post(`/attendances/${mover.uuid}/transfer`, { offer: o.uuid, status: 'confirmed' });
    expect(moved.status, moved.text).toBe(201);
    expect(moved.body.decisionReason).toMatch(BEYOND);
    view = await offerView(o.uuid);
    expect(view.overbooked).toBe(3);
    expect(view.attendances!.confirmed).toBe(4);

    // A withdrawal brings it down again; anonymous callers do not see the internal count.
    await transitionOk(t, third.uuid, 'withdraw');
    expect((await offerView(o.uuid)).overbooked).toBe(2);
  });

  it('within capacity nothing is recorded; unlimited offers are never overbooked', async () => {
    const ed = (await firstcome(t)).uuid;
    const o = await createOffer(t, { edition: ed, maxParticipants: 3 });
    const a = await newApplication(t, o.uuid, { status: 'waitlisted' });
    const c = await transitionOk(t, a.uuid, 'confirm');
    expect(c.decisionReason).toBeUndefined();
    const direct = await newApplication(t, o.uuid, { status: 'confirmed' });
    expect(direct.decisionReason).toBeUndefined();
    // Re-creating a confirmed application does not count its own place.
    const p = await createParticipant(t);
    await apply(t, o.uuid, p.uuid, { status: 'confirmed' });
    const again = await apply(t, o.uuid, p.uuid, { status: 'confirmed' });
    expect(again.decisionReason).toBeUndefined();
    expect((await offerView(o.uuid)).overbooked).toBe(0);

    const unlimited = await createOffer(t, { edition: ed, maxParticipants: null });
    for (let i = 0; i < 3; i++) expect((await newApplication(t, unlimited.uuid, { status: 'confirmed' })).decisionReason).toBeUndefined();
    expect((await offerView(unlimited.uuid)).overbooked).toBe(0);
  });

  it('the anonymous view has no overbooked field', async () => {
    const ed = (await firstcome(t)).uuid;
    const o = await createOffer(t, { edition: ed, maxParticipants: 1 });
    await t.post(`/offers/${o.uuid}/transition`, { transition: 'publish' });
    const anon = await t.get(`/offers/${o.uuid}`, { token: null });
    expect(anon.status).toBe(200);
    expect(anon.body.overbooked).toBeUndefined();
  });
});
