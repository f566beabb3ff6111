// A thousand municipalities (issue 10, part 4): creating N tenants, a no-op `migrate` over N schemas, a replica
// start (`src/main.ts --role api`) with N tenant files until "listening on", `migrate` of N new schemas, the
// page (anonymous GET /offers) with N schemas and traffic spread over N/2 of them against traffic on one
// tenant (autocannon, the app in its own process, bench/app-server.ts), and the API process's memory at 1 and
// at N tenants after warm-up. Reports through bench/result.ts. `--quick`: 100 tenants, shorter load.
//   npm run bench:tenants                      # BENCH_TENANTS=1000 by default
//   BENCH_TENANTS=300 BENCH_ROOT=/tmp/old-checkout npm run bench:tenants   # the same against other code
// A scratch database on the machine's PostgreSQL (BENCH_PG_URL), dropped at the end; a throwaway TENANTS_DIR.
// Every step runs the code of BENCH_ROOT (default: this checkout) as a child process, as an operator would.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import os from 'node:os';
import pg from 'pg';
import { createOrm, migrateTenantSchema, newSchemaScript } from '../src/platform/db/orm.js';
import { tenantMigrations } from '../migrations/index.js';
import pLimit from 'p-limit';
import { migrateConcurrency } from '../src/platform/tenancy/versions.js';
import { seedDemo } from '../src/demo/seed.js';
import { mulberry32 } from '../src/domain/lottery.js';
import { quick, reportResult, type BenchRow } from './result.js';
import { entities } from '../src/entities.js';
import { cpuOf, pgDelta, postgresCpu } from './proc.js';
import { poolLabel, servicePoolSize } from './baseline.js';
import { randomPort } from '../test/harness/processes.js';

const N = Number(process.env.BENCH_TENANTS ?? (quick ? 100 : 1000));
const SPREAD = Math.max(1, Math.floor(N / 2));
const SECONDS = Number(process.env.BENCH_SECONDS ?? (quick ? 3 : 10));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (quick ? 1 : 3));
const CONNECTIONS = 32;
const root = path.resolve(process.env.BENCH_ROOT ?? '.');
const server = process.env.BENCH_PG_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const dbName = `bench_tenants_${Date.now().toString(36)}`;
const url = new URL(server);
url.pathname = `/${dbName}`;
const DATABASE_URL = url.toString();

async function admin(q: string) {
  const c = new pg.Client({ connectionString: server });
  await c.connect();
  try { await c.query(q); } finally { await c.end(); }
}

function run(args: string[], env: Record<string, string>): Promise<{ ms: number; code: number | null; out: string }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: root, env: { ...process.env, LOG_LEVEL: 'warn', REDIS_URL: '', DATABASE_URL, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    child.on('exit', (code) => resolve({ ms: performance.now() - started, code, out }));
  });
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Starts the API, waits for "listening on", reads its RSS after a short settle, stops it. */
function startApi(tenantsDir: string): Promise<{ ms: number; rss: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--role', 'api'], {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: 'info', REDIS_URL: '', DATABASE_URL, TENANTS_DIR: tenantsDir, PORT: String(randomPort()), DEMO: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let done = false;
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`not listening within 300 s:\n${out.slice(-2000)}`)); }, 300_000);
    const onData = (c: Buffer) => {
      out += c;
      if (!done && /listening on/.test(out)) {
        done = true;
        const ms = performance.now() - started;
        clearTimeout(timer);
        // One registry load and a request's worth of settling before the memory is read.
        setTimeout(() => {
          const rss = rssMb(child.pid!);
          child.kill('SIGTERM');
          child.on('exit', () => resolve({ ms, rss }));
        }, 1000);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => { if (!done) { clearTimeout(timer); reject(new Error(`exit ${code}:\n${out.slice(-2000)}`)); } });
  });
}


