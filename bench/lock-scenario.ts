import http from 'node:http';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { insertToken } from '../src/platform/auth/tokens.js';
import { createOrm, executorOf, migrateControl } from '../src/platform/db/orm.js';
import { qualified, sql } from '../src/platform/db/sql.js';
import { newUuid } from '../src/platform/http/ids.js';
import { createLogger } from '../src/platform/logging/logger.js';
import { addTenant } from '../src/platform/tenancy/operations.js';
import { scratchDatabase } from './scratch.js';
import { entities } from '../src/entities.js';

// Issue 23, the lock scenario, with real processes and a real PostgreSQL (shared by bench/lock-isolation.ts,
// which prints the figures, and test/deploy/lock-isolation.test.ts, which checks them): the service as deployed
// (`src/main.ts --role all`, NODE_ENV=production) on a scratch database with two municipalities. A second
// connection holds one offer's row (`select … for update` in an open transaction, as an operator's psql) for
// `holdSeconds` while `families` families apply to that offer, `inFlight` at a time. Beside it, one request at a
// time each: reads and applications of another offer of the same municipality, reads and applications in the
// other municipality, and /readyz. Their latencies are measured before the lock (baseline) and while it is held.

export type Figures = { requests: number; errors: number; statuses: Record<string, number>; p50: number; p99: number; max: number };
export type LockScenarioResult = {
  holdSeconds: number;
  baseline: Record<string, Figures>;
  during: Record<string, Figures>;
  /** The applications to the held offer that started and ended while it was held. */
  rush: Figures;
  /** Those that started while it was held and ended after its release (they had waited for the offer's share). */
  rushAfterRelease: Figures;
  /** POST /attendances to the held offer after it was released. */
  afterRelease: number;
  /** The service's warnings and errors (JSON log lines), message and fields. */
  log: { level: number; msg: string; [k: string]: unknown }[];
  settings: Record<string, string>;
};

export type LockScenarioOptions = {
  /** A PostgreSQL server (connection string) on which a scratch database is made and dropped. */
  server: string;
  port: number;
  holdSeconds: number;
  baselineSeconds: number;
  families: number;
  inFlight: number;
  /** Pause between two requests of a stream beside the rush (ms). */
  streamPauseMs?: number;
  /** Extra environment of the service (settings under test). */
  env?: Record<string, string>;
};

const STREAMS = ['same municipality, other offer, GET', 'same municipality, other offer, POST /attendances', 'other municipality, GET /offers', 'other municipality, POST /attendances', '/readyz'] as const;

type Sample = { at: number; ms: number; status: number };

function request(port: number, method: string, urlPath: string, opts: { host?: string; token?: string; body?: unknown; agent: http.Agent }): Promise<number> {
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  const headers: Record<string, string | number> = { host: opts.host ?? 'localhost' };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: urlPath, headers, agent: opts.agent, timeout: 60_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    // A refused or reset connection counts as an error answer (0).
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
    req.end(payload);
  });
}

export function figures(samples: Sample[], ok: (status: number) => boolean): Figures {
  const ms = samples.map((s) => s.ms).sort((a, b) => a - b);
  const pct = (p: number) => (ms.length ? ms[Math.min(ms.length - 1, Math.ceil(ms.length * p) - 1)]! : 0);
  const statuses: Record<string, number> = {};
  for (const s of samples) statuses[s.status] = (statuses[s.status] ?? 0) + 1;
  const r = (x: number) => Math.round(x * 10) / 10;
  return { requests: samples.length, errors: samples.filter((s) => !ok(s.status)).length, statuses, p50: r(pct(0.5)), p99: r(pct(0.99)), max: r(ms[ms.length - 1] ?? 0) };
}

