import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, useHarness, type Schema } from '../../harness/harness.js';
import { uuidToBase58 } from '../../../src/platform/http/ids.js';
import { createAccount, createEdition, dueApplication, getOk, pay } from '../money/helpers.js';

// GET /debtors and /debtors/{uuid} (D8, D10): a family account, or a participant without one; its own record
// (`uuid`, `name`, `account` or `participant` reference) made on first need. Filters `account`, `q`.
let family: Schema<'Account'>;
let a1: Schema<'Attendance'>;
let solo: Schema<'Attendance'>;

const { h, t } = useHarness();
beforeAll(async () => {
  family = await createAccount(t, { firstname: 'Anna', lastname: 'Zander' });
  const edition = await createEdition(t, { procedure: 'firstcome' });
  a1 = await dueApplication(t, { account: family.uuid, edition: edition.uuid, fee: 900 });
  // A second child of the same family, in another edition: still one debtor.
  await dueApplication(t, { account: family.uuid, fee: 100 });
  solo = await dueApplication(t, { account: null, fee: 300 });
  await pay(t, [{ attendance: solo.uuid }]);
});

describe('GET /debtors', () => {
  it('one debtor per family account and per participant without one, with what each owes, by name', async () => {
    const rows = await getOk(t, '/debtors');
    expect(rows).toHaveLength(2);
    const fam = rows.find((d) => d.account);
    const kid = rows.find((d) => d.participant);
    expect(fam).toMatchObject({ name: 'Anna Zander', account: { uuid: family.uuid, name: 'Anna Zander' }, balance: 1000 });
    expect(fam).not.toHaveProperty('participant');
    expect(kid).toMatchObject({ name: solo.participant!.name, participant: { uuid: solo.participant!.uuid, name: solo.participant!.name }, balance: 0 });
    expect(kid).not.toHaveProperty('account');
    expect(fam!.createdAt).toMatch(/[+-]\d{2}:\d{2}$/);
    // German collation by name: "Anna Zander" before "Kim Kind…".
    expect(rows.map((d) => d.uuid)).toEqual([fam!.uuid, kid!.uuid]);
  });

  it('filters by account (UUID, base58 or e-mail) and q (name or e-mail); unknown values give []', async () => {
    const ids = async (q: string) => (await getOk(t, `/debtors?${q}`)).map((d) => d.account?.uuid ?? d.participant?.uuid);
    expect(await ids(`account=${family.uuid}`)).toEqual([family.uuid]);
    expect(await ids(`account=${uuidToBase58(family.uuid)}`)).toEqual([family.uuid]);
    expect(await ids(`account=${encodeURIComponent(family.email!.toUpperCase())}`)).toEqual([family.uuid]);
    expect(await ids('account=nobody@example.org')).toEqual([]);
    expect(await ids('q=zand')).toEqual([family.uuid]);
    expect(await ids(`q=${encodeURIComponent(family.email!.slice(0, 12))}`)).toEqual([family.uuid]);
    expect(await ids(`q=${encodeURIComponent(solo.participant!.name!.split(' ')[1])}`)).toEqual([solo.participant!.uuid]);
    expect(await ids('q=%25')).toEqual([]);
    expect(await ids('itemsPerPage=1&page=2')).toHaveLength(1);
    expectProblem(await t.get('/debtors?page=0'), 400);
  });

  it('one debtor; unknown or malformed: 404', async () => {
    const [d] = await getOk(t, `/debtors?account=${family.uuid}`);
    expect(await getOk(t, `/debtors/${uuidToBase58(d.uuid)}`)).toEqual(d);
    expect((await getOk(t, `/bookings?attendance=${a1.uuid}`))[0].debtor).toEqual({ uuid: d.uuid, name: 'Anna Zander' });
    expectProblem(await t.get('/debtors/00000000-0000-4000-8000-000000000000'), 404);
    expectProblem(await t.get('/debtors/nope'), 404);
  });
});
