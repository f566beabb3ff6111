import { MikroORM, type EntityManager } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { controlMigrations, tenantMigrations } from '../../../migrations/index.js';
import { entities } from './entities.js';
import { assertSchemaName, sql, type Executor } from './sql.js';

export type Orm = MikroORM;
export type { EntityManager };

export async function createOrm(databaseUrl: string, opts: { poolMax?: number } = {}): Promise<Orm> {
  return MikroORM.init({
    clientUrl: databaseUrl,
    entities,
    extensions: [Migrator],
    allowGlobalContext: false,
    debug: false,
    pool: { min: 0, max: opts.poolMax ?? 10 },
    migrations: {
      migrationsList: tenantMigrations,
      tableName: 'mikro_orm_migrations',
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      snapshotOnMigrate: false,
      silent: true,
    },
  });
}

/** The kysely client under the ORM's pool, for projections and platform SQL. */
export function executorOf(orm: Orm | EntityManager): Executor {
  const em = 'em' in orm ? orm.em : orm;
  return em.getConnection().getClient() as Executor;
}

/**
 * Migrations run inside each schema (search_path set in the migration's transaction, stack notes).
 * Never the schema generator's update against the shared database: it diffs every schema.
 */
export async function migrateControl(orm: Orm): Promise<string[]> {
  return withMigrationLock(orm, 'control', () => migrateControlUnlocked(orm));
}

async function migrateControlUnlocked(orm: Orm): Promise<string[]> {
  const original = orm.config.get('migrations');
  orm.config.set('migrations', { ...original, migrationsList: controlMigrations });
  try {
    await sql`create schema if not exists control`.execute(executorOf(orm));
    const migrator = new Migrator(orm.em);
    const done = await migrator.up({ schema: 'control' });
    return done.map((m) => m.name);
  } finally {
    orm.config.set('migrations', original);
  }
}

export async function migrateTenantSchema(orm: Orm, schema: string): Promise<string[]> {
  return withMigrationLock(orm, schema, () => migrateTenantSchemaUnlocked(orm, schema));
}

/**
 * Two processes migrating one schema at once (replicas starting, `migrate` during `tenant add`) would race
 * on the DDL: a session advisory lock per schema, held on a connection of its own, makes them take turns.
 */
async function withMigrationLock<T>(orm: Orm, schema: string, run: () => Promise<T>): Promise<T> {
  return executorOf(orm).connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(hashtext(${`hp:migrate:${schema}`}))`.execute(conn);
    try {
      return await run();
    } finally {
      await sql`select pg_advisory_unlock(hashtext(${`hp:migrate:${schema}`}))`.execute(conn);
    }
  });
}

async function migrateTenantSchemaUnlocked(orm: Orm, schema: string): Promise<string[]> {
  await sql`create schema if not exists ${sql.id(assertSchemaName(schema))}`.execute(executorOf(orm));
  const migrator = new Migrator(orm.em);
  const done = await migrator.up({ schema });
  return done.map((m) => m.name);
}

export async function dropTenantSchema(orm: Orm, schema: string): Promise<void> {
  await sql`drop schema if exists ${sql.id(assertSchemaName(schema))} cascade`.execute(executorOf(orm));
}

