import { PgBoss } from 'pg-boss';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { useHarness } from '../../harness/harness.js';
import { tenantJobHandlers } from '../../../src/jobs.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import { createQueues, QUEUES } from '../../../src/platform/jobs/queue.js';
import { RETENTION_CRON, scheduleRetention, sendRetentionJobs, workRetentionSweep } from '../../../src/platform/jobs/retention-sweep.js';
import { workTenantJobs } from '../../../src/platform/jobs/workers.js';
import { createLogger } from '../../../src/platform/logging/logger.js';
import { apply, createParticipant, offerEndedWeeksAgo, participantRow } from './helpers.js';

// The retention job (D9) through REAL pg-boss on this run's database: a worker registered as the worker role
// registers it (`workTenantJobs` with the app's `tenantJobHandlers`), the daily sweep that sends one job per
// tenant, and its schedule. Each pg-boss instance here has a schema of its own, so jobs of other test files
// (and their workers) never meet ours.

const silent = createLogger('silent');
const bosses: PgBoss[] = [];

async function startBoss(schema: string): Promise<PgBoss> {
  const boss = new PgBoss({ connectionString: inject('databaseUrl'), schema, max: 3, supervise: true, schedule: false });
  boss.on('error', () => {});
  await boss.start();
  await createQueues(boss);
  bosses.push(boss);
  return boss;
}

async function waitForState(boss: PgBoss, queue: string, id: string, states: string[], ms = 60_000): Promise<string> {
  const until = Date.now() + ms;
  for (;;) {
    const [job] = await boss.findJobs(queue, { id });
    if (job && states.includes(job.state)) return job.state;
    if (Date.now() > until) throw new Error(`job ${id} on ${queue} is ${job?.state ?? 'missing'} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const { h, t } = useHarness();
afterAll(async () => {
  for (const boss of bosses) await boss.stop({ graceful: false, timeout: 5_000 } as never);
});

describe('the retention job on pg-boss', () => {
  it('a worker runs the tenant\'s retention job to completion; a second job finds nothing', async () => {
    const offer = await offerEndedWeeksAgo(t, 13);
    const due = await createParticipant(t);
    await apply(t, offer.uuid, due.uuid);
    const recent = await offerEndedWeeksAgo(t, 11);
    const living = await createParticipant(t);
    await apply(t, recent.uuid, living.uuid);

    // Idempotency keys whose token never came back: the stored answers (which can hold a child's data) go after
    // their 24 hours; a fresh one stays.
    const keys = qualified(t.tenant.schema, 'idempotency_keys');
    for (const key of ['expired-key', 'fresh-key']) {
      expect((await t.post('/categories', { name: key }, { headers: { 'idempotency-key': key } })).status).toBe(201);
    }
    await sql`update ${keys} set created_at = now() - interval '25 hours' where key = 'expired-key'`.execute(executorOf(h.orm));

    const boss = await startBoss(`pgboss_rt_${process.pid}`);
    await workTenantJobs(boss, h.orm, silent, { [QUEUES.retention]: tenantJobHandlers[QUEUES.retention] });
    const id = await boss.send(QUEUES.retention, { tenant: t.slug }, { singletonKey: t.slug });
    expect(id).not.toBeNull();
    expect(await waitForState(boss, QUEUES.retention, id!, ['completed', 'failed'])).toBe('completed');
    expect((await participantRow(h, t, due.uuid)).pseudonymised_at).not.toBeNull();
    expect((await participantRow(h, t, living.uuid)).pseudonymised_at).toBeNull();
    const attendance = (await t.get(`/attendances?participant=${due.uuid}`)).body[0];
    expect(attendance.participant).toBeUndefined();
    expect(attendance.participantPseudonym).toMatch(/^P-/);
    const left = await sql<{ key: string }>`select key from ${keys} order by key`.execute(executorOf(h.orm));
    expect(left.rows.map((r) => r.key)).toEqual(['fresh-key']);

    const again = await boss.send(QUEUES.retention, { tenant: t.slug }, { singletonKey: t.slug });
    expect(await waitForState(boss, QUEUES.retention, again!, ['completed', 'failed'])).toBe('completed');
    expect((await participantRow(h, t, living.uuid)).pseudonymised_at).toBeNull();

    // A job for a tenant removed meanwhile is dropped, not retried for ever.
    const gone = await boss.send(QUEUES.retention, { tenant: 'removed-tenant' }, { singletonKey: 'removed-tenant' });
    expect(await waitForState(boss, QUEUES.retention, gone!, ['completed', 'failed'])).toBe('completed');
  }, 120_000);

  it('the queue keeps at most one run per tenant queued or active (exclusive, singletonKey = slug)', async () => {
    const boss = await startBoss(`pgboss_rt_x_${process.pid}`);
    const first = await boss.send(QUEUES.retention, { tenant: t.slug }, { singletonKey: t.slug });
    const second = await boss.send(QUEUES.retention, { tenant: t.slug }, { singletonKey: t.slug });
    const other = await boss.send(QUEUES.retention, { tenant: 'other' }, { singletonKey: 'other' });
    expect(first).not.toBeNull();
    expect(second).toBeNull();
    expect(other).not.toBeNull();
  }, 60_000);
});

describe('the daily sweep', () => {
  it('its worker sends one retention job per tenant; a second sweep adds none while they are queued', async () => {
    const boss = await startBoss(`pgboss_rt_sweep_${process.pid}`);
    await workRetentionSweep(boss, executorOf(h.orm), silent);
    const sweep = await boss.send(QUEUES.retentionSweep, {});
    expect(await waitForState(boss, QUEUES.retentionSweep, sweep!, ['completed', 'failed'])).toBe('completed');
    const ours = await boss.findJobs<{ tenant: string }>(QUEUES.retention, { key: t.slug });
    expect(ours).toHaveLength(1);
    expect(ours[0].data).toEqual({ tenant: t.slug });
    expect(ours[0].state).toBe('created');
    await sendRetentionJobs(boss, executorOf(h.orm));
    expect(await boss.findJobs(QUEUES.retention, { key: t.slug })).toHaveLength(1);
  }, 60_000);

  it('is scheduled daily at 03:15 Berlin time, once however often it is scheduled', async () => {
    const boss = await startBoss(`pgboss_rt_cron_${process.pid}`);
    await scheduleRetention(boss);
    await scheduleRetention(boss);
    const schedules = await boss.getSchedules(QUEUES.retentionSweep);
    expect(schedules).toHaveLength(1);
    expect(schedules[0].cron).toBe(RETENTION_CRON);
    expect(schedules[0].timezone).toBe('Europe/Berlin');
  }, 60_000);
});
