import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { ATTENDANCE_STATES } from '../../../src/domain/attendance-states.js';
import { OFFER_TRANSITIONS } from '../../../src/domain/offer-workflow.js';
import { buildOpenApiDocument, documentFor } from '../../../src/platform/http/openapi-document.js';
import { problemTitle } from '../../../src/platform/http/problem.js';
import { appRouter } from '../../../src/router.js';
import { at, asList, maybe, asRecord } from '../../harness/json.js';

// Issue 12: the document a client generator reads (openapi-typescript in clients/typescript).
// The document is JSON no type describes here: read through `at` / `record` / `list` (test/harness/json.ts).
const doc = buildOpenApiDocument(appRouter, 'https://demo.example/api');
const op = (method: string, path: string) => asRecord(at(doc, 'paths', path, method), `${method} ${path}`);
const param = (method: string, path: string, name: string) => asList(op(method, path).parameters).find((p) => at(p, 'name') === name);
const operations = Object.entries(asRecord(doc.paths)).flatMap(([path, ops]) => Object.entries(asRecord(ops)).map(([method, o]) => ({ path, method, o: asRecord(o) })));
const parameters = (o: Record<string, unknown>) => asList(o.parameters ?? []);
const schemas = asRecord(at(doc, 'components', 'schemas'));

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1', async () => {
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
  });

  it('names a component schema for every resource, and no stale trpc-to-openapi error shapes', () => {
    const names = Object.keys(schemas);
    for (const n of ['Offer', 'Attendance', 'Edition', 'Organiser', 'Category', 'Account', 'Participant', 'Receipt', 'Debtor', 'Ledger', 'Booking', 'Problem', 'Reference', 'AttendanceCounts', 'Task', 'Allocation', 'BookEntry', 'ReceiptItem']) {
      expect(names).toContain(n);
    }
    expect(names.filter((n) => n.startsWith('error.'))).toEqual([]);
    expect(at(op('get', '/offers/{uuid}'), 'responses', '200', 'content', 'application/json', 'schema')).toEqual({ $ref: '#/components/schemas/Offer' });
    expect(at(op('get', '/receipts'), 'responses', '200', 'content', 'application/json', 'schema')).toEqual({ type: 'array', items: { $ref: '#/components/schemas/Receipt' } });
  });

  it('types query parameters: integers with defaults, booleans, enums and comma-separated enum lists', () => {
    expect(at(param('get', '/offers', 'itemsPerPage'), 'schema')).toEqual({ type: 'integer', minimum: 1, maximum: 200, default: 30 });
    expect(at(param('get', '/offers', 'page'), 'schema')).toMatchObject({ type: 'integer', minimum: 1, default: 1 });
    expect(at(param('get', '/offers', 'sort'), 'schema')).toEqual({ type: 'string', enum: ['name', 'begin', 'fee', 'createdAt', 'modifiedAt'] });
    expect(at(param('get', '/offers', 'order'), 'schema')).toEqual({ type: 'string', enum: ['asc', 'desc'], default: 'asc' });
    const status = param('get', '/offers', 'status');
    expect(status).toMatchObject({ style: 'form', explode: false, schema: { type: 'array', items: { enum: ['draft', 'completed', 'reviewed', 'published', 'cancelled', 'unpublished'] } } });
    const booleans = operations.flatMap(({ o }) => parameters(o).filter((p) => maybe(p, 'schema', 'type') === 'boolean'));
    expect(booleans.length).toBeGreaterThan(0);
    for (const { o } of operations) for (const p of parameters(o)) expect(at(p, 'schema', 'description') ?? '', String(at(p, 'name'))).not.toMatch(/^(one of|comma-separated|whole number)/);
  });

  it('marks optional bodies as not required, names transitions and defaults, and takes merge patches', () => {
    for (const [m, p] of [['post', '/offers/{uuid}/refill'], ['post', '/editions/{uuid}/allocate'], ['post', '/editions/{uuid}/commit'], ['post', '/offers/{uuid}/copy'], ['post', '/offers/{uuid}/variant'], ['post', '/receipts/{uuid}/reverse']]) {
      expect(at(op(m, p), 'requestBody', 'required'), p).toBe(false);
    }
    expect(at(op('post', '/categories'), 'requestBody', 'required')).toBe(true);
    const bodyProperty = (path: string, name: string) => at(op('post', path), 'requestBody', 'content', 'application/json', 'schema', 'properties', name);
    expect(at(bodyProperty('/offers/{uuid}/transition', 'transition'), 'enum')).toEqual([...OFFER_TRANSITIONS]);
    expect(at(bodyProperty('/attendances/{uuid}/transition', 'transition'), 'enum')).toContain('withdraw');
    expect(at(bodyProperty('/offers/{uuid}/refill', 'notify'), 'default')).toBe(true);
    for (const { method, o, path } of operations.filter((x) => x.method === 'patch' && x.o.requestBody)) {
      expect(Object.keys(asRecord(at(o, 'requestBody', 'content'))), path).toEqual(['application/merge-patch+json', 'application/json']);
    }
  });

  it('lists the errors each operation really returns, as problem+json with an example and headers', () => {
    const statuses = (m: string, p: string) => Object.keys(asRecord(op(m, p).responses)).filter((s) => s >= '400');
    expect(statuses('get', '/offers')).toEqual(['400', '401', '429', '503']);
    expect(statuses('get', '/categories/{uuid}')).toEqual(['401', '403', '404', '429', '503']);
    expect(statuses('delete', '/offers/{uuid}')).toEqual(['401', '403', '404', '409', '412', '429', '503']);
    expect(statuses('patch', '/offers/{uuid}')).toContain('412');
    expect(Object.keys(asRecord(op('get', '/offers/{uuid}').responses))).toContain('304');
    expect(statuses('post', '/categories')).toEqual(['400', '401', '403', '413', '415', '422', '429', '503']);
    expect(at(op('get', '/offers'), 'responses', '503', 'headers', 'Retry-After')).toBeDefined();
    for (const { o, path, method } of operations) {
      for (const [s, r] of Object.entries(asRecord(o.responses))) {
        expect(at(r, 'headers', 'RateLimit'), `${method} ${path} ${s}`).toEqual({ $ref: '#/components/headers/RateLimit' });
        if (s < '400') continue;
        expect(at(r, 'content', 'application/problem+json', 'example', 'status')).toBe(Number(s));
      }
      if (at(o, 'responses', '401')) expect(at(o, 'responses', '401', 'headers', 'WWW-Authenticate')).toBeDefined();
      expect(at(o, 'responses', '429', 'headers', 'Retry-After')).toBeDefined();
      expect(o.description, `${method} ${path}`).toMatch(/Access: /);
    }
    expect(at(op('get', '/offers'), 'responses', '200', 'headers', 'Cache-Control')).toBeDefined();
  });

  // Issue 24 (13): generated clients offered them as functions, the reference listed eight "Not allowed" entries.
  it('leaves out PATCH and DELETE of bookings and receipts, which only answer 405', () => {
    for (const p of ['/bookings/{uuid}', '/receipts/{uuid}']) {
      expect(Object.keys(asRecord(at(doc, 'paths', p))), p).toEqual(['get']);
    }
    expect(operations.some(({ o }) => at(o, 'responses', '405'))).toBe(false);
    expect(operations.some(({ o }) => /^Not allowed/.test(String(o.description)))).toBe(false);
  });

  // Issue 24 (12): the examples said "An error occurred".
  it('shows the real title in every problem example', () => {
    for (const { o, path, method } of operations) {
      for (const [s, r] of Object.entries(asRecord(o.responses))) {
        if (s < '400') continue;
        expect(at(r, 'content', 'application/problem+json', 'example', 'title'), `${method} ${path} ${s}`).toBe(problemTitle(Number(s)));
      }
    }
    expect(at(op('get', '/offers/{uuid}'), 'responses', '404', 'content', 'application/problem+json', 'example', 'title')).toBe('Not Found');
    expect(JSON.stringify(doc)).not.toContain('An error occurred');
  });

  // Issue 24 (9): Scalar's "Test Request" sent every query parameter that had a value (from/until/modifiedSince).
  it('marks every example of an optional query parameter as not sent, and leaves none unmarked', () => {
    expect(at(param('get', '/offers', 'from'), 'examples')).toEqual({ example: { summary: expect.any(String), value: '2027-07-05', 'x-disabled': true } });
    for (const { o, path } of operations) {
      for (const p of parameters(o).map((x) => asRecord(x)).filter((x) => x.in === 'query' && !x.required)) {
        const hasValue = maybe(p, 'schema', 'examples', 'length') || maybe(p, 'schema', 'default') !== undefined || maybe(p, 'schema', 'enum', 'length') || p.example !== undefined;
        if (hasValue) expect(Object.values(asRecord(p.examples ?? {})).map((e) => at(e, 'x-disabled')), `${path} ${String(p.name)}`).toEqual([true]);
      }
    }
  });

  // Issue 24 (9): an edition, an organiser and a child were all called "Fußball-Feriencamp".
  it('gives each resource examples of its own, references included', () => {
    /** The first example of a property of a component schema. */
    const example = (schema: string, property: string) => at(schemas, schema, 'properties', property, 'examples', 0);
    const names = ['Offer', 'Edition', 'Organiser', 'Category', 'Account', 'Participant'].map((n) => example(n, 'name'));
    expect(new Set(names).size).toBe(names.length);
    expect(example('Edition', 'alias')).not.toBe(example('Offer', 'alias'));
    expect(at(example('Offer', 'edition'), 'name')).toBe(example('Edition', 'name'));
    expect(at(example('Offer', 'hosts'), 0, 'name')).toBe(example('Organiser', 'name'));
    expect(at(example('Attendance', 'participant'), 'name')).toBe(example('Participant', 'name'));
    const body = (p: string, property: string) => asRecord(at(op('post', p), 'requestBody', 'content', 'application/json', 'schema', 'properties', property));
    expect(at(body('/editions', 'name'), 'examples', 0)).toBe(example('Edition', 'name'));
    expect(at(body('/organisers', 'name'), 'examples', 0)).toBe(example('Organiser', 'name'));
    expect(maybe(body('/webhooks', 'url'), 'examples', 0) ?? body('/webhooks', 'url').example).toMatch(/^https:\/\/.*hooks/);
  });

  // Issue 24 (14): every list says how many records match; spec 4.1 and 9.8: no `Link` header.
  it('documents X-Total-Count on every list and a Link header nowhere', () => {
    const arrays = operations.filter(({ method, o }) => method === 'get' && maybe(asRecord(o.responses)['200'], 'content', 'application/json', 'schema', 'type') === 'array');
    const paged = operations.filter(({ method, o }) => method === 'get' && parameters(o).some((p) => at(p, 'name') === 'page'));
    expect(arrays.length).toBeGreaterThanOrEqual(14);
    expect(paged.map((x) => x.path).sort()).toEqual(arrays.map((x) => x.path).sort());
    for (const { o, path } of arrays) {
      expect(at(o, 'responses', '200', 'headers', 'X-Total-Count'), path).toEqual({ $ref: '#/components/headers/X-Total-Count' });
    }
    for (const { o, path, method } of operations) {
      for (const [status, r] of Object.entries(asRecord(o.responses ?? {}))) expect(Object.keys(asRecord(at(r, 'headers') ?? {})), `${method} ${path} ${status}`).not.toContain('Link');
    }
    expect(Object.keys(asRecord(at(doc, 'components', 'headers')))).not.toContain('Link');
    expect(at(doc, 'info', 'description')).toContain('without a `Link` header');
    expect(at(op('get', '/offers/{uuid}'), 'responses', '200', 'headers', 'X-Total-Count')).toBeUndefined();
  });

  // Issue 24 (10, 11): `servers` is the address the request came in on; the description links the problem types.
  it('is served with the request\'s own address and a link to the problem type pages', () => {
    const served = documentFor(doc, 'http://localhost:8080/api');
    expect(served.servers).toEqual([{ url: 'http://localhost:8080/api' }]);
    expect(at(served, 'info', 'description')).toContain('[http://localhost:8080/api/errors](http://localhost:8080/api/errors)');
    expect(at(doc, 'info', 'description')).not.toContain('/errors]');
  });

  it('declares its tags, shows amounts in cents and the offer\'s counts with named keys', () => {
    const used = new Set(operations.flatMap(({ o }) => asList(o.tags ?? [])));
    expect(asList(doc.tags).map((t) => at(t, 'name')).sort()).toEqual([...used].sort());
    expect(at(schemas, 'Offer', 'properties', 'fee', 'description')).toContain('cents');
    expect(at(schemas, 'Ledger', 'properties', 'balance', 'description')).toContain('cents');
    // Plausible examples for the API reference's generated requests and responses.
    expect(at(schemas, 'Offer', 'properties', 'fee', 'examples')).toEqual([4500]);
    expect(at(schemas, 'Account', 'properties', 'email', 'examples', 0)).toMatch(/@/);
    const counts = asRecord(schemas.AttendanceCounts);
    expect(Object.keys(asRecord(counts.properties))).toEqual([...ATTENDANCE_STATES]);
    expect(counts.required).toEqual([...ATTENDANCE_STATES]);
  });
});

