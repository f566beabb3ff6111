import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, useHarness, type Schema } from '../../harness/harness.js';
import { uuidToBase58 } from '../../../src/platform/http/ids.js';
import { createAccount, createEdition, dueApplication, getOk, pay, transitionOk } from '../money/helpers.js';

// GET /ledgers and /ledgers/{uuid} (D8, D10): a debtor's account for one edition, `balance` (what it owes, the
// sum of its bookings) and `bookEntries` in posting order, empty values null. Filters `account`, `debtor`,
// `edition`.
let family: Schema<'Account'>;
let summer: Schema<'Edition'>;
let autumn: Schema<'Edition'>;
let a1: Schema<'Attendance'>;
let a2: Schema<'Attendance'>;
let a3: Schema<'Attendance'>;
let receipt: Schema<'Receipt'>;

const { h, t } = useHarness();
beforeAll(async () => {
  family = await createAccount(t, { lastname: 'Albers' });
  summer = await createEdition(t, { procedure: 'firstcome', name: 'Sommer 2027' });
  autumn = await createEdition(t, { procedure: 'firstcome', name: 'Herbst 2027' });
  a1 = await dueApplication(t, { account: family.uuid, edition: summer.uuid, fee: 1000 });
  a2 = await dueApplication(t, { account: family.uuid, edition: summer.uuid, fee: 400 });
  a3 = await dueApplication(t, { account: family.uuid, edition: autumn.uuid, fee: 250 });
  receipt = await pay(t, [{ attendance: a1.uuid, amount: 900 }]);
  await transitionOk(t, a2.uuid, 'withdraw');
});

describe('GET /ledgers', () => {
  it('one ledger per debtor and edition, its balance the sum of its entries in posting order', async () => {
    const rows = await getOk(t, `/ledgers?account=${family.uuid}`);
    expect(rows.map((l) => l.edition.name)).toEqual(['Herbst 2027', 'Sommer 2027']);
    const [herbst, sommer] = rows;
    expect(sommer.edition).toEqual({ uuid: summer.uuid, name: summer.name, alias: summer.alias });
    expect(sommer.bookEntries.map((e) => [e.type, e.amount, e.attendance, e.receipt])).toEqual([
      ['charge', 1000, a1.uuid, null],
      ['charge', 400, a2.uuid, null],
      ['payment', -900, a1.uuid, receipt.uuid],
      ['discount', -100, a1.uuid, receipt.uuid],
      ['cancellation', -400, a2.uuid, null],
    ]);
    expect(sommer.balance).toBe(0);
    for (const l of rows) expect(l.balance).toBe(l.bookEntries.reduce((s, e) => s + e.amount, 0));
    expect(herbst.balance).toBe(250);
    // Empty values inside bookEntries are null, not omitted (spec 1.6); every entry has all keys.
    for (const e of sommer.bookEntries) expect(Object.keys(e).sort()).toEqual(['amount', 'attendance', 'date', 'receipt', 'text', 'type', 'uuid']);
    expect(sommer.bookEntries[0].date).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/);
    expect(sommer.debtor.name).toContain('Albers');
    expect(sommer.modifiedAt >= sommer.createdAt).toBe(true);
  });

  it('filters by account, debtor and edition; unknown values give []', async () => {
    const [one] = await getOk(t, `/ledgers?edition=${summer.alias}`);
    expect(one.edition.uuid).toBe(summer.uuid);
    expect((await getOk(t, `/ledgers?debtor=${one.debtor.uuid}`)).length).toBe(2);
    expect((await getOk(t, `/ledgers?debtor=${one.debtor.uuid}&edition=${uuidToBase58(autumn.uuid)}`)).map((l) => l.edition.uuid)).toEqual([autumn.uuid]);
    expect((await getOk(t, `/ledgers?account=${encodeURIComponent(family.email!)}&edition=${summer.uuid}`)).map((l) => l.uuid)).toEqual([one.uuid]);
    for (const q of ['account=x@example.org', 'debtor=00000000-0000-4000-8000-000000000000', 'debtor=kaputt', 'edition=nix']) {
      expect(await getOk(t, `/ledgers?${q}`), q).toEqual([]);
    }
    expect(await getOk(t, '/ledgers?itemsPerPage=1&page=3')).toEqual([]);
  });

  it('one ledger; unknown or malformed: 404', async () => {
    const [l] = await getOk(t, `/ledgers?edition=${autumn.uuid}`);
    expect(await getOk(t, `/ledgers/${uuidToBase58(l.uuid)}`)).toEqual(l);
    expect(l.bookEntries.map((e) => e.attendance)).toEqual([a3.uuid]);
    expectProblem(await t.get('/ledgers/00000000-0000-4000-8000-000000000000'), 404);
    expectProblem(await t.get('/ledgers/x'), 404);
  });
});
