import { fromKysely, PgBoss, type ConstructorOptions, type Queue } from 'pg-boss';
import { systemViewer } from '../auth/viewer.js';
import type { ServiceContext } from '../context.js';
import type { Orm } from '../db/orm.js';
import { executorOf, poolGuardOf } from '../db/orm.js';
import { withConnectionAffinity } from '../db/affinity.js';
import { runAttempts } from '../db/attempts.js';
import { dbTimeouts, startupOptions, withTimeoutProfile } from '../db/timeouts.js';
import type { Logger } from '../logging/logger.js';
import { isDatabaseUnavailable } from '../http/availability.js';
import { loadTenants } from '../tenancy/registry.js';
import { QUEUES, type JobSender, type QueueName, type QueueStat, type SendJobOptions, type TenantJobData } from './names.js';
import { coalescingSender } from './coalescing.js';
import { readConfig } from '../config.js';

// D9: background work runs on pg-boss, one instance (schema `pgboss`) for all tenants, the tenant's slug in
// each job's data. This module is what both process roles share: the queue names and options, the sender
// the API uses to enqueue (`JobSender`), and the runner that turns a job back into a tenant's service
// context (`runTenantJob`), used by the pg-boss workers and by the in-memory queue of the tests alike. The names
// and the sender's interface live in names.ts (the service context refers to the sender, and this module to it).

export { QUEUES, type JobSender, type QueueName, type QueueStat, type SendJobOptions, type TenantJobData } from './names.js';

/**
 * Heartbeats: a worker that dies mid-job stops beating, and the job is failed and retried within about
 * `heartbeatSeconds` plus the monitor interval (workers.ts), instead of after the expiry. A long job (a large
 * lot) beats while it works, so it never looks dead. Names changed with these options (pg-boss keeps a
 * queue's policy and heartbeat from its creation).
 */
export const JOB_HEARTBEAT_SECONDS = readConfig().jobHeartbeatSeconds;
const retried = { retryLimit: 5, retryDelay: 2, retryBackoff: true, retryDelayMax: 300 } as const;

/**
 * Queue options. Every job is idempotent (a finished run is not drawn again; a commit finds nothing left held
 * back; a refill finds no free place; a sent mail is not claimed again), so a failed or interrupted attempt
 * simply runs again. `stately` keeps at most one queued and one active job per singleton key: a burst of
 * mails or refills of one tenant or offer collapses into one queued job, which a running one never swallows.
 */
export const QUEUE_OPTIONS: Partial<Record<QueueName, Omit<Queue, 'name'>>> = {
  [QUEUES.mailSend]: { ...retried, policy: 'stately', notify: true, heartbeatSeconds: JOB_HEARTBEAT_SECONDS, expireInSeconds: 900 },
  [QUEUES.offerRefill]: { ...retried, policy: 'stately', notify: true, heartbeatSeconds: JOB_HEARTBEAT_SECONDS, expireInSeconds: 900 },
  [QUEUES.editionAllocate]: { ...retried, notify: true, heartbeatSeconds: JOB_HEARTBEAT_SECONDS, expireInSeconds: 3600 },
  [QUEUES.editionCommit]: { ...retried, notify: true, heartbeatSeconds: JOB_HEARTBEAT_SECONDS, expireInSeconds: 3600 },
  [QUEUES.mailSweep]: { policy: 'singleton', expireInSeconds: 300 },
  // Webhooks (issue 14): like mail-send. Each subscription is leased by the worker delivering it, so a job that
  // runs again after its worker died carries on where the cursor stands.
  [QUEUES.webhookDeliver]: { ...retried, policy: 'stately', notify: true, heartbeatSeconds: JOB_HEARTBEAT_SECONDS, expireInSeconds: 900 },
  [QUEUES.webhookSweep]: { policy: 'singleton', expireInSeconds: 300 },
  // Retention is idempotent and commits batch by batch: a retry carries on where a failed run stopped. `exclusive`
  // with the tenant's slug as singletonKey: at most one run per tenant queued or active. The run may take minutes
  // on a large tenant: the worker's heartbeat (every 15 s) keeps it alive, a dead worker's job is retried after 30 s.
  [QUEUES.retention]: {
    policy: 'exclusive', retryLimit: 3, retryDelay: 60, retryBackoff: true, retryDelayMax: 900,
    expireInSeconds: 3600, heartbeatSeconds: 30,
  },
  [QUEUES.retentionSweep]: { retryLimit: 3, retryDelay: 60, retryBackoff: true, expireInSeconds: 300 },
  // Issue 21: each expired link is taken in its own transaction (idempotent), so a retry carries on.
  [QUEUES.familyExpiry]: { ...retried, policy: 'stately', heartbeatSeconds: JOB_HEARTBEAT_SECONDS, expireInSeconds: 900 },
  [QUEUES.familySweep]: { policy: 'singleton', expireInSeconds: 300 },
};

