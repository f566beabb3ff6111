import type { AnyRouter } from '@trpc/server';
import { generateOpenApiDocument } from 'trpc-to-openapi';
import { ATTENDANCE_TRANSITIONS, SYSTEM_TRANSITIONS } from '../../domain/attendance-states.js';
import { OFFER_TRANSITIONS } from '../../domain/offer-workflow.js';
import type { Meta } from './trpc.js';
import { webhookOperations } from '../webhooks/openapi.js';
import { accessText, addExamples, addReferenceExamples, BODY_RESOURCE, describeCents, typeParameter } from './openapi-annotations.js';
import { HEADERS, problemResponse, PROBLEM_SCHEMA } from './openapi-problems.js';
import { finalResponseComponents } from './response.js';
import { describeRawOperations } from './openapi-raw.js';
import { operationsOf } from './operations.js';

// OpenAPI 3.1 at `<base>/openapi.json`, made for client generators (issue 12): trpc-to-openapi's document
// (zod-openapi: every resource's output schema is a named component through `.meta({ id })` in its
// schema.ts), post-processed here to say what the server really does:
// - success statuses 201/202/204 from each procedure's meta; PATCH/DELETE of receipts and bookings answer
//   only 405 (they exist to refuse) and are left out of the document (issue 24: generated clients offered them as
//   functions, the reference listed them);
// - every list's `X-Total-Count` (issue 24; no `Link`: spec 4.1 and 9.8 forbid it);
// - the errors each operation can answer, as application/problem+json with an example, and the headers
//   (RateLimit, RateLimit-Policy, Retry-After, WWW-Authenticate, Cache-Control, Allow);
// - query parameters typed from the field helpers' descriptions (src/platform/http/fields.ts): integers,
//   booleans, enums, comma-separated enum lists (style form, explode false), with their defaults;
// - optional bodies not required, `application/merge-patch+json` on PATCH, `transition` as an enum,
//   amounts described as cents, each operation's access rule, declared tags.
// The stale `error.*` schemas trpc-to-openapi adds are removed: the server never sends those shapes.
// The error responses are in openapi-problems.ts; examples, cents, parameter types and access texts in
// openapi-annotations.ts.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the OpenAPI document is walked and patched as free-form JSON
type Json = Record<string, any>;

const TAGS: Record<string, string> = {
  offers: 'The programme\'s offers, their workflow (transition), copies and variants. Anonymous reads of public offers.',
  attendances: 'Applications of participants for offers: states, transitions, transfer, refill.',
  editions: 'Seasons with their phases (tasks); allocation by lot and commit.',
  organisers: 'Clubs, institutions and people offering activities.',
  categories: 'Categories of offers.',
  accounts: 'Families (admin only).',
  participants: 'Children (admin only).',
  money: 'Debtors, ledgers, bookings and receipts (admin only). Amounts are integer cents.',
  webhooks: 'Webhook subscriptions (admin only): the municipality\'s events POSTed to an https URL, signed as Standard Webhooks specifies, at least once and in order per subscription; their delivery attempts. The payloads are under `webhooks` in this document.',
  'family-applications': 'Families apply on the municipality\'s website, which hands their applications in with its website token: one request per family, the e-mail confirmation (double opt-in) and a guardian\'s consent through the links of their mails.',
  files: 'Answer files (PDF, PNG, JPEG, at most 10 MiB) of `file` questions: uploaded as the raw body, named in an answer, served as an attachment.',
};

/** Operations that answer 409 in some state (their services' `state_conflict` or `still_referenced`). */
const CONFLICTS = new Set([
  'offers-delete', 'offers-transition', 'participants-delete', 'editions-delete', 'attendances-transition', 'attendances-transfer',
  'attendances-create', 'attendances-update', 'attendances-delete', 'allocations-allocate', 'receipts-reverse', 'webhooks-redeliver',
  'familyApplications-submit',
]);

/** Operations without `{uuid}` that answer 404 (issue 21: a confirmation or consent link unknown, expired or used). */
const NOT_FOUND = new Set(['attendances-list', 'familyApplications-confirm', 'familyApplications-consent']);

/** Actions whose body is optional (D10): a request without body or content type is accepted. */
const OPTIONAL_BODIES = new Set(['attendances-refill', 'allocations-allocate', 'allocations-commit', 'offers-copy', 'offers-variant', 'receipts-reverse']);

/** Operations that exist only to answer 405 (D8: bookings and receipts are never changed): not in the document. */
const REFUSING = new Set(['bookings-update', 'bookings-delete', 'receipts-update', 'receipts-delete']);

