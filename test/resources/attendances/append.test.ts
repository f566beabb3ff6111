import { beforeAll, describe, expect, it } from 'vitest';
import { useHarness, type Schema } from '../../harness/harness.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import { newUuid } from '../../../src/platform/http/ids.js';
import { QUEUES } from '../../../src/platform/jobs/queue.js';
import { syncCharges } from '../../../src/engines/ledger/index.js';
import { appendApplication, type AppendInput, type AppendOutcome } from '../../../src/engines/participant-list/index.js';
import {
  apply, createAccount, createOffer, createParticipant, expectDenseSorting, firstcome, list, newApplication, outbox, transitionOk,
} from './helpers.js';

// A new application written by one statement under the offer's lock (issue 10.1; writes.ts `appendApplication`,
// migrations/tenant/Migration20261125000200AppendApplication.ts): the same list order, charge and mail as the
// general way, and nothing written when it must leave the decision to the general way.
let edition: Schema<'Edition'>;

const { h, t } = useHarness();
beforeAll(async () => {
  edition = await firstcome(t);
});

const db = () => executorOf(h.orm);
const table = (name: string) => qualified(t.tenant.schema, name);

async function bookingsOf(attendance: string): Promise<{ type: string; amount: number }[]> {
  return (await sql<{ type: string; amount: number }>`select type, amount from ${table('bookings')}
    where attendance_uuid = ${attendance}::uuid order by seq`.execute(db())).rows;
}

describe('a new application is appended at the end of its group (D10)', () => {
  it('moves the later groups down by one, marks them modified, and leaves the list 1..n', async () => {
    const offer = await createOffer(t, { edition: edition.uuid, maxParticipants: 3 });
    const first = await newApplication(t, offer.uuid);
    const waitlisted = await newApplication(t, offer.uuid, { status: 'waitlisted' });
    const waiting = await newApplication(t, offer.uuid, { status: 'waiting' });
    const rejected = await transitionOk(t, (await newApplication(t, offer.uuid, { status: 'waitlisted' })).uuid, 'reject');
    const before = await list(t, offer.uuid);
    expect(before.map((a) => a.uuid)).toEqual([first.uuid, waitlisted.uuid, waiting.uuid, rejected.uuid]);

    const next = await newApplication(t, offer.uuid);
    expect(next).toMatchObject({ status: 'confirmed', sorting: 2 });
    const after = await list(t, offer.uuid);
    expectDenseSorting(after);
    expect(after.map((a) => a.uuid)).toEqual([first.uuid, next.uuid, waitlisted.uuid, waiting.uuid, rejected.uuid]);
    const modified = new Map(before.map((a) => [a.uuid, a.modifiedAt]));
    expect(after[0].modifiedAt).toBe(modified.get(first.uuid));
    for (const a of after.slice(2)) expect(Date.parse(a.modifiedAt)).toBeGreaterThanOrEqual(Date.parse(modified.get(a.uuid)!));
    const since = (await t.get(`/attendances?offer=${offer.uuid}&modifiedSince=${encodeURIComponent(next.createdAt)}`)).body;
    expect(since.map((a) => a.uuid)).toEqual(expect.arrayContaining([next.uuid, waitlisted.uuid, waiting.uuid, rejected.uuid]));

    // A waitlisted one goes behind the waitlisted, before the waiting.
    const late = await newApplication(t, offer.uuid, { status: 'waitlisted' });
    expect(late.sorting).toBe(4);
    expect((await list(t, offer.uuid)).map((a) => a.uuid)).toEqual([first.uuid, next.uuid, waitlisted.uuid, late.uuid, waiting.uuid, rejected.uuid]);
  });

  it('a list not numbered 1..n is sorted whole by the general way', async () => {
    const offer = await createOffer(t, { edition: edition.uuid, maxParticipants: 5 });
    const a = await newApplication(t, offer.uuid);
    const b = await newApplication(t, offer.uuid);
    await sql`update ${table('attendances')} set sorting = null where uuid = ${a.uuid}::uuid`.execute(db());
    const c = await newApplication(t, offer.uuid);
    expect(c.status).toBe('confirmed');
    const items = await list(t, offer.uuid);
    expectDenseSorting(items);
    expect(items.map((x) => x.uuid)).toEqual([b.uuid, a.uuid, c.uuid]);
  });
});

