import { PgBoss } from 'pg-boss';
import type { Config } from '../config.js';
import { executorOf, type Orm } from '../db/orm.js';
import type { Logger } from '../logging/logger.js';
import { createMailer } from '../mail/mailer.js';
import { dispatchOutbox } from '../mail/outbox.js';
import { loadTenants } from '../tenancy/registry.js';
import { createQueues, QUEUES, runTenantJob, type TenantJobData, type TenantJobHandlers } from './queue.js';

// D9: one pg-boss instance (its own schema) for all tenants, the tenant in each job's data. Queue names and
// options, the sender and the tenant-job runner are in queue.ts.
export { QUEUES };

export type Workers = { boss: PgBoss; stop: () => Promise<void> };

/**
 * Starts the worker role: the outbox sweep and dispatch, and a worker for every tenant job in `handlers`
 * (the app's are in src/jobs.ts; main.ts passes them, so this platform module imports no resource).
 */
export async function startWorkers(
  orm: Orm, config: Config, log: Logger, opts: { schedule: boolean; handlers?: TenantJobHandlers },
): Promise<Workers> {
  const connectionString = String(orm.config.get('clientUrl'));
  const boss = new PgBoss({ connectionString, schema: 'pgboss', max: 4 });
  // On SIGTERM the database may go away (embedded) before the queue has stopped; that is no error.
  let stopping = false;
  const markStopping = () => (stopping = true);
  process.once('SIGTERM', markStopping);
  process.once('SIGINT', markStopping);
  boss.on('error', (err) => {
    if (!stopping) log.error({ err }, 'job queue error');
  });
  await boss.start();
  await createQueues(boss);

  const mailer = createMailer({ smtpUrl: config.smtpUrl, dataDir: config.dataDir });
  const db = executorOf(orm);

  // Every minute: one job per tenant that has unsent mail (singleton per tenant).
  await boss.work(QUEUES.outboxSweep, async () => {
    for (const tenant of await loadTenants(db)) {
      await boss.send(QUEUES.outboxTenant, { tenant: tenant.slug }, { singletonKey: tenant.slug });
    }
  });
  await boss.work<{ tenant: string }>(QUEUES.outboxTenant, async ([job]) => {
    const tenant = (await loadTenants(db)).find((t) => t.slug === job.data.tenant);
    if (!tenant) return;
    const result = await dispatchOutbox(db, tenant, mailer);
    if (result.sent || result.failed) log.info({ tenant: tenant.slug, ...result }, 'outbox dispatched');
  });
  await workTenantJobs(boss, orm, log, opts.handlers ?? {});
  if (opts.schedule) await boss.schedule(QUEUES.outboxSweep, '* * * * *');

  return {
    boss,
    stop: async () => {
      stopping = true;
      process.off('SIGTERM', markStopping);
      process.off('SIGINT', markStopping);
      await boss.stop({ graceful: true, timeout: 10_000 } as never);
      mailer.close();
    },
  };
}

/** Registers a pg-boss worker per tenant job: each job runs through `runTenantJob` (tenant from its data). */
export async function workTenantJobs(boss: PgBoss, orm: Orm, log: Logger, handlers: TenantJobHandlers): Promise<void> {
  for (const [name, handler] of Object.entries(handlers)) {
    if (!handler) continue;
    await boss.work<TenantJobData>(name, async ([job]) => {
      await runTenantJob(orm, log, handler, job.data);
    });
  }
}
