import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { BenchResult } from './result.js';

// `npm run bench [-- <scenario>… ] [--quick]`: runs the benchmark scenarios one after another, each as a child
// process (`tsx bench/<file>`) that measures itself against its baseline in the same run and writes a
// BenchResult (bench/result.ts) to the file named by BENCH_RESULT. The runner collects them into the generated
// part of docs/benchmarks.md (between the markers; the hand-written sections below stay) and keeps the latest
// result of every scenario in docs/benchmarks.json, so a run of some scenarios updates only their rows.
// A scenario whose file does not exist yet is skipped with a note. Env: BENCH_PG_URL, REDIS_URL as the scenarios.

type Scenario = { name: string; file: string; title: string };

export const SCENARIOS: Scenario[] = [
  { name: 'page', file: 'bench/offers-list.ts', title: 'Public offer list (GET /offers, cache off), issue 10.2' },
  { name: 'rush', file: 'bench/rush.ts', title: 'Opening rush, issue 10.1' },
  { name: 'lot', file: 'bench/lot.ts', title: 'Lot draw and commit, issue 10.3' },
  { name: 'tenants', file: 'bench/tenants.ts', title: 'A thousand municipalities, issue 10.4' },
  { name: 'mail', file: 'bench/mail.ts', title: 'Work after the response (mail), issue 9' },
  { name: 'limiter', file: 'bench/limiter.ts', title: 'Redis rate limiter overhead, issue 10.5' },
  { name: 'events', file: 'bench/events.ts', title: 'Event log and feed, issue 14' },
  { name: 'webhooks', file: 'bench/webhooks.ts', title: 'Webhook delivery, issue 14' },
  { name: 'families', file: 'bench/families.ts', title: 'An opening morning through the website channel, issue 21' },
  { name: 'lock', file: 'bench/lock-isolation.ts', title: 'One municipality never takes the others down, issue 23' },
  { name: 'morning', file: 'bench/morning.ts', title: 'The opening morning of a region (API and worker processes, Redis, SMTP), issue 25' },
];

const DOC = 'docs/benchmarks.md';
const STORE = 'docs/benchmarks.json';
export const BEGIN = '<!-- bench:generated:begin (written by `npm run bench`; edit below the end marker) -->';
export const END = '<!-- bench:generated:end -->';

type Machine = { cpu: string; cores: number; memoryGiB: number; node: string; postgres: string; redis: string };
type Entry = {
  scenario: string;
  status: 'ok' | 'failed' | 'missing';
  /** ISO time the scenario finished. */
  at: string;
  quick: boolean;
  seconds: number;
  loadBefore: number[];
  loadAfter: number[];
  machine: Machine;
  result?: BenchResult;
  /** Why it failed or was skipped. */
  reason?: string;
  /** The wait before it for a quiet machine (settle): seconds, and the busy cores of the last window. */
  settled?: { seconds: number; busyCores: number; quiet: boolean };
};
type Store = Record<string, Entry>;

const PG_URL = process.env.BENCH_PG_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

async function postgresVersion(): Promise<string> {
  const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    return (await c.query<{ v: string }>(`select current_setting('server_version') as v`)).rows[0].v;
  } catch (err) {
    return `unreachable (${(err as Error).message})`;
  } finally {
    await c.end().catch(() => {});
  }
}

async function redisVersion(): Promise<string> {
  const r = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, enableOfflineQueue: false });
  r.on('error', () => {});
  try {
    await r.connect();
    return /redis_version:(\S+)/.exec(await r.info('server'))?.[1] ?? '?';
  } catch (err) {
    return `unreachable (${(err as Error).message})`;
  } finally {
    r.disconnect();
  }
}

const load = () => os.loadavg().map((x) => Math.round(x * 100) / 100);

/** The machine's cores busy (all but idle and iowait, /proc/stat) over the next `ms`. */
async function busyCores(ms: number): Promise<number> {
  const read = () => {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const total = f.reduce((a, b) => a + b, 0);
    return { total, idle: f[3]! + (f[4] ?? 0) };
  };
  const a = read();
  await new Promise((r) => setTimeout(r, ms));
  const b = read();
  const total = b.total - a.total;
  return total > 0 ? (os.cpus().length * (total - (b.idle - a.idle))) / total : 0;
}

// Each scenario starts on a quiet machine: the previous one's writes flushed by a CHECKPOINT now (not by the
// checkpointer during the next measurement) and the machine idle (three 2-second windows in a row under 0.15 of a
// core busy), waiting at most BENCH_SETTLE_SECONDS (180). After the 12-minute tenants bench the 1-minute load
// average is still ~5 when the machine is already idle, so the wait watches /proc/stat, not the load average.
const QUIET_CORES = 0.15;
async function settle(): Promise<NonNullable<Entry['settled']>> {
  const started = Date.now();
  const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    await c.query('checkpoint');
  } catch {
    // not a superuser, or unreachable: the scenario says so itself
  } finally {
    await c.end().catch(() => {});
  }
  const limit = Number(process.env.BENCH_SETTLE_SECONDS ?? 180) * 1000;
  let quietWindows = 0;
  let busy = 0;
  while (quietWindows < 3 && Date.now() - started < limit) {
    busy = await busyCores(2000);
    quietWindows = busy < QUIET_CORES ? quietWindows + 1 : 0;
  }
  return { seconds: Math.round((Date.now() - started) / 1000), busyCores: Math.round(busy * 100) / 100, quiet: quietWindows >= 3 };
}

