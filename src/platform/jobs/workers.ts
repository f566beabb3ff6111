import { PgBoss, type JobWithMetadata } from 'pg-boss';
import { readConfig, type Config } from '../config.js';
import { executorOf, type Orm } from '../db/orm.js';
import type { Logger } from '../logging/logger.js';
import { createMailer, type Mailer } from '../mail/mailer.js';
import { dispatchOutbox, tenantsWithDueMail, type DispatchOptions } from '../mail/outbox.js';
import { activeTenants } from '../tenancy/registry.js';
import { scheduleRetention, workRetentionSweep } from './retention-sweep.js';
import {
  bossErrorHandler, bossOptions, pgBossSender, retireOldQueues, QUEUES, runTenantJob, startBoss, SUSPENDED_JOB_DELAY_SECONDS,
  type JobSender, type QueueName, type TenantJobData, type TenantJobHandler, type TenantJobHandlers,
} from './queue.js';
import type { Executor } from '../db/sql.js';
import { placesOf } from '../db/bulkhead.js';
import { tenantPoolShare } from '../db/pool-guard.js';
import type { Tenant } from '../tenancy/tenant.js';
import { coalescingSender } from './coalescing.js';

// D9: one pg-boss instance (its own schema) for all tenants, the tenant in each job's data. Queue names and
// options, the sender and the tenant-job runner are in queue.ts.
export { QUEUES };

export type Workers = { boss: PgBoss; sender: JobSender; stop: () => Promise<void> };

export type WorkerOptions = {
  schedule: boolean;
  handlers?: TenantJobHandlers;
  /** Outbox dispatch settings (tests shorten the retry policy). */
  mail?: DispatchOptions;
  /** Safety nets of tenant jobs (src/jobs.ts `tenantJobSweeps`), like the mail sweep. */
  sweeps?: TenantSweeps;
};

/**
 * A safety net of a tenant job: every minute `queue` runs `due` (one query over the registry's schemas) and
 * sends a `sends` job for each tenant it names, for work written where no job queue was at hand.
 */
export type TenantSweeps = { queue: QueueName; sends: QueueName; due: (db: Executor, tenants: Tenant[]) => Promise<string[]> }[];

/**
 * The `mail-send` job: sends the tenant's due mails; when some wait for a retry (or the time budget ran out),
 * the job asks to run again when the first of them is due. The retry has its own singleton key, so a retry
 * waiting for an hour never swallows the send job of a fresh mail.
 */
export function mailSendHandler(mailer: Mailer, opts: DispatchOptions = {}): TenantJobHandler {
  // A claimed mail belongs to its worker for this long; a worker that died gives it back when it runs out.
  const leaseSeconds = readConfig().mailLeaseSeconds;
  return async (ctx) => {
    const result = await dispatchOutbox(executorOf(ctx.em), ctx.tenant, mailer, { log: ctx.log, leaseSeconds, ...opts });
    if (result.sent || result.failed || result.gaveUp) ctx.log.info({ sent: result.sent, failed: result.failed, gaveUp: result.gaveUp }, 'outbox dispatched');
    if (result.nextDueAt && ctx.jobs) {
      await ctx.jobs.send(QUEUES.mailSend, { tenant: ctx.tenant.slug }, { singletonKey: `${ctx.tenant.slug}:retry`, startAfter: result.nextDueAt });
    }
  };
}

/**
 * `PG_LISTEN_NOTIFY=on` wakes workers the moment a job is written. Off by default: it needs a session of its
 * own, which a transaction pooler does not keep; the workers' 1 s poll keeps mail within seconds anyway.
 */
function listenNotify(): boolean {
  return readConfig().pgListenNotify;
}

/**
 * Starts the worker role: the outbox (send jobs and the sweep that is their safety net) and a worker for
 * every tenant job in `handlers` (the app's are in src/jobs.ts; main.ts passes them, so this platform
 * module imports no resource).
 */
