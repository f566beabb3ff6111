import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, useHarness, type Schema, type TestResponse } from '../../harness/harness.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import { ageAtOffer, pseudonymFor } from '../../../src/domain/retention.js';
import { runRetention, type RetentionResult } from '../../../src/resources/retention/service.js';
import {
  accountRow, age, apply, createAccount, createEdition, createOffer, createParticipant, lastWrites, offerEndedWeeksAgo,
  participantRow, weeksAgo,
} from './helpers.js';

// Retention (D2 retentionWeeks = 12 by default, D9; docs/decisions.md "Retention") through the real database and
// the real endpoints: who is pseudonymised, what applications, participants, accounts and receipts show after.

const DOB = '2016-05-23';

// The scenario, built once (see beforeAll).
let old: Schema<'Offer'>; let old2: Schema<'Offer'>; let recent: Schema<'Offer'>; let noDates: Schema<'Offer'>; let recurring: Schema<'Offer'>;
const kids: Record<string, Schema<'Participant'>> = {};
const apps: Record<string, Schema<'Attendance'>> = {};
const families: Record<string, Schema<'Account'>> = {};
let receipt: Schema<'Receipt'>;
let dry: RetentionResult;
let first: RetentionResult;
let before: string;

const { h, t } = useHarness();
beforeAll(async () => {
  const edition = (await createEdition(t, { procedure: 'firstcome' })).uuid;
  old = await offerEndedWeeksAgo(t, 13, edition);
  old2 = await offerEndedWeeksAgo(t, 40, edition);
  // In an edition of its own: retention counts from the end of an edition's holidays, or without a holiday task
  // from its last offer date (D2, issue 22.9), so a recent offer in `edition` would keep all of its children.
  recent = await offerEndedWeeksAgo(t, 11);
  // Weekly, four times; the last occurrence ended 13 weeks ago (the first 16 weeks ago).
  const firstEnd = weeksAgo(16);
  recurring = await createOffer(t, {
    edition, fee: 0, maxParticipants: null, minAge: null, maxAge: null,
    dates: [{ begin: new Date(Date.parse(firstEnd) - 3_600_000).toISOString(), end: firstEnd, recurrence: 'FREQ=WEEKLY;COUNT=4' }],
  });
  // An offer without dates ends with its edition's holidays (ended 14 weeks ago).
  const holidays = (await createEdition(t, {
    procedure: 'firstcome', tasks: [{ type: 'holiday', title: 'Sommerferien', begin: weeksAgo(20), end: weeksAgo(14) }],
  })).uuid;
  noDates = await createOffer(t, { edition: holidays, fee: 0, maxParticipants: null, minAge: null, maxAge: null, dates: [] });

  // Family A: one child, offers long over -> child and account go.
  families.a = await createAccount(t, { phone: '0761 1', street: 'Weg 1', zip: '79100' });
  kids.a = await createParticipant(t, { account: families.a.uuid, dateOfBirth: DOB, email: 'kind-a@example.org', phone: '0170 1' });
  apps.aOld = await apply(t, old.uuid, kids.a.uuid);
  apps.aOld2 = await apply(t, old2.uuid, kids.a.uuid);
  // Family D: one child done (old), one still living (recent) -> the account keeps its data.
  families.d = await createAccount(t);
  kids.d1 = await createParticipant(t, { account: families.d.uuid });
  kids.d2 = await createParticipant(t, { account: families.d.uuid });
  apps.d1 = await apply(t, old.uuid, kids.d1.uuid);
  apps.d2 = await apply(t, recent.uuid, kids.d2.uuid);
  // Family R paid a receipt for its only child's old offer -> the debtor keeps the name for the receipt.
  families.r = await createAccount(t, { firstname: 'Rita', lastname: 'Rechnung' });
  kids.r = await createParticipant(t, { account: families.r.uuid });
  apps.r = await apply(t, old.uuid, kids.r.uuid);
  const paid = await t.post('/receipts', { items: [{ attendance: apps.r.uuid }] });
  expect(paid.status, paid.text).toBe(201);
  receipt = paid.body;
  // Children without an account.
  kids.recent = await createParticipant(t);
  apps.recent = await apply(t, recent.uuid, kids.recent.uuid);
  kids.mixed = await createParticipant(t);
  apps.mixedOld = await apply(t, old.uuid, kids.mixed.uuid);
  apps.mixedRecent = await apply(t, recent.uuid, kids.mixed.uuid);
  kids.recurring = await createParticipant(t);
  apps.recurring = await apply(t, recurring.uuid, kids.recurring.uuid);
  kids.noDates = await createParticipant(t);
  apps.noDates = await apply(t, noDates.uuid, kids.noDates.uuid);
  // Issue 22.9, D2: retentionWeeks after the edition's holidays end, not after the offer's own end. An offer that
  // ended 13 weeks ago, early in holidays that ended 11 weeks ago, keeps its children.
  const summer = (await createEdition(t, {
    procedure: 'firstcome', tasks: [{ type: 'holiday', title: 'Sommerferien', begin: weeksAgo(20), end: weeksAgo(11) }],
  })).uuid;
  kids.holidays = await createParticipant(t);
  apps.holidays = await apply(t, (await offerEndedWeeksAgo(t, 13, summer)).uuid, kids.holidays.uuid);
  // Without a holiday task: the edition's last offer date (a later offer of the same edition ended 11 weeks ago).
  const autumn = (await createEdition(t, { procedure: 'firstcome' })).uuid;
  kids.lastOffer = await createParticipant(t);
  apps.lastOffer = await apply(t, (await offerEndedWeeksAgo(t, 13, autumn)).uuid, kids.lastOffer.uuid);
  await offerEndedWeeksAgo(t, 11, autumn);
  // A child paying for itself (its own debtor) with a receipt.
  kids.payer = await createParticipant(t, { firstname: 'Paula', lastname: 'Selbstzahlerin' });
  apps.payer = await apply(t, old.uuid, kids.payer.uuid);
  expect((await t.post('/receipts', { items: [{ attendance: apps.payer.uuid }] })).status).toBe(201);
  // No applications: registered long ago -> goes; registered now -> stays.
  kids.idleOld = await createParticipant(t);
  await age(h, t, 'participants', kids.idleOld.uuid, 13);
  kids.idleNew = await createParticipant(t);
  // Accounts without children: untouched for 13 weeks -> goes; new -> stays.
  families.emptyOld = await createAccount(t);
  await age(h, t, 'accounts', families.emptyOld.uuid, 13);
  families.emptyNew = await createAccount(t);

  before = await lastWrites(h, t);
  dry = await runRetention(t.context(), { dryRun: true });
  expect(await lastWrites(h, t)).toBe(before);
  first = await runRetention(t.context(), { batchSize: 3 });
});

