import type { MigrationObject } from '@mikro-orm/core';
import { MikroORM, type EntityClass, type EntityManager } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { controlMigrations, tenantMigrations } from '../../../migrations/index.js';
import { readConfig } from '../config.js';
import { rootLogger, type Logger } from '../logging/logger.js';
import { createDatabase, detectPooler, type Database } from './connections.js';
import type { PoolGuard } from './pool-guard.js';
import { NamedStatements, preparedStatementsSetting } from './prepared.js';
import { assertSchemaName, sql, type Executor } from './sql.js';
import { withTimeoutProfile, type TimeoutProfile } from './timeouts.js';

export type Orm = MikroORM;
export type { EntityManager };

/** `PG_POOL_SIZE`: connections of a process's pool (default 10; docs/operations.md). */
export function poolSize(env?: NodeJS.ProcessEnv): number {
  return readConfig(env).pgPoolSize;
}

const databases = new WeakMap<Orm, Database>();
const guards = new WeakMap<object, PoolGuard>();

/** The guard of the ORM's pool (shares, counts, probe connection; pool-guard.ts), for /readyz, /metrics and jobs. */
export function poolGuardOf(orm: Orm | EntityManager): PoolGuard | undefined {
  const em = 'em' in orm ? orm.em : orm;
  return guards.get(em.getConnection());
}

/** Whether this ORM's pool sends `prepared()` statements as named statements right now (false while off or suspended). */
export function preparedStatementsOf(orm: Orm): boolean {
  return databases.get(orm)?.statements.enabled ?? false;
}

export type OrmOptions = {
  entities: readonly EntityClass<object>[];
  poolMax?: number;
  /** Default `PG_PREPARED_STATEMENTS` (`auto`: on unless a pooler is found at start; platform/db/prepared.ts). */
  preparedStatements?: boolean;
  connectionAffinity?: boolean;
  /** Where the pool's warnings go (pooler found, share full, lock timeouts); default the process's JSON log. */
  log?: Logger;
  /** Test hooks: pool shares and wait other than the settings' (pool-guard.ts). */
  shares?: { tenant?: number; offer?: number; waitMs?: number };
  /** Timeouts of the pool's sessions and transactions: `request` (default, the service) or `job` (the operator CLI). */
  profile?: TimeoutProfile;
  /** Test hook: how long named statements stay suspended after a pooler error (prepared.ts; default 60 s). */
  preparedSuspendMs?: number;
};

/** The migrator's options (MikroORM's documented `migrations` config) for one list of migrations. */
function migrationOptions(migrationsList: MigrationObject[]) {
  return {
    migrationsList,
    tableName: 'mikro_orm_migrations',
    transactional: true,
    allOrNothing: true,
    snapshot: false,
    snapshotOnMigrate: false,
    silent: true,
    // Only defers the migrator's eager creation of a tracking table in the default schema (outside any
    // lock, racing between processes); the table is created per schema inside the locked transaction.
    includeWildcardSchema: true,
  };
}

/**
 * `entities`: every tenant entity (src/entities.ts). The pool is the service's own (connections.ts: timeouts,
 * shares per municipality and offer, named statements, affinity), handed to MikroORM as its dialect.
 */
export async function createOrm(databaseUrl: string, opts: OrmOptions): Promise<Orm> {
  const log = opts.log ?? rootLogger;
  const setting = opts.preparedStatements === undefined ? preparedStatementsSetting() : opts.preparedStatements ? 'on' : 'off';
  const statements = new NamedStatements(setting, { warn: (msg, fields) => log.warn(fields ?? {}, msg) }, { suspendMs: opts.preparedSuspendMs });
  const database = createDatabase(databaseUrl, { poolMax: opts.poolMax ?? poolSize(), statements, connectionAffinity: opts.connectionAffinity, log, shares: opts.shares, profile: opts.profile });
  const orm = await MikroORM.init({
    clientUrl: databaseUrl,
    // The tenant entities (src/entities.ts), handed in by the process that composes the service.
    entities: [...opts.entities],
    extensions: [Migrator],
    allowGlobalContext: false,
    debug: false,
    // The pool, its timeouts and shares: connections.ts (MikroORM accepts a ready kysely dialect here).
    driverOptions: database.dialect,
    migrations: migrationOptions(tenantMigrations),
  });
  databases.set(orm, database);
  guards.set(orm.em.getConnection(), database.guard);
  // Issue 23: a pooler between the service and PostgreSQL, found once at start (a database not answering yet
  // leaves the settings as they are; the fallbacks in prepared.ts and the per-transaction timeouts still hold).
  try {
    const found = await detectPooler(database);
    if (found.pooled) {
      statements.poolerFound();
      log.warn({ namedStatements: statements.enabled, sessionTimeouts: found.sessionTimeouts },
        'database connection goes through a pooler (PgBouncer?): timeouts are set in every transaction; autocommit statements get the database role\'s defaults (docs/operations.md)'
        + (setting === 'auto' ? '; named prepared statements off' : ''));
    }
  } catch (err) {
    log.warn({ code: (err as { code?: string }).code }, 'could not check for a pooler at start');
  }
  return orm;
}

