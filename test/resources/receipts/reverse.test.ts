import { describe, expect, it } from 'vitest';
import { expectProblem, useHarness } from '../../harness/harness.js';
import { uuidToBase58 } from '../../../src/platform/http/ids.js';
import { create as createOrganiser } from '../../factories/organiser.factory.js';
import { outbox } from '../attendances/helpers.js';
import {
  applyFor, attendance, createAccount, createEdition, createOffer, dueApplication, getOk, ledgerOfAccount, offerWithFee, pay,
  postingsOf, reverse, transitionOk,
} from '../money/helpers.js';

// POST /receipts/{uuid}/reverse (D8, D10 "Money"): 200 with the original receipt showing its reversal; body
// `{items?, withdraw?, notify?}` optional.

const { h, t } = useHarness();

describe('reversal', () => {
  it('makes a reversal receipt with negated items; the application is unpaid and due again (an open payment)', async () => {
    const a = await dueApplication(t, { fee: 600 });
    const r = await pay(t, [{ attendance: a.uuid, amount: 450 }]);
    // No body and no content type: all lines.
    const res = await reverse(t, uuidToBase58(r.uuid));
    expect(res.status, res.text).toBe(200);
    const original = res.body;
    expect(original).toMatchObject({ uuid: r.uuid, number: r.number, items: r.items, total: 450 });
    expect(original.reversedBy!.name).toMatch(/^R-\d{4}-\d{4}$/);
    expect(original.reversedBy!.name).not.toBe(r.number);
    expect(original.reversals).toEqual([original.reversedBy]);
    expect(original.modifiedAt >= r.modifiedAt).toBe(true);
    const reversal = await getOk(t, `/receipts/${original.reversedBy!.uuid}`);
    expect(reversal).toMatchObject({
      number: original.reversedBy!.name,
      reverses: { uuid: r.uuid, name: r.number },
      debtor: r.debtor,
      items: [{ attendance: a.uuid, amount: -450, text: r.items[0].text }],
      total: -450,
      reversals: [],
    });
    expect(reversal).not.toHaveProperty('reversedBy');
    expect(await attendance(t, a.uuid)).toMatchObject({ status: 'confirmed', paid: false, payable: true, receipts: [] });
    expect(await postingsOf(t, a.uuid)).toEqual([['charge', 600], ['payment', -450], ['discount', -150], ['reversal', 450], ['reversal', 150]]);
    expect((await ledgerOfAccount(t, a.account!.uuid)).balance).toBe(600);
    const open = await getOk(t, `/attendances?payable=true&paid=false&account=${a.account!.uuid}`);
    expect(open.map((x) => x.uuid)).toEqual([a.uuid]);
    // It can be paid again.
    expect((await pay(t, [{ attendance: a.uuid }])).total).toBe(600);
  });

  it('line by line: items names applications; the rest stays paid; reversing the rest later; then 409', async () => {
    const family = await createAccount(t);
    const a1 = await dueApplication(t, { account: family.uuid, fee: 100 });
    const a2 = await dueApplication(t, { account: family.uuid, fee: 200 });
    const r = await pay(t, [{ attendance: a1.uuid }, { attendance: a2.uuid }]);
    const first = await reverse(t, r.uuid, { items: [uuidToBase58(a2.uuid)] });
    expect(first.status, first.text).toBe(200);
    const rev1 = await getOk(t, `/receipts/${first.body.reversedBy!.uuid}`);
    expect(rev1.items).toEqual([{ attendance: a2.uuid, amount: -200, text: r.items[1].text }]);
    expect((await attendance(t, a1.uuid)).paid).toBe(true);
    expect((await attendance(t, a2.uuid)).paid).toBe(false);
    expectProblem(await reverse(t, r.uuid, { items: [a2.uuid] }), 409);
    const second = await reverse(t, r.uuid, {});
    expect(second.status, second.text).toBe(200);
    expect(second.body.reversals.map((x) => x.uuid)).toEqual([first.body.reversedBy!.uuid, second.body.reversedBy!.uuid]);
    expect((await getOk(t, `/receipts/${second.body.reversedBy!.uuid}`)).items.map((i) => i.attendance)).toEqual([a1.uuid]);
    expect((await attendance(t, a1.uuid)).paid).toBe(false);
    const p = expectProblem(await reverse(t, r.uuid), 409);
    expect(p.detail).toContain('already reversed');
  });

  it('withdraw: the applications are withdrawn, their places freed and their charges cancelled', async () => {
    const offer = await createOffer(t, { edition: (await createEdition(t, { procedure: 'lot' })).uuid, fee: 800, maxParticipants: 2 });
    const family = await createAccount(t);
    const a = await applyFor(t, offer.uuid, family.uuid);
    expect((await getOk(t, `/offers/${offer.uuid}`)).vacancies).toBe(1);
    const r = await pay(t, [{ attendance: a.uuid }]);
    const res = await reverse(t, r.uuid, { withdraw: true });
    expect(res.status, res.text).toBe(200);
    expect(await attendance(t, a.uuid)).toMatchObject({ status: 'withdrawn', paid: false, payable: false, receipts: [] });
    expect((await getOk(t, `/offers/${offer.uuid}`)).vacancies).toBe(2);
    expect(await postingsOf(t, a.uuid)).toEqual([['charge', 800], ['payment', -800], ['reversal', 800], ['cancellation', -800]]);
    expect((await ledgerOfAccount(t, family.uuid)).balance).toBe(0);
    // After the reversal the application can be deleted.
    expect((await t.del(`/attendances/${a.uuid}`)).status).toBe(204);
  });

  it('withdraw where the state does not allow it (participated): 409, nothing changed', async () => {
    const a = await dueApplication(t);
    const r = await pay(t, [{ attendance: a.uuid }]);
    await transitionOk(t, a.uuid, 'participated');
    const p = expectProblem(await reverse(t, r.uuid, { withdraw: true }), 409);
    expect(p.detail).toContain('participated');
    expect((await getOk(t, `/receipts/${r.uuid}`)).reversals).toEqual([]);
    expect((await attendance(t, a.uuid)).paid).toBe(true);
    // Without withdraw it is reversed; participated keeps the charge: the family owes the fee again.
    expect((await reverse(t, r.uuid)).status).toBe(200);
    expect((await ledgerOfAccount(t, a.account!.uuid)).balance).toBe(500);
  });

  it('a paid application that left confirmed keeps its charge until the reversal cancels it', async () => {
    const a = await dueApplication(t);
    const r = await pay(t, [{ attendance: a.uuid }]);
    await transitionOk(t, a.uuid, 'withdraw');
    expect(await postingsOf(t, a.uuid)).toEqual([['charge', 500], ['payment', -500]]);
    expect((await attendance(t, a.uuid)).paid).toBe(true);
    expect((await reverse(t, r.uuid)).status).toBe(200);
    expect(await postingsOf(t, a.uuid)).toEqual([['charge', 500], ['payment', -500], ['reversal', 500], ['cancellation', -500]]);
    expect((await ledgerOfAccount(t, a.account!.uuid)).balance).toBe(0);
  });

  it('notify e-mails the reversal to the family (outbox)', async () => {
    const u = await h.tenant();
    const family = await createAccount(u, { email: 'storno@example.org' });
    const a = await dueApplication(u, { account: family.uuid, fee: 990 });
    const r = await pay(u, [{ attendance: a.uuid }]);
    await reverse(u, r.uuid, { withdraw: true, notify: true });
    const mails = await outbox(h, u);
    expect(mails.map((m) => [m.kind, m.recipient, m.subject])).toEqual([['receipt_reversal', 'storno@example.org', `Storno der Quittung ${r.number}`]]);
    expect(mails[0]!.body).toContain('-9,90 €');
    expect(mails[0]!.body).toContain('zurückgezogen');
  });

  it('concurrent reversals of one receipt: one 200, the other 409', async () => {
    const a = await dueApplication(t);
    const r = await pay(t, [{ attendance: a.uuid }]);
    const results = await Promise.all([reverse(t, r.uuid, {}), reverse(t, r.uuid, {}), reverse(t, r.uuid, {})]);
    expect(results.map((x) => x.status).sort()).toEqual([200, 409, 409]);
    expect((await getOk(t, `/receipts/${r.uuid}`)).reversals).toHaveLength(1);
    expect(await postingsOf(t, a.uuid)).toEqual([['charge', 500], ['payment', -500], ['reversal', 500]]);
  });
});

