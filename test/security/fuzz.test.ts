import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { at, isRecord, asList, maybe, asRecord, useHarness, type TestResponse, type TestTenant } from '../harness/harness.js';
import { factories } from '../factories/index.js';
import { executorOf } from '../../src/platform/db/orm.js';
import { sql } from '../../src/platform/db/sql.js';
import { uuidToBase58 } from '../../src/platform/http/ids.js';
import { SERVER_LIMITS } from '../../src/platform/http/server.js';
import { buildOpenApiDocument } from '../../src/platform/http/openapi-document.js';
import { appRouter } from '../../src/router.js';

// Hostile input (spec 1, 7, 8; D10), driven from the tenant's own OpenAPI document so a new endpoint or filter
// is fuzzed without anyone remembering. For every operation: bodies from arbitrary JSON, wrong-type and huge
// variants of the documented properties, deep nesting, broken JSON and wrong content types; invalid UUIDs and
// base58 in paths; SQL fragments, control characters, unicode, %00 and very long values in every documented
// query parameter. Every answer must be below 500, every 4xx problem+json, and a refused request (or any
// read) must leave the tenant's tables exactly as they were. The fuzzer has a tenant of its own.
//
// Bounded: FUZZ_RUNS (default 60) runs per operation, within FUZZ_BUDGET_MS (default 30 s) for all of them;
// FUZZ_SEED replays a run.

const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
/** A request taking longer than this fails the run (a busy CI machine answers these in milliseconds). */
const SLOW_MS = 5_000;
/** Time for all property runs together; an operation that would overrun its share stops early (still counted). */
const BUDGET_MS = Number(process.env.FUZZ_BUDGET_MS ?? 30_000);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;

type Method = 'get' | 'post' | 'patch' | 'delete';
/** The JSON Schema keywords (OpenAPI 3.1: JSON Schema 2020-12) of the document's parameters and bodies this file reads. */
type Schema = {
  type?: string | string[];
  format?: string;
  description?: string;
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  minimum?: number;
  maximum?: number;
  maxItems?: number;
  maxLength?: number;
};
type Operation = { method: Method; path: string; params: { name: string; in: string }[]; body?: Schema; rawTypes?: string[] };
type Fuzzed = { path: string; query: string; body?: { json: unknown } | { raw: string; type?: string }; headers: Record<string, string>; auth: 'admin' | 'read' | 'none' | string };

const stats = { operations: 0, requests: 0, serverErrors: 0, refusedWrites: 0, accepted: 0 };
const failures: string[] = [];

let f: TestTenant;
let readToken: string;
/** Issue 21: the website token, for the operations only it may call (the family channel) and some uploads. */
let websiteToken: string;
let operations: Operation[] = [];
/** A record of every resource in the fuzz tenant, so paths also name records that exist. */
const seeds = new Map<string, string>();
let tables: string[] = [];

// ---- the tenant's state ------------------------------------------------------------------------------

/**
 * Row count and a hash of every row of every table of the fuzz tenant's schema. A token's `last_used_at` is left
 * out: it notes the hour of a token's use (issue 24), written beside any request, refused or not.
 */
async function fingerprint(): Promise<string> {
  const db = executorOf(h.orm);
  const parts = tables.map((t) => sql`select ${t}::text as t, count(*)::int as n,
      coalesce(sum(hashtextextended((to_jsonb(x) - 'last_used_at')::text, 0)), 0)::text as h
    from ${sql.table(`${f.tenant.schema}.${t}`)} x`);
  const res = await sql<{ t: string; n: number; h: string }>`${sql.join(parts, sql` union all `)}`.execute(db);
  return res.rows.map((r) => `${r.t}:${r.n}:${r.h}`).join(',');
}

// ---- hostile values -----------------------------------------------------------------------------------

