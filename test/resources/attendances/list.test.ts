import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, useHarness, type TestTenant, type Schema, at } from '../../harness/harness.js';
import { spyOnQueries } from '../../harness/queries.js';
import { uuidToBase58 } from '../../../src/platform/http/ids.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import { isPayable } from '../../../src/domain/payable.js';
import {
  apply, createAccount, createOffer, createOrganiser, createParticipant, expectDenseSorting, firstcome, list, lot,
  newApplication, setColumns, transitionOk,
} from './helpers.js';

// GET /attendances and GET /offers/{uuid}/attendances (spec 4.3 "List", "Access rules", 5.5; D10).
let edA: Schema<'Edition'>;
let edB: Schema<'Edition'>;
let hostA: Schema<'Organiser'>;
let hostB: Schema<'Organiser'>;
let offerA: Schema<'Offer'>;
let offerB: Schema<'Offer'>;
let family: Schema<'Account'>;
let kids: Schema<'Participant'>[];
const apps: Record<string, Schema<'Attendance'>> = {};

const { h, t } = useHarness();
beforeAll(async () => {
  edA = await firstcome(t, { name: 'Sommer A', alias: 'sommer-a' });
  edB = await lot(t, { name: 'Herbst B', alias: 'herbst-b' });
  hostA = await createOrganiser(t, { name: 'Verein A', alias: 'verein-a' });
  hostB = await createOrganiser(t, { name: 'Verein B', alias: 'verein-b' });
  offerA = await createOffer(t, { edition: edA.uuid, hosts: [hostA.uuid], maxParticipants: 2, fee: 800 });
  offerB = await createOffer(t, { edition: edB.uuid, hosts: [hostB.uuid], maxParticipants: 5, fee: 0 });
  family = await createAccount(t, { email: 'Familie.Liste@example.org' });
  kids = [
    await createParticipant(t, { firstname: 'Anna', account: family.uuid }),
    await createParticipant(t, { firstname: 'Ben', account: family.uuid }),
    await createParticipant(t, { firstname: 'Cem' }),
    await createParticipant(t, { firstname: 'Dana' }),
  ];
  apps.a0 = await apply(t, offerA.uuid, kids[0].uuid); // confirmed
  apps.a1 = await apply(t, offerA.uuid, kids[1].uuid, { commit: false }); // confirmed, held back
  apps.a2 = await apply(t, offerA.uuid, kids[2].uuid); // waitlisted
  apps.b0 = await apply(t, offerB.uuid, kids[0].uuid); // waiting (lot)
  apps.b3 = await apply(t, offerB.uuid, kids[3].uuid, { status: 'confirmed' });
});

const uuids = (res: { body: Schema<'Attendance'>[] }) => res.body.map((a) => a.uuid);