describe('reversal: bad input (each a clear status and problem+json)', () => {
  it('reversing a reversal: 409', async () => {
    const a = await dueApplication(t);
    const r = await pay(t, [{ attendance: a.uuid }]);
    const rev = (await reverse(t, r.uuid)).body.reversedBy!.uuid;
    const p = expectProblem(await reverse(t, rev), 409);
    expect(p.detail).toContain('is itself a reversal');
  });

  it('reversing twice: 409, nothing more is posted', async () => {
    const a = await dueApplication(t);
    const r = await pay(t, [{ attendance: a.uuid }]);
    expect((await reverse(t, r.uuid)).status).toBe(200);
    const before = await postingsOf(t, a.uuid);
    expect(expectProblem(await reverse(t, r.uuid), 409).detail).toBe(`The receipt ${r.number} is already reversed.`);
    expect(await postingsOf(t, a.uuid)).toEqual(before);
  });

  it('an application that is not on the receipt (another family\'s, another tenant\'s, unknown): 422', async () => {
    const a = await dueApplication(t);
    const b = await dueApplication(t);
    const r = await pay(t, [{ attendance: a.uuid }]);
    const other = await h.tenant();
    const foreign = await dueApplication(other);
    for (const id of [b.uuid, foreign.uuid, '00000000-0000-4000-8000-000000000000']) {
      const p = expectProblem(await reverse(t, r.uuid, { items: [id] }), 422);
      expect(p.detail).toBe(`items: The application ${id} is not on the receipt ${r.number}.`);
      expect(p).not.toHaveProperty('violations');
    }
    const bad = expectProblem(await reverse(t, r.uuid, { items: ['kaputt'] }), 422);
    expect(bad.violations!.map((v) => v.propertyPath)).toEqual(['items[0]']);
    expectProblem(await reverse(t, r.uuid, { items: [] }), 422);
    expect((await attendance(t, a.uuid)).paid).toBe(true);
  });

  it('an unknown receipt, another tenant\'s, or a malformed id: 404; organisers and read tokens: 403', async () => {
    const other = await h.tenant();
    const foreign = await pay(other, [{ attendance: (await dueApplication(other)).uuid }]);
    expectProblem(await reverse(t, foreign.uuid), 404);
    expectProblem(await reverse(t, '00000000-0000-4000-8000-000000000000'), 404);
    expectProblem(await reverse(t, 'kaputt'), 404);
    expect((await getOk(other, `/receipts/${foreign.uuid}`)).reversals).toEqual([]);
    const a = await dueApplication(t);
    const r = await pay(t, [{ attendance: a.uuid }]);
    const host = await createOrganiser(t);
    expectProblem(await t.post(`/receipts/${r.uuid}/reverse`, {}, { token: await t.token({ role: 'organiser', organiserIds: [host.uuid] }) }), 403);
    expectProblem(await t.post(`/receipts/${r.uuid}/reverse`, {}, { token: await t.token({ access: 'read' }) }), 403);
    expect((await attendance(t, a.uuid)).paid).toBe(true);
  });

  it('a receipt across two editions: a partial reversal with withdraw balances each edition\'s ledger', async () => {
    const family = await createAccount(t);
    const x = await applyFor(t, (await offerWithFee(t, 300)).uuid, family.uuid);
    const y = await applyFor(t, (await offerWithFee(t, 700)).uuid, family.uuid);
    const r = await pay(t, [{ attendance: x.uuid }, { attendance: y.uuid }]);
    await reverse(t, r.uuid, { items: [y.uuid], withdraw: true });
    const balances = (await getOk(t, `/ledgers?account=${family.uuid}`)).map((l) => [l.edition.uuid, l.balance]);
    expect(balances.sort()).toEqual([[x.edition.uuid, 0], [y.edition.uuid, 0]].sort());
  });
});

describe('receipts are immutable', () => {
  it('PATCH and DELETE: 405 (reverse instead); 404 for an unknown receipt', async () => {
    const a = await dueApplication(t);
    const r = await pay(t, [{ attendance: a.uuid }]);
    const p = await t.patch(`/receipts/${r.uuid}`, { total: 1 });
    expect(expectProblem(p, 405).detail).toMatch(/reverse it instead/);
    expect(p.headers.allow).toBe('GET, POST');
    expectProblem(await t.del(`/receipts/${r.uuid}`), 405);
    expectProblem(await t.del('/receipts/00000000-0000-4000-8000-000000000000'), 404);
    expect(await getOk(t, `/receipts/${r.uuid}`)).toEqual(r);
  });
});