const SQL_FRAGMENTS = [
  'FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30', 'FREQ=HOURLY;INTERVAL=24;BYHOUR=5', 'FREQ=SECONDLY;BYSECOND=60', 'FREQ=YEARLY;BYMONTH=4;BYMONTHDAY=31',
  "' or 1=1 --", "'; drop table offers; --", ';drop table participants', '" or ""="', "') or ('a'='a", '1; select pg_sleep(5)',
  "' union select null,null,null --", '\\', "\\'", '%', '_', '%%', '*', '$1', "E'\\x00'", '::uuid', 'NULL', 'null', 'undefined',
  'name desc; delete from offers', 'name,uuid', '-name', 'NAME', 'name ', ' name', 'begin)', '(select 1)', 'true', 'false',
];
const CONTROL = ['\u0000', '\u0001', '\b', '\t', '\n', '\r', '\u001b[31m', '\u007f', '\u0085', '\u2028', '\u2029', '\ufeff', '\ud800', '\udfff', '\uffff'];
const UNICODE = ['ä', 'ß', 'Ω', '🎉', '👨‍👩‍👧', '\u0301', 'İ', 'ǅ', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', 'ー', '٣', '\u202e', 'Ａ'];
const LONG = ['x'.repeat(501), 'x'.repeat(5_000), `${'ä'.repeat(300)}`, '9'.repeat(400)];

const hostileString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...SQL_FRAGMENTS, ...LONG) },
  { weight: 2, arbitrary: fc.array(fc.constantFrom(...CONTROL, ...UNICODE, 'a', ' ', '%', "'", '"'), { maxLength: 12 }).map((a) => a.join('')) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '0', '-1', '1e999', 'NaN', '2027-02-30', '2027-07-01T25:00:00+02:00', '0000-00-00', '9999-12-31T23:59:59+14:00', '-000001-01-01') },
);

const hugeString = fc.constantFrom('x'.repeat(100_000), 'ä'.repeat(100_000), `${'\u0000'.repeat(10)}${'y'.repeat(100_000)}`);

function deep(depth: number, kind: 'array' | 'object'): unknown {
  let v: unknown = 'x';
  for (let i = 0; i < depth; i++) v = kind === 'array' ? [v] : { a: v };
  return v;
}
const deepValue = fc.tuple(fc.integer({ min: 20, max: 3000 }), fc.constantFrom('array' as const, 'object' as const)).map(([d, k]) => deep(d, k));

/** A value of some other JSON type than `schema` says. */
function wrongType(schema: Schema): fc.Arbitrary<unknown> {
  const types = new Set<string>(typesOf(schema));
  const all: [string, fc.Arbitrary<unknown>][] = [
    ['string', hostileString],
    ['integer', fc.oneof(fc.integer(), fc.constantFrom(2 ** 31, -(2 ** 31) - 1, Number.MAX_SAFE_INTEGER + 2, 1e308, -0))],
    ['number', fc.oneof(fc.double({ noNaN: true }), fc.constantFrom(0.5, 1e-320, 1.5))],
    ['boolean', fc.boolean()],
    ['null', fc.constant(null)],
    ['array', fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 5 })],
    ['object', fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })],
  ];
  // A fraction is a wrong type for an integer; an integer is a right one for a number.
  const others = all.filter(([t]) => !types.has(t) && !(t === 'integer' && types.has('number')));
  return fc.oneof(...others.map(([, a]) => a));
}

function typesOf(schema: Schema): string[] {
  if (!schema) return [];
  if (schema.anyOf || schema.oneOf) return (schema.anyOf ?? schema.oneOf ?? []).flatMap(typesOf);
  if (Array.isArray(schema.type)) return schema.type;
  return schema.type ? [schema.type] : [];
}

