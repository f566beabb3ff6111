import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { expectProblem, useHarness, type Schema } from '../../harness/harness.js';
import { uuidToBase58 } from '../../../src/platform/http/ids.js';
import { category, edition, offer, organiser, transition } from './helpers.js';
import { startImageServer, type ImageServer } from './image-server.js';
import { executorOf } from '../../../src/platform/db/orm.js';

let ed: Schema<'Edition'>;
let hostA: Schema<'Organiser'>;
let hostB: Schema<'Organiser'>;
let img: ImageServer;

const { h, t } = useHarness();
beforeAll(async () => {
  ed = await edition(t, { name: 'Sommer', alias: 'sommer' });
  hostA = await organiser(t, 'Verein A');
  hostB = await organiser(t, 'Verein B');
  // Media images are read by the server (issue 13): a local image server on the operator's allowlist.
  img = await startImageServer();
  process.env.MEDIA_FETCH_ALLOW_HOSTS = '127.0.0.1';
});
afterAll(async () => {
  delete process.env.MEDIA_FETCH_ALLOW_HOSTS;
  await img.close();
});

describe('POST /offers', () => {
  it('creates a draft with every writable field, defaults and server-assigned question uuids', async () => {
    const cat = await category(t, 'Sport');
    const res = await t.post('/offers', {
      name: 'Fußball für Große', edition: 'sommer', hosts: [uuidToBase58(hostA.uuid)], categories: ['sport'],
      teaser: 'Kicken', description: '**Markdown**', fee: 1200, minAge: 6, maxAge: 14, minParticipants: 4, maxParticipants: 20,
      applicationDeadline: '2027-06-30T23:59:00+02:00', applyText: 'Bitte anmelden', meetingPoint: 'Sportplatz',
      meetingAddress: 'Weg 1', meetingLat: 52.5, meetingLng: 13.4, bring: 'Schuhe', wheelchairAccessible: true,
      media: [`${img.base}/ok.jpg`], publish: 'private_link', comment: 'intern', contact: 'Herr X',
      applicationQuestions: [{ label: 'Schwimmer?', type: 'yn', required: true }],
      dates: [{ begin: '2027-07-01T10:00:00Z', end: '2027-07-01T12:00:00Z' }],
    });
    expect(res.status).toBe(201);
    const b = res.body;
    expect(b).toMatchObject({
      name: 'Fußball für Große', alias: 'fussball-fuer-grosse', status: ['draft'], edition: { uuid: ed.uuid },
      hosts: [{ uuid: hostA.uuid }], categories: [{ uuid: cat.uuid }], fee: 1200, maxAge: 14, meetingLat: 52.5,
      wheelchairAccessible: true, requiresApplication: true, onlineApplication: true, publish: 'private_link',
      applicationDeadline: '2027-06-30T23:59:00+02:00', media: [`${img.base}/ok.jpg`], variants: [],
    });
    expect(b.dates[0]).toMatchObject({ begin: '2027-07-01T12:00:00+02:00', end: '2027-07-01T14:00:00+02:00' });
    expect(b.applicationQuestions).toEqual([{ uuid: expect.stringMatching(/^[0-9a-f-]{36}$/), label: 'Schwimmer?', type: 'yn', required: true }]);
    const again = await t.get(`/offers/${b.uuid}`);
    expect(again.body).toEqual(b);
  });

  it('refuses bad input with violations naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ maxAge: 120 }, 'maxAge'],
      [{ fee: 'abc' }, 'fee'],
      [{ fee: -1 }, 'fee'],
      [{ fee: 1.5 }, 'fee'],
      [{ dates: [{ begin: '2027-07-01T12:00:00+02:00', end: '2027-07-01T10:00:00+02:00' }] }, 'dates[0].end'],
      [{ dates: [{ begin: '2027-07-01T12:00:00', end: '2027-07-01T13:00:00+02:00' }] }, 'dates[0].begin'],
      [{ dates: [{ begin: '2027-07-01T12:00:00+02:00', end: '2027-07-01T13:00:00+02:00', recurrence: 'FREQ=SOMETIMES' }] }, 'dates[0].recurrence'],
      [{ media: ['ftp://x.example/a.jpg'] }, 'media[0]'],
      [{ media: ['/relative.jpg'] }, 'media[0]'],
      [{ meetingLat: 91 }, 'meetingLat'],
      [{ meetingLng: -181 }, 'meetingLng'],
      [{ publish: 'secret' }, 'publish'],
      [{ applicationQuestions: [{ label: 'x', type: 'essay' }] }, 'applicationQuestions[0].type'],
      [{ minAge: 10, maxAge: 8 }, 'maxAge'],
      [{ name: '' }, 'name'],
    ];
    for (const [patch, path] of cases) {
      const p = expectProblem(await t.post('/offers', { name: 'X', edition: ed.uuid, ...patch }), 422);
      expect(p.violations?.map((v) => v.propertyPath), JSON.stringify(patch)).toContain(path);
      expect(p.detail).toContain(`${path}: `);
    }
    expectProblem(await t.post('/offers', { edition: ed.uuid }), 422);
  });

  it('an unknown edition, host or category is 422 with a detail only', async () => {
    for (const body of [
      { name: 'X', edition: 'gibt-es-nicht' },
      { name: 'X', edition: ed.uuid, hosts: ['niemand'] },
      { name: 'X', edition: ed.uuid, categories: ['nichts'] },
    ]) {
      const p = expectProblem(await t.post('/offers', body), 422);
      expect(p.type).toBe('/errors/422');
      expect(p.violations).toBeUndefined();
    }
    expect(expectProblem(await t.post('/offers', { name: 'X', edition: 'gibt-es-nicht' }), 422).detail).toMatch(/^edition: .*gibt-es-nicht/);
  });

  it('refuses a taken alias and keeps aliases unique', async () => {
    const a = await offer(t, { name: 'Doppelt', edition: ed.uuid });
    const b = await offer(t, { name: 'Doppelt', edition: ed.uuid });
    expect([a.alias, b.alias]).toEqual(['doppelt', 'doppelt-2']);
    const p = expectProblem(await t.post('/offers', { name: 'Y', edition: ed.uuid, alias: 'doppelt' }), 422);
    expect(p.violations?.[0].propertyPath).toBe('alias');
  });

  it('organisers create for their own organisers only; read-only and legacy tokens may not write', async () => {
    const org = await t.token({ role: 'organiser', organiserIds: [hostA.uuid] });
    const own = await t.post('/offers', { name: 'Eigenes', edition: ed.uuid, hosts: [hostA.alias] }, { token: org });
    expect(own.status).toBe(201);
    const dflt = await t.post('/offers', { name: 'Ohne Hosts', edition: ed.uuid }, { token: org });
    expect(dflt.body.hosts.map((x) => x.uuid)).toEqual([hostA.uuid]);
    expectProblem(await t.post('/offers', { name: 'Fremd', edition: ed.uuid, hosts: [hostB.uuid] }, { token: org }), 403);
    const read = await t.token({ access: 'read' });
    expectProblem(await t.post('/offers', { name: 'X', edition: ed.uuid }, { token: read }), 403);
    const legacy = await t.token({ access: 'legacy' });
    expectProblem(await t.post('/offers', { name: 'X', edition: ed.uuid }, { token: legacy }), 403);
    expectProblem(await t.post('/offers', { name: 'X', edition: ed.uuid }, { token: null }), 401);
  });
});

