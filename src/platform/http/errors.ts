import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import type { Logger } from '../logging/logger.js';
import { internalProblem, invalid, Problem, renderProblem, type ProblemBody } from './problem.js';
import { propertyPath, violationsFromZod } from './validation.js';

// Every failure, wherever it is raised (tRPC procedure, input parsing, express middleware), becomes one
// problem+json body here. Unknown errors are logged with their cause and answered with a generic 500.
export type RenderedProblem = { body: ProblemBody; headers: Record<string, string> };

const PATH_PARAMS = new Set(['uuid']);
const QUERY_METHODS = new Set(['GET', 'DELETE', 'HEAD']);

export function problemFromError(err: unknown, method: string, log: Logger, requestId?: string): RenderedProblem {
  const cause = err instanceof TRPCError && err.cause ? err.cause : err;

  if (cause instanceof Problem) {
    return { body: renderProblem(cause), headers: cause.headers ?? {} };
  }
  if (cause instanceof z.ZodError) return fromZod(cause, method);

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
  const e = err as { type?: string; status?: number };
  if (e?.type === 'entity.too.large' || e?.status === 413) return plain(413, 'The request body is too large.');
  if (e?.type === 'entity.parse.failed') return plain(400, 'The request body is not valid JSON.');

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
