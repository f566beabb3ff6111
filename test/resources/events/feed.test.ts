import { beforeAll, describe, expect, it, vi } from 'vitest';
import { randomUUID } from 'node:crypto';
import { expectProblem, useHarness, type Schema, type TestTenant, at } from '../../harness/harness.js';
import { create as createAccount } from '../../factories/account.factory.js';
import { create as createEdition } from '../../factories/edition.factory.js';
import { create as createOffer } from '../../factories/offer.factory.js';
import { create as createOrganiser } from '../../factories/organiser.factory.js';
import { create as createParticipant } from '../../factories/participant.factory.js';
import { EVENT_WAIT_MS, readFeed, waitForEvent } from '../../factories/event.factory.js';
import { offerEndedWeeksAgo } from '../retention/helpers.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import { EVENT_TYPES, encodeCursor } from '../../../src/platform/events/events.js';
import { uuidToBase58 } from '../../../src/platform/http/ids.js';
import { runRetentionJob } from '../../../src/resources/retention/service.js';
import { eventOut } from '../../../src/resources/events/schema.js';

// Issue 14: the event feed through HTTP. Every change that reports an event does so in its own transaction, with
// references and states only; the feed lists them in order after a cursor, filtered by type, admins only.
// Waiting for an event may take as long as the oldest writing transaction elsewhere on the server (EVENT_WAIT_MS).
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

const { h, t } = useHarness();

type Event = Schema<'Event'>;

async function ok<T>(res: Promise<{ status: number; text: string; body: T }>, status = 200): Promise<T> {
  const r = await res;
  expect(r.status, r.text).toBe(status);
  return r.body;
}
const post = <P extends string>(path: P, body?: unknown, status = 200) => ok(body === undefined ? t.request('POST', path) : t.post(path, body), status);
/** The events of one type that match. */
const events = <K extends Event['type']>(all: Event[], type: K, match: (e: Extract<Event, { type: K }>) => boolean = () => true) =>
  all.filter((e): e is Extract<Event, { type: K }> => e.type === type).filter(match);

