import { ShareFull } from '../db/bulkhead.js';
import { PoolSaturated } from '../db/guarded-dialect.js';
import { lockConflictOf } from '../db/timeouts.js';
import { renderProblem, type ProblemBody } from './problem.js';

// Issue 23: the answers to a busy database, for the one request concerned. The load (a lock held elsewhere, a
// share of the pool in use) is 503 with Retry-After, and the client should simply try again; a conflict with a
// concurrent change that the service's own retries (platform/db/attempts.ts) could not resolve is 409, like
// any other state conflict. None of them is an outage (availability.ts) and none is a 500.

/** Seconds to wait after a lock or statement timeout, and after a full share of the pool. */
export const LOCK_RETRY_AFTER_SECONDS = 5;
export const SHARE_RETRY_AFTER_SECONDS = 2;

function busy(status: number, detail: string, retryAfter?: number): { body: ProblemBody; headers: Record<string, string> } {
  return { body: renderProblem({ status, detail }), headers: retryAfter ? { 'Retry-After': String(retryAfter) } : {} };
}

/** The problem for a busy database, or null when `err` is something else. */
export function busyProblem(err: unknown): { body: ProblemBody; headers: Record<string, string> } | null {
  if (err instanceof ShareFull) {
    return busy(503, err.scope === 'tenant'
      ? 'The service is busy with other requests of this municipality. Please try again shortly.'
      : 'This offer is busy with other requests (many at once, or one that has not finished). Please try again shortly.', SHARE_RETRY_AFTER_SECONDS);
  }
  if (err instanceof PoolSaturated) return busy(503, 'The service is busy. Please try again shortly.', SHARE_RETRY_AFTER_SECONDS);
  switch (lockConflictOf(err)) {
    case 'lock_timeout':
      return busy(503, 'A record this request needs is being changed by another operation that has not finished. Please try again shortly.', LOCK_RETRY_AFTER_SECONDS);
    case 'statement_timeout':
      return busy(503, 'The request took longer than the database allows. Please try again shortly.', LOCK_RETRY_AFTER_SECONDS);
    case 'deadlock':
    case 'serialization':
      // Retry-After also tells the Idempotency-Key store that nothing was done (idempotency.ts).
      return busy(409, 'Another request changed the same records at the same moment. Please send the request again.', 1);
    default:
      return null;
  }
}