type AppServer = { child: ReturnType<typeof spawn>; port: number; memory: () => Promise<{ rss: number; heapUsed: number }> };

/** The real app in its own process (bench/app-server.ts: generous rate limits), PUBLIC_CACHE_MS=0 so every request reaches the database. */
function startAppServer(extraEnv: Record<string, string> = {}): Promise<AppServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/app-server.ts'], {
    cwd: path.resolve('.'), env: { ...process.env, DATABASE_URL, PORT: '0', PUBLIC_CACHE_MS: '0', LOG_LEVEL: 'silent', ...extraEnv }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  const memory = () => new Promise<{ rss: number; heapUsed: number }>((resolve) => {
    const before = out.length;
    child.kill('SIGUSR2');
    const poll = setInterval(() => {
      const m = /memory (\{.*\})/.exec(out.slice(before));
      if (m) {
        clearInterval(poll);
        const v = JSON.parse(m[1]!);
        resolve({ rss: v.rss / 2 ** 20, heapUsed: v.heapUsed / 2 ** 20 });
      }
    }, 20);
  });
  return new Promise((resolve, reject) => {
    const poll = setInterval(() => {
      const m = /listening (\d+)/.exec(out);
      if (m) {
        clearInterval(poll);
        resolve({ child, port: Number(m[1]), memory });
      }
    }, 20);
    child.on('exit', (code) => { clearInterval(poll); reject(new Error(`app server exited (${code}): ${out}`)); });
  });
}

async function stopAppServer(s: AppServer) {
  s.child.removeAllListeners('exit');
  s.child.kill('SIGTERM');
  await new Promise((r) => (s.child.exitCode !== null ? r(null) : s.child.once('exit', r)));
}

const cpu = { one: [] as { node: number; pg: number }[], spread: [] as { node: number; pg: number }[], cycle: [] as { node: number; pg: number }[] };

/** GET /api/offers (the default page) with autocannon, each request to one of `hosts` at random. */
async function page(port: number, hosts: string[], seconds: number, pid?: number, into?: { node: number; pg: number }[], pattern: 'random' | 'cycle' = 'random'): Promise<number> {
  const [node0, pg0] = [pid ? cpuOf(pid) : 0, postgresCpu(dbName)];
  // The lottery's seeded generator: every run draws the same sequence of municipalities.
  const random = mulberry32(hosts.length);
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: CONNECTIONS,
    duration: seconds,
    // `random`: each request to a municipality drawn at random (seeded), as visitors of 500 websites arrive
    // independently. `cycle` (the earlier runs): each connection walks the list, so the 32 walk it nearly in
    // step, a burst on one or two municipalities at a time, which a backend serves from warm caches.
    requests: pattern === 'cycle'
      ? hosts.map((host) => ({ method: 'GET', path: '/api/offers', headers: { host } }))
      : [{ method: 'GET', path: '/api/offers', setupRequest: (req: object) => ({ ...req, headers: { host: hosts[Math.floor(random() * hosts.length)]! } }) }],
  });
  const failed = result.errors + result.timeouts + result.non2xx;
  if (failed > 0) throw new Error(`GET /offers: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx`);
  if (pid && into) into.push({ node: (1000 * (cpuOf(pid) - node0)) / result.requests.total, pg: (1000 * pgDelta(pg0, postgresCpu(dbName))) / result.requests.total });
  return result.requests.total / result.duration;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const host = (i: number) => `m${String(i).padStart(4, '0')}.bench.example`;
const schemaOf = (i: number) => `t_m${String(i).padStart(4, '0')}`;

/** Copies the demo programme's offers (and what they show) from m0000 into m0001..m<count>, by SQL. */
async function copyOffers(count: number) {
  const c = new pg.Client({ connectionString: DATABASE_URL });
  await c.connect();
  try {
    for (let i = 1; i <= count; i++) {
      await c.query('begin');
      for (const t of ['organisers', 'categories', 'editions', 'edition_tasks', 'offers', 'offer_dates', 'offer_hosts', 'offer_categories']) {
        await c.query(`insert into "${schemaOf(i)}"."${t}" select * from "${schemaOf(0)}"."${t}"`);
      }
      await c.query('commit');
    }
    await c.query('analyze');
  } finally {
    await c.end();
  }
}

