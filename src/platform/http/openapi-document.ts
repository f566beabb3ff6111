import type { AnyRouter } from '@trpc/server';
import { generateOpenApiDocument } from 'trpc-to-openapi';
import { ATTENDANCE_TRANSITIONS, SYSTEM_TRANSITIONS } from '../../domain/attendance-states.js';
import { OFFER_TRANSITIONS } from '../../domain/offer-workflow.js';
import type { Meta } from './trpc.js';
import { webhookOperations } from '../webhooks/openapi.js';

// OpenAPI 3.1 at `<base>/openapi.json`, made for client generators (issue 12): trpc-to-openapi's document
// (zod-openapi: every resource's output schema is a named component through `.meta({ id })` in its
// schema.ts), post-processed here to say what the server really does:
// - success statuses 201/202/204 from each procedure's meta; PATCH/DELETE of receipts and bookings answer
//   only 405 (they exist to refuse);
// - the errors each operation can answer, as application/problem+json with an example, and the headers
//   (RateLimit, RateLimit-Policy, Retry-After, WWW-Authenticate, Cache-Control, Allow);
// - query parameters typed from the field helpers' descriptions (src/platform/http/fields.ts): integers,
//   booleans, enums, comma-separated enum lists (style form, explode false), with their defaults;
// - optional bodies not required, `application/merge-patch+json` on PATCH, `transition` as an enum,
//   amounts described as cents, each operation's access rule, declared tags.
// The stale `error.*` schemas trpc-to-openapi adds are removed: the server never sends those shapes.

type Json = Record<string, any>;

const PROBLEM_SCHEMA = {
  type: 'object',
  description: 'RFC 9457 problem details. `type` is `/errors/<status>`, or `/validation_errors/<code>` for a 422 with violations.',
  required: ['type', 'title', 'status', 'detail'],
  properties: {
    type: { type: 'string', examples: ['/errors/404', '/validation_errors/c1051bb4-d103-4f74-8988-acbcafc7fdc3'] },
    title: { type: 'string', examples: ['An error occurred'] },
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
  409: { description: 'Conflicts with the record\'s state', detail: 'The offer 3f1c2b9e-8d4a-4c5e-9f6b-1a2b3c4d5e6f has 3 applications and cannot be deleted.' },
  413: { description: 'Body larger than 1 MiB', detail: 'The request body is larger than 1048576 bytes.' },
  415: { description: 'A body without a JSON content type', detail: 'Send the body as application/json.' },
  422: { description: 'Validation failed; `violations` names each field', detail: 'name: This value should not be blank.', type: '/validation_errors/c1051bb4-d103-4f74-8988-acbcafc7fdc3' },
  429: { description: 'Rate limit exceeded: wait `Retry-After` seconds', detail: 'Too many requests; retry in 3 seconds.' },
  503: { description: 'The database cannot be reached for a moment: retry after `Retry-After` seconds', detail: 'The service cannot reach its database right now; retry in a few seconds.' },
};

const HEADERS: Json = {
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
  Allow: { description: 'The methods the record accepts.', schema: { type: 'string', examples: ['GET'] } },
};

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
};

/** Operations that answer 409 in some state (their services' `conflict`). */
const CONFLICTS = new Set([
  'offers-delete', 'offers-transition', 'participants-delete', 'editions-delete', 'attendances-transition', 'attendances-transfer',
  'attendances-update', 'attendances-delete', 'allocations-allocate', 'receipts-reverse', 'webhooks-redeliver',
]);

/** Actions whose body is optional (D10): a request without body or content type is accepted. */
const OPTIONAL_BODIES = new Set(['attendances-refill', 'allocations-allocate', 'allocations-commit', 'offers-copy', 'offers-variant', 'receipts-reverse']);

/** Operations that exist only to answer 405 (D8: bookings and receipts are never changed). */
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

const PARAM_DEFAULTS: Record<string, unknown> = { page: 1, itemsPerPage: 30, order: 'asc' };

const CENTS = new Set(['fee', 'amount', 'total', 'balance']);

/**
 * Example values by property name (the demo's Musterstadt), so the API reference shows plausible requests
 * and responses instead of "string" and 0. Set only where a property has no example, no enum and no $ref,
 * and only when the value's JSON type is one the property allows.
 */
