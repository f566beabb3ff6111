import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, useHarness, type TestTenant, type Schema } from '../../harness/harness.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import { uuidToBase58 } from '../../../src/platform/http/ids.js';
import { syncCharges } from '../../../src/engines/ledger/index.js';
import { create as createOrganiser } from '../../factories/organiser.factory.js';
import {
  applyFor, createAccount, createEdition, dueApplication, getOk, ledgerOfAccount, offerWithFee, pay, postingsOf, transitionOk,
} from '../money/helpers.js';

// Bookings (D8, D10 "Money"): the fee charge and its cancellation follow every write to an application
// (spec 3.2 "transitions also update payment records"); GET /bookings and /bookings/{uuid}; PATCH/DELETE 405.

const { h, t } = useHarness();

describe('charges follow the application (one reconciler, src/engines/ledger/charges.ts)', () => {
  it('a final confirmed place is charged in the debtor\'s ledger for the edition, naming debtor, edition and application', async () => {
    const a = await dueApplication(t, { fee: 1250 });
    const [b, ...rest] = await getOk(t, `/bookings?attendance=${a.uuid}`);
    expect(rest).toEqual([]);
    expect(b).toMatchObject({
      type: 'charge', amount: 1250, attendance: a.uuid,
      edition: { uuid: a.edition.uuid, name: a.edition.name, alias: a.edition.alias },
      debtor: { name: a.account!.name },
    });
    expect(b).not.toHaveProperty('receipt');
    expect(b.date).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/);
    expect(b.text).toContain(a.offer.name);
    const ledger = await ledgerOfAccount(t, a.account!.uuid);
    expect(b.ledger).toBe(ledger.uuid);
    expect(ledger.debtor.uuid).toBe(b.debtor.uuid);
  });

  it('no charge without a final confirmed place, for a free offer, or while held back; committing charges', async () => {
    const offer = await offerWithFee(t, 800);
    const waiting = await applyFor(t, offer.uuid, null, { status: 'waiting' });
    const waitlisted = await applyFor(t, offer.uuid, null, { status: 'waitlisted' });
    const held = await applyFor(t, offer.uuid, null, { status: 'confirmed', commit: false });
    const free = await applyFor(t, (await offerWithFee(t, 0)).uuid, null);
    for (const a of [waiting, waitlisted, held, free]) expect(await postingsOf(t, a.uuid), a.status).toEqual([]);
    // A committed transition makes the decision final (the edition's commit does the same, D7).
    await transitionOk(t, waitlisted.uuid, 'confirm');
    expect(await postingsOf(t, waitlisted.uuid)).toEqual([['charge', 800]]);
  });

  it('leaving confirmed unpaid cancels the charge; participated and noshow keep it; confirming again charges again', async () => {
    const offer = await offerWithFee(t, 500);
    const leave = async (name: string) => {
      const a = await applyFor(t, offer.uuid, null);
      await transitionOk(t, a.uuid, name);
      return postingsOf(t, a.uuid);
    };
    for (const name of ['withdraw', 'waitlist', 'reject', 'reset', 'unfulfill']) {
      expect(await leave(name), name).toEqual([['charge', 500], ['cancellation', -500]]);
    }
    for (const name of ['participated', 'noshow']) expect(await leave(name), name).toEqual([['charge', 500]]);
    const a = await applyFor(t, offer.uuid, null);
    await transitionOk(t, a.uuid, 'withdraw');
    await transitionOk(t, a.uuid, 'confirm');
    expect(await postingsOf(t, a.uuid)).toEqual([['charge', 500], ['cancellation', -500], ['charge', 500]]);
    // A held-back confirmation is no final decision: no new charge.
    await transitionOk(t, a.uuid, 'waitlist');
    await transitionOk(t, a.uuid, 'confirm', { commit: false });
    expect(await postingsOf(t, a.uuid)).toEqual([['charge', 500], ['cancellation', -500], ['charge', 500], ['cancellation', -500]]);
    // Reaching participated without a charged place charges nothing.
    const w = await applyFor(t, offer.uuid, null, { status: 'waitlisted' });
    await transitionOk(t, w.uuid, 'participated');
    expect(await postingsOf(t, w.uuid)).toEqual([]);
  });

  it('PATCH payable:false cancels the charge, payable:true charges again; other PATCHes post nothing', async () => {
    const a = await dueApplication(t);
    expect((await t.patch(`/attendances/${a.uuid}`, { userPriority: 2 })).status).toBe(200);
    expect((await t.patch(`/attendances/${a.uuid}`, { payable: false })).body.payable).toBe(false);
    expect((await t.patch(`/attendances/${a.uuid}`, { payable: false })).status).toBe(200);
    expect((await t.patch(`/attendances/${a.uuid}`, { payable: true })).body.payable).toBe(true);
    expect(await postingsOf(t, a.uuid)).toEqual([['charge', 500], ['cancellation', -500], ['charge', 500]]);
  });

  it('creating again (reuse) follows the new decision', async () => {
    const offer = await offerWithFee(t, 300);
    const a = await applyFor(t, offer.uuid, null);
    const again = await t.post('/attendances', { offer: offer.uuid, participant: a.participant!.uuid, status: 'waitlisted' });
    expect(again.body.uuid).toBe(a.uuid);
    expect(await postingsOf(t, a.uuid)).toEqual([['charge', 300], ['cancellation', -300]]);
  });

  it('deleting an unpaid application cancels its charge; the bookings stay', async () => {
    const a = await dueApplication(t);
    expect((await t.del(`/attendances/${a.uuid}`)).status).toBe(204);
    expect(await postingsOf(t, a.uuid)).toEqual([['charge', 500], ['cancellation', -500]]);
    expect((await ledgerOfAccount(t, a.account!.uuid)).balance).toBe(0);
  });

  it('deleting a participant cancels the charges of its (unpaid) applications', async () => {
    const a = await dueApplication(t);
    expect((await t.del(`/participants/${a.participant!.uuid}`)).status).toBe(204);
    expect(await postingsOf(t, a.uuid)).toEqual([['charge', 500], ['cancellation', -500]]);
  });

  it('a place refilled from the waiting list is charged', async () => {
    const offer = await (await import('../../factories/offer.factory.js')).create(t, {
      edition: (await createEdition(t, { procedure: 'firstcome' })).uuid, fee: 700, maxParticipants: 1,
    });
    const first = await applyFor(t, offer.uuid, null, {});
    const second = await applyFor(t, offer.uuid, null, {});
    expect([first.status, second.status]).toEqual(['confirmed', 'waitlisted']);
    await transitionOk(t, first.uuid, 'withdraw');
    await h.jobs.drain(); // the refill job (D9)
    expect((await getOk(t, `/attendances/${second.uuid}`)).status).toBe('confirmed');
    expect(await postingsOf(t, second.uuid)).toEqual([['charge', 700]]);
  });

  it('a participant without an account is its own debtor', async () => {
    const a = await dueApplication(t, { account: null });
    const [b] = await getOk(t, `/bookings?attendance=${a.uuid}`);
    const debtor = await getOk(t, `/debtors/${b.debtor.uuid}`);
    expect(debtor).toMatchObject({ participant: { uuid: a.participant!.uuid, name: a.participant!.name }, name: a.participant!.name, balance: 500 });
    expect(debtor).not.toHaveProperty('account');
  });

  it('an unpaid charge follows the debtor and the edition; a paid one stays with its receipt', async () => {
    const family = await createAccount(t);
    const unpaid = await dueApplication(t, { account: null, fee: 400 });
    const paid = await dueApplication(t, { account: null, fee: 600 });
    const receipt = await pay(t, [{ attendance: paid.uuid }]);
    // The child without an account joins the family: its unpaid charge moves to the family's ledger.
    expect((await t.patch(`/participants/${unpaid.participant!.uuid}`, { account: family.uuid })).status).toBe(200);
    expect((await t.patch(`/participants/${paid.participant!.uuid}`, { account: family.uuid })).status).toBe(200);
    const rows = await getOk(t, `/bookings?attendance=${unpaid.uuid}`);
    expect(rows.map((b) => [b.type, b.amount, b.debtor.name])).toEqual([
      ['charge', 400, unpaid.participant!.name], ['cancellation', -400, unpaid.participant!.name], ['charge', 400, family.name],
    ]);
    expect(await postingsOf(t, paid.uuid)).toEqual([['charge', 600], ['payment', -600]]);
    const owed = async () => (await getOk(t, `/ledgers?account=${family.uuid}`)).reduce((sum, l) => sum + l.balance, 0);
    expect(await owed()).toBe(400);
    // The open payments of the family are exactly what its ledger says.
    const open = await getOk(t, `/attendances?payable=true&paid=false&account=${family.uuid}`);
    expect(open.map((x) => x.uuid)).toEqual([unpaid.uuid]);
    // One receipt for both children works now (one debtor); the paid one's reversal stays with the old debtor.
    expect((await t.post(`/receipts/${receipt.uuid}/reverse`, {})).status).toBe(200);
    const r2 = await pay(t, [{ attendance: unpaid.uuid }, { attendance: paid.uuid }]);
    expect(r2.debtor.name).toBe(family.name);
    expect(await owed()).toBe(0);
    for (const d of await getOk(t, '/debtors?itemsPerPage=200')) {
      if (d.participant !== undefined && [unpaid.participant!.uuid, paid.participant!.uuid].includes(d.participant.uuid)) expect(d.balance, d.name).toBe(0);
    }
    // The account is deleted: each child is its own debtor again; unpaid charges move back.
    const c = await dueApplication(t, { account: family.uuid, fee: 100 });
    expect((await t.del(`/accounts/${family.uuid}`)).status).toBe(204);
    const moved = await getOk(t, `/bookings?attendance=${c.uuid}`);
    expect(moved.map((b) => [b.type, b.amount])).toEqual([['charge', 100], ['cancellation', -100], ['charge', 100]]);
    expect(moved[2].debtor.name).toBe(c.participant!.name);
    // An offer moved to another edition takes its unpaid charges along.
    const other = await createEdition(t, { procedure: 'firstcome' });
    expect((await t.patch(`/offers/${c.offer.uuid}`, { edition: other.uuid })).status).toBe(200);
    const last = (await getOk(t, `/bookings?attendance=${c.uuid}`)).slice(3);
    expect(last.map((b) => [b.type, b.amount, b.edition.uuid])).toEqual([['cancellation', -100, c.edition.uuid], ['charge', 100, other.uuid]]);
  });

  it('syncCharges is idempotent: calling it again posts nothing', async () => {
    const a = await dueApplication(t);
    const db = executorOf(h.orm);
    await syncCharges(db, t.tenant.schema, [a.uuid, a.uuid]);
    await syncCharges(db, t.tenant.schema, [a.uuid]);
    expect(await postingsOf(t, a.uuid)).toEqual([['charge', 500]]);
  });
});

