import { BERLIN } from '../../domain/berlin-time.js';
import type { PgBoss } from 'pg-boss';
import type { Executor } from '../db/sql.js';
import type { Logger } from '../logging/logger.js';
import { activeTenants } from '../tenancy/registry.js';
import { QUEUES } from './queue.js';

// D9: retention runs daily per tenant. The schedule fires one `retention-sweep` job a day (pg-boss keeps one
// schedule however many workers call `scheduleRetention`); its handler sends one `retention` job per tenant, with
// the tenant's slug as singletonKey: the `retention` queue's `exclusive` policy then keeps at most one run per
// tenant queued or active, so a sweep repeated while runs are under way adds nothing. The `retention` jobs
// themselves are tenant jobs (src/jobs.ts), worked like every other by `workTenantJobs`.

/** Every day at 03:15 Berlin time, a quiet hour for the municipalities. */
export const RETENTION_CRON = '15 3 * * *';

/** Sends one `retention` job per registered tenant (a suspended one's waits for the day after its resumption); returns how many were queued (a tenant with one pending: none). */
export async function sendRetentionJobs(boss: PgBoss, db: Executor): Promise<number> {
  let queued = 0;
  for (const tenant of await activeTenants(db)) {
    const id = await boss.send(QUEUES.retention, { tenant: tenant.slug }, { singletonKey: tenant.slug });
    if (id !== null) queued++;
  }
  return queued;
}

/** The worker of the `retention-sweep` queue. */
export async function workRetentionSweep(boss: PgBoss, db: Executor, log: Logger): Promise<void> {
  await boss.work(QUEUES.retentionSweep, async () => {
    const queued = await sendRetentionJobs(boss, db);
    log.info({ queued }, 'retention jobs queued');
  });
}

/** The daily schedule of the sweep (idempotent: pg-boss keeps one schedule per queue name). */
export async function scheduleRetention(boss: PgBoss): Promise<void> {
  await boss.schedule(QUEUES.retentionSweep, RETENTION_CRON, {}, { tz: BERLIN });
}