const EXAMPLES: Record<string, unknown> = {
  uuid: '3f1c2b9e-8d4a-4c5e-9f6b-1a2b3c4d5e6f', name: 'Fußball-Feriencamp', alias: 'fussball-feriencamp',
  email: 'katrin.mueller@familie-mueller.example', firstname: 'Emma', lastname: 'Müller', phone: '012345 20301',
  street: 'Ahornweg 3', zip: '12345', city: 'Musterstadt', website: 'https://tsv-musterstadt.example',
  teaser: 'Drei Tage kicken wie die Profis', description: 'Dribbeln, passen, Tore schießen.', comment: 'Trainer bestätigt.',
  contact: 'Mehmet Aydın, 0170 1234567', meetingPoint: 'Sporthalle am Schulzentrum', meetingAddress: 'Schulweg 3, 12345 Musterstadt',
  meetingLat: 51.3181, meetingLng: 9.4712, bring: 'Sportkleidung und Trinkflasche', applyText: 'Anmeldung online.',
  fee: 4500, amount: 4500, total: 4500, balance: 4500, number: 'R-2027-0001', text: 'Fußball-Feriencamp: Emma Müller',
  dateOfBirth: '2016-03-14', recurrence: 'FREQ=WEEKLY;COUNT=4', minAge: 7, maxAge: 12, maxParticipants: 24, minParticipants: 10,
  vacancies: 3, seed: 2027, userPriority: 1, sorting: 1, title: 'Sommerferien', label: 'Kann Ihr Kind schwimmen?', maxApplications: 10,
  confirmed: 15, waitlisted: 46, unfulfilled: 0, decisionReason: 'Platz in der Verlosung erhalten', url: 'https://programme.example/angebote/fussball-feriencamp',
  attendance: '6c89e674-6ede-46d3-a16a-e85bd6132b0c', receipt: '9a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d', question: '0d1e2f3a-4b5c-4d6e-8f7a-8b9c0d1e2f3a',
  offer: '3f1c2b9e-8d4a-4c5e-9f6b-1a2b3c4d5e6f', participant: '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b', account: '7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d',
  edition: '4c3d7a57-bdf2-40ba-bd22-ac2d6e5b44f7',
};

function jsonTypeOf(v: unknown): string {
  return typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v;
}

function exampleFits(prop: Json, value: unknown): boolean {
  const types: string[] = Array.isArray(prop.type) ? prop.type : prop.type ? [prop.type] : (prop.anyOf ?? prop.oneOf ?? []).map((s: Json) => s.type).filter(Boolean);
  const t = jsonTypeOf(value);
  if (!(types.includes(t) || (t === 'integer' && types.includes('number')))) return false;
  if (typeof value === 'string' && ((prop.maxLength != null && value.length > prop.maxLength) || (prop.pattern && !new RegExp(prop.pattern, 'u').test(value)))) return false;
  if (typeof value === 'number' && ((prop.minimum != null && value < prop.minimum) || (prop.maximum != null && value > prop.maximum))) return false;
  return true;
}

/** Adds `examples` by property name wherever it fits (see EXAMPLES). */
function addExamples(schema: unknown, seen = new Set<unknown>()): void {
  if (!schema || typeof schema !== 'object' || seen.has(schema)) return;
  seen.add(schema);
  const s = schema as Json;
  if (s.properties) {
    for (const [name, prop] of Object.entries<Json>(s.properties)) {
      if (!(name in EXAMPLES) || prop.$ref || prop.enum || prop.example !== undefined || prop.examples) continue;
      if (exampleFits(prop, EXAMPLES[name])) prop.examples = [EXAMPLES[name]];
    }
  }
  for (const value of Object.values(s)) {
    if (Array.isArray(value)) value.forEach((v) => addExamples(v, seen));
    else if (value && typeof value === 'object') addExamples(value, seen);
  }
}

function accessText(meta: Meta | undefined): string {
  const roles = meta?.roles;
  const who = !roles ? 'admins and organisers (organisers: only their own organisers\' records)'
    : roles.length === 1 ? `${roles[0]}s only`
      : `${roles.join(' and ')}s (organisers: only their own organisers' records)`;
  switch (meta?.access) {
    case 'public': return 'Access: anonymous callers while the municipality\'s `publicAccess` is on (they see public fields of published offers), or any valid token, legacy tokens included.';
    case 'write': return `Access: a read-write token of ${who}.`;
    default: return `Access: a read or read-write token (not a legacy token) of ${who}.`;
  }
}