async function waitForHealth(port: number, child: ChildProcess, out: () => string): Promise<void> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode}):\n${out().slice(-3000)}`);
    const ok = await new Promise<boolean>((resolve) => {
      http.get({ host: '127.0.0.1', port, path: '/healthz' }, (res) => { res.resume(); resolve(res.statusCode === 200); }).on('error', () => resolve(false));
    });
    if (ok && /listening on/.test(out())) return;
    if (Date.now() > deadline) throw new Error(`the service did not start:\n${out().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function runLockScenario(o: LockScenarioOptions): Promise<LockScenarioResult> {
  const scratch = await scratchDatabase(o.server, 'lock');
  const orm = await createOrm(scratch.url, { entities, poolMax: 4, log: createLogger('silent') });
  let child: ChildProcess | undefined;
  let holder: pg.Client | undefined;
  const dirs = [mkdtempSync(path.join(tmpdir(), 'hp-lock-tenants-')), mkdtempSync(path.join(tmpdir(), 'hp-lock-data-'))];
  try {
    await migrateControl(orm);
    const db = executorOf(orm);
    const a = await addTenant(orm, { slug: 'lock-a', name: 'Gemeinde A', hosts: [{ host: 'lock-a.test', basePath: '/api' }] });
    const b = await addTenant(orm, { slug: 'lock-b', name: 'Gemeinde B', hosts: [{ host: 'lock-b.test', basePath: '/api' }] });
    const setup = async (schema: string, offers: number) => {
      const t = (n: string) => qualified(schema, n);
      const edition = newUuid();
      await sql`insert into ${t('editions')} (uuid, name, alias, procedure) values (${edition}::uuid, 'Sommer', 'sommer', 'firstcome')`.execute(db);
      const ids = Array.from({ length: offers }, () => newUuid());
      for (const [i, id] of ids.entries()) {
        await sql`insert into ${t('offers')} (uuid, edition_uuid, name, alias, max_participants, fee, publish, places)
          values (${id}::uuid, ${edition}::uuid, ${`Angebot ${i}`}, ${`angebot-${i}`}, 50, 500, 'public', '{published}')`.execute(db);
      }
      const kids = Array.from({ length: o.families + 400 }, () => newUuid());
      await sql`insert into ${t('participants')} (uuid, firstname, lastname, date_of_birth) select unnest(${kids}::uuid[]), 'Kind', 'Familie', date '2016-05-23'`.execute(db);
      const tokens: string[] = [];
      for (let i = 0; i < o.inFlight + STREAMS.length; i++) {
        tokens.push((await insertToken(db, schema, { name: `lock ${i}`, role: 'admin', access: 'read-write', ownerKind: 'service', organiserIds: [], expiresAt: null })).token);
      }
      return { offers: ids, kids, tokens };
    };
    const A = await setup(a.schema, 2);
    const B = await setup(b.schema, 1);
    const [held, other] = A.offers as [string, string];

    const settings = { NODE_ENV: 'production', ...o.env };
    let out = '';
    child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--role', 'all'], {
      env: { ...process.env, ...settings, DATABASE_URL: scratch.url, PORT: String(o.port), LOG_LEVEL: 'info', REDIS_URL: '', SMTP_URL: '', DEMO: '0', TENANTS_DIR: dirs[0], DATA_DIR: dirs[1] },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (c) => (out += c));
    child.stderr!.on('data', (c) => (out += c));
    await waitForHealth(o.port, child, () => out);

    const agent = new http.Agent({ keepAlive: true, maxSockets: o.inFlight + 16 });
    let kidA = o.families;
    let kidB = 0;
    const streamWork: Record<(typeof STREAMS)[number], () => Promise<number>> = {
      'same municipality, other offer, GET': () => request(o.port, 'GET', `/api/offers/${other}`, { host: 'lock-a.test', token: A.tokens[o.inFlight], agent }),
      'same municipality, other offer, POST /attendances': () => request(o.port, 'POST', '/api/attendances', { host: 'lock-a.test', token: A.tokens[o.inFlight + 1], body: { offer: other, participant: A.kids[kidA++] }, agent }),
      'other municipality, GET /offers': () => request(o.port, 'GET', '/api/offers', { host: 'lock-b.test', token: B.tokens[0], agent }),
      'other municipality, POST /attendances': () => request(o.port, 'POST', '/api/attendances', { host: 'lock-b.test', token: B.tokens[1], body: { offer: B.offers[0], participant: B.kids[kidB++] }, agent }),
      '/readyz': () => request(o.port, 'GET', '/readyz', { agent }),
    };
    const samples = new Map<string, Sample[]>(STREAMS.map((s) => [s, []]));
    let streaming = true;
    const streams = Promise.all(STREAMS.map(async (name) => {
      while (streaming) {
        const at = performance.now();
        const status = await streamWork[name]();
        samples.get(name)!.push({ at, ms: performance.now() - at, status });
        await new Promise((r) => setTimeout(r, o.streamPauseMs ?? 200));
      }
    }));

    // Baseline: the streams alone (after a second of warm-up).
    await new Promise((r) => setTimeout(r, 1_000));
    const baselineFrom = performance.now();
    await new Promise((r) => setTimeout(r, o.baselineSeconds * 1000));
    const holdFrom = performance.now();

    // The lock, as an operator's forgotten transaction; then the rush on that offer.
    holder = new pg.Client({ connectionString: scratch.url, application_name: 'psql' });
    await holder.connect();
    await holder.query('begin');
    await holder.query(`select 1 from "${a.schema}".offers where uuid = $1 for update`, [held]);
    const lockedAt = performance.now();
    let released = Infinity;
    const rushSamples: Sample[] = [];
    let next = 0;
    const rush = Promise.all(Array.from({ length: o.inFlight }, async (_, lane) => {
      for (let i = next++; i < o.families && performance.now() < lockedAt + o.holdSeconds * 1000 - 1000; i = next++) {
        const at = performance.now();
        const status = await request(o.port, 'POST', '/api/attendances', { host: 'lock-a.test', token: A.tokens[lane], body: { offer: held, participant: A.kids[i] }, agent });
        rushSamples.push({ at, ms: performance.now() - at, status });
      }
    }));
    await new Promise((r) => setTimeout(r, o.holdSeconds * 1000));
    const holdTo = performance.now();
    await holder.query('rollback');
    released = performance.now();
    await holder.end();
    holder = undefined;
    streaming = false;
    await Promise.all([rush, streams]);
    const afterRelease = await request(o.port, 'POST', '/api/attendances', { host: 'lock-a.test', token: A.tokens[0], body: { offer: held, participant: A.kids[A.kids.length - 1] }, agent });
    agent.destroy();

    const phase = (from: number, to: number) => Object.fromEntries(STREAMS.map((name) => [name,
      figures(samples.get(name)!.filter((s) => s.at >= from && s.at < to), (st) => st >= 200 && st < 300)]));
    const endedWhileHeld = rushSamples.filter((s) => s.at + s.ms < released);
    const endedAfter = rushSamples.filter((s) => s.at + s.ms >= released);
    const log = out.split('\n').filter((l) => l.startsWith('{')).map((l) => { try { return JSON.parse(l); } catch { return null; } })
      .filter((l): l is { level: number; msg: string } => !!l && l.level >= 40);
    return {
      holdSeconds: o.holdSeconds,
      baseline: phase(baselineFrom, holdFrom),
      during: phase(lockedAt, holdTo),
      rush: figures(endedWhileHeld, (st) => st >= 200 && st < 300),
      rushAfterRelease: figures(endedAfter, (st) => st >= 200 && st < 300),
      afterRelease,
      log,
      settings,
    };
  } finally {
    if (holder) await holder.end().catch(() => {});
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child!.once('exit', r));
    }
    await orm.close();
    await scratch.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}
