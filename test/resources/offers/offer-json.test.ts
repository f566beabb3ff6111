import { beforeAll, describe, expect, it } from 'vitest';
import { ATTENDANCE_STATES } from '../../../src/domain/attendance-states.js';
import { normalizePlaces, OFFER_PLACES, offerTransitionsFor, type OfferPlace } from '../../../src/domain/offer-workflow.js';
import { fullyBooked, overbooked, vacancies } from '../../../src/domain/participant-list.js';
import { dbOf } from '../../../src/platform/context.js';
import { sql, tablesOf } from '../../../src/platform/db/sql.js';
import { offerOut } from '../../../src/resources/offers/schema.js';
import { create as createAttendance } from '../../factories/attendance.factory.js';
import { useHarness } from '../../harness/harness.js';
import { asList, asRecord } from '../../harness/json.js';
import { ANONYMOUS, viewerOfActor } from '../../../src/platform/auth/viewer.js';
import type { Viewer } from '../../../src/platform/context.js';
import { parsedFinalJson } from '../../../src/platform/http/final-json.js';
import { listOffers, offerPage } from '../../../src/resources/offers/list.js';
import { listOffersInput } from '../../../src/resources/offers/schema.js';
import { category, edition, offer, organiser, transition } from './helpers.js';

// Issue 25: every viewer's offer is JSON text PostgreSQL writes (offer-json.ts), with the domain's rules in SQL.
// Each rule held here to the domain's own function over the offer's stored data: status (normalizePlaces),
// vacancies, fullyBooked, overbooked (participant-list.ts), the applications per state, the transitions
// (offer-workflow.ts, decided in Node for the caller), the url; the fields in the schema's order; the list and
// the single offer alike; anonymous, website, organiser and admin.
const { t } = useHarness();
const ids: Record<string, string> = {};
let host = '';

beforeAll(async () => {
  const ed = await edition(t);
  const own = await organiser(t, 'Jugendzentrum Süd');
  host = own.uuid;
  const cat = await category(t, 'Natur & Umwelt');
  ids.full = (await offer(t, {
    name: 'Alles ausgefüllt', edition: ed.uuid, hosts: [own.uuid], categories: [cat.uuid], teaser: 'Kurz', fee: 1200, maxParticipants: 2,
    meetingLat: 52.520008, meetingLng: 13.404954, applicationQuestions: [{ label: 'Schwimmer?', type: 'yn', required: true }],
    dates: [{ begin: '2027-07-05T09:00:00+02:00', end: '2027-07-05T12:00:00+02:00' }],
  })).uuid;
  ids.unlimited = (await offer(t, { name: 'Ohne Grenze', edition: ed.uuid })).uuid;
  ids.over = (await offer(t, { name: 'Überbucht', edition: ed.uuid, maxParticipants: 1, dates: [{ begin: '2020-07-05T09:00:00+02:00', end: '2020-07-05T12:00:00+02:00' }] })).uuid;
  ids.draft = (await offer(t, { name: 'Entwurf', edition: ed.uuid, hosts: [own.uuid], maxParticipants: 5 })).uuid;
  for (const k of ['full', 'unlimited', 'over']) await transition(t, ids[k]!, 'publish');
  const variant = await t.post(`/offers/${ids.full}/variant`);
  expect(variant.status, variant.text).toBe(201);
  ids.variant = variant.body.uuid;
  const apply = (o: string, status: string) => createAttendance(t, { offer: o, status });
  await apply(ids.full!, 'confirmed');
  await apply(ids.full!, 'waitlisted');
  await apply(ids.over!, 'confirmed');
  await apply(ids.over!, 'confirmed'); // an admin's confirmation past the capacity (issue 13)
  await apply(ids.unlimited!, 'confirmed');
  await transition(t, ids.over!, 'cancel');
});

type Stored = { uuid: string; places: OfferPlace[]; max: number | null; firstBegin: Date | null; states: Record<string, number> };

