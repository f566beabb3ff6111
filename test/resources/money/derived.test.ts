import { describe, expect, it } from 'vitest';
import { expectProblem, useHarness } from '../../harness/harness.js';
import {
  applyFor, attendance, createAccount, createEdition, createOffer, dueApplication, getOk, offerWithFee, pay, postingsOf, reverse,
} from './helpers.js';

// Derived state (spec 2.2, 4.3; D8, D10): `paid`, `payable` and `receipts` of an application follow from the
// receipts and bookings; PATCH payable:false on a paid application and deleting it are 409; a transfer moves
// the receipt lines and the charge; the family's open payments are listable.

const { h, t } = useHarness();

describe('paid, payable and receipts', () => {
  it('follow the receipts: paid with the covering receipt listed, unpaid again after its reversal', async () => {
    const a = await dueApplication(t);
    expect(await attendance(t, a.uuid)).toMatchObject({ paid: false, payable: true, receipts: [] });
    const r1 = await pay(t, [{ attendance: a.uuid }]);
    expect(await attendance(t, a.uuid)).toMatchObject({ paid: true, payable: true, receipts: [r1.uuid] });
    await reverse(t, r1.uuid);
    expect(await attendance(t, a.uuid)).toMatchObject({ paid: false, receipts: [] });
    const r2 = await pay(t, [{ attendance: a.uuid }]);
    expect((await attendance(t, a.uuid)).receipts).toEqual([r2.uuid]);
    // The list filters agree with the fields.
    expect((await getOk(t, `/attendances?paid=true&participant=${a.participant!.uuid}`)).map((x) => x.receipts)).toEqual([[r2.uuid]]);
  });

  it('the family\'s open payments: GET /attendances?payable=true&paid=false&account=<e-mail>', async () => {
    const family = await createAccount(t);
    const offer = await offerWithFee(t, 400);
    const a1 = await applyFor(t, offer.uuid, family.uuid);
    const a2 = await applyFor(t, offer.uuid, family.uuid);
    await applyFor(t, offer.uuid, family.uuid, { status: 'waitlisted' });
    const open = async () => (await getOk(t, `/attendances?payable=true&paid=false&account=${encodeURIComponent(family.email!)}`)).map((x) => x.uuid).sort();
    expect(await open()).toEqual([a1.uuid, a2.uuid].sort());
    const r = await pay(t, [{ attendance: a1.uuid }]);
    expect(await open()).toEqual([a2.uuid]);
    await reverse(t, r.uuid);
    expect(await open()).toEqual([a1.uuid, a2.uuid].sort());
    // The ledger's balance is exactly the open payments' fees.
    const [ledger] = await getOk(t, `/ledgers?account=${family.uuid}`);
    expect(ledger.balance).toBe(800);
  });

  it('PATCH payable:false on a paid application: 409; after the reversal it is allowed', async () => {
    const a = await dueApplication(t);
    const r = await pay(t, [{ attendance: a.uuid }]);
    expect(expectProblem(await t.patch(`/attendances/${a.uuid}`, { payable: false }), 409).detail).toMatch(/reverse its receipt/);
    expect((await attendance(t, a.uuid)).payable).toBe(true);
    await reverse(t, r.uuid);
    expect((await t.patch(`/attendances/${a.uuid}`, { payable: false })).body).toMatchObject({ payable: false, paid: false });
    expect(await postingsOf(t, a.uuid)).toEqual([['charge', 500], ['payment', -500], ['reversal', 500], ['cancellation', -500]]);
  });

  it('deleting an application a paid receipt refers to: 409; after the reversal: 204', async () => {
    const a = await dueApplication(t);
    const r = await pay(t, [{ attendance: a.uuid }]);
    expect(expectProblem(await t.del(`/attendances/${a.uuid}`), 409).detail).toMatch(/paid receipt/);
    // The participant cannot be deleted either (D6).
    expectProblem(await t.del(`/participants/${a.participant!.uuid}`), 409);
    await reverse(t, r.uuid);
    expect((await t.del(`/attendances/${a.uuid}`)).status).toBe(204);
    // The receipt keeps its line (a bare UUID of the deleted application).
    expect((await getOk(t, `/receipts/${r.uuid}`)).items.map((i) => i.attendance)).toEqual([a.uuid]);
    expect(await postingsOf(t, a.uuid)).toEqual([['charge', 500], ['payment', -500], ['reversal', 500], ['cancellation', -500]]);
  });
});

