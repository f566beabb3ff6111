import { beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import express from 'express';
import { expectProblem, useHarness, type TestResponse } from '../harness/harness.js';
import { createLogger, scrubText } from '../../src/platform/logging/logger.js';
import { procedure, router } from '../../src/platform/http/trpc.js';
import { response } from '../../src/platform/http/response.js';
import { createHttpServer, SERVER_LIMITS } from '../../src/platform/http/server.js';
import { qualified, sql } from '../../src/platform/db/sql.js';
import { dbOf } from '../../src/platform/context.js';
import { Organiser } from '../../src/resources/organisers/entity.js';
import { appRouter } from '../../src/router.js';

// Secrets and personal data (D3, D6, D9): tokens are never logged or echoed; names, e-mail addresses and dates
// of birth stay out of the log; errors never show SQL or stack traces; every response, also an error raised
// before routing or by node itself, carries the security headers of a JSON API; the server limits header
// size and header/request/keep-alive time.

const FIRSTNAME = 'Maximiliane';
const LASTNAME = 'Geheimnisvoll';
const BIRTHDAY = '2015-03-04';
const EMAIL = 'someone@example.org';
const CHILD_EMAIL = 'kind.geheim@example.org';

// TEST-ONLY procedures that fail the way real code can: a database error whose message carries the row
// (MikroORM puts the statement with its values into the message, PostgreSQL the failing row into `detail`),
// and a plain exception with SQL in its message.
const probeRouter = router({
  ormFailure: procedure
    .meta({ access: 'write', openapi: { method: 'POST', path: '/probe/orm-failure', tags: ['probe'] } })
    .input(z.object({}))
    .output(response(z.object({ ok: z.boolean() })))
    .mutation(async ({ ctx }) => {
      // An organiser without its name: MikroORM's validation error dumps the entity into its message.
      ctx.em.create(Organiser, { uuid: randomUUID(), name: null as unknown as string, alias: `o-${randomUUID()}`, email: EMAIL, phone: BIRTHDAY, description: `${FIRSTNAME} ${LASTNAME}` } as never);
      await ctx.em.flush();
      return { ok: true };
    }),
  ormNotNull: procedure
    .meta({ access: 'write', openapi: { method: 'POST', path: '/probe/orm-not-null', tags: ['probe'] } })
    .input(z.object({}))
    .output(response(z.object({ ok: z.boolean() })))
    .mutation(async ({ ctx }) => {
      // Through the ORM's connection: its exception carries PostgreSQL's detail (the failing row).
      await ctx.em.getConnection().execute(
        `insert into "${ctx.tenant.schema}"."organisers" (uuid, name, alias, email, phone, description) values (?, null, ?, ?, ?, ?)`,
        [randomUUID(), `o-${randomUUID()}`, CHILD_EMAIL, BIRTHDAY, `${FIRSTNAME} ${LASTNAME}`],
      );
      return { ok: true };
    }),
  sqlFailure: procedure
    .meta({ access: 'write', openapi: { method: 'POST', path: '/probe/sql-failure', tags: ['probe'] } })
    .input(z.object({}))
    .output(response(z.object({ ok: z.boolean() })))
    .mutation(async ({ ctx }) => {
      // A check the row fails (date of birth is a date): PostgreSQL names the value.
      await sql`insert into ${qualified(ctx.tenant.schema, 'participants')} (uuid, firstname, lastname, email, date_of_birth)
        values (${randomUUID()}, ${FIRSTNAME}, ${LASTNAME}, ${CHILD_EMAIL}, ${`${BIRTHDAY}x`}::date)`.execute(dbOf(ctx.em));
      return { ok: true };
    }),
  crash: procedure
    .meta({ access: 'read', openapi: { method: 'GET', path: '/probe/crash', tags: ['probe'] } })
    .input(z.object({}))
    .output(response(z.object({ ok: z.boolean() })))
    .query(() => {
      throw new Error(`select * from participants where email = '${EMAIL}'`);
    }),
});

const logLines: string[] = [];
const logStream = new Writable({
  write(chunk, _enc, cb) {
    logLines.push(String(chunk));
    cb();
  },
});
const logText = () => logLines.join('');

let readToken: string;
const responses: TestResponse[] = [];

async function record<T>(res: Promise<TestResponse<T>>): Promise<TestResponse<T>> {
  const r = await res;
  responses.push(r);
  return r;
}

/** The secret part of a token: everything after `hpt_` and the 22-character id. */
const secretOf = (token: string) => token.slice(4 + 22);

const { h, t } = useHarness({ log: createLogger('trace', logStream), router: router({ app: appRouter, probe: probeRouter }) });
beforeAll(async () => {
  readToken = await t.token({ access: 'read' });

  // A family and a child with personal data, read back, listed, filtered, changed.
  const account = await record(t.post('/accounts', { email: EMAIL, firstname: 'Erika', lastname: LASTNAME, phone: '030 999888' }));
  expect(account.status, account.text).toBe(201);
  const child = await record(t.post('/participants', { firstname: FIRSTNAME, lastname: LASTNAME, dateOfBirth: BIRTHDAY, email: CHILD_EMAIL, account: EMAIL }));
  expect(child.status, child.text).toBe(201);
  await record(t.get(`/participants/${child.body.uuid}`, { token: readToken }));
  await record(t.get(`/participants?account=${encodeURIComponent(EMAIL)}&q=${FIRSTNAME}`));
  await record(t.get(`/accounts?q=${encodeURIComponent(EMAIL)}`));
  await record(t.patch(`/participants/${child.body.uuid}`, { firstname: `${FIRSTNAME}a`, dateOfBirth: BIRTHDAY }));
  await record(t.get('/offers'));
  // Failing requests: invalid values echoing personal data, a foreign token, a token and an e-mail in the path.
  await record(t.post('/participants', { firstname: FIRSTNAME, lastname: LASTNAME, dateOfBirth: '2999-01-01', email: `${FIRSTNAME}@` }));
  await record(t.post('/accounts', { email: EMAIL }));
  await record(t.get('/offers', { token: `${t.adminToken.slice(0, -3)}abc` }));
  await record(t.get(`/accounts/${encodeURIComponent(EMAIL)}`));
  await record(t.get(`/offers/${t.adminToken}`));
  await record(t.get(`/participants/${FIRSTNAME}${LASTNAME}`));
  await record(t.post('/probe/orm-failure', {}));
  await record(t.post('/probe/orm-not-null', {}));
  await record(t.post('/probe/sql-failure', {}));
  await record(t.get('/probe/crash'));
});

describe('the log', () => {
  it('has the requests, and none of: tokens, their secrets, e-mail addresses, names, dates of birth', () => {
    const log = logText();
    expect(log).toContain('"msg":"request"');
    expect(log).toContain('"msg":"unhandled error"');
    const forbidden: [string, string][] = [
      ['admin token', t.adminToken], ['admin token secret', secretOf(t.adminToken)],
      ['read token', readToken], ['read token secret', secretOf(readToken)],
      ['account e-mail', EMAIL], ['account e-mail (encoded)', encodeURIComponent(EMAIL)], ['child e-mail', CHILD_EMAIL],
      ['first name', FIRSTNAME], ['last name', LASTNAME], ['date of birth', BIRTHDAY],
    ];
    const found = forbidden.filter(([, v]) => log.includes(v)).map(([k]) => k);
    const lines = logLines.filter((l) => forbidden.some(([, v]) => l.includes(v))).map((l) => l.slice(0, 400));
    expect(found, `the log holds personal data or secrets:\n${lines.join('\n')}`).toEqual([]);
  });

  it('keeps what an operator needs to find a failure: request id, status, error class and database code', () => {
    const errors = logLines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'unhandled error');
    expect(errors.length).toBe(4);
    for (const e of errors) {
      expect(e.requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(e.err?.type ?? e.err?.name).toBeTruthy();
    }
    expect(errors.some((e) => e.err?.code === '23502' && e.err?.table === 'organisers')).toBe(true); // not-null violation
    expect(errors.some((e) => e.err?.code === '22007' || e.err?.code === '22008')).toBe(true); // invalid date
  });
});

describe('error messages are scrubbed before they are logged', () => {
  it('PostgreSQL details appended by MikroORM, quoted values, e-mail addresses and tokens', () => {
    const cases: [string, string][] = [
      [`null value in column "email" of relation "accounts" violates not-null constraint\n - detail: Failing row contains (1, null, ${FIRSTNAME}, ${LASTNAME}, ${BIRTHDAY}).`,
        'null value in column "email" of relation "accounts" violates not-null constraint'],
      [`duplicate key value violates unique constraint "accounts_email_unique"\n - detail: Key (lower(email))=(${EMAIL}) already exists.`,
        'duplicate key value violates unique constraint "accounts_email_unique"'],
      [`Key (lower(email))=(${EMAIL}) already exists.`, 'Key (lower(email))=(…) already exists.'],
      [`Failing row contains (${FIRSTNAME}, ${LASTNAME}).`, 'Failing row contains (…).'],
      [`invalid input syntax for type uuid: "${FIRSTNAME}"`, 'invalid input syntax for type uuid: "…"'],
      [`token hpt_${'a'.repeat(60)} refused for ${EMAIL}`, 'token hpt_… refused for …@…'],
      ['relation "t_x.offers" does not exist', 'relation "t_x.offers" does not exist'],
      ['at file:///srv/node_modules/@trpc/server/dist/x.mjs:300:23', 'at file:///srv/node_modules/@trpc/server/dist/x.mjs:300:23'],
      ['für müller@bäckerei-süß.de', 'für …@…'],
    ];
    for (const [raw, scrubbed] of cases) expect(scrubText(raw)).toBe(scrubbed);
  });
});

describe('responses', () => {
  it('never echo a token', () => {
    for (const r of responses) {
      for (const token of [t.adminToken, readToken]) {
        expect(r.text).not.toContain(secretOf(token));
        expect(JSON.stringify(r.headers)).not.toContain(secretOf(token));
      }
    }
  });

  it('500s carry a generic problem without SQL, stack traces or personal data', async () => {
    for (const path of ['/probe/orm-failure', '/probe/orm-not-null', '/probe/sql-failure']) {
      const res = await t.post(path, {});
      expectProblem(res, 500);
      // `instance` names the request (its X-Request-Id), nothing of the cause.
      expect(res.body).toEqual({ type: '/errors/500', title: 'Internal Server Error', status: 500, detail: expect.any(String), instance: `urn:request:${res.headers['x-request-id']}` });
      assertNoInternals(res.text);
    }
    const crash = await t.get('/probe/crash');
    expectProblem(crash, 500);
    assertNoInternals(crash.text);
  });

  it('4xx bodies never show SQL or stack traces either', () => {
    for (const r of responses.filter((x) => x.status >= 400)) assertNoInternals(r.text);
  });
});

function assertNoInternals(text: string) {
  for (const pattern of [/\bselect\b/i, /\binsert\b/i, /\bfrom\s+"?t_/i, /\bat\s+\S+\s+\(/, /\.ts:\d+/, /node_modules/, /violates/i, /\bt_[a-z0-9]+\b/, EMAIL, FIRSTNAME, BIRTHDAY]) {
    if (typeof pattern === 'string') expect(text).not.toContain(pattern);
    else expect(text).not.toMatch(pattern);
  }
}

describe('security headers', () => {
  function expectSecurityHeaders(res: { status: number; headers: http.IncomingHttpHeaders }, what: string) {
    const hd = res.headers;
    expect(hd['x-content-type-options'], what).toBe('nosniff');
    expect(hd['x-frame-options'], what).toBe('DENY');
    expect(String(hd['content-security-policy']), what).toContain("frame-ancestors 'none'");
    expect(String(hd['content-security-policy']), what).toContain("default-src 'none'");
    expect(hd['referrer-policy'], what).toBe('no-referrer');
    expect(hd['strict-transport-security'], what).toMatch(/max-age=\d+/);
    expect(hd['x-powered-by'], what).toBeUndefined();
    expect(hd['set-cookie'], what).toBeUndefined();
    expect(hd['server'], what).toBeUndefined();
    if (res.status !== 204 || !what.includes('preflight')) expect(hd['cache-control'], what).toBeTruthy();
  }

  it('are on successes and on every kind of error', async () => {
    const cat = await t.post('/categories', { name: 'Kopfbedeckungen' });
    const cases: [string, TestResponse][] = [
      ['200 list', await t.get('/categories')],
      ['201 create', cat],
      ['204 delete', await t.del(`/categories/${cat.body.uuid}`)],
      ['200 anonymous public read', await t.get('/offers', { token: null })],
      ['200 openapi', await t.get('/openapi.json', { token: null })],
      ['204 preflight', await t.request('OPTIONS', '/categories', { token: null })],
      ['400 query', await t.get('/categories?itemsPerPage=0')],
      ['400 broken JSON', await t.request('POST', '/categories', { rawBody: '{"name":', headers: { 'content-type': 'application/json' } })],
      ['401 unknown token', await t.get('/categories', { token: 'hpt_nothing' })],
      ['401 no token', await t.get('/categories', { token: null })],
      ['403 read-only token', await t.post('/categories', { name: 'X' }, { token: readToken })],
      ['404 unknown record', await t.get(`/categories/${randomUUID()}`)],
      ['404 unknown path', await t.get('/nothing-here')],
      ['404 unknown host', await h.request('GET', '/api/offers', { host: 'nobody.invalid' })],
      ['405/404 method', await t.request('PUT', '/categories', {})],
      ['413 body too large', await t.request('POST', '/categories', { rawBody: `{"name":"${'x'.repeat(1_100_000)}"}`, headers: { 'content-type': 'application/json' } })],
      ['415 content type', await t.request('POST', '/categories', { rawBody: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } })],
      ['422 validation', await t.post('/categories', { name: '' })],
      ['500 failure', await t.get('/probe/crash')],
    ];
    for (const [what, res] of cases) {
      expectSecurityHeaders(res, what);
      if (res.status >= 400) expect(String(res.headers['content-type']), what).toMatch(/^application\/problem\+json/);
    }
  });

  it('are on the problem+json node answers itself: headers larger than the limit (431)', async () => {
    const res = await rawRequest(h.port, `GET /api/offers HTTP/1.1\r\nHost: ${t.host}\r\nX-Big: ${'a'.repeat(SERVER_LIMITS.maxHeaderSize + 1000)}\r\n\r\n`);
    expect(res.status).toBe(431);
    expectSecurityHeaders(res, '431');
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(res.body)).toMatchObject({ type: '/errors/431', status: 431 });
  });

  it('a malformed request line (400) is problem+json too', async () => {
    const res = await rawRequest(h.port, 'GARBAGE / NOT-HTTP\r\n\r\n');
    expect(res.status).toBe(400);
    expectSecurityHeaders(res, '400 parser');
    expect(JSON.parse(res.body)).toMatchObject({ type: '/errors/400', status: 400 });
  });
});

