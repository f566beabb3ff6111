import type { Executor } from '../db/sql.js';

// The queue names of D9 and the interface through which a use case enqueues (ServiceContext.jobs); the
// pg-boss side is queue.ts.

export const QUEUES = {
  /** Safety net, every minute: one query finds the tenants with due mail; one send job for each of them. */
  mailSweep: 'mail-sweep',
  /** Sends one tenant's due mails (outbox.ts); one queued per tenant at a time, enqueued with each mail. */
  mailSend: 'mail-send',
  /** Spec 4.2 refill of one offer's free places from its waiting list; one queued per offer at a time. */
  offerRefill: 'offer-refill',
  /** D7: draws one recorded lottery run of an edition. */
  editionAllocate: 'edition-allocation',
  /** D7: releases an edition's held-back decisions. */
  editionCommit: 'edition-commit-decisions',
  /** D9: one tenant's retention run (pseudonymisation after `retentionWeeks`). */
  retention: 'retention',
  /** D9: daily, sends one `retention` job per tenant (src/platform/jobs/retention-sweep.ts). */
  retentionSweep: 'retention-sweep',
  /** Issue 14: delivers one tenant's due webhook events (src/resources/webhooks/delivery.ts); one queued per tenant. */
  webhookDeliver: 'webhook-deliver',
  /** Issue 14, every minute: one query finds tenants with undelivered events; a deliver job for each. */
  webhookSweep: 'webhook-sweep',
  /** Issue 21 (D11): one tenant's expired confirmation and consent links, and its unused uploads after 24 h. */
  familyExpiry: 'family-expiry',
  /** Issue 21, every minute: one query finds tenants with something of that due; a family-expiry job for each. */
  familySweep: 'family-sweep',
} as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/** Every tenant job carries its tenant's slug (D1: a job of one tenant never acts on another). */
export type TenantJobData = { tenant: string } & Record<string, unknown>;

export type SendJobOptions = {
  /** The caller's open transaction: the job exists exactly when the change that asked for it commits. */
  db?: Executor;
  /** On a `stately` queue: while a job with this key is queued, another send is a no-op (deduplicated). */
  singletonKey?: string;
  /** Not before this time (a retry after a backoff). */
  startAfter?: Date;
  /**
   * Issue 25: a wake-up for work already committed (no `db`), such as the send job after an application's one
   * statement. A job of the same queue and singleton key written up to this many ms later may stand for this
   * one: the process writes at most one such job per queue and key in that time, always one after the last
   * send it was asked for (src/platform/jobs/coalescing.ts). Mail and webhooks leave that much later at most.
   */
  coalesceMs?: number;
};

/**
 * One queue as `/metrics` shows it, from pg-boss's public API (issue 26): its counts (`getQueueStats`: `queued`
 * is every job not yet started, `deferred` those of them waiting for a later start, `ready` the rest) and the
 * age of the oldest job not yet started.
 */
export type QueueStat = {
  name: string;
  counts: { queued: number; deferred: number; ready: number; active: number; failed: number };
  oldestWaitingSeconds: number | null;
};

export interface JobSender {
  /**
   * Enqueues a tenant job. With `db` (the caller's open transaction) the job is written in that
   * transaction: it exists exactly when the change that asked for it commits (no lost and no phantom jobs).
   */
  send(name: QueueName, data: TenantJobData, opts?: SendJobOptions): Promise<void>;
  /** The queues' counts for `/metrics`; only where a job queue exists outside this process (pg-boss). */
  queueStats?(): Promise<QueueStat[]>;
}