/** A job's work: a service use case with the context rebuilt from the job's tenant (style rule 5). */
export type TenantJobHandler = (ctx: ServiceContext, data: TenantJobData) => Promise<void>;
export type TenantJobHandlers = Partial<Record<QueueName, TenantJobHandler>>;

/**
 * Queues of earlier versions, created without heartbeats or policies (pg-boss keeps those from a queue's
 * creation, so they were renamed). Nothing is lost by dropping them: unsent mail stays in the outbox (the sweep
 * finds it) and a lot run still pending is drawn by the next allocate or commit of its edition.
 */
const RETIRED_QUEUES = ['outbox-sweep', 'outbox-tenant', 'edition-allocate', 'edition-commit'];

/** Creates every queue (idempotent); pg-boss needs a queue before the first send. */
export async function createQueues(boss: PgBoss): Promise<void> {
  for (const name of Object.values(QUEUES)) await boss.createQueue(name, QUEUE_OPTIONS[name] ?? {});
}

/** Drops the retired queues and their schedules (the worker role, at start; idempotent). */
export async function retireOldQueues(boss: PgBoss): Promise<void> {
  for (const name of RETIRED_QUEUES) {
    if (!(await boss.getQueue(name))) continue;
    await boss.unschedule(name);
    await boss.deleteQueue(name);
  }
}

/**
 * The pg-boss options every process shares. No LISTEN/NOTIFY by default (`useListenNotify` pins a session,
 * which a transaction-pooling PgBouncer does not keep); workers poll every 1-2 s. A deployment that connects
 * directly may turn it on for the workers (`PG_LISTEN_NOTIFY=on`).
 */
export function bossOptions(orm: Orm, extra: Partial<ConstructorOptions> & { max: number }) {
  // pg-boss's own pool gets the jobs' timeouts (issue 23), as startup parameters (pg-boss hands its options to pg).
  const t = dbTimeouts();
  const options = startupOptions(t.job, t.idleInTransactionMs);
  return { connectionString: String(orm.config.get('clientUrl')), schema: 'pgboss', useListenNotify: false, options, ...extra };
}

/** A catalog race of processes creating the same object at once: unique violation or "already exists". */
export function isCreateRace(err: unknown): boolean {
  for (let e = err as { code?: string; message?: string; cause?: unknown } | undefined, i = 0; e && i < 4; e = e.cause as typeof e, i++) {
    if (e.code === '23505' || e.code === '42P07' || e.code === '42710' || e.code === '42P06') return true;
    if (typeof e.message === 'string' && /pg_namespace_nspname_index|pg_type_typname_nsp_index|already exists/.test(e.message)) return true;
  }
  return false;
}

/**
 * pg-boss's `error` events: a database outage makes every poll fail, so an unreachable database is one
 * warning per minute at most, not an error (with stack) per poll; anything else is logged as an error.
 */
