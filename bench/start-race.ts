// Start race: N service processes started at the same moment on a fresh database (as a deploy does),
// directly or through PgBouncer in transaction pooling mode. Prints how many failed to start.
//   node --import tsx bench/start-race.ts [--n 10] [--rounds 3] [--pgbouncer] [--compiled]
import { spawn } from 'node:child_process';
import pg from 'pg';
import { startPgBouncer, type PgBouncer } from '../test/harness/pgbouncer.js';

const args = process.argv.slice(2);
const opt = (name: string, d: number) => (args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : d);
const n = opt('n', 10);
const rounds = opt('rounds', 3);
const viaBouncer = args.includes('--pgbouncer');
const server = process.env.TEST_PG_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';

async function admin(q: string) {
  const c = new pg.Client({ connectionString: server });
  await c.connect();
  try { await c.query(q); } finally { await c.end(); }
}

type Outcome = { ok: boolean; role: string; reason: string; ms: number };

function startOne(url: string, role: string, port: number): Promise<Outcome> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--role', role], {
      env: { ...process.env, DATABASE_URL: url, PG_PREPARED_STATEMENTS: viaBouncer ? 'off' : 'on', PORT: String(port), LOG_LEVEL: 'info', REDIS_URL: '', TENANTS_DIR: 'tenants' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let done = false;
    const finish = (o: Omit<Outcome, 'ms' | 'role'>) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      resolve({ ...o, role, ms: Date.now() - started });
    };
    const onData = (c: Buffer) => {
      out += c;
      if (/listening on|workers started/.test(out)) finish({ ok: true, reason: '' });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      const m = /"msg":"start failed"[^\n]*?"message":"([^"]*)"/.exec(out) ?? /"message":"([^"]*)"/.exec(out);
      finish({ ok: false, reason: `exit ${code}: ${m?.[1] ?? out.slice(-300)}` });
    });
    const timer = setTimeout(() => finish({ ok: false, reason: 'not ready within 90 s' }), 90_000);
  });
}

let bouncer: PgBouncer | undefined;
if (viaBouncer) bouncer = await startPgBouncer(server);
let failures = 0;
const reasons: string[] = [];
for (let r = 0; r < rounds; r++) {
  const db = `hp_race_${Date.now().toString(36)}_${r}`;
  await admin(`create database ${db}`);
  const direct = new URL(server);
  direct.pathname = `/${db}`;
  const url = bouncer ? bouncer.url(direct.toString()) : direct.toString();
  const outcomes = await Promise.all(
    Array.from({ length: n }, (_, i) => startOne(url, i % 2 ? 'worker' : 'api', 21000 + r * 100 + i)),
  );
  const failed = outcomes.filter((o) => !o.ok);
  failures += failed.length;
  for (const f of failed) reasons.push(`${f.role}: ${f.reason}`);
  console.log(`round ${r + 1}: ${n - failed.length}/${n} started (${Math.max(...outcomes.map((o) => o.ms))} ms slowest)`);
  if (bouncer) await bouncer.admin(`KILL ${db}`).catch(() => {});
  await admin(`drop database if exists ${db} with (force)`);
}
await bouncer?.stop();
console.log(`${viaBouncer ? 'through PgBouncer (transaction pooling)' : 'direct'}: ${failures} of ${n * rounds} starts failed`);
for (const r of [...new Set(reasons)]) console.log(`  ${r}`);