/** The kysely client under the ORM's pool, for projections and platform SQL. */
export function executorOf(orm: Orm | EntityManager): Executor {
  const em = 'em' in orm ? orm.em : orm;
  return em.getConnection().getClient() as Executor;
}

/**
 * Migrations run inside each schema (search_path set in the migration's transaction, stack notes).
 * Never the schema generator's update against the shared database: it diffs every schema.
 *
 * The control step also creates pg-boss's schema: every process of a deploy starting at once would
 * otherwise race on `create schema` (a unique violation on pg_namespace, not the "already exists" pg-boss
 * tolerates); here it is created once, under the control schema's lock.
 */
export async function migrateControl(orm: Orm): Promise<string[]> {
  const control = await controlOrm(orm);
  try {
    return await withMigrationLock(control, 'control', async (trx) => {
      await control.em.getConnection().execute('create schema if not exists pgboss', [], 'run', trx);
      return migrateInTransaction(control, 'control', trx, new Migrator(control.em));
    });
  } finally {
    await control.close();
  }
}

/**
 * The control schema's migrations have a list of their own. MikroORM's migrator takes its list from its ORM's
 * `migrations` config, so the control ones run through a second, entity-less ORM with that config, over the same
 * connections and guard (borrowed: closing it leaves them open).
 */
async function controlOrm(orm: Orm): Promise<Orm> {
  const database = databases.get(orm);
  if (!database) throw new Error('migrateControl needs an ORM made by createOrm');
  return MikroORM.init({
    clientUrl: orm.config.get('clientUrl'),
    entities: [],
    discovery: { warnWhenNoEntities: false },
    extensions: [Migrator],
    allowGlobalContext: false,
    debug: false,
    driverOptions: database.dialect.borrowed(),
    migrations: migrationOptions(controlMigrations),
  });
}

export async function migrateTenantSchema(orm: Orm, schema: string, opts: { script?: boolean } = {}): Promise<string[]> {
  return withMigrationLock(orm, assertSchemaName(schema), (trx) => migrateInTransaction(orm, schema, trx, undefined, opts.script !== false));
}

type Trx = Parameters<Parameters<ReturnType<EntityManager['getConnection']>['transactional']>[0]>[0];

/**
 * Two processes migrating one schema at once (replicas starting, `migrate` during `tenant add`) would race
 * on the DDL. They take turns on a transaction-scoped advisory lock taken first in the very transaction that
 * runs the migrations: it lives exactly as long as that transaction, on its one server connection, so it
 * also holds through PgBouncer in transaction pooling mode (a session lock there is taken on one server
 * connection and released on another, and stays held by an idle one).
 */
async function withMigrationLock<T>(orm: Orm, schema: string, run: (trx: Trx) => Promise<T>): Promise<T> {
  const conn = orm.em.getConnection();
  // The migration's own timeouts (PG_MIGRATION_*: a long wait for the lock of the schema or a table, no statement limit).
  return withTimeoutProfile('migration', () => conn.transactional(async (trx) => {
    await conn.execute('select pg_advisory_xact_lock(hashtext(?))', [`hp:migrate:${schema}`], 'all', trx);
    return run(trx);
  }));
}

