import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, useHarness, type Schema } from '../../harness/harness.js';
import { spyOnQueries } from '../../harness/queries.js';
import { uuidToBase58 } from '../../../src/platform/http/ids.js';
import { category, edition, names, offer, organiser, transition } from './helpers.js';
import { executorOf } from '../../../src/platform/db/orm.js';

const o: Record<string, Schema<'Offer'>> = {};
let ed: Schema<'Edition'>;
let offline: Schema<'Edition'>;
let hostA: Schema<'Organiser'>;
let hostB: Schema<'Organiser'>;
let catA: Schema<'Category'>;

const PUBLIC_FIELDS = [
  'uuid', 'name', 'alias', 'edition', 'hosts', 'status', 'teaser', 'description', 'dates', 'fee', 'minAge', 'maxAge',
  'minParticipants', 'maxParticipants', 'vacancies', 'fullyBooked', 'requiresApplication', 'onlineApplication',
  'applicationDeadline', 'applyText', 'meetingPoint', 'meetingAddress', 'meetingLat', 'meetingLng', 'bring',
  'wheelchairAccessible', 'categories', 'url', 'media', 'createdAt', 'modifiedAt',
];
const TOKEN_FIELDS = ['publish', 'comment', 'contact', 'attendances', 'applicationQuestions', 'transitions', 'variantBase', 'variants'];

const { h, t } = useHarness();
beforeAll(async () => {
  ed = await edition(t, { name: 'Sommerferien 2027', alias: 'sommer-2027' });
  offline = await edition(t, { name: 'Herbst 2027', online: false });
  hostA = await organiser(t, 'Jugendzentrum Nord');
  hostB = await organiser(t, 'Sportverein Süd');
  catA = await category(t, 'Natur');
  const base = { edition: ed.uuid, hosts: [hostA.uuid] };
  o.draft = await offer(t, { ...base, name: 'Entwurf', dates: [{ begin: '2027-07-10T10:00:00+02:00', end: '2027-07-10T12:00:00+02:00' }] });
  o.published = await offer(t, {
    ...base, name: 'Zelten am See', teaser: 'Eine Nacht im Zelt', description: 'Mit Lagerfeuer', meetingPoint: 'Bahnhof',
    fee: 1500, maxParticipants: 12, minAge: 8, maxAge: 12, categories: [catA.alias], comment: 'intern', contact: 'Frau Meier',
    dates: [{ begin: '2027-07-05T09:00:00+02:00', end: '2027-07-06T16:00:00+02:00' }],
  });
  await transition(t, o.published.uuid, 'publish');
  o.cancelled = await offer(t, { ...base, name: 'Ärger mit Äpfeln', fee: 500, dates: [{ begin: '2027-07-01T10:00:00+02:00', end: '2027-07-01T12:00:00+02:00' }] });
  await transition(t, o.cancelled.uuid, 'publish');
  await transition(t, o.cancelled.uuid, 'cancel');
  o.privateLink = await offer(t, { ...base, name: 'Geheimtipp', publish: 'private_link' });
  await transition(t, o.privateLink.uuid, 'publish');
  o.offline = await offer(t, { edition: offline.uuid, hosts: [hostA.uuid], name: 'Herbstwald' });
  await transition(t, o.offline.uuid, 'publish');
  o.foreignDraft = await offer(t, { edition: ed.uuid, hosts: [hostB.uuid], name: 'Fremder Entwurf', fee: 0 });
  // Weekly on Wednesdays from 2027-07-07, four times: 7, 14, 21, 28 July.
  o.recurring = await offer(t, {
    edition: ed.uuid, hosts: [hostB.uuid], name: 'Bastelkurs', fee: 3000,
    dates: [{ begin: '2027-07-07T15:00:00+02:00', end: '2027-07-07T17:00:00+02:00', recurrence: 'FREQ=WEEKLY;COUNT=4' }],
  });
  await transition(t, o.recurring.uuid, 'publish');
});

