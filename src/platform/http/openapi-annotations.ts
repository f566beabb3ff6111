import type { Meta } from './trpc.js';

// What the generated schemas do not say, added by openapi-document.ts: query parameter types and defaults
// from the field helpers' descriptions, money in cents, examples by property name, each operation's access.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the OpenAPI document is walked and patched as free-form JSON
type Json = Record<string, any>;

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

const ids = {
  offer: '3f1c2b9e-8d4a-4c5e-9f6b-1a2b3c4d5e6f', variant: '8b2e4f6a-1c3d-4e5f-9a7b-2c4d6e8f0a1b', edition: '4c3d7a57-bdf2-40ba-bd22-ac2d6e5b44f7',
  organiser: '2a4c6e8f-0b1d-4f3a-8c5e-7a9b1c3d5e7f', category: '6e8f0a2b-4c6d-4e8f-9a1b-3c5d7e9f1a3b', account: '7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d',
  participant: '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b', sibling: '1d3f5a7c-9e1b-4d3f-8a5c-7e9b1d3f5a7c', debtor: 'c4e6a8b0-2d4f-4a6c-8e0b-2d4f6a8c0e2b',
  receipt: '9a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d', reversal: 'e1f3a5c7-9b1d-4f3a-8c5e-7a9c1e3f5a7c',
};

/**
 * Issue 24: each resource's own examples, over the ones by property name, so an edition, an organiser and a child
 * are not all called "Fußball-Feriencamp". Keyed by component schema; request bodies take their resource's.
 */
export const RESOURCE_EXAMPLES: Record<string, Record<string, unknown>> = {
  Edition: { name: 'Ferienprogramm 2027', alias: 'ferienprogramm-2027', uuid: ids.edition },
  Organiser: {
    name: 'TSV Musterstadt 1889 e. V.', alias: 'tsv-musterstadt', uuid: ids.organiser, email: 'jugend@tsv-musterstadt.example', phone: '012345 4711',
    street: 'Am Sportplatz 1', description: 'Fußball, Turnen und Leichtathletik für Kinder ab sechs Jahren.',
  },
  Category: { name: 'Sport & Bewegung', alias: 'sport-bewegung', uuid: ids.category },
  Account: { name: 'Katrin Müller', firstname: 'Katrin', lastname: 'Müller', uuid: ids.account },
  Participant: { name: 'Emma Müller', firstname: 'Emma', lastname: 'Müller', email: 'emma.mueller@familie-mueller.example', uuid: ids.participant },
  Debtor: { name: 'Katrin Müller', uuid: ids.debtor },
  Receipt: { uuid: ids.receipt },
  Webhook: { url: 'https://crm.musterstadt.example/hooks/ferienprogramm', description: 'Buchungssystem der Stadtverwaltung' },
  WebhookWithSecret: { url: 'https://crm.musterstadt.example/hooks/ferienprogramm', description: 'Buchungssystem der Stadtverwaltung' },
};

/** The component schema whose examples a request body of an operation (`<resource>-<action>`) takes. */
export const BODY_RESOURCE: Record<string, string> = {
  offers: 'Offer', editions: 'Edition', allocations: 'Edition', organisers: 'Organiser', categories: 'Category', accounts: 'Account',
  participants: 'Participant', attendances: 'Attendance', receipts: 'Receipt', webhooks: 'Webhook',
};

const ref = (uuid: string, name: string, alias?: string) => ({ uuid, name, ...(alias ? { alias } : {}) });

/** References (`{uuid, name, alias}`) by the property that holds them: each names a record of its own kind. */
const REFERENCE_EXAMPLES: Record<string, unknown> = {
  edition: ref(ids.edition, 'Ferienprogramm 2027', 'ferienprogramm-2027'),
  hosts: [ref(ids.organiser, 'TSV Musterstadt 1889 e. V.', 'tsv-musterstadt')],
  categories: [ref(ids.category, 'Sport & Bewegung', 'sport-bewegung')],
  offer: ref(ids.offer, 'Fußball-Feriencamp', 'fussball-feriencamp'),
  variantBase: ref(ids.offer, 'Fußball-Feriencamp', 'fussball-feriencamp'),
  variants: [ref(ids.variant, 'Fußball-Feriencamp', 'fussball-feriencamp-2')],
  participant: ref(ids.participant, 'Emma Müller'),
  participants: [ref(ids.participant, 'Emma Müller'), ref(ids.sibling, 'Paul Müller')],
  account: ref(ids.account, 'Katrin Müller'),
  debtor: ref(ids.debtor, 'Katrin Müller'),
  receipt: ref(ids.receipt, 'R-2027-0001'),
  reverses: ref(ids.receipt, 'R-2027-0001'),
  reversedBy: ref(ids.reversal, 'R-2027-0002'),
  reversals: [ref(ids.reversal, 'R-2027-0002')],
};

