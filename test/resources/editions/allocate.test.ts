import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { expectProblem, useHarness, type TestTenant, type Schema } from '../../harness/harness.js';
import { uuidToBase58 } from '../../../src/platform/http/ids.js';
import { createQueues, pgBossSender, QUEUES, type JobSender } from '../../../src/platform/jobs/queue.js';
import { dbOf } from '../../../src/platform/context.js';
import { workTenantJobs } from '../../../src/platform/jobs/workers.js';
import { createLogger } from '../../../src/platform/logging/logger.js';
import { tenantJobHandlers } from '../../../src/jobs.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import {
  allocate, allocateNow, applicationsOf, applyLot, createOffer, createParticipant, drawPosition, getEdition, july, list, lot, offerOn,
} from './lot-helpers.js';
import { firstcome } from '../attendances/helpers.js';

// POST /editions/{uuid}/allocate (D7, D10 "Lot and commit"): a fair lottery over the edition's waiting
// applications, run in the background (the harness holds the job until `h.jobs.drain()`; the last block runs
// it through a real pg-boss worker).

const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+0[12]:00$/;

const { h, t } = useHarness();

/** `n` children applying for `offer` in order; returns the participants. */
async function applicants(u: TestTenant, offer: string, n: number, userPriority?: number): Promise<Schema<'Participant'>[]> {
  const out: Schema<'Participant'>[] = [];
  for (let i = 0; i < n; i++) {
    const p = await createParticipant(u, { firstname: `Kind${i}` });
    await applyLot(u, offer, p.uuid, userPriority);
    out.push(p);
  }
  return out;
}