describe('GET /attendances (admins see all)', () => {
  it('lists newest first', async () => {
    const res = await t.get('/attendances');
    expect(res.status).toBe(200);
    expect(uuids(res)).toEqual([apps.b3, apps.b0, apps.a2, apps.a1, apps.a0].map((a) => a.uuid));
  });

  it('with offer: participant-list order; GET /offers/{uuid}/attendances is the same list', async () => {
    await transitionOk(t, apps.a0.uuid, 'waitlist');
    const byFilter = await t.get(`/attendances?offer=${offerA.uuid}`);
    const byPath = await t.get(`/offers/${uuidToBase58(offerA.uuid)}/attendances`);
    expect(byFilter.body).toEqual(byPath.body);
    expect(byFilter.body.map((a) => [a.uuid, a.status])).toEqual([
      [apps.a1.uuid, 'confirmed'], [apps.a0.uuid, 'waitlisted'], [apps.a2.uuid, 'waitlisted'],
    ]);
    expectDenseSorting(byFilter.body);
    await transitionOk(t, apps.a0.uuid, 'confirm');
  });

  it('an unknown or malformed offer is 404, also another tenant’s', async () => {
    expectProblem(await t.get('/attendances?offer=6f1c3f0e-0000-4000-8000-000000000001'), 404);
    expectProblem(await t.get('/attendances?offer=kein-angebot'), 404);
    expectProblem(await t.get('/offers/6f1c3f0e-0000-4000-8000-000000000001/attendances'), 404);
    const other = await h.tenant();
    const foreign = await createOffer(other);
    expectProblem(await t.get(`/attendances?offer=${foreign.uuid}`), 404);
    expectProblem(await t.get(`/offers/${foreign.uuid}/attendances`), 404);
  });

  it('filters by participant (UUID or base58) and account (UUID or e-mail, any case); nothing matching gives []', async () => {
    expect(uuids(await t.get(`/attendances?participant=${kids[0].uuid}`)).sort()).toEqual([apps.a0.uuid, apps.b0.uuid].sort());
    expect(uuids(await t.get(`/attendances?participant=${uuidToBase58(kids[3].uuid)}`))).toEqual([apps.b3.uuid]);
    const byAccount = [apps.a0.uuid, apps.a1.uuid, apps.b0.uuid].sort();
    expect(uuids(await t.get(`/attendances?account=${family.uuid}`)).sort()).toEqual(byAccount);
    expect(uuids(await t.get(`/attendances?account=${encodeURIComponent('familie.liste@EXAMPLE.org')}`)).sort()).toEqual(byAccount);
    for (const q of ['participant=6f1c3f0e-0000-4000-8000-000000000001', 'participant=x', 'account=niemand@example.org', 'edition=nope', 'host=nope']) {
      const res = await t.get(`/attendances?${q}`);
      expect(res.status, q).toBe(200);
      expect(res.body, q).toEqual([]);
    }
  });

  it('filters by edition and host, by UUID or alias', async () => {
    const a = [apps.a0.uuid, apps.a1.uuid, apps.a2.uuid].sort();
    const b = [apps.b0.uuid, apps.b3.uuid].sort();
    expect(uuids(await t.get(`/attendances?edition=${edA.uuid}`)).sort()).toEqual(a);
    expect(uuids(await t.get('/attendances?edition=herbst-b')).sort()).toEqual(b);
    expect(uuids(await t.get(`/attendances?host=${hostB.uuid}`)).sort()).toEqual(b);
    expect(uuids(await t.get('/attendances?host=verein-a')).sort()).toEqual(a);
  });

  it('filters by status (comma list, OR); an unknown state is 400 naming status', async () => {
    expect(uuids(await t.get('/attendances?status=waiting,waitlisted')).sort()).toEqual([apps.a2.uuid, apps.b0.uuid].sort());
    const p = expectProblem(await t.get('/attendances?status=confirmed,bogus'), 400);
    expect(p.detail).toMatch(/^status: /);
  });

  it('filters by heldBack, payable and paid; payable agrees with the field', async () => {
    expect(uuids(await t.get('/attendances?heldBack=true'))).toEqual([apps.a1.uuid]);
    expect(await t.get('/attendances?heldBack=no').then((r) => r.body.length)).toBe(4);
    const all = (await t.get('/attendances')).body;
    for (const flag of [true, false]) {
      const res = await t.get(`/attendances?payable=${flag}`);
      expect(res.body.every((a) => a.payable === flag)).toBe(true);
      expect(res.body.length).toBe(all.filter((a) => a.payable === flag).length);
    }
    // The field is the domain rule (offer A has a fee; B is free; a1 is held back).
    expect(uuids(await t.get('/attendances?payable=1'))).toEqual([apps.a0.uuid]);
    for (const a of all) {
      expect(a.payable).toBe(isPayable({ status: a.status, heldBack: a.heldBack, fee: a.fee, payableSwitchedOff: false }));
    }
    expect((await t.get('/attendances?paid=false')).body).toHaveLength(5);
    expect((await t.get('/attendances?paid=true')).body).toEqual([]);
    await setColumns(h, t, apps.b3.uuid, { paid: true });
    expect(uuids(await t.get('/attendances?paid=yes'))).toEqual([apps.b3.uuid]);
    await setColumns(h, t, apps.b3.uuid, { paid: false });
    expectProblem(await t.get('/attendances?payable=maybe'), 400);
  });

  it('filters by modifiedSince (date or timestamp); an unreadable date is 400', async () => {
    expect((await t.get('/attendances?modifiedSince=2000-01-01')).body).toHaveLength(5);
    expect((await t.get('/attendances?modifiedSince=2999-01-01T00:00:00%2B01:00')).body).toEqual([]);
    const before = new Date(Date.now() - 1000).toISOString();
    await new Promise((r) => setTimeout(r, 1100));
    await t.patch(`/attendances/${apps.b0.uuid}`, { userPriority: 2 });
    expect(uuids(await t.get(`/attendances?modifiedSince=${encodeURIComponent(new Date(Date.now() - 500).toISOString())}`))).toEqual([apps.b0.uuid]);
    expect((await t.get(`/attendances?modifiedSince=${encodeURIComponent(before)}`)).body.length).toBeGreaterThanOrEqual(1);
    expect(expectProblem(await t.get('/attendances?modifiedSince=gestern'), 400).detail).toMatch(/^modifiedSince: /);
  });

  it('pages with page and itemsPerPage (at most 200)', async () => {
    const all = uuids(await t.get('/attendances'));
    expect(uuids(await t.get('/attendances?itemsPerPage=2'))).toEqual(all.slice(0, 2));
    expect(uuids(await t.get('/attendances?itemsPerPage=2&page=3'))).toEqual(all.slice(4, 6));
    expect((await t.get('/attendances?itemsPerPage=2&page=9')).body).toEqual([]);
    expectProblem(await t.get('/attendances?itemsPerPage=201'), 400);
    expectProblem(await t.get(`/offers/${offerA.uuid}/attendances?page=0`), 400);
    expect(uuids(await t.get(`/offers/${offerA.uuid}/attendances?itemsPerPage=1&page=2`))).toHaveLength(1);
  });

  it('read tokens read; anonymous callers get 401', async () => {
    const read = await t.token({ access: 'read' });
    expect((await t.get('/attendances', { token: read })).body).toHaveLength(5);
    expectProblem(await t.get('/attendances', { token: null }), 401);
    expectProblem(await t.get(`/offers/${offerA.uuid}/attendances`, { token: null }), 401);
  });

  it('one SQL statement per page: 200 applications take as many round trips as 2', async () => {
    const u = await h.tenant();
    const e = await firstcome(u);
    const offer = await createOffer(u, { edition: e.uuid, maxParticipants: null });
    const db = executorOf(h.orm);
    const schema = u.tenant.schema;
    const acc = await createAccount(u);
    await sql`insert into ${qualified(schema, 'participants')} (uuid, firstname, lastname, account_uuid)
      select gen_random_uuid(), 'Kind', 'Nr ' || i, ${acc.uuid}::uuid from generate_series(1, 200) i`.execute(db);
    await sql`insert into ${qualified(schema, 'attendances')} (uuid, offer_uuid, participant_uuid, status, sorting, fee)
      select gen_random_uuid(), ${offer.uuid}::uuid, p.uuid, 'confirmed', row_number() over (order by p.lastname), 100
      from ${qualified(schema, 'participants')} p`.execute(db);
    const queries = spyOnQueries();
    const measure = async (path: string) => {
      queries.count = 0;
      const res = await u.get(path);
      expect(res.status).toBe(200);
      return { n: queries.count, len: at(res.body, 'length') };
    };
    try {
      for (const base of ['/attendances?', `/attendances?offer=${offer.uuid}&`, `/offers/${offer.uuid}/attendances?`]) {
        const small = await measure(`${base}itemsPerPage=2`);
        const large = await measure(`${base}itemsPerPage=200`);
        expect([small.len, large.len]).toEqual([2, 200]);
        expect(large.n).toBe(small.n);
      }
    } finally {
      queries.restore();
    }
  });
});