/** A value that fits the schema, more or less: the right type with hostile content. */
function validish(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  const variants = schema?.anyOf ?? schema?.oneOf;
  if (variants) return fc.oneof(...variants.map((s) => validish(s, depth)));
  if (schema?.enum) return fc.constantFrom(...schema.enum);
  switch (schema?.type) {
    case 'string':
      if (schema.format === 'date-time') return fc.oneof(fc.constantFrom('2027-07-01T10:00:00+02:00', '2027-07-01T10:00:00Z', '2027-07-01', '2027-07-01T10:00:00'), hostileString);
      if (schema.format === 'date') return fc.oneof(fc.constantFrom('2016-05-23', '2999-01-01', '1900-01-01', '16-05-23'), hostileString);
      if (/UUID/.test(String(schema.description ?? ''))) return idValue;
      return fc.oneof(fc.string({ maxLength: 30 }), hostileString);
    case 'integer':
      return fc.oneof(fc.integer({ min: -5, max: 200 }), fc.integer(), fc.constantFrom(schema.minimum ?? 0, schema.maximum ?? 0, (schema.maximum ?? 0) + 1, (schema.minimum ?? 0) - 1));
    case 'number':
      return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(-90, 90, 180, -180, 90.0001));
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return depth > 2 ? fc.constant([]) : fc.array(validish(schema.items ?? {}, depth + 1), { maxLength: schema.maxItems ? Math.min(schema.maxItems + 1, 4) : 4 });
    case 'object':
      return depth > 2 ? fc.constant({}) : objectOf(schema, depth + 1);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** An object with some of the documented properties, each valid-ish, wrong-typed, huge or deeply nested. */
function objectOf(schema: Schema, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const props: Record<string, Schema> = schema?.properties ?? {};
  const entries = Object.entries(props).filter(([k]) => k !== 'uuid');
  const field = (s: Schema) =>
    fc.oneof(
      { weight: 6, arbitrary: validish(s, depth) },
      { weight: 3, arbitrary: wrongType(s) },
      { weight: depth === 0 ? 1 : 0, arbitrary: hugeString },
      { weight: depth === 0 ? 1 : 0, arbitrary: deepValue },
    );
  const known = fc.record(Object.fromEntries(entries.map(([k, s]) => [k, field(s)])), { requiredKeys: [] });
  const extra = fc.dictionary(fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'uuid', 'id', 'createdAt', 'tenant', 'schema'), fc.string({ maxLength: 10 })), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 });
  return fc.tuple(known, fc.option(extra, { freq: 4 })).map(([k, e]) => (e ? { ...e, ...k } : k));
}

/** Identifiers for paths and references: invalid UUIDs and base58, unknown ones, and (sometimes) real ones. */
const idValue = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(
    '', ' ', 'null', '0', '-1', '1e9', "' or 1=1 --", ';drop table offers', '%00', '\u0000', '..', '../..', 'ä', '🎉',
    '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '{6ba7b810-9dad-11d1-80b4-00c04fd430c8}',
    '6ba7b8109dad11d180b400c04fd430c8', '6ba7b810-9dad-11d1-80b4-00c04fd430c', '6ba7b810-9dad-11d1-80b4-00c04fd430c8x',
    'g6ba7b810-9dad-11d1-80b4-00c04fd430c', '1111111111111111111111', 'zzzzzzzzzzzzzzzzzzzzzz', '0OIl0OIl0OIl0OIl0OIl0O',
    '111111111111111111111', '11111111111111111111111', 'JPwcyDCgEup7hNgsnBoVM', 'JPwcyDCgEup7hNgsnBoVMUm', 'x'.repeat(3000),
  ) },
  { weight: 2, arbitrary: fc.uuid() },
  { weight: 2, arbitrary: fc.uuid().map((u) => uuidToBase58(u)) },
  { weight: 1, arbitrary: fc.uuid().map((u) => u.toUpperCase()) },
  { weight: 1, arbitrary: fc.uuid().map((u) => uuidToBase58(u).replace(/./, '0')) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
);