describe('the answer is made from what was read and written', () => {
  it('equals GET /attendances/{uuid} of the new application, whatever it became', async () => {
    const offer = await createOffer(t, {
      edition: edition.uuid, maxParticipants: 1, fee: 800, dates: [{ begin: '2027-07-05T09:00:00+02:00', end: '2027-07-05T15:00:00+02:00' }],
    });
    const family = await createAccount(t, { firstname: 'Eva', lastname: 'Berg' });
    const asRead = async (a: Schema<'Attendance'>) => {
      expect((await t.get(`/attendances/${a.uuid}`)).body).toEqual(a);
      return a;
    };
    const made = [
      await asRead(await newApplication(t, offer.uuid, { notify: true }, { account: family.uuid, dateOfBirth: '2017-03-01' })),
      await asRead(await newApplication(t, offer.uuid, { allAlternateDates: false })),
      await asRead(await newApplication(t, offer.uuid, { status: 'confirmed', commit: false })),
      await asRead(await newApplication(t, offer.uuid, { status: 'waiting' })),
      await asRead(await newApplication(t, (await createOffer(t, { edition: edition.uuid })).uuid, {}, { dateOfBirth: '2016-01-31' })),
    ];
    expect(made.map((a) => a.status)).toEqual(['confirmed', 'waitlisted', 'confirmed', 'waiting', 'confirmed']);
    expect(made[0]).toMatchObject({ account: { uuid: family.uuid, name: 'Eva Berg' }, participantAge: 10, payable: true });
  });
});

describe('the charge and the e-mail are written by the same statement', () => {
  it('charges a final confirmed place exactly as the reconciler would, and nothing otherwise', async () => {
    const offer = await createOffer(t, { edition: edition.uuid, maxParticipants: 1, fee: 1500 });
    const family = await createAccount(t);
    const confirmed = await newApplication(t, offer.uuid, {}, { account: family.uuid });
    expect(confirmed).toMatchObject({ status: 'confirmed', payable: true, fee: 1500 });
    expect(await bookingsOf(confirmed.uuid)).toEqual([{ type: 'charge', amount: 1500 }]);
    // The one reconciler agrees: it has nothing to post.
    await syncCharges(db(), t.tenant.schema, [confirmed.uuid]);
    expect(await bookingsOf(confirmed.uuid)).toHaveLength(1);
    const ledgers = (await t.get(`/ledgers?account=${family.uuid}`)).body;
    expect(ledgers).toHaveLength(1);
    expect(ledgers[0].balance).toBe(1500);

    // Waitlisted (no place) and held back (not final): no charge, and no debtor made for them.
    const waitlisted = await newApplication(t, offer.uuid);
    expect(waitlisted.status).toBe('waitlisted');
    const held = await newApplication(t, (await createOffer(t, { edition: edition.uuid, fee: 900 })).uuid, { commit: false });
    expect(held).toMatchObject({ status: 'confirmed', heldBack: true, payable: false });
    for (const x of [waitlisted, held]) {
      expect(await bookingsOf(x.uuid)).toEqual([]);
      const debtors = await sql<{ n: number }>`select count(*)::int as n from ${table('debtors')} where participant_uuid = ${x.participant!.uuid}::uuid`.execute(db());
      expect(debtors.rows[0]!.n).toBe(0);
    }
    // A second child of the same family: the family's one ledger for the edition.
    const sibling = await newApplication(t, (await createOffer(t, { edition: edition.uuid, fee: 700 })).uuid, {}, { account: family.uuid });
    expect(await bookingsOf(sibling.uuid)).toEqual([{ type: 'charge', amount: 700 }]);
    expect((await t.get(`/ledgers?account=${family.uuid}`)).body).toMatchObject([{ balance: 2200 }]);
  });

  it('with notify, queues the family’s e-mail in the same statement and wakes the sender', async () => {
    const offer = await createOffer(t, { edition: edition.uuid, maxParticipants: 1, name: 'Zeltlager' });
    const family = await createAccount(t, { email: `rush-${newUuid()}@example.org` });
    const child = await createParticipant(t, { firstname: 'Ida', account: family.uuid });
    await h.jobs.drain();
    const sends = () => h.jobs.pending().filter((j) => j.name === QUEUES.mailSend && j.data.tenant === t.slug);
    expect(sends()).toEqual([]);
    const a = await apply(t, offer.uuid, child.uuid, { notify: true });
    const mails = (await outbox(h, t)).filter((m) => m.payload.attendance === a.uuid);
    expect(mails).toEqual([expect.objectContaining({
      kind: 'attendance_confirmed', recipient: family.email, subject: 'Platzzusage: Zeltlager',
      payload: { attendance: a.uuid, offer: offer.uuid, status: 'confirmed', cause: 'created' },
    })]);
    expect(mails[0]!.body).toContain('Ida hat einen Platz für „Zeltlager“ bekommen.');
    expect(sends()).toHaveLength(1);
    // Without notify, or without an address: no e-mail.
    const quiet = await newApplication(t, offer.uuid);
    const noAddress = await newApplication(t, offer.uuid, { notify: true });
    const rest = (await outbox(h, t)).filter((m) => [quiet.uuid, noAddress.uuid].includes(String(m.payload.attendance)));
    expect(rest).toEqual([]);
  });
});

