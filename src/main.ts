// First: a wrong setting stops the start with one sentence before any module reads it (platform/config.ts).
import './platform/config-check.js';
import type { Server } from 'node:http';
import net from 'node:net';
import { createApp } from './app.js';
import { createHttpServer } from './platform/http/server.js';
import { configureZod } from './platform/http/validation.js';
import { demoWanted, loadConfig, type Role } from './platform/config.js';
import { rootLogger as log } from './platform/logging/logger.js';
import { createRateLimiter } from './platform/rate-limit/index.js';
import { openRuntime } from './platform/runtime.js';
import { migrateAll, syncTenants, type Progress } from './platform/tenancy/operations.js';
import { startWorkers } from './platform/jobs/workers.js';
import { startJobSender, type JobSender } from './platform/jobs/queue.js';
import { tenantJobHandlers, tenantJobSweeps } from './jobs.js';
import { executorOf } from './platform/db/orm.js';
import { outboxMetricsSource } from './platform/mail/outbox.js';
import { loadTenants } from './platform/tenancy/registry.js';
import { seedDemoIfEmpty } from './demo/seed.js';
import { entities } from './entities.js';

// `npm start [-- --role api|worker|all]` (D1): migrate what is behind first, apply tenants/*.json, then serve and/or work.
function roleFromArgs(argv: string[]): Role {
  const i = argv.indexOf('--role');
  const value = i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith('--role='))?.slice(7);
  if (value === undefined) return 'all';
  if (value === 'api' || value === 'worker' || value === 'all') return value;
  console.error(`unknown role "${value}": use --role api|worker|all`);
  process.exit(2);
}

/** The one sentence for a port the HTTP server cannot listen on (issue 24), naming the setting to change. */
function listenProblem(port: number, err: NodeJS.ErrnoException): string {
  if (err.code === 'EADDRINUSE') return `port ${port} is taken by another program: stop it, or set PORT to a free port (for example PORT=${port === 65535 ? port - 1 : port + 1} npm start)`;
  if (err.code === 'EACCES') return `port ${port} may not be used by this user (ports below 1024 need privileges): set PORT to a port above 1023`;
  return `cannot listen on port ${port} (PORT): ${err.message}`;
}

/** Whether the HTTP port can be listened on, asked before the database starts; null when it can. */
function portProblem(port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => resolve(listenProblem(port, err)));
    probe.listen(port, () => probe.close(() => resolve(null)));
  });
}

async function main() {
  const started = Date.now();
  configureZod(); // issue 26: zod's messages set once, before anything parses
  const role = roleFromArgs(process.argv.slice(2));
  const config = loadConfig();
  if (!config.redisUrl) log.warn('REDIS_URL not set: rate limits are kept in this process only');
  if (!config.secretsKey) log.warn('SECRETS_KEY not set: webhook signing secrets are stored unencrypted (docs/operations.md)');
  let server: Server | undefined;
  const stops: (() => Promise<void>)[] = [];
  // Handlers first: a SIGTERM during start-up still closes what was opened.
  let stopping = false;
  const shutdown = async (signal: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 15_000).unref();
    if (server) await new Promise<void>((resolve) => server!.close(() => resolve()));
    for (const stop of stops.reverse()) await stop().catch((err) => log.error({ err }, 'stop failed'));
    clearTimeout(force);
    process.exit(code);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  // Issue 24: a closed terminal stops the service like SIGTERM (node would die at once and leave the embedded
  // PostgreSQL running, owned by init).
  process.on('SIGHUP', () => void shutdown('SIGHUP'));
  // Issue 24: a taken PORT is said in one sentence before anything starts (and again should another program take
  // it meanwhile, below).
  if (role !== 'worker') {
    const taken = await portProblem(config.port);
    if (taken) {
      log.fatal(`start failed: ${taken}`);
      process.exit(1);
    }
  }

  const runtime = await openRuntime(config, log, entities);
  stops.push(() => runtime.close());
  // Issue 10: the control schema, then one version check over every tenant schema (a query per 200); only
  // the schemas behind are migrated (MIGRATE_CONCURRENCY at once). With nothing behind this is one round trip.
  const migrateStarted = Date.now();
  const logMigration: Progress = (e) => {
    if (e.error) log.error({ tenant: e.slug, err: e.error }, 'tenant migration failed');
    else if (e.applied.length) log.info({ tenant: e.slug, applied: e.applied }, 'tenant migrated');
  };
  const { failed, migrated } = await migrateAll(runtime.orm, logMigration);
  log.info({ migrated: migrated.length, failed: failed.length, ms: Date.now() - migrateStarted }, 'tenant schemas checked');
  if (failed.length) log.error({ failed }, 'some tenant schemas could not be migrated; run `cli migrate` after fixing the cause');
  // The demo municipality (tenants/demo.json) only with the embedded database, `--demo` or DEMO=1.
  const synced = await syncTenants(runtime.orm, config.tenantsDir, { demo: demoWanted(config, process.argv), progress: logMigration });
  if (synced.skipped.length) log.info({ skipped: synced.skipped }, 'demo municipality not registered (DATABASE_URL is set): start with --demo or DEMO=1 to add it');
  if (synced.tenants.some((t) => t.slug === 'demo')) await seedDemoIfEmpty(runtime.orm, 'demo', log);

  // Background jobs (D9): the worker role works them; the API enqueues them (allocate, commit). With
  // `--role all` one pg-boss instance does both; an API-only process starts a sender without supervision.
  let jobs: JobSender | undefined;
  if (role === 'worker' || role === 'all') {
    const workers = await startWorkers(runtime.orm, config, log, { schedule: true, handlers: tenantJobHandlers, sweeps: tenantJobSweeps });
    stops.push(() => workers.stop());
    jobs = workers.sender;
    if (role === 'worker') log.info({ role, ms: Date.now() - started }, 'workers started');
  }
  if (role === 'api') {
    const sender = await startJobSender(runtime.orm, log);
    stops.push(() => sender.stop());
    jobs = sender.sender;
  }

  if (role === 'api' || role === 'all') {
    const rateLimiter = createRateLimiter({ redisUrl: config.redisUrl, log: { warn: (m, f) => log.warn(f ?? {}, m), info: (m, f) => log.info(f ?? {}, m) } });
    stops.push(() => rateLimiter.close());
    // `/metrics` shows the mail backlog of every municipality (D9 outbox), read at most every 15 s.
    const outboxSource = outboxMetricsSource(executorOf(runtime.orm), () => loadTenants(executorOf(runtime.orm)));
    const app = createApp({ orm: runtime.orm, registry: runtime.registry, rateLimiter, log, trustProxy: config.trustProxy, jobs, metricsToken: config.metricsToken, outboxSource });
    // Header size, header/request/keep-alive timeouts: src/platform/http/server.ts.
    server = createHttpServer(app);
    const listenFailed = (err: NodeJS.ErrnoException) => {
      log.fatal(`start failed: ${listenProblem(config.port, err)}`);
      server = undefined;
      void shutdown('listen failed', 1);
    };
    server.once('error', listenFailed);
    server.listen(config.port, () => {
      server?.off('error', listenFailed);
      log.info({ port: config.port, role, ms: Date.now() - started }, `listening on http://localhost:${config.port}/api`);
    });
  }

}

main().catch((err) => {
  // An embedded database that cannot start says why and what to do in one sentence, without a stack.
  if ((err as Error | undefined)?.name === 'EmbeddedDatabaseError') log.fatal(`start failed: ${(err as Error).message}`);
  else log.fatal({ err }, 'start failed');
  process.exit(1);
});