/** Every documented query parameter, each maybe set to a hostile value, maybe repeated; plus unknown ones. */
function queryOf(op: Operation): fc.Arbitrary<string> {
  const names = op.params.filter((p) => p.in === 'query').map((p) => p.name);
  const value = fc.oneof(
    { weight: 5, arbitrary: hostileString.map((v) => encodeURIComponent(safeForUri(v))) },
    { weight: 2, arbitrary: idValue.map((v) => encodeURIComponent(safeForUri(v))) },
    { weight: 1, arbitrary: fc.constantFrom('%00', '%', '%zz', '%E0%A4%A', '%C0%AF', '%FF', '+', '%2B02:00', '2027-07-01T10:00:00%2B02:00', '2027-07-01', '1', '200', '201', '0') },
    { weight: 1, arbitrary: fc.constant(`a${'%41'.repeat(3000)}`) },
  );
  const pairs = fc.array(fc.tuple(fc.constantFrom(...names, 'unknown', '__proto__', 'q[]', 'sort[0]', 'constructor'), value), { maxLength: Math.max(3, names.length) });
  return pairs.map((ps) => ps.map(([k, v]) => `${encodeURIComponent(k)}=${v}`).join('&'));
}

/** Lone surrogates cannot be percent-encoded (encodeURIComponent throws); they are sent as U+FFFD. */
function safeForUri(v: string): string {
  return v.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

const BROKEN_JSON = [
  '{', '}', '{"name":', '{"name":"x"', '{"name":"x",}', "{'name':'x'}", '{name:"x"}', 'NaN', 'undefined', '[', ']', '[1,2',
  '{"a":1}{"b":2}', '{"a":1} trailing', '\ufeff{"name":"x"}', '{"name":"\\u00"}', '{"name":"\\x41"}', '{"a":01}', '{"a":.5}',
  '{"a":1e99999}', '{"a":-}', '"just a string"', '42', 'null', 'true', '[]', '{"__proto__":{"polluted":true},"name":"Proto"}',
  '{"constructor":{"prototype":{"polluted":true}}}', `{"name":"${'x'.repeat(1_100_000)}"}`, '['.repeat(20_000), '{"a":'.repeat(20_000),
  `{"name":"x","name":"y"}`, '{"name":"\u0000"}', '{"name":"\\u0000"}', '\u0000', '   ', '\n\n',
];
const CONTENT_TYPES = [
  'application/json', 'application/json; charset=utf-8', 'application/json; charset=latin1', 'application/merge-patch+json',
  'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/problem+json',
  'APPLICATION/JSON', 'application/json;;;', 'application/jsonx', '*/*',
];

/** Which collection a reference property points into, for plausible bodies that name real records. */
const REFERENCE_TARGETS: Record<string, string> = {
  edition: '/editions', hosts: '/organisers', host: '/organisers', categories: '/categories', category: '/categories',
  account: '/accounts', offer: '/offers', participant: '/participants', attendance: '/attendances',
};

/** A value the schema accepts, as far as the document tells (the service may still refuse it). */
function plausible(schema: Schema, name: string, n: number): unknown {
  const variants = schema?.anyOf ?? schema?.oneOf;
  if (variants) return plausible(variants.find((v) => v.type !== 'null') ?? variants[0], name, n);
  if (schema?.enum) return schema.enum[n % schema.enum.length];
  switch (schema?.type) {
    case 'string': {
      if (schema.format === 'date-time') return '2027-07-01T10:00:00+02:00';
      if (schema.format === 'date') return '2016-05-23';
      if (/UUID/.test(String(schema.description ?? ''))) return seeds.get(REFERENCE_TARGETS[name] ?? '') ?? [...seeds.values()][n % seeds.size];
      if (/mail/i.test(name)) return `fuzz-${n}@example.org`;
      // Recurrence rules that match nothing: rrule used to search for a date up to the year 9999.
      if (name === 'recurrence') return ['FREQ=WEEKLY;COUNT=3', 'FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30', 'FREQ=HOURLY;INTERVAL=24;BYHOUR=5', 'FREQ=SECONDLY;BYSECOND=60'][n % 4];
      if (name === 'alias') return `fuzz-${n}`;
      return `Fuzz ${n}`.slice(0, schema.maxLength ?? 100);
    }
    case 'integer':
    case 'number':
      return Math.min(Math.max(1, schema.minimum ?? 1), schema.maximum ?? 1);
    case 'boolean':
      return n % 2 === 0;
    case 'array':
      return n % 2 === 0 ? [] : [plausible(schema.items ?? {}, name, n)];
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, s] of Object.entries(schema.properties ?? {})) {
        if (k === 'uuid') continue;
        if ((schema.required ?? []).includes(k) || (n + k.length) % 3 === 0) out[k] = plausible(s, k, n);
      }
      return out;
    }
    default:
      return null;
  }
}