export function bossErrorHandler(log: Logger, quiet: () => boolean = () => false): (err: Error) => void {
  let lastOutageWarning = 0;
  return (err) => {
    if (quiet()) return;
    if (isDatabaseUnavailable(err)) {
      if (Date.now() - lastOutageWarning < 60_000) return;
      lastOutageWarning = Date.now();
      log.warn({ code: (err as { code?: string }).code }, 'job queue: database unreachable, retrying');
      return;
    }
    log.error({ err }, 'job queue error');
  };
}

/**
 * Starts pg-boss and creates the queues. pg-boss's schema is created by our locked control migration
 * (orm.ts), so processes starting together do not race on it; should two still collide on one of pg-boss's
 * own catalog objects (its install or a queue's partition), the loser stops and tries again.
 */
export async function startBoss(boss: PgBoss, log: Logger, attempts = 5): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await boss.start();
      await createQueues(boss);
      return;
    } catch (err) {
      if (attempt >= attempts || !isCreateRace(err)) throw err;
      log.warn({ attempt, code: (err as { code?: string }).code }, 'job queue start raced another process; retrying');
      await boss.stop({ graceful: false, timeout: 1_000 } as never).catch(() => {});
      await new Promise((r) => setTimeout(r, 100 * attempt + Math.random() * 200));
    }
  }
}

/** The sender over a started pg-boss instance; a transaction's kysely executor is used through `fromKysely`. */
export function pgBossSender(boss: PgBoss): JobSender {
  return {
    async send(name, data, opts = {}) {
      const id = await boss.send(name, data, {
        // The tenant is the job's group: a worker runs at most a share of a queue's jobs for one tenant (workers.ts).
        group: { id: data.tenant },
        ...(opts.db ? { db: fromKysely(opts.db) } : {}),
        ...(opts.singletonKey ? { singletonKey: opts.singletonKey } : {}),
        ...(opts.startAfter ? { startAfter: opts.startAfter } : {}),
      });
      // A singleton send answers null while its job is queued: the work is already asked for.
      if (id === null && !opts.singletonKey) throw new Error(`the job queue refused a job for ${name}`);
    },
    queueStats: () => queueStats(boss),
  };
}

/**
 * Every queue's counts through pg-boss's public API (issue 26, instead of reading its job table): `getQueues()`
 * for the names, `getQueueStats(name, { force: true })` for counts at most a minute old (the workers' monitor
 * refreshes them every 10 s; a queue never counted is counted now, never shown as a made-up 0), and, where jobs
 * wait, `findJobs(name, { queued: true })` for the oldest one's age (its cost grows with the backlog; `/metrics`
 * reads this at most every METRICS_JOBS_CACHE_MS).
 */
export async function queueStats(boss: PgBoss): Promise<QueueStat[]> {
  const queues = await boss.getQueues();
  return Promise.all(queues.map(async ({ name }): Promise<QueueStat> => {
    const [s] = await boss.getQueueStats(name, { force: true });
    const counts = { queued: s?.queuedCount ?? 0, deferred: s?.deferredCount ?? 0, ready: s?.readyCount ?? 0, active: s?.activeCount ?? 0, failed: s?.failedCount ?? 0 };
    let oldest: number | null = null;
    if (counts.queued > 0) {
      for (const job of await boss.findJobs(name, { queued: true })) oldest = Math.min(oldest ?? Infinity, job.createdOn.getTime());
    }
    return { name, counts, oldestWaitingSeconds: oldest === null ? null : Math.max(0, (Date.now() - oldest) / 1000) };
  }));
}

/**
 * The sender of an API-only process (D1 `--role api`): a pg-boss instance that only writes jobs, without
 * supervision, maintenance or schedules (the worker processes do those).
 */
export async function startJobSender(orm: Orm, log: Logger): Promise<{ sender: JobSender; boss: PgBoss; stop: () => Promise<void> }> {
  const boss = new PgBoss(bossOptions(orm, { max: 2, supervise: false, schedule: false }));
  boss.on('error', bossErrorHandler(log));
  await startBoss(boss, log);
  const sender = coalescingSender(pgBossSender(boss), log);
  return {
    sender,
    boss,
    stop: async () => {
      await sender.flush();
      await boss.stop({ graceful: false, timeout: 5_000 } as never);
    },
  };
}