describe('GET /offers visibility', () => {
  it('anonymous and legacy callers see published, public offers of online editions, cancelled ones included', async () => {
    const legacy = await t.token({ access: 'legacy' });
    for (const token of [null, legacy]) {
      const res = await t.get('/offers', { token });
      expect(res.status).toBe(200);
      expect(names(res).sort()).toEqual(['Ärger mit Äpfeln', 'Bastelkurs', 'Zelten am See'].sort());
      const cancelled = res.body.find((x) => x.name === 'Ärger mit Äpfeln');
      expect(cancelled!.status).toEqual(['published', 'cancelled']);
      for (const item of res.body) {
        for (const k of Object.keys(item)) expect(PUBLIC_FIELDS).toContain(k);
      }
    }
    const anon = await t.get('/offers', { token: null });
    expect(anon.headers['cache-control']).toBe('public, max-age=60');
  });

  it('shows the public fields with nulls omitted, vacancies, url and references', async () => {
    const res = await t.get(`/offers/${o.published.uuid}`, { token: null });
    expect(res.status).toBe(200);
    const b = res.body;
    expect(b).toMatchObject({
      uuid: o.published.uuid, name: 'Zelten am See', alias: 'zelten-am-see', status: ['published'],
      edition: { uuid: ed.uuid, name: 'Sommerferien 2027', alias: 'sommer-2027' },
      hosts: [{ uuid: hostA.uuid, name: 'Jugendzentrum Nord', alias: hostA.alias }],
      categories: [{ uuid: catA.uuid, name: 'Natur', alias: 'natur' }],
      fee: 1500, maxParticipants: 12, vacancies: 12, fullyBooked: false, requiresApplication: true,
      onlineApplication: true, wheelchairAccessible: false, media: [],
      url: `https://${t.host}/angebote/zelten-am-see`,
    });
    expect(b.dates).toEqual([{ uuid: expect.any(String), begin: '2027-07-05T09:00:00+02:00', end: '2027-07-06T16:00:00+02:00' }]);
    for (const k of TOKEN_FIELDS) expect(b).not.toHaveProperty(k);
    expect(b).not.toHaveProperty('applicationDeadline');
    expect(b).not.toHaveProperty('bring');
    const unlimited = (await t.get(`/offers/${o.recurring.uuid}`, { token: null })).body;
    expect(unlimited).not.toHaveProperty('vacancies');
    expect(unlimited.fullyBooked).toBe(false);
    expect(unlimited.dates[0].recurrence).toBe('FREQ=WEEKLY;COUNT=4');
  });

  it('hides drafts, private-link and offline-edition offers from anonymous callers (404)', async () => {
    for (const k of ['draft', 'privateLink', 'offline', 'foreignDraft']) {
      expectProblem(await t.get(`/offers/${o[k].uuid}`, { token: null }), 404);
    }
  });

  it('admin and read tokens see every offer with the token fields', async () => {
    const read = await t.token({ access: 'read' });
    for (const token of [t.adminToken, read]) {
      const res = await t.get('/offers', { token });
      expect(res.body).toHaveLength(7);
      const p = res.body.find((x) => x.uuid === o.published.uuid);
      expect(p).toMatchObject({ publish: 'public', comment: 'intern', contact: 'Frau Meier', applicationQuestions: [], variants: [] });
      expect(p!.attendances).toEqual({
        waiting: 0, confirmed: 0, waitlisted: 0, rejected: 0, withdrawn: 0, unfulfilled: 0, participated: 0, noshow: 0,
        email_unconfirmed: 0, consents_outstanding: 0,
      });
      expect(p!.transitions).toEqual(['cancel', 'unpublish']);
      expect(res.headers['cache-control']).toBe('private, no-store');
    }
    const draft = (await t.get(`/offers/${o.draft.uuid}`)).body;
    expect(draft.status).toEqual(['draft']);
    expect(draft.transitions).toEqual(['complete', 'approve', 'publish']);
  });

  it('organisers see every published offer and all of their own organisers’ offers', async () => {
    const token = await t.token({ role: 'organiser', access: 'read', organiserIds: [hostA.uuid] });
    const res = await t.get('/offers', { token });
    expect(names(res).sort()).toEqual(['Ärger mit Äpfeln', 'Bastelkurs', 'Entwurf', 'Geheimtipp', 'Herbstwald', 'Zelten am See'].sort());
    const own = res.body.find((x) => x.uuid === o.draft.uuid);
    expect(own!.transitions).toEqual(['complete']);
    const foreign = res.body.find((x) => x.uuid === o.recurring.uuid);
    expect(foreign!.transitions).toEqual([]);
    expectProblem(await t.get(`/offers/${o.foreignDraft.uuid}`, { token }), 404);
  });

  it('answers 401 to anonymous callers when public access is off, and to invalid tokens', async () => {
    const closed = await h.tenant({ settings: { publicAccess: false } });
    expectProblem(await closed.get('/offers', { token: null }), 401);
    expect((await closed.get('/offers')).status).toBe(200);
    expectProblem(await t.get('/offers', { token: 'hpt_nonsense' }), 401);
  });

  it('uses the offerUrlTemplate setting', async () => {
    const u = await h.tenant({ settings: { offerUrlTemplate: 'https://ferien.example/a/{alias}' } });
    const e = await edition(u);
    const x = await offer(u, { edition: e.alias, name: 'Kino' });
    expect(x.url).toBe('https://ferien.example/a/kino');
  });

  it('the path takes UUID or base58; anything else is 404', async () => {
    expect((await t.get(`/offers/${uuidToBase58(o.published.uuid)}`, { token: null })).body.uuid).toBe(o.published.uuid);
    expectProblem(await t.get('/offers/123'), 404);
    expectProblem(await t.get('/offers/00000000-0000-4000-8000-000000000000'), 404);
  });
});

