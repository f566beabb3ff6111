import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createApp } from '../../../src/app.js';
import { insertToken } from '../../../src/platform/auth/tokens.js';
import { createOrm, executorOf, type Orm } from '../../../src/platform/db/orm.js';
import { createHttpServer } from '../../../src/platform/http/server.js';
import { createLogger } from '../../../src/platform/logging/logger.js';
import { addTenant } from '../../../src/platform/tenancy/operations.js';
import { TenantRegistry } from '../../../src/platform/tenancy/registry.js';
import { generousRateLimiter, useHarness, at, asRecord } from '../../harness/harness.js';
import { freePort, PGBOUNCER_BIN, startPgBouncer, type PgBouncer } from '../../harness/pgbouncer.js';
import { httpRequest } from '../../harness/processes.js';
import { entities } from '../../../src/entities.js';

// A database that cannot be reached is an outage: 503 problem+json with Retry-After, one warning when it
// starts and one when it ends, never a stack trace per request. Through the real express stack, with the
// database behind a closed port, or behind a PgBouncer whose database is disabled and its connections killed.

type Line = { level: number; msg: string; [k: string]: unknown };
function memoryLog() {
  const lines: Line[] = [];
  const stream = new Writable({ write(chunk, _enc, cb) { for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l)); cb(); } });
  return { log: createLogger('debug', stream as never), lines };
}
const WARN = 40;
const ERROR = 50;

async function serve(orm: Orm, log: ReturnType<typeof createLogger>) {
  const app = createApp({ orm, registry: new TenantRegistry(executorOf(orm), 0), rateLimiter: generousRateLimiter(), log, trustProxy: false });
  const server = createHttpServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise<void>((r) => server.close(() => r())) };
}

function expectOutageProblem(res: Awaited<ReturnType<typeof httpRequest>>) {
  expect(res.status, res.text).toBe(503);
  expect(res.headers['content-type']).toContain('application/problem+json');
  expect(res.headers['retry-after']).toBe('5');
  expect(res.body).toMatchObject({ type: '/errors/503', title: 'Service Unavailable', status: 503 });
  expect(at(res.body, 'instance')).toBe(`urn:request:${res.headers['x-request-id']}`);
  // Nothing of the cause reaches the client.
  // Nothing of the cause reaches the client (the instance is a random id: left out of the check).
  expect(JSON.stringify({ ...asRecord(res.body), instance: undefined })).not.toMatch(/ECONN|connect|postgres|pgbouncer|terminated|5432/i);
}