async function stored(): Promise<Map<string, Stored>> {
  const ctx = t.context();
  const q = tablesOf(ctx.tenant.schema);
  const rows = (await sql<{ uuid: string; places: OfferPlace[]; max: number | null; firstBegin: string | null; states: Record<string, number> | null }>`
    select o.uuid, o.places, o.max_participants as max,
      (select min(d."begin") from ${q('offer_dates')} d where d.offer_uuid = o.uuid)::text as "firstBegin",
      (select json_object_agg(s, n) from (select a.status as s, count(*)::int as n from ${q('attendances')} a where a.offer_uuid = o.uuid group by a.status) x) as states
    from ${q('offers')} o`.execute(dbOf(ctx.em))).rows;
  return new Map(rows.map((r) => [r.uuid, { ...r, firstBegin: r.firstBegin ? new Date(r.firstBegin) : null, states: r.states ?? {} }]));
}

const schemaOrder = Object.keys(offerOut.shape);

/** The keys appear in the order the schema lists them. */
function inSchemaOrder(o: Record<string, unknown>): boolean {
  const positions = Object.keys(o).map((k) => schemaOrder.indexOf(k));
  return positions.every((p, i) => p >= 0 && (i === 0 || p > positions[i - 1]!));
}

function checkRules(o: Record<string, unknown>, s: Stored, viewer: 'anonymous' | 'website' | 'organiser' | 'admin') {
  const confirmed = s.states.confirmed ?? 0;
  expect(inSchemaOrder(o), Object.keys(o).join(',')).toBe(true);
  expect(o.status).toEqual(normalizePlaces(s.places));
  expect(o.vacancies).toBe(vacancies(s.max, confirmed) ?? undefined);
  expect(o.fullyBooked).toBe(fullyBooked(s.max, confirmed));
  expect(o.url).toBe(`https://${t.tenant.hosts[0]!.host}/angebote/${String(o.alias)}`);
  const team = viewer === 'organiser' || viewer === 'admin';
  if (!team) {
    for (const k of ['publish', 'comment', 'attendances', 'overbooked', 'transitions', 'variants', 'variantBase']) expect(o).not.toHaveProperty(k);
    if (viewer === 'website') expect(Array.isArray(o.applicationQuestions)).toBe(true);
    else expect(o).not.toHaveProperty('applicationQuestions');
    return;
  }
  expect(o.attendances).toEqual(Object.fromEntries(ATTENDANCE_STATES.map((st) => [st, s.states[st] ?? 0])));
  expect(o.overbooked).toBe(overbooked(s.max, confirmed));
  const hosts = asList(o.hosts).map((h) => String(asRecord(h).uuid));
  expect(o.transitions).toEqual(offerTransitionsFor({
    role: viewer, ownOffer: viewer === 'organiser' && hosts.includes(host), places: s.places, now: new Date(), firstDateBegin: s.firstBegin,
  }));
  expect(Array.isArray(o.variants)).toBe(true);
}

