import { PgBoss } from 'pg-boss';
import type { Config } from '../config.js';
import { executorOf, type Orm } from '../db/orm.js';
import type { Logger } from '../logging/logger.js';
import { createMailer } from '../mail/mailer.js';
import { dispatchOutbox } from '../mail/outbox.js';
import { loadTenants } from '../tenancy/registry.js';

// D9: one pg-boss instance (its own schema) for all tenants, the tenant in each job's data.
export const QUEUES = { outboxSweep: 'outbox-sweep', outboxTenant: 'outbox-tenant' } as const;

export type Workers = { boss: PgBoss; stop: () => Promise<void> };

export async function startWorkers(orm: Orm, config: Config, log: Logger, opts: { schedule: boolean }): Promise<Workers> {
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
  for (const name of Object.values(QUEUES)) await boss.createQueue(name);

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
