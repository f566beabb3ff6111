import { QUEUES, type TenantJobHandlers } from './platform/jobs/queue.js';
import { runAllocationJob, runCommitJob } from './resources/allocations/service.js';

// Every resource's background job (D9), by queue, like src/router.ts for the procedures. The worker role
// (src/platform/jobs/workers.ts) and the tests' in-memory queue run them with the tenant from the job data.
// The outbox's own jobs are the platform's and registered there.
export const tenantJobHandlers: TenantJobHandlers = {
  [QUEUES.editionAllocate]: runAllocationJob,
  [QUEUES.editionCommit]: runCommitJob,
};
