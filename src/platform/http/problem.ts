// Spec 7 and D10: every error is application/problem+json with `type`, `title`, `status`, `detail`;
// validation errors (422 with violations) carry `violations` and type `/validation_errors/<code>`.
// Services throw `Problem`s through the helpers below; one renderer turns them into bodies.

export type Violation = { propertyPath: string; message: string; code: string };

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

/** One stable UUID per kind of validation rule (D10), shown in `violations[].code`. */
export const RULE_CODES = {
  required: 'c1051bb4-d103-4f74-8988-acbcafc7fdc3',
  type: 'ba785a8c-82cb-4283-967c-3cf342181b40',
  tooLong: 'd94b19cc-114f-4f44-9cc4-4138e80a87b9',
  tooShort: '9ff3fdc4-b214-49db-8718-39c315e33d45',
  tooHigh: '2d28afcb-e32e-45fb-a815-01c431a86a69',
  tooLow: '76454e69-502c-46c5-9643-f447d837c4d5',
  choice: '8e179f1b-97aa-4560-a02f-2a8b42e49df7',
  identifier: '51120b12-a2bc-41bf-aa53-cd73daf330d0',
  timestamp: '1a9da513-2640-4f84-9b6a-4d99dcddc628',
  date: '69819696-02ac-4a99-9ff0-14e127c4d1bc',
  url: '57c2f299-1154-4870-89bb-ef3b1f5ad229',
  email: 'bd79c0ab-ddba-46cc-a703-a7a4b08de310',
  format: 'de1e3db3-5ed4-4941-aae4-59f3667cc3a3',
  unique: '23bd9dbf-6b9b-41cd-a99e-4844bcf3077f',
  unknownField: '7703c766-b5d5-4cef-ace7-ae0dd82304e9',
  range: '04b91c99-a946-4221-afc5-e65ebac401eb',
  invalid: 'e4b5a5d1-2f3c-4bd4-9a4e-0c8a3f7e2b61',
  imageTooLarge: '5f6c2a8e-3b1d-4e7a-9c0f-8d2b1a6e4c37',
  imageUnverifiable: 'a3e1c9d4-7b2f-4a58-8e61-2c9d0f7b5a14',
} as const;

export type RuleCode = keyof typeof RULE_CODES;

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

export const badRequest = (detail: string) => new Problem(400, detail);
export const unauthorized = (detail: string) =>
  new Problem(401, detail, undefined, { 'WWW-Authenticate': 'Bearer' });
export const forbidden = (detail: string) => new Problem(403, detail);
export const notFound = (detail: string) => new Problem(404, detail);
export const conflict = (detail: string) => new Problem(409, detail);
/** 422 for a well-formed request that makes no sense for the record: `detail` only (spec 7). */
export const unprocessable = (detail: string) => new Problem(422, detail);

/** 422 with violations, for malformed or out-of-range values (spec 7). */
export function invalid(violations: Violation[]): Problem {
  return new Problem(422, violations.map((v) => `${v.propertyPath}: ${v.message}`).join('\n'), violations);
}

export function violation(propertyPath: string, message: string, rule: RuleCode): Violation {
  return { propertyPath, message, code: RULE_CODES[rule] };
}

export function renderProblem(p: { status: number; detail: string; violations?: Violation[] }): ProblemBody {
  const hasViolations = p.status === 422 && p.violations && p.violations.length > 0;
  const body: ProblemBody = {
    type: hasViolations ? `/validation_errors/${p.violations![0].code}` : `/errors/${p.status}`,
    title: TITLES[p.status] ?? 'Error',
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
