import { describe, expect, it } from 'vitest';
import { expectProblem, useHarness } from '../../harness/harness.js';
import { applyFor, createAccount, createEdition, createOffer, createParticipant, ledgerOfAccount, offerWithFee, pay, postingsOf } from '../money/helpers.js';
import { createOrganiser } from './helpers.js';

// Issue 22.4, spec 2.2: an application's `fee` may differ from the offer's (a discount). Admins set it on
// create and PATCH (not below 0); the ledger follows; a paid application's fee stays (reverse the receipt).
const { h, t } = useHarness();

describe('an application\'s own fee', () => {
  it('is set on create, changed by PATCH, and the ledger follows', async () => {
    const acc = await createAccount(t);
    const o = await offerWithFee(t, 800);
    const a = await applyFor(t, o.uuid, acc.uuid, { status: 'confirmed', fee: 300 });
    expect(a).toMatchObject({ fee: 300, payable: true });
    expect(await postingsOf(t, a.uuid)).toEqual([['charge', 300]]);

    const raised = await t.patch(`/attendances/${a.uuid}`, { fee: 500 });
    expect(raised.status, raised.text).toBe(200);
    expect(raised.body.fee).toBe(500);
    expect((await ledgerOfAccount(t, acc.uuid)).balance).toBe(500);
    // Free: nothing due any more; null: the offer's fee again.
    expect((await t.patch(`/attendances/${a.uuid}`, { fee: 0 })).body).toMatchObject({ fee: 0, payable: false });
    expect((await ledgerOfAccount(t, acc.uuid)).balance).toBe(0);
    expect((await t.patch(`/attendances/${a.uuid}`, { fee: null })).body).toMatchObject({ fee: 800, payable: true });
    expect(await postingsOf(t, a.uuid)).toEqual([['charge', 300], ['charge', 200], ['cancellation', -500], ['charge', 800]]);
    expect((await ledgerOfAccount(t, acc.uuid)).balance).toBe(800);
  });

  it('applies to a reused application too; without one the offer\'s fee is taken', async () => {
    const o = await offerWithFee(t, 800);
    const p = await createParticipant(t);
    const first = await t.post('/attendances', { offer: o.uuid, participant: p.uuid, status: 'waitlisted' });
    expect(first.body.fee).toBe(800);
    const again = await t.post('/attendances', { offer: o.uuid, participant: p.uuid, status: 'confirmed', fee: 650 });
    expect(again.status, again.text).toBe(201);
    expect(again.body).toMatchObject({ uuid: first.body.uuid, fee: 650 });
    expect(await postingsOf(t, again.body.uuid)).toEqual([['charge', 650]]);
  });

  it('is not below 0, not fractional; a paid application keeps its fee (409); organisers may not set it (403)', async () => {
    const acc = await createAccount(t);
    const o = await offerWithFee(t, 800);
    for (const fee of [-1, 2.5, '300']) {
      const p = expectProblem(await t.post('/attendances', { offer: o.uuid, participant: (await createParticipant(t)).uuid, fee }), 422);
      expect(p.violations?.[0]?.propertyPath).toBe('fee');
    }
    const a = await applyFor(t, o.uuid, acc.uuid);
    expectProblem(await t.patch(`/attendances/${a.uuid}`, { fee: -5 }), 422);
    await pay(t, [{ attendance: a.uuid }]);
    expect(expectProblem(await t.patch(`/attendances/${a.uuid}`, { fee: 100 }), 409).detail).toMatch(/reverse its receipt/);
    expect((await t.patch(`/attendances/${a.uuid}`, { fee: 800 })).status).toBe(200);

    // An organiser who may edit this participant list still may not set a fee.
    const u = await h.tenant({ settings: { organisersEditParticipantLists: true } });
    const host = await createOrganiser(u);
    const e = await createEdition(u, { procedure: 'firstcome', releaseParticipantLists: true });
    const own = await createOffer(u, { edition: e.uuid, fee: 500, maxParticipants: null, hosts: [host.uuid] });
    const b = await applyFor(u, own.uuid, null);
    const org = await u.token({ role: 'organiser', organiserIds: [host.uuid] });
    expect((await u.patch(`/attendances/${b.uuid}`, { allAlternateDates: false }, { token: org })).status).toBe(200);
    expectProblem(await u.patch(`/attendances/${b.uuid}`, { fee: 0 }, { token: org }), 403);
    expect((await u.get(`/attendances/${b.uuid}`)).body.fee).toBe(500);
  });
});
