import { beforeAll, describe, expect, it } from 'vitest';
import { DateTime } from 'luxon';
import { expectProblem, useHarness, type TestTenant, type Schema } from '../../harness/harness.js';
import { uuidToBase58 } from '../../../src/platform/http/ids.js';
import { create as createOrganiser } from '../../factories/organiser.factory.js';
import { outbox } from '../attendances/helpers.js';
import {
  applyFor, attendance, createAccount, createEdition, dueApplication, getOk, ledgerOfAccount, offerWithFee, pay, postingsOf,
} from '../money/helpers.js';

// POST /receipts, GET /receipts, GET /receipts/{uuid} (D8, D10 "Money").
const year = () => DateTime.now().setZone('Europe/Berlin').year;

const { h, t } = useHarness();

describe('POST /receipts', () => {
  it('refuses a paidAt in the future with 422 (issue 13), takes one in the past or now', async () => {
    const a = await dueApplication(t);
    const future = DateTime.now().plus({ hours: 2 }).toISO();
    const p = expectProblem(await t.post('/receipts', { items: [{ attendance: a.uuid }], paidAt: future }), 422);
    expect(p.violations?.[0]).toMatchObject({ propertyPath: 'paidAt', message: 'This value must not be in the future.' });
    expect(p.type).toBe(`/validation_errors/${p.violations?.[0].code}`);
    const nextYear = `${year() + 1}-01-02T10:00:00+01:00`;
    expectProblem(await t.post('/receipts', { items: [{ attendance: a.uuid }], paidAt: nextYear }), 422);
    expect((await attendance(t, a.uuid)).paid).toBe(false);
    const ok = await pay(t, [{ attendance: a.uuid }], { paidAt: DateTime.now().minus({ minutes: 1 }).toISO() });
    expect(ok.number).toMatch(new RegExp(`^R-${year()}-`));
  });

  it('pays the fee by default: 201 with number, debtor, items, total and paidAt; the application is paid', async () => {
    const u = await h.tenant();
    const a = await dueApplication(u, { fee: 1250 });
    const res = await u.post('/receipts', { items: [{ attendance: uuidToBase58(a.uuid), text: 'Zeltlager' }] });
    expect(res.status, res.text).toBe(201);
    const r = res.body;
    expect(r).toMatchObject({
      number: `R-${year()}-0001`,
      debtor: { name: a.account!.name },
      items: [{ attendance: a.uuid, amount: 1250, text: 'Zeltlager' }],
      total: 1250,
      reversals: [],
    });
    expect(r).not.toHaveProperty('reversedBy');
    expect(r).not.toHaveProperty('reverses');
    expect(r.paidAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/);
    const ledger = await ledgerOfAccount(u, a.account!.uuid);
    expect(r.debtor.uuid).toBe(ledger.debtor.uuid);
    expect(await attendance(u, a.uuid)).toMatchObject({ paid: true, payable: true, receipts: [r.uuid] });
    expect(await postingsOf(u, a.uuid)).toEqual([['charge', 1250], ['payment', -1250]]);
    expect(ledger.balance).toBe(0);
    expect(await getOk(u, `/receipts/${r.uuid}`)).toEqual(r);
  });

  it('a smaller amount pays it too and posts the difference as a discount; the text defaults to the offer\'s name', async () => {
    const a = await dueApplication(t, { fee: 500 });
    const r = await pay(t, [{ attendance: a.uuid, amount: 350 }]);
    expect(r.items).toEqual([{ attendance: a.uuid, amount: 350, text: a.offer.name }]);
    expect(r.total).toBe(350);
    expect(await postingsOf(t, a.uuid)).toEqual([['charge', 500], ['payment', -350], ['discount', -150]]);
    expect((await ledgerOfAccount(t, a.account!.uuid)).balance).toBe(0);
    const zero = await dueApplication(t, { fee: 500 });
    expect((await pay(t, [{ attendance: zero.uuid, amount: 0 }])).total).toBe(0);
    expect((await attendance(t, zero.uuid)).paid).toBe(true);
  });

  it('several applications of one family on one receipt, across editions', async () => {
    const family = await createAccount(t);
    const a1 = await dueApplication(t, { account: family.uuid, fee: 300 });
    const a2 = await dueApplication(t, { account: family.uuid, fee: 200 });
    const r = await pay(t, [{ attendance: a1.uuid }, { attendance: a2.uuid, amount: 150 }]);
    expect(r.items.map((i) => [i.attendance, i.amount])).toEqual([[a1.uuid, 300], [a2.uuid, 150]]);
    expect(r.total).toBe(450);
    const ledgers = await getOk(t, `/ledgers?account=${family.uuid}`);
    expect(ledgers.map((l) => l.balance)).toEqual([0, 0]);
    expect((await getOk(t, `/receipts?edition=${a2.edition.alias}`)).map((x) => x.uuid)).toEqual([r.uuid]);
  });

  it('numbers run per prefix without gaps: the year of paidAt in Berlin, a refused receipt takes none', async () => {
    const u = await h.tenant();
    const y = year();
    const n = async (paidAt?: string) => (await pay(u, [{ attendance: (await dueApplication(u)).uuid }], paidAt ? { paidAt } : {})).number;
    expect(await n()).toBe(`R-${y}-0001`);
    expectProblem(await u.post('/receipts', { items: [{ attendance: '00000000-0000-4000-8000-000000000000' }] }), 422);
    expect(await n()).toBe(`R-${y}-0002`);
    // 31 Dec 23:30 UTC is New Year's Day in Berlin; the counter restarts for each year.
    expect(await n('2024-12-31T23:30:00Z')).toBe('R-2025-0001');
    expect(await n('2025-06-01T12:00:00+02:00')).toBe('R-2025-0002');
    expect(await n('2024-06-01T12:00:00+02:00')).toBe('R-2024-0001');
    expect(await n()).toBe(`R-${y}-0003`);
    const r = (await getOk(u, '/receipts?itemsPerPage=200')).find((x) => x.number === 'R-2025-0001');
    expect(r!.paidAt).toBe('2025-01-01T00:30:00+01:00');
  });

  it('the tenant\'s receiptNumberPrefix', async () => {
    const u = await h.tenant({ settings: { receiptNumberPrefix: 'FP{year}/' } });
    expect((await pay(u, [{ attendance: (await dueApplication(u)).uuid }], { paidAt: '2025-03-01T10:00:00+01:00' })).number).toBe('FP2025/0001');
    const v = await h.tenant({ settings: { receiptNumberPrefix: 'Q-' } });
    expect((await pay(v, [{ attendance: (await dueApplication(v)).uuid }])).number).toBe('Q-0001');
  });

  it('concurrent receipts get distinct numbers without gaps; one application is paid once', async () => {
    const u = await h.tenant();
    const offer = await offerWithFee(u, 100);
    const family = await createAccount(u);
    const apps = await Promise.all(Array.from({ length: 16 }, () => applyFor(u, offer.uuid, family.uuid)));
    const results = await Promise.all(apps.map((a) => u.post('/receipts', { items: [{ attendance: a.uuid }] })));
    expect(results.map((r) => r.status)).toEqual(apps.map(() => 201));
    const numbers = results.map((r) => r.body.number).sort();
    expect(numbers).toEqual(apps.map((_, i) => `R-${year()}-${String(i + 1).padStart(4, '0')}`));
    // Six racing receipts for one due application: exactly one pays it, the others are 422.
    const one = await applyFor(u, offer.uuid, family.uuid);
    const race = await Promise.all(Array.from({ length: 6 }, () => u.post('/receipts', { items: [{ attendance: one.uuid }] })));
    expect(race.map((r) => r.status).sort()).toEqual([201, 422, 422, 422, 422, 422]);
    expect(await postingsOf(u, one.uuid)).toEqual([['charge', 100], ['payment', -100]]);
    expect(race.find((r) => r.status === 201)!.body.number).toBe(`R-${year()}-0017`);
  });

  it('notify queues the receipt e-mail to the family (outbox); without notify nothing is sent', async () => {
    const u = await h.tenant();
    const family = await createAccount(u, { email: 'zahler@example.org' });
    const a = await dueApplication(u, { account: family.uuid, fee: 1234 });
    await pay(u, [{ attendance: a.uuid }]);
    expect(await outbox(h, u)).toEqual([]);
    const b = await dueApplication(u, { account: family.uuid, fee: 1000 });
    const r = await pay(u, [{ attendance: b.uuid, amount: 800 }], { notify: true });
    const mails = await outbox(h, u);
    expect(mails.map((m) => [m.kind, m.recipient, m.subject])).toEqual([['receipt', 'zahler@example.org', `Quittung ${r.number}`]]);
    expect(mails[0]!.body).toContain('8,00 €');
    // A participant without an account gets it at its own address.
    const solo = await dueApplication(u, { account: null });
    await u.patch(`/participants/${solo.participant!.uuid}`, { email: 'kind@example.org' });
    await pay(u, [{ attendance: solo.uuid }], { notify: true });
    expect((await outbox(h, u)).map((m) => m.recipient)).toContain('kind@example.org');
  });
});

