import { beforeAll, describe, expect, inject, it } from 'vitest';
import { ANONYMOUS, viewerOfActor } from '../../../src/platform/auth/viewer.js';
import { dbOf } from '../../../src/platform/context.js';
import { prepared } from '../../../src/platform/db/prepared.js';
import { parsedFinalJson } from '../../../src/platform/http/final-json.js';
import { offerPage } from '../../../src/resources/offers/list.js';
import { offerJson, projection } from '../../../src/resources/offers/projection.js';
import { publicPageSql } from '../../../src/resources/offers/public-page.js';
import { listOffersInput } from '../../../src/resources/offers/schema.js';
import { create as createAttendance } from '../../factories/attendance.factory.js';
import { create as createParticipant } from '../../factories/participant.factory.js';
import { useHarness } from '../../harness/harness.js';
import { spyOnQueries, type SeenQuery } from '../../harness/queries.js';
import { category, edition, offer, organiser, transition } from './helpers.js';

// The public page PostgreSQL writes as one JSON text (public-page.ts, issue 10.2) is, offer by offer, what the
// projection of single offers writes for a viewer without a role (projection.ts, as GET /offers/{id} answers),
// field for field and in the same order, for every kind of offer and every sort. The fields against the domain's
// rules: offer-json.test.ts.
// Directly connected also under TEST_VIA_PGBOUNCER: it checks what is sent as named statements.
const { t } = useHarness({ databaseUrl: inject('directDatabaseUrl') });

beforeAll(async () => {
  const ed = await edition(t);
  const host = await organiser(t, 'Jugendzentrum Süd');
  const other = await organiser(t, 'Verein');
  const cat = await category(t, 'Natur & Umwelt');
  const made = [
    await offer(t, { name: 'Nur ein Name', edition: ed.uuid }),
    await offer(t, {
      name: 'Alles ausgefüllt', alias: 'alles-ausgefuellt-2027', edition: ed.uuid, hosts: [host.uuid, other.uuid], categories: [cat.uuid],
      teaser: 'Kurz', description: 'Lang', fee: 1200, minAge: 6, maxAge: 12, minParticipants: 2, maxParticipants: 10,
      meetingPoint: 'Rathaus', meetingAddress: 'Markt 1', meetingLat: 52.520008, meetingLng: 13.404954, bring: 'Mütze',
      applyText: 'Bitte anmelden', applicationDeadline: '2027-06-30T23:59:00+02:00', wheelchairAccessible: true,
      dates: [
        { begin: '2027-07-05T09:00:00+02:00', end: '2027-07-05T12:00:00+02:00' },
        { begin: '2027-01-07T15:00:00+01:00', end: '2027-01-07T17:00:00+01:00', recurrence: 'FREQ=WEEKLY;COUNT=3' },
      ],
    }),
    await offer(t, { name: 'Ausgebucht', edition: ed.uuid, maxParticipants: 1, fee: 0 }),
    await offer(t, { name: 'Abgesagt', edition: ed.uuid, maxParticipants: 3 }),
  ];
  for (const o of made) await transition(t, o.uuid, 'publish');
  await transition(t, made[3].uuid, 'cancel');
  await createAttendance(t, { offer: made[2].uuid, participant: (await createParticipant(t)).uuid, status: 'confirmed' });
  await createAttendance(t, { offer: made[3].uuid, participant: (await createParticipant(t)).uuid, status: 'confirmed' });
});

async function bothWays(query: Record<string, unknown>, settings: { offerUrlTemplate?: string } = {}) {
  const base = t.context();
  const ctx = { ...base, tenant: { ...base.tenant, settings: { ...base.tenant.settings, ...settings } }, viewer: ANONYMOUS };
  const db = dbOf(ctx.em);
  const page = await offerPage(ctx, db, listOffersInput.parse(query), ctx.viewer);
  const text = (await prepared(publicPageSql(ctx, page.where, page.orderBy, page.limit, page.offset)).execute(db)).rows[0]!.page;
  const rows = (await prepared(projection(ctx, ctx.viewer, page.where, page.orderBy, page.limit, page.offset)).execute(db)).rows;
  const now = new Date();
  return { sql: JSON.parse(text), node: JSON.parse(`[${rows.map((r) => offerJson(ctx.viewer, r, now)).join(',')}]`) };
}