/** A plausible body with one property (documented or not) set to something hostile. */
function mutatedBody(schema: Schema): fc.Arbitrary<Record<string, unknown>> {
  const props: Record<string, Schema> = schema?.properties ?? {};
  const names = Object.keys(props).filter((k) => k !== 'uuid');
  return fc.tuple(fc.nat(1000), fc.constantFrom(...names, 'unknownField'), fc.nat(5)).chain(([n, key, how]) => {
    const base = plausible(schema, '', n) as Record<string, unknown>;
    const s = props[key] ?? {};
    const value: fc.Arbitrary<unknown> = how === 0 ? wrongType(s) : how === 1 ? hugeString : how === 2 ? fc.constant(undefined) : validish(s);
    return value.map((v) => {
      const body = { ...base };
      if (v === undefined) delete body[key];
      else body[key] = v;
      return body;
    });
  });
}

/** Issue 21: a file body (POST /files): real magic bytes with junk behind, junk alone, in the documented types and others. */
function fileBodyOf(op: Operation): fc.Arbitrary<Fuzzed['body']> {
  const magic = fc.constantFrom('%PDF-1.4\n', '\x89PNG\r\n\x1a\n', '\xff\xd8\xff\xe0', 'GIF89a', '<html><script>', 'PK\x03\x04', '');
  const type = fc.constantFrom(...(op.rawTypes ?? []), 'application/octet-stream', 'text/html', 'image/svg+xml', 'application/json');
  return fc.tuple(magic, fc.string({ unit: 'binary', maxLength: 300 }), type).map(([m, junk, t]) => ({ raw: `${m}${junk}`, type: t }));
}

function bodyOf(op: Operation): fc.Arbitrary<Fuzzed['body']> {
  const schema = op.body ?? { type: 'object', properties: {} };
  if (op.rawTypes) return fc.oneof({ weight: 6, arbitrary: fileBodyOf(op) }, { weight: 1, arbitrary: objectOf(schema).map((json) => ({ json })) });
  return fc.oneof(
    { weight: 5, arbitrary: mutatedBody(schema).map((json) => ({ json })) },
    { weight: 6, arbitrary: objectOf(schema).map((json) => ({ json })) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((json) => ({ json })) },
    { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 3 })).map((json) => ({ json })) },
    { weight: 1, arbitrary: deepValue.map((v) => ({ json: { name: 'Tief', nested: v } })) },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...BROKEN_JSON), fc.option(fc.constantFrom(...CONTENT_TYPES), { freq: 4 })).map(([raw, type]) => ({ raw, type: type ?? 'application/json' })) },
    { weight: 1, arbitrary: fc.tuple(objectOf(schema), fc.constantFrom(...CONTENT_TYPES)).map(([json, type]) => ({ raw: JSON.stringify(json), type })) },
  );
}

const authOf = fc.oneof(
  { weight: 14, arbitrary: fc.constant<Fuzzed['auth']>('admin') },
  { weight: 1, arbitrary: fc.constant<Fuzzed['auth']>('read') },
  { weight: 1, arbitrary: fc.constant<Fuzzed['auth']>('none') },
  { weight: 1, arbitrary: fc.constantFrom('Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', "Bearer ' or 1=1 --", 'Bearer hpt_', `Bearer hpt_${'1'.repeat(22)}${'x'.repeat(44)}`, `Bearer hpt_${'z'.repeat(300)}`, 'bearer  x  y') },
);

const headersOf = fc.record({
  accept: fc.constantFrom('application/json', 'text/html', '*/*', 'application/xml', ''),
  'x-request-id': fc.constantFrom('abc', 'x'.repeat(100), "'; drop table --", 'ok-request-id-1234'),
}, { requiredKeys: [] });

