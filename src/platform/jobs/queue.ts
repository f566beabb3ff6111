import { fromKysely, PgBoss, type Queue } from 'pg-boss';
import type { ServiceContext } from '../context.js';
import type { Orm } from '../db/orm.js';
import { executorOf } from '../db/orm.js';
import type { Executor } from '../db/sql.js';
import type { Logger } from '../logging/logger.js';
import { loadTenants } from '../tenancy/registry.js';

// D9: background work runs on pg-boss, one instance (schema `pgboss`) for all tenants, the tenant's slug in
// each job's data. This module is what both process roles share: the queue names and options, the sender
// the API uses to enqueue (`JobSender`), and the runner that turns a job back into a tenant's service
// context (`runTenantJob`), used by the pg-boss workers and by the in-memory queue of the tests alike.

export const QUEUES = {
  outboxSweep: 'outbox-sweep',
  outboxTenant: 'outbox-tenant',
  /** D7: draws one recorded lottery run of an edition. */
  editionAllocate: 'edition-allocate',
  /** D7: releases an edition's held-back decisions. */
  editionCommit: 'edition-commit',
} as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/**
 * Queue options. The edition jobs are idempotent (a finished run is not drawn again; a commit finds nothing
 * left held back), so a failed or interrupted attempt simply runs again, a few times with backoff.
 */
export const QUEUE_OPTIONS: Partial<Record<QueueName, Omit<Queue, 'name'>>> = {
  [QUEUES.editionAllocate]: { retryLimit: 5, retryDelay: 5, retryBackoff: true, retryDelayMax: 300, expireInSeconds: 900 },
  [QUEUES.editionCommit]: { retryLimit: 5, retryDelay: 5, retryBackoff: true, retryDelayMax: 300, expireInSeconds: 900 },
};

/** Every tenant job carries its tenant's slug (D1: a job of one tenant never acts on another). */
export type TenantJobData = { tenant: string } & Record<string, unknown>;

/** A job's work: a service use case with the context rebuilt from the job's tenant (style rule 5). */
export type TenantJobHandler = (ctx: ServiceContext, data: TenantJobData) => Promise<void>;
export type TenantJobHandlers = Partial<Record<QueueName, TenantJobHandler>>;

export interface JobSender {
  /**
   * Enqueues a tenant job. With `db` (the caller's open transaction) the job is written in that
   * transaction: it exists exactly when the change that asked for it commits (no lost and no phantom jobs).
   */
  send(name: QueueName, data: TenantJobData, opts?: { db?: Executor }): Promise<void>;
}

/** Creates every queue (idempotent); pg-boss needs a queue before the first send. */
export async function createQueues(boss: PgBoss): Promise<void> {
  for (const name of Object.values(QUEUES)) await boss.createQueue(name, QUEUE_OPTIONS[name] ?? {});
}

/** The sender over a started pg-boss instance; a transaction's kysely executor is used through `fromKysely`. */
export function pgBossSender(boss: PgBoss): JobSender {
  return {
    async send(name, data, opts = {}) {
      const id = await boss.send(name, data, opts.db ? { db: fromKysely(opts.db) } : {});
      if (id === null) throw new Error(`the job queue refused a job for ${name}`);
    },
  };
}

/**
 * The sender of an API-only process (D1 `--role api`): a pg-boss instance that only writes jobs, without
 * supervision, maintenance or schedules (the worker processes do those).
 */
export async function startJobSender(orm: Orm, log: Logger): Promise<{ sender: JobSender; boss: PgBoss; stop: () => Promise<void> }> {
  const boss = new PgBoss({ connectionString: String(orm.config.get('clientUrl')), schema: 'pgboss', max: 2, supervise: false, schedule: false });
  boss.on('error', (err) => log.error({ err }, 'job queue error'));
  await boss.start();
  await createQueues(boss);
  return { sender: pgBossSender(boss), boss, stop: () => boss.stop({ graceful: false, timeout: 5_000 } as never) };
}

/**
 * Runs one tenant job: finds the tenant in the registry (a removed tenant's job is dropped), forks an entity
 * manager on its schema and calls the handler. Errors propagate, so pg-boss retries the job.
 */
export async function runTenantJob(orm: Orm, log: Logger, handler: TenantJobHandler, data: TenantJobData): Promise<void> {
  const tenant = (await loadTenants(executorOf(orm))).find((t) => t.slug === data.tenant);
  if (!tenant) {
    log.warn({ tenant: data.tenant }, 'job for an unknown tenant dropped');
    return;
  }
  await handler({ tenant, em: orm.em.fork({ schema: tenant.schema }), actor: null, log: log.child({ tenant: tenant.slug }) }, data);
}

/**
 * An in-memory queue: `send` only records the job; `drain()` runs what was recorded, in order, until nothing
 * is left. For the tests (the harness runs background work when a test asks it to) and for tools that
 * want background work done synchronously. A job recorded in a transaction that rolled back still runs;
 * the handlers are idempotent and find nothing to do.
 */
export class InMemoryJobs implements JobSender {
  private readonly queued: { name: QueueName; data: TenantJobData }[] = [];

  constructor(private readonly orm: Orm, private readonly log: Logger, private readonly handlers: TenantJobHandlers) {}

  async send(name: QueueName, data: TenantJobData): Promise<void> {
    this.queued.push({ name, data: structuredClone(data) });
  }

  /** Jobs recorded and not yet run. */
  pending(): { name: QueueName; data: TenantJobData }[] {
    return [...this.queued];
  }

  /** Runs every recorded job (and any they enqueue); returns how many ran. */
  async drain(): Promise<number> {
    let ran = 0;
    for (let job = this.queued.shift(); job; job = this.queued.shift()) {
      const handler = this.handlers[job.name];
      if (!handler) throw new Error(`no handler for the job queue ${job.name}`);
      await runTenantJob(this.orm, this.log, handler, job.data);
      ran++;
    }
    return ran;
  }
}
