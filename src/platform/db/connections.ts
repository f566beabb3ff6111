import pg from 'pg';
import { createPostgreSqlTypeParsers } from '@mikro-orm/postgresql';
import type { Logger } from '../logging/logger.js';
import { connectionAffinityWanted } from './affinity.js';
import { GuardedDialect } from './guarded-dialect.js';
import { createConnectionSource, type ConnectionSource } from './lanes.js';
import { PgDialect } from './pg-driver.js';
import { PoolGuard } from './pool-guard.js';
import type { NamedStatements } from './prepared.js';
import { currentTimeoutProfile, dbTimeouts, setLocalSql, startupOptions, type DbTimeouts, type TimeoutProfile } from './timeouts.js';

// The service's connection pool (issue 23, issue 26): pg's connections, configured as MikroORM would (host, port,
// user, password and database from the URL; dates and timestamps as text), plus what this service adds: the
// request timeouts as startup parameters of every connection, a connection per lane of municipalities
// (lanes.ts, affinity.ts), named statements (prepared.ts), all through the service's own kysely driver
// (pg-driver.ts), and the guard (pool-guard.ts) with its dialect (guarded-dialect.ts). MikroORM gets the dialect
// (its `driverOptions` accept one), so every statement of the service goes through it.

export type Database = {
  dialect: GuardedDialect;
  /** The plain dialect over the same connections (no guard): for a second ORM that borrows them (orm.ts). */
  pgDialect: PgDialect;
  guard: PoolGuard;
  connections: ConnectionSource;
  statements: NamedStatements;
  timeouts: DbTimeouts;
};

export type DatabaseOptions = {
  poolMax: number;
  statements: NamedStatements;
  connectionAffinity?: boolean;
  log: Logger;
  timeouts?: DbTimeouts;
  /** Test hooks: shares and wait other than the settings'. */
  shares?: { tenant?: number; offer?: number; waitMs?: number };
  /** The timeouts of the pool's own sessions and transactions: `request` (the service), `job` (the operator CLI). */
  profile?: TimeoutProfile;
};

/** Connection settings from a URL, as MikroORM reads them (only host, port, user, password and database). */
export function connectionConfig(url: string): pg.PoolConfig {
  const u = new URL(url);
  return {
    host: decodeURIComponent(u.hostname),
    port: Number(u.port) || 5432,
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database: decodeURIComponent(u.pathname).replace(/^\//, ''),
  };
}

function typeOverrides(): pg.CustomTypesConfig {
  const types = new pg.TypeOverrides();
  // text[]'s parser: the elements as strings, as MikroORM's own pool reads date and timestamp arrays.
  const textArray = (pg.types.getTypeParser as (oid: number, format: 'text') => (s: string) => string[])(1009, 'text');
  for (const [oid, parser] of Object.entries(createPostgreSqlTypeParsers((s: string) => textArray(s)))) {
    types.setTypeParser(Number(oid), parser as (s: string) => unknown);
  }
  return types;
}

export function createDatabase(url: string, opts: DatabaseOptions): Database {
  const timeouts = opts.timeouts ?? dbTimeouts();
  const profile = opts.profile ?? 'request';
  const base = connectionConfig(url);
  const connections = createConnectionSource({
    lanes: opts.connectionAffinity ?? connectionAffinityWanted(),
    size: opts.poolMax,
    config: {
      ...base,
      min: 0,
      types: typeOverrides(),
      // The request profile as every connection's session defaults (no round trip). A pooler ignores them
      // (PgBouncer's ignore_startup_parameters); transactions set their own anyway (pg-driver.ts).
      // Generic plans from the first execution (issue 25): a named statement (prepared.ts) or a PL/pgSQL
      // function's statement is otherwise planned anew for its first five executions on each connection and
      // schema, and with many municipalities over a pool of 10 a connection rarely gets past those five (the
      // opening morning, pg_stat_statements: the participant's read planned 482 times for 3,000 applications,
      // 218 with this). The statements look rows up by key, where the generic plan is the custom one.
      options: `${startupOptions(timeouts[profile], timeouts.idleInTransactionMs)} -c plan_cache_mode=force_generic_plan`,
    },
    // A database (or pooler) that does not accept connections fails the request after 5 s (503, errors.ts)
    // instead of holding it until the client gives up.
    connectTimeoutMs: 5_000,
    // A connection dropped by the server is reported as an `error` event; without a listener it would end the process.
    onConnect: (client) => client.on('error', (err) => opts.log.warn({ code: (err as { code?: string }).code, reason: err.message.slice(0, 200) }, 'PostgreSQL connection error')),
    onError: (err) => opts.log.warn({ code: (err as { code?: string }).code, reason: err.message.slice(0, 200) }, 'PostgreSQL pool error'),
  });
  const probeConfig: pg.PoolConfig = { ...base, options: '-c statement_timeout=2000 -c lock_timeout=1000' };
  const guard = new PoolGuard(connections, opts.poolMax, timeouts, opts.log, probeConfig, opts.shares, profile);
  // Every transaction begins with its profile's timeouts (SET LOCAL with the BEGIN), which also holds behind a pooler.
  const pgDialect = new PgDialect(connections, opts.statements, { afterBegin: () => setLocalSql(timeouts[currentTimeoutProfile(profile)]) });
  return { dialect: new GuardedDialect(pgDialect, guard), pgDialect, guard, connections, statements: opts.statements, timeouts };
}

export type Pooler = { pooled: boolean; sessionTimeouts: boolean };

/**
 * Whether a pooler stands between the service and PostgreSQL, seen on one connection at start: PostgreSQL tells
 * a client its backend's process id at login; a pooler (PgBouncer) gives its own key instead, so it differs from
 * `pg_backend_pid()`. Also whether the startup parameters arrived (a pooler drops them). pg keeps the id as the
 * client's `processID` (kysely reads it too); without it, only the second sign counts.
 */
export async function detectPooler(db: Database): Promise<Pooler> {
  const lease = await db.connections.acquire();
  const client = lease.client;
  try {
    const r = await client.query<{ pid: number; lock: string }>(`select pg_backend_pid() as pid, (select setting from pg_settings where name = 'lock_timeout') as lock`);
    const row = r.rows[0]!;
    const own = (client as unknown as { processID?: unknown }).processID;
    const sessionTimeouts = Number(row.lock) === db.timeouts[db.guard.profile].lockMs;
    const pooled = (typeof own === 'number' && own !== row.pid) || !sessionTimeouts;
    return { pooled, sessionTimeouts };
  } finally {
    lease.release();
  }
}