const gone = ['a', 'd1', 'r', 'recurring', 'noDates', 'payer', 'idleOld'];
const kept = ['d2', 'recent', 'mixed', 'idleNew', 'holidays', 'lastOffer'];

describe('who is due (retentionWeeks 12)', () => {
  it('pseudonymises the children whose offers all ended more than 12 weeks ago, and no one else', () => {
    expect(first.participantUuids.sort()).toEqual(gone.map((k) => kids[k].uuid).sort());
    for (const k of kept) expect(first.participantUuids, k).not.toContain(kids[k].uuid);
  });

  it('counts from the end of the edition\'s holidays (or its last offer date), not the offer\'s own end (D2, issue 22.9)', async () => {
    for (const k of ['holidays', 'lastOffer']) {
      const res = await t.get(`/participants/${kids[k].uuid}`);
      expect(res.status).toBe(200);
      expect(res.body, k).not.toHaveProperty('pseudonymisedAt');
      expect(res.body.firstname, k).toBe(kids[k].firstname);
    }
  });

  it('removes the data of the accounts left without a living child and of old childless ones', () => {
    expect(first.accountUuids.sort()).toEqual([families.a.uuid, families.r.uuid, families.emptyOld.uuid].sort());
    expect(first.applications).toBe(7);
  });

  it('the dry run named exactly the same records and changed nothing', () => {
    expect(dry.dryRun).toBe(true);
    expect(dry.participantUuids.sort()).toEqual(first.participantUuids.sort());
    expect(dry.accountUuids).toEqual(first.accountUuids);
    expect(dry.applications).toBe(first.applications);
  });

  it('a second run finds nothing and writes nothing (idempotent)', async () => {
    const afterFirst = await lastWrites(h, t);
    const again = await runRetention(t.context());
    expect(again.participantUuids).toEqual([]);
    expect(again.accountUuids).toEqual([]);
    expect(again.applications).toBe(0);
    expect(await lastWrites(h, t)).toBe(afterFirst);
  });
});