function runScenario(s: Scenario, quick: boolean, resultFile: string): Promise<number> {
  const args = ['--import', 'tsx', s.file, ...(quick ? ['--quick'] : [])];
  const child = spawn(process.execPath, args, {
    stdio: 'inherit',
    env: { ...process.env, BENCH_RESULT: resultFile, ...(quick ? { BENCH_QUICK: '1' } : {}) },
  });
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1))));
}

// ---- the generated part of docs/benchmarks.md ------------------------------------------------------

const num = (v: number | undefined, digits?: number) => {
  if (v === undefined || !Number.isFinite(v)) return '';
  if (digits !== undefined) return String(Math.round(v * 10 ** digits) / 10 ** digits);
  const a = Math.abs(v);
  if (a >= 100) return String(Math.round(v));
  return String(Math.round(v * (a >= 10 ? 10 : 1000)) / (a >= 10 ? 10 : 1000));
};
const cell = (s: string) => s.replaceAll('|', '\\|').replaceAll('\n', ' ');
const loadText = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(' / ');

export function renderGenerated(store: Store): string {
  const lines: string[] = [BEGIN, '', '## Latest results (generated)', ''];
  const entries = SCENARIOS.map((s) => store[s.name]).filter((e): e is Entry => !!e?.result);
  const machines = [...new Set(entries.map((e) => JSON.stringify(e.machine)))].map((m) => JSON.parse(m) as Machine);
  for (const m of machines) {
    lines.push(`Machine: ${m.cores} cores (${m.cpu}), ${m.memoryGiB} GiB, Node ${m.node}, PostgreSQL ${m.postgres}, Redis ${m.redis}.`);
  }
  lines.push('Load average (1 / 5 / 15 min) before and after each scenario: the machine is shared, so compare each measure',
    'with its baseline of the same run (the ratio), not absolute figures across runs.', '');
  lines.push('| scenario | run (UTC) | mode | load before → after | inputs |', '|---|---|---|---|---|');
  for (const s of SCENARIOS) {
    const e = store[s.name];
    if (!e || (e.status === 'missing' && !e.result)) {
      lines.push(`| ${s.name} | not run${e?.reason ? `: ${cell(e.reason)}` : ''} | | | |`);
      continue;
    }
    const inputs = e.result ? Object.entries(e.result.inputs).map(([k, v]) => `${k}=${v}`).join(', ') : cell(e.reason ?? '');
    const status = e.status === 'ok' ? '' : e.status === 'missing' ? ' (not run)' : ` (**failed**: ${cell(e.reason ?? '')})`;
    const settled = !e.settled ? '' : e.settled.quiet ? `; quiet after ${e.settled.seconds} s` : `; **not quiet** after ${e.settled.seconds} s (${e.settled.busyCores} cores busy)`;
    lines.push(`| ${s.name}${status} | ${e.at.slice(0, 16).replace('T', ' ')} | ${e.quick ? 'quick' : 'full'}, ${Math.round(e.seconds)} s${settled} | ${loadText(e.loadBefore)} → ${loadText(e.loadAfter)} | ${cell(inputs)} |`);
  }
  lines.push('', '| scenario | measure | value | baseline | ratio | target | met |', '|---|---|---:|---:|---:|---|---|');
  for (const s of SCENARIOS) {
    const r = store[s.name]?.result;
    if (!r) continue;
    for (const row of r.rows) {
      const met = row.met === undefined ? '' : row.met ? 'met' : '**missed**';
      lines.push(`| ${s.name} | ${cell(row.name)} | ${num(row.value)} ${cell(row.unit)} | ${num(row.baseline)} | ${num(row.ratio, 2)} | ${cell(row.target ?? '')} | ${met} |`);
    }
  }
  const noted = SCENARIOS.filter((s) => store[s.name]?.result?.notes?.length || store[s.name]?.status === 'failed');
  if (noted.length) {
    lines.push('', '### Notes of the latest runs', '');
    for (const s of noted) {
      const e = store[s.name]!;
      if (e.status === 'failed') lines.push(`- **${s.name}**: the latest run failed (${e.reason}); rows above are from the last successful run, if any.`);
      for (const n of e.result?.notes ?? []) lines.push(`- **${s.name}**: ${n}`);
    }
  }
  lines.push('', END);
  return lines.join('\n');
}