/** Query parameters typed from the descriptions the field helpers write (fields.ts `query`). */
function typeParameter(param: Json): void {
  const schema: Json = param.schema ?? {};
  const description: string = schema.description ?? '';
  let m: RegExpMatchArray | null;
  if ((m = description.match(/^one of: (.+)$/))) {
    param.schema = { type: 'string', enum: m[1].split(', ') };
  } else if ((m = description.match(/^comma-separated, any of: (.+)$/))) {
    param.schema = { type: 'array', items: { type: 'string', enum: m[1].split(', ') }, minItems: 1 };
    param.style = 'form';
    param.explode = false;
    param.description = 'Comma-separated list; matches any of them.';
  } else if (description === 'true/false, 1/0 or yes/no') {
    param.schema = { type: 'boolean' };
    param.description = '`true` or `false` (also 1/0, yes/no).';
  } else if ((m = description.match(/^whole number from (-?\d+) to (-?\d+)$/))) {
    param.schema = { type: 'integer', minimum: Number(m[1]), maximum: Number(m[2]) };
  } else if (description.startsWith('date YYYY-MM-DD')) {
    param.description = 'A date `YYYY-MM-DD` (a whole day in Europe/Berlin) or an ISO 8601 timestamp with offset.';
    param.schema = { type: 'string', examples: ['2027-07-05'] };
  }
  if (param.name in PARAM_DEFAULTS) param.schema.default = PARAM_DEFAULTS[param.name];
  if (param.name === 'itemsPerPage') param.description = 'Page size, default 30; above 200 is 400 (never silently capped).';
  if (param.name === 'page') param.description = 'Page number from 1; a page past the end is `[]`.';
  if (param.name === 'uuid' && param.in === 'path') {
    param.description = 'The record\'s UUID, or its 22-character base58 form.';
    param.schema = { type: 'string', examples: ['3f1c2b9e-8d4a-4c5e-9f6b-1a2b3c4d5e6f'] };
  }
}

/** Integer money fields say they are cents, wherever they appear. */
function describeCents(schema: unknown, seen = new Set<unknown>()): void {
  if (!schema || typeof schema !== 'object' || seen.has(schema)) return;
  seen.add(schema);
  const s = schema as Json;
  if (s.properties) {
    for (const [name, prop] of Object.entries<Json>(s.properties)) {
      if (CENTS.has(name) && !String(prop.description ?? '').includes('cents')) {
        prop.description = prop.description ? `${prop.description} (integer cents)` : 'Integer cents (1250 = 12.50 EUR).';
      }
    }
  }
  for (const value of Object.values(s)) {
    if (Array.isArray(value)) value.forEach((v) => describeCents(v, seen));
    else if (value && typeof value === 'object') describeCents(value, seen);
  }
}