describe('GET /bookings and /bookings/{uuid}', () => {
  let u: TestTenant;
  let a1: Schema<'Attendance'>;
  let a2: Schema<'Attendance'>;
  let other: Schema<'Attendance'>;
  let receipt: Schema<'Receipt'>;

  beforeAll(async () => {
    u = await h.tenant();
    const account = await createAccount(u);
    const edition = await createEdition(u, { procedure: 'firstcome' });
    a1 = await dueApplication(u, { account: account.uuid, edition: edition.uuid });
    a2 = await dueApplication(u, { account: account.uuid, edition: edition.uuid });
    other = await dueApplication(u);
    receipt = await pay(u, [{ attendance: a1.uuid, amount: 400 }]);
  });

  it('lists in posting order, filtered by account, debtor, edition, attendance and receipt', async () => {
    const all = await getOk(u, '/bookings');
    expect(all.map((b) => [b.attendance, b.type, b.amount])).toEqual([
      [a1.uuid, 'charge', 500], [a2.uuid, 'charge', 500], [other.uuid, 'charge', 500],
      [a1.uuid, 'payment', -400], [a1.uuid, 'discount', -100],
    ]);
    const mine = (q: string) => getOk(u, `/bookings?${q}`).then((rows) => rows.map((b) => b.uuid));
    const ofFamily = all.filter((b) => b.attendance !== other.uuid).map((b) => b.uuid);
    expect(await mine(`account=${a1.account!.uuid}`)).toEqual(ofFamily);
    const email = (await getOk(u, `/accounts/${a1.account!.uuid}`)).email;
    expect(await mine(`account=${encodeURIComponent(email!.toUpperCase())}`)).toEqual(ofFamily);
    expect(await mine(`debtor=${uuidToBase58(all[0].debtor.uuid)}`)).toEqual(ofFamily);
    expect(await mine(`edition=${a1.edition.alias}`)).toEqual(ofFamily);
    expect(await mine(`edition=${other.edition.uuid}`)).toEqual([all[2].uuid]);
    expect(await mine(`attendance=${a2.uuid}`)).toEqual([all[1].uuid]);
    expect(await mine(`receipt=${receipt.uuid}`)).toEqual([all[3].uuid, all[4].uuid]);
    expect(all[3].receipt).toEqual({ uuid: receipt.uuid, name: receipt.number });
    expect(await mine(`receipt=${receipt.uuid}&attendance=${a2.uuid}`)).toEqual([]);
    for (const q of ['account=nobody@example.org', 'debtor=nix', 'edition=unbekannt', 'attendance=00000000-0000-4000-8000-000000000000', 'receipt=x']) {
      expect(await mine(q), q).toEqual([]);
    }
    expect(await mine('itemsPerPage=2&page=2')).toEqual([all[2].uuid, all[3].uuid]);
    expectProblem(await u.get('/bookings?itemsPerPage=201'), 400);
  });

  it('one booking; unknown or malformed: 404', async () => {
    const [b] = await getOk(u, `/bookings?attendance=${a2.uuid}`);
    expect(await getOk(u, `/bookings/${uuidToBase58(b.uuid)}`)).toEqual(b);
    expectProblem(await u.get('/bookings/00000000-0000-4000-8000-000000000000'), 404);
    expectProblem(await u.get('/bookings/kaputt'), 404);
  });

  it('PATCH and DELETE are 405 (Allow: GET), 404 for an unknown booking; nothing changes', async () => {
    const before = await getOk(u, '/bookings');
    const b = before[0];
    const p = await u.patch(`/bookings/${b.uuid}`, { amount: 1 });
    expect(expectProblem(p, 405).detail).toMatch(/A booking is never changed/);
    expect(p.headers.allow).toBe('GET');
    const d = await u.del(`/bookings/${b.uuid}`);
    expect(expectProblem(d, 405).detail).toMatch(/A booking is never deleted/);
    expect(d.headers.allow).toBe('GET');
    expectProblem(await u.patch('/bookings/00000000-0000-4000-8000-000000000000', { amount: 1 }), 404);
    expectProblem(await u.del('/bookings/00000000-0000-4000-8000-000000000000'), 404);
    expect(await getOk(u, '/bookings')).toEqual(before);
  });

  it('the table itself refuses UPDATE and DELETE (append-only)', async () => {
    const db = executorOf(h.orm);
    const table = qualified(u.tenant.schema, 'bookings');
    await expect(sql`update ${table} set amount = 1`.execute(db)).rejects.toThrow(/append-only/);
    await expect(sql`delete from ${table}`.execute(db)).rejects.toThrow(/append-only/);
    const receipts = qualified(u.tenant.schema, 'receipts');
    await expect(sql`update ${receipts} set total = 1`.execute(db)).rejects.toThrow(/immutable/);
    await expect(sql`update ${receipts} set number = 'X'`.execute(db)).rejects.toThrow(/immutable/);
  });

  it('admins only: organisers get 403; without a token 401', async () => {
    const host = await createOrganiser(u);
    const org = await u.token({ role: 'organiser', organiserIds: [host.uuid] });
    for (const path of ['/bookings', '/debtors', '/ledgers', '/receipts']) {
      expectProblem(await u.get(path, { token: org }), 403);
      expectProblem(await u.get(path, { token: null }), 401);
      expect((await u.get(path, { token: await u.token({ access: 'read' }) })).status).toBe(200);
    }
  });
});