describe('server limits', () => {
  it('main.ts serves through createHttpServer, which sets header size and header/request/keep-alive timeouts', () => {
    const main = readFileSync(new URL('../../src/main.ts', import.meta.url), 'utf8');
    expect(main).toMatch(/createHttpServer\(app\)/);
    expect(main).not.toMatch(/app\.listen\(/);
    const server = createHttpServer(express());
    expect(server.requestTimeout).toBe(30_000);
    expect(server.headersTimeout).toBe(10_000);
    expect(server.headersTimeout).toBeLessThan(server.requestTimeout);
    expect(server.keepAliveTimeout).toBe(5_000);
    expect((server as unknown as { maxHeaderSize?: number }).maxHeaderSize).toBe(16 * 1024);
    server.close();
  });

  it('a client that never finishes its headers gets a 408 problem and the connection is closed', async () => {
    const server = createHttpServer(express(), { ...SERVER_LIMITS, headersTimeoutMs: 300, requestTimeoutMs: 600, connectionsCheckingIntervalMs: 50 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    try {
      const started = Date.now();
      const res = await rawRequest((server.address() as AddressInfo).port, 'GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ', { keepOpen: true });
      expect(res.status).toBe(408);
      expect(res.headers['content-type']).toBe('application/problem+json');
      expect(JSON.parse(res.body)).toMatchObject({ type: '/errors/408', status: 408 });
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      server.close();
    }
  });

  it('the body limit (1 MiB) and JSON depth limit (32) hold', async () => {
    expectProblem(await t.request('POST', '/categories', { rawBody: `{"name":"${'x'.repeat(1_100_000)}"}`, headers: { 'content-type': 'application/json' } }), 413);
    let deep: unknown = 'x';
    for (let i = 0; i < 40; i++) deep = { a: deep };
    expectProblem(await t.post('/categories', { name: 'Tief', deep }), 400);
    expectProblem(await t.request('POST', '/categories', { rawBody: '['.repeat(100_000), headers: { 'content-type': 'application/json' } }), 400);
  });
});

/** Sends raw bytes and parses the answer (node's client would refuse to send these). */
function rawRequest(port: number, payload: string, opts: { keepOpen?: boolean } = {}): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (c) => (data += c.toString('utf8')));
    socket.on('error', (e) => (data ? undefined : reject(e)));
    socket.on('close', () => {
      const [head, ...rest] = data.split('\r\n\r\n');
      const [statusLine, ...headerLines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of headerLines) {
        const i = l.indexOf(':');
        if (i > 0) headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
    socket.write(payload, () => {
      if (!opts.keepOpen) socket.end();
    });
    setTimeout(() => socket.destroy(), 10_000).unref();
  });
}
