import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { ATTENDANCE_STATES } from '../../../src/domain/attendance-states.js';
import { OFFER_TRANSITIONS } from '../../../src/domain/offer-workflow.js';
import { buildOpenApiDocument, documentFor } from '../../../src/platform/http/openapi-document.js';
import { problemTitle } from '../../../src/platform/http/problem.js';
import { appRouter } from '../../../src/router.js';

// Issue 12: the document a client generator reads (openapi-typescript in clients/typescript).
const doc = buildOpenApiDocument(appRouter, 'https://demo.example/api') as any;
const op = (method: string, path: string) => doc.paths[path][method];
const param = (method: string, path: string, name: string) => op(method, path).parameters.find((p: any) => p.name === name);
const operations = Object.entries<any>(doc.paths).flatMap(([path, ops]) => Object.entries<any>(ops).map(([method, o]) => ({ path, method, o })));

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1', async () => {
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
  });

  it('names a component schema for every resource, and no stale trpc-to-openapi error shapes', () => {
    const names = Object.keys(doc.components.schemas);
    for (const n of ['Offer', 'Attendance', 'Edition', 'Organiser', 'Category', 'Account', 'Participant', 'Receipt', 'Debtor', 'Ledger', 'Booking', 'Problem', 'Reference', 'AttendanceCounts', 'Task', 'Allocation', 'BookEntry', 'ReceiptItem']) {
      expect(names).toContain(n);
    }
    expect(names.filter((n) => n.startsWith('error.'))).toEqual([]);
    expect(op('get', '/offers/{uuid}').responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Offer' });
    expect(op('get', '/receipts').responses['200'].content['application/json'].schema).toEqual({ type: 'array', items: { $ref: '#/components/schemas/Receipt' } });
  });

  it('types query parameters: integers with defaults, booleans, enums and comma-separated enum lists', () => {
    expect(param('get', '/offers', 'itemsPerPage').schema).toEqual({ type: 'integer', minimum: 1, maximum: 200, default: 30 });
    expect(param('get', '/offers', 'page').schema).toMatchObject({ type: 'integer', minimum: 1, default: 1 });
    expect(param('get', '/offers', 'sort').schema).toEqual({ type: 'string', enum: ['name', 'begin', 'fee', 'createdAt', 'modifiedAt'] });
    expect(param('get', '/offers', 'order').schema).toEqual({ type: 'string', enum: ['asc', 'desc'], default: 'asc' });
    const status = param('get', '/offers', 'status');
    expect(status).toMatchObject({ style: 'form', explode: false, schema: { type: 'array', items: { enum: ['draft', 'completed', 'reviewed', 'published', 'cancelled', 'unpublished'] } } });
    const booleans = operations.flatMap(({ o }) => (o.parameters ?? []).filter((p: any) => p.schema?.type === 'boolean'));
    expect(booleans.length).toBeGreaterThan(0);
    for (const { o } of operations) for (const p of o.parameters ?? []) expect(p.schema.description ?? '', p.name).not.toMatch(/^(one of|comma-separated|whole number)/);
  });

  it('marks optional bodies as not required, names transitions and defaults, and takes merge patches', () => {
    for (const [m, p] of [['post', '/offers/{uuid}/refill'], ['post', '/editions/{uuid}/allocate'], ['post', '/editions/{uuid}/commit'], ['post', '/offers/{uuid}/copy'], ['post', '/offers/{uuid}/variant'], ['post', '/receipts/{uuid}/reverse']]) {
      expect(op(m, p).requestBody.required, p).toBe(false);
    }
    expect(op('post', '/categories').requestBody.required).toBe(true);
    expect(op('post', '/offers/{uuid}/transition').requestBody.content['application/json'].schema.properties.transition.enum).toEqual([...OFFER_TRANSITIONS]);
    expect(op('post', '/attendances/{uuid}/transition').requestBody.content['application/json'].schema.properties.transition.enum).toContain('withdraw');
    expect(op('post', '/offers/{uuid}/refill').requestBody.content['application/json'].schema.properties.notify.default).toBe(true);
    for (const { method, o, path } of operations.filter((x) => x.method === 'patch' && x.o.requestBody)) {
      expect(Object.keys(o.requestBody.content), path).toEqual(['application/merge-patch+json', 'application/json']);
    }
  });

  it('lists the errors each operation really returns, as problem+json with an example and headers', () => {
    const statuses = (m: string, p: string) => Object.keys(op(m, p).responses).filter((s) => s >= '400');
    expect(statuses('get', '/offers')).toEqual(['400', '401', '429', '503']);
    expect(statuses('get', '/categories/{uuid}')).toEqual(['401', '403', '404', '429', '503']);
    expect(statuses('delete', '/offers/{uuid}')).toEqual(['401', '403', '404', '409', '412', '429', '503']);
    expect(statuses('patch', '/offers/{uuid}')).toContain('412');
    expect(Object.keys(op('get', '/offers/{uuid}').responses)).toContain('304');
    expect(statuses('post', '/categories')).toEqual(['400', '401', '403', '413', '415', '422', '429', '503']);
    expect(op('get', '/offers').responses['503'].headers['Retry-After']).toBeDefined();
    for (const { o, path, method } of operations) {
      for (const [s, r] of Object.entries<any>(o.responses)) {
        expect(r.headers.RateLimit, `${method} ${path} ${s}`).toEqual({ $ref: '#/components/headers/RateLimit' });
        if (s < '400') continue;
        expect(r.content['application/problem+json'].example.status).toBe(Number(s));
      }
      if (o.responses['401']) expect(o.responses['401'].headers['WWW-Authenticate']).toBeDefined();
      expect(o.responses['429'].headers['Retry-After']).toBeDefined();
      expect(o.description, `${method} ${path}`).toMatch(/Access: /);
    }
    expect(op('get', '/offers').responses['200'].headers['Cache-Control']).toBeDefined();
  });

  // Issue 24 (13): generated clients offered them as functions, the reference listed eight "Not allowed" entries.
  it('leaves out PATCH and DELETE of bookings and receipts, which only answer 405', () => {
    for (const p of ['/bookings/{uuid}', '/receipts/{uuid}']) {
      expect(Object.keys(doc.paths[p]), p).toEqual(['get']);
    }
    expect(operations.some(({ o }) => o.responses['405'])).toBe(false);
    expect(operations.some(({ o }) => /^Not allowed/.test(o.description))).toBe(false);
  });

  // Issue 24 (12): the examples said "An error occurred".
  it('shows the real title in every problem example', () => {
    for (const { o, path, method } of operations) {
      for (const [s, r] of Object.entries<any>(o.responses)) {
        if (s < '400') continue;
        expect(r.content['application/problem+json'].example.title, `${method} ${path} ${s}`).toBe(problemTitle(Number(s)));
      }
    }
    expect(op('get', '/offers/{uuid}').responses['404'].content['application/problem+json'].example.title).toBe('Not Found');
    expect(JSON.stringify(doc)).not.toContain('An error occurred');
  });

  // Issue 24 (9): Scalar's "Test Request" sent every query parameter that had a value (from/until/modifiedSince).
  it('marks every example of an optional query parameter as not sent, and leaves none unmarked', () => {
    expect(param('get', '/offers', 'from').examples).toEqual({ example: { summary: expect.any(String), value: '2027-07-05', 'x-disabled': true } });
    for (const { o, path } of operations) {
      for (const p of (o.parameters ?? []).filter((x: any) => x.in === 'query' && !x.required)) {
        const hasValue = p.schema?.examples?.length || p.schema?.default !== undefined || p.schema?.enum?.length || p.example !== undefined;
        if (hasValue) expect(Object.values<any>(p.examples ?? {}).map((e) => e['x-disabled']), `${path} ${p.name}`).toEqual([true]);
      }
    }
  });

  // Issue 24 (9): an edition, an organiser and a child were all called "Fußball-Feriencamp".
  it('gives each resource examples of its own, references included', () => {
    const s = doc.components.schemas;
    const names = ['Offer', 'Edition', 'Organiser', 'Category', 'Account', 'Participant'].map((n) => s[n].properties.name.examples[0]);
    expect(new Set(names).size).toBe(names.length);
    expect(s.Edition.properties.alias.examples[0]).not.toBe(s.Offer.properties.alias.examples[0]);
    expect(s.Offer.properties.edition.examples[0].name).toBe(s.Edition.properties.name.examples[0]);
    expect(s.Offer.properties.hosts.examples[0][0].name).toBe(s.Organiser.properties.name.examples[0]);
    expect(s.Attendance.properties.participant.examples[0].name).toBe(s.Participant.properties.name.examples[0]);
    const body = (p: string) => op('post', p).requestBody.content['application/json'].schema.properties;
    expect(body('/editions').name.examples[0]).toBe(s.Edition.properties.name.examples[0]);
    expect(body('/organisers').name.examples[0]).toBe(s.Organiser.properties.name.examples[0]);
    expect(body('/webhooks').url.examples?.[0] ?? body('/webhooks').url.example).toMatch(/^https:\/\/.*hooks/);
  });

  // Issue 24 (14): every list says how many records match; spec 4.1 and 9.8: no `Link` header.
  it('documents X-Total-Count on every list and a Link header nowhere', () => {
    const arrays = operations.filter(({ method, o }) => method === 'get' && o.responses['200']?.content?.['application/json']?.schema?.type === 'array');
    const paged = operations.filter(({ method, o }) => method === 'get' && (o.parameters ?? []).some((p: any) => p.name === 'page'));
    expect(arrays.length).toBeGreaterThanOrEqual(14);
    expect(paged.map((x) => x.path).sort()).toEqual(arrays.map((x) => x.path).sort());
    for (const { o, path } of arrays) {
      expect(o.responses['200'].headers['X-Total-Count'], path).toEqual({ $ref: '#/components/headers/X-Total-Count' });
    }
    for (const { o, path, method } of operations) {
      for (const [status, r] of Object.entries<any>(o.responses ?? {})) expect(Object.keys(r.headers ?? {}), `${method} ${path} ${status}`).not.toContain('Link');
    }
    expect(Object.keys(doc.components.headers)).not.toContain('Link');
    expect(doc.info.description).toContain('without a `Link` header');
    expect(op('get', '/offers/{uuid}').responses['200'].headers['X-Total-Count']).toBeUndefined();
  });

  // Issue 24 (10, 11): `servers` is the address the request came in on; the description links the problem types.
  it('is served with the request\'s own address and a link to the problem type pages', () => {
    const served = documentFor(doc, 'http://localhost:8080/api') as any;
    expect(served.servers).toEqual([{ url: 'http://localhost:8080/api' }]);
    expect(served.info.description).toContain('[http://localhost:8080/api/errors](http://localhost:8080/api/errors)');
    expect(doc.info.description).not.toContain('/errors]');
  });

  it('declares its tags, shows amounts in cents and the offer\'s counts with named keys', () => {
    const used = new Set(operations.flatMap(({ o }) => o.tags ?? []));
    expect(doc.tags.map((t: any) => t.name).sort()).toEqual([...used].sort());
    expect(doc.components.schemas.Offer.properties.fee.description).toContain('cents');
    expect(doc.components.schemas.Ledger.properties.balance.description).toContain('cents');
    // Plausible examples for the API reference's generated requests and responses.
    expect(doc.components.schemas.Offer.properties.fee.examples).toEqual([4500]);
    expect(doc.components.schemas.Account.properties.email.examples[0]).toMatch(/@/);
    const counts = doc.components.schemas.AttendanceCounts;
    expect(Object.keys(counts.properties)).toEqual([...ATTENDANCE_STATES]);
    expect(counts.required).toEqual([...ATTENDANCE_STATES]);
  });
});

