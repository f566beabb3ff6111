import { beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { expectProblem, useHarness, type TestResponse, type TestTenant, at, maybe, asRecord } from '../harness/harness.js';
import { factories, factoryFor, type FactoryModule, type FactoryRecord } from '../factories/index.js';
import { appRouter } from '../../src/router.js';
import type { Meta } from '../../src/platform/http/trpc.js';
import { uuidToBase58 } from '../../src/platform/http/ids.js';
import { executorOf } from '../../src/platform/db/orm.js';
import { qualified, sql } from '../../src/platform/db/sql.js';
import { dispatchOutbox, queueMail } from '../../src/platform/mail/outbox.js';
import type { Mailer, OutgoingMail } from '../../src/platform/mail/mailer.js';
import { createRateLimiter } from '../../src/platform/rate-limit/index.js';

// D1: nothing of one tenant is ever visible on another tenant's host. The matrix below is generated from
// the router's own procedures, so a new endpoint is covered without anyone remembering: for every
// procedure, A's record addressed on B's host with B's admin token is 404 (and A's record stays as it
// was), A's token on B's host is 401, and B's lists (with any filter naming A's records) never contain
// A's records. A procedure whose resource has no factory in test/factories fails until one is added.

type Operation = { name: string; method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; path: string; meta: Meta };
/** The router's procedures by dotted name (`offers.copy`), as tRPC keeps them at run time. */
const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { meta?: Meta; inputs?: unknown[] } }>;

const operations: Operation[] = Object.entries(procedures)
  .flatMap(([name, proc]) => {
    const meta = proc._def.meta;
    return meta?.openapi ? [{ name, method: meta.openapi.method as Operation['method'], path: meta.openapi.path, meta }] : [];
  });

const hasId = (op: Operation) => op.path.includes('{uuid}');
const isList = (op: Operation) => op.method === 'GET' && !hasId(op);
const segmentOf = (path: string) => `/${path.split('/').filter(Boolean)[0]}`;
const actionOf = (op: Operation) => (op.method === 'POST' && hasId(op) ? op.path.split('/').pop()! : null);
const pathFor = (op: Operation, id: string) => op.path.replace('{uuid}', encodeURIComponent(id));

function missingFactory(op: Operation): Error {
  const segment = segmentOf(op.path);
  return new Error(
    `No test factory for ${segment} (procedure ${op.name}, ${op.method} ${op.path}): add ` +
      `test/factories/<entity>.factory.ts exporting create(t, overrides) (and updateBody / actionBodies) and ` +
      `register it under '${segment}' in test/factories/index.ts, so tenant isolation covers it.`,
  );
}

/** A body the procedure accepts, so that a 404 is not hidden behind a validation error. */
function plausibleBody(op: Operation, factory: FactoryModule): Record<string, unknown> | undefined {
  if (op.method === 'PATCH') {
    if (!factory.updateBody) throw new Error(`The factory for ${segmentOf(op.path)} has no updateBody: add a valid PATCH body for ${op.path}.`);
    return factory.updateBody;
  }
  const action = actionOf(op);
  if (action) {
    if (!factory.actionBodies || !(action in factory.actionBodies)) {
      throw new Error(`The factory for ${segmentOf(op.path)} has no actionBodies.${action}: add a valid body for POST ${op.path}.`);
    }
    return factory.actionBodies[action];
  }
  return undefined;
}

const send = (t: TestTenant, method: string, path: string, opts: { token: string | null; body?: unknown }): Promise<TestResponse> =>
  t.request(method, path, { token: opts.token, body: opts.body });

let A: TestTenant;
let B: TestTenant;
/** One record of every factory's resource on each tenant. */
const recordsA = new Map<string, FactoryRecord>();
const recordsB = new Map<string, FactoryRecord>();
/** Every UUID in A's records, nested ones too (an offer's edition, its dates). */
let uuidsOfA: string[] = [];
/** What a client could put in a filter to name A's records: UUIDs, base58 forms, aliases, e-mail addresses. */
let identifiersOfA: string[] = [];

const UUID_RE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