function tenantFiles(n: number): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-tenants-'));
  for (let i = 0; i < n; i++) {
    const slug = `m${String(i).padStart(4, '0')}`;
    writeFileSync(path.join(dir, `${slug}.json`), JSON.stringify({ slug, name: `Gemeinde ${i}`, hosts: [`${slug}.bench.example`] }));
  }
  return dir;
}

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const one = tenantFiles(1);
const many = tenantFiles(N);
await admin(`create database ${dbName}`);
const rows: [string, string][] = [];
let memory1 = { rss: NaN, heapUsed: NaN };
let memoryN = { rss: NaN, heapUsed: NaN };
const rps = { one: [] as number[], spread: [] as number[], cycle: [] as number[], one4: [] as number[], spread4: [] as number[] };
const SMALL_POOL = 4;
let migrateNewMs = NaN;
let bareMs = NaN;
let releaseMs = NaN;
const perSchema = { script: [] as number[], migrator: [] as number[] };
let replicaMs = NaN;
try {
  console.error(`code: ${root}; database: ${dbName}; ${N} tenants`);
  const first = await startApi(one);
  rows.push(['start with 1 tenant (fresh database: control + 1 schema migrated)', s(first.ms)]);
  const warm1 = await startApi(one);
  rows.push(['start with 1 tenant (nothing to do)', s(warm1.ms)]);
  rows.push(['API RSS with 1 tenant', `${warm1.rss.toFixed(0)} MB`]);

  // The one tenant gets the demo programme (63 offers); the app serves its page for a while: memory at 1 tenant.
  const seeding = await createOrm(DATABASE_URL, { entities, poolMax: 2 });
  try { await seedDemo(seeding, 'm0000'); } finally { await seeding.close(); }
  {
    const app = await startAppServer();
    try {
      await page(app.port, [host(0)], SECONDS);
      memory1 = await app.memory();
    } finally {
      await stopAppServer(app);
    }
  }

  const sync = await run(['src/cli/index.ts', 'tenant', 'sync'], { TENANTS_DIR: many });
  if (sync.code !== 0) throw new Error(`tenant sync failed:\n${sync.out.slice(-2000)}`);
  rows.push([`tenant sync of ${N} new tenant files (create + migrate ${N} schemas)`, s(sync.ms)]);
  const resync = await run(['src/cli/index.ts', 'tenant', 'sync'], { TENANTS_DIR: many });
  rows.push([`tenant sync of ${N} unchanged tenant files`, s(resync.ms)]);

  const noop = await run(['src/cli/index.ts', 'migrate'], {});
  if (noop.code !== 0) throw new Error(`migrate failed:\n${noop.out.slice(-2000)}`);
  rows.push([`no-op migrate over ${N} schemas (CLI process, ~1 s of it start-up)`, s(noop.ms)]);

  const start = await startApi(many);
  rows.push([`replica start (--role api) with ${N} tenant files, all up to date`, s(start.ms)]);
  replicaMs = start.ms;
  rows.push([`API RSS with ${N} tenants`, `${start.rss.toFixed(0)} MB`]);

  // Migrating N schemas from nothing with the operator's `migrate`: N more tenants registered by SQL (no
  // schema yet), then one `migrate` creates and migrates them (and checks the N up-to-date ones).
  const r = new pg.Client({ connectionString: DATABASE_URL });
  await r.connect();
  await r.query(`insert into control.tenants (slug, name, schema_name)
    select 'n' || lpad(i::text, 4, '0'), 'Neu ' || i, 't_n' || lpad(i::text, 4, '0') from generate_series(0, $1::int - 1) i`, [N]);
  const full = await run(['src/cli/index.ts', 'migrate'], {});
  if (full.code !== 0) throw new Error(`migrate failed:\n${full.out.slice(-2000)}`);
  rows.push([`migrate of ${N} new schemas (all tenant migrations each; ${2 * N} registered)`, s(full.ms)]);
  migrateNewMs = full.ms;
  const count = await r.query<{ n: string }>(`select count(*) as n from pg_namespace where nspname like 't\\_%'`);
  await r.end();
  rows.push(['tenant schemas in the database', count.rows[0]!.n]);

  // The floor under that: the same DDL sent bare, with no service code (one script per schema in its own
  // transaction over plain pg connections, at the same concurrency) for BARE schemas, scaled to N. On these
  // machines most of `migrate`'s time is PostgreSQL creating the schemas' relations (bench/README.md).
  {
    const orm = await createOrm(DATABASE_URL, { entities, poolMax: 1 });
    let script: string;
    try { script = (await newSchemaScript(orm))!.sql; } finally { await orm.close(); }
    const BARE = Math.min(N, quick ? 50 : 200);
    // The service's pool size (issue 25); the same concurrency as `migrate`.
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: servicePoolSize() });
    const t0 = performance.now();
    const bare = pLimit(migrateConcurrency());
    await Promise.all(Array.from({ length: BARE }, (_, i) => `t_bare_${i}`).map((schema) => bare(() =>
      pool.query(`begin; create schema "${schema}"; set local search_path to "${schema}";\n${script}\ncommit;`))));
    bareMs = ((performance.now() - t0) * N) / BARE;
    await pool.end();
    rows.push([`the same DDL sent bare (no service code), ${BARE} new schemas at concurrency ${migrateConcurrency()} over a ${poolLabel()}, scaled to ${N}`, s(bareMs)]);
  }

  // A release: the newest tenant migration undone in the N new schemas (its down(), its row removed), then
  // one `migrate` brings them up to date again (and checks the N others).
  {
    const last = tenantMigrations.at(-1)!;
    const orm = await createOrm(DATABASE_URL, { entities, poolMax: 1 });
    let down: string[];
    try {
      const m = new last.class(orm.em.getDriver(), orm.config);
      await m.down();
      down = m.getQueries() as string[];
    } finally {
      await orm.close();
    }
    if (down.length) {
      const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
      const four = pLimit(4);
      await Promise.all(Array.from({ length: N }, (_, i) => `t_n${String(i).padStart(4, '0')}`).map((schema) => four(() =>
        pool.query(`begin; set local search_path to "${schema}"; ${down.join(';\n')}; delete from mikro_orm_migrations where name = '${last.name}'; commit;`))));
      await pool.end();
      const release = await run(['src/cli/index.ts', 'migrate'], {});
      if (release.code !== 0) throw new Error(`migrate failed:\n${release.out.slice(-2000)}`);
      const applied = release.out.split('\n').filter((l) => l.includes(`applied ${last.name}`)).length;
      if (applied !== N) throw new Error(`the release's migrate applied ${last.name} in ${applied} schemas, not ${N}`);
      releaseMs = release.ms;
      rows.push([`migrate of ${2 * N} schemas, ${N} of them one migration behind (a release: ${last.name})`, s(release.ms)]);
    } else {
      rows.push([`a release's migrate: not measured (${last.name} has no down())`, '']);
    }
  }

  // Where the time of a new schema goes: the same-run comparison of the migrator (statement by statement, its
  // bookkeeping per migration) and the one-script path, batches of 20 new schemas alternating, at the
  // concurrency `migrate` uses (in this process, so no CLI start-up).
  {
    const orm = await createOrm(DATABASE_URL, { entities, poolMax: 16 });
    try {
      for (let b = 0; b < (quick ? 2 : 4); b++) {
        for (const way of b % 2 ? ['migrator', 'script'] as const : ['script', 'migrator'] as const) {
          const names = Array.from({ length: 20 }, (_, i) => `t_probe_${way}_${b}_${i}`);
          const t0 = performance.now();
          const limit = pLimit(migrateConcurrency());
          await Promise.all(names.map((schema) => limit(() => migrateTenantSchema(orm, schema, { script: way === 'script' }))));
          perSchema[way].push((performance.now() - t0) / names.length);
        }
      }
    } finally {
      await orm.close();
    }
    rows.push([`a new schema, wall time per schema at concurrency ${migrateConcurrency()}: one script / the migrator (same run, median of batches of 20)`,
      `${median(perSchema.script).toFixed(0)} ms / ${median(perSchema.migrator).toFixed(0)} ms`]);
  }

  // The page: SPREAD municipalities with the demo's offers; traffic on one of them against traffic spread over
  // all SPREAD (each request to one drawn at random; and, as in earlier runs, each connection cycling through
  // them), in turns, after a warm-up that visits each a few times.
  await copyOffers(SPREAD);
  const spread = Array.from({ length: SPREAD }, (_, i) => host(i + 1));
  const app = await startAppServer();
  try {
    await page(app.port, spread, SECONDS);
    await page(app.port, [host(1)], Math.max(3, SECONDS / 2));
    for (let round = 0; round < ROUNDS; round++) {
      for (const which of round % 2 ? ['spread', 'cycle', 'one'] as const : ['one', 'cycle', 'spread'] as const) {
        const r = await page(app.port, which === 'one' ? [host(1)] : spread, SECONDS, app.child.pid, cpu[which], which === 'cycle' ? 'cycle' : 'random');
        rps[which].push(r);
        const c = cpu[which].at(-1)!;
        console.error(`  round ${round + 1} ${which.padEnd(6)} ${r.toFixed(1)} req/s  CPU ms/request node ${c.node.toFixed(1)} + pg ${c.pg.toFixed(1)}  load ${os.loadavg()[0]!.toFixed(1)}`);
      }
    }
    memoryN = await app.memory();
  } finally {
    await stopAppServer(app);
  }
  // The same random traffic with a pool the size of this machine's CPUs twice over (PG_POOL_SIZE): more
  // requests wait per connection, so more find their own one free (db/affinity.ts).
  const small = await startAppServer({ PG_POOL_SIZE: String(SMALL_POOL) });
  try {
    await page(small.port, spread, SECONDS);
    for (let round = 0; round < ROUNDS; round++) {
      for (const which of round % 2 ? ['spread4', 'one4'] as const : ['one4', 'spread4'] as const) {
        const r = await page(small.port, which === 'one4' ? [host(1)] : spread, SECONDS);
        rps[which].push(r);
        console.error(`  round ${round + 1} ${which.padEnd(7)} ${r.toFixed(1)} req/s (pool ${SMALL_POOL})  load ${os.loadavg()[0]!.toFixed(1)}`);
      }
    }
  } finally {
    await stopAppServer(small);
  }
} finally {
  await admin(`drop database if exists ${dbName} with (force)`).catch((e) => console.error(`drop failed: ${e}`));
  rmSync(one, { recursive: true, force: true });
  rmSync(many, { recursive: true, force: true });
}
console.log(`| step | time |\n|---|---|`);
for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);

