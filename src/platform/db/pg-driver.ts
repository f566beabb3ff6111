import type pg from 'pg';
import {
  CompiledQuery, IdentifierNode, PostgresAdapter, RawNode, createQueryId, type RootOperationNode, PostgresIntrospector, PostgresQueryCompiler, type DatabaseConnection, type DatabaseIntrospector,
  type Dialect, type DialectAdapter, type Driver, type Kysely, type QueryCompiler, type QueryResult, type TransactionSettings,
} from 'kysely';
import { connectionLane } from './affinity.js';
import type { ConnectionSource, Lease } from './lanes.js';
import { POOLER_ERRORS, type NamedStatements } from './prepared.js';

// Issue 26: the service's own kysely driver over its connections (lanes.ts), in place of kysely's
// PostgresDriver over one pg.Pool, built only on kysely's public Driver/DatabaseConnection interfaces and pg's
// public `client.query`. What it adds: a checkout prefers the lane of the request's schema (affinity.ts); a
// statement marked by `prepared()` runs under a name through pg's query config `{ name, text, values }`
// (prepared.ts); a transaction's BEGIN carries the caller's extra statements (the timeouts' SET LOCAL) in the
// same round trip. Results are shaped as kysely's PostgresDriver shapes them.

export type PgDriverOptions = {
  /** SQL sent right after BEGIN in the same round trip (the timeouts of the transaction's profile). */
  afterBegin?: () => string;
  /** false: `destroy` leaves the connections open (a second ORM over the same pool, orm.ts). */
  owner?: boolean;
};

export class PgConnection implements DatabaseConnection {
  inTransaction = false;

  constructor(readonly lease: Lease, private readonly statements: NamedStatements) {}

  get client(): pg.PoolClient {
    return this.lease.client;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const client = this.lease.client;
    const values = query.parameters as unknown[];
    const name = this.statements.nameFor(client, query.sql, this.lease.home);
    if (!name) return shape<R>(await client.query(query.sql, values));
    try {
      return shape<R>(await client.query({ name, text: query.sql, values }));
    } catch (err) {
      const code = (err as { code?: string } | null)?.code ?? '';
      if (code === '0A000') {
        // "cached plan must not change result type": the next execution runs under a new name; the old one is
        // freed on the server where that is possible (outside a transaction, which the error would have aborted).
        this.statements.resultTypeChanged(client, query.sql, name);
        if (!this.inTransaction) await client.query(`deallocate "${name}"`).catch(() => {});
      } else if (POOLER_ERRORS.has(code)) {
        this.statements.lost(client, code);
        // The same statement unnamed, on the same connection. Inside a transaction the error aborted it: the
        // original error goes up, and the use case runs again (attempts.ts).
        if (!this.inTransaction) {
          try {
            return shape<R>(await client.query(query.sql, values));
          } catch {
            throw err;
          }
        }
      }
      throw err;
    }
  }

  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported by the service\'s database driver');
  }
}

function shape<R>(result: pg.QueryResult | pg.QueryResult[]): QueryResult<R> {
  // A multi-statement text sent without parameters answers one result per statement: as kysely's own
  // PostgresDriver, no rows then.
  if (Array.isArray(result)) return { rows: [] };
  const { command, rowCount, rows } = result;
  return {
    numAffectedRows: command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE' ? BigInt(rowCount ?? 0) : undefined,
    rows: (rows ?? []) as R[],
  };
}

const asPg = (c: DatabaseConnection): PgConnection => {
  if (!(c instanceof PgConnection)) throw new Error('not a connection of this driver');
  return c;
};

export class PgDriver implements Driver {
  constructor(private readonly source: ConnectionSource, private readonly statements: NamedStatements, private readonly opts: PgDriverOptions = {}) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new PgConnection(await this.source.acquire(connectionLane()), this.statements);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    let begin = 'begin';
    if (settings.isolationLevel || settings.accessMode) {
      begin = 'start transaction';
      if (settings.isolationLevel) begin += ` isolation level ${settings.isolationLevel}`;
      if (settings.accessMode) begin += ` ${settings.accessMode}`;
    }
    const extra = this.opts.afterBegin?.();
    // One round trip (the simple protocol allows several statements without parameters).
    await connection.executeQuery(CompiledQuery.raw(extra ? `${begin}; ${extra}` : begin));
    asPg(connection).inTransaction = true;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await connection.executeQuery(CompiledQuery.raw('commit'));
    } finally {
      asPg(connection).inTransaction = false;
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await connection.executeQuery(CompiledQuery.raw('rollback'));
    } finally {
      asPg(connection).inTransaction = false;
    }
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await connection.executeQuery(compile(savepointNode('savepoint', name), createQueryId()));
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await connection.executeQuery(compile(savepointNode('rollback to', name), createQueryId()));
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await connection.executeQuery(compile(savepointNode('release', name), createQueryId()));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const c = asPg(connection);
    c.inTransaction = false;
    c.lease.release();
  }

  async destroy(): Promise<void> {
    if (this.opts.owner !== false) await this.source.end();
  }
}

/** The node kysely's PostgresDriver builds for a savepoint command, from kysely's public node constructors. */
function savepointNode(command: 'savepoint' | 'rollback to' | 'release', name: string): RootOperationNode {
  return RawNode.createWithChildren([RawNode.createWithSql(`${command} `), IdentifierNode.create(name)]);
}

/** The dialect MikroORM and the service's queries use: PostgreSQL's compiler, adapter and introspector over PgDriver. */
export class PgDialect implements Dialect {
  constructor(private readonly source: ConnectionSource, private readonly statements: NamedStatements, private readonly opts: PgDriverOptions = {}) {}

  createDriver(): Driver {
    return new PgDriver(this.source, this.statements, this.opts);
  }

  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler();
  }

  createAdapter(): DialectAdapter {
    return new PostgresAdapter();
  }

  // kysely's own Dialect interface types this parameter as Kysely<any>.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new PostgresIntrospector(db);
  }

  /** The same connections, for a second ORM: its `destroy` leaves them open. */
  borrowed(): PgDialect {
    return new PgDialect(this.source, this.statements, { ...this.opts, owner: false });
  }
}