/** Examples next to each `$ref` to the Reference schema (OpenAPI 3.1 allows siblings of `$ref`). */
export function addReferenceExamples(schemas: Record<string, Json>): void {
  const isRef = (p: Json | undefined) => typeof p?.$ref === 'string' && p.$ref.endsWith('/Reference');
  for (const schema of Object.values(schemas)) {
    for (const [name, prop] of Object.entries<Json>(schema.properties ?? {})) {
      const example = REFERENCE_EXAMPLES[name];
      if (example === undefined || prop.examples) continue;
      if (isRef(prop) && !Array.isArray(example)) prop.examples = [example];
      else if (prop.type === 'array' && isRef(prop.items) && Array.isArray(example)) prop.examples = [example];
    }
  }
}

/**
 * Issue 24: the docs page's "Test Request" sends a query parameter that has a value (an example, a default, the
 * first of an enum), and an anonymous `GET /offers?from=…&until=…` answered `[]` and spent one of five requests of
 * the hour. Optional query parameters therefore carry their example as a named example marked `x-disabled` (Scalar
 * shows it, unticked): nothing is sent unless the caller ticks it.
 */
export function disableQueryExample(param: Json): Json {
  if (param.in !== 'query' || param.required) return param;
  const schema: Json = param.schema ?? {};
  const value = schema.examples?.[0] ?? schema.default ?? schema.enum?.[0] ?? (schema.items?.enum?.[0] !== undefined ? [schema.items.enum[0]] : undefined);
  if (value === undefined) return param;
  param.examples = { example: { summary: 'An example; not sent unless ticked', value, 'x-disabled': true } };
  return param;
}

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

/** Adds `examples` by property name wherever it fits (see EXAMPLES; `resource`: that schema's own first). */
export function addExamples(schema: unknown, resource?: string, seen = new Set<unknown>()): void {
  if (!schema || typeof schema !== 'object' || seen.has(schema)) return;
  seen.add(schema);
  const table: Record<string, unknown> = { ...EXAMPLES, ...(resource ? RESOURCE_EXAMPLES[resource] : {}) };
  const s = schema as Json;
  if (s.properties) {
    for (const [name, prop] of Object.entries<Json>(s.properties)) {
      if (!(name in table) || prop.$ref || prop.enum || prop.example !== undefined || prop.examples) continue;
      if (exampleFits(prop, table[name])) prop.examples = [table[name]];
    }
  }
  for (const value of Object.values(s)) {
    if (Array.isArray(value)) value.forEach((v) => addExamples(v, resource, seen));
    else if (value && typeof value === 'object') addExamples(value, resource, seen);
  }
}

export function accessText(meta: Meta | undefined): string {
  const roles = meta?.roles;
  const plural = (r: string) => (r === 'website' ? 'website tokens' : `${r}s`);
  const who = !roles ? 'admins and organisers (organisers: only their own organisers\' records)'
    : roles.length === 1 ? `${plural(roles[0]!)} only`
      : `${roles.map(plural).join(' and ')}${roles.includes('organiser') ? ' (organisers: only their own organisers\' records)' : ''}`;
  switch (meta?.access) {
    case 'public': return 'Access: anonymous callers while the municipality\'s `publicAccess` is on (they see public fields of published offers), or any valid token, legacy and website tokens included (these also while `publicAccess` is off).';
    case 'write': return `Access: a read-write token of ${who}.`;
    default: return `Access: a read or read-write token (not a legacy token) of ${who}.`;
  }
}

/** Query parameters typed from the descriptions the field helpers write (fields.ts `query`). */
export function typeParameter(param: Json): void {
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
  disableQueryExample(param);
}

/** Integer money fields say they are cents, wherever they appear. */
export function describeCents(schema: unknown, seen = new Set<unknown>()): void {
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
