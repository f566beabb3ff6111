import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { readConfig } from '../config.js';
import { onItsConnection } from './affinity.js';
import { sql, type RawBuilder } from './sql.js';

// Prepared statements for the hot projections (issue 10.2). PostgreSQL parses and plans an unnamed statement
// on every execution: for the offer page that was 2-4 ms of its CPU per request (bench/README.md). A statement
// marked with `prepared()` is sent by `pg` as a named statement instead (name = hash of its text, which holds
// the tenant's schema): parsed once per connection, and its plan cached by PostgreSQL's plan cache.
//
// Named statements live in one server session. Behind a transaction pooler that does not carry them across
// transactions (PgBouncer before 1.21, or without `max_prepared_statements`; Debian 12 ships 1.18) a later
// execution lands on another server connection. `PG_PREPARED_STATEMENTS=auto` (the default) finds a pooler at
// start (connections.ts `detectPooler`) and sends them unnamed there, as every other statement; `off` always.
// Should one still meet a "prepared statement does not exist / already exists" error (`on` behind such a
// pooler), the process switches them off for itself, sends that statement again unnamed (the request does not
// fail) and says so once in the log. Inside a transaction the error has aborted it, so the use case runs again
// instead (attempts.ts).

const MARKER = '/*hp:prepared*/';
/**
 * At most this many named statements per connection (schemas × query shapes); more run unnamed. The offer
 * page's plan takes ~0.5 MB of the backend's memory. Statements of schemas whose own connection this is
 * (affinity.ts) get HOME of them; those of other schemas FOREIGN, and only from their second execution here, so
 * a schema that came by once while its own connection was busy does not take a place.
 */
const HOME = 150;
const FOREIGN = 50;
const MAX_PER_CONNECTION = HOME + FOREIGN;
const POOLER_ERRORS = new Set(['26000', '42P05']);

export type PreparedLog = { warn(msg: string, fields?: Record<string, unknown>): void };

/** Marks a statement to run as a named (prepared) statement where the setting allows it. */
export function prepared<R>(query: RawBuilder<R>): RawBuilder<R> {
  return sql<R>`${sql.raw(MARKER)}${query}`;
}

/** `PG_PREPARED_STATEMENTS`: `auto` (default: on unless a pooler is found at start), `on`, or `off` (`0`/`false`/`no`). */
export function preparedStatementsSetting(env?: NodeJS.ProcessEnv): 'auto' | 'on' | 'off' {
  return readConfig(env).pgPreparedStatements;
}

/** Whether named statements start switched on (`auto` and `on`; `auto` may switch them off once the pooler check ran). */
export function preparedStatementsWanted(env?: NodeJS.ProcessEnv): boolean {
  return preparedStatementsSetting(env) !== 'off';
}

export type PreparedSwitch = { enabled: boolean };

/**
 * Hooks every connection of the pool: a marked statement becomes `{ name, text, values }` while `state.enabled`.
 * pg remembers per connection which names it has parsed and sends only Bind/Execute for them.
 */
export function usePreparedStatements(pool: Pool, state: PreparedSwitch, log?: PreparedLog): void {
  pool.on('connect', (client: PoolClient) => {
    // Looked up on each call (not bound once), so whatever wraps pg's Client.prototype.query later still sees it.
    const query = (...args: unknown[]): unknown => (Object.getPrototypeOf(client).query as (...a: unknown[]) => unknown).apply(client, args);
    const names = new Set<string>();
    const foreign = new Set<string>();
    const seenOnce = new Set<string>();
    (client as unknown as { query: unknown }).query = (text: unknown, values?: unknown, cb?: unknown) => {
      if (!state.enabled || typeof text !== 'string' || !text.startsWith(MARKER) || !Array.isArray(values) || cb !== undefined) {
        return query(text, values, cb);
      }
      const name = `hp_${createHash('sha1').update(text).digest('base64url')}`;
      if (!names.has(name)) {
        if (onItsConnection(client)) {
          if (names.size - foreign.size >= HOME) return query(text, values);
        } else {
          if (foreign.size >= FOREIGN) return query(text, values);
          if (!seenOnce.has(name)) {
            if (seenOnce.size >= 4 * MAX_PER_CONNECTION) seenOnce.clear();
            seenOnce.add(name);
            return query(text, values);
          }
          seenOnce.delete(name);
          foreign.add(name);
        }
        names.add(name);
      }
      return (query({ name, text, values }) as Promise<unknown>).catch((err: { code?: string }) => {
        if (err?.code === '0A000') {
          // "cached plan must not change result type" (a migration changed a column under the statement): forget
          // it on this connection, so the next execution parses it again.
          names.delete(name);
          foreign.delete(name);
          delete (client as unknown as { connection: { parsedStatements: Record<string, string> } }).connection.parsedStatements[name];
          void (query(`deallocate "${name}"`) as Promise<unknown>).catch(() => {});
        } else if (err && POOLER_ERRORS.has(err.code ?? '')) {
          if (state.enabled) {
            state.enabled = false;
            log?.warn('named prepared statements switched off: the database connection does not keep them (a transaction pooler such as PgBouncer < 1.21?); the statement was sent again unnamed. Set PG_PREPARED_STATEMENTS=off (or auto) there', { code: err.code });
          }
          // The same statement unnamed, on the same connection. Inside a transaction the error aborted it and this
          // fails too (25P02): then the original error goes up, and the use case runs again (attempts.ts).
          return (query(text, values) as Promise<unknown>).catch(() => {
            throw err;
          });
        }
        throw err;
      });
    };
  });
}