describe('the public page written by PostgreSQL', () => {
  it('equals the offers read one by one, in key order too', async () => {
    const { sql, node } = await bothWays({});
    expect(sql).toHaveLength(4);
    expect(sql).toStrictEqual(node);
    expect(sql.map((o: object) => Object.keys(o))).toEqual(node.map((o: object) => Object.keys(o)));
    const full = sql.find((o: { name: string }) => o.name === 'Alles ausgefüllt');
    expect(full).toMatchObject({ vacancies: 10, fullyBooked: false, meetingLat: 52.520008, wheelchairAccessible: true });
    expect(sql.find((o: { name: string }) => o.name === 'Ausgebucht')).toMatchObject({ vacancies: 0, fullyBooked: true });
  });

  it('equals them under every sort, order and page', async () => {
    for (const sort of ['name', 'begin', 'fee', 'createdAt', 'modifiedAt']) {
      for (const order of ['asc', 'desc']) {
        const { sql, node } = await bothWays({ sort, order, itemsPerPage: '3', page: '1' });
        expect(sql, `${sort} ${order}`).toStrictEqual(node);
      }
    }
    const second = await bothWays({ itemsPerPage: '3', page: '2' });
    expect(second.sql).toHaveLength(1);
    expect(second.sql).toStrictEqual(second.node);
    const none = await bothWays({ q: 'nichts dergleichen' });
    expect(none.sql).toEqual([]);
  });

  it('writes the url from the template, as a single offer does', async () => {
    const { sql, node } = await bothWays({}, { offerUrlTemplate: 'https://ferien.example/angebot/{alias}?von={alias}' });
    expect(sql).toStrictEqual(node);
    const full = sql.find((o: { name: string }) => o.name === 'Alles ausgefüllt');
    expect(full.url).toBe('https://ferien.example/angebot/alles-ausgefuellt-2027?von=alles-ausgefuellt-2027');
  });

  it('writes a url template holding quotes and backslashes into the text intact', async () => {
    const template = "https://ferien.example/o'brien\\{alias}?x='1'";
    const { sql, node } = await bothWays({}, { offerUrlTemplate: template });
    expect(sql).toStrictEqual(node);
    expect(sql[0].url).toBe(template.replace('{alias}', sql[0].alias));
  });

  it('sends the default page as a named statement without parameters, filters as parameters', async () => {
    // Without parameters PostgreSQL plans the statement once per connection and keeps the plan (public-page.ts).
    const seen: { text?: string; name?: string; values?: unknown[] }[] = [];
    const queries = spyOnQueries((q: SeenQuery) => { if (typeof q === 'object') seen.push(q as never); });
    // Twice each: on a connection that is not the schema's own (db/affinity.ts) a statement is named from its
    // second execution.
    try {
      for (const path of ['/offers?itemsPerPage=7&page=2', '/offers?itemsPerPage=7&page=2', '/offers?q=Name', '/offers?q=Name']) {
        expect((await t.get(path, { token: null })).status).toBe(200);
      }
    } finally {
      queries.restore();
    }
    const pages = seen.filter((q) => q.name && q.text?.includes('json_agg(json_strip_nulls'));
    // A page past the end (this tenant has fewer than 8 offers) asks once more for the first row, for the total
    // of the paging headers (issue 24): also a statement without parameters.
    const plain = pages.filter((q) => q.text!.includes('limit 7 offset 7') || q.text!.includes('limit 1 offset 0'));
    const filtered = pages.filter((q) => q.text!.includes('ilike'));
    expect(plain.length).toBeGreaterThanOrEqual(1);
    expect(filtered.length).toBeGreaterThanOrEqual(1);
    expect(plain.length + filtered.length).toBe(pages.length);
    for (const q of plain) expect(q.values).toEqual([]);
    for (const q of filtered) expect(q.values!.length).toBeGreaterThan(0);
  });

  it('is what GET /offers answers anonymously, and a token still gets the full fields', async () => {
    const res = await t.get('/offers', { token: null });
    expect(res.status).toBe(200);
    expect(res.body).toStrictEqual((await bothWays({})).node);
    const admin = await t.get('/offers');
    expect(admin.body[0]).toHaveProperty('attendances');
    expect(parsedFinalJson({ plain: true })).toEqual({ plain: true });
    expect(viewerOfActor(null).kind).toBe('anonymous');
  });
});
