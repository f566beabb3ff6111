import { QUEUES, type TenantJobHandlers } from './platform/jobs/queue.js';
import { runAllocationJob, runCommitJob } from './engines/allocation/index.js';
import { runRefillJob } from './engines/participant-list/index.js';
import { runRetentionJob } from './resources/retention/service.js';
import { webhookDeliverHandler } from './resources/webhooks/delivery.js';
import { tenantsWithDueWebhooks } from './resources/webhooks/due.js';
import type { TenantSweeps } from './platform/jobs/workers.js';
import { runFamilyExpiryJob, tenantsWithFamilyWork } from './resources/attendances/family-expiry.js';

// Every resource's background job (D9), by queue, like src/router.ts for the procedures. The worker role
// (src/platform/jobs/workers.ts) and the tests' in-memory queue run them with the tenant from the job data.
// The outbox's own jobs (mail-send, mail-sweep) are the platform's and registered there.
export const tenantJobHandlers: TenantJobHandlers = {
  [QUEUES.editionAllocate]: runAllocationJob,
  [QUEUES.editionCommit]: runCommitJob,
  [QUEUES.offerRefill]: runRefillJob,
  /** D9: daily per tenant (scheduled through the `retention-sweep` queue), also `cli retention run`. */
  [QUEUES.retention]: runRetentionJob,
  /** Issue 14: a tenant's webhook deliveries; written with each event (and each redelivery) in its transaction. */
  [QUEUES.webhookDeliver]: webhookDeliverHandler(),
  /** Issue 21: expired confirmation and consent links (72 h), unused uploads (24 h); sent by the minute's sweep. */
  [QUEUES.familyExpiry]: runFamilyExpiryJob,
};

/** Safety nets, every minute: one query finds the tenants with due work and sends their job (workers.ts). */
export const tenantJobSweeps: TenantSweeps = [
  { queue: QUEUES.webhookSweep, sends: QUEUES.webhookDeliver, due: tenantsWithDueWebhooks },
  { queue: QUEUES.familySweep, sends: QUEUES.familyExpiry, due: tenantsWithFamilyWork },
];
