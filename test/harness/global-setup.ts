import type { TestProject } from 'vitest/node';
import pg from 'pg';
import type { EmbeddedDatabase } from '../../src/platform/db/embedded.js';
import { createOrm, migrateControl } from '../../src/platform/db/orm.js';
import { startPgBouncer, type PgBouncer } from './pgbouncer.js';
import { entities } from '../../src/entities.js';
import { serverAnswers } from '../../src/platform/db/reachable.js';

// One throwaway database per run on the machine's PostgreSQL (127.0.0.1:5432, or TEST_PG_URL); where no
// server answers (a fresh machine), the embedded PostgreSQL is started instead, so `npm test` passes there.
const DEFAULT_SERVER = 'postgresql://postgres@127.0.0.1:5432/postgres';

let embedded: EmbeddedDatabase | undefined;
let bouncer: PgBouncer | undefined;
let adminUrl = '';
let dbName = '';

export async function setup(project: TestProject) {
  let server = process.env.TEST_PG_URL || DEFAULT_SERVER;
  if (!(await serverAnswers(server))) {
    console.warn(`[test] no PostgreSQL at ${server.replace(/\/\/.*@/, '//')}: starting the embedded one`);
    // Loaded only when needed: the package's exit hook calls process.exit(0) on `beforeExit`, which turned
    // every failed run's exit code into 0 (CI saw green) whenever it was imported.
    const { startEmbeddedPostgres } = await import('../../src/platform/db/embedded.js');
    // Here it is needed: keep the run's exit code across that hook (an `exit` listener may still set it).
    let code: number | undefined;
    process.on('beforeExit', () => (code = Number(process.exitCode ?? 0)));
    process.on('exit', () => { if (code) process.exitCode = code; });
    embedded = await startEmbeddedPostgres({ dataDir: '.data/test', port: 54330, database: 'postgres' });
    server = embedded.url;
  }
  adminUrl = server;
  dbName = `hp_test_${Date.now().toString(36)}_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  await admin.end();
  let url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  project.provide('directDatabaseUrl', url.toString());
  // TEST_VIA_PGBOUNCER=1: the whole suite through a PgBouncer in transaction pooling mode (no session state).
  if (process.env.TEST_VIA_PGBOUNCER === '1') {
    bouncer = await startPgBouncer(adminUrl, { poolSize: 40 });
    url = new URL(bouncer.url(url.toString()));
    // Debian's PgBouncer 1.18 keeps no named statements across transactions (src/platform/db/prepared.ts). Left
    // on here on purpose (issue 23): the first statement a server connection does not know switches them off and
    // is sent again, so the suite must pass without a 5xx all the same. PG_PREPARED_STATEMENTS=auto would find
    // the pooler at start instead.
    process.env.PG_PREPARED_STATEMENTS ??= 'on';
    console.warn(`[test] through PgBouncer (transaction pooling) on port ${bouncer.port}, named statements ${process.env.PG_PREPARED_STATEMENTS}`);
  }
  const orm = await createOrm(url.toString(), { entities, poolMax: 2 });
  await migrateControl(orm);
  await orm.close();
  project.provide('databaseUrl', url.toString());
}

export async function teardown() {
  await bouncer?.admin(`KILL ${dbName}`).catch(() => {});
  await bouncer?.stop();
  if (dbName && !process.env.KEEP_TEST_DB) {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  }
  await embedded?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    /** The run's database without PgBouncer, even under TEST_VIA_PGBOUNCER=1. */
    directDatabaseUrl: string;
  }
}