const { h } = useHarness({ tenant: false });
beforeAll(async () => {
  A = await h.tenant({ name: 'Gemeinde A' });
  B = await h.tenant({ name: 'Gemeinde B' });
  for (const [segment, factory] of Object.entries(factories)) {
    recordsA.set(segment, await factory.create(A));
    recordsB.set(segment, await factory.create(B));
  }
  const textA = JSON.stringify([...recordsA.values()]);
  uuidsOfA = [...new Set(textA.match(UUID_RE) ?? [])];
  // A's records must not share an identifier with B's by chance (a test bug, not a service one).
  const textB = JSON.stringify([...recordsB.values()]);
  expect(uuidsOfA.filter((u) => textB.includes(u))).toEqual([]);
  const named = [...recordsA.values()].flatMap((r) => [r.alias, r.email].filter((v): v is string => typeof v === 'string'));
  identifiersOfA = [...new Set([...[...recordsA.values()].map((r) => r.uuid as string), ...[...recordsA.values()].map((r) => uuidToBase58(r.uuid)), ...named])];
});

describe('the matrix covers the router', () => {
  it('lists every procedure with an OpenAPI path, and every path segment has a factory', () => {
    expect(operations.length).toBeGreaterThan(0);
    const withoutOpenApi = Object.entries(procedures)
      .filter(([, p]) => !p._def.meta?.openapi).map(([n]) => n);
    expect(withoutOpenApi, 'procedures without meta.openapi are not reachable and not covered').toEqual([]);
    const missing = [...new Set(operations.filter((op) => !factoryFor(op.path)).map((op) => segmentOf(op.path)))];
    if (missing.length) throw missingFactory(operations.find((op) => !factoryFor(op.path))!);
    console.log(`[isolation] procedures covered: ${operations.length} (${operations.filter(hasId).length} with {uuid}, ${operations.filter(isList).length} lists)`);
  });
});

describe("A's record on B's host with B's admin token is 404, and A's record is unchanged", () => {
  for (const op of operations.filter(hasId)) {
    it(`${op.method} ${op.path} (${op.name})`, async () => {
      const factory = factoryFor(op.path);
      if (!factory) throw missingFactory(op);
      const record = recordsA.get(segmentOf(op.path));
      const before = await A.get(`${segmentOf(op.path)}/${record!.uuid}`);
      expect(before.status, before.text).toBe(200);
      const body = plausibleBody(op, factory);
      for (const id of [record!.uuid, uuidToBase58(record!.uuid), String(record!.uuid).toUpperCase()]) {
        const res = await send(B, op.method, pathFor(op, id), { token: B.adminToken, body });
        const p = expectProblem(res, 404);
        // The detail may name the identifier the caller sent, never anything of A's record.
        for (const [k, v] of Object.entries(record!)) {
          if (k !== 'uuid' && typeof v === 'string' && v.length > 3) expect(p.detail, `${k} leaked`).not.toContain(v);
        }
      }
      const after = await A.get(`${segmentOf(op.path)}/${record!.uuid}`);
      expect(after.status).toBe(200);
      expect(after.body).toEqual(before.body);
    });
  }
});

describe("A's token on B's host is 401 for every procedure", () => {
  for (const op of operations) {
    it(`${op.method} ${op.path} (${op.name})`, async () => {
      const factory = factoryFor(op.path);
      if (!factory) throw missingFactory(op);
      const id = hasId(op) ? recordsB.get(segmentOf(op.path))!.uuid : '';
      const body = op.method === 'POST' && !hasId(op) ? {} : plausibleBody(op, factory);
      for (const token of [A.adminToken, await A.token({ access: 'read' })]) {
        const res = await send(B, op.method, pathFor(op, id), { token, body });
        expectProblem(res, 401);
        expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
        expect(res.text).not.toContain(token);
      }
      // And the other way round: B's token means nothing on A's host.
      const aId = hasId(op) ? recordsA.get(segmentOf(op.path))!.uuid : '';
      expectProblem(await send(A, op.method, pathFor(op, aId), { token: B.adminToken, body }), 401);
    });
  }
});

