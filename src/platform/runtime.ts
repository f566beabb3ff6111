import type { EntityClass } from '@mikro-orm/postgresql';
import type { Config } from './config.js';
import { createOrm, executorOf, type Orm } from './db/orm.js';
import type { EmbeddedDatabase } from './db/embedded.js';
import type { Logger } from './logging/logger.js';
import type { TimeoutProfile } from './db/timeouts.js';
import { TenantRegistry } from './tenancy/registry.js';

// Opens what every process role needs: the database (embedded when DATABASE_URL is unset) and the registry.
export type Runtime = {
  orm: Orm;
  registry: TenantRegistry;
  embedded?: EmbeddedDatabase;
  close: () => Promise<void>;
};

/** `entities`: every tenant entity (src/entities.ts); the composing process hands them in. */
/** `profile`: the database timeouts of the process (`request` for the service, `job` for the operator CLI; db/timeouts.ts). */
export async function openRuntime(config: Config, log: Logger, entities: readonly EntityClass<object>[], opts: { profile?: TimeoutProfile } = {}): Promise<Runtime> {
  let url = config.databaseUrl;
  let embedded: EmbeddedDatabase | undefined;
  if (!url) {
    const started = Date.now();
    // Loaded only when needed: the package installs its own exit hooks.
    const { startEmbeddedPostgres } = await import('./db/embedded.js');
    embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, onLog: (m) => log.debug({ postgres: m.trim() }, 'embedded PostgreSQL') });
    url = embedded.url;
    log.info({ ms: Date.now() - started, dir: embedded.dir, port: new URL(url).port },
      embedded.attached ? 'DATABASE_URL not set: using the embedded PostgreSQL another process started' : 'DATABASE_URL not set: started the embedded PostgreSQL');
  }
  let orm: Orm;
  try {
    orm = await createOrm(url, { entities, log, profile: opts.profile });
  } catch (err) {
    await embedded?.stop();
    throw err;
  }
  const registry = new TenantRegistry(executorOf(orm));
  return {
    orm,
    registry,
    embedded,
    close: async () => {
      await orm.close();
      await embedded?.stop();
    },
  };
}
