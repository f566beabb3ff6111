import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// PgBouncer in transaction pooling mode in front of the run's PostgreSQL, as a child process with its own
// pgbouncer.ini in a temporary folder (stack notes: Debian's 1.18, no server-side prepared statements,
// no session state between transactions). `.ci/run` installs the package; without the binary the tests
// that need it print why they are skipped.
export const PGBOUNCER_BIN = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((p) => spawnSync(p, ['--version']).status === 0);

export type PgBouncer = {
  port: number;
  /** `databaseUrl` with host and port replaced by PgBouncer's. */
  url(databaseUrl: string): string;
  /** PAUSE/RESUME through the admin console (an outage without stopping PostgreSQL). */
  admin(command: string): Promise<void>;
  stop(): Promise<void>;
};

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

async function waitForPort(port: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => { s.end(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`pgbouncer did not listen on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startPgBouncer(serverUrl: string, opts: { poolSize?: number } = {}): Promise<PgBouncer> {
  if (!PGBOUNCER_BIN) throw new Error('pgbouncer is not installed (apt-get install -y pgbouncer)');
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const dir = mkdtempSync(join(tmpdir(), 'hp-pgbouncer-'));
  chmodSync(dir, 0o755);
  const port = await freePort();
  const ini = `[databases]
* = host=${server.hostname} port=${server.port || 5432}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${dir}/userlist.txt
admin_users = ${user}
pool_mode = transaction
default_pool_size = ${opts.poolSize ?? 20}
max_client_conn = 1000
ignore_startup_parameters = extra_float_digits,options
server_reset_query =
server_login_retry = 1
logfile =
pidfile =
`;
  writeFileSync(join(dir, 'pgbouncer.ini'), ini, { mode: 0o644 });
  writeFileSync(join(dir, 'userlist.txt'), `"${user}" ""\n`, { mode: 0o644 });
  // As root PgBouncer refuses to run unless told which user to become.
  const args = process.getuid?.() === 0 ? ['-u', 'postgres', join(dir, 'pgbouncer.ini')] : [join(dir, 'pgbouncer.ini')];
  const child: ChildProcess = spawn(PGBOUNCER_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout!.on('data', (c) => (log += c));
  child.stderr!.on('data', (c) => (log += c));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  // Never outlives the process that started it (a test run or bench that ends without stop()).
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  void exited.then(() => process.off('exit', reap));
  try {
    await waitForPort(port, 5000);
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`${(err as Error).message}: ${log.slice(-2000)}`);
  }
  const url = (databaseUrl: string) => {
    const u = new URL(databaseUrl);
    u.hostname = '127.0.0.1';
    u.port = String(port);
    return u.toString();
  };
  return {
    port,
    url,
    admin: async (command: string) => {
      const pg = (await import('pg')).default;
      const c = new pg.Client({ connectionString: url(new URL(`/pgbouncer`, serverUrl).toString()) });
      await c.connect();
      try {
        await c.query(command);
      } finally {
        await c.end();
      }
    },
    stop: async () => {
      child.kill('SIGINT');
      const t = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(t);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
