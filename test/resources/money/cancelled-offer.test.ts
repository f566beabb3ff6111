import { describe, expect, it } from 'vitest';
import { expectProblem, useHarness } from '../../harness/harness.js';
import { applyFor, attendance, createAccount, getOk, ledgerOfAccount, offerWithFee, pay, postingsOf, transitionOk } from './helpers.js';

// Issue 13 item 3, D5: while an offer is cancelled none of its applications is payable: unpaid charges are
// cancelled on `cancel` and charged again on `relaunch`; paid ones stay paid.

const { h, t } = useHarness();

async function offerTransition(uuid: string, transition: string) {
  const res = await t.post(`/offers/${uuid}/transition`, { transition });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

describe('cancelled offers and money (D5)', () => {
  it('cancel makes unpaid applications not payable and cancels their charge; relaunch charges again; paid stay paid', async () => {
    const acc = await createAccount(t);
    const o = await offerWithFee(t, 800);
    await offerTransition(o.uuid, 'publish');
    const unpaid = await applyFor(t, o.uuid, acc.uuid);
    const paid = await applyFor(t, o.uuid, acc.uuid);
    expect(unpaid.payable).toBe(true);
    await pay(t, [{ attendance: paid.uuid }]);
    expect((await ledgerOfAccount(t, acc.uuid)).balance).toBe(800);

    const cancelled = await offerTransition(o.uuid, 'cancel');
    expect(cancelled.status).toEqual(['published', 'cancelled']);
    const u1 = await attendance(t, unpaid.uuid);
    expect(u1).toMatchObject({ status: 'confirmed', payable: false, paid: false });
    const p1 = await attendance(t, paid.uuid);
    expect(p1).toMatchObject({ status: 'confirmed', payable: false, paid: true });
    expect(await postingsOf(t, unpaid.uuid)).toEqual([['charge', 800], ['cancellation', -800]]);
    // The paid one keeps its charge, balanced by its payment.
    expect(await postingsOf(t, paid.uuid)).toEqual([['charge', 800], ['payment', -800]]);
    expect((await ledgerOfAccount(t, acc.uuid)).balance).toBe(0);
    // Filters and open payments agree with the field.
    const payableList = await getOk(t, `/attendances?offer=${o.uuid}&payable=true`);
    expect(payableList).toEqual([]);

    // Not due: no receipt, no PATCH payable:true.
    const r = expectProblem(await t.post('/receipts', { items: [{ attendance: unpaid.uuid }] }), 422);
    expect(r.type).toBe('/errors/422');
    expect(r.detail).toMatch(/items\[0\]\.attendance: .*its offer is cancelled/);
    const pt = expectProblem(await t.patch(`/attendances/${unpaid.uuid}`, { payable: true }), 422);
    expect(pt.detail).toMatch(/^payable: .*its offer is cancelled/);

    // Cancelling and transitions while cancelled post nothing more (idempotent reconciler).
    expect(await postingsOf(t, unpaid.uuid)).toHaveLength(2);

    const relaunched = await offerTransition(o.uuid, 'relaunch');
    expect(relaunched.status).toEqual(['published']);
    expect(await attendance(t, unpaid.uuid)).toMatchObject({ status: 'confirmed', payable: true, paid: false });
    expect(await attendance(t, paid.uuid)).toMatchObject({ payable: true, paid: true });
    expect(await postingsOf(t, unpaid.uuid)).toEqual([['charge', 800], ['cancellation', -800], ['charge', 800]]);
    expect((await ledgerOfAccount(t, acc.uuid)).balance).toBe(800);
    // And it can be paid again.
    await pay(t, [{ attendance: unpaid.uuid }]);
    expect((await ledgerOfAccount(t, acc.uuid)).balance).toBe(0);
  });

  it('an application confirmed while the offer is cancelled is not charged until the relaunch', async () => {
    const acc = await createAccount(t);
    const o = await offerWithFee(t, 300);
    await offerTransition(o.uuid, 'publish');
    await offerTransition(o.uuid, 'cancel');
    const a = await applyFor(t, o.uuid, acc.uuid);
    expect(a).toMatchObject({ status: 'confirmed', payable: false });
    expect(await postingsOf(t, a.uuid)).toEqual([]);
    await offerTransition(o.uuid, 'relaunch');
    expect(await postingsOf(t, a.uuid)).toEqual([['charge', 300]]);
    expect((await attendance(t, a.uuid)).payable).toBe(true);
  });

  // Issue 22.8: cancel stops every charge, relaunch brings them back as they were (D5).
  it('unpublishing a cancelled offer keeps its charges cancelled; publishing it again brings them back', async () => {
    const acc = await createAccount(t);
    const o = await offerWithFee(t, 700);
    await offerTransition(o.uuid, 'publish');
    const a = await applyFor(t, o.uuid, acc.uuid);
    await offerTransition(o.uuid, 'cancel');
    const unpublished = await offerTransition(o.uuid, 'unpublish');
    expect(unpublished.status).toEqual(['unpublished']);
    expect(await postingsOf(t, a.uuid)).toEqual([['charge', 700], ['cancellation', -700]]);
    expect(await attendance(t, a.uuid)).toMatchObject({ status: 'confirmed', payable: false });
    expect((await ledgerOfAccount(t, acc.uuid)).balance).toBe(0);
    expectProblem(await t.patch(`/attendances/${a.uuid}`, { payable: true }), 422);
    await offerTransition(o.uuid, 'publish');
    expect(await postingsOf(t, a.uuid)).toEqual([['charge', 700], ['cancellation', -700], ['charge', 700]]);
    expect(await attendance(t, a.uuid)).toMatchObject({ payable: true });
  });

  it('relaunch brings back the kept charges of participated and noshow applications', async () => {
    const acc = await createAccount(t);
    const o = await offerWithFee(t, 400);
    await offerTransition(o.uuid, 'publish');
    const came = await applyFor(t, o.uuid, acc.uuid);
    const away = await applyFor(t, o.uuid, acc.uuid);
    await transitionOk(t, came.uuid, 'participated');
    await transitionOk(t, away.uuid, 'noshow');
    expect((await ledgerOfAccount(t, acc.uuid)).balance).toBe(800);
    await offerTransition(o.uuid, 'cancel');
    expect((await ledgerOfAccount(t, acc.uuid)).balance).toBe(0);
    await offerTransition(o.uuid, 'relaunch');
    for (const a of [came, away]) expect(await postingsOf(t, a.uuid)).toEqual([['charge', 400], ['cancellation', -400], ['charge', 400]]);
    expect((await ledgerOfAccount(t, acc.uuid)).balance).toBe(800);
    // One that went to participated without a charge (waitlisted before) still keeps none.
    const late = await applyFor(t, o.uuid, acc.uuid, { status: 'waitlisted' });
    await transitionOk(t, late.uuid, 'participated');
    await offerTransition(o.uuid, 'cancel');
    await offerTransition(o.uuid, 'relaunch');
    expect(await postingsOf(t, late.uuid)).toEqual([]);
  });
});
