import { AsyncLocalStorage } from 'node:async_hooks';
import { databaseSettings } from '../config.js';

// Issue 23: every connection of the service waits for a lock and runs a statement for a bounded time. Without
// `lock_timeout` one transaction holding one offer's row (an operator's psql, a hung job) made every pooled
// connection wait on it, and every municipality with it.
//
// Three profiles. `request` is the session default of every pooled connection (a startup parameter, so it costs
// no round trip): short, a request is answered 503 with Retry-After when a lock does not come in time. `job` and
// `migration` need longer and set theirs inside each of their transactions (`SET LOCAL`, sent with the BEGIN in
// one round trip, guarded.ts). Behind a transaction pooler the startup parameters never reach PostgreSQL
// (PgBouncer ignores `options`), so there every transaction sets its profile's values (docs/operations.md).

export type TimeoutProfile = 'request' | 'job' | 'migration';
export type Timeouts = { lockMs: number; statementMs: number };
export type DbTimeouts = Record<TimeoutProfile, Timeouts> & { idleInTransactionMs: number };

/**
 * The settings (config.ts `databaseSettings`, README "Configuration"): `PG_LOCK_TIMEOUT_MS` (3000) and
 * `PG_STATEMENT_TIMEOUT_MS` (30000) for requests; `PG_JOB_LOCK_TIMEOUT_MS` (30000) and `PG_JOB_STATEMENT_TIMEOUT_MS`
 * (600000) for background jobs; `PG_MIGRATION_LOCK_TIMEOUT_MS` (60000) and `PG_MIGRATION_STATEMENT_TIMEOUT_MS` (0,
 * none: an index over a large table must not be cut off); `PG_IDLE_IN_TRANSACTION_TIMEOUT_MS` (60000) for every
 * connection.
 */
export function dbTimeouts(env: NodeJS.ProcessEnv = process.env): DbTimeouts {
  return databaseSettings(env).timeouts;
}

/** The startup parameter `options` that gives a connection `t` as its session defaults. */
export function startupOptions(t: Timeouts, idleInTransactionMs: number): string {
  return `-c lock_timeout=${t.lockMs} -c statement_timeout=${t.statementMs} -c idle_in_transaction_session_timeout=${idleInTransactionMs}`;
}

/** `t` for the rest of the current transaction (appended to its BEGIN). */
export function setLocalSql(t: Timeouts): string {
  return `set local lock_timeout = ${Math.trunc(t.lockMs)}; set local statement_timeout = ${Math.trunc(t.statementMs)}`;
}

const profile = new AsyncLocalStorage<TimeoutProfile>();

/** Runs `fn` (and everything it starts) with the timeouts of `p` on its transactions. */
export function withTimeoutProfile<T>(p: TimeoutProfile, fn: () => T): T {
  return profile.run(p, fn);
}

/** The profile `withTimeoutProfile` set around the caller, else `fallback` (the pool's own: `request` for the service). */
export function currentTimeoutProfile(fallback: TimeoutProfile = 'request'): TimeoutProfile {
  return profile.getStore() ?? fallback;
}

/**
 * What kind of lock conflict `err` (or one of its causes) is: PostgreSQL's `lock_not_available` (55P03, a
 * lock_timeout), `query_canceled` by statement_timeout (57014; a cancel for another reason is not one),
 * `deadlock_detected` (40P01) or `serialization_failure` (40001). MikroORM copies the code onto its exceptions.
 */
export type LockConflict = 'lock_timeout' | 'statement_timeout' | 'deadlock' | 'serialization';

export function lockConflictOf(err: unknown): LockConflict | null {
  let e = err as { code?: unknown; message?: unknown; cause?: unknown } | undefined;
  for (let i = 0; i < 5 && e && typeof e === 'object'; i++, e = e.cause as typeof e) {
    switch (e.code) {
      case '55P03': return 'lock_timeout';
      case '40P01': return 'deadlock';
      case '40001': return 'serialization';
      case '57014':
        if (typeof e.message === 'string' && /statement timeout/i.test(e.message)) return 'statement_timeout';
        return null;
      default:
    }
  }
  return null;
}