describe('POST /receipts: bad input (each a clear status and problem+json)', () => {
  it('negative amounts: 422 with a violation on the amount', async () => {
    const a = await dueApplication(t);
    const p = expectProblem(await t.post('/receipts', { items: [{ attendance: a.uuid, amount: -1 }] }), 422);
    expect(p.violations!.map((v) => v.propertyPath)).toEqual(['items[0].amount']);
    expect((await attendance(t, a.uuid)).paid).toBe(false);
  });

  it('an amount above the fee: 422 with detail only', async () => {
    const a = await dueApplication(t, { fee: 500 });
    const p = expectProblem(await t.post('/receipts', { items: [{ attendance: a.uuid, amount: 501 }] }), 422);
    expect(p.type).toBe('/errors/422');
    expect(p).not.toHaveProperty('violations');
    expect(p.detail).toBe(`items[0].amount: The amount 501 is above the application's fee of 500.`);
    expect(await postingsOf(t, a.uuid)).toEqual([['charge', 500]]);
  });

  it('an unknown application, or one of another tenant: 422 with detail only', async () => {
    const other = await h.tenant();
    const foreign = await dueApplication(other);
    for (const id of ['00000000-0000-4000-8000-000000000000', foreign.uuid, uuidToBase58(foreign.uuid)]) {
      const p = expectProblem(await t.post('/receipts', { items: [{ attendance: id }] }), 422);
      expect(p).not.toHaveProperty('violations');
      expect(p.detail).toMatch(/^items\[0\]\.attendance: No application with the identifier .* exists\.$/);
    }
    expect((await attendance(other, foreign.uuid)).paid).toBe(false);
    expect(await getOk(other, '/receipts')).toEqual([]);
  });

  it('applications of different debtors on one receipt: 422 naming them; nothing is paid', async () => {
    const a = await dueApplication(t);
    const b = await dueApplication(t);
    const c = await dueApplication(t, { account: null });
    for (const items of [[a, b], [a, c]]) {
      const p = expectProblem(await t.post('/receipts', { items: items.map((x) => ({ attendance: x.uuid })) }), 422);
      expect(p.detail).toMatch(/^items: A receipt covers the applications of one debtor/);
      expect(p).not.toHaveProperty('violations');
    }
    for (const x of [a, b, c]) expect((await attendance(t, x.uuid)).paid).toBe(false);
  });

  it('applications that are not due, or already paid: 422, one line per problem', async () => {
    const offer = await offerWithFee(t, 500);
    const family = await createAccount(t);
    const waitlisted = await applyFor(t, offer.uuid, family.uuid, { status: 'waitlisted' });
    const held = await applyFor(t, offer.uuid, family.uuid, { status: 'confirmed', commit: false });
    const off = await applyFor(t, offer.uuid, family.uuid);
    await t.patch(`/attendances/${off.uuid}`, { payable: false });
    const free = await applyFor(t, (await offerWithFee(t, 0)).uuid, family.uuid);
    const paid = await applyFor(t, offer.uuid, family.uuid);
    await pay(t, [{ attendance: paid.uuid }]);
    const items = [waitlisted, held, off, free, paid].map((x) => ({ attendance: x.uuid }));
    const p = expectProblem(await t.post('/receipts', { items }), 422);
    expect(p.detail.split('\n')).toEqual([
      `items[0].attendance: The application ${waitlisted.uuid} is not due (payable is false: it is waitlisted).`,
      `items[1].attendance: The application ${held.uuid} is not due (payable is false: its decision is held back).`,
      `items[2].attendance: The application ${off.uuid} is not due (payable is false: payable was switched off).`,
      `items[3].attendance: The application ${free.uuid} is not due (payable is false: it is free).`,
      `items[4].attendance: The application ${paid.uuid} is already paid; reverse its receipt first to pay it again.`,
    ]);
  });

  it('malformed bodies: 422 with violations (no items, empty items, a duplicate, a malformed id, a timestamp without offset, a fraction)', async () => {
    const a = await dueApplication(t);
    const cases: [unknown, string][] = [
      [{}, 'items'],
      [{ items: [] }, 'items'],
      [{ items: [{ attendance: a.uuid }, { attendance: uuidToBase58(a.uuid) }] }, 'items[1].attendance'],
      [{ items: [{ attendance: 'nope' }] }, 'items[0].attendance'],
      [{ items: [{ attendance: a.uuid }], paidAt: '2027-01-01T10:00:00' }, 'paidAt'],
      [{ items: [{ attendance: a.uuid, amount: 1.5 }] }, 'items[0].amount'],
      [{ items: [{ attendance: a.uuid, amount: '100' }] }, 'items[0].amount'],
    ];
    for (const [body, path] of cases) {
      const p = expectProblem(await t.post('/receipts', body), 422);
      expect(p.violations!.map((v) => v.propertyPath), JSON.stringify(body)).toContain(path);
    }
    expect(await postingsOf(t, a.uuid)).toEqual([['charge', 500]]);
  });

  it('admins with a read-write token only', async () => {
    const a = await dueApplication(t);
    const host = await createOrganiser(t);
    expectProblem(await t.post('/receipts', { items: [{ attendance: a.uuid }] }, { token: await t.token({ role: 'organiser', organiserIds: [host.uuid] }) }), 403);
    expectProblem(await t.post('/receipts', { items: [{ attendance: a.uuid }] }, { token: await t.token({ access: 'read' }) }), 403);
    expectProblem(await t.post('/receipts', { items: [{ attendance: a.uuid }] }, { token: null }), 401);
    expect((await attendance(t, a.uuid)).paid).toBe(false);
  });
});