describe("the offer's JSON written by PostgreSQL", () => {
  it('holds every rule of the domain, for every viewer, in the list and for a single offer', async () => {
    const data = await stored();
    const website = await t.token({ role: 'website', access: 'read' });
    const own = await t.token({ role: 'organiser', organiserIds: [host] });
    const viewers = [['anonymous', null], ['website', website], ['organiser', own], ['admin', t.adminToken]] as const;
    for (const [viewer, token] of viewers) {
      const list = await t.get('/offers?itemsPerPage=50', { token });
      expect(list.status, list.text).toBe(200);
      const page = asList(list.body).map((o) => asRecord(o));
      // Anonymous and website callers see the published offers; the team all of them (the drafts too: the organiser hosts them).
      expect(page.length, viewer).toBe(viewer === 'admin' || viewer === 'organiser' ? 5 : 3);
      for (const o of page) {
        checkRules(o, data.get(String(o.uuid))!, viewer);
        const one = await t.get(`/offers/${String(o.uuid)}`, { token });
        expect(one.status, one.text).toBe(200);
        expect(one.body, `${viewer} ${String(o.name)}`).toStrictEqual(o);
        expect(Object.keys(asRecord(one.body))).toEqual(Object.keys(o));
      }
    }
  });

  it('counts a confirmation past the capacity as overbooked, with no vacancy, and none where places are unlimited', async () => {
    const over = asRecord((await t.get(`/offers/${ids.over}`)).body);
    expect(over).toMatchObject({ maxParticipants: 1, vacancies: 0, fullyBooked: true, overbooked: 1, status: ['published', 'cancelled'] });
    expect(asRecord(over.attendances).confirmed).toBe(2);
    const unlimited = asRecord((await t.get(`/offers/${ids.unlimited}`)).body);
    expect(unlimited).not.toHaveProperty('vacancies');
    expect(unlimited).toMatchObject({ fullyBooked: false, overbooked: 0 });
    const full = asRecord((await t.get(`/offers/${ids.full}`)).body);
    expect(full).toMatchObject({ vacancies: 1, fullyBooked: false, overbooked: 0, meetingLat: 52.520008, meetingLng: 13.404954 });
    expect(asList(full.variants).map((v) => asRecord(v).uuid)).toEqual([ids.variant]);
    expect(asRecord((await t.get(`/offers/${ids.variant}`)).body).variantBase).toMatchObject({ uuid: ids.full });
    expect(asList(full.transitions)).toContain('cancel');
  });

  it("takes the team's unfiltered list's first dates in one grouped pass, in the same order as the look-up per offer", async () => {
    const ctx = t.context();
    const admin = viewerOfActor({ tokenId: '00000000-0000-4000-8000-0000000000b2', name: 'Test', role: 'admin', access: 'read', ownerKind: 'service', organiserIds: [] });
    const pageOf = (viewer: Viewer, query: Record<string, string>) => offerPage(ctx, dbOf(ctx.em), listOffersInput.parse(query), viewer);
    expect((await pageOf(admin, {})).everyOffer).toBe(true);
    expect((await pageOf(admin, { status: 'draft' })).everyOffer).toBe(false);
    expect((await pageOf(ANONYMOUS, {})).everyOffer).toBe(false);
    // A status filter naming every place lets every offer through, with the look-up per offer: the same answer.
    const every = OFFER_PLACES.join(',');
    for (const order of ['', '&sort=begin&order=desc', '&sort=begin&order=asc']) {
      const grouped = await t.get(`/offers?itemsPerPage=50${order}`, { token: t.adminToken });
      const perOffer = await t.get(`/offers?itemsPerPage=50${order}&status=${every}`, { token: t.adminToken });
      expect(grouped.status, grouped.text).toBe(200);
      expect(asList(grouped.body).length).toBe(5);
      expect(grouped.body, order).toStrictEqual(perOffer.body);
    }
    const secondPage = await t.get('/offers?itemsPerPage=2&page=2', { token: t.adminToken });
    expect(secondPage.headers['x-total-count']).toBe('5');
  });

  it('reuses a compiled page only for the same schema, viewer and query: a new url template or another organiser gets its own', async () => {
    const base = t.context();
    const read = async (viewer: Viewer, template?: string) => {
      const ctx = { ...base, viewer, tenant: { ...base.tenant, settings: { ...base.tenant.settings, offerUrlTemplate: template } } };
      return asList(parsedFinalJson(await listOffers(ctx, listOffersInput.parse({ itemsPerPage: '50' })))).map((o) => asRecord(o));
    };
    const first = await read(ANONYMOUS);
    expect(first[0]!.url).toBe(`https://${t.tenant.hosts[0]!.host}/angebote/${String(first[0]!.alias)}`);
    const templated = await read(ANONYMOUS, 'https://ferien.example/{alias}');
    expect(templated.map((o) => o.url)).toEqual(first.map((o) => `https://ferien.example/${String(o.alias)}`));
    const actor = (ids: string[]) => ({ tokenId: '00000000-0000-4000-8000-0000000000b1', name: 'Test', role: 'organiser' as const, access: 'read' as const, ownerKind: 'service' as const, organiserIds: ids });
    const hosting = await read(viewerOfActor(actor([host])));
    const stranger = await read(viewerOfActor(actor(['00000000-0000-4000-8000-00000000dead'])));
    // The draft of the host's own offer is seen by its host only (D5).
    expect(hosting.map((o) => o.uuid)).toContain(ids.draft);
    expect(stranger.map((o) => o.uuid)).not.toContain(ids.draft);
  });
});