describe('the events of every change', () => {
  it('lists each of the 13 event types after its change, with its payload and no personal data', async () => {
    // People whose data must never appear in an event.
    const account = await createAccount(t, { phone: '0170 5550123', street: 'Lindenweg 7', zip: '54321' });
    const child = await createParticipant(t, { account: account.uuid, firstname: 'Theodora', email: 'theodora@kinder.example' });
    const other = await createParticipant(t, { firstname: 'Konstantin', dateOfBirth: '2015-03-14' });
    const edition = await createEdition(t, { procedure: 'firstcome' });
    const offer = await createOffer(t, { edition: edition.uuid, maxParticipants: 1, name: 'Geheimes Zauberlabor' });
    const target = await createOffer(t, { edition: edition.uuid, maxParticipants: null });

    await post(`/offers/${offer.uuid}/transition`, { transition: 'publish' });
    await ok(t.patch(`/offers/${offer.uuid}`, { teaser: 'Neu', maxParticipants: 1 }));
    const first = await post('/attendances', { offer: offer.uuid, participant: child.uuid }, 201);
    const second = await post('/attendances', { offer: offer.uuid, participant: other.uuid }, 201);
    expect([first.status, second.status]).toEqual(['confirmed', 'waitlisted']);
    await post(`/attendances/${first.uuid}/transition`, { transition: 'withdraw' });
    await post(`/offers/${offer.uuid}/refill`, undefined, 202);
    await h.jobs.drain();
    const receipt = await post('/receipts', { items: [{ attendance: second.uuid }] }, 201);
    await post(`/receipts/${receipt.uuid}/reverse`, {});
    const moved = await post(`/attendances/${second.uuid}/transfer`, { offer: target.uuid, status: 'confirmed' }, 201);
    expect((await t.del(`/attendances/${moved.uuid}`)).status).toBe(204);
    await post(`/offers/${offer.uuid}/transition`, { transition: 'cancel', notify: false });
    await post(`/offers/${offer.uuid}/transition`, { transition: 'relaunch' });

    const lot = await createEdition(t, { procedure: 'lot' });
    const lotOffer = await createOffer(t, { edition: lot.uuid, maxParticipants: 1 });
    const drawn = [await post('/attendances', { offer: lotOffer.uuid, participant: child.uuid }, 201)];
    drawn.push(await post('/attendances', { offer: lotOffer.uuid, participant: other.uuid }, 201));
    await post(`/editions/${lot.uuid}/allocate`, { seed: 7 }, 202);
    await h.jobs.drain();
    const allocations = (await ok(t.get(`/editions/${lot.uuid}`))).allocations;
    await post(`/editions/${lot.uuid}/commit`, { notify: false }, 202);
    await h.jobs.drain();

    const old = await offerEndedWeeksAgo(t, 13);
    const gone = await createParticipant(t, { firstname: 'Wilhelmina' });
    await post('/attendances', { offer: old.uuid, participant: gone.uuid, status: 'confirmed' }, 201);
    await runRetentionJob(t.context(), { tenant: t.slug });

    await waitForEvent(t, (e) => e.type === 'participant.pseudonymised' && e.data.participant === gone.uuid);
    const all = await readFeed(t);
    const text = JSON.stringify(all);
    expect(new Set(all.map((e) => e.type))).toEqual(new Set(EVENT_TYPES));
    for (const e of all) {
      expect(() => eventOut.parse(e), JSON.stringify(e)).not.toThrow();
      expect(e.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+0[12]:00$/);
    }
    // No names, contact data, addresses, birth dates or free text of anyone or anything.
    // (The zip code as a JSON string value: its digits alone could occur inside a uuid.)
    for (const secret of [account.email, account.firstname, account.lastname, '0170 5550123', 'Lindenweg', '"54321"', 'Musterstadt',
      'Theodora', child.lastname, 'theodora@kinder.example', 'Konstantin', '2015-03-14', '2016-05-23', 'Wilhelmina', 'Geheimes Zauberlabor', 'Neu']) {
      expect(text).not.toContain(secret);
    }

    const refs = (a: { uuid: string }, o: Schema<'Offer'>, p: { uuid: string }, acc?: string) => ({ attendance: a.uuid, offer: o.uuid, edition: o.edition.uuid ?? o.edition, participant: p.uuid, ...(acc ? { account: acc } : {}) });
    const offerRefs = { offer: offer.uuid, edition: edition.uuid };
    expect(events(all, 'offer.published', ({ data: d }) => d.offer === offer.uuid).map((e) => e.data)).toEqual([{ ...offerRefs, status: ['published'] }]);
    expect(events(all, 'offer.changed', ({ data: d }) => d.offer === offer.uuid).map((e) => e.data)).toEqual([{ ...offerRefs, status: ['published'], fields: ['teaser', 'maxParticipants'] }]);
    expect(events(all, 'offer.cancelled').map((e) => e.data)).toEqual([{ ...offerRefs, status: ['published', 'cancelled'], notify: false }]);
    expect(events(all, 'offer.relaunched').map((e) => e.data)).toEqual([{ ...offerRefs, status: ['published'], notify: false }]);

    const created = events(all, 'attendance.created', ({ data: d }) => d.offer === offer.uuid).map((e) => e.data);
    expect(created).toEqual([
      { ...refs(first, offer, child, account.uuid), status: 'confirmed', heldBack: false, decisionReason: 'Anmeldung nach Eingang: ein Platz war frei' },
      { ...refs(second, offer, other), status: 'waitlisted', heldBack: false, decisionReason: 'Anmeldung nach Eingang: ausgebucht, auf der Warteliste' },
    ]);
    const changed = events(all, 'attendance.status_changed', ({ data: d }) => d.offer === offer.uuid).map((e) => e.data);
    expect(changed).toEqual([
      { ...refs(first, offer, child, account.uuid), from: 'confirmed', to: 'withdrawn', heldBack: false, cause: 'transition' },
      { ...refs(second, offer, other), from: 'waitlisted', to: 'confirmed', heldBack: false, decisionReason: 'Von der Warteliste nachgerückt', cause: 'refill' },
    ]);
    expect(events(all, 'receipt.created').map((e) => e.data)).toEqual([
      { receipt: receipt.uuid, debtor: receipt.debtor.uuid, attendances: [second.uuid], total: 500 },
    ]);
    expect(events(all, 'receipt.reversed').map((e) => e.data)).toEqual([{
      receipt: receipt.uuid, reversal: (await ok(t.get(`/receipts/${receipt.uuid}`))).reversedBy!.uuid, debtor: receipt.debtor.uuid,
      attendances: [second.uuid], total: -500, withdraw: false,
    }]);
    expect(events(all, 'attendance.transferred').map((e) => e.data)).toEqual([{
      attendance: moved.uuid, previousAttendance: second.uuid, offer: target.uuid, edition: edition.uuid, previousOffer: offer.uuid,
      previousEdition: edition.uuid, participant: other.uuid, from: 'confirmed', status: 'confirmed', heldBack: false,
    }]);
    expect(events(all, 'attendance.deleted').map((e) => e.data)).toEqual([{ ...refs(moved, target, other), status: 'confirmed' }]);

    // The lot: each decision held back, then released by the commit.
    expect(events(all, 'edition.allocated').map((e) => e.data)).toEqual([{
      edition: lot.uuid, allocation: allocations[0].uuid, seed: 7, confirmed: 1, waitlisted: 1, unfulfilled: 0,
    }]);
    const decided = events(all, 'attendance.status_changed', ({ data: d }) => d.offer === lotOffer.uuid && d.cause === 'allocation');
    const released = events(all, 'attendance.status_changed', ({ data: d }) => d.offer === lotOffer.uuid && d.cause === 'commit');
    expect(decided.map((e) => e.data.attendance).sort()).toEqual(drawn.map((a) => a.uuid).sort());
    expect(decided.map((e) => [e.data.from, e.data.to, e.data.heldBack]).sort()).toEqual([['waiting', 'confirmed', true], ['waiting', 'waitlisted', true]]);
    expect(decided.every((e) => typeof e.data.decisionReason === 'string')).toBe(true);
    expect(released.map((e) => [e.data.attendance, e.data.from === e.data.to, e.data.heldBack]).sort())
      .toEqual(drawn.map((a) => [a.uuid, true, false]).sort());
    expect(events(all, 'edition.committed').map((e) => e.data)).toEqual([{ edition: lot.uuid, released: 2, notify: false }]);
    // In the order they happened: the draw's decisions before the commit's, the commit after its releases.
    const index = (e: Event) => all.indexOf(e);
    expect(Math.max(...decided.map(index))).toBeLessThan(Math.min(...released.map(index)));
    expect(Math.max(...released.map(index))).toBeLessThan(index(events(all, 'edition.committed')[0]));

    expect(events(all, 'participant.pseudonymised', ({ data: d }) => d.participant === gone.uuid).map((e) => e.data))
      .toEqual([{ participant: gone.uuid, accountPseudonymised: false }]);
    // An event's id is its own: unique across the feed.
    expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
  });

  it('a lot drawn by the commit itself (allocate and commit sent together) reports each decision once, final', async () => {
    const lot = await createEdition(t, { procedure: 'lot' });
    const lotOffer = await createOffer(t, { edition: lot.uuid, maxParticipants: 1 });
    const children = [await createParticipant(t), await createParticipant(t)];
    const drawn = [];
    for (const c of children) drawn.push(await post('/attendances', { offer: lotOffer.uuid, participant: c.uuid }, 201));
    await post(`/editions/${lot.uuid}/allocate`, { seed: 3 }, 202);
    await post(`/editions/${lot.uuid}/commit`, { notify: false }, 202);
    await h.jobs.drain();
    await waitForEvent(t, (e) => e.type === 'edition.committed' && e.data.edition === lot.uuid);
    const all = await readFeed(t);
    const changes = events(all, 'attendance.status_changed', ({ data: d }) => d.offer === lotOffer.uuid);
    expect(changes.map((e) => [e.data.attendance, e.data.cause, e.data.heldBack]).sort())
      .toEqual(drawn.map((a) => [a.uuid, 'allocation', false]).sort());
    expect(events(all, 'edition.allocated', ({ data: d }) => d.edition === lot.uuid)).toHaveLength(1);
    expect(events(all, 'edition.committed', ({ data: d }) => d.edition === lot.uuid).map((e) => e.data)).toEqual([{ edition: lot.uuid, released: 2, notify: false }]);
  });

  it('writes no event for a change that was refused', async () => {
    const edition = await createEdition(t, { procedure: 'firstcome' });
    const offer = await createOffer(t, { edition: edition.uuid });
    const child = await createParticipant(t);
    const a = await post('/attendances', { offer: offer.uuid, participant: child.uuid, status: 'waitlisted' }, 201);
    // 409: only a confirmed application can be a no-show; a draft offer cannot be cancelled.
    expect((await t.post(`/attendances/${a.uuid}/transition`, { transition: 'noshow' })).status).toBe(409);
    expect((await t.post(`/offers/${offer.uuid}/transition`, { transition: 'cancel' })).status).toBe(409);
    const marker = await post('/attendances', { offer: offer.uuid, participant: (await createParticipant(t)).uuid }, 201);
    await waitForEvent(t, (e) => e.type === 'attendance.created' && e.data.attendance === marker.uuid);
    const all = await readFeed(t);
    expect(all.filter((e) => at(e.data, 'attendance') === a.uuid).map((e) => e.type)).toEqual(['attendance.created']);
    expect(all.filter((e) => at(e.data, 'offer') === offer.uuid && e.type.startsWith('offer.'))).toEqual([]);
  });
});