/** Body defaults the services apply to absent fields. */
const BODY_DEFAULTS: Record<string, Record<string, unknown>> = {
  'attendances-refill': { notify: true },
  'allocations-allocate': { waitlist: true },
  'allocations-commit': { notify: true },
  'receipts-reverse': { withdraw: false, notify: false },
  'receipts-create': { notify: false },
  'attendances-create': { commit: true },
  'offers-create': { requiresApplication: true, onlineApplication: true, publish: 'public' },
  'editions-create': { procedure: 'firstcome', online: true, releaseParticipantLists: false },
  'attendances-transition': { commit: true },
  'attendances-transfer': { commit: true },
};

export function buildOpenApiDocument(router: AnyRouter, baseUrl: string): Record<string, unknown> {
  const doc = generateOpenApiDocument(router, {
    title: 'Holiday Programme Service API',
    version: '1.0.0',
    baseUrl,
    description: [
      'JSON API of a municipal holiday programme (Ferienprogramm). Each municipality has its own host and base path; this document describes the one at the server URL.',
      '',
      '- Authentication: `Authorization: Bearer <token>` (tokens are issued by the operator CLI). Some offer reads are open to anonymous callers.',
      '- Errors are `application/problem+json` (RFC 9457); a 422 lists `violations` by field.',
      '- Amounts (`fee`, `amount`, `total`, `balance`) are integer cents. Timestamps carry the Europe/Berlin offset; date-only values are `YYYY-MM-DD`.',
      '- Lists are pages: `page` from 1, `itemsPerPage` 1-200 (default 30). A short page is the last one. Each list answer also carries `X-Total-Count` (the matching records): more follow while `page * itemsPerPage < X-Total-Count`. The body is a plain array, without a `Link` header.',
      '- Rate limits: 300 requests per token, refilled at 100 a minute; anonymous callers 5 an hour. Every response carries `RateLimit` and `RateLimit-Policy`; a 429 also `Retry-After`.',
    ].join('\n'),
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An opaque token `hpt_...` issued with `npm run cli -- token issue`.' } },
  }) as unknown as { paths: Record<string, Record<string, Json>>; components?: Json; tags?: Json[] };

  const metaByOperation = new Map<string, Meta>();
  for (const { meta, method, template } of operationsOf(router)) metaByOperation.set(`${method.toLowerCase()} ${template}`, meta);

  doc.components ??= {};
  doc.components.schemas ??= {};
  for (const key of Object.keys(doc.components.schemas)) if (key.startsWith('error.')) delete doc.components.schemas[key];
  for (const [id, schema] of Object.entries(finalResponseComponents())) doc.components.schemas[id] ??= schema as Json;
  doc.components.schemas.Problem = PROBLEM_SCHEMA;
  doc.components.headers = HEADERS;
  const h = (name: string) => ({ $ref: `#/components/headers/${name}` });
  const limitHeaders = { RateLimit: h('RateLimit'), 'RateLimit-Policy': h('RateLimit-Policy') };

  // State and transition names as enums where the output lists them.
  const schemas = doc.components.schemas as Record<string, Json>;
  if (schemas.Offer?.properties?.transitions) schemas.Offer.properties.transitions.items = { type: 'string', enum: [...OFFER_TRANSITIONS] };
  if (schemas.Attendance?.properties?.transitions) {
    schemas.Attendance.properties.transitions.items = { type: 'string', enum: [...ATTENDANCE_TRANSITIONS, ...SYSTEM_TRANSITIONS] };
  }

  const usedTags = new Set<string>();
  for (const [path, ops] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(ops)) {
      const meta = metaByOperation.get(`${method} ${path}`);
      const id: string = op.operationId ?? '';
      if (REFUSING.has(id)) {
        delete ops[method];
        continue;
      }
      for (const t of op.tags ?? []) usedTags.add(t);
      const responses: Json = op.responses ?? {};
      for (const key of Object.keys(responses)) if (/^[45]\d\d$|^default$/.test(key)) delete responses[key];

      // Success response.
      const status = meta?.successStatus ?? 200;
      const ok = responses['200'];
      delete responses['200'];
      if (ok) {
        const headers: Json = { ...limitHeaders };
        if (meta?.access === 'public' && method === 'get') headers['Cache-Control'] = h('Cache-Control');
        if (method === 'get' && (op.parameters ?? []).some((p: Json) => p.in === 'query' && p.name === 'page')) {
          headers['X-Total-Count'] = h('X-Total-Count');
        }
        responses[String(status)] = status === 204
          ? { description: 'No content', headers }
          : { ...ok, description: status === 201 ? 'Created' : status === 202 ? 'Accepted: the work continues in the background' : 'OK', headers };
      }

      // Errors this operation can answer.
      const params: Json[] = op.parameters ?? [];
      const hasBody = method === 'post' || method === 'patch' || method === 'put';
      const errors = new Set<number>([401, 429, 503]);
      if (meta?.access !== 'public') errors.add(403);
      if (path.includes('{uuid}') || NOT_FOUND.has(id)) errors.add(404);
      if (params.some((p) => p.in === 'query')) errors.add(400);
      if (hasBody) for (const s of [400, 413, 415, 422]) errors.add(s);
      if (CONFLICTS.has(id)) errors.add(409);
      for (const s of [...errors].sort()) {
        const headers: Json = { ...limitHeaders };
        if (s === 401) headers['WWW-Authenticate'] = h('WWW-Authenticate');
        if (s === 429 || s === 503) headers['Retry-After'] = h('Retry-After');
        responses[String(s)] = problemResponse(s, headers);
      }
      // Issue 13: conditional requests and Idempotency-Key (src/platform/http/conditional.ts, idempotency.ts).
      const header = (name: string, description: string) => ({ name, in: 'header', required: false, description, schema: { type: 'string' } });
      if (method === 'get') {
        params.push(header('If-None-Match', 'ETag(s) of a representation the client has; a match gives 304 without a body'));
        responses['304'] = { description: 'Not modified (If-None-Match matched the ETag)', headers: { ...limitHeaders } };
      }
      if (method === 'patch' || method === 'delete') {
        params.push(header('If-Match', 'ETag of the representation the change is based on; a stale one gives 412'));
        responses['412'] = problemResponse(412, { ...limitHeaders });
      }
      if (method === 'post') {
        params.push(header('Idempotency-Key', 'a retry with the same key and body (same token, within 24 h) returns the first answer without doing the work again; another body with the key is 422'));
      }
      op.parameters = params;
      // Responses in status order, as readers expect them.
      for (const key of Object.keys(responses).sort()) {
        const r = responses[key];
        delete responses[key];
        responses[key] = r;
      }
      op.responses = responses;

      // Parameters, bodies.
      for (const p of params) typeParameter(p);
      const body = op.requestBody as Json | undefined;
      if (body) {
        if (OPTIONAL_BODIES.has(id)) body.required = false;
        const json = body.content?.['application/json'];
        const schema: Json | undefined = json?.schema;
        if (schema?.properties?.transition) {
          schema.properties.transition = {
            type: 'string',
            enum: id.startsWith('offers') ? [...OFFER_TRANSITIONS] : [...ATTENDANCE_TRANSITIONS],
            description: 'An unknown name, or a system-only one (`await_email`, `await_consents`), is 422.',
          };
        }
        for (const [field, value] of Object.entries(BODY_DEFAULTS[id] ?? {})) {
          if (schema?.properties?.[field]) schema.properties[field].default = value;
        }
        if (method === 'patch' && json) {
          body.content = { 'application/merge-patch+json': json, 'application/json': json };
          body.description = 'Only the fields sent are changed (JSON merge patch, RFC 7396); `null` clears an optional field.';
        }
      } else if (id === 'offers-variant') {
        op.requestBody = { required: false, content: { 'application/json': { schema: { type: 'object', properties: {} } } } };
      }

      const summary = op.summary ? `${op.summary}.` : '';
      op.description = [op.description ?? summary, accessText(meta)].filter(Boolean).join('\n\n');
      if (meta?.access === 'public') op.security = [{}, { bearer: [] }];
      else op.security = [{ bearer: [] }];
    }
  }
  // Issue 21: bodies and answers that are files (raw.ts).
  describeRawOperations(doc.paths, (method, path) => metaByOperation.get(`${method} ${path}`));
  // Issue 14: what the service POSTs to a webhook subscription, per event type (OpenAPI 3.1 `webhooks`).
  const hooks = webhookOperations(schemas);
  if (Object.keys(hooks).length > 0) (doc as Json).webhooks = hooks;
  doc.tags = [...usedTags].sort().map((name) => ({ name, description: TAGS[name] ?? name }));
  for (const [path, ops] of Object.entries(doc.paths)) if (Object.keys(ops).length === 0) delete doc.paths[path];
  describeCents(doc.components.schemas);
  describeCents(doc.paths);
  // Issue 24: each resource's own examples (an edition is not called like an offer), references included.
  addReferenceExamples(schemas);
  for (const [name, schema] of Object.entries(schemas)) addExamples(schema, name);
  for (const ops of Object.values(doc.paths)) {
    for (const o of Object.values(ops)) addExamples(o.requestBody, BODY_RESOURCE[String(o.operationId ?? '').split('-')[0]!]);
  }
  return doc as unknown as Record<string, unknown>;
}

/**
 * The document as one request sees it (issue 24): `servers` is the address the request came in on (scheme and
 * port, the forwarded ones behind a trusted proxy: public-url.ts), and the description links this host's pages
 * of the problem types. The document itself is built once; this is a shallow copy.
 */
export function documentFor(doc: Record<string, unknown>, baseUrl: string): Record<string, unknown> {
  const info = doc.info as Json;
  return {
    ...doc,
    info: { ...info, description: `${info.description}\n- Every problem \`type\` is a page: [${baseUrl}/errors](${baseUrl}/errors) lists what each means and what to do.` },
    servers: [{ url: baseUrl }],
  };
}