describe('database unreachable (closed port)', () => {
  it('answers 503 with Retry-After, warns once, reports it on /readyz', async () => {
    const { log, lines } = memoryLog();
    const orm = await createOrm(`postgresql://postgres@127.0.0.1:${await freePort()}/nothing`, { entities, poolMax: 2 });
    const app = await serve(orm, log);
    try {
      for (let i = 0; i < 5; i++) expectOutageProblem(await httpRequest(app.port, 'GET', '/api/categories', { host: 'any.test' }));
      const ready = await httpRequest(app.port, 'GET', '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body).toMatchObject({ status: 'unavailable', database: 'down' });
      expect((await httpRequest(app.port, 'GET', '/healthz')).status).toBe(200);
      const warnings = lines.filter((l) => l.level >= WARN);
      expect(warnings.map((l) => l.msg)).toEqual(['database unreachable: answering 503 until it is back']);
    } finally {
      await app.close();
      await orm.close();
    }
  });
});

describe.runIf(!!PGBOUNCER_BIN)('database outage through PgBouncer, and recovery', () => {
  const url = inject('databaseUrl');
  let bouncer: PgBouncer;
  let direct: Orm;
  let pooled: Orm;
  const dbName = new URL(url).pathname.slice(1);

  beforeAll(async () => {
    bouncer = await startPgBouncer(url);
    direct = await createOrm(url, { entities, poolMax: 2 });
    // Debian's PgBouncer 1.18 keeps no named statements across transactions (src/platform/db/prepared.ts).
    pooled = await createOrm(bouncer.url(url), { entities, poolMax: 4, preparedStatements: false });
  });
  afterAll(async () => {
    await pooled?.close();
    await direct?.close();
    await bouncer?.stop();
  });

  it('503 during the outage, one warning when it starts and one when it is back, then serves again', async () => {
    const slug = `out${Math.random().toString(36).slice(2, 7)}`;
    const t = await addTenant(direct, { slug, hosts: [{ host: `${slug}.test`, basePath: '/api' }] });
    const { token } = await insertToken(executorOf(direct), t.schema, { name: 't', role: 'admin', access: 'read-write', ownerKind: 'person', organiserIds: [], expiresAt: null });
    const { log, lines } = memoryLog();
    const app = await serve(pooled, log);
    const get = () => httpRequest(app.port, 'GET', '/api/categories', { host: `${slug}.test`, token });
    try {
      expect((await get()).status).toBe(200);

      // The outage: PgBouncer refuses the database and drops every connection to it.
      await bouncer.admin(`DISABLE ${dbName}`);
      await bouncer.admin(`KILL ${dbName}`);
      const started = Date.now();
      let outageAnswers = 0;
      while (Date.now() - started < 3000) {
        expectOutageProblem(await get());
        outageAnswers++;
      }
      expect(outageAnswers).toBeGreaterThan(3);

      await bouncer.admin(`ENABLE ${dbName}`);
      await bouncer.admin(`RESUME ${dbName}`);
      const deadline = Date.now() + 15_000;
      let status = 0;
      while (Date.now() < deadline && (status = (await get()).status) !== 200) await new Promise((r) => setTimeout(r, 200));
      expect(status).toBe(200);
      // The recovery line comes from the probe (every second while down).
      while (Date.now() < deadline && !lines.some((l) => l.msg === 'database reachable again')) await new Promise((r) => setTimeout(r, 100));

      const loud = lines.filter((l) => l.level >= WARN);
      expect(loud.map((l) => l.msg)).toEqual(['database unreachable: answering 503 until it is back', 'database reachable again']);
      expect(lines.some((l) => l.level >= ERROR)).toBe(false);
    } finally {
      await bouncer.admin(`ENABLE ${dbName}`).catch(() => {});
      await bouncer.admin(`RESUME ${dbName}`).catch(() => {});
      await app.close();
    }
  }, 60_000);
});

describe('request ids and clients that hang up', () => {
  const { log, lines } = memoryLog();
  const { h } = useHarness({ log, tenant: false });

  it('honours a sane X-Request-Id, replaces any other, and names it as the problem instance', async () => {
    const t = await h.tenant();
    const mine = await t.get('/categories/00000000-0000-4000-8000-000000000000', { headers: { 'x-request-id': 'client-req-12345' } });
    expect(mine.status).toBe(404);
    expect(mine.headers['x-request-id']).toBe('client-req-12345');
    expect(at(mine.body, 'instance')).toBe('urn:request:client-req-12345');
    for (const bad of ['short', 'x'.repeat(80), 'has spaces in it', 'semi;colon;1234']) {
      const res = await t.get('/categories', { token: null, headers: { 'x-request-id': bad } });
      expect(res.headers['x-request-id']).not.toBe(bad);
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(at(res.body, 'instance')).toBe(`urn:request:${res.headers['x-request-id']}`);
    }
    // Also before tenancy (unknown host) and on success (the header only).
    const unknown = await h.request('GET', '/api/categories', { host: 'nobody.test' });
    expect(unknown.status).toBe(404);
    expect(at(unknown.body, 'instance')).toBe(`urn:request:${unknown.headers['x-request-id']}`);
    expect((await t.get('/categories')).headers['x-request-id']).toBeTruthy();
  });

  it('/readyz names each dependency', async () => {
    const ready = await h.request('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ready', database: 'ok', redis: 'not configured', jobQueue: 'in-memory' });
  });

  it('a client that hangs up mid-body is not logged as an error', async () => {
    const t = await h.tenant();
    const before = lines.length;
    await new Promise<void>((resolve) => {
      const socket = net.connect(h.port, '127.0.0.1', () => {
        socket.write(`POST /api/categories HTTP/1.1\r\nHost: ${t.host}\r\nAuthorization: Bearer ${t.adminToken}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":`);
        setTimeout(() => { socket.destroy(); resolve(); }, 200);
      });
    });
    await new Promise((r) => setTimeout(r, 300));
    const after = lines.slice(before);
    expect(after.filter((l) => l.level >= WARN)).toEqual([]);
    // And the service goes on.
    expect((await t.get('/categories')).status).toBe(200);
    void http;
  });
});
