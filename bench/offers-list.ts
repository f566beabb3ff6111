import { execSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import autocannon from 'autocannon';
import { BENCH_HOST, createBenchDatabase } from './data.js';

// `npm run bench`: the public offer list of the real app against the hand-written reference server
// (bench/README.md). Both run in their own process on loopback against the same scratch database; the
// load generator (autocannon, in this process) loads one of them at a time: 32 connections, ROUNDS runs of
// SECONDS each per case, the two servers alternating, after a warm-up. Prints medians and the ratio.
// Env: BENCH_PG_URL (default the test PostgreSQL), BENCH_SECONDS (10), BENCH_ROUNDS (3), BENCH_WARMUP (3).
const PG = process.env.BENCH_PG_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const SECONDS = Number(process.env.BENCH_SECONDS || 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const WARMUP = Number(process.env.BENCH_WARMUP || 3);
const CONNECTIONS = 32;
const PAGE_SIZES = [30, 200];
const TARGET = 0.6;

type Server = { name: 'app' | 'reference'; child: ChildProcess; port: number };
type Run = { rps: number; p50: number; p99: number; bytes: number; nodeCores: number; pgCores: number };

function spawnServer(name: Server['name'], file: string, env: Record<string, string>): Promise<Server> {
  const child = spawn(process.execPath, ['--import', 'tsx', file], {
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c) => {
      out += c;
      const m = /listening (\d+)/.exec(out);
      if (m) resolve({ name, child, port: Number(m[1]) });
    });
    child.on('exit', (code) => reject(new Error(`${name} server exited (${code}) before listening: ${out}`)));
  });
}

function get(port: number, path: string, agent?: http.Agent): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, agent, headers: { host: BENCH_HOST } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    }).on('error', reject);
  });
}

// CPU time (user + system) of processes, from /proc, in seconds.
const TICK = (() => {
  try {
    return Number(execSync('getconf CLK_TCK').toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

function cpuOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICK;
  } catch {
    return 0;
  }
}

/** The PostgreSQL backends serving the scratch database (their process title names it), not other databases'. */
function postgresCpu(database: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
      if (!readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(` ${database} `)) continue;
      out.set(Number(entry), cpuOf(Number(entry)));
    } catch {
      // gone
    }
  }
  return out;
}

function pgDelta(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, t] of after) sum += t - (before.get(pid) ?? 0);
  return sum;
}

