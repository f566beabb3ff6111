import {
  type CompiledQuery, type DatabaseConnection, type DatabaseIntrospector, type Dialect, type DialectAdapter, type Driver,
  type Kysely, type QueryCompiler, type QueryResult, type TransactionSettings,
} from 'kysely';
import { connectionLane } from './affinity.js';
import { currentAttempt, type Attempt } from './attempts.js';
import { isConnectTimeout } from './lanes.js';
import type { PgDialect } from './pg-driver.js';
import type { PoolGuard } from './pool-guard.js';
import { lockConflictOf } from './timeouts.js';

// Issue 23: our own small layer over kysely's public Dialect/Driver/DatabaseConnection interfaces, around the
// service's PostgreSQL dialect (pg-driver.ts) that MikroORM and every query of the service use (orm.ts hands it
// to MikroORM as its dialect).
// - A checkout waits for a place of its municipality's share first (the schema of the request's or job's lane,
//   affinity.ts), so one municipality never holds more than its share of the pool; a nested checkout of a use
//   case that already holds a connection skips the wait (it would otherwise wait for itself).
// - Every transaction begins with its profile's timeouts (`SET LOCAL`, in the same round trip as BEGIN, sent by
//   pg-driver.ts), which also holds behind a transaction pooler.
// - Every statement passes here: lock and statement timeouts are counted and logged per municipality, and an
//   autocommit write or a commit marks the use case's attempt as dirty (attempts.ts: it may not run again).
// - A checkout that times out while every connection is in use is `PoolSaturated` (503, not an outage).

/** The pool had no connection free for the whole connect timeout, while the database answers. */
export class PoolSaturated extends Error {
  override name = 'PoolSaturated';
  constructor() {
    super('every database connection of this process is in use');
  }
}

type Held = { release: (() => void) | null; schema: string | null; attempt: Attempt | undefined; inTransaction: boolean };

/** SQL that can only read: `select`/`values`/`show`, or `with` without a writing part. Anything else counts as a write. */
const READ_ONLY = /^(select|values|show|table)\b/i;
const WRITES = /\b(insert|update|delete|merge)\b/i;
function writes(sqlText: string): boolean {
  const text = sqlText.replace(/^(\s|\/\*[\s\S]*?\*\/|--[^\n]*\n)+/, '');
  if (READ_ONLY.test(text)) return false;
  if (/^with\b/i.test(text)) return WRITES.test(text);
  return true;
}

class GuardedConnection implements DatabaseConnection {
  constructor(readonly inner: DatabaseConnection, readonly held: Held, private readonly guard: PoolGuard) {}

  async executeQuery<R>(query: CompiledQuery, options?: Parameters<DatabaseConnection['executeQuery']>[1]): Promise<QueryResult<R>> {
    try {
      const result = await this.inner.executeQuery<R>(query, options);
      if (!this.held.inTransaction && this.held.attempt && writes(query.sql)) this.held.attempt.dirty = true;
      return result;
    } catch (err) {
      const conflict = lockConflictOf(err);
      if (conflict === 'lock_timeout' || conflict === 'statement_timeout') this.guard.timedOut(conflict === 'lock_timeout' ? 'lock' : 'statement', this.held.schema);
      throw err;
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize: number, options?: Parameters<DatabaseConnection['streamQuery']>[2]): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize, options);
  }

  cancelQuery(provider: Parameters<NonNullable<DatabaseConnection['cancelQuery']>>[0]): Promise<void> {
    return this.inner.cancelQuery?.(provider) ?? Promise.resolve();
  }

  collectSessionInfo(): Promise<void> {
    return this.inner.collectSessionInfo?.() ?? Promise.resolve();
  }

  killSession(provider: Parameters<NonNullable<DatabaseConnection['killSession']>>[0]): Promise<void> {
    return this.inner.killSession?.(provider) ?? Promise.resolve();
  }
}

const unwrap = (c: DatabaseConnection): DatabaseConnection => (c instanceof GuardedConnection ? c.inner : c);

class GuardedDriver implements Driver {
  constructor(private readonly inner: Driver, private readonly guard: PoolGuard, private readonly owner: boolean) {}

  init(options?: Parameters<Driver['init']>[0]): Promise<void> {
    return this.inner.init(options);
  }

  async acquireConnection(options?: Parameters<Driver['acquireConnection']>[0]): Promise<DatabaseConnection> {
    const started = performance.now();
    const schema = connectionLane() ?? null;
    const attempt = currentAttempt();
    let release: (() => void) | null = null;
    // A use case holding a connection (its transaction) that needs another one must not wait for its own share:
    // up to two such checkouts skip it.
    const nested = !!attempt && attempt.connections > 0 && attempt.connections < 3;
    // A wait that runs out is `ShareFull` (503), counted and logged by the guard.
    if (schema && !nested) release = await this.guard.tenants.acquire(schema);
    let connection: DatabaseConnection;
    try {
      connection = await this.inner.acquireConnection(options);
    } catch (err) {
      release?.();
      if (isConnectTimeout(err) && this.guard.pool.totalCount >= this.guard.size) {
        this.guard.saturated();
        throw new PoolSaturated();
      }
      throw err;
    }
    this.guard.checkedOut(schema, 1);
    if (attempt) attempt.connections++;
    this.guard.emit('waited', schema, (performance.now() - started) / 1000);
    return new GuardedConnection(connection, { release, schema, attempt, inTransaction: false }, this.guard);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await this.inner.beginTransaction(unwrap(connection), settings);
    if (connection instanceof GuardedConnection) connection.held.inTransaction = true;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await this.inner.commitTransaction(unwrap(connection));
    if (connection instanceof GuardedConnection) {
      connection.held.inTransaction = false;
      if (connection.held.attempt) connection.held.attempt.dirty = true;
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (connection instanceof GuardedConnection) connection.held.inTransaction = false;
    await this.inner.rollbackTransaction(unwrap(connection));
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.inner.savepoint!(unwrap(connection), name, compile);
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.inner.rollbackToSavepoint!(unwrap(connection), name, compile);
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.inner.releaseSavepoint!(unwrap(connection), name, compile);
  }

  async releaseConnection(connection: DatabaseConnection, options?: Parameters<Driver['releaseConnection']>[1]): Promise<void> {
    try {
      await this.inner.releaseConnection(unwrap(connection), options);
    } finally {
      if (connection instanceof GuardedConnection) {
        const h = connection.held;
        this.guard.checkedOut(h.schema, -1);
        if (h.attempt) h.attempt.connections--;
        h.release?.();
        h.release = null;
      }
    }
  }

  async destroy(options?: Parameters<Driver['destroy']>[0]): Promise<void> {
    await this.inner.destroy(options);
    if (this.owner) await this.guard.close();
  }
}

/** `inner` (pg-driver.ts over the service's connections) with the guard's checkouts, timeouts and counts. */
export class GuardedDialect implements Dialect {
  constructor(private readonly inner: PgDialect, private readonly guard: PoolGuard, private readonly owner = true) {}

  createDriver(): Driver {
    return new GuardedDriver(this.inner.createDriver(), this.guard, this.owner);
  }

  /** The same connections and guard for a second ORM (orm.ts): destroying its driver leaves both open. */
  borrowed(): GuardedDialect {
    return new GuardedDialect(this.inner.borrowed(), this.guard, false);
  }

  createQueryCompiler(): QueryCompiler {
    return this.inner.createQueryCompiler();
  }

  createAdapter(): DialectAdapter {
    return this.inner.createAdapter();
  }

  // kysely's own Dialect interface types this parameter as Kysely<any>.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return this.inner.createIntrospector(db);
  }
}