describe('the statement writes nothing where the general way must decide', () => {
  const outcome = (status: AppendOutcome['status']): AppendOutcome => ({ status, decisionReason: null, charge: 0, mail: null });
  async function input(over: Partial<AppendInput> = {}): Promise<AppendInput> {
    const offer = await createOffer(t, { edition: edition.uuid, maxParticipants: 2, fee: 300, name: 'Stand' });
    const child = await createParticipant(t);
    return {
      uuid: newUuid(), participant: child.uuid, account: null, heldBack: false, allAlternateDates: true, chargeText: 'x', limit: null,
      offer: { uuid: offer.uuid, editionUuid: edition.uuid, fee: 300, cancelled: false, name: 'Stand' },
      placeFree: outcome('confirmed'), full: outcome('waitlisted'), ...over,
    };
  }
  const exists = async (uuid: string) =>
    (await sql<{ n: number }>`select count(*)::int as n from ${table('attendances')} where uuid = ${uuid}::uuid`.execute(db())).rows[0]!.n === 1;

  it('writes when everything is as read, and not when the offer changed meanwhile', async () => {
    const ok = await input();
    expect(await appendApplication(t.context(), db(), ok)).toMatchObject({ done: true, status: 'confirmed', sorting: 1, mailed: false });
    expect(await exists(ok.uuid)).toBe(true);
    for (const changed of [{ fee: 400 }, { cancelled: true }, { name: 'Anders' }, { editionUuid: newUuid() }]) {
      const stale = await input();
      stale.offer = { ...stale.offer, ...changed };
      expect(await appendApplication(t.context(), db(), stale)).toBeNull();
      expect(await exists(stale.uuid)).toBe(false);
    }
  });

  it('not for an unknown or pseudonymised participant, nor when the participant has applied already', async () => {
    const unknown = await input({ participant: newUuid() });
    expect(await appendApplication(t.context(), db(), unknown)).toBeNull();
    const gone = await input();
    await sql`update ${table('participants')} set pseudonymised_at = now() where uuid = ${gone.participant}::uuid`.execute(db());
    expect(await appendApplication(t.context(), db(), gone)).toBeNull();
    const twice = await input();
    await apply(t, twice.offer.uuid, twice.participant);
    expect(await appendApplication(t.context(), db(), twice)).toBeNull();
    for (const x of [unknown, gone, twice]) expect(await exists(x.uuid)).toBe(false);
  });

  it('answers with the count when the child may apply no more (D4 maxApplications), writing nothing', async () => {
    const ok = await input();
    await apply(t, (await createOffer(t, { edition: edition.uuid })).uuid, ok.participant);
    const limited = { ...ok, limit: 1 };
    expect(await appendApplication(t.context(), db(), limited)).toEqual({ done: false, counted: 1 });
    expect(await exists(ok.uuid)).toBe(false);
    expect(await appendApplication(t.context(), db(), { ...ok, limit: 2 })).toMatchObject({ done: true });
  });

  it('keeps the tenant’s schema as its search_path (its tables, never another tenant’s)', async () => {
    const res = await sql<{ config: string[] }>`select p.proconfig as config from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = ${t.tenant.schema} and p.proname = 'append_application'`.execute(db());
    expect(res.rows).toHaveLength(1);
    expect(res.rows[0]!.config.join(' ')).toContain(t.tenant.schema);
  });
});
