import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { EmbeddedDatabaseError, PASSWORD, USER, type Layout, type OsUser } from './embedded-layout.js';

// The embedded PostgreSQL's processes (embedded.ts): finding a running postmaster, initdb, start and stop.

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

export function canConnect(port: number): Promise<boolean> {
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

function run(file: string, args: string[], owner: OsUser | undefined, native: string, detached = false): ChildProcess {
  return spawn(file, args, {
    ...(owner ? { uid: owner.uid, gid: owner.gid } : {}),
    detached,
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

export async function initialise(layout: Layout, onLog: (m: string) => void): Promise<void> {
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

/** Issue 24: a taken port is the usual reason, and the operator needs the setting's name, not PostgreSQL's log. */
function startError(layout: Layout, port: number, code: number | null, output: string): EmbeddedDatabaseError {
  if (/could not bind|Address already in use|could not create any TCP\/IP sockets/i.test(output)) {
    return new EmbeddedDatabaseError(`port ${port} of the embedded PostgreSQL is taken by another program: set EMBEDDED_PG_PORT to a free port (for example EMBEDDED_PG_PORT=${port === 65535 ? port - 1 : port + 1}), or DATABASE_URL to use a PostgreSQL of your own`);
  }
  return new EmbeddedDatabaseError(`the embedded PostgreSQL in ${layout.dir} did not start on port ${port} (exit ${code}): ${lastLines(output)}`);
}

const started = new Set<ChildProcess>();
let exitHook = false;

/** Starts the postmaster; resolves once it accepts connections, rejects with PostgreSQL's own reason. */
export function startPostmaster(layout: Layout, port: number, onLog: (m: string) => void): Promise<ChildProcess> {
  if (!exitHook) {
    exitHook = true;
    // A process that exits without closing its runtime (a fatal start error) still stops its cluster.
    process.on('exit', () => {
      for (const child of started) child.kill('SIGINT');
    });
  }
  return new Promise((resolve, reject) => {
    // A process group of its own: Ctrl-C in the terminal signals the whole foreground group, and PostgreSQL
    // would shut down fast beside the service, cutting its connections mid-close (57P01 warnings). The
    // service stops it after its own connections are closed (stopPostmaster), and on exit.
    const child = run(path.join(layout.native, 'bin', 'postgres'), ['-D', layout.dir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1'], layout.owner, layout.native, true);
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
      if (!ready) reject(startError(layout, port, code, output));
    });
  });
}

/**
 * Stops the postmaster: a smart shutdown first (SIGTERM: new connections refused, the server ends once the last
 * client has gone), so connections the service is still closing (pg-pool's end() resolves before each socket has
 * closed) end on their own instead of being terminated under the client (57P01 warnings at Ctrl-C, issue 25's
 * README walk). Clients of another process still connected after 2 s get a fast shutdown (SIGINT: open
 * transactions rolled back), and a postmaster that has not ended 10 s later an immediate one (SIGQUIT).
 */
export function stopPostmaster(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const fast = setTimeout(() => child.kill('SIGINT'), 2_000).unref();
    const immediate = setTimeout(() => child.kill('SIGQUIT'), 12_000).unref();
    child.once('close', () => {
      clearTimeout(fast);
      clearTimeout(immediate);
      started.delete(child);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