describe('GET /offers filters', () => {
  it('edition, category and host by UUID, base58 or alias; nothing matched gives []', async () => {
    expect((await t.get(`/offers?edition=${ed.uuid}`)).body).toHaveLength(6);
    expect((await t.get(`/offers?edition=${uuidToBase58(offline.uuid)}`)).body.map((x) => x.name)).toEqual(['Herbstwald']);
    expect((await t.get('/offers?edition=sommer-2027')).body).toHaveLength(6);
    expect((await t.get('/offers?edition=nope')).body).toEqual([]);
    expect(names(await t.get('/offers?category=natur'))).toEqual(['Zelten am See']);
    expect(names(await t.get(`/offers?category=${catA.uuid}`))).toEqual(['Zelten am See']);
    expect(names(await t.get(`/offers?host=${hostB.alias}`)).sort()).toEqual(['Bastelkurs', 'Fremder Entwurf']);
    expect(names(await t.get(`/offers?host=${uuidToBase58(hostB.uuid)}`))).toHaveLength(2);
    expect((await t.get('/offers?host=unknown')).body).toEqual([]);
    expect((await t.get('/offers?category=unknown', { token: null })).body).toEqual([]);
  });

  it('q searches name, teaser, description and meeting point, ignoring case', async () => {
    expect(names(await t.get('/offers?q=ZELT'))).toEqual(['Zelten am See']);
    expect(names(await t.get('/offers?q=lagerfeuer'))).toEqual(['Zelten am See']);
    expect(names(await t.get('/offers?q=bahnhof'))).toEqual(['Zelten am See']);
    expect(names(await t.get('/offers?q=%25'))).toEqual([]);
  });

  it('status takes place names (OR); published matches cancelled ones; unknown is 400', async () => {
    expect(names(await t.get('/offers?status=draft')).sort()).toEqual(['Entwurf', 'Fremder Entwurf']);
    expect(names(await t.get('/offers?status=cancelled'))).toEqual(['Ärger mit Äpfeln']);
    expect(await t.get('/offers?status=published').then((r) => r.body.length)).toBe(5);
    expect(await t.get('/offers?status=draft,cancelled').then((r) => r.body.length)).toBe(3);
    const p = expectProblem(await t.get('/offers?status=archived'), 400);
    expect(p.detail).toMatch(/^status: /);
  });

  it('from/until match whole Berlin days, recurrences expanded', async () => {
    // 2027-07-14 is the second Wednesday of the weekly date; nothing else happens that day.
    expect(names(await t.get('/offers?from=2027-07-14&until=2027-07-14'))).toEqual(['Bastelkurs']);
    expect(names(await t.get('/offers?from=2027-07-28&until=2027-07-28'))).toEqual(['Bastelkurs']);
    expect(names(await t.get('/offers?from=2027-08-04&until=2027-08-04'))).toEqual([]);
    expect(names(await t.get('/offers?from=2027-07-15&until=2027-07-20'))).toEqual([]);
    // A timestamp is read as its Berlin day: 23:30Z on the 5th is the 6th in Berlin, the camp's second day.
    expect(names(await t.get('/offers?from=2027-07-05T23:30:00Z&until=2027-07-06'))).toEqual(['Zelten am See']);
    // Open-ended.
    expect(names(await t.get('/offers?from=2027-07-22'))).toEqual(['Bastelkurs']);
    expect(names(await t.get('/offers?until=2027-07-02')).sort()).toEqual(['Ärger mit Äpfeln']);
    expect(names(await t.get('/offers?from=2027-07-05&until=2027-07-07', { token: null })).sort()).toEqual(['Bastelkurs', 'Zelten am See']);
    expectProblem(await t.get('/offers?from=2027-13-40'), 400);
    const p = expectProblem(await t.get('/offers?until=tomorrow'), 400);
    expect(p.detail).toMatch(/^until: /);
  });

  it('modifiedSince, pagination and ignored old filters', async () => {
    expect((await t.get('/offers?modifiedSince=2999-01-01')).body).toEqual([]);
    expect((await t.get('/offers?modifiedSince=2000-01-01T00:00:00Z')).body).toHaveLength(7);
    expectProblem(await t.get('/offers?modifiedSince=gestern'), 400);
    const p1 = await t.get('/offers?itemsPerPage=3');
    const p3 = await t.get('/offers?itemsPerPage=3&page=3');
    expect(p1.body).toHaveLength(3);
    expect(p3.body).toHaveLength(1);
    expect((await t.get('/offers?page=9')).body).toEqual([]);
    expectProblem(await t.get('/offers?itemsPerPage=201'), 400);
    expectProblem(await t.get('/offers?page=0'), 400);
    const old = await t.get('/offers?edition.name=x&dates.begin%5Bafter%5D=2030-01-01&fee%5Bgt%5D=100&meetingPoint=nowhere');
    expect(old.body).toHaveLength(7);
  });
});