describe("B's lists never contain A's records", () => {
  for (const op of operations.filter(isList)) {
    it(`${op.method} ${op.path} (${op.name}), unfiltered and with every filter naming A's records`, async () => {
      if (!factoryFor(op.path)) throw missingFactory(op);
      const own = await B.get(`${op.path}?itemsPerPage=200`);
      expect(own.status, own.text).toBe(200);
      // The event feed's page is an object carrying its cursor (docs/decisions.md "Events"); every other list an array.
      expect(Array.isArray(op.path === '/events' ? at(own.body, 'events') : own.body)).toBe(true);
      // Not vacuous: B's own record of this resource is listed.
      if (op.path === segmentOf(op.path)) expect(own.text).toContain(recordsB.get(op.path)!.uuid);
      const leaked = (text: string) => uuidsOfA.filter((u) => text.toLowerCase().includes(u.toLowerCase()));
      expect(leaked(own.text)).toEqual([]);
      // Every query parameter the procedure reads, with every identifier of A's records.
      const params = Object.keys(inputShape(op.name)).filter((p) => p !== 'uuid');
      let filtered = 0;
      for (const param of params) {
        for (const value of identifiersOfA) {
          const res = await B.get(`${op.path}?${param}=${encodeURIComponent(value)}`);
          if (res.status === 200) {
            filtered++;
            expect(leaked(res.text), `${param}=${value}`).toEqual([]);
          } else {
            // A malformed value for this parameter (a date filter given a UUID); never a 5xx, never A's data.
            // The detail may quote the value the caller sent, nothing else of A's.
            expect([400, 404], `${param}=${value}: ${res.text}`).toContain(res.status);
            expect(leaked(res.text.split(value).join(''))).toEqual([]);
          }
        }
      }
      // The event feed has no reference filter (`after` is a cursor, `types` names event types): all are 400 there.
      if (op.path !== '/events') expect(filtered).toBeGreaterThan(0);
      // Anonymous callers of a public list on B see nothing of A either.
      if (op.meta.access === 'public') {
        const anon = await B.get(op.path, { token: null });
        expect(leaked(anon.text)).toEqual([]);
      }
    });
  }
});

/** The keys of a procedure's input object (query parameters of a list). */
function inputShape(name: string): Record<string, unknown> {
  const proc = procedures[name];
  const input = proc?._def.inputs?.[0] as { shape?: Record<string, unknown>; _zod?: { def?: { shape?: Record<string, unknown> } } } | undefined;
  return input?.shape ?? input?._zod?.def?.shape ?? {};
}