describe('the family channel and answer files in the document (issue 21)', () => {
  it('the family-applications operations answer arrays of the named Attendance; their errors are documented', () => {
    const submit = op('post', '/family-applications');
    expect(submit.responses['201'].content['application/json'].schema).toEqual({ type: 'array', items: { $ref: '#/components/schemas/Attendance' } });
    expect(Object.keys(submit.responses)).toEqual(expect.arrayContaining(['401', '403', '409', '422', '429']));
    expect(submit.requestBody.content['application/json'].schema.properties.participants.items).toEqual({ $ref: '#/components/schemas/FamilyChild' });
    expect(doc.components.schemas.FamilyChild.properties.wishes).toMatchObject({ maxItems: 20, items: { $ref: '#/components/schemas/FamilyWish' } });
    expect(doc.components.schemas.FamilyAccount.required).toEqual(['email', 'firstname', 'lastname']);
    for (const action of ['confirm', 'consent']) {
      const o = op('post', `/family-applications/${action}`);
      expect(o.responses['200'].content['application/json'].schema).toEqual({ type: 'array', items: { $ref: '#/components/schemas/Attendance' } });
      expect(o.responses['404']).toBeDefined();
      expect(o.description).toMatch(/website tokens only/);
    }
  });

  it('POST /files takes a binary body in each accepted type, with the name as a query parameter; GET /files/{uuid} answers binary', () => {
    const upload = op('post', '/files');
    expect(Object.keys(upload.requestBody.content)).toEqual(['application/pdf', 'image/png', 'image/jpeg']);
    expect(upload.requestBody.content['image/png'].schema).toEqual({ type: 'string', format: 'binary' });
    expect(upload.parameters.map((p: any) => p.name)).toEqual(expect.arrayContaining(['name', 'Content-Disposition']));
    expect(upload.responses['201'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/AnswerFile' });
    expect(Object.keys(upload.responses)).toEqual(expect.arrayContaining(['413', '415']));
    const download = op('get', '/files/{uuid}');
    expect(Object.keys(download.responses['200'].content)).toEqual(['application/pdf', 'image/png', 'image/jpeg']);
    expect(download.responses['200'].headers['Content-Disposition']).toBeDefined();
    expect(doc.components.schemas.Attendance.properties.files.items.required).toEqual(['uuid', 'question', 'name', 'mimeType', 'size']);
  });
});