/** What became of a tenant job: run, dropped (its tenant is gone), or postponed (its tenant is suspended). */
export type JobOutcome = 'done' | 'dropped' | 'postponed';

/** Issue 24: a suspended tenant's job is sent again this much later (with its singleton key), until it is resumed. */
export const SUSPENDED_JOB_DELAY_SECONDS = 60;

/**
 * Runs one tenant job: finds the tenant in the registry (a removed tenant's job is dropped), forks an entity
 * manager on its schema and calls the handler. Errors propagate, so pg-boss retries the job. A suspended
 * tenant's job does not run: the caller keeps it for later (`postponed`; workers.ts sends it again).
 */
export async function runTenantJob(orm: Orm, log: Logger, handler: TenantJobHandler, data: TenantJobData, jobs?: JobSender): Promise<JobOutcome> {
  const tenant = (await loadTenants(executorOf(orm))).find((t) => t.slug === data.tenant);
  if (!tenant) {
    log.warn({ tenant: data.tenant }, 'job for an unknown tenant dropped');
    return 'dropped';
  }
  if (tenant.suspended) return 'postponed';
  // Issue 23: the job's connections count for its tenant's share of the pool (the lane), its transactions get the
  // jobs' timeouts, and a deadlock or an offer's full share runs it again inside the job (attempts.ts).
  const guard = poolGuardOf(orm);
  const jobLog = log.child({ tenant: tenant.slug });
  let runs = 0;
  await withConnectionAffinity(tenant.schema, () => withTimeoutProfile('job', () => runAttempts(
    () => handler({ tenant, em: orm.em.fork({ schema: tenant.schema }), viewer: systemViewer('job'), log: jobLog, jobs }, data),
    {
      offers: guard?.offers ?? null,
      onRetry: (reason) => {
        runs++;
        guard?.emit('retried', tenant.schema, reason);
        jobLog.info({ reason, runs }, 'job run again after a lock conflict');
      },
    },
  )));
  return 'done';
}

/**
 * An in-memory queue: `send` only records the job; `drain()` runs what was recorded, in order, until nothing
 * is left. For the tests (the harness runs background work when a test asks it to) and for tools that
 * want background work done synchronously. A job recorded in a transaction that rolled back still runs;
 * the handlers are idempotent and find nothing to do.
 */
export class InMemoryJobs implements JobSender {
  private readonly queued: { name: QueueName; data: TenantJobData; key?: string }[] = [];

  constructor(private readonly orm: Orm, private readonly log: Logger, private readonly handlers: TenantJobHandlers) {}

  async send(name: QueueName, data: TenantJobData, opts: SendJobOptions = {}): Promise<void> {
    // Like a `stately` queue: one queued job per singleton key.
    if (opts.singletonKey && this.queued.some((j) => j.name === name && j.key === opts.singletonKey)) return;
    this.queued.push({ name, data: structuredClone(data), key: opts.singletonKey });
  }

  /** Jobs recorded and not yet run. */
  pending(): { name: QueueName; data: TenantJobData }[] {
    return this.queued.map(({ name, data }) => ({ name, data }));
  }

  /** Runs every recorded job (and any they enqueue); returns how many ran. A suspended tenant's jobs stay recorded. */
  async drain(): Promise<number> {
    let ran = 0;
    const postponed: typeof this.queued = [];
    for (let job = this.queued.shift(); job; job = this.queued.shift()) {
      const handler = this.handlers[job.name];
      if (!handler) throw new Error(`no handler for the job queue ${job.name}`);
      const outcome = await runTenantJob(this.orm, this.log, handler, job.data, this);
      if (outcome === 'postponed') postponed.push(job);
      else ran++;
    }
    this.queued.push(...postponed);
    return ran;
  }
}