function problemResponse(status: number, headers: Json): Json {
  const e = ERRORS[status];
  return {
    description: e.description,
    headers,
    content: {
      'application/problem+json': {
        schema: { $ref: '#/components/schemas/Problem' },
        example: {
          type: e.type ?? `/errors/${status}`,
          title: 'An error occurred',
          status,
          detail: e.detail,
          ...(status === 422 ? { violations: [{ propertyPath: 'name', message: 'This value should not be blank.', code: 'c1051bb4-d103-4f74-8988-acbcafc7fdc3' }] } : {}),
        },
      },
    },
  };
}

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
      '- Lists are pages: `page` from 1, `itemsPerPage` 1-200 (default 30). A short page is the last one.',
      '- Rate limits: 300 requests per token, refilled at 100 a minute; anonymous callers 5 an hour. Every response carries `RateLimit` and `RateLimit-Policy`; a 429 also `Retry-After`.',
    ].join('\n'),
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An opaque token `hpt_...` issued with `npm run cli -- token issue`.' } },
  }) as unknown as { paths: Record<string, Record<string, Json>>; components?: Json; tags?: Json[] };

  const metaByOperation = new Map<string, Meta>();
  for (const proc of Object.values(router._def.procedures as Record<string, { _def: { meta?: Meta } }>)) {
    const m = proc._def.meta;
    if (m?.openapi) metaByOperation.set(`${m.openapi.method.toLowerCase()} ${m.openapi.path}`, m);
  }

  doc.components ??= {};
  doc.components.schemas ??= {};
  for (const key of Object.keys(doc.components.schemas)) if (key.startsWith('error.')) delete doc.components.schemas[key];
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
      for (const t of op.tags ?? []) usedTags.add(t);
      const responses: Json = op.responses ?? {};
      for (const key of Object.keys(responses)) if (/^[45]\d\d$|^default$/.test(key)) delete responses[key];

      // Success response.
      const status = meta?.successStatus ?? 200;
      const ok = responses['200'];
      delete responses['200'];
      if (REFUSING.has(id)) {
        op.description = `Not allowed: ${path.startsWith('/bookings') ? 'bookings' : 'receipts'} are never ${method === 'patch' ? 'changed' : 'deleted'}; this answers 405 with \`Allow\` (404 for an unknown record).`;
      } else if (ok) {
        const headers: Json = { ...limitHeaders };
        if (meta?.access === 'public' && method === 'get') headers['Cache-Control'] = h('Cache-Control');
        responses[String(status)] = status === 204
          ? { description: 'No content', headers }
          : { ...ok, description: status === 201 ? 'Created' : status === 202 ? 'Accepted: the work continues in the background' : 'OK', headers };
      }

      // Errors this operation can answer.
      const params: Json[] = op.parameters ?? [];
      const hasBody = method === 'post' || method === 'patch' || method === 'put';
      const errors = new Set<number>([401, 429, 503]);
      if (meta?.access !== 'public') errors.add(403);
      if (path.includes('{uuid}') || id === 'attendances-list') errors.add(404);
      if (params.some((p) => p.in === 'query')) errors.add(400);
      if (hasBody && !REFUSING.has(id)) for (const s of [400, 413, 415, 422]) errors.add(s);
      if (CONFLICTS.has(id)) errors.add(409);
      if (REFUSING.has(id)) errors.add(405);
      for (const s of [...errors].sort()) {
        const headers: Json = { ...limitHeaders };
        if (s === 401) headers['WWW-Authenticate'] = h('WWW-Authenticate');
        if (s === 429 || s === 503) headers['Retry-After'] = h('Retry-After');
        if (s === 405) headers.Allow = h('Allow');
        responses[String(s)] = problemResponse(s, headers);
      }
      // Issue 13: conditional requests and Idempotency-Key (src/platform/http/conditional.ts, idempotency.ts).
      const header = (name: string, description: string) => ({ name, in: 'header', required: false, description, schema: { type: 'string' } });
      if (method === 'get') {
        params.push(header('If-None-Match', 'ETag(s) of a representation the client has; a match gives 304 without a body'));
        responses['304'] = { description: 'Not modified (If-None-Match matched the ETag)', headers: { ...limitHeaders } };
      }
      if ((method === 'patch' || method === 'delete') && !REFUSING.has(id)) {
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
      if (!REFUSING.has(id)) op.description = [op.description ?? summary, accessText(meta)].filter(Boolean).join('\n\n');
      if (meta?.access === 'public') op.security = [{}, { bearer: [] }];
      else op.security = [{ bearer: [] }];
    }
  }
  // Issue 14: what the service POSTs to a webhook subscription, per event type (OpenAPI 3.1 `webhooks`).
  const hooks = webhookOperations(schemas);
  if (Object.keys(hooks).length > 0) (doc as Json).webhooks = hooks;
  doc.tags = [...usedTags].sort().map((name) => ({ name, description: TAGS[name] ?? name }));
  describeCents(doc.components.schemas);
  describeCents(doc.paths);
  addExamples(doc.components.schemas);
  const names: Record<string, string> = {
    Account: 'Katrin Müller', Participant: 'Emma Müller', Debtor: 'Katrin Müller', Organiser: 'TSV Musterstadt 1889 e. V.',
    Category: 'Sport & Bewegung', Edition: 'Ferienprogramm 2027', Ledger: 'Katrin Müller', Task: 'Sommerferien',
  };
  for (const [schema, name] of Object.entries(names)) {
    const prop = schemas[schema]?.properties?.name;
    if (prop?.examples) prop.examples = [name];
  }
  for (const ops of Object.values(doc.paths)) for (const o of Object.values(ops)) addExamples(o.requestBody);
  return doc as unknown as Record<string, unknown>;
}