describe('organiser users (spec 4.3 access rules)', () => {
  let u: TestTenant;
  let host: Schema<'Organiser'>;
  let otherHost: Schema<'Organiser'>;
  let released: Schema<'Edition'>;
  let org: string;
  let own: Schema<'Offer'>;
  const ownApps: Record<string, Schema<'Attendance'>> = {};

  beforeAll(async () => {
    u = await h.tenant({ settings: { retentionWeeks: 4 } });
    host = await createOrganiser(u);
    otherHost = await createOrganiser(u);
    released = await lot(u, { releaseParticipantLists: true });
    own = await createOffer(u, { edition: released.uuid, hosts: [host.uuid], maxParticipants: 10 });
    org = await u.token({ role: 'organiser', access: 'read', organiserIds: [host.uuid] });
    const fam = await createAccount(u, { firstname: 'Eva', lastname: 'Eltern' });
    const child = (firstname: string) => createParticipant(u, { firstname, lastname: 'Kind', account: fam.uuid });
    ownApps.confirmed = await apply(u, own.uuid, (await child('Clara')).uuid, { status: 'confirmed' });
    ownApps.held = await apply(u, own.uuid, (await child('Hugo')).uuid, { status: 'confirmed', commit: false });
    ownApps.waitlisted = await apply(u, own.uuid, (await child('Wanda')).uuid, { status: 'waitlisted' });
    ownApps.waiting = await apply(u, own.uuid, (await child('Willi')).uuid);
    ownApps.rejected = await apply(u, own.uuid, (await child('Rita')).uuid);
    await transitionOk(u, ownApps.rejected.uuid, 'reject');
  });

  it('must name an offer: 400 without', async () => {
    const p = expectProblem(await u.get('/attendances', { token: org }), 400);
    expect(p.detail).toMatch(/^offer: /);
  });

  it('read their own released list in list order, names masked where they may not see them (piiMasked)', async () => {
    const res = await u.get(`/attendances?offer=${own.uuid}`, { token: org });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual((await u.get(`/offers/${own.uuid}/attendances`, { token: org })).body);
    const by = Object.fromEntries(res.body.map((a) => [a.uuid, a]));
    const named = by[ownApps.confirmed.uuid];
    expect(named).toMatchObject({ piiMasked: false, participant: { name: 'Clara Kind' }, account: { name: 'Eva Eltern' } });
    expect(by[ownApps.waitlisted.uuid]).toMatchObject({ piiMasked: false, participant: { name: 'Wanda Kind' } });
    for (const k of ['held', 'waiting', 'rejected']) {
      const a = by[ownApps[k].uuid];
      expect(a.piiMasked, k).toBe(true);
      expect(a.participant, k).toEqual({ uuid: ownApps[k].participant!.uuid });
      expect(a.account, k).toEqual({ uuid: ownApps[k].account!.uuid });
    }
    // Admins always see the names.
    const admin = (await u.get(`/attendances?offer=${own.uuid}`)).body;
    expect(admin.every((a) => a.piiMasked === false && a.participant!.name)).toBe(true);
  });

  it('read single applications of their released lists, with the same masking', async () => {
    const res = await u.get(`/attendances/${ownApps.waiting.uuid}`, { token: org });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ piiMasked: true, participant: { uuid: ownApps.waiting.participant!.uuid } });
    expect(res.body.participant).not.toHaveProperty('name');
  });

  it('an offer whose edition has not released its lists: 403, for the single applications too', async () => {
    const e = await lot(u, { releaseParticipantLists: false });
    const o = await createOffer(u, { edition: e.uuid, hosts: [host.uuid] });
    const a = await newApplication(u, o.uuid);
    expect(expectProblem(await u.get(`/attendances?offer=${o.uuid}`, { token: org }), 403).detail).toMatch(/released/);
    expectProblem(await u.get(`/offers/${o.uuid}/attendances`, { token: org }), 403);
    expectProblem(await u.get(`/attendances/${a.uuid}`, { token: org }), 403);
  });

  it('a publish_lists phase governs the release', async () => {
    const now = Date.now();
    const e = await lot(u, { releaseParticipantLists: true, tasks: [{ type: 'publish_lists', begin: new Date(now + 7 * 86_400_000).toISOString() }] });
    const o = await createOffer(u, { edition: e.uuid, hosts: [host.uuid] });
    expectProblem(await u.get(`/attendances?offer=${o.uuid}`, { token: org }), 403);
  });

  it('another organiser’s offer: its list 403 also before it is published (spec 4.3, issue 22); one application 404 before', async () => {
    const o = await createOffer(u, { edition: released.uuid, hosts: [otherHost.uuid] });
    const a = await newApplication(u, o.uuid);
    expect(expectProblem(await u.get(`/offers/${o.uuid}/attendances`, { token: org }), 403).detail).toMatch(/own/);
    expectProblem(await u.get(`/attendances?offer=${o.uuid}`, { token: org }), 403);
    expectProblem(await u.get(`/attendances/${a.uuid}`, { token: org }), 404);
    // An offer that does not exist stays 404.
    expectProblem(await u.get('/offers/0f0e0d0c-0b0a-4909-8807-060504030201/attendances', { token: org }), 404);
    await u.post(`/offers/${o.uuid}/transition`, { transition: 'publish' });
    expect(expectProblem(await u.get(`/offers/${o.uuid}/attendances`, { token: org }), 403).detail).toMatch(/own/);
    expectProblem(await u.get(`/attendances/${a.uuid}`, { token: org }), 403);
  });

  it('until the retention period after the offer ended: within it 200, after it 403', async () => {
    const day = 86_400_000;
    const at = (ms: number) => new Date(ms).toISOString();
    const recent = await createOffer(u, { edition: released.uuid, hosts: [host.uuid], dates: [{ begin: at(Date.now() - 10 * day), end: at(Date.now() - 9 * day) }] });
    const old = await createOffer(u, { edition: released.uuid, hosts: [host.uuid], dates: [
      { begin: at(Date.now() - 40 * day), end: at(Date.now() - 39 * day) },
      { begin: at(Date.now() - 31 * day), end: at(Date.now() - 30 * day) },
    ] });
    const recurring = await createOffer(u, { edition: released.uuid, hosts: [host.uuid], dates: [
      { begin: at(Date.now() - 60 * day), end: at(Date.now() - 60 * day + 3_600_000), recurrence: 'FREQ=WEEKLY;COUNT=6' },
    ] });
    const undated = await createOffer(u, { edition: released.uuid, hosts: [host.uuid], dates: [] });
    expect((await u.get(`/attendances?offer=${recent.uuid}`, { token: org })).status).toBe(200);
    expect((await u.get(`/attendances?offer=${recurring.uuid}`, { token: org })).status).toBe(200); // last occurrence 25 days ago
    expect((await u.get(`/attendances?offer=${undated.uuid}`, { token: org })).status).toBe(200);
    expect(expectProblem(await u.get(`/attendances?offer=${old.uuid}`, { token: org }), 403).detail).toMatch(/retention/);
    // Admins are not bound by it.
    expect((await u.get(`/attendances?offer=${old.uuid}`)).status).toBe(200);
  });

  it('a pseudonymised participant is omitted from the application; nothing else is masked for it', async () => {
    const child = await createParticipant(u, { firstname: 'Paul' });
    const a = await apply(u, own.uuid, child.uuid, { status: 'confirmed' });
    await sql`update ${qualified(u.tenant.schema, 'participants')} set pseudonymised_at = now(), firstname = null, lastname = null
      where uuid = ${child.uuid}::uuid`.execute(executorOf(h.orm));
    for (const token of [undefined, org]) {
      const res = await u.get(`/attendances/${a.uuid}`, token ? { token } : {});
      expect(res.status).toBe(200);
      expect(res.body).not.toHaveProperty('participant');
      expect(res.body.piiMasked).toBe(false);
    }
  });
});
