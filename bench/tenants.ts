// A thousand municipalities (issue 10, part 4): creating N tenants, a no-op `migrate` over N schemas, a replica
// start (`src/main.ts --role api`) with N tenant files until "listening on", and the API process's memory.
//   npm run bench:tenants                      # BENCH_TENANTS=1000 by default
//   BENCH_TENANTS=300 BENCH_ROOT=/tmp/old-checkout npm run bench:tenants   # the same against other code
// A scratch database on the machine's PostgreSQL (BENCH_PG_URL), dropped at the end; a throwaway TENANTS_DIR.
// Every step runs the code of BENCH_ROOT (default: this checkout) as a child process, as an operator would.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

const N = Number(process.env.BENCH_TENANTS ?? 1000);
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
      env: { ...process.env, LOG_LEVEL: 'info', REDIS_URL: '', DATABASE_URL, TENANTS_DIR: tenantsDir, PORT: String(20000 + Math.floor(Math.random() * 20000)), DEMO: '0' },
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
try {
  console.error(`code: ${root}; database: ${dbName}; ${N} tenants`);
  const first = await startApi(one);
  rows.push(['start with 1 tenant (fresh database: control + 1 schema migrated)', s(first.ms)]);
  const warm1 = await startApi(one);
  rows.push(['start with 1 tenant (nothing to do)', s(warm1.ms)]);
  rows.push(['API RSS with 1 tenant', `${warm1.rss.toFixed(0)} MB`]);

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
  const count = await r.query<{ n: string }>(`select count(*) as n from pg_namespace where nspname like 't\\_%'`);
  await r.end();
  rows.push(['tenant schemas in the database', count.rows[0]!.n]);
} finally {
  await admin(`drop database if exists ${dbName} with (force)`).catch((e) => console.error(`drop failed: ${e}`));
  rmSync(one, { recursive: true, force: true });
  rmSync(many, { recursive: true, force: true });
}
console.log(`| step | time |\n|---|---|`);
for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);
