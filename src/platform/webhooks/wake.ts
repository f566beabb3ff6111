import type { Executor } from '../db/sql.js';
import { QUEUES, type JobSender } from '../jobs/queue.js';
import type { Tenant } from '../tenancy/tenant.js';

/**
 * Wakes the tenant's webhook delivery (issue 14): a `webhook-deliver` job written in the caller's transaction
 * (`stately`, singleton key the tenant: one queued at a time, however many events a change writes).
 */
export async function wakeWebhookDelivery(ctx: { tenant: Pick<Tenant, 'slug'>; jobs?: JobSender }, db: Executor): Promise<void> {
  await ctx.jobs?.send(QUEUES.webhookDeliver, { tenant: ctx.tenant.slug }, { db, singletonKey: ctx.tenant.slug });
}

/**
 * Wakes the delivery for events already committed (an application's one statement writes its event): one job per
 * tenant and `coalesceMs` however many applications (issue 25; SendJobOptions.coalesceMs).
 */
export async function wakeWebhookDeliveryAfterCommit(ctx: { tenant: Pick<Tenant, 'slug'>; jobs?: JobSender }, coalesceMs: number): Promise<void> {
  await ctx.jobs?.send(QUEUES.webhookDeliver, { tenant: ctx.tenant.slug }, { singletonKey: ctx.tenant.slug, coalesceMs });
}