describe('GET /receipts', () => {
  let u: TestTenant;
  let r1: Schema<'Receipt'>;
  let r2: Schema<'Receipt'>;
  let r3: Schema<'Receipt'>;
  let family: Schema<'Account'>;

  beforeAll(async () => {
    u = await h.tenant();
    family = await createAccount(u);
    const edition = await createEdition(u, { procedure: 'firstcome' });
    r1 = await pay(u, [{ attendance: (await dueApplication(u, { account: family.uuid, edition: edition.uuid })).uuid }]);
    r2 = await pay(u, [{ attendance: (await dueApplication(u)).uuid }]);
    r3 = await pay(u, [{ attendance: (await dueApplication(u, { account: family.uuid })).uuid }]);
  });

  it('newest first, filtered by account, debtor, edition and modifiedSince; unknown values give []', async () => {
    const ids = async (q = '') => (await getOk(u, `/receipts?${q}`)).map((r) => r.uuid);
    expect(await ids()).toEqual([r3.uuid, r2.uuid, r1.uuid]);
    expect(await ids(`account=${encodeURIComponent(family.email!)}`)).toEqual([r3.uuid, r1.uuid]);
    expect(await ids(`debtor=${r2.debtor.uuid}`)).toEqual([r2.uuid]);
    const edition = (await attendance(u, r1.items[0].attendance)).edition;
    expect(await ids(`edition=${edition.alias}`)).toEqual([r1.uuid]);
    expect(await ids(`edition=${uuidToBase58(edition.uuid)}&account=${family.uuid}`)).toEqual([r1.uuid]);
    expect(await ids('modifiedSince=2000-01-01')).toEqual([r3.uuid, r2.uuid, r1.uuid]);
    expect(await ids('modifiedSince=2999-01-01T00:00:00%2B01:00')).toEqual([]);
    for (const q of ['account=nix@example.org', 'debtor=x', 'debtor=00000000-0000-4000-8000-000000000000', 'edition=nix']) expect(await ids(q), q).toEqual([]);
    expectProblem(await u.get('/receipts?modifiedSince=gestern'), 400);
    expect(await ids('itemsPerPage=2&page=2')).toEqual([r1.uuid]);
  });

  it('one receipt; unknown or malformed: 404', async () => {
    expect(await getOk(u, `/receipts/${uuidToBase58(r2.uuid)}`)).toEqual(r2);
    expectProblem(await u.get('/receipts/00000000-0000-4000-8000-000000000000'), 404);
    expectProblem(await u.get('/receipts/kaputt'), 404);
  });
});
