// Database outage under load: one service process (`--role all`) through PgBouncer, autocannon on a token
// read; the database is made unreachable (PgBouncer DISABLE + KILL) for OUTAGE seconds in the middle.
// Prints the status codes answered and the log lines by level.
//   node --import tsx bench/outage.ts [--seconds 30] [--outage 15] [--entry src/main.ts]
import autocannon from 'autocannon';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPgBouncer } from '../test/harness/pgbouncer.js';
import { adminQuery, runCli, startService, randomPort } from '../test/harness/processes.js';

const args = process.argv.slice(2);
const opt = (name: string, d: number) => (args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : d);
const total = opt('seconds', 30);
const outage = opt('outage', 15);
const server = process.env.TEST_PG_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const db = `hp_outage_${Date.now().toString(36)}`;
await adminQuery(server, `create database ${db}`);
const bouncer = await startPgBouncer(server);
const direct = new URL(server);
direct.pathname = `/${db}`;
const url = bouncer.url(direct.toString());
const env = { DATABASE_URL: url, PG_PREPARED_STATEMENTS: 'off', REDIS_URL: '', TENANTS_DIR: mkdtempSync(join(tmpdir(), 'hp-t-')), DATA_DIR: mkdtempSync(join(tmpdir(), 'hp-d-')) };
const port = randomPort();
const svc = startService({ role: 'all', port, env });
await svc.ready();
await runCli(['tenant', 'add', 'load', '--host', 'load.test'], env);
const token = (await runCli(['token', 'issue', 'load', '--role', 'admin'], env)).stdout.trim().split('\n').pop()!;
// One token: 300 burst, then 100/min, so a healthy service answers most of the load 429 (after
// authenticating the token in the database): 200 and 429 both mean "served".
const logStart = svc.output().length;
const start = 5000;
// A failed PgBouncer command is reported, not left as an unhandled rejection that kills the run.
const step = (name: string, run: () => Promise<void>) => () => void run().catch((err: unknown) => console.error(`${name} failed:`, err));
setTimeout(step('outage start', async () => {
  await bouncer.admin(`DISABLE ${db}`);
  await bouncer.admin(`KILL ${db}`);
  console.log(`outage started at ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  setTimeout(step('outage end', async () => {
    await bouncer.admin(`ENABLE ${db}`);
    await bouncer.admin(`RESUME ${db}`);
    console.log(`outage ended at ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }), outage * 1000);
}), start);
const t0 = Date.now();
const perSecond: Record<number, Record<number, number>> = {};
const instance = autocannon({
  url: `http://127.0.0.1:${port}/api/categories`,
  headers: { host: 'load.test', authorization: `Bearer ${token}` },
  connections: 10,
  duration: total,
});
(instance as unknown as { on(e: string, f: (...a: never[]) => void): void }).on('response', (_c: unknown, status: number) => {
  const sec = Math.floor((Date.now() - t0) / 1000);
  (perSecond[sec] ??= {})[status] = ((perSecond[sec] ??= {})[status] ?? 0) + 1;
});
const result = await instance;
// Per second: which statuses (to see when the service recovered).
const codes = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([k, v]) => [k, (v as { count: number }).count]));
const lines = svc.output().slice(logStart).split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
const byLevel: Record<string, number> = {};
const loud: Record<string, number> = {};
for (const l of lines) {
  byLevel[l.level] = (byLevel[l.level] ?? 0) + 1;
  if (l.level >= 40) loud[`${l.level} ${l.msg}`] = (loud[`${l.level} ${l.msg}`] ?? 0) + 1;
}
console.log(Object.entries(perSecond).map(([s, c]) => `${s}s ${JSON.stringify(c)}`).join('\n'));
const { httpRequest } = await import('../test/harness/processes.js');
console.log('after the run: readyz', (await httpRequest(port, 'GET', '/readyz')).text);
console.log(JSON.stringify({ requests: result.requests.total, codes, errors: result.errors, logLinesByLevel: byLevel, warnOrWorse: loud }, null, 2));
await svc.stop();
await bouncer.admin(`KILL ${db}`).catch(() => {});
await bouncer.stop();
await adminQuery(server, `drop database if exists ${db} with (force)`);