describe("a body naming A's records on B's host is refused", () => {
  // Body properties that reference another record (OpenAPI: "UUID, base58 form, or alias"), by the
  // collection they point into. A reference property missing here fails the test, so it gets mapped.
  const TARGETS: Record<string, string> = {
    edition: '/editions', hosts: '/organisers', host: '/organisers', categories: '/categories', category: '/categories',
    account: '/accounts', offer: '/offers', participant: '/participants',
    // POST /receipts/{uuid}/reverse: `items` names applications (a foreign one is not on the receipt: 422).
    items: '/attendances',
  };

  it('for every reference property of every write body, created or changed on B', async () => {
    const paths = at((await B.get('/openapi.json')).body, 'paths');
    let checked = 0;
    for (const op of operations.filter((o) => o.method === 'POST' || o.method === 'PATCH')) {
      const props = asRecord(maybe(paths, op.path, op.method.toLowerCase(), 'requestBody', 'content', 'application/json', 'schema', 'properties') ?? {});
      for (const [prop, propSchema] of Object.entries(props)) {
        const text = JSON.stringify(propSchema);
        if (!/UUID/.test(text) || prop === 'uuid') continue;
        if (/"type":"object"/.test(text)) continue; // nested records (question uuids) name nothing of another tenant
        const target = TARGETS[prop];
        expect(target, `reference property "${prop}" of ${op.method} ${op.path}: map it in TARGETS`).toBeDefined();
        const factory = factoryFor(op.path);
        if (!factory) throw missingFactory(op);
        const foreign = recordsA.get(target);
        if (!foreign) throw new Error(`No test factory for ${target}, which ${op.method} ${op.path} refers to in "${prop}": add one to test/factories.`);
        const isArray = /"type":"array"/.test(text);
        for (const ref of [foreign.uuid, uuidToBase58(foreign.uuid), foreign.alias ?? foreign.email].filter(Boolean)) {
          const value = isArray ? [ref] : ref;
          let res: TestResponse;
          if (!hasId(op)) {
            // A create: B's valid body with the reference pointed at A's record.
            res = await createVia(B, factory, { [prop]: value });
          } else {
            const own = recordsB.get(segmentOf(op.path));
            const base = plausibleBody(op, factory) ?? {};
            res = await send(B, op.method, pathFor(op, own!.uuid), { token: B.adminToken, body: { ...base, [prop]: value } });
          }
          // Spec 4.3 "Transfer" rule 6: a target offer the caller cannot see (another tenant's) is 404, not 422;
          // an alias there is a malformed identifier (422).
          const status = op.path === '/attendances/{uuid}/transfer' && prop === 'offer' && ref !== foreign.alias ? 404 : 422;
          expect(res.status, `${op.method} ${op.path} ${prop}=${JSON.stringify(value)}: ${res.text}`).toBe(status);
          expectProblem(res, status);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(0);
    console.log(`[isolation] foreign references refused in write bodies: ${checked}`);
    // B's records were not changed to point at A's.
    for (const [segment, record] of recordsB) {
      const now = await B.get(`${segment}/${record.uuid}`);
      expect(uuidsOfA.filter((u) => now.text.includes(u)), segment).toEqual([]);
    }
  });
});

/** A factory's create on `t`, returning the refused response instead of throwing. */
async function createVia(t: TestTenant, factory: FactoryModule, overrides: Record<string, unknown>): Promise<TestResponse> {
  const seen: TestResponse[] = [];
  const spy: TestTenant = { ...t, post: async (p, body, o) => { const r = await t.post(p, body, o); seen.push(r); return r; } };
  await factory.create(spy, overrides).catch(() => undefined);
  return seen[seen.length - 1];
}

describe('the family channel across municipalities (issue 21)', () => {
  it("B's website cannot apply for A's offer, name A's upload, use A's links or read A's files", async () => {
    const webA = await A.token({ role: 'website' });
    const webB = await B.token({ role: 'website' });
    const edition = (await B.post('/editions', { name: 'B-Sommer', procedure: 'firstcome' })).body.uuid;
    const offerB = (await B.post('/offers', { name: 'B-Angebot', edition, applicationQuestions: [{ label: 'Datei', type: 'file', required: false }] })).body;
    expect((await B.post(`/offers/${offerB.uuid}/transition`, { transition: 'publish' })).status).toBe(200);
    const offerA = String(at(recordsA.get('/family-applications'), 'offer', 'uuid'));
    const fileA = recordsA.get('/files')!.uuid;
    const family = (offer: string, answers: Record<string, string> = {}) => ({
      account: { email: 'grenze@example.org', firstname: 'Kim', lastname: 'Grenz' },
      participants: [{ firstname: 'Lea', lastname: 'Grenz', dateOfBirth: '2018-01-01', wishes: [{ offer, answers }] }],
    });
    const foreignOffer = expectProblem(await B.post('/family-applications', family(offerA), { token: webB }), 422);
    expect(foreignOffer.violations?.[0]?.propertyPath).toBe('participants[0].wishes[0].offer');
    const foreignFile = expectProblem(await B.post('/family-applications', family(offerB.uuid, { [offerB.applicationQuestions![0].uuid]: fileA }), { token: webB }), 422);
    expect(foreignFile.violations?.[0]?.propertyPath).toBe(`participants[0].wishes[0].answers.${offerB.applicationQuestions![0].uuid}`);
    // A's mail links mean nothing on B; A's website token is unknown there.
    const mailA = await sql<{ body: string }>`select body from ${qualified(A.tenant.schema, 'outbox')} where kind = 'family_confirmation' limit 1`.execute(executorOf(h.orm));
    const link = /bestaetigen\/([1-9A-HJ-NP-Za-km-z]+)/.exec(mailA.rows[0]?.body ?? '')?.[1];
    expect(link, 'the family-application factory queued a confirmation mail on A').toBeDefined();
    expectProblem(await B.post('/family-applications/confirm', { token: link! }, { token: webB }), 404);
    expectProblem(await B.post('/family-applications/confirm', { token: 'x' }, { token: webA }), 401);
    expectProblem(await B.request('GET', `/files/${fileA}`), 404);
  });
});

describe('mail, jobs and caches are keyed by tenant', () => {
  function capturingMailer(): Mailer & { sent: OutgoingMail[] } {
    const sent: OutgoingMail[] = [];
    return { sent, send: async (m) => { sent.push(m); }, close: () => {} };
  }

  it("a mail queued for A is sent for A only and never touches B's outbox", async () => {
    const db = executorOf(h.orm);
    // The factories' own mails (a family application's confirmation) go out first.
    for (const x of [A, B]) await dispatchOutbox(db, x.tenant, capturingMailer());
    for (const x of [A, B]) await sql`delete from ${qualified(x.tenant.schema, 'outbox')}`.execute(db);
    await queueMail({ tenant: B.tenant }, db, { kind: 'test', recipient: 'b-family@example.org', subject: 'B', body: 'für B' });
    await queueMail({ tenant: A.tenant }, db, { kind: 'test', recipient: 'a-family@example.org', subject: 'A', body: 'für A' });
    const outboxB = () => sql<{ recipient: string; attempts: number; sent_at: unknown }>`
      select recipient, attempts, sent_at from ${qualified(B.tenant.schema, 'outbox')}`.execute(db);
    const beforeB = (await outboxB()).rows;

    const mailer = capturingMailer();
    expect(await dispatchOutbox(db, A.tenant, mailer)).toMatchObject({ sent: 1, failed: 0, gaveUp: 0 });
    expect(mailer.sent.map((m) => [m.tenant, m.to])).toEqual([[A.slug, 'a-family@example.org']]);
    expect(mailer.sent[0].from).toContain('Gemeinde A');
    expect((await outboxB()).rows).toEqual(beforeB);
    expect(beforeB).toEqual([{ recipient: 'b-family@example.org', attempts: 0, sent_at: null }]);

    const mailerB = capturingMailer();
    expect(await dispatchOutbox(db, B.tenant, mailerB)).toMatchObject({ sent: 1, failed: 0, gaveUp: 0 });
    expect(mailerB.sent.map((m) => [m.tenant, m.to])).toEqual([[B.slug, 'b-family@example.org']]);
    expect(mailerB.sent[0].from).toContain('Gemeinde B');
  });

  it("the public offer-list cache never serves one tenant's page to another", async () => {
    const previous = process.env.PUBLIC_CACHE_MS;
    process.env.PUBLIC_CACHE_MS = '60000';
    try {
      const offerA = recordsA.get('/offers');
      const published = await A.post(`/offers/${offerA!.uuid}/transition`, { transition: 'publish' });
      expect(published.status, published.text).toBe(200);
      // The same anonymous query on both hosts, each twice (the second from the cache).
      for (let i = 0; i < 2; i++) {
        const a = await A.get('/offers?itemsPerPage=50', { token: null });
        const b = await B.get('/offers?itemsPerPage=50', { token: null });
        expect(a.text).toContain(offerA!.uuid);
        expect(uuidsOfA.filter((u) => b.text.includes(u))).toEqual([]);
      }
    } finally {
      process.env.PUBLIC_CACHE_MS = previous;
    }
  });

  it('the tenant registry resolves each host to its own tenant', async () => {
    expect((await h.registry.resolveHost(A.host))?.tenant.slug).toBe(A.slug);
    expect((await h.registry.resolveHost(B.host))?.tenant.slug).toBe(B.slug);
    expect((await h.registry.resolveHost(A.host))?.tenant.schema).not.toBe(B.tenant.schema);
  });

  it("the cached OpenAPI document of one host never names another's", async () => {
    for (let i = 0; i < 2; i++) {
      const a = await A.get('/openapi.json', { token: null });
      const b = await B.get('/openapi.json', { token: null });
      // Issue 24: the address the request came in on (plain http in the tests).
      expect(a.text).toContain(`http://${A.host}/api`);
      expect(a.text).not.toContain(B.host);
      expect(b.text).toContain(`http://${B.host}/api`);
      expect(b.text).not.toContain(A.host);
    }
  });

  it('anonymous rate-limit buckets are per tenant and client address', async () => {
    const limiter = createRateLimiter({
      log: { warn: () => {}, info: () => {} },
      keyPrefix: `iso${randomUUID().slice(0, 8)}`,
      anonymous: { points: 2, durationSeconds: 3600 },
    });
    try {
      expect((await limiter.consumeAnonymous(A.slug, '203.0.113.9')).allowed).toBe(true);
      expect((await limiter.consumeAnonymous(A.slug, '203.0.113.9')).allowed).toBe(true);
      expect((await limiter.consumeAnonymous(A.slug, '203.0.113.9')).allowed).toBe(false);
      expect((await limiter.consumeAnonymous(B.slug, '203.0.113.9')).allowed).toBe(true);
    } finally {
      await limiter.close();
    }
  });
});