describe('applying again, and retries', () => {
  it('an application made again for the same offer reports a status change (cause reapplication); a replayed POST reports nothing', async () => {
    const edition = await createEdition(t, { procedure: 'firstcome' });
    const offer = await createOffer(t, { edition: edition.uuid, maxParticipants: null });
    const child = await createParticipant(t);
    const key = { headers: { 'idempotency-key': `apply-${randomUUID()}` } };
    const body = { offer: offer.uuid, participant: child.uuid };
    const first = await ok(t.post('/attendances', body, key), 201);
    const replay = await t.post('/attendances', body, key);
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    await post(`/attendances/${first.uuid}/transition`, { transition: 'withdraw' });
    const again = await post('/attendances', body, 201);
    expect(again.uuid).toBe(first.uuid);
    await waitForEvent(t, (e) => at(e.data, 'attendance') === first.uuid && at(e.data, 'cause') === 'reapplication');
    const mine = (await readFeed(t)).filter((e) => at(e.data, 'attendance') === first.uuid).map((e) => [e.type, at(e.data, 'from'), at(e.data, 'to') ?? at(e.data, 'status'), at(e.data, 'cause')]);
    expect(mine).toEqual([
      ['attendance.created', undefined, 'confirmed', undefined],
      ['attendance.status_changed', 'confirmed', 'withdrawn', 'transition'],
      ['attendance.status_changed', 'withdrawn', 'confirmed', 'reapplication'],
    ]);
  });
});