describe('the family channel and answer files in the document (issue 21)', () => {
  it('the family-applications operations answer arrays of the named Attendance; their errors are documented', () => {
    const submit = op('post', '/family-applications');
    expect(at(submit, 'responses', '201', 'content', 'application/json', 'schema')).toEqual({ type: 'array', items: { $ref: '#/components/schemas/Attendance' } });
    expect(Object.keys(asRecord(submit.responses))).toEqual(expect.arrayContaining(['401', '403', '409', '422', '429']));
    expect(at(submit, 'requestBody', 'content', 'application/json', 'schema', 'properties', 'participants', 'items')).toEqual({ $ref: '#/components/schemas/FamilyChild' });
    expect(at(schemas, 'FamilyChild', 'properties', 'wishes')).toMatchObject({ maxItems: 20, items: { $ref: '#/components/schemas/FamilyWish' } });
    expect(at(schemas, 'FamilyAccount', 'required')).toEqual(['email', 'firstname', 'lastname']);
    for (const action of ['confirm', 'consent']) {
      const o = op('post', `/family-applications/${action}`);
      expect(at(o, 'responses', '200', 'content', 'application/json', 'schema')).toEqual({ type: 'array', items: { $ref: '#/components/schemas/Attendance' } });
      expect(at(o, 'responses', '404')).toBeDefined();
      expect(o.description).toMatch(/website tokens only/);
    }
  });

  it('POST /files takes a binary body in each accepted type, with the name as a query parameter; GET /files/{uuid} answers binary', () => {
    const upload = op('post', '/files');
    expect(Object.keys(asRecord(at(upload, 'requestBody', 'content')))).toEqual(['application/pdf', 'image/png', 'image/jpeg']);
    expect(at(upload, 'requestBody', 'content', 'image/png', 'schema')).toEqual({ type: 'string', format: 'binary' });
    expect(asList(upload.parameters).map((p) => at(p, 'name'))).toEqual(expect.arrayContaining(['name', 'Content-Disposition']));
    expect(at(upload, 'responses', '201', 'content', 'application/json', 'schema')).toEqual({ $ref: '#/components/schemas/AnswerFile' });
    expect(Object.keys(asRecord(upload.responses))).toEqual(expect.arrayContaining(['413', '415']));
    const download = op('get', '/files/{uuid}');
    expect(Object.keys(asRecord(at(download, 'responses', '200', 'content')))).toEqual(['application/pdf', 'image/png', 'image/jpeg']);
    expect(at(download, 'responses', '200', 'headers', 'Content-Disposition')).toBeDefined();
    expect(at(schemas, 'Attendance', 'properties', 'files', 'items', 'required')).toEqual(['uuid', 'question', 'name', 'mimeType', 'size']);
  });
});
