import type { Logger } from 'pino';
import { loadConfig, type Config } from '../platform/config.js';
import type { Orm } from '../platform/db/orm.js';
import type { Executor } from '../platform/db/sql.js';
import type { Tenant } from '../platform/tenancy/tenant.js';
import { CommandError } from './errors.js';

// What a command gets once its arguments are valid: the database (embedded when DATABASE_URL is unset),
// with the control schema migrated so a fresh database takes `tenant add` at once.
// The database side (ORM, drivers) is imported only here, on demand: `--help` and bad arguments answer
// without loading it, in a fraction of the time.
export type CliContext = {
  config: Config;
  orm: Orm;
  db: Executor;
  log: Logger;
  /** Control-schema migrations this run applied (usually none). */
  controlApplied: string[];
};

/** Logs go to stderr only (fd 2), never to stdout. */
async function createCliLogger(level: string): Promise<Logger> {
  const { destination, pino } = await import('pino');
  return pino(
    {
      level,
      base: undefined,
      redact: { paths: ['token', '*.token', 'authorization', '*.authorization', 'email', '*.email'], censor: '[redacted]' },
    },
    destination({ fd: 2, sync: true }),
  );
}

export async function withRuntime<T>(run: (ctx: CliContext) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const log = await createCliLogger(config.logLevel);
  const [{ openRuntime }, { executorOf, migrateControl }, { entities }] = await Promise.all([
    import('../platform/runtime.js'), import('../platform/db/orm.js'), import('../entities.js'),
  ]);
  // Operator commands wait and run as long as background jobs may (issue 23: PG_JOB_* timeouts).
  const runtime = await openRuntime(config, log, entities, { profile: 'job' });
  try {
    const orm = runtime.orm;
    const controlApplied = await migrateControl(orm);
    if (controlApplied.length) log.info({ applied: controlApplied }, 'migrated the control schema');
    return await run({ config, orm, db: executorOf(orm), log, controlApplied });
  } finally {
    await runtime.close();
  }
}

export async function findTenant(db: Executor, slug: string): Promise<Tenant | undefined> {
  const { loadTenants } = await import('../platform/tenancy/registry.js');
  return (await loadTenants(db)).find((t) => t.slug === slug);
}

export async function requireTenant(db: Executor, slug: string): Promise<Tenant> {
  const tenant = await findTenant(db, slug);
  if (!tenant) throw new CommandError(`no tenant "${slug}"`);
  return tenant;
}
