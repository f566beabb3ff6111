import { DomainError, type ErrorCode, type Violation } from '../../domain/errors.js';

// Spec 7 and D10: every error is application/problem+json with `type`, `title`, `status`, `detail`;
// validation errors (422 with violations) carry `violations` and type `/validation_errors/<code>`.
// Rules and services throw `DomainError`s (src/domain/errors.ts), mapped to a status here, once; a `Problem`
// is an error of the HTTP exchange itself (headers, body, token, rate limit). One renderer makes the bodies.

export type ProblemBody = {
  type: string;
  title: string;
  status: number;
  detail: string;
  violations?: Violation[];
  /** RFC 9457: this occurrence, `urn:request:<X-Request-Id>`. */
  instance?: string;
};

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** The title of a problem of `status` (RFC 9110's reason phrase), as every body and the document's examples show it. */
export function problemTitle(status: number): string {
  return TITLES[status] ?? 'Error';
}

/** The statuses the service answers with a problem body, each with its own page under `<base>/errors/` (issue 24). */
export const PROBLEM_STATUSES = Object.keys(TITLES).map(Number);

export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly violations?: Violation[],
    readonly headers?: Record<string, string>,
  ) {
    super(detail);
    this.name = 'Problem';
  }
}

/** A malformed query parameter or header (spec 1.9): the request itself, not the record, is at fault. */
export const badRequest = (detail: string) => new Problem(400, detail);
export const unauthorized = (detail: string) =>
  new Problem(401, detail, undefined, { 'WWW-Authenticate': 'Bearer' });

/** The answer status of each domain error code (D10: permission 403, state 409, the rest 404 or 422). */
export const STATUS_OF_CODE: Record<ErrorCode, number> = {
  not_found: 404,
  not_permitted: 403,
  state_conflict: 409,
  still_referenced: 409,
  unknown_transition: 422,
  refused: 422,
  invalid_input: 422,
};

type Renderable = { status: number; detail: string; violations?: Violation[] };

/** A domain error as the status, detail and violations of its answer. */
export function problemOf(err: DomainError): Renderable {
  return { status: STATUS_OF_CODE[err.code], detail: err.detail, violations: err.violations };
}

export function renderProblem(error: Renderable | DomainError): ProblemBody {
  const p = error instanceof DomainError ? problemOf(error) : error;
  const hasViolations = p.status === 422 && p.violations && p.violations.length > 0;
  const body: ProblemBody = {
    type: hasViolations ? `/validation_errors/${p.violations![0].code}` : `/errors/${p.status}`,
    title: problemTitle(p.status),
    status: p.status,
    detail: p.detail,
  };
  if (hasViolations) body.violations = p.violations;
  return body;
}

/** A 5xx never reveals internals: the cause is logged, the body is generic. */
export function internalProblem(): ProblemBody {
  return renderProblem({ status: 500, detail: 'An internal error occurred. The incident was logged.' });
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