function pathOf(op: Operation): fc.Arbitrary<string> {
  if (!op.path.includes('{uuid}')) return fc.constant(op.path);
  const seed = seeds.get(`/${op.path.split('/')[1]}`);
  const real = seed && op.method !== 'delete' ? [fc.constant(seed), fc.constant(uuidToBase58(seed))] : [];
  const raw = fc.constantFrom('%', '%zz', '%E0%A4%A', '%00', '%2F', '%2e%2e', 'a%2Fb');
  return fc.oneof(
    { weight: 6, arbitrary: idValue.map((v) => encodeURIComponent(safeForUri(v))) },
    { weight: 1, arbitrary: raw },
    ...real.map((arbitrary) => ({ weight: 3, arbitrary })),
  ).map((id) => op.path.replace('{uuid}', id));
}

function requestOf(op: Operation): fc.Arbitrary<Fuzzed> {
  const writes = op.method === 'post' || op.method === 'patch';
  return fc.record({
    path: pathOf(op),
    query: op.method === 'get' ? queryOf(op) : fc.option(queryOf(op), { freq: 5 }).map((q) => q ?? ''),
    body: writes ? bodyOf(op) : fc.option(fc.jsonValue({ maxDepth: 2 }).map((json) => ({ json })), { freq: 5 }).map((b) => b ?? undefined),
    headers: headersOf,
    auth: authOf,
  });
}

// ---- one request and its checks -------------------------------------------------------------------------

async function send(op: Operation, r: Fuzzed): Promise<TestResponse> {
  const headers: Record<string, string> = { ...r.headers };
  let token: string | null = WEBSITE_ONLY.has(`${op.method} ${op.path}`) || (op.rawTypes && r.path.length % 2 === 0) ? websiteToken : f.adminToken;
  if (r.auth === 'read') token = readToken;
  else if (r.auth === 'none') token = null;
  else if (r.auth !== 'admin') {
    token = null;
    headers.authorization = r.auth;
  }
  const path = `${r.path}${r.query ? `?${r.query}` : ''}`;
  if (r.body && 'raw' in r.body) {
    if (r.body.type) headers['content-type'] = r.body.type;
    return f.request(op.method.toUpperCase(), path, { token, rawBody: r.body.raw, headers });
  }
  return f.request(op.method.toUpperCase(), path, { token, body: r.body?.json, headers });
}

function describeRequest(op: Operation, r: Fuzzed): string {
  const body = r.body ? ('raw' in r.body ? `raw(${r.body.type}) ${r.body.raw.slice(0, 200)}` : JSON.stringify(r.body.json)?.slice(0, 300)) : '';
  return `${op.method.toUpperCase()} ${r.path.slice(0, 200)}?${r.query.slice(0, 300)} auth=${r.auth.slice(0, 40)} ${body}`;
}

/** The state after the previous request: only the fuzzer touches its tenant, so it is the state before the next. */
let lastFingerprint: string | undefined;