describe('GET /offers sorting', () => {
  it('defaults to first date then name, offers without dates last', async () => {
    expect(names(await t.get('/offers'))).toEqual([
      'Ärger mit Äpfeln', 'Zelten am See', 'Bastelkurs', 'Entwurf', 'Fremder Entwurf', 'Geheimtipp', 'Herbstwald',
    ]);
  });

  it('sorts by name with German collation, begin, fee, createdAt, modifiedAt, asc and desc', async () => {
    const byName = names(await t.get('/offers?sort=name'));
    expect(byName).toEqual(['Ärger mit Äpfeln', 'Bastelkurs', 'Entwurf', 'Fremder Entwurf', 'Geheimtipp', 'Herbstwald', 'Zelten am See']);
    expect(names(await t.get('/offers?sort=name&order=desc'))).toEqual([...byName].reverse());
    expect(names(await t.get('/offers?sort=begin&order=desc')).slice(0, 4)).toEqual(['Entwurf', 'Bastelkurs', 'Zelten am See', 'Ärger mit Äpfeln']);
    const byFee = (await t.get('/offers?sort=fee&order=desc')).body.map((x) => x.fee ?? 0);
    expect(byFee).toEqual([...byFee].sort((a, b) => b - a));
    expect(byFee[0]).toBe(3000);
    const created = names(await t.get('/offers?sort=createdAt'));
    expect(created[0]).toBe('Entwurf');
    expect(created[6]).toBe('Bastelkurs');
    expect(names(await t.get('/offers?sort=createdAt&order=desc'))[0]).toBe('Bastelkurs');
    expect((await t.get('/offers?sort=modifiedAt')).status).toBe(200);
  });

  it('rejects unknown sort keys and orders with 400', async () => {
    const p = expectProblem(await t.get('/offers?sort=price'), 400);
    expect(p.detail).toMatch(/^sort: /);
    expectProblem(await t.get('/offers?order=up'), 400);
  });
});

