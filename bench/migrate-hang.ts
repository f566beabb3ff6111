// Migration lock through PgBouncer (transaction pooling): start one service process, then run the CLI's
// `migrate` TRIES times beside it, each with a 30 s limit. With a session advisory lock the lock could stay
// held by an idle server connection and `migrate` hung; with the transaction-scoped lock none may.
//   node --import tsx bench/migrate-hang.ts [--tries 5]
import { mkdtempSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPgBouncer } from '../test/harness/pgbouncer.js';
import { adminQuery, startService, randomPort } from '../test/harness/processes.js';

const args = process.argv.slice(2);
const tries = args.includes('--tries') ? Number(args[args.indexOf('--tries') + 1]) : 5;
const server = process.env.TEST_PG_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const db = `hp_mhang_${Date.now().toString(36)}`;
await adminQuery(server, `create database ${db}`);
const bouncer = await startPgBouncer(server, { poolSize: 5 });
const direct = new URL(server);
direct.pathname = `/${db}`;
const env = { DATABASE_URL: bouncer.url(direct.toString()), PG_PREPARED_STATEMENTS: 'off', REDIS_URL: '', TENANTS_DIR: 'tenants', DATA_DIR: mkdtempSync(join(tmpdir(), 'hp-d-')) };
const svc = startService({ role: 'all', port: randomPort(), env });
await svc.ready();
let hung = 0;
// `--parallel`: all runs at once (as replicas starting together), else one after another.
const parallel = args.includes('--parallel');
const run = async (i: number) => {
  const started = Date.now();
  const code = await new Promise<number | null | 'timeout'>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'migrate'], { env: { ...process.env, ...env, LOG_LEVEL: 'warn' }, stdio: 'ignore' });
    const t = setTimeout(() => { child.kill('SIGKILL'); resolve('timeout'); }, 30_000);
    child.on('exit', (c) => { clearTimeout(t); resolve(c); });
  });
  if (code === 'timeout') hung++;
  console.log(`migrate ${i + 1}: ${code === 'timeout' ? 'hung (killed after 30 s)' : `exit ${code}`} in ${Date.now() - started} ms`);
};
if (parallel) await Promise.all(Array.from({ length: tries }, (_, i) => run(i)));
else for (let i = 0; i < tries; i++) await run(i);
console.log(`through PgBouncer: ${hung} of ${tries} migrate runs hung`);
await svc.stop();
await bouncer.admin(`KILL ${db}`).catch(() => {});
await bouncer.stop();
await adminQuery(server, `drop database if exists ${db} with (force)`);
