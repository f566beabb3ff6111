import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { DomainError, invalid, violation } from '../../domain/errors.js';
import type { Logger } from '../logging/logger.js';
import { DatabaseAvailability, isDatabaseUnavailable, OUTAGE_RETRY_AFTER_SECONDS } from './availability.js';
import { busyProblem } from './busy.js';
import { internalProblem, Problem, renderProblem, type ProblemBody } from './problem.js';
import { propertyPath, violationsFromZod } from './validation.js';

// Every failure, wherever it is raised (tRPC procedure, input parsing, express middleware), becomes one
// problem+json body here. Unknown errors are logged with their cause and answered with a generic 500.
export type RenderedProblem = { body: ProblemBody; headers: Record<string, string> };

// `id`: the second identifier of a nested path (`/webhooks/{uuid}/deliveries/{id}/redeliver`).
const PATH_PARAMS = new Set(['uuid', 'id']);
const QUERY_METHODS = new Set(['GET', 'DELETE', 'HEAD']);

/**
 * The problem for `err`, with `instance` naming the request (its X-Request-Id), so a client's report can be
 * found in the log. A database that cannot be reached is 503 with Retry-After, reported to `availability`
 * (one warning per outage) instead of a logged stack trace.
 */
export function problemFromError(err: unknown, method: string, log: Logger, requestId?: string, availability?: DatabaseAvailability): RenderedProblem {
  const rendered = renderError(err, method, log, requestId, availability);
  if (requestId) rendered.body.instance = requestInstance(requestId);
  return rendered;
}

/** The `instance` URI of a request's problem: a URN holding its X-Request-Id. */
export function requestInstance(requestId: string): string {
  return `urn:request:${requestId}`;
}

function renderError(err: unknown, method: string, log: Logger, requestId?: string, availability?: DatabaseAvailability): RenderedProblem {
  const cause = err instanceof TRPCError && err.cause ? err.cause : err;

  if (cause instanceof DomainError) return { body: renderProblem(cause), headers: {} };
  if (cause instanceof Problem) {
    return { body: renderProblem(cause), headers: cause.headers ?? {} };
  }
  // Only input validation is the client's fault (tRPC: BAD_REQUEST); a procedure's output failing its own
  // schema, or a ZodError thrown inside a service, is a server error (500, not a 400/422 naming internals).
  if (cause instanceof z.ZodError && (!(err instanceof TRPCError) || err.code === 'BAD_REQUEST')) return fromZod(cause, method);

  if (err instanceof TRPCError) {
    switch (err.code) {
      case 'NOT_FOUND':
        return plain(404, 'No endpoint exists at this path for this method.');
      case 'UNSUPPORTED_MEDIA_TYPE':
        return plain(415, 'Send the body as application/json.');
      case 'PARSE_ERROR':
        return plain(400, 'The request body is not valid JSON.');
      case 'PAYLOAD_TOO_LARGE':
        return plain(413, 'The request body is too large.');
      case 'METHOD_NOT_SUPPORTED':
        return plain(405, 'This method is not allowed on this path.');
      default:
        break;
    }
  }
  const unique = uniqueViolation(cause);
  if (unique) return { body: renderProblem(invalid([violation(unique, 'This value is already used.', 'unique')])), headers: {} };
  const e = err as { type?: string; status?: number };
  if (e?.type === 'entity.too.large' || e?.status === 413) return plain(413, 'The request body is too large.');
  if (e?.type === 'entity.parse.failed') return plain(400, 'The request body is not valid JSON.');

  // Issue 23: a lock that did not come in time, a share of the pool that stayed full, a conflict retried in vain:
  // 503 with Retry-After or 409, for this request only; never an outage, never a 500.
  const busy = busyProblem(cause);
  if (busy) return busy;

  if (isDatabaseUnavailable(cause)) {
    if (availability) availability.reportFailure(cause);
    else log.warn({ requestId, code: (cause as { code?: string })?.code }, 'database unreachable');
    return {
      body: renderProblem({ status: 503, detail: 'The service is temporarily unavailable. Please try again shortly.' }),
      headers: { 'Retry-After': String(OUTAGE_RETRY_AFTER_SECONDS) },
    };
  }

  log.error({ err: cause, requestId }, 'unhandled error');
  return { body: internalProblem(), headers: {} };
}

function plain(status: number, detail: string): RenderedProblem {
  return { body: renderProblem({ status, detail }), headers: {} };
}

function fromZod(error: z.ZodError, method: string): RenderedProblem {
  // A malformed identifier in a path is 404 (D10).
  const pathIssue = error.issues.find((i) => PATH_PARAMS.has(String(i.path[0])) && i.path.length === 1);
  if (pathIssue) return plain(404, 'No record exists with this identifier.');
  // Query parameters: 400 whose detail names the parameter (spec 1.9).
  if (QUERY_METHODS.has(method)) {
    const detail = error.issues.map((i) => `${propertyPath(i.path)}: ${i.message}`).join('\n');
    return plain(400, detail);
  }
  const p = invalid(violationsFromZod(error.issues));
  return { body: renderProblem(p), headers: {} };
}

/**
 * Two requests racing for one unique value both pass the service's check; the database refuses the second
 * (23505). Its constraint `<table>_<column>_key` (or a unique index `<table>_<column>_unique`) names the
 * field, answered as the same 422 the service's own check gives.
 */
function uniqueViolation(err: unknown): string | null {
  let e = err as { code?: string; constraint?: string; cause?: unknown } | undefined;
  for (let i = 0; i < 3 && e; i++) {
    if (e.code === '23505' && typeof e.constraint === 'string') {
      const m = /^[a-z_]+?_([a-z]+(?:_[a-z]+)*)_(?:key|unique)$/.exec(e.constraint);
      const column = m ? m[1].split('_').slice(-1)[0] : null;
      return column ? column.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()) : null;
    }
    e = e.cause as typeof e;
  }
  return null;
}