describe('query count', () => {
  // We count the statements the app sends through `pg` (the driver under MikroORM and kysely) by wrapping
  // `pg.Client.prototype.query` in this process, where the harness's server runs. Requests for a page of
  // 10 and of 200 offers must send the same number of statements (tenant look-up, the page). The token check is
  // left out: a token is looked up at most once a second per process (issue 25), so whether a request asks
  // depends on the one before it, not on the page's size.
  it('a 200-offer page takes the same number of SQL round trips as a 10-offer page', async () => {
    const u = await h.tenant();
    const e = await edition(u);
    const hosts = [await organiser(u, 'A'), await organiser(u, 'B')];
    const c = await category(u, 'K');
    const db = executorOf(h.orm);
    const { sql } = await import('kysely');
    const schema = u.tenant.schema;
    await sql`insert into ${sql.table(`${schema}.offers`)} (uuid, edition_uuid, name, alias, places)
      select gen_random_uuid(), ${e.uuid}::uuid, 'Angebot ' || i, 'angebot-' || i, '{published}' from generate_series(1, 200) i`.execute(db);
    await sql`insert into ${sql.table(`${schema}.offer_dates`)} (uuid, offer_uuid, "begin", "end", recurrence)
      select gen_random_uuid(), uuid, now() + interval '1 day', now() + interval '1 day 2 hours', case when random() < 0.5 then 'FREQ=DAILY;COUNT=3' end
      from ${sql.table(`${schema}.offers`)}`.execute(db);
    await sql`insert into ${sql.table(`${schema}.offer_hosts`)} (offer_uuid, organiser_uuid) select o.uuid, h.uuid
      from ${sql.table(`${schema}.offers`)} o cross join ${sql.table(`${schema}.organisers`)} h`.execute(db);
    await sql`insert into ${sql.table(`${schema}.offer_categories`)} (offer_uuid, category_uuid) select uuid, ${c.uuid}::uuid
      from ${sql.table(`${schema}.offers`)}`.execute(db);
    expect(hosts).toHaveLength(2);

    let tokenLookups = 0;
    const textOf = (q: unknown) => (typeof q === 'string' ? q : (q as { text?: string } | null)?.text ?? '');
    const queries = spyOnQueries((q) => void (textOf(q).includes('secret_hash') && tokenLookups++));
    const measure = async (path: `/offers?${string}`, token?: string | null) => {
      queries.count = 0;
      tokenLookups = 0;
      const res = await u.get(path, token === undefined ? {} : { token });
      expect(res.status).toBe(200);
      return { n: queries.count - tokenLookups, len: res.body.length, body: res.body };
    };
    try {
      for (const [token, query] of [[undefined, ''], [null, ''], [undefined, '&from=2020-01-01&until=2100-01-01']] as const) {
        const small = await measure(`/offers?itemsPerPage=10${query}`, token);
        const large = await measure(`/offers?itemsPerPage=200${query}`, token);
        expect(small.len).toBe(10);
        expect(large.len).toBe(200);
        expect(small.n).toBeGreaterThan(0);
        expect(large.n).toBe(small.n);
        expect(large.body[0].hosts).toHaveLength(2);
        expect(large.body[199].categories).toHaveLength(1);
      }
    } finally {
      queries.restore();
    }
    expect(queries.count).toBeGreaterThan(0);
  });
});

describe('edition phases and recurrence horizon', () => {
  it('a show_offers task governs the edition’s online state for anonymous callers', async () => {
    const u = await h.tenant();
    const past = await edition(u, { name: 'Vorbei', tasks: [{ type: 'show_offers', begin: '2020-01-01T00:00:00Z', end: '2020-12-31T00:00:00Z' }] });
    const running = await edition(u, { name: 'Läuft', online: false, tasks: [{ type: 'show_offers', begin: '2020-01-01T00:00:00Z' }] });
    const a = await offer(u, { name: 'In vergangener Phase', edition: past.uuid });
    const b = await offer(u, { name: 'In laufender Phase', edition: running.uuid });
    await transition(u, a.uuid, 'publish');
    await transition(u, b.uuid, 'publish');
    expect(names(await u.get('/offers', { token: null }))).toEqual(['In laufender Phase']);
    expect((await u.get('/offers')).body).toHaveLength(2);
  });

  it('an RRULE without COUNT or UNTIL runs to the end of the edition’s last task', async () => {
    const u = await h.tenant();
    const e = await edition(u, { tasks: [{ type: 'holiday', begin: '2027-07-01T00:00:00+02:00', end: '2027-07-31T23:59:00+02:00' }] });
    await offer(u, { name: 'Jeden Montag', edition: e.uuid, dates: [{ begin: '2027-07-05T10:00:00+02:00', end: '2027-07-05T11:00:00+02:00', recurrence: 'RRULE:FREQ=WEEKLY' }] });
    expect(names(await u.get('/offers?from=2027-07-26&until=2027-07-26'))).toEqual(['Jeden Montag']);
    expect(names(await u.get('/offers?from=2027-07-27&until=2027-07-31'))).toEqual([]);
    expect(names(await u.get('/offers?from=2027-08-02&until=2027-08-02'))).toEqual([]);
  });
});