async function check(op: Operation, r: Fuzzed): Promise<void> {
  const before = lastFingerprint ?? (await fingerprint());
  lastFingerprint = undefined; // recomputed next time unless this check gets to the end
  const sentAt = Date.now();
  const res = await send(op, r);
  const ms = Date.now() - sentAt;
  stats.requests++;
  const what = `${describeRequest(op, r)}\n  -> ${res.status} ${String(res.headers['content-type'])} ${res.text.slice(0, 300)}`;
  // One request must not hold the (single-threaded) process: the request timeout cannot stop CPU work.
  if (ms > SLOW_MS) throw new Error(`took ${ms} ms: ${what}`);
  if (res.status >= 500) {
    stats.serverErrors++;
    failures.push(what);
    throw new Error(`5xx: ${what}`);
  }
  if (res.status >= 400) {
    if (!String(res.headers['content-type'] ?? '').startsWith('application/problem+json')) throw new Error(`not problem+json: ${what}`);
    const b = res.body;
    if (!isRecord(b) || b.status !== res.status || typeof b.type !== 'string' || typeof b.title !== 'string' || typeof b.detail !== 'string' || !b.detail) {
      throw new Error(`not a problem body: ${what}`);
    }
    if (/\bselect\b.*\bfrom\b|\bat .*\.(ts|js):\d+/i.test(res.text)) throw new Error(`internals in the body: ${what}`);
  }
  const after = (lastFingerprint = await fingerprint());
  if (op.method === 'get' || res.status >= 400) {
    if (after !== before) {
      const was = new Set(before.split(','));
      const changed = after.split(',').filter((p) => !was.has(p)).map((p) => p.split(':').slice(0, 2).join(' now '));
      throw new Error(`a ${op.method === 'get' ? 'read' : 'refused write'} changed the tenant's tables (${changed.join(', ')}): ${what}`);
    }
    if (op.method !== 'get') stats.refusedWrites++;
  } else {
    stats.accepted++;
  }
}

// ---- the run ------------------------------------------------------------------------------------------------

const started = Date.now();

const { h } = useHarness({ tenant: false });
beforeAll(async () => {
  f = await h.tenant({ name: 'Fuzz' });
  readToken = await f.token({ access: 'read' });
  websiteToken = await f.token({ role: 'website' });
  for (const [segment, factory] of Object.entries(factories)) seeds.set(segment, (await factory.create(f)).uuid);
  const db = executorOf(h.orm);
  const t = await sql<{ table_name: string }>`select table_name from information_schema.tables
    where table_schema = ${f.tenant.schema} and table_type = 'BASE TABLE' order by table_name`.execute(db);
  tables = t.rows.map((r) => r.table_name);
  const served = await f.get('/openapi.json', { token: null });
  expect(served.status).toBe(200);
  operations = operationsOf(served.body);
});

/**
 * The operations of the served document. Its schemas are taken as the JSON Schemas they are (the document is
 * valid OpenAPI 3.1: test/platform/http); this file reads only the keywords of `Schema`.
 */
function operationsOf(doc: unknown): Operation[] {
  const schemaOf = (value: unknown): Schema | undefined => (value === undefined ? undefined : (asRecord(value, 'a schema') as Schema));
  return Object.entries(asRecord(at(doc, 'paths'))).flatMap(([path, ops]) =>
    Object.entries(asRecord(ops)).map(([method, op]) => ({
      method: method as Method,
      path,
      params: asList(maybe(op, 'parameters') ?? []).map((p) => ({ name: String(at(p, 'name')), in: String(at(p, 'in')) })),
      body: schemaOf(maybe(op, 'requestBody', 'content', 'application/json', 'schema')),
      rawTypes: maybe(op, 'requestBody') && !maybe(op, 'requestBody', 'content', 'application/json') ? Object.keys(asRecord(maybe(op, 'requestBody', 'content') ?? {})) : undefined,
    })),
  );
}

afterAll(async () => {
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`[fuzz] operations covered: ${stats.operations}, requests fuzzed: ${stats.requests}, 5xx seen: ${stats.serverErrors}, refused writes unchanged: ${stats.refusedWrites}, accepted writes: ${stats.accepted}, ${seconds} s`);
  if (failures.length) console.log(`[fuzz] 5xx:\n${failures.slice(0, 20).join('\n')}`);
});

// The tests are named from the document the router builds (known when the file is collected); each one
// fuzzes the operation as the tenant's served document describes it, and the two must list the same operations.
const planned = operationsOf(buildOpenApiDocument(appRouter, 'https://fuzz.invalid/api') as never);

/** Operations only website tokens may call (D11: the family channel): fuzzed with the website token. */
const WEBSITE_ONLY = new Set(Object.values(appRouter._def.procedures as unknown as Record<string, { _def: { meta?: { roles?: string[]; openapi?: { method: string; path: string } } } }>)
  .map((p) => p._def.meta).filter((m) => m?.roles?.includes('website') && !m.roles.includes('admin'))
  .map((m) => `${m!.openapi!.method.toLowerCase()} ${m!.openapi!.path}`));

