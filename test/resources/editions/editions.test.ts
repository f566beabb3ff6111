import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { expectProblem, useHarness } from '../../harness/harness.js';
import { effectiveEditionState, type PhaseTask, type TaskType } from '../../../src/domain/edition-phases.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import { RULE_CODES } from '../../../src/domain/errors.js';
import { uuidToBase58 } from '../../../src/platform/http/ids.js';
import { editionListsReleasedSql, editionOnlineSql, editionProcedureSql } from '../../../src/engines/edition-phases/index.js';

const { h, t } = useHarness();

const BERLIN_TS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0[12]:00$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A Berlin timestamp `days` from now (negative: in the past), as a client sends it. */
const at = (days: number) => DateTime.now().setZone('Europe/Berlin').plus({ days }).startOf('second').toISO({ suppressMilliseconds: true })!;

describe('POST /editions', () => {
  it('creates with defaults, a derived alias, empty tasks and allocations', async () => {
    const res = await t.post('/editions', { name: 'Ferienpass Sommer 2027' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      uuid: expect.stringMatching(UUID),
      name: 'Ferienpass Sommer 2027',
      alias: 'ferienpass-sommer-2027',
      procedure: 'firstcome',
      online: true,
      releaseParticipantLists: false,
      tasks: [],
      allocations: [],
      createdAt: expect.stringMatching(BERLIN_TS),
      modifiedAt: expect.stringMatching(BERLIN_TS),
    });
    expect(res.headers['cache-control']).toBe('private, no-store');
  });

  it('stores the flags and tasks sent, shows empty task values as null and gives tasks UUIDs', async () => {
    const keep = '0b7a4c38-5d6e-4f1a-9b2c-3d4e5f6a7b8c';
    const res = await t.post('/editions', {
      name: 'Herbstferien 2027',
      alias: 'herbst-27',
      procedure: 'lot',
      online: false,
      releaseParticipantLists: true,
      tasks: [
        { type: 'holiday', title: 'Herbstferien', begin: '2027-10-11T00:00:00+02:00', end: '2027-10-23T23:59:59+02:00' },
        { uuid: keep, type: 'custom' },
        { type: 'pay_days', title: '', begin: '2027-09-01T10:00:00Z', end: null, maxApplications: 3 },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ alias: 'herbst-27', procedure: 'lot', online: false, releaseParticipantLists: true, allocations: [] });
    const [holiday, custom, pay] = res.body.tasks;
    expect(holiday).toEqual({
      uuid: expect.stringMatching(UUID), type: 'holiday', title: 'Herbstferien',
      begin: '2027-10-11T00:00:00+02:00', end: '2027-10-23T23:59:59+02:00', applicationSystem: null, maxApplications: null,
    });
    expect(custom).toEqual({ uuid: keep, type: 'custom', title: null, begin: null, end: null, applicationSystem: null, maxApplications: null });
    // `Z` is an offset; responses use the Berlin offset.
    expect(pay).toMatchObject({ title: null, begin: '2027-09-01T12:00:00+02:00', end: null, maxApplications: 3 });
    expect(res.text).toContain('"applicationSystem":null');
    expect((await t.get(`/editions/${res.body.uuid}`)).body).toEqual(res.body);
  });

  it('makes aliases unique and refuses a taken one with a violation on alias', async () => {
    const a = await t.post('/editions', { name: 'Osterferien' });
    const b = await t.post('/editions', { name: 'Osterferien' });
    expect([a.body.alias, b.body.alias]).toEqual(['osterferien', 'osterferien-2']);
    const dup = expectProblem(await t.post('/editions', { name: 'Andere', alias: 'osterferien' }), 422);
    expect(dup.violations).toEqual([{ propertyPath: 'alias', message: expect.any(String), code: RULE_CODES.unique }]);
    expect(dup.type).toBe(`/validation_errors/${RULE_CODES.unique}`);
    expect(expectProblem(await t.post('/editions', { name: 'Andere', alias: 'Mit Leerzeichen' }), 422).violations?.[0].propertyPath).toBe('alias');
  });

  it('validates the body with violations', async () => {
    const proc = expectProblem(await t.post('/editions', { name: 'X', procedure: 'lottery' }), 422);
    expect(proc.violations).toEqual([{ propertyPath: 'procedure', message: expect.stringContaining('firstcome, lot'), code: RULE_CODES.choice }]);
    expect(proc.detail).toMatch(/^procedure: /);

    const order = expectProblem(await t.post('/editions', {
      name: 'X', tasks: [{ type: 'show_offers', begin: '2027-06-10T10:00:00+02:00', end: '2027-06-10T09:59:59+02:00' }],
    }), 422);
    expect(order.violations).toEqual([{ propertyPath: 'tasks[0].end', message: expect.any(String), code: RULE_CODES.range }]);
    expect(order.detail).toMatch(/^tasks\[0\]\.end: /);

    const noOffset = expectProblem(await t.post('/editions', {
      name: 'X', tasks: [{ type: 'holiday' }, { type: 'holiday', begin: '2027-06-10T10:00:00', end: '2027-06-12T10:00:00+02:00' }],
    }), 422);
    expect(noOffset.violations).toEqual([{ propertyPath: 'tasks[1].begin', message: expect.any(String), code: RULE_CODES.timestamp }]);

    const dateOnly = expectProblem(await t.post('/editions', { name: 'X', tasks: [{ type: 'holiday', end: '2027-06-12' }] }), 422);
    expect(dateOnly.violations?.[0].propertyPath).toBe('tasks[0].end');

    const type = expectProblem(await t.post('/editions', { name: 'X', tasks: [{ type: 'party' }] }), 422);
    expect(type.violations?.[0]).toMatchObject({ propertyPath: 'tasks[0].type', code: RULE_CODES.choice });
    expectProblem(await t.post('/editions', { name: 'X', tasks: [{ title: 'ohne Typ' }] }), 422);
    expect(expectProblem(await t.post('/editions', { name: 'X', tasks: [{ type: 'application_system', applicationSystem: 'random' }] }), 422)
      .violations?.[0].propertyPath).toBe('tasks[0].applicationSystem');
    expect(expectProblem(await t.post('/editions', { name: 'X', tasks: [{ type: 'custom', maxApplications: -1 }] }), 422)
      .violations?.[0].propertyPath).toBe('tasks[0].maxApplications');
    expect(expectProblem(await t.post('/editions', { name: 'X', tasks: [{ type: 'custom', uuid: 'kaputt' }] }), 422)
      .violations?.[0].propertyPath).toBe('tasks[0].uuid');
    const twice = '5c1f8a0e-2d3b-4c5d-8e9f-0a1b2c3d4e5f';
    expect(expectProblem(await t.post('/editions', { name: 'X', tasks: [{ type: 'custom', uuid: twice }, { type: 'custom', uuid: twice }] }), 422)
      .violations?.[0].propertyPath).toBe('tasks[1].uuid');
    expectProblem(await t.post('/editions', { name: 'X', tasks: 'none' }), 422);
    // Booleans and numbers in bodies are not coerced from strings.
    for (const online of ['yes', 'false', 0, 1]) {
      expect(expectProblem(await t.post('/editions', { name: 'X', online }), 422).violations?.[0]).toMatchObject({ propertyPath: 'online', code: RULE_CODES.type });
    }
    expect(expectProblem(await t.post('/editions', { name: 'X', releaseParticipantLists: 'true' }), 422).violations?.[0].propertyPath).toBe('releaseParticipantLists');
    expect(expectProblem(await t.post('/editions', { name: 'X', tasks: [{ type: 'custom', maxApplications: '5' }] }), 422)
      .violations?.[0]).toMatchObject({ propertyPath: 'tasks[0].maxApplications', code: RULE_CODES.type });
    expect(expectProblem(await t.post('/editions', { name: 'X', tasks: [{ type: 'custom', maxApplications: 1.5 }] }), 422)
      .violations?.[0].propertyPath).toBe('tasks[0].maxApplications');
    expect(expectProblem(await t.post('/editions', {}), 422).violations?.[0]).toMatchObject({ propertyPath: 'name', code: RULE_CODES.required });
  });

  it('does not let a task take the UUID of another edition\'s task', async () => {
    const a = (await t.post('/editions', { name: 'Eins', tasks: [{ type: 'custom', title: 'A' }] })).body;
    const taken = a.tasks[0].uuid;
    const p = expectProblem(await t.post('/editions', { name: 'Zwei', tasks: [{ type: 'holiday' }, { uuid: taken, type: 'custom' }] }), 422);
    expect(p.violations?.[0].propertyPath).toBe('tasks[1].uuid');
    const b = (await t.post('/editions', { name: 'Drei' })).body;
    expect(expectProblem(await t.patch(`/editions/${b.uuid}`, { tasks: [{ uuid: taken, type: 'custom' }] }), 422).violations?.[0].propertyPath).toBe('tasks[0].uuid');
    expect((await t.get(`/editions/${a.uuid}`)).body.tasks[0]).toMatchObject({ uuid: taken, title: 'A' });
  });
});

describe('GET /editions/{uuid}', () => {
  it('reads by UUID and base58', async () => {
    const e = (await t.post('/editions', { name: 'Winter', tasks: [{ type: 'custom', title: 'Planung' }] })).body;
    const b58 = uuidToBase58(e.uuid);
    expect(b58).toHaveLength(22);
    const res = await t.get(`/editions/${b58}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(e);
    expect((await t.get(`/editions/${e.uuid.toUpperCase()}`)).body.uuid).toBe(e.uuid);
  });

  it('answers 404 for unknown, malformed, alias and foreign identifiers', async () => {
    expectProblem(await t.get('/editions/3f2b8c1e-0000-4000-8000-000000000000'), 404);
    expectProblem(await t.get('/editions/2027'), 404);
    const e = (await t.post('/editions', { name: 'Pfingsten' })).body;
    expectProblem(await t.get(`/editions/${e.alias}`), 404);
    const other = await h.tenant();
    const foreign = (await other.post('/editions', { name: 'Fremd' })).body;
    expectProblem(await t.get(`/editions/${foreign.uuid}`), 404);
    expectProblem(await t.get(`/editions/${uuidToBase58(foreign.uuid)}`), 404);
    expectProblem(await t.patch(`/editions/${foreign.uuid}`, { name: 'Übernommen' }), 404);
    expectProblem(await t.patch(`/editions/${foreign.uuid}`, {}), 404);
    expectProblem(await t.del(`/editions/${foreign.uuid}`), 404);
    expect((await other.get(`/editions/${foreign.uuid}`)).body.name).toBe('Fremd');
  });
});

describe('GET /editions', () => {
  it('lists by name, filters by q and modifiedSince, and pages', async () => {
    const u = await h.tenant();
    for (const name of ['Sommer 2027', 'Ostern 2027', 'Ähnlich', 'Herbst 2026']) expect((await u.post('/editions', { name })).status).toBe(201);
    const all = await u.get('/editions');
    expect(all.status).toBe(200);
    expect(all.body.map((e) => e.name)).toEqual(['Ähnlich', 'Herbst 2026', 'Ostern 2027', 'Sommer 2027']);
    for (const e of all.body) expect(e).toMatchObject({ tasks: [], allocations: [], online: true, procedure: 'firstcome' });
    expect((await u.get('/editions?q=2027')).body.map((e) => e.name)).toEqual(['Ostern 2027', 'Sommer 2027']);
    expect((await u.get('/editions?q=OSTERN')).body).toHaveLength(1);
    expect((await u.get('/editions?q=%25')).body).toEqual([]);
    const p2 = await u.get('/editions?itemsPerPage=3&page=2');
    expect(p2.body.map((e) => e.name)).toEqual(['Sommer 2027']);
    // Issue 24: the plain array of spec 4.1 with its total, and no `Link` (spec 4.1, 9.8).
    expect(p2.headers['x-total-count']).toBe('4');
    expect(p2.headers.link).toBeUndefined();
    expect((await u.get('/editions?page=3&itemsPerPage=3')).body).toEqual([]);
    expect((await u.get('/editions?modifiedSince=2999-01-01')).body).toEqual([]);
    const since = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    await u.patch(`/editions/${all.body[1].uuid}`, { online: false });
    expect((await u.get(`/editions?modifiedSince=${encodeURIComponent(since)}`)).body.map((e) => e.name)).toEqual(['Herbst 2026']);
    expectProblem(await u.get('/editions?modifiedSince=morgen'), 400);
    expect(expectProblem(await u.get('/editions?itemsPerPage=0'), 400).detail).toMatch(/^itemsPerPage: /);
  });

  it('shows the same effective state in the list as in the single view', async () => {
    const u = await h.tenant();
    const e = (await u.post('/editions', { name: 'Phasen', online: true, tasks: [{ type: 'show_offers', begin: at(5), end: at(30) }] })).body;
    const listed = (await u.get('/editions')).body;
    expect(listed).toEqual([e]);
    expect(e.online).toBe(false);
  });
});

describe('PATCH /editions/{uuid}', () => {
  it('returns the edition unchanged for an empty body', async () => {
    const e = (await t.post('/editions', { name: 'Unverändert', tasks: [{ type: 'custom', title: 'x' }] })).body;
    await new Promise((r) => setTimeout(r, 1000));
    const empty = await t.patch(`/editions/${e.uuid}`, {});
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual(e);
    const zero = await t.request('PATCH', `/editions/${uuidToBase58(e.uuid)}`, { rawBody: '', headers: { 'content-type': 'application/json' } });
    expect(zero.status).toBe(200);
    expect(zero.body).toEqual(e);
    // An unknown key is refused (D12), also in an otherwise empty body; read-only ones are ignored.
    expect(expectProblem(await t.patch(`/editions/${e.uuid}`, { unknown: 1 }), 422).detail).toBe('unknown: unknown field');
    expect((await t.patch(`/editions/${e.uuid}`, { uuid: e.uuid, createdAt: e.createdAt, allocations: [] })).body).toEqual(e);
    expectProblem(await t.patch('/editions/3f2b8c1e-0000-4000-8000-000000000000', {}), 404);
  });

  it('applies only the keys sent; fields with a value ignore null; alias null re-derives', async () => {
    const e = (await t.post('/editions', { name: 'Sommerferien', procedure: 'lot', online: false, releaseParticipantLists: true, tasks: [{ type: 'custom' }] })).body;
    const renamed = await t.patch(`/editions/${e.uuid}`, { name: 'Sommerferien 2027' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Sommerferien 2027', alias: 'sommerferien', procedure: 'lot', online: false, releaseParticipantLists: true });
    expect(renamed.body.tasks).toEqual(e.tasks);
    expect(renamed.body.modifiedAt >= e.modifiedAt).toBe(true);
    const nulls = await t.patch(`/editions/${e.uuid}`, { name: null, procedure: null, online: null, releaseParticipantLists: null });
    expect(nulls.body).toMatchObject({ name: 'Sommerferien 2027', procedure: 'lot', online: false, releaseParticipantLists: true, tasks: e.tasks });
    const flags = await t.patch(`/editions/${e.uuid}`, { procedure: 'firstcome', online: true });
    expect(flags.body).toMatchObject({ procedure: 'firstcome', online: true, releaseParticipantLists: true });
    const alias = await t.patch(`/editions/${e.uuid}`, { alias: null });
    expect(alias.body.alias).toBe('sommerferien-2027');
    expect((await t.get(`/editions/${e.uuid}`)).body).toEqual(alias.body);
  });

  it('replaces the task list: kept UUIDs stay, new tasks get one, missing ones go; null empties it', async () => {
    const e = (await t.post('/editions', {
      name: 'Aufgaben',
      tasks: [
        { type: 'holiday', title: 'Ferien', begin: '2027-07-01T00:00:00+02:00', end: '2027-08-15T00:00:00+02:00' },
        { type: 'pay_days', title: 'Zahltage' },
        { type: 'custom', title: 'Weg' },
      ],
    })).body;
    const [holiday, pay] = e.tasks;
    const res = await t.patch(`/editions/${e.uuid}`, {
      tasks: [
        { ...pay, title: 'Zahltage neu', maxApplications: 5 },
        { type: 'application_system', applicationSystem: 'lot', begin: '2027-05-01T08:00:00+02:00', end: '2027-05-31T20:00:00+02:00' },
        holiday,
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.tasks).toHaveLength(3);
    expect(res.body.tasks[0]).toEqual({ ...pay, title: 'Zahltage neu', maxApplications: 5 });
    expect(res.body.tasks[1]).toMatchObject({ uuid: expect.stringMatching(UUID), type: 'application_system', applicationSystem: 'lot', title: null });
    expect([holiday.uuid, pay.uuid]).not.toContain(res.body.tasks[1].uuid);
    expect(res.body.tasks[2]).toEqual(holiday);
    expect(res.body.tasks.map((x) => x.uuid)).not.toContain(e.tasks[2].uuid);
    expect((await t.get(`/editions/${e.uuid}`)).body).toEqual(res.body);

    // A task sent without a value clears it: all fields of a sent task apply.
    const cleared = await t.patch(`/editions/${e.uuid}`, { tasks: [{ uuid: holiday.uuid, type: 'holiday' }] });
    expect(cleared.body.tasks).toEqual([{ uuid: holiday.uuid, type: 'holiday', title: null, begin: null, end: null, applicationSystem: null, maxApplications: null }]);

    const other = await t.patch(`/editions/${e.uuid}`, { name: 'Aufgaben 2' });
    expect(other.body.tasks).toEqual(cleared.body.tasks);
    expect((await t.patch(`/editions/${e.uuid}`, { tasks: [] })).body.tasks).toEqual([]);
    await t.patch(`/editions/${e.uuid}`, { tasks: [{ type: 'custom' }] });
    expect((await t.patch(`/editions/${e.uuid}`, { tasks: null })).body.tasks).toEqual([]);
  });

  it('refuses invalid values with 422 and leaves the edition as it was', async () => {
    const e = (await t.post('/editions', { name: 'Streng', tasks: [{ type: 'custom', title: 'bleibt' }] })).body;
    await t.post('/editions', { name: 'Belegt' });
    expect(expectProblem(await t.patch(`/editions/${e.uuid}`, { procedure: 'auction' }), 422).violations?.[0].propertyPath).toBe('procedure');
    expect(expectProblem(await t.patch(`/editions/${e.uuid}`, { alias: 'belegt' }), 422).violations?.[0]).toMatchObject({ propertyPath: 'alias', code: RULE_CODES.unique });
    expect(expectProblem(await t.patch(`/editions/${e.uuid}`, {
      tasks: [{ type: 'holiday', begin: '2027-07-02T00:00:00+02:00', end: '2027-07-01T00:00:00+02:00' }],
    }), 422).violations?.[0].propertyPath).toBe('tasks[0].end');
    expect(expectProblem(await t.patch(`/editions/${e.uuid}`, { tasks: [{ type: 'holiday', end: '2027-07-01 10:00' }] }), 422).violations?.[0])
      .toMatchObject({ propertyPath: 'tasks[0].end', code: RULE_CODES.timestamp });
    expect((await t.patch(`/editions/${e.uuid}`, { alias: 'streng' })).status).toBe(200);
    expect((await t.get(`/editions/${e.uuid}`)).body).toMatchObject({ name: 'Streng', alias: 'streng', tasks: e.tasks });
  });
});

describe('effective state (D4)', () => {
  it('lets running phases govern online, list release and procedure instead of the flags', async () => {
    const e = (await t.post('/editions', {
      name: 'Gesteuert',
      online: false,
      releaseParticipantLists: false,
      procedure: 'firstcome',
      tasks: [
        { type: 'show_offers', begin: at(-10), end: at(20) },
        { type: 'publish_lists', begin: at(-1), end: at(1) },
        { type: 'application_system', applicationSystem: 'lot', begin: at(-5), end: at(5) },
      ],
    })).body;
    expect(e).toMatchObject({ online: true, releaseParticipantLists: true, procedure: 'lot' });
    // The stored flags do not show while a phase governs.
    const patched = await t.patch(`/editions/${e.uuid}`, { online: false, procedure: 'firstcome' });
    expect(patched.body).toMatchObject({ online: true, procedure: 'lot' });
  });

  it('takes a governing phase outside its period as closed, and the flags where no phase governs', async () => {
    const e = (await t.post('/editions', {
      name: 'Noch nicht',
      online: true,
      releaseParticipantLists: true,
      procedure: 'lot',
      tasks: [
        { type: 'show_offers', begin: at(3), end: at(20) },
        { type: 'publish_lists', begin: at(-20), end: at(-3) },
        { type: 'application_system', applicationSystem: 'firstcome', begin: at(5), end: at(10) },
        { type: 'holiday', begin: at(-1), end: at(1) },
      ],
    })).body;
    expect(e).toMatchObject({ online: false, releaseParticipantLists: false, procedure: 'firstcome' });
    const noPhases = await t.patch(`/editions/${e.uuid}`, { tasks: [{ type: 'holiday', begin: at(-1), end: at(1) }] });
    expect(noPhases.body).toMatchObject({ online: true, releaseParticipantLists: true, procedure: 'lot' });
  });

  it('has SQL forms for other resources that agree with effectiveEditionState', async () => {
    const u = await h.tenant();
    const scenarios: { name: string; online: boolean; releaseParticipantLists: boolean; procedure: 'firstcome' | 'lot'; tasks: { type: TaskType; begin: string | null; end: string | null; applicationSystem?: 'firstcome' | 'lot' | null }[] }[] = [
      { name: 's0', online: true, releaseParticipantLists: false, procedure: 'firstcome', tasks: [] },
      { name: 's1', online: false, releaseParticipantLists: true, procedure: 'lot', tasks: [{ type: 'holiday', begin: at(-1), end: at(1) }] },
      { name: 's2', online: false, releaseParticipantLists: false, procedure: 'firstcome', tasks: [{ type: 'show_offers', begin: at(-1), end: at(1) }, { type: 'publish_lists', begin: at(2), end: null }] },
      { name: 's3', online: true, releaseParticipantLists: true, procedure: 'firstcome', tasks: [{ type: 'show_offers', begin: at(1), end: at(2) }, { type: 'show_offers', begin: at(-5), end: at(-2) }, { type: 'publish_lists', begin: null, end: null }] },
      { name: 's4', online: true, releaseParticipantLists: false, procedure: 'firstcome', tasks: [{ type: 'application_system', applicationSystem: 'lot', begin: at(-30), end: at(-20) }, { type: 'application_system', applicationSystem: 'firstcome', begin: at(-3), end: at(-2) }] },
      { name: 's5', online: true, releaseParticipantLists: false, procedure: 'lot', tasks: [{ type: 'application_system', applicationSystem: 'firstcome', begin: at(3), end: at(4) }, { type: 'application_system', applicationSystem: 'lot', begin: at(2), end: at(6) }] },
      { name: 's6', online: true, releaseParticipantLists: false, procedure: 'firstcome', tasks: [{ type: 'application_system', applicationSystem: 'firstcome', begin: at(-10), end: at(10) }, { type: 'application_system', applicationSystem: 'lot', begin: at(-2), end: at(2) }] },
      { name: 's7', online: true, releaseParticipantLists: false, procedure: 'lot', tasks: [{ type: 'application_system', applicationSystem: null, begin: at(-2), end: at(2) }] },
      { name: 's8', online: true, releaseParticipantLists: false, procedure: 'firstcome', tasks: [{ type: 'application_system', applicationSystem: 'lot', begin: null, end: at(-1) }, { type: 'application_system', applicationSystem: 'firstcome', begin: at(1), end: null }] },
      { name: 's9', online: true, releaseParticipantLists: false, procedure: 'firstcome', tasks: [{ type: 'application_system', applicationSystem: 'lot', begin: at(-1), end: at(1) }, { type: 'application_system', applicationSystem: 'firstcome', begin: at(-1), end: at(1) }] },
    ];
    const uuids = new Map<string, string>();
    for (const s of scenarios) uuids.set(s.name, (await u.post('/editions', s)).body.uuid);
    const db = executorOf(h.orm);
    const schema = u.tenant.schema;
    for (const offset of [-40, -25, -10, -4, -2.5, -1.5, 0, 1.5, 2.5, 3.5, 5, 8, 40]) {
      const now = new Date(Date.now() + offset * 86_400_000);
      const rows = await sql<{ uuid: string; online: boolean; released: boolean; procedure: string }>`
        select e.uuid, ${editionOnlineSql(schema, 'e', now)} as online, ${editionListsReleasedSql(schema, 'e', now)} as released,
          ${editionProcedureSql(schema, 'e', now)} as procedure
        from ${qualified(schema, 'editions')} e`.execute(db);
      for (const s of scenarios) {
        const row = rows.rows.find((r) => r.uuid === uuids.get(s.name))!;
        const tasks: PhaseTask[] = s.tasks.map((x) => ({ type: x.type, begin: x.begin ? new Date(x.begin) : null, end: x.end ? new Date(x.end) : null, applicationSystem: x.applicationSystem ?? null }));
        const expected = effectiveEditionState({ online: s.online, releaseParticipantLists: s.releaseParticipantLists, procedure: s.procedure, tasks }, now);
        expect({ scenario: s.name, offset, online: row.online, releaseParticipantLists: row.released, procedure: row.procedure })
          .toEqual({ scenario: s.name, offset, ...expected });
      }
    }
    // Without a `now`, the statement's time: the same as the API shows.
    const live = await sql<{ uuid: string; online: boolean }>`
      select e.uuid, ${editionOnlineSql(schema)} as online from ${qualified(schema, 'editions')} e`.execute(db);
    const listed = (await u.get('/editions?itemsPerPage=50')).body;
    for (const r of live.rows) expect(r.online).toBe(listed.find((e) => e.uuid === r.uuid)!.online);
  });
});

describe('DELETE /editions/{uuid}', () => {
  it('deletes with its tasks, 204 without a body, then 404', async () => {
    const e = (await t.post('/editions', { name: 'Vergangen', tasks: [{ type: 'custom' }, { type: 'holiday' }] })).body;
    const del = await t.del(`/editions/${uuidToBase58(e.uuid)}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expectProblem(await t.get(`/editions/${e.uuid}`), 404);
    expectProblem(await t.del(`/editions/${e.uuid}`), 404);
    expectProblem(await t.del('/editions/nicht-da'), 404);
    const left = await sql<{ n: number }>`select count(*)::int as n from ${qualified(t.tenant.schema, 'edition_tasks')} where edition_uuid = ${e.uuid}`.execute(executorOf(h.orm));
    expect(left.rows[0].n).toBe(0);
    // The task UUIDs are free again.
    expect((await t.post('/editions', { name: 'Neu', tasks: [{ uuid: e.tasks[0].uuid, type: 'custom' }] })).body.tasks[0].uuid).toBe(e.tasks[0].uuid);
  });
});

describe('DELETE /editions/{uuid} with references', () => {
  it('answers 409 while other records refer to the edition', async () => {
    const u = await h.tenant();
    const e = (await u.post('/editions', { name: 'Mit Angeboten' })).body;
    const db = executorOf(h.orm);
    const refs = qualified(u.tenant.schema, 'test_edition_refs');
    await sql`create table ${refs} (edition_uuid uuid references ${qualified(u.tenant.schema, 'editions')} (uuid) on delete restrict)`.execute(db);
    await sql`insert into ${refs} values (${e.uuid})`.execute(db);
    expect(expectProblem(await u.del(`/editions/${e.uuid}`), 409).detail).toMatch(/refer/);
    expect((await u.get(`/editions/${e.uuid}`)).status).toBe(200);
    await sql`delete from ${refs}`.execute(db);
    expect((await u.del(`/editions/${e.uuid}`)).status).toBe(204);
  });
});

describe('access', () => {
  it('needs a token for everything', async () => {
    const e = (await t.post('/editions', { name: 'Privat' })).body;
    for (const res of [
      await t.get('/editions', { token: null }),
      await t.get(`/editions/${e.uuid}`, { token: null }),
      await t.post('/editions', { name: 'X' }, { token: null }),
      await t.patch(`/editions/${e.uuid}`, { name: 'X' }, { token: null }),
      await t.patch(`/editions/${e.uuid}`, {}, { token: null }),
      await t.del(`/editions/${e.uuid}`, { token: null }),
    ]) {
      expectProblem(res, 401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
  });

  it('lets admin and organiser tokens read, and only admin read-write tokens write', async () => {
    const e = (await t.post('/editions', { name: 'Zugriff' })).body;
    const read = await t.token({ access: 'read' });
    const organiser = await t.token({ role: 'organiser' });
    const legacy = await t.token({ access: 'legacy' });
    for (const token of [read, organiser]) {
      expect((await t.get('/editions', { token })).status).toBe(200);
      expect((await t.get(`/editions/${e.uuid}`, { token })).body).toEqual(e);
    }
    for (const token of [read, organiser, legacy]) {
      expectProblem(await t.post('/editions', { name: 'X' }, { token }), 403);
      expectProblem(await t.patch(`/editions/${e.uuid}`, { name: 'X' }, { token }), 403);
      expectProblem(await t.patch(`/editions/${e.uuid}`, {}, { token }), 403);
      expectProblem(await t.del(`/editions/${e.uuid}`, { token }), 403);
    }
    expectProblem(await t.get(`/editions/${e.uuid}`, { token: legacy }), 403);
    expect((await t.get(`/editions/${e.uuid}`)).body).toEqual(e);
  });
});