describe('transfer (spec 4.3 rule 2, D10)', () => {
  it('moves the receipt lines to the new application, which stays paid; amounts unchanged; each edition\'s ledger balances', async () => {
    const family = await createAccount(t);
    const summer = await createEdition(t, { procedure: 'firstcome' });
    const autumn = await createEdition(t, { procedure: 'firstcome' });
    const from = await createOffer(t, { edition: summer.uuid, fee: 500, maxParticipants: null });
    const to = await createOffer(t, { edition: autumn.uuid, fee: 900, maxParticipants: null });
    const a = await applyFor(t, from.uuid, family.uuid);
    const r = await pay(t, [{ attendance: a.uuid, amount: 450 }]);
    const res = await t.post(`/attendances/${a.uuid}/transfer`, { offer: to.uuid, status: 'confirmed' });
    expect(res.status, res.text).toBe(201);
    const moved = res.body;
    expect(moved).toMatchObject({ paid: true, fee: 500, receipts: [r.uuid], status: 'confirmed' });
    const receipt = await getOk(t, `/receipts/${r.uuid}`);
    expect(receipt.items).toEqual([{ attendance: moved.uuid, amount: 450, text: r.items[0].text }]);
    expect(receipt.total).toBe(450);
    expect(receipt.number).toBe(r.number);
    expect(receipt.modifiedAt >= r.modifiedAt).toBe(true);
    expect(await postingsOf(t, a.uuid)).toEqual([
      ['charge', 500], ['payment', -450], ['discount', -50], ['transfer', 450], ['transfer', 50], ['cancellation', -500],
    ]);
    expect(await postingsOf(t, moved.uuid)).toEqual([['charge', 500], ['transfer', -450], ['transfer', -50]]);
    const ledgers = await getOk(t, `/ledgers?account=${family.uuid}`);
    expect(ledgers.map((l) => [l.edition.uuid, l.balance]).sort()).toEqual([[summer.uuid, 0], [autumn.uuid, 0]].sort());
    // Still paid: neither non-payable nor deletable; the reversal follows the line to the new application.
    expectProblem(await t.del(`/attendances/${moved.uuid}`), 409);
    const rev = await reverse(t, r.uuid, { withdraw: true });
    expect(rev.status, rev.text).toBe(200);
    expect(await attendance(t, moved.uuid)).toMatchObject({ paid: false, status: 'withdrawn', receipts: [] });
    const after = await getOk(t, `/ledgers?account=${family.uuid}`);
    expect(after.map((l) => l.balance)).toEqual([0, 0]);
  });

  it('an unpaid application\'s charge moves: a cancellation on the old, a charge on the new, in each edition\'s ledger', async () => {
    const family = await createAccount(t);
    const a = await applyFor(t, (await offerWithFee(t, 300)).uuid, family.uuid);
    const target = await offerWithFee(t, 300);
    const moved = (await t.post(`/attendances/${a.uuid}/transfer`, { offer: target.uuid, status: 'confirmed' })).body;
    expect(await postingsOf(t, a.uuid)).toEqual([['charge', 300], ['cancellation', -300]]);
    expect(await postingsOf(t, moved.uuid)).toEqual([['charge', 300]]);
    const balances = (await getOk(t, `/ledgers?account=${family.uuid}`)).map((l) => [l.edition.uuid, l.balance]);
    expect(balances.sort()).toEqual([[a.edition.uuid, 0], [target.edition.uuid, 300]].sort());
    // Transferred to waiting (the default): not due, nothing charged.
    const again = (await t.post(`/attendances/${moved.uuid}/transfer`, { offer: (await offerWithFee(t, 300)).uuid })).body;
    expect(again.status).toBe('waiting');
    expect(await postingsOf(t, again.uuid)).toEqual([]);
    expect(await postingsOf(t, moved.uuid)).toEqual([['charge', 300], ['cancellation', -300]]);
  });
});
