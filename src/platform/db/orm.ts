import { MikroORM, type EntityClass, type EntityManager } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { controlMigrations, tenantMigrations } from '../../../migrations/index.js';
import { readConfig } from '../config.js';
import { connectionAffinityWanted, useConnectionAffinity } from './affinity.js';
import { preparedStatementsWanted, usePreparedStatements, type PreparedSwitch } from './prepared.js';
import { assertSchemaName, sql, type Executor } from './sql.js';

export type Orm = MikroORM;
export type { EntityManager };

/** `PG_POOL_SIZE`: connections of a process's pool (default 10; docs/operations.md). */
export function poolSize(env?: NodeJS.ProcessEnv): number {
  return readConfig(env).pgPoolSize;
}

const preparedSwitches = new WeakMap<Orm, PreparedSwitch>();

/** Whether this ORM's pool sends `prepared()` statements as named statements right now (false once switched off). */
export function preparedStatementsOf(orm: Orm): boolean {
  return preparedSwitches.get(orm)?.enabled ?? false;
}

/**
 * `entities`: every tenant entity (src/entities.ts). `preparedStatements`: default `PG_PREPARED_STATEMENTS` (on; `off` behind a transaction pooler that does not
 * keep named statements, platform/db/prepared.ts).
 */
export async function createOrm(
  databaseUrl: string, opts: { entities: readonly EntityClass<object>[]; poolMax?: number; preparedStatements?: boolean; connectionAffinity?: boolean },
): Promise<Orm> {
  const prepared: PreparedSwitch = { enabled: opts.preparedStatements ?? preparedStatementsWanted() };
  const orm = await MikroORM.init({
    clientUrl: databaseUrl,
    // The tenant entities (src/entities.ts), handed in by the process that composes the service.
    entities: [...opts.entities],
    extensions: [Migrator],
    allowGlobalContext: false,
    debug: false,
    pool: { min: 0, max: opts.poolMax ?? poolSize() },
    // A database (or pooler) that does not accept connections fails the request after 5 s (503, errors.ts)
    // instead of holding it until the client gives up.
    driverOptions: {
      connectionTimeoutMillis: 5_000,
      onPoolCreated: (pool: import('pg').Pool) => {
        usePreparedStatements(pool, prepared, {
          warn: (msg, fields) => process.emitWarning(`${msg} ${JSON.stringify(fields ?? {})}`),
        });
        // A schema's requests prefer one connection of the pool (affinity.ts); PG_CONNECTION_AFFINITY=off: none.
        if (opts.connectionAffinity ?? connectionAffinityWanted()) {
          useConnectionAffinity(pool);
        }
      },
    },
    migrations: {
      migrationsList: tenantMigrations,
      tableName: 'mikro_orm_migrations',
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      snapshotOnMigrate: false,
      silent: true,
      // Only defers the migrator's eager creation of a tracking table in the default schema (outside any
      // lock, racing between processes); the table is created per schema inside the locked transaction.
      includeWildcardSchema: true,
    },
  });
  preparedSwitches.set(orm, prepared);
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
  const migrator = migratorFor(orm, controlMigrations);
  return withMigrationLock(orm, 'control', async (trx) => {
    await orm.em.getConnection().execute('create schema if not exists pgboss', [], 'run', trx);
    return migrateInTransaction(orm, 'control', trx, migrator);
  });
}

/**
 * A migrator over another list than the tenant one: the migrator reads its options when it is constructed,
 * so the shared config is swapped only for that instant (not while waiting for the lock).
 */
function migratorFor(orm: Orm, migrationsList: typeof controlMigrations): Migrator {
  const original = orm.config.get('migrations');
  orm.config.set('migrations', { ...original, migrationsList });
  try {
    return new Migrator(orm.em);
  } finally {
    orm.config.set('migrations', original);
  }
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
  return conn.transactional(async (trx) => {
    await conn.execute('select pg_advisory_xact_lock(hashtext(?))', [`hp:migrate:${schema}`], 'all', trx);
    return run(trx);
  });
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
 * Issue 10 (a thousand municipalities): a new tenant schema gets every tenant migration's SQL and the
 * migrator's own bookkeeping (its table, one row per migration, as MikroORM creates them) as ONE
 * multi-statement script in the schema's locked transaction: one round trip instead of one per statement and
 * several per migration. The result is the schema the migrator makes (test/platform/db/new-schema-script.test.ts
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
    parts.push(
      'create table "mikro_orm_migrations" ("id" serial primary key, "name" varchar(255) not null, "executed_at" timestamptz(6) not null default current_timestamp(6));',
      `insert into "mikro_orm_migrations" ("name") values ${tenantMigrations.map((m) => `('${m.name}')`).join(', ')};`,
    );
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