/** Replaces the generated part (or puts it after the first heading's paragraph when there is none yet). */
export function spliceGenerated(doc: string, generated: string): string {
  const b = doc.indexOf(BEGIN);
  const e = doc.indexOf(END);
  if (b >= 0 && e > b) return doc.slice(0, b) + generated + doc.slice(e + END.length);
  const firstSection = doc.indexOf('\n## ');
  if (firstSection < 0) return `${doc.trimEnd()}\n\n${generated}\n`;
  return `${doc.slice(0, firstSection + 1)}${generated}\n\n${doc.slice(firstSection + 1)}`;
}

// ---- main ------------------------------------------------------------------------------------------

async function main() {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick') || process.env.BENCH_QUICK === '1';
  const names = args.filter((a) => !a.startsWith('--'));
  const unknown = names.filter((n) => !SCENARIOS.some((s) => s.name === n));
  if (unknown.length) {
    console.error(`unknown scenario ${unknown.join(', ')}; known: ${SCENARIOS.map((s) => s.name).join(', ')}`);
    process.exit(2);
  }
  const selected = names.length ? SCENARIOS.filter((s) => names.includes(s.name)) : SCENARIOS;
  const machine: Machine = {
    cpu: os.cpus()[0]?.model?.trim() ?? '?',
    cores: os.cpus().length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    postgres: await postgresVersion(),
    redis: await redisVersion(),
  };
  console.log(`bench: ${selected.map((s) => s.name).join(', ')}${quick ? ' (quick)' : ''}; ${machine.cores} cores (${machine.cpu}), Node ${machine.node}, PostgreSQL ${machine.postgres}, Redis ${machine.redis}, load ${loadText(load())}`);
  const store: Store = existsSync(STORE) ? JSON.parse(readFileSync(STORE, 'utf8')) : {};
  const dir = mkdtempSync(join(os.tmpdir(), 'hp-bench-'));
  const failed: string[] = [];
  try {
    for (const s of selected) {
      let base: Pick<Entry, 'scenario' | 'quick' | 'machine' | 'loadBefore' | 'settled'> = { scenario: s.name, quick, machine, loadBefore: load() };
      if (!existsSync(s.file)) {
        console.log(`\n== ${s.name}: ${s.file} does not exist yet, skipped`);
        // A missing file never overwrites an earlier result of that scenario.
        if (!store[s.name]?.result) store[s.name] = { ...base, status: 'missing', at: new Date().toISOString(), seconds: 0, loadAfter: load(), reason: `${s.file} not written yet` };
        continue;
      }
      if (!readFileSync(s.file, 'utf8').includes('reportResult')) {
        // Not yet converted: it would run without --quick and write no result.
        console.log(`\n== ${s.name}: ${s.file} does not report through bench/result.ts yet, skipped`);
        if (!store[s.name]?.result) store[s.name] = { ...base, status: 'missing', at: new Date().toISOString(), seconds: 0, loadAfter: load(), reason: `${s.file} does not report through bench/result.ts yet` };
        continue;
      }
      const settled = await settle();
      base = { ...base, loadBefore: load(), settled };
      console.log(`\n== ${s.name}: ${s.title} (${s.file}${quick ? ' --quick' : ''}), load ${loadText(base.loadBefore)}, ${settled.quiet ? 'quiet' : `NOT quiet (${settled.busyCores} cores busy)`} after ${settled.seconds} s`);
      const file = join(dir, `${s.name}.json`);
      const started = Date.now();
      const code = await runScenario(s, quick, file);
      const seconds = (Date.now() - started) / 1000;
      const at = new Date().toISOString();
      let result: BenchResult | undefined;
      try {
        result = JSON.parse(readFileSync(file, 'utf8')) as BenchResult;
      } catch {
        result = undefined;
      }
      if (code === 0 && result) {
        store[s.name] = { ...base, status: 'ok', at, seconds, loadAfter: load(), result };
      } else {
        failed.push(s.name);
        const reason = code !== 0 ? `exit code ${code}` : `no result written to BENCH_RESULT`;
        console.log(`== ${s.name} FAILED: ${reason}`);
        store[s.name] = { ...base, status: 'failed', at, seconds, loadAfter: load(), reason, result: store[s.name]?.result };
      }
      // Written after every scenario, so an interrupted run keeps what it measured.
      writeFileSync(STORE, `${JSON.stringify(store, null, 2)}\n`);
      writeFileSync(DOC, spliceGenerated(readFileSync(DOC, 'utf8'), renderGenerated(store)));
    }
    writeFileSync(STORE, `${JSON.stringify(store, null, 2)}\n`);
    writeFileSync(DOC, spliceGenerated(readFileSync(DOC, 'utf8'), renderGenerated(store)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\n${DOC} updated (${selected.map((s) => s.name).join(', ')}); load ${loadText(load())}${failed.length ? `; FAILED: ${failed.join(', ')}` : ''}`);
  process.exit(failed.length ? 1 : 0);
}

if (process.argv[1]?.endsWith('run.ts')) void main();
