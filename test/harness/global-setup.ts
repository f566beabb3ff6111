import type { TestProject } from 'vitest/node';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/platform/db/embedded.js';
import { createOrm, migrateControl } from '../../src/platform/db/orm.js';

// One throwaway database per run on the machine's PostgreSQL (127.0.0.1:5432, or TEST_PG_URL); where no
// server answers (a fresh machine), the embedded PostgreSQL is started instead, so `npm test` passes there.
const DEFAULT_SERVER = 'postgresql://postgres@127.0.0.1:5432/postgres';

async function reachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

let embedded: EmbeddedDatabase | undefined;
let adminUrl = '';
let dbName = '';

export async function setup(project: TestProject) {
  let server = process.env.TEST_PG_URL || DEFAULT_SERVER;
  if (!(await reachable(server))) {
    console.warn(`[test] no PostgreSQL at ${server.replace(/\/\/.*@/, '//')}: starting the embedded one`);
    embedded = await startEmbeddedPostgres({ dataDir: '.data/test', port: 54330, database: 'postgres' });
    server = embedded.url;
  }
  adminUrl = server;
  dbName = `hp_test_${Date.now().toString(36)}_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  const orm = await createOrm(url.toString(), { poolMax: 2 });
  await migrateControl(orm);
  await orm.close();
  project.provide('databaseUrl', url.toString());
}

export async function teardown() {
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
  }
}