describe('POST /editions/{uuid}/allocate', () => {
  it('answers 202 with the edition as it is now, and the background job draws every waiting application', async () => {
    const edition = await lot(t);
    const offer = await offerOn(t, edition.uuid, 1, 2);
    await applicants(t, offer.uuid, 5);

    // No body and no content type (D10: an action whose body is optional).
    const res = await t.request('POST', `/editions/${edition.uuid}/allocate`);
    expect(res.status, res.text).toBe(202);
    expect(res.body).toMatchObject({ uuid: edition.uuid, procedure: 'lot' });
    // The run is recorded at once; it has no finishedAt until the job drew it.
    expect(res.body.allocations).toEqual([
      { uuid: expect.any(String), seed: expect.any(Number), startedAt: expect.stringMatching(TS), confirmed: 0, waitlisted: 0, unfulfilled: 0 },
    ]);
    expect(Number.isInteger(res.body.allocations[0].seed)).toBe(true);
    expect(h.jobs.pending()).toEqual([
      { name: QUEUES.editionAllocate, data: { tenant: t.slug, edition: edition.uuid, allocation: res.body.allocations[0].uuid } },
    ]);
    // Nothing decided yet.
    expect((await list(t, offer.uuid)).every((a) => a.status === 'waiting')).toBe(true);

    expect(await h.jobs.drain()).toBe(1);
    const after = await getEdition(t, edition.uuid);
    expect(after.allocations).toEqual([{
      ...res.body.allocations[0], finishedAt: expect.stringMatching(TS), confirmed: 2, waitlisted: 3, unfulfilled: 0,
    }]);
    const apps = await list(t, offer.uuid);
    expect(apps.map((a) => a.status)).toEqual(['confirmed', 'confirmed', 'waitlisted', 'waitlisted', 'waitlisted']);
    // Every decision is held back with a reason; nothing is due, no family told.
    for (const a of apps) {
      expect(a.heldBack).toBe(true);
      expect(a.payable).toBe(false);
      expect(a.decisionReason).toMatch(/^Losverfahren: .*\(Runde 1, Ziehung \d+\)$/);
    }
    expect(apps.filter((a) => a.status === 'confirmed').every((a) => a.confirmedAt)).toBe(true);
    // The list is renumbered, and the waiting list follows the draw.
    expect(apps.map((a) => a.sorting)).toEqual([1, 2, 3, 4, 5]);
    const waitlistDraws = apps.filter((a) => a.status === 'waitlisted').map((a) => drawPosition(a.decisionReason!));
    expect(waitlistDraws).toEqual([...waitlistDraws].sort((x, y) => x - y));
    // Running the job again changes nothing (idempotent: the run is finished).
    await h.jobs.send(QUEUES.editionAllocate, { tenant: t.slug, edition: edition.uuid, allocation: after.allocations[0].uuid });
    await h.jobs.drain();
    expect(await list(t, offer.uuid)).toEqual(apps);
    expect((await getEdition(t, edition.uuid)).allocations).toEqual(after.allocations);
  });

  it('accepts the base58 form of the edition and records the seed sent', async () => {
    const edition = await lot(t);
    const res = await t.post(`/editions/${uuidToBase58(edition.uuid)}/allocate`, { seed: 2 ** 40 + 7, waitlist: true });
    expect(res.status, res.text).toBe(202);
    expect(res.body.allocations[0].seed).toBe(2 ** 40 + 7);
    await h.jobs.drain();
    expect((await getEdition(t, edition.uuid)).allocations[0]).toMatchObject({ seed: 2 ** 40 + 7, confirmed: 0, waitlisted: 0, unfulfilled: 0, finishedAt: expect.stringMatching(TS) });
  });

  it('respects capacity, counting places already taken', async () => {
    const edition = await lot(t);
    const offer = await offerOn(t, edition.uuid, 2, 3);
    const holder = await createParticipant(t);
    const held = await t.post('/attendances', { offer: offer.uuid, participant: holder.uuid, status: 'confirmed' });
    expect(held.status).toBe(201);
    const unlimited = await offerOn(t, edition.uuid, 3, null);
    await applicants(t, offer.uuid, 4);
    await applicants(t, unlimited.uuid, 3);
    const after = await allocateNow(h, t, edition.uuid, { seed: 5 });
    expect(after.allocations[0]).toMatchObject({ confirmed: 2 + 3, waitlisted: 2, unfulfilled: 0 });
    const limited = await list(t, offer.uuid);
    expect(limited.filter((a) => a.status === 'confirmed')).toHaveLength(3);
    // The earlier place keeps its position and is not held back; the new ones follow.
    expect(limited[0]).toMatchObject({ uuid: held.body.uuid, sorting: 1, heldBack: false });
    expect((await list(t, unlimited.uuid)).every((a) => a.status === 'confirmed' && a.heldBack)).toBe(true);
  });

  it('serves priority 1 before priority 2 and unprioritised applications, whatever the seed', async () => {
    for (const seed of [1, 2, 3]) {
      const edition = await lot(t);
      const offer = await offerOn(t, edition.uuid, 4, 1);
      const [second] = await applicants(t, offer.uuid, 1, 2);
      const [none] = await applicants(t, offer.uuid, 1);
      const [first] = await applicants(t, offer.uuid, 1, 1);
      await allocateNow(h, t, edition.uuid, { seed });
      const byChild = Object.fromEntries((await list(t, offer.uuid)).map((a) => [a.participant!.uuid, a]));
      expect(byChild[first.uuid].status).toBe('confirmed');
      expect(byChild[second.uuid].status).toBe('waitlisted');
      expect(byChild[none.uuid].status).toBe('waitlisted');
      // Waiting list in draw order: round 2 before the unprioritised round.
      expect(byChild[second.uuid].sorting).toBeLessThan(byChild[none.uuid].sorting!);
      expect(byChild[first.uuid].decisionReason).toContain('Runde 1');
    }
  });

  it('gives a child without a place yet precedence in a later round', async () => {
    const edition = await lot(t);
    const x = await offerOn(t, edition.uuid, 5, 1);
    const y = await offerOn(t, edition.uuid, 6, 1);
    const lucky = await createParticipant(t, { firstname: 'Lucky' });
    const other = await createParticipant(t, { firstname: 'Other' });
    await applyLot(t, x.uuid, lucky.uuid, 1);
    await applyLot(t, y.uuid, lucky.uuid, 2);
    await applyLot(t, y.uuid, other.uuid, 2);
    await allocateNow(h, t, edition.uuid, { seed: 11 });
    const ys = Object.fromEntries((await list(t, y.uuid)).map((a) => [a.participant!.uuid, a.status]));
    expect(ys).toEqual({ [other.uuid]: 'confirmed', [lucky.uuid]: 'waitlisted' });
  });

  it('makes those without a place unfulfilled with waitlist false', async () => {
    const edition = await lot(t);
    const offer = await offerOn(t, edition.uuid, 7, 1);
    await applicants(t, offer.uuid, 3);
    const after = await allocateNow(h, t, edition.uuid, { waitlist: false });
    expect(after.allocations[0]).toMatchObject({ confirmed: 1, waitlisted: 0, unfulfilled: 2 });
    const apps = await list(t, offer.uuid);
    expect(apps.map((a) => a.status)).toEqual(['confirmed', 'unfulfilled', 'unfulfilled']);
    expect(apps[1].decisionReason).toMatch(/^Losverfahren: kein Platz frei \(/);
    expect(apps.every((a) => a.heldBack)).toBe(true);
  });

  it('makes children outside the age limits or with overlapping places unfulfilled, also places in other editions', async () => {
    const other = await firstcome(t);
    const elsewhere = await offerOn(t, other.uuid, 8, 10);
    const edition = await lot(t);
    const clash = await offerOn(t, edition.uuid, 8, 10); // same time as `elsewhere`
    const teens = await offerOn(t, edition.uuid, 9, 10, { minAge: 14, maxAge: 17 });
    const busy = await createParticipant(t, { firstname: 'Busy' });
    const t1 = await t.post('/attendances', { offer: elsewhere.uuid, participant: busy.uuid });
    expect(t1.body.status).toBe('confirmed');
    const young = await createParticipant(t, { firstname: 'Young', dateOfBirth: '2016-05-23' }); // 11 on 9 July 2027
    const teen = await createParticipant(t, { firstname: 'Teen', dateOfBirth: '2012-07-09' }); // 15 on 9 July 2027
    await applyLot(t, clash.uuid, busy.uuid);
    await applyLot(t, teens.uuid, young.uuid);
    await applyLot(t, teens.uuid, teen.uuid);
    const after = await allocateNow(h, t, edition.uuid, { seed: 3 });
    expect(after.allocations[0]).toMatchObject({ confirmed: 1, waitlisted: 0, unfulfilled: 2 });
    const [c] = await list(t, clash.uuid);
    expect(c).toMatchObject({ status: 'unfulfilled', heldBack: true });
    expect(c.decisionReason).toContain('überschneiden');
    const byChild = Object.fromEntries((await list(t, teens.uuid)).map((a) => [a.participant!.uuid, a]));
    expect(byChild[teen.uuid].status).toBe('confirmed');
    expect(byChild[young.uuid]).toMatchObject({ status: 'unfulfilled', heldBack: true });
    expect(byChild[young.uuid].decisionReason).toMatch(/Alter 11 außerhalb der Altersgrenzen 14–17/);
  });

  it('a second run draws only the applications still waiting; earlier decisions and places stay', async () => {
    const edition = await lot(t);
    const offer = await offerOn(t, edition.uuid, 10, 3);
    await applicants(t, offer.uuid, 2);
    const first = await allocateNow(h, t, edition.uuid, { seed: 9 });
    expect(first.allocations[0]).toMatchObject({ confirmed: 2, waitlisted: 0 });
    const before = await list(t, offer.uuid);

    const late = await applicants(t, offer.uuid, 3);
    const second = await allocateNow(h, t, edition.uuid, { seed: 9 });
    expect(second.allocations).toHaveLength(2);
    expect(second.allocations[0]).toEqual(first.allocations[0]);
    // One place was left: one of the three late ones gets it.
    expect(second.allocations[1]).toMatchObject({ confirmed: 1, waitlisted: 2, unfulfilled: 0, finishedAt: expect.stringMatching(TS) });
    const apps = await list(t, offer.uuid);
    for (const b of before) {
      expect(apps.find((a) => a.uuid === b.uuid)).toMatchObject({ status: b.status, decisionReason: b.decisionReason, sorting: b.sorting });
    }
    const lateIds = new Set(late.map((p) => p.uuid));
    expect(apps.filter((a) => lateIds.has(a.participant!.uuid)).map((a) => a.status).sort()).toEqual(['confirmed', 'waitlisted', 'waitlisted']);
    // A third run finds nothing waiting.
    const third = await allocateNow(h, t, edition.uuid);
    expect(third.allocations[2]).toMatchObject({ confirmed: 0, waitlisted: 0, unfulfilled: 0 });
  });

  it('draws by seed and creation order only: the same scenario in two tenants and in a second edition gives the same winners', async () => {
    const u = await h.tenant();
    /** One scenario: 8 children apply for two offers of 3 places (some for both), priorities mixed. */
    async function scenario(w: TestTenant) {
      const edition = await lot(w);
      const a = await offerOn(w, edition.uuid, 11, 3);
      const b = await offerOn(w, edition.uuid, 12, 3);
      const children: string[] = [];
      for (let i = 0; i < 8; i++) children.push((await createParticipant(w, { firstname: `K${i}` })).uuid);
      for (let i = 0; i < 8; i++) {
        await applyLot(w, a.uuid, children[i], i % 3 === 0 ? 2 : 1);
        if (i % 2 === 0) await applyLot(w, b.uuid, children[i], 1);
      }
      return { edition, a, b, children };
    }
    async function outcome(w: TestTenant, s: Awaited<ReturnType<typeof scenario>>, seed: number) {
      await allocateNow(h, w, s.edition.uuid, { seed });
      const index = (p: string) => s.children.indexOf(p);
      const of = async (offer: string) => (await list(w, offer)).map((x) => [index(x.participant!.uuid), x.status, x.sorting]);
      return { a: await of(s.a.uuid), b: await of(s.b.uuid) };
    }
    const inT = await scenario(t);
    const inU = await scenario(u);
    const again = await scenario(t); // a second, identical edition of the same tenant
    const r1 = await outcome(t, inT, 424242);
    expect(await outcome(u, inU, 424242)).toEqual(r1);
    expect(await outcome(t, again, 424242)).toEqual(r1);
    expect(r1.a.filter(([, s]) => s === 'confirmed')).toHaveLength(3);
  });
});

describe('allocate while applications change (issue 10: the offers are locked only for the writes)', () => {
  it('reads and draws without the offers\' lock; a change committed before the lock is taken makes it draw again', async () => {
    const edition = await lot(t, { name: 'Wettlauf' });
    const offer = await offerOn(t, edition.uuid, 12, 1);
    const [first, second] = await applicants(t, offer.uuid, 2);
    const firstApp = (await list(t, offer.uuid)).find((a) => a.participant!.uuid === first.uuid);
    // A writer (as every participant-list writer does) holds the offer's lock and withdraws the first
    // application, not yet committed: the job reads both as waiting, draws, then waits for the lock.
    const writer = new pg.Client({ connectionString: String(h.orm.config.get('clientUrl')) });
    await writer.connect();
    try {
      const q = (name: string) => `"${t.tenant.schema}"."${name}"`;
      await writer.query('begin');
      await writer.query(`select uuid from ${q('offers')} where uuid = $1 for no key update`, [offer.uuid]);
      await writer.query(`update ${q('attendances')} set status = 'withdrawn', modified_at = now() where uuid = $1`, [firstApp!.uuid]);
      await allocate(t, edition.uuid, { seed: 5 });
      const job = h.jobs.drain();
      // The job has read and drawn and now waits for the offer's lock.
      const db = executorOf(h.orm);
      for (let i = 0; ; i++) {
        const waiting = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock' and query like '%for no key update of "o"%'`.execute(db);
        if (waiting.rows[0]!.n > 0) break;
        if (i > 400) throw new Error('the job never waited for the offers\' lock');
        await new Promise((r) => setTimeout(r, 25));
      }
      await writer.query('commit');
      await job;
    } finally {
      await writer.end();
    }
    // Drawn again under the lock: the only waiting application gets the place (the first draw may have given
    // it to the withdrawn one, which is no longer waiting).
    const rows = await list(t, offer.uuid);
    expect(rows.find((a) => a.participant!.uuid === second.uuid)).toMatchObject({ status: 'confirmed', heldBack: true });
    expect(rows.find((a) => a.participant!.uuid === first.uuid)).toMatchObject({ status: 'withdrawn', heldBack: false });
    expect((await getEdition(t, edition.uuid)).allocations.at(-1)).toMatchObject({ confirmed: 1, waitlisted: 0, unfulfilled: 0 });
  });
});

describe('allocate: refusals', () => {
  it('409 on a first-come-first-served edition (also when a running phase says so), nothing recorded', async () => {
    const edition = await firstcome(t);
    const p = expectProblem(await t.post(`/editions/${edition.uuid}/allocate`, {}), 409);
    expect(p.detail).toMatch(/first come first served/);
    // A lot edition whose running application phase is first come first served.
    const now = Date.now();
    const phased = await lot(t, {
      tasks: [{ type: 'application_system', applicationSystem: 'firstcome', begin: new Date(now - 86_400_000).toISOString(), end: new Date(now + 86_400_000).toISOString() }],
    });
    expectProblem(await t.post(`/editions/${phased.uuid}/allocate`), 409);
    expect(h.jobs.pending()).toEqual([]);
    expect((await getEdition(t, edition.uuid)).allocations).toEqual([]);
  });

  it('404 for an unknown or malformed edition', async () => {
    expectProblem(await t.post('/editions/0b7a4c38-5d6e-4f1a-9b2c-3d4e5f6a7b8c/allocate', {}), 404);
    expectProblem(await t.post('/editions/not-an-id/allocate', {}), 404);
  });

  it('403 for organisers and read-only tokens', async () => {
    const edition = await lot(t);
    const org = await t.token({ role: 'organiser' });
    expectProblem(await t.post(`/editions/${edition.uuid}/allocate`, {}, { token: org }), 403);
    expectProblem(await t.post(`/editions/${edition.uuid}/allocate`, {}, { token: await t.token({ access: 'read' }) }), 403);
    expect(h.jobs.pending()).toEqual([]);
  });

  it('422 for a seed that is not an integer or a waitlist that is not a boolean', async () => {
    const edition = await lot(t);
    for (const body of [{ seed: 1.5 }, { seed: '7' }, { waitlist: 'no' }]) {
      const p = expectProblem(await t.post(`/editions/${edition.uuid}/allocate`, body), 422);
      expect(p.violations?.[0].propertyPath).toBe(Object.keys(body)[0]);
    }
    expect(h.jobs.pending()).toEqual([]);
  });
});

describe('allocate through a real pg-boss worker', () => {
  let boss: PgBoss;
  let sender: JobSender;

  const { h: hb } = useHarness({
    jobs: async (orm) => {
      boss = new PgBoss({ connectionString: String(orm.config.get('clientUrl')), schema: 'pgboss', max: 2, supervise: false, schedule: false });
      await boss.start();
      await createQueues(boss);
      // Only the lot's queues: this worker must not take other test files' outbox jobs.
      await workTenantJobs(boss, orm, createLogger('silent'), tenantJobHandlers);
      sender = pgBossSender(boss);
      return sender;
    },
    tenant: false,
  });
  afterAll(() => boss?.stop({ graceful: true, timeout: 5_000 } as never));

  it('a job sent in a transaction that rolls back does not exist', async () => {
    const w = await hb.tenant();
    const marker = `rollback-${Date.now()}`;
    await expect(hb.orm.em.fork({ schema: w.tenant.schema }).transactional(async (em) => {
      await sender.send(QUEUES.editionAllocate, { tenant: w.slug, edition: marker, allocation: marker }, { db: dbOf(em) });
      throw new Error('roll back');
    })).rejects.toThrow('roll back');
    const jobs = await sql<{ n: number }>`select count(*)::int as n from pgboss.job where data->>'edition' = ${marker}`.execute(executorOf(hb.orm));
    expect(jobs.rows[0].n).toBe(0);
  });

  it('enqueues in the request’s transaction and the worker finishes the run in the background', async () => {
    const w = await hb.tenant();
    const edition = await lot(w);
    const offer = await createOffer(w, { edition: edition.uuid, maxParticipants: 1, dates: july(20) });
    for (let i = 0; i < 3; i++) await applyLot(w, offer.uuid, (await createParticipant(w)).uuid);
    const accepted = await allocate(w, edition.uuid, { seed: 77 });
    expect(accepted.allocations[0]).not.toHaveProperty('finishedAt');
    const jobs = await sql<{ n: number }>`select count(*)::int as n from pgboss.job where name = ${QUEUES.editionAllocate}
      and data->>'allocation' = ${accepted.allocations[0].uuid}`.execute(executorOf(hb.orm));
    expect(jobs.rows[0].n).toBe(1);
    let edition2 = accepted;
    const deadline = Date.now() + 20_000;
    while (!edition2.allocations[0].finishedAt && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      edition2 = await getEdition(w, edition.uuid);
    }
    expect(edition2.allocations[0]).toMatchObject({ seed: 77, confirmed: 1, waitlisted: 2, finishedAt: expect.stringMatching(TS) });
    expect((await applicationsOf(w, edition.uuid)).every((a) => a.heldBack)).toBe(true);
    const runs = await sql<{ n: number }>`select count(*)::int as n from ${qualified(w.tenant.schema, 'edition_allocations')}`.execute(executorOf(hb.orm));
    expect(runs.rows[0].n).toBe(1);
  });
});