describe('what remains', () => {
  it('the participant row holds no name, birth date or contact data; the pseudonym is stored', async () => {
    const row = await participantRow(h, t, kids.a.uuid);
    expect(row).toMatchObject({ firstname: null, lastname: null, date_of_birth: null, email: null, phone: null, pseudonym: pseudonymFor(kids.a.uuid) });
    expect(row.pseudonymised_at).not.toBeNull();
    expect((await participantRow(h, t, kids.d2.uuid)).firstname).toBe('Kim');
  });

  it('GET /participants/{uuid} shows the pseudonym and nothing personal', async () => {
    const one = (await t.get(`/participants/${kids.a.uuid}`)).body;
    expect(Object.keys(one).sort()).toEqual(['account', 'createdAt', 'modifiedAt', 'pseudonym', 'pseudonymisedAt', 'uuid']);
    expect(one.pseudonym).toBe(pseudonymFor(kids.a.uuid));
    // The link to the family stays (the account is the debtor, D8), without a name.
    expect(one.account).toEqual({ uuid: families.a.uuid });
    const d1 = (await t.get(`/participants/${kids.d1.uuid}`)).body;
    expect(d1.account).toEqual({ uuid: families.d.uuid, name: families.d.name });
    const living = (await t.get(`/participants/${kids.d2.uuid}`)).body;
    expect(living.name).toBeDefined();
    expect(living.dateOfBirth).toBe(DOB);
    expect(living.pseudonym).toBeUndefined();
  });

  it('even where a column still held data, a pseudonymised participant shows none of it, and q does not find it', async () => {
    const c = await createParticipant(t, { firstname: 'Marker', lastname: 'Zeile', dateOfBirth: DOB, email: 'marker@example.org', phone: '0170 9' });
    await sql`update ${qualified(t.tenant.schema, 'participants')} set pseudonymised_at = now() where uuid = ${c.uuid}::uuid`
      .execute(executorOf(h.orm));
    const one = (await t.get(`/participants/${c.uuid}`)).body;
    for (const f of ['firstname', 'lastname', 'name', 'dateOfBirth', 'email', 'phone'] as const) expect(one[f], f).toBeUndefined();
    for (const q of ['marker', 'zeile', 'example.org', '0170', '2016']) expect((await t.get(`/participants?q=${q}`)).body, q).toEqual([]);
    const listed = (await t.get('/participants?itemsPerPage=200')).body.find((p) => p.uuid === c.uuid);
    expect(listed!.email).toBeUndefined();
    expect(listed!.dateOfBirth).toBeUndefined();
  });

  it('a pseudonymised participant cannot be changed back (409)', async () => {
    expect(expectProblem(await t.patch(`/participants/${kids.a.uuid}`, { firstname: 'Wieder' }), 409).detail).toMatch(/pseudonymised/);
  });

  it('applications keep the age at the offer and show the pseudonym instead of the participant', async () => {
    const list = (await t.get(`/attendances?participant=${kids.a.uuid}`)).body;
    expect(list.map((a) => a.uuid).sort()).toEqual([apps.aOld.uuid, apps.aOld2.uuid].sort());
    for (const a of list) {
      expect(a.participant).toBeUndefined();
      expect(a.participantPseudonym).toBe(pseudonymFor(kids.a.uuid));
      const offer = a.offer.uuid === old.uuid ? old : old2;
      expect(a.participantAge).toBe(ageAtOffer(DOB, new Date(offer.dates[0].begin)));
      expect(a.account).toEqual({ uuid: families.a.uuid });
    }
    const one = (await t.get(`/attendances/${apps.aOld.uuid}`)).body;
    expect(one.participant).toBeUndefined();
    expect(one.participantAge).toBe(ageAtOffer(DOB, new Date(old.dates[0].begin)));
    // The offer's list shows them the same way; a living child keeps its reference and shows its age too.
    const offerList = (await t.get(`/offers/${old.uuid}/attendances?itemsPerPage=200`)).body;
    expect(offerList.find((a) => a.uuid === apps.aOld.uuid)!.participantPseudonym).toMatch(/^P-/);
    const living = (await t.get(`/attendances/${apps.mixedOld.uuid}`)).body;
    expect(living.participant!.uuid).toBe(kids.mixed.uuid);
    expect(living.participantPseudonym).toBeUndefined();
    expect(living.participantAge).toBe(ageAtOffer(DOB, new Date(old.dates[0].begin)));
    // The application of a pseudonymised child of a family that still has a living child names no family.
    const d1 = (await t.get(`/attendances/${apps.d1.uuid}`)).body;
    expect(d1.account).toEqual({ uuid: families.d.uuid });
    expect(d1.piiMasked).toBe(false);
  });

  it('an offer without dates: the age is taken at the beginning of the edition\'s holidays', async () => {
    const one = (await t.get(`/attendances/${apps.noDates.uuid}`)).body;
    expect(one.participant).toBeUndefined();
    expect(one.participantAge).toBe(ageAtOffer(DOB, new Date(weeksAgo(20))));
  });

  it('accounts left without a living child: no e-mail, names, phone or address; a family with a living child keeps all', async () => {
    const a = (await t.get(`/accounts/${families.a.uuid}`)).body;
    expect(Object.keys(a).sort()).toEqual(['createdAt', 'modifiedAt', 'participants', 'pseudonymisedAt', 'uuid']);
    expect(a.participants).toEqual([{ uuid: kids.a.uuid }]);
    expect(await accountRow(h, t, families.a.uuid)).toMatchObject({ email: null, firstname: null, lastname: null, phone: null, street: null, zip: null, city: null });
    const d = (await t.get(`/accounts/${families.d.uuid}`)).body;
    expect(d.email).toBe(families.d.email);
    expect(d.name).toBe(families.d.name);
    expect(d.pseudonymisedAt).toBeUndefined();
    // Its pseudonymised child is listed without a name, the living one with.
    expect(d.participants).toContainEqual({ uuid: kids.d1.uuid });
    expect(d.participants).toContainEqual({ uuid: kids.d2.uuid, name: kids.d2.name });
    expect((await t.get(`/accounts?q=${encodeURIComponent(families.a.email!)}`)).body).toEqual([]);
    expect((await t.get(`/accounts/${families.emptyNew.uuid}`)).body.email).toBe(families.emptyNew.email);
  });

  it('receipts keep the debtor\'s name (accounting record); the account itself shows none', async () => {
    const r = (await t.get(`/receipts/${receipt.uuid}`)).body;
    expect(r.debtor.name).toBe('Rita Rechnung');
    expect(r.number).toBe(receipt.number);
    const acc = (await t.get(`/accounts/${families.r.uuid}`)).body;
    expect(acc.name).toBeUndefined();
    expect(acc.email).toBeUndefined();
    // A child paying for itself: its receipts keep its name, the participant shows none.
    const own = (await t.get(`/receipts?itemsPerPage=200`)).body.filter((x) => x.debtor.name === 'Paula Selbstzahlerin');
    expect(own).toHaveLength(1);
    expect((await t.get(`/participants/${kids.payer.uuid}`)).body.name).toBeUndefined();
    // The debtor without a receipt (family A) keeps no name.
    const debtors = (await t.get(`/debtors?account=${families.a.uuid}`)).body;
    for (const d of debtors) expect(d.name).toBeUndefined();
  });

  it('a pseudonymised child cannot apply again or be transferred', async () => {
    expectProblem(await t.post('/attendances', { offer: recent.uuid, participant: kids.a.uuid }), 422);
  });
});