export async function startWorkers(orm: Orm, config: Config, log: Logger, opts: WorkerOptions): Promise<Workers> {
  const boss = new PgBoss(bossOptions(orm, {
    max: 6,
    useListenNotify: listenNotify(),
    // A job whose worker died stops beating; these loops fail it (and so retry it) within seconds.
    superviseIntervalSeconds: 10, monitorIntervalSeconds: 10,
  }));
  // On SIGTERM the database may go away (embedded) before the queue has stopped; that is no error.
  let stopping = false;
  const markStopping = () => (stopping = true);
  process.once('SIGTERM', markStopping);
  process.once('SIGINT', markStopping);
  process.once('SIGHUP', markStopping);
  boss.on('error', bossErrorHandler(log, () => stopping));
  await startBoss(boss, log);
  await retireOldQueues(boss);
  const sender = coalescingSender(pgBossSender(boss), log);

  const mailer = createMailer({ smtpUrl: config.smtpUrl, dataDir: config.dataDir, maxConnections: opts.mail?.concurrency ?? 8 });
  const db = executorOf(orm);

  // The safety net: one query over the registry's schemas, and a send job only for tenants with due mail.
  await boss.work(QUEUES.mailSweep, async () => {
    for (const slug of await tenantsWithDueMail(db, await activeTenants(db))) {
      await sender.send(QUEUES.mailSend, { tenant: slug }, { singletonKey: slug });
    }
  });
  const handlers: TenantJobHandlers = { [QUEUES.mailSend]: mailSendHandler(mailer, opts.mail), ...opts.handlers };
  await workTenantJobs(boss, orm, log, handlers, sender);
  for (const sweep of opts.sweeps ?? []) {
    await boss.work(sweep.queue, async () => {
      for (const slug of await sweep.due(db, await activeTenants(db))) await sender.send(sweep.sends, { tenant: slug }, { singletonKey: slug });
    });
  }
  // D9: pseudonymisation after the retention period, daily per tenant.
  await workRetentionSweep(boss, db, log);
  if (opts.schedule) {
    await boss.schedule(QUEUES.mailSweep, '* * * * *');
    await scheduleRetention(boss);
    for (const sweep of opts.sweeps ?? []) await boss.schedule(sweep.queue, '* * * * *');
  }

  return {
    boss,
    sender,
    stop: async () => {
      stopping = true;
      process.off('SIGTERM', markStopping);
      process.off('SIGINT', markStopping);
      process.off('SIGHUP', markStopping);
      await sender.flush();
      await boss.stop({ graceful: true, timeout: 10_000 } as never);
      mailer.close();
    },
  };
}

/** Jobs of different tenants (or offers) run side by side in one process; one job is one tenant's. */
const CONCURRENCY: Partial<Record<string, number>> = { [QUEUES.mailSend]: 4, [QUEUES.offerRefill]: 2, [QUEUES.webhookDeliver]: 8 };

/** Registers a pg-boss worker per tenant job: each job runs through `runTenantJob` (tenant from its data). */
export async function workTenantJobs(boss: PgBoss, orm: Orm, log: Logger, handlers: TenantJobHandlers, sender?: JobSender): Promise<void> {
  for (const [name, handler] of Object.entries(handlers)) {
    if (!handler) continue;
    // Workers poll (NOTIFY is off behind a pooler); a family waits for its mail at most one poll of each hop,
    // so the queues a family waits on poll every half second (pg-boss's minimum), the others every second.
    const fast = name === QUEUES.mailSend || name === QUEUES.offerRefill || name === QUEUES.webhookDeliver;
    const polling = { pollingIntervalSeconds: fast ? 0.5 : 1, notifyPollingIntervalSeconds: 2 };
    // Issue 23: one tenant's jobs take at most its share (PG_TENANT_POOL_SHARE) of the queue's slots in this worker.
    const slots = CONCURRENCY[name] ?? 1;
    const perTenant = slots > 1 ? { localGroupConcurrency: placesOf(tenantPoolShare(), slots) } : {};
    await boss.work(name, { ...polling, localConcurrency: slots, ...perTenant, includeMetadata: true }, async ([job]: JobWithMetadata<TenantJobData>[]) => {
      const outcome = await runTenantJob(orm, log, handler, job.data, sender);
      // Issue 24: a suspended tenant's job waits: sent again (same key) a minute later, until the tenant is resumed.
      if (outcome === 'postponed') {
        await boss.send(name, job.data, { group: { id: job.data.tenant }, startAfter: SUSPENDED_JOB_DELAY_SECONDS, ...(job.singletonKey ? { singletonKey: job.singletonKey } : {}) });
      }
    });
  }
}