async function load(server: Server, perPage: number, seconds: number, database: string): Promise<Run> {
  const cpu0 = cpuOf(server.child.pid!);
  const pg0 = postgresCpu(database);
  const started = process.hrtime.bigint();
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}/api/offers?itemsPerPage=${perPage}`,
    headers: { host: BENCH_HOST },
    connections: CONNECTIONS,
    duration: seconds,
  });
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const failed = result.errors + result.timeouts + result.non2xx;
  if (failed > 0) throw new Error(`${server.name}: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx`);
  return {
    rps: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    bytes: result.throughput.total / Math.max(1, result.requests.total),
    nodeCores: (cpuOf(server.child.pid!) - cpu0) / wall,
    pgCores: pgDelta(pg0, postgresCpu(database)) / wall,
  };
}

/**
 * CPU per request with one keep-alive connection and nothing else from us running: the server process and
 * its PostgreSQL backends, from /proc. Less sensitive than req/s to other work on the machine.
 */
async function costPerRequest(server: Server, perPage: number, database: string, n = 200): Promise<{ node: number; pg: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const path = `/api/offers?itemsPerPage=${perPage}`;
  try {
    for (let i = 0; i < 20; i++) await get(server.port, path, agent);
    const cpu0 = cpuOf(server.child.pid!);
    const pg0 = postgresCpu(database);
    for (let i = 0; i < n; i++) await get(server.port, path, agent);
    return { node: (1000 * (cpuOf(server.child.pid!) - cpu0)) / n, pg: (1000 * pgDelta(pg0, postgresCpu(database))) / n };
  } finally {
    agent.destroy();
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main() {
  console.log(`machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}, load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  const started = Date.now();
  const db = await createBenchDatabase(PG);
  console.log(`scratch database ${db.name}: ${db.offers} offers, ${db.publicOffers} public (${Date.now() - started} ms to prepare)`);
  const servers: Server[] = [];
  try {
    const urlPrefix = `https://${db.tenant.hosts[0].host}/angebote/`;
    servers.push(await spawnServer('app', 'bench/app-server.ts', { DATABASE_URL: db.url }));
    servers.push(await spawnServer('reference', 'bench/reference-server.ts', { DATABASE_URL: db.url, SCHEMA: db.tenant.schema, URL_PREFIX: urlPrefix }));
    const [app, ref] = servers;

    // Same page, same JSON: the comparison is only fair if both answer the same.
    for (const q of ['', '?itemsPerPage=200', '?page=2&itemsPerPage=200', '?page=16', '?page=99']) {
      const [a, r] = await Promise.all([get(app.port, `/api/offers${q}`), get(ref.port, `/api/offers${q}`)]);
      if (a.status !== 200 || r.status !== 200) throw new Error(`GET /offers${q}: app ${a.status}, reference ${r.status}: ${a.text.slice(0, 300)}`);
      if (!isDeepStrictEqual(JSON.parse(a.text), JSON.parse(r.text))) {
        const [pa, pr] = [JSON.parse(a.text), JSON.parse(r.text)];
        const i = pa.findIndex((x: unknown, k: number) => !isDeepStrictEqual(x, pr[k]));
        throw new Error(`GET /offers${q}: the app and the reference differ at item ${i}:\napp:       ${JSON.stringify(pa[i])}\nreference: ${JSON.stringify(pr[i])}`);
      }
    }
    console.log('the app and the reference answer the same JSON (pages of 30 and 200 checked)');

    for (const perPage of PAGE_SIZES) for (const s of servers) await load(s, perPage, WARMUP, db.name);
    const costs = new Map<string, { node: number; pg: number }>();
    for (const perPage of PAGE_SIZES) for (const s of servers) costs.set(`${s.name}:${perPage}`, await costPerRequest(s, perPage, db.name));
    const runs = new Map<string, Run[]>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const perPage of PAGE_SIZES) {
        for (const s of round % 2 ? [ref, app] : [app, ref]) {
          const r = await load(s, perPage, SECONDS, db.name);
          const key = `${s.name}:${perPage}`;
          runs.set(key, [...(runs.get(key) ?? []), r]);
          console.log(`  round ${round + 1} ${s.name.padEnd(9)} itemsPerPage=${String(perPage).padEnd(3)} ${r.rps.toFixed(1).padStart(7)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms  node ${r.nodeCores.toFixed(2)} cores  pg ${r.pgCores.toFixed(2)} cores  load ${os.loadavg()[0].toFixed(1)}`);
        }
      }
    }

    const m = (key: string, f: keyof Run) => median(runs.get(key)!.map((r) => r[f]));
    console.log(`\nGET /offers, anonymous, ${CONNECTIONS} connections, median of ${ROUNDS} x ${SECONDS} s (target ratio >= ${TARGET})\n`);
    console.log('| itemsPerPage | KB/page | app req/s | reference req/s | ratio | app p50 / p99 ms | ref p50 / p99 ms | app CPU ms/req node + pg | ref CPU ms/req node + pg |');
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    let worst = Infinity;
    for (const perPage of PAGE_SIZES) {
      const [a, r] = [`app:${perPage}`, `reference:${perPage}`];
      const ratio = m(a, 'rps') / m(r, 'rps');
      worst = Math.min(worst, ratio);
      const perReq = (key: string) => `${(1000 * m(key, 'nodeCores') / m(key, 'rps')).toFixed(1)} + ${(1000 * m(key, 'pgCores') / m(key, 'rps')).toFixed(1)}`;
      console.log(`| ${perPage} | ${(m(a, 'bytes') / 1024).toFixed(0)} | ${m(a, 'rps').toFixed(1)} | ${m(r, 'rps').toFixed(1)} | **${ratio.toFixed(2)}** | ${m(a, 'p50')} / ${m(a, 'p99')} | ${m(r, 'p50')} / ${m(r, 'p99')} | ${perReq(a)} | ${perReq(r)} |`);
    }
    console.log(`\nCPU per request, sequential (1 keep-alive connection, 200 requests), ms: server process + its PostgreSQL backends\n`);
    console.log('| itemsPerPage | app node | app pg | app total | reference node | reference pg | reference total | ratio of totals (ref / app) |');
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const perPage of PAGE_SIZES) {
      const a = costs.get(`app:${perPage}`)!;
      const r = costs.get(`reference:${perPage}`)!;
      console.log(`| ${perPage} | ${a.node.toFixed(1)} | ${a.pg.toFixed(1)} | ${(a.node + a.pg).toFixed(1)} | ${r.node.toFixed(1)} | ${r.pg.toFixed(1)} | ${(r.node + r.pg).toFixed(1)} | ${((r.node + r.pg) / (a.node + a.pg)).toFixed(2)} |`);
    }
    console.log(`\n${worst >= TARGET ? 'target met' : 'BELOW TARGET'}: lowest ratio ${worst.toFixed(2)} (target ${TARGET}); load average now ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  } finally {
    for (const s of servers) {
      s.child.kill('SIGTERM');
      await new Promise((resolve) => (s.child.exitCode !== null ? resolve(null) : s.child.once('exit', resolve)));
    }
    await db.drop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
