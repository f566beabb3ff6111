import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** A throwaway database of a benchmark on the machine's PostgreSQL, and the admin connection that made it. */
export type ScratchDatabase = {
  name: string;
  /** Connection string of the scratch database. */
  url: string;
  /** Connected to the server's own database (`server`); statements about the cluster (pg_stat_activity). */
  admin: pg.Client;
  /** Drops the database (unless `keep`) and closes the admin connection. */
  drop: (opts?: { keep?: boolean }) => Promise<void>;
};

/** Creates `hp_bench_<scenario>_<random>` on the server of `server` (a connection string). */
export async function scratchDatabase(server: string, scenario: string): Promise<ScratchDatabase> {
  const name = `hp_bench_${scenario}_${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    name, url: url.toString(), admin,
    drop: async (opts = {}) => {
      try {
        if (!opts.keep) await admin.query(`drop database if exists ${name} with (force)`);
      } finally {
        await admin.end();
      }
    },
  };
}