describe('applications that go with their participant', () => {
  it('deleting a participant reports each of its applications as deleted', async () => {
    const edition = await createEdition(t, { procedure: 'firstcome' });
    const offers = [await createOffer(t, { edition: edition.uuid }), await createOffer(t, { edition: edition.uuid })];
    const account = await createAccount(t);
    const child = await createParticipant(t, { account: account.uuid });
    const apps = [];
    for (const o of offers) apps.push(await post('/attendances', { offer: o.uuid, participant: child.uuid, status: 'waitlisted' }, 201));
    expect((await t.del(`/participants/${child.uuid}`)).status).toBe(204);
    await waitForEvent(t, (e) => e.type === 'attendance.deleted' && e.data.participant === child.uuid);
    const deleted = (await readFeed(t, '&types=attendance.deleted')).filter((e) => at(e.data, 'participant') === child.uuid).map((e) => e.data);
    expect(deleted).toEqual(apps.map((a, i) => ({
      attendance: a.uuid, offer: offers[i].uuid, edition: edition.uuid, participant: child.uuid, account: account.uuid, status: 'waitlisted',
    })));
  });
});

describe('GET /events', () => {
  let feed: TestTenant;
  beforeAll(async () => {
    feed = await h.tenant();
    const edition = await createEdition(feed, { procedure: 'firstcome' });
    for (let i = 0; i < 3; i++) {
      const offer = await createOffer(feed, { edition: edition.uuid });
      expect((await feed.post(`/offers/${offer.uuid}/transition`, { transition: 'publish' })).status).toBe(200);
      expect((await feed.post('/attendances', { offer: offer.uuid, participant: (await createParticipant(feed)).uuid })).status).toBe(201);
    }
    const until = Date.now() + EVENT_WAIT_MS;
    while ((await readFeed(feed)).length < 6 && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
  });

  it('pages after the cursor, in order, and keeps the cursor when nothing is new', async () => {
    const all = await readFeed(feed);
    expect(all.map((e) => e.type)).toEqual(['offer.published', 'attendance.created', 'offer.published', 'attendance.created', 'offer.published', 'attendance.created']);
    const pages: Event[][] = [];
    let after: string | undefined;
    for (;;) {
      const res = await feed.get(`/events?itemsPerPage=4${after ? `&after=${after}` : ''}`);
      expect(res.status, res.text).toBe(200);
      expect(res.headers['cache-control']).toMatch(/no-store/);
      pages.push(res.body.events);
      expect(res.body.next).toEqual(expect.any(String));
      if (res.body.events.length < 4) break;
      after = res.body.next;
    }
    expect(pages.map((p) => p.length)).toEqual([4, 2]);
    expect(pages.flat()).toEqual(all);
    // Past the end: nothing, and the same cursor back.
    const end = (await feed.get('/events?itemsPerPage=6')).body.next;
    expect((await feed.get(`/events?after=${end}`)).body).toEqual({ events: [], next: end });
    // An empty feed: no cursor yet.
    const empty = await h.tenant();
    expect((await empty.get('/events')).body).toEqual({ events: [] });
  });

  it('filters by type: comma-separated, OR', async () => {
    const published = await feed.get('/events?types=offer.published');
    expect(published.body.events.map((e) => e.type)).toEqual(['offer.published', 'offer.published', 'offer.published']);
    const both = await feed.get('/events?types=offer.published,attendance.created&itemsPerPage=200');
    expect(both.body.events).toEqual(await readFeed(feed));
    expect((await feed.get('/events?types=receipt.created')).body.events).toEqual([]);
    // The cursor of a filtered read continues the filtered feed.
    const page = await feed.get('/events?types=attendance.created&itemsPerPage=2');
    const rest = await feed.get(`/events?types=attendance.created&after=${page.body.next}`);
    expect(rest.body.events).toHaveLength(1);
    expect([...page.body.events, ...rest.body.events].map((e) => e.type)).toEqual(Array(3).fill('attendance.created'));
  });

  it('answers 400 problem+json to a bad cursor, an unknown type and a bad page size', async () => {
    for (const after of ['nonsense', '0', encodeCursor({ tx: '1', id: '0' }), 'l'.repeat(30), Buffer.from('5.5').toString('hex')]) {
      const p = expectProblem(await feed.get(`/events?after=${encodeURIComponent(after)}`), 400);
      expect(p.type).toBe('/errors/400');
      expect(p.detail).toMatch(/^after: /);
    }
    for (const types of ['offer.deleted', 'offer.published,nope', ',', 'OFFER.PUBLISHED']) {
      const p = expectProblem(await feed.get(`/events?types=${encodeURIComponent(types)}`), 400);
      expect(p.detail).toContain('types');
    }
    // Like every list filter of the API (spec 1.9): several values comma-separated, not a repeated parameter.
    expect(expectProblem(await feed.get('/events?types=offer.published&types=attendance.created'), 400).detail).toMatch(/^types: /);
    for (const size of ['0', '201', 'x']) expect(expectProblem(await feed.get(`/events?itemsPerPage=${size}`), 400).detail).toContain('itemsPerPage');
  });

  it('GET /events/{uuid} shows one event as the feed does; unknown or malformed ids are 404', async () => {
    const [first] = await readFeed(feed);
    expect(await ok(feed.get(`/events/${first.id}`))).toEqual(first);
    expect(await ok(feed.get(`/events/${uuidToBase58(first.id)}`))).toEqual(first);
    expectProblem(await feed.get(`/events/${randomUUID()}`), 404);
    expectProblem(await feed.get('/events/not-an-id'), 404);
    expectProblem(await feed.get(`/events/${first.id}`, { token: await feed.token({ role: 'organiser', organiserIds: [(await createOrganiser(feed)).uuid] }) }), 403);
  });

  it('is for admin tokens only: read-only admins may read, organisers and legacy tokens get 403, no token 401', async () => {
    expect((await feed.get('/events', { token: await feed.token({ access: 'read' }) })).status).toBe(200);
    const organiser = await createOrganiser(feed);
    expectProblem(await feed.get('/events', { token: await feed.token({ role: 'organiser', organiserIds: [organiser.uuid] }) }), 403);
    expectProblem(await feed.get('/events', { token: await feed.token({ access: 'legacy' }) }), 403);
    const anon = await feed.get('/events', { token: null });
    expectProblem(anon, 401);
    expect(anon.headers['www-authenticate']).toMatch(/^Bearer/);
  });
});

describe('under concurrent writers', () => {
  it('a poller reading through HTTP sees every application exactly once, in the table\'s (tx, id) order', async () => {
    const u = await h.tenant();
    const edition = await createEdition(u, { procedure: 'firstcome' });
    const offers = await Promise.all([0, 1, 2].map(() => createOffer(u, { edition: edition.uuid, maxParticipants: null })));
    const children = await Promise.all(Array.from({ length: 24 }, () => createParticipant(u)));
    const seen: Event[] = [];
    let after: string | undefined;
    let writing = true;
    const poller = (async () => {
      while (writing || seen.filter((e) => e.type === 'attendance.created').length < children.length) {
        const res = await u.get(`/events?itemsPerPage=5${after ? `&after=${after}` : ''}`);
        expect(res.status, res.text).toBe(200);
        seen.push(...res.body.events);
        after = res.body.next;
        if (res.body.events.length === 0) await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const created: string[] = [];
    // Six writers at a time, on three offers: commits interleave out of id order.
    for (let i = 0; i < children.length; i += 6) {
      await Promise.all(children.slice(i, i + 6).map(async (c, j) => {
        const res = await u.post('/attendances', { offer: offers[j % 3]!.uuid, participant: c.uuid });
        expect(res.status, res.text).toBe(201);
        created.push(res.body.uuid);
      }));
    }
    writing = false;
    await poller;
    const ids = seen.filter((e) => e.type === 'attendance.created').map((e) => e.data.attendance);
    expect(ids.sort()).toEqual([...created].sort());
    expect(new Set(seen.map((e) => e.id)).size).toBe(seen.length);
    const table = await sql<{ uuid: string }>`select uuid from ${qualified(u.tenant.schema, 'event')} order by tx, id`.execute(executorOf(h.orm));
    expect(seen.map((e) => e.id)).toEqual(table.rows.map((r) => r.uuid));
  });
});

describe('retention of events', () => {
  it('the daily retention job deletes events older than 30 days and keeps the rest', async () => {
    const u = await h.tenant();
    const offer = await createOffer(u);
    expect((await u.post(`/offers/${offer.uuid}/transition`, { transition: 'publish' })).status).toBe(200);
    await waitForEvent(u, (e) => e.type === 'offer.published');
    const db = executorOf(h.orm);
    const [old, young] = [randomUUID(), randomUUID()];
    const data = (o: string) => JSON.stringify({ offer: o, edition: offer.edition.uuid, status: ['published'], fields: ['teaser'] });
    await sql`insert into ${qualified(u.tenant.schema, 'event')} (uuid, type, data, occurred_at) values
      (gen_random_uuid(), 'offer.changed', ${data(old)}::jsonb, now() - interval '31 days'),
      (gen_random_uuid(), 'offer.changed', ${data(young)}::jsonb, now() - interval '29 days')`.execute(db);
    await waitForEvent(u, (e) => at(e.data, 'offer') === old);
    await runRetentionJob(u.context(), { tenant: u.slug });
    const left = await readFeed(u);
    expect(left.map((e) => at(e.data, 'offer'))).toEqual([offer.uuid, young]);
  });
});