describe('concurrent applications', () => {
  it('an application for a child being pseudonymised waits for the run and is then refused (422)', async () => {
    const c = await createParticipant(t);
    let settled = false;
    let pending: Promise<TestResponse<Schema<'Attendance'>>> | undefined;
    // What a retention batch does: lock the participant, then pseudonymise it, in one transaction.
    await executorOf(h.orm).transaction().execute(async (trx) => {
      const table = qualified(t.tenant.schema, 'participants');
      await sql`select uuid from ${table} where uuid = ${c.uuid}::uuid for update`.execute(trx);
      pending = t.post('/attendances', { offer: recent.uuid, participant: c.uuid }).then((r) => { settled = true; return r; });
      await new Promise((r) => setTimeout(r, 500));
      expect(settled).toBe(false);
      await sql`update ${table} set firstname = null, pseudonymised_at = now() where uuid = ${c.uuid}::uuid`.execute(trx);
    });
    expect(expectProblem(await pending!, 422).detail).toMatch(/pseudonymised/);
  });
});

describe('the family account becomes due with its last child', () => {
  it('when the living child\'s offer is past retention too, the next run takes the child and the account', async () => {
    const u = await h.tenant({ settings: { retentionWeeks: 4 } });
    const offer = await offerEndedWeeksAgo(u, 5);
    const fam = await createAccount(u);
    const k1 = await createParticipant(u, { account: fam.uuid });
    const k2 = await createParticipant(u, { account: fam.uuid });
    await apply(u, offer.uuid, k1.uuid);
    const later = await offerEndedWeeksAgo(u, 3);
    await apply(u, later.uuid, k2.uuid);
    const r1 = await runRetention(u.context());
    expect(r1.participantUuids).toEqual([k1.uuid]);
    expect(r1.accountUuids).toEqual([]);
    // Four weeks on, the later offer is past retention as well.
    const r2 = await runRetention(u.context(), { now: new Date(Date.now() + 2 * 7 * 86_400_000) });
    expect(r2.participantUuids).toEqual([k2.uuid]);
    expect(r2.accountUuids).toEqual([fam.uuid]);
  });
});

