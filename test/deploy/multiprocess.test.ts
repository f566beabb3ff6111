import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { PGBOUNCER_BIN, startPgBouncer, type PgBouncer } from '../harness/pgbouncer.js';
import { adminQuery, httpRequest, queryDb, randomPort, runCli, startService, type ServiceProcess } from '../harness/processes.js';

// D1 scale-out, proven with real processes: two `--role api` and one `--role worker` on one fresh database
// and one Redis, directly and through PgBouncer in transaction pooling mode (no session state survives
// between transactions there: no session advisory lock, SET, named prepared statement or LISTEN may matter).
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const base = new URL(inject('databaseUrl'));

async function redisUp(): Promise<boolean> {
  const c = new Redis(REDIS_URL, { lazyConnect: true, enableOfflineQueue: false, connectTimeout: 500, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  try { await c.connect(); await c.ping(); return true; } catch { return false; } finally { c.disconnect(); }
}
const haveRedis = await redisUp();
if (!haveRedis) console.warn(`\n*** multi-process tests SKIPPED: no Redis answering at ${REDIS_URL} ***\n`);
if (!PGBOUNCER_BIN) console.warn('\n*** multi-process test through PgBouncer SKIPPED: the pgbouncer binary is not installed (apt-get install -y pgbouncer) ***\n');

const modes = [
  { name: 'directly', bouncer: false, run: haveRedis },
  { name: 'through PgBouncer (transaction pooling)', bouncer: true, run: haveRedis && !!PGBOUNCER_BIN },
];

const rateLimitRemaining = (h: unknown) => Number(/;r=(\d+)/.exec(String(h))?.[1]);

describe.each(modes)('two API processes and a worker, $name', ({ bouncer: viaBouncer, run }) => {
  const dbName = `${base.pathname.slice(1)}_mp${viaBouncer ? 'b' : 'd'}`;
  const direct = new URL(base.toString());
  direct.pathname = `/${dbName}`;
  let bouncer: PgBouncer | undefined;
  let url = '';
  let env: Record<string, string> = {};
  const procs: ServiceProcess[] = [];
  let apiA: ServiceProcess;
  let apiB: ServiceProcess;
  let token = '';
  const slug = `mp${viaBouncer ? 'b' : 'd'}${Math.random().toString(36).slice(2, 6)}`;

  beforeAll(async () => {
    if (!run) return;
    await adminQuery(base.toString(), `create database ${dbName}`);
    if (viaBouncer) bouncer = await startPgBouncer(base.toString());
    url = bouncer ? bouncer.url(direct.toString()) : direct.toString();
    // An empty tenants folder: no demo municipality to seed.
    // Through Debian's PgBouncer 1.18 named statements are switched off, as the infra/ manifests do.
    env = { DATABASE_URL: url, PG_PREPARED_STATEMENTS: viaBouncer ? 'off' : 'on', REDIS_URL, TENANTS_DIR: mkdtempSync(join(tmpdir(), 'hp-tenants-')), DATA_DIR: mkdtempSync(join(tmpdir(), 'hp-data-')) };
    // Started at the same moment, on a fresh database: the start race of a deploy.
    apiA = startService({ role: 'api', port: randomPort(), env });
    apiB = startService({ role: 'api', port: randomPort(), env });
    const worker = startService({ role: 'worker', port: randomPort(), env });
    procs.push(apiA, apiB, worker);
    await Promise.all(procs.map((p) => p.ready()));
    const add = await runCli(['tenant', 'add', slug, '--host', `${slug}.test`], env);
    expect(add.code, add.stderr).toBe(0);
    const issued = await runCli(['token', 'issue', slug, '--role', 'admin'], env);
    expect(issued.code, issued.stderr).toBe(0);
    token = issued.stdout.trim().split('\n').pop()!;
    // Migrating again, twice at once, beside the running processes: the lock is released (no idle
    // server connection keeps holding it) and the two take turns.
    const migrations = await Promise.all([runCli(['migrate'], env), runCli(['migrate'], env)]);
    for (const m of migrations) expect(m.code, m.stderr).toBe(0);
  }, 240_000);

  afterAll(async () => {
    const codes = await Promise.all(procs.map((p) => p.stop()));
    await bouncer?.admin(`KILL ${dbName}`).catch(() => {});
    await bouncer?.stop();
    if (run) await adminQuery(base.toString(), `drop database if exists ${dbName} with (force)`);
    // Every process stopped cleanly on SIGTERM.
    if (run) expect(codes).toEqual([0, 0, 0]);
  }, 60_000);

  it.runIf(run)('reports database, Redis and job queue separately on /readyz', async () => {
    for (const p of [apiA, apiB]) {
      const ready = await httpRequest(p.port, 'GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({ status: 'ready', database: 'ok', redis: 'ok', jobQueue: 'ok' });
    }
  });

  it.runIf(run)('shares one token bucket between the API processes (Redis)', async () => {
    const seen: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await httpRequest((i % 2 ? apiB : apiA).port, 'GET', '/api/categories', { host: `${slug}.test`, token });
      expect(res.status, res.text).toBe(200);
      seen.push(rateLimitRemaining(res.headers['ratelimit']));
    }
    // One bucket of 300: each request, on either process, takes one from the same count.
    expect(seen).toEqual([299, 298, 297, 296, 295, 294]);
  });

  it.runIf(run)('runs each background job once, on the worker', async () => {
    const created = await httpRequest(apiA.port, 'POST', '/api/editions', { host: `${slug}.test`, token, body: { name: 'Sommer', procedure: 'lot' } });
    expect(created.status, created.text).toBe(201);
    const edition = created.body.uuid;
    for (let i = 0; i < 4; i++) {
      const res = await httpRequest((i % 2 ? apiB : apiA).port, 'POST', `/api/editions/${edition}/allocate`, { host: `${slug}.test`, token, body: { seed: i } });
      expect(res.status, res.text).toBe(202);
    }
    const deadline = Date.now() + 60_000;
    let jobs: { state: string; retry_count: number }[] = [];
    while (Date.now() < deadline) {
      jobs = await queryDb(direct.toString(), `select state, retry_count from pgboss.job where name = 'edition-allocation' and data->>'tenant' = $1`, [slug]);
      if (jobs.length === 4 && jobs.every((j) => j.state === 'completed')) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    // Four requests on two API processes: four jobs, each completed on its first and only attempt.
    expect(jobs).toHaveLength(4);
    expect(jobs.every((j) => j.state === 'completed' && j.retry_count === 0)).toBe(true);
    const shown = await httpRequest(apiB.port, 'GET', `/api/editions/${edition}`, { host: `${slug}.test`, token });
    expect(shown.body.allocations).toHaveLength(4);
    expect(shown.body.allocations.every((a: { finishedAt?: string }) => a.finishedAt)).toBe(true);
    // The API processes only send: no worker ran there.
    for (const p of [apiA, apiB]) expect(p.output()).not.toMatch(/"msg":"job queue error"/);
  });

  it.runIf(run)('serves a tenant added by another process within the registry refresh', async () => {
    // Both API processes have read the registry (and cached it) before the tenant exists.
    const fresh = `${slug}x`;
    for (const p of [apiA, apiB]) expect((await httpRequest(p.port, 'GET', '/api/openapi.json', { host: `${fresh}.test` })).status).toBe(404);
    const add = await runCli(['tenant', 'add', fresh, '--host', `${fresh}.test`], env);
    expect(add.code, add.stderr).toBe(0);
    const added = Date.now();
    const servedAfter = await Promise.all([apiA, apiB].map(async (p) => {
      while (Date.now() - added < 10_000) {
        if ((await httpRequest(p.port, 'GET', '/api/openapi.json', { host: `${fresh}.test` })).status === 200) return Date.now() - added;
        await new Promise((r) => setTimeout(r, 100));
      }
      return Infinity;
    }));
    // D10: registry changes reach every running process within 5 seconds (the refresh is 2 s).
    for (const ms of servedAfter) expect(ms).toBeLessThan(5_000);
  });
});