describe('PATCH /offers/{uuid}', () => {
  it('applies only the keys sent, null clears, lists replace, null ignored for name and edition, empty body 422', async () => {
    const c1 = await category(t, 'Eins');
    const c2 = await category(t, 'Zwei');
    const x = await offer(t, {
      name: 'Patchbar', edition: ed.uuid, fee: 100, teaser: 'T', categories: [c1.uuid], hosts: [hostA.uuid],
      dates: [{ begin: '2027-07-01T10:00:00+02:00', end: '2027-07-01T12:00:00+02:00' }],
    });
    const res = await t.patch(`/offers/${x.uuid}`, {
      fee: 250, teaser: null, name: null, edition: null, categories: [c2.alias],
      dates: [{ begin: '2027-08-01T10:00:00+02:00', end: '2027-08-01T12:00:00+02:00' }, { begin: '2027-08-02T10:00:00+02:00', end: '2027-08-02T12:00:00+02:00' }],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Patchbar', fee: 250, categories: [{ uuid: c2.uuid }], hosts: [{ uuid: hostA.uuid }], edition: { uuid: ed.uuid } });
    expect(res.body).not.toHaveProperty('teaser');
    expect(res.body.dates.map((d) => d.begin)).toEqual(['2027-08-01T10:00:00+02:00', '2027-08-02T10:00:00+02:00']);
    expect((await t.patch(`/offers/${x.uuid}`, { dates: null })).body.dates).toEqual([]);
    expectProblem(await t.patch(`/offers/${x.uuid}`, {}), 422);
    expectProblem(await t.patch(`/offers/${x.uuid}`, { maxAge: 120 }), 422);
    const merge = await t.request('PATCH', `/offers/${x.uuid}`, { rawBody: JSON.stringify({ bring: 'Hut' }), headers: { 'content-type': 'application/merge-patch+json' } });
    expect(merge.body.bring).toBe('Hut');
    const other = await edition(t, { name: 'Herbst' });
    expect((await t.patch(`/offers/${x.uuid}`, { edition: other.alias })).body.edition.uuid).toBe(other.uuid);
    expectProblem(await t.patch(`/offers/${x.uuid}`, { edition: 'nirgends' }), 422);
  });

  it('organisers change only their own offers', async () => {
    const org = await t.token({ role: 'organiser', organiserIds: [hostA.uuid] });
    const mine = await offer(t, { name: 'Meins', edition: ed.uuid, hosts: [hostA.uuid] });
    const theirs = await offer(t, { name: 'Deins', edition: ed.uuid, hosts: [hostB.uuid] });
    expect((await t.patch(`/offers/${mine.uuid}`, { fee: 5 }, { token: org })).status).toBe(200);
    expectProblem(await t.patch(`/offers/${mine.uuid}`, { hosts: [hostB.uuid] }, { token: org }), 403);
    expectProblem(await t.patch(`/offers/${theirs.uuid}`, { fee: 5 }, { token: org }), 404);
    await transition(t, theirs.uuid, 'publish');
    expectProblem(await t.patch(`/offers/${theirs.uuid}`, { fee: 5 }, { token: org }), 403);
  });

  it('the alias follows renames until first published, then it is frozen', async () => {
    const x = await offer(t, { name: 'Alter Name', edition: ed.uuid });
    expect(x.alias).toBe('alter-name');
    const renamed = await t.patch(`/offers/${x.uuid}`, { name: 'Neuer Name' });
    expect(renamed.body.alias).toBe('neuer-name');
    await transition(t, x.uuid, 'publish');
    await transition(t, x.uuid, 'unpublish');
    const after = await t.patch(`/offers/${x.uuid}`, { name: 'Ganz anders' });
    expect(after.body).toMatchObject({ name: 'Ganz anders', alias: 'neuer-name' });
    const p = expectProblem(await t.patch(`/offers/${x.uuid}`, { alias: 'ganz-anders' }), 422);
    expect(p.violations?.[0].propertyPath).toBe('alias');
  });
});

describe('POST /offers/{uuid}/transition', () => {
  it('walks the workflow and answers 422, 403 and 409 as specified', async () => {
    const x = await offer(t, { name: 'Workflow', edition: ed.uuid, hosts: [hostA.uuid], dates: [{ begin: '2099-07-01T10:00:00+02:00', end: '2099-07-01T12:00:00+02:00' }] });
    const org = await t.token({ role: 'organiser', organiserIds: [hostA.uuid] });
    expect((await transition(t, x.uuid, 'complete', { token: org })).status).toEqual(['completed']);
    // Permission before state: organisers may never approve, whatever the state.
    expectProblem(await t.post(`/offers/${x.uuid}/transition`, { transition: 'approve' }, { token: org }), 403);
    expectProblem(await t.post(`/offers/${x.uuid}/transition`, { transition: 'unpublish' }, { token: org }), 403);
    expect((await transition(t, x.uuid, 'approve')).status).toEqual(['reviewed']);
    const p409 = expectProblem(await t.post(`/offers/${x.uuid}/transition`, { transition: 'cancel' }), 409);
    expect(p409.detail).toContain('reviewed');
    expect(p409.detail).toContain('publish');
    const published = await transition(t, x.uuid, 'publish');
    expect(published.status).toEqual(['published']);
    expect(published.transitions).toEqual(['cancel', 'unpublish']);
    const cancelled = await transition(t, x.uuid, 'cancel', { token: org });
    expect(cancelled.status).toEqual(['published', 'cancelled']);
    expect(cancelled.transitions).toEqual(['relaunch']);
    expectProblem(await t.post(`/offers/${x.uuid}/transition`, { transition: 'cancel' }), 409);
    const relaunched = await t.post(`/offers/${x.uuid}/transition`, { transition: 'relaunch', notify: true }, { token: org });
    expect(relaunched.body.status).toEqual(['published']);
    const p422 = expectProblem(await t.post(`/offers/${x.uuid}/transition`, { transition: 'explode' }), 422);
    expect(p422.detail).toMatch(/^transition: /);
    expectProblem(await t.post(`/offers/${x.uuid}/transition`, {}), 422);
  });

  it('takes the application transition\'s shape: notify and commit, null read as absent (spec 4.2, issue 13)', async () => {
    const x = await offer(t, { name: 'Form', edition: ed.uuid });
    const a = await t.post(`/offers/${x.uuid}/transition`, { transition: 'publish', notify: null, commit: null });
    expect(a.status, a.text).toBe(200);
    expect(a.body.status).toEqual(['published']);
    const b = await t.post(`/offers/${x.uuid}/transition`, { transition: 'cancel', notify: false, commit: true });
    expect(b.status, b.text).toBe(200);
    // Issue 22.5: an offer transition holds nothing back, so `commit: false` is refused rather than ignored,
    // with or without notify, and nothing changes.
    for (const body of [{ commit: false }, { notify: null, commit: false }, { notify: true, commit: false }]) {
      const c = expectProblem(await t.post(`/offers/${x.uuid}/transition`, { transition: 'relaunch', ...body }), 422);
      expect(c.violations).toEqual([expect.objectContaining({ propertyPath: 'commit' })]);
      expect(c.detail).toMatch(/^commit: An offer transition holds nothing back/);
      expect(c.type).toBe(`/validation_errors/${c.violations?.[0].code}`);
    }
    expect((await t.get(`/offers/${x.uuid}`)).body.status).toEqual(['published', 'cancelled']);
    const c = await t.post(`/offers/${x.uuid}/transition`, { transition: 'relaunch', notify: null, commit: true });
    expect(c.status, c.text).toBe(200);
    expect(c.body.status).toEqual(['published']);
    const q = expectProblem(await t.post(`/offers/${x.uuid}/transition`, { transition: 'cancel', commit: 'yes' }), 422);
    expect(q.violations?.[0]).toMatchObject({ propertyPath: 'commit' });
    // Nothing changed by the refused requests.
    expect((await t.get(`/offers/${x.uuid}`)).body.status).toEqual(['published']);
  });

  it('organisers may not cancel once the first date has begun, and see no transitions on foreign offers', async () => {
    const past = await offer(t, { name: 'Vorbei', edition: ed.uuid, hosts: [hostA.uuid], dates: [{ begin: '2020-07-01T10:00:00+02:00', end: '2020-07-01T12:00:00+02:00' }] });
    await transition(t, past.uuid, 'publish');
    const org = await t.token({ role: 'organiser', organiserIds: [hostA.uuid] });
    expectProblem(await t.post(`/offers/${past.uuid}/transition`, { transition: 'cancel' }, { token: org }), 403);
    const orgB = await t.token({ role: 'organiser', organiserIds: [hostB.uuid] });
    expectProblem(await t.post(`/offers/${past.uuid}/transition`, { transition: 'cancel' }, { token: orgB }), 403);
  });

  it('an offer of another tenant is 404', async () => {
    const other = await h.tenant();
    const e = await edition(other);
    const foreign = await offer(other, { name: 'Anderswo', edition: e.uuid });
    expectProblem(await t.post(`/offers/${foreign.uuid}/transition`, { transition: 'publish' }), 404);
    expectProblem(await t.get(`/offers/${foreign.uuid}`), 404);
    expectProblem(await t.patch(`/offers/${foreign.uuid}`, { fee: 1 }), 404);
  });

  it('cancel with notify queues no mail while there are no confirmed families', async () => {
    const x = await offer(t, { name: 'Stille Absage', edition: ed.uuid });
    await transition(t, x.uuid, 'publish');
    const res = await t.post(`/offers/${x.uuid}/transition`, { transition: 'cancel', notify: true });
    expect(res.status).toBe(200);
    const db = executorOf(h.orm);
    const rows = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(`${t.tenant.schema}.outbox`)}`.execute(db);
    expect(rows.rows[0].n).toBe(0);
  });
});

describe('copy, variant and delete', () => {
  it('copies as a draft named "(Kopie)" without dates, optionally into another edition', async () => {
    const c = await category(t, 'Kopierbar');
    const x = await offer(t, { name: 'Original', edition: ed.uuid, hosts: [hostA.uuid], categories: [c.uuid], fee: 700, dates: [{ begin: '2027-07-01T10:00:00+02:00', end: '2027-07-01T12:00:00+02:00' }] });
    await transition(t, x.uuid, 'publish');
    const copy = await t.post(`/offers/${x.uuid}/copy`);
    expect(copy.status).toBe(201);
    expect(copy.body).toMatchObject({ name: 'Original (Kopie)', alias: 'original-kopie', status: ['draft'], dates: [], fee: 700, hosts: [{ uuid: hostA.uuid }], categories: [{ uuid: c.uuid }], edition: { uuid: ed.uuid } });
    expect(copy.body.uuid).not.toBe(x.uuid);
    const other = await edition(t, { name: 'Winter', alias: 'winter' });
    const moved = await t.post(`/offers/${x.uuid}/copy`, { edition: 'winter' });
    expect(moved.body.edition.uuid).toBe(other.uuid);
    expectProblem(await t.post(`/offers/${x.uuid}/copy`, { edition: 'unbekannt' }), 422);
    expectProblem(await t.post('/offers/00000000-0000-4000-8000-000000000000/copy'), 404);
  });

  it('makes variants; saving the base copies its descriptive fields to every variant', async () => {
    const base = await offer(t, { name: 'Töpfern', edition: ed.uuid, hosts: [hostA.uuid], teaser: 'Ton', dates: [{ begin: '2027-07-01T10:00:00+02:00', end: '2027-07-01T12:00:00+02:00' }] });
    const v1 = await t.post(`/offers/${base.uuid}/variant`);
    expect(v1.status).toBe(201);
    expect(v1.body).toMatchObject({ name: 'Töpfern', status: ['draft'], dates: [], variantBase: { uuid: base.uuid, name: 'Töpfern' }, teaser: 'Ton' });
    const v2 = await t.post(`/offers/${v1.body.uuid}/variant`);
    expect(v2.body.variantBase!.uuid).toBe(base.uuid);
    expect((await t.get(`/offers/${base.uuid}`)).body.variants!.map((v) => v.uuid)).toEqual([v1.body.uuid, v2.body.uuid]);
    await t.patch(`/offers/${base.uuid}`, { teaser: 'Ton und Glasur', description: 'Neu', hosts: [hostB.uuid] });
    for (const v of [v1.body, v2.body]) {
      const got = (await t.get(`/offers/${v.uuid}`)).body;
      expect(got).toMatchObject({ teaser: 'Ton und Glasur', description: 'Neu', hosts: [{ uuid: hostB.uuid }] });
      expect(got.dates).toEqual([]);
    }
    await t.patch(`/offers/${base.uuid}`, { name: 'Töpfern am Abend' });
    const variant = (await t.get(`/offers/${v1.body.uuid}`)).body;
    expect(variant).toMatchObject({ name: 'Töpfern am Abend', alias: expect.stringMatching(/^toepfern-am-abend-\d$/) });
  });

  it('deletes with 204 (admins only), then 404', async () => {
    const x = await offer(t, { name: 'Weg', edition: ed.uuid, hosts: [hostA.uuid], dates: [{ begin: '2027-07-01T10:00:00+02:00', end: '2027-07-01T12:00:00+02:00' }] });
    const org = await t.token({ role: 'organiser', organiserIds: [hostA.uuid] });
    expectProblem(await t.del(`/offers/${x.uuid}`, { token: org }), 403);
    const del = await t.del(`/offers/${x.uuid}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expectProblem(await t.get(`/offers/${x.uuid}`), 404);
    expectProblem(await t.del(`/offers/${x.uuid}`), 404);
  });

  it('refuses to delete while applications exist (409), also withdrawn ones', async () => {
    const u = await h.tenant();
    const e = await edition(u);
    const x = await offer(u, { name: 'Beliebt', edition: e.uuid });
    const child = (await u.post('/participants', { firstname: 'Kim', lastname: 'Kind' })).body;
    const a = (await u.post('/attendances', { offer: x.uuid, participant: child.uuid })).body;
    expect((await u.post(`/attendances/${a.uuid}/transition`, { transition: 'withdraw' })).status).toBe(200);
    expect(expectProblem(await u.del(`/offers/${x.uuid}`), 409).detail).toMatch(/1 applications/);
    expect((await u.del(`/attendances/${a.uuid}`)).status).toBe(204);
    expect((await u.del(`/offers/${x.uuid}`)).status).toBe(204);
  });
});