/** Creates the schema and applies its pending migrations, all in `trx` (MikroORM's all-or-nothing run). */
async function migrateInTransaction(orm: Orm, schema: string, trx: Trx, migrator?: Migrator, script = false): Promise<string[]> {
  const conn = orm.em.getConnection();
  await conn.execute(`create schema if not exists "${assertSchemaName(schema)}"`, [], 'run', trx);
  // A tenant schema without a migrations table is new: its whole chain runs as one script (issue 10).
  if (!migrator && script) {
    const [row] = await conn.execute<{ fresh: boolean }[]>('select to_regclass(?) is null as fresh', [`"${schema}"."mikro_orm_migrations"`], 'all', trx);
    if (row?.fresh) {
      const script = await newSchemaScript(orm);
      if (script) {
        await conn.execute(`set local search_path to "${schema}";\n${script.sql}`, [], 'run', trx);
        // The bookkeeping is the migrator's own: its storage creates its table and logs each migration, in this
        // transaction and schema.
        const storage = new Migrator(orm.em).getStorage();
        storage.setRunSchema(schema);
        storage.setMasterMigration(trx);
        for (const name of script.names) await storage.logMigration({ name }, trx);
        return script.names;
      }
    }
  }
  const done = await (migrator ?? new Migrator(orm.em)).up({ schema, transaction: trx });
  return done.map((m) => m.name);
}

const MIGRATION_NAME = /^Migration\d{14}\w+$/;
let scriptOfNewSchema: Promise<{ sql: string; names: string[] } | null> | undefined;

/**
 * Issue 10 (a thousand municipalities): a new tenant schema gets every tenant migration's SQL as ONE
 * multi-statement script in the schema's locked transaction: one round trip instead of one per statement and
 * several per migration. The bookkeeping stays the migrator's (its storage writes its table and rows,
 * migrateInTransaction). The result is the schema the migrator makes (test/platform/db/new-schema-script.test.ts
 * compares the catalogs). Schemas at an older version keep going through the migrator. Null (the migrator then)
 * when a migration runs code instead of only adding SQL. Built once per process. (bench/tenants.ts sends it bare as
 * the baseline of `migrate`.)
 */
export function newSchemaScript(orm: Orm): Promise<{ sql: string; names: string[] } | null> {
  scriptOfNewSchema ??= (async () => {
    const parts: string[] = [];
    for (const m of tenantMigrations) {
      if (!MIGRATION_NAME.test(m.name)) return null;
      const migration = new m.class(orm.em.getDriver(), orm.config);
      await migration.up();
      const queries = migration.getQueries();
      if (queries.some((q) => typeof q !== 'string')) return null;
      parts.push(`-- ${m.name}`, ...(queries as string[]).map((q) => `${q.trim().replace(/;$/, '')};`));
    }
    return { sql: parts.join('\n'), names: tenantMigrations.map((m) => m.name) };
  })();
  return scriptOfNewSchema;
}

/**
 * Issue 24 (`tenant import`): `run` in one transaction of the ORM's pool, handed both as the migrator's
 * transaction and as a kysely executor, so a new tenant's schema, its rows and its registry entry commit together.
 */
export async function inTransaction<T>(orm: Orm, run: (trx: Trx, db: Executor) => Promise<T>): Promise<T> {
  return orm.em.getConnection().transactional((trx) => run(trx, trx as unknown as Executor));
}

/**
 * Migrates `schema` inside the caller's transaction (taking its migration lock there): up to the migration `to`
 * (an archive's version), or, without `to`, to the end (a new schema's whole chain then runs as one script).
 */
export async function migrateTenantSchemaIn(orm: Orm, schema: string, trx: Trx, opts: { to?: string } = {}): Promise<string[]> {
  const conn = orm.em.getConnection();
  await conn.execute('select pg_advisory_xact_lock(hashtext(?))', [`hp:migrate:${assertSchemaName(schema)}`], 'all', trx);
  if (opts.to === undefined) return migrateInTransaction(orm, schema, trx, undefined, true);
  await conn.execute(`create schema if not exists "${schema}"`, [], 'run', trx);
  const done = await new Migrator(orm.em).up({ schema, transaction: trx, to: opts.to });
  return done.map((m) => m.name);
}

export async function dropTenantSchema(orm: Orm, schema: string): Promise<void> {
  await sql`drop schema if exists ${sql.id(assertSchemaName(schema))} cascade`.execute(executorOf(orm));
}

