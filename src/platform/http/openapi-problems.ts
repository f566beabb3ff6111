// The errors of the OpenAPI document (openapi-document.ts): the Problem schema, one described example per
// status (with the title the service really sends, issue 24), and the response headers (spec 7, D10).
import { problemTitle } from './problem.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the OpenAPI document is walked and patched as free-form JSON
type Json = Record<string, any>;

export const PROBLEM_SCHEMA = {
  type: 'object',
  description: 'RFC 9457 problem details. `type` is `/errors/<status>`, or `/validation_errors/<code>` for a 422 with violations.',
  required: ['type', 'title', 'status', 'detail'],
  properties: {
    type: { type: 'string', description: 'A path below the base path; `<base>/errors/<status>` and `<base>/validation_errors/<code>` serve a page that explains the type.', examples: ['/errors/404', '/validation_errors/c1051bb4-d103-4f74-8988-acbcafc7fdc3'] },
    title: { type: 'string', description: 'The status\'s reason phrase, the same for every problem of that status.', examples: ['Not Found'] },
    status: { type: 'integer', minimum: 400, maximum: 599 },
    detail: { type: 'string' },
    instance: { type: 'string', description: 'This occurrence: `urn:request:` and the X-Request-Id of the request.', examples: ['urn:request:3f1c2b9e-6a0d-4c1e-9b53-0f2f7d6f8a10'] },
    violations: {
      type: 'array',
      description: 'Only on 422: one entry per failed rule; `code` is the stable UUID of the kind of rule.',
      items: {
        type: 'object',
        required: ['propertyPath', 'message', 'code'],
        properties: {
          propertyPath: { type: 'string', examples: ['dates[0].begin'] },
          message: { type: 'string' },
          code: { type: 'string', format: 'uuid' },
        },
      },
    },
  },
};

const ERRORS: Record<number, { description: string; detail: string; type?: string }> = {
  400: { description: 'A malformed query parameter (named in `detail`) or malformed JSON', detail: 'itemsPerPage: must be a whole number between 1 and 200.' },
  401: { description: 'Missing, unknown, expired or revoked token (or anonymous access switched off)', detail: 'This endpoint needs an access token (Authorization: Bearer <token>).' },
  403: { description: 'The token lacks the right: read-only token on a write, legacy token, organiser outside its offers, or a role that may not do this', detail: 'This token is read-only and may not change anything.' },
  404: { description: 'No such record (or not visible to the caller); a malformed identifier is 404 too', detail: 'No offer with the identifier 3f1c2b9e-8d4a-4c5e-9f6b-1a2b3c4d5e6f exists.' },
  405: { description: 'The record is never changed or deleted', detail: 'A receipt is never changed: reverse it instead (POST /receipts/{uuid}/reverse).' },
  412: { description: 'If-Match does not match the current ETag: someone changed the record since it was read', detail: 'The record was changed since it was read (ETag W/"…"); read it again and repeat the change.' },
  409: { description: 'Conflicts with the record\'s state (or with a change of the same records at the same moment: then it carries `Retry-After`, send it again)', detail: 'The offer 3f1c2b9e-8d4a-4c5e-9f6b-1a2b3c4d5e6f has 3 applications and cannot be deleted.' },
  413: { description: 'Body larger than 1 MiB', detail: 'The request body is larger than 1048576 bytes.' },
  415: { description: 'A body without a JSON content type', detail: 'Send the body as application/json.' },
  422: { description: 'Validation failed; `violations` names each field', detail: 'name: This value should not be blank.', type: '/validation_errors/c1051bb4-d103-4f74-8988-acbcafc7fdc3' },
  429: { description: 'Rate limit exceeded: wait `Retry-After` seconds', detail: 'Too many requests; retry in 3 seconds.' },
  503: { description: 'The database cannot be reached for a moment, or is busy for this request (a record it needs is locked by an operation that has not finished, or the municipality\'s share of connections is in use): retry after `Retry-After` seconds', detail: 'The service cannot reach its database right now; retry in a few seconds.' },
};

export const HEADERS: Json = {
  RateLimit: {
    description: 'The caller\'s remaining requests and the seconds until the bucket is full again (IETF RateLimit header fields).',
    schema: { type: 'string', examples: ['"token";r=299;t=1'] },
  },
  'RateLimit-Policy': {
    description: 'The caller\'s quota: 300 per token, refilled at 100 a minute (`"token";q=300;w=180`), or 5 an hour per anonymous client (`"anonymous";q=5;w=3600`).',
    schema: { type: 'string', examples: ['"token";q=300;w=180'] },
  },
  'Retry-After': { description: 'Whole seconds until a request is accepted again.', schema: { type: 'integer', minimum: 0 } },
  'WWW-Authenticate': { description: 'Always `Bearer` (with an error attribute for a bad token).', schema: { type: 'string', examples: ['Bearer'] } },
  'Cache-Control': { description: 'Anonymous reads: `public, max-age=60`; everything else is not stored by shared caches.', schema: { type: 'string', examples: ['public, max-age=60'] } },
  'X-Total-Count': { description: 'How many records match the request\'s filters, on all pages together: more follow while `page * itemsPerPage` is below it (there is no `Link` header, spec 4.1).', schema: { type: 'integer', minimum: 0, examples: [63] } },
};

export function problemResponse(status: number, headers: Json): Json {
  const e = ERRORS[status];
  return {
    description: e.description,
    headers,
    content: {
      'application/problem+json': {
        schema: { $ref: '#/components/schemas/Problem' },
        example: {
          type: e.type ?? `/errors/${status}`,
          title: problemTitle(status),
          status,
          detail: e.detail,
          ...(status === 422 ? { violations: [{ propertyPath: 'name', message: 'This value should not be blank.', code: 'c1051bb4-d103-4f74-8988-acbcafc7fdc3' }] } : {}),
        },
      },
    },
  };
}