describe('throughput', () => {
  // RETENTION_BENCH_N=10000 for the figure in the report; the default keeps the suite quick but still spans
  // several batches of 500.
  const N = Number(process.env.RETENTION_BENCH_N ?? 1200);
  it(`pseudonymises ${N} participants with an application each, in batches of 500`, async () => {
    const u = await h.tenant();
    const offer = await offerEndedWeeksAgo(u, 20);
    const db = executorOf(h.orm);
    const q = (table: string) => qualified(u.tenant.schema, table);
    // Half of them in families of two (accounts), half without; bulk-inserted, like a season's registrations.
    await sql`insert into ${q('accounts')} (uuid, email, firstname, lastname, phone, city)
      select gen_random_uuid(), 'bench-' || i || '@example.org', 'Eltern', 'Bench' || i, '0761 ' || i, 'Stadt'
      from generate_series(1, ${Math.floor(N / 4)}) as i`.execute(db);
    await sql`insert into ${q('participants')} (uuid, account_uuid, firstname, lastname, date_of_birth, email, phone)
      select gen_random_uuid(), acc.uuid, 'Kind', 'Bench' || i, date '2015-01-01' + (i % 2000), 'kind' || i || '@example.org', '0170 ' || i
      from generate_series(1, ${N}) as i
      left join lateral (select uuid from ${q('accounts')} order by uuid offset (i / 2) limit 1) acc on i <= ${Math.floor(N / 2)}`.execute(db);
    await sql`insert into ${q('attendances')} (uuid, offer_uuid, participant_uuid, status, sorting, fee)
      select gen_random_uuid(), ${offer.uuid}::uuid, p.uuid, 'participated', row_number() over (order by p.uuid), 0
      from ${q('participants')} p`.execute(db);
    const dryStarted = Date.now();
    const dryRun = await runRetention(u.context(), { dryRun: true });
    const dryMs = Date.now() - dryStarted;
    const started = Date.now();
    const result = await runRetention(u.context());
    const ms = Date.now() - started;
    expect(dryRun.participantUuids).toHaveLength(N);
    expect(result.participantUuids).toHaveLength(N);
    expect(result.accountUuids).toHaveLength(Math.floor(N / 4));
    expect(result.batches).toBeGreaterThanOrEqual(Math.ceil(N / 500));
    const left = await sql<{ n: number }>`select count(*)::int as n from ${q('participants')}
      where pseudonymised_at is null or firstname is not null or date_of_birth is not null or email is not null`.execute(db);
    expect(left.rows[0].n).toBe(0);
    const ages = await sql<{ n: number }>`select count(*)::int as n from ${q('attendances')} where participant_age is null`.execute(db);
    expect(ages.rows[0].n).toBe(0);
    const again = Date.now();
    expect((await runRetention(u.context())).participantUuids).toEqual([]);
    console.log(`[retention] ${N} participants (${Math.floor(N / 4)} accounts, ${N} applications): dry run ${dryMs} ms, ` +
      `run ${ms} ms (${Math.round(N / (ms / 1000))} participants/s, ${result.batches} batches), second run ${Date.now() - again} ms`);
  }, 600_000);
});