describe('fuzzing every operation of the OpenAPI document', () => {
  it('the served document lists the operations the router has', () => {
    expect(operations.map((o) => `${o.method} ${o.path}`)).toEqual(planned.map((o) => `${o.method} ${o.path}`));
    expect(operations.length).toBeGreaterThan(20);
    expect(tables.length).toBeGreaterThan(3);
  });

  let deadline = 0;
  for (const [i, { method, path }] of planned.entries()) {
    it(`${method.toUpperCase()} ${path}`, async () => {
      const op = operations.find((o) => o.method === method && o.path === path);
      if (!op) throw new Error(`${method} ${path} is not in the served OpenAPI document`);
      deadline ||= Date.now() + BUDGET_MS;
      // Past its share of the budget, an operation's remaining runs send nothing. (fast-check's own
      // interruptAfterTimeLimit abandons a run mid-request, which then writes during the next operation.)
      const until = Date.now() + Math.max(300, (deadline - Date.now()) / (planned.length - i));
      stats.operations++;
      await fc.assert(
        fc.asyncProperty(requestOf(op), async (r) => { if (Date.now() < until) await check(op, r); }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
    });
  }

  it('broken JSON and wrong content types on every write operation', async () => {
    // Bodies are read before routing, so each write operation gets a third of the list, in rotation: every
    // body is sent to several operations, and the run stays short.
    for (const [i, op] of operations.filter((o) => o.method === 'post' || o.method === 'patch').entries()) {
      const seed = seeds.get(`/${op.path.split('/')[1]}`)!;
      const path = op.path.replace('{uuid}', seed);
      for (const [j, raw] of BROKEN_JSON.entries()) {
        if ((i + j) % 3 !== 0) continue;
        await check(op, { path, query: '', body: { raw, type: 'application/json' }, headers: {}, auth: 'admin' });
      }
      for (const [j, type] of CONTENT_TYPES.entries()) {
        if ((i + j) % 3 !== 0) continue;
        await check(op, { path, query: '', body: { raw: '{"name":"Typ"}', type }, headers: {}, auth: 'admin' });
      }
    }
  }, 60_000);

  it('regression: U+0000 in a body is 422 naming the field, in a free-text filter 400 naming the parameter', async () => {
    const body = await f.post('/categories', { name: 'Null\u0000Byte' });
    expect(body.status, body.text).toBe(422);
    expect(maybe(body.body, 'violations', 0, 'propertyPath')).toBe('name');
    const nested = await f.post('/offers', { name: 'X', edition: seeds.get('/editions'), dates: [{ begin: '2027-07-01T10:00:00+02:00', end: '2027-07-01T12:00:00+02:00', recurrence: 'FREQ=DAILY\u0000' }] });
    expect(nested.status, nested.text).toBe(422);
    expect(maybe(nested.body, 'violations', 0, 'propertyPath')).toBe('dates[0].recurrence');
    for (const list of ['/categories', '/offers', '/participants']) {
      const res = await f.get(`${list}?q=a%00b`);
      expect(res.status, res.text).toBe(400);
      expect(at(res.body, 'detail')).toMatch(/^q: /);
    }
  });

  it('an oversized URL or header is refused as problem+json', async () => {
    const op = operations.find((o) => o.method === 'get' && o.path === '/offers')!;
    await check(op, { path: '/offers', query: `q=${'x'.repeat(SERVER_LIMITS.maxHeaderSize + 100)}`, headers: {}, auth: 'admin' });
    await check(op, { path: '/offers', query: '', headers: { 'x-filler': 'y'.repeat(SERVER_LIMITS.maxHeaderSize + 100) }, auth: 'admin' });
    const many: Record<string, string> = {};
    for (let i = 0; i < 3000; i++) many[`x-h${i}`] = 'v';
    await check(op, { path: '/offers', query: '', headers: many, auth: 'admin' });
  });
});