const ratio = median(rps.spread) / median(rps.one);
const report: BenchRow[] = [
  {
    name: `GET /offers (anonymous, default page, cache off), ${N} schemas, traffic spread over ${SPREAD} vs on one tenant, req/s (median of ${ROUNDS})`,
    value: Number(median(rps.spread).toFixed(1)), unit: 'req/s', baseline: Number(median(rps.one).toFixed(1)), ratio, target: '≥ 0.85', met: ratio >= 0.85,
  },
  {
    name: `the same, each connection cycling through the ${SPREAD} (the earlier runs' traffic: in step, a burst on one or two at a time)`,
    value: Number(median(rps.cycle).toFixed(1)), unit: 'req/s', baseline: Number(median(rps.one).toFixed(1)), ratio: median(rps.cycle) / median(rps.one),
  },
  {
    name: `the same random traffic with PG_POOL_SIZE=${SMALL_POOL} (default 10), against one tenant with that pool`,
    value: Number(median(rps.spread4).toFixed(1)), unit: 'req/s', baseline: Number(median(rps.one4).toFixed(1)), ratio: median(rps.spread4) / median(rps.one4),
  },
  {
    name: 'CPU per request (under load, medians), one tenant / spread: app process + its PostgreSQL backends',
    value: Number((median(cpu.one.map((c) => c.node)) + median(cpu.one.map((c) => c.pg))).toFixed(1)),
    unit: `ms (node ${median(cpu.one.map((c) => c.node)).toFixed(1)} + pg ${median(cpu.one.map((c) => c.pg)).toFixed(1)}; spread: node ${median(cpu.spread.map((c) => c.node)).toFixed(1)} + pg ${median(cpu.spread.map((c) => c.pg)).toFixed(1)}; cycling: node ${median(cpu.cycle.map((c) => c.node)).toFixed(1)} + pg ${median(cpu.cycle.map((c) => c.pg)).toFixed(1)})`,
  },
  { name: `migrate of ${N} new schemas (MIGRATE_CONCURRENCY ${process.env.MIGRATE_CONCURRENCY ?? 'default'})`, value: Number((migrateNewMs / 1000).toFixed(1)), unit: 's', baseline: 60, ratio: migrateNewMs / 60_000, target: '≤ 60 s', met: migrateNewMs <= 60_000 },
  {
    name: `migrate of ${N} new schemas against the same DDL sent bare (no service code, same concurrency, ${poolLabel()}; the floor on this machine)`,
    value: Number((migrateNewMs / 1000).toFixed(1)), unit: 's', baseline: Number((bareMs / 1000).toFixed(1)), ratio: migrateNewMs / bareMs,
  },
  { name: `migrate of ${N} schemas one migration behind, a release (${2 * N} registered)`, value: Number((releaseMs / 1000).toFixed(1)), unit: 's', baseline: 60, ratio: releaseMs / 60_000, target: '≤ 60 s', met: releaseMs <= 60_000 },
  {
    name: `a new schema, wall time per schema: one script vs the migrator (same run; concurrency ${migrateConcurrency()})`,
    value: Math.round(median(perSchema.script)), unit: 'ms', baseline: Math.round(median(perSchema.migrator)), ratio: median(perSchema.script) / median(perSchema.migrator),
  },
  { name: `replica start (--role api) with ${N} tenants, to listening`, value: Number((replicaMs / 1000).toFixed(1)), unit: 's', baseline: 5, ratio: replicaMs / 5000, target: '≤ 5 s', met: replicaMs <= 5000 },
  { name: 'API process memory after warm-up, 1 tenant: RSS / V8 heap used', value: Math.round(memory1.rss), unit: `MB (heap ${Math.round(memory1.heapUsed)} MB)` },
  { name: `API process memory after warm-up, ${N} tenants (${SPREAD} served): RSS / V8 heap used`, value: Math.round(memoryN.rss), unit: `MB (heap ${Math.round(memoryN.heapUsed)} MB)` },
];
reportResult({
  scenario: 'tenants',
  title: 'A thousand municipalities (issue 10.4)',
  inputs: { tenants: N, spread: SPREAD, seconds: SECONDS, rounds: ROUNDS, connections: CONNECTIONS, quick, load: os.loadavg().map((x) => x.toFixed(1)).join(' ') },
  rows: report,
  notes: rows.map(([k, v]) => `${k}: ${v}`),
});
