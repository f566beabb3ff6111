import express, { type NextFunction, type Request, type Response } from 'express';
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { AnyRouter } from '@trpc/server';
import type { TrustProxy } from './platform/config.js';
import type { Orm } from './platform/db/orm.js';
import { InMemoryJobs, type JobSender } from './platform/jobs/queue.js';
import { executorOf, poolGuardOf } from './platform/db/orm.js';
import { sql as sqlTag } from './platform/db/sql.js';
import { withConnectionAffinity } from './platform/db/affinity.js';
import type { Logger } from './platform/logging/logger.js';
import type { TenantRegistry } from './platform/tenancy/registry.js';
import { resolveTenant, tenantOf } from './platform/tenancy/middleware.js';
import { actorOf, authenticate, rejectInvalidToken } from './platform/auth/middleware.js';
import { viewerOfActor } from './platform/auth/viewer.js';
import { readBody } from './platform/http/body.js';
import { rawBodyRoutes, rawUploadOf } from './platform/http/raw.js';
import { trustFunction } from './platform/http/forwarded.js';
import { methodNotAllowed, routeTable } from './platform/http/routes.js';
import { apiHandler } from './platform/http/api.js';
import { problemAnswer, send } from './platform/http/answer.js';
import { operationsOf } from './platform/http/operations.js';
import { buildOpenApiDocument, documentFor } from './platform/http/openapi-document.js';
import { problemStatusPage, problemTypeIndex, validationRulePage } from './platform/http/problem-types.js';
import { publicBaseUrl } from './platform/http/public-url.js';
import { docsBundle, docsPage } from './platform/http/docs.js';
import { problemFromError } from './platform/http/errors.js';
import { DatabaseAvailability, isClientGone } from './platform/http/availability.js';
import { createMetrics, type Metrics, type OutboxSource } from './platform/metrics/index.js';
import { parseId } from './platform/http/ids.js';
import { Problem, PROBLEM_CONTENT_TYPE } from './platform/http/problem.js';
import type { TrpcContext } from './platform/http/trpc.js';
import { SECURITY_HEADERS } from './platform/http/server.js';
import { configureZod } from './platform/http/validation.js';
import { rateLimit } from './platform/rate-limit/middleware.js';
import type { RateLimiter } from './platform/rate-limit/index.js';
import { appRouter } from './router.js';

export type AppDeps = {
  orm: Orm;
  registry: TenantRegistry;
  rateLimiter: RateLimiter;
  log: Logger;
  /** TRUST_PROXY (D12): hops or proxy addresses whose forwarding headers are believed; `true` is one hop. */
  trustProxy: TrustProxy | boolean;
  router?: AnyRouter;
  /** Where background actions (allocate, commit) enqueue their jobs: pg-boss in main.ts, in memory in tests. */
  jobs?: JobSender;
  /** Prometheus metrics (`/metrics`); default a registry of this app's own. */
  metrics?: Metrics;
  /** When set, `/metrics` answers only to `Authorization: Bearer <metricsToken>` (METRICS_TOKEN). */
  metricsToken?: string;
  /** Feeds the outbox gauges (`hp_outbox_backlog`, `_failed`, `_oldest_seconds`); absent: not reported. */
  outboxSource?: OutboxSource;
};

export function createApp(deps: AppDeps) {
  configureZod(); // issue 26: zod's messages for every process that serves (idempotent)
  const { orm, registry, log } = deps;
  const router = deps.router ?? appRouter;
  const db = executorOf(orm);
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  // The client address (`req.ip`, the anonymous limits) by the same rule as the forwarded host.
  app.set('trust proxy', trustFunction(deps.trustProxy));
  app.set('query parser', 'simple');

  // A database outage: 503 with Retry-After, one warning when it starts and one when it ends. The probe asks the
  // database on a connection of its own (issue 23): a busy pool is no outage.
  const guard = poolGuardOf(orm);
  const probe = guard ? () => guard.probeQuery('select 1') : () => db.selectNoFrom((eb) => eb.lit(1).as('one')).execute();
  const availability = new DatabaseAvailability(log, probe);
  const jobs = deps.jobs;
  const jobStats = jobs?.queueStats ? () => jobs.queueStats!() : undefined;
  const metrics = deps.metrics ?? createMetrics({ router, log, registrySize: async () => (await registry.list()).length, pool: guard, jobStats });
  availability.onChange((down) => metrics.setDatabaseUp(!down));
  if (deps.outboxSource) metrics.setOutboxSource(deps.outboxSource);

  app.use(securityHeaders);
  app.use(requestLog(log, routeWords(router), metrics));

  // Process-level probes answer on any host, before tenancy.
  app.get('/healthz', (_req, res) => { res.json({ status: 'ok' }); });
  app.get('/readyz', async (_req, res) => {
    const checks = await readiness(db, deps, guard);
    res.status(checks.status === 'ready' ? 200 : 503).json(checks);
  });
  app.get('/metrics', async (req, res) => {
    if (deps.metricsToken && !sameSecret(String(req.headers.authorization ?? ''), `Bearer ${deps.metricsToken}`)) {
      res.status(401).setHeader('WWW-Authenticate', 'Bearer').setHeader('Content-Type', PROBLEM_CONTENT_TYPE);
      res.end(JSON.stringify({ type: '/errors/401', title: 'Unauthorized', status: 401, detail: 'The metrics need the metrics token.', instance: `urn:request:${(req as { id?: string }).id}` }));
      return;
    }
    res.setHeader('Content-Type', metrics.contentType);
    res.setHeader('Cache-Control', 'no-store');
    res.end(await metrics.render());
  });

  app.use(resolveTenant(registry, { trustProxy: deps.trustProxy }));

  // One document for every municipality; its `servers` is the address this request came in on (issue 24).
  let document: Record<string, unknown> | undefined;
  app.get('/openapi.json', (req, res) => {
    document ??= buildOpenApiDocument(router, 'http://localhost:8080/api');
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.json(documentFor(document, publicBaseUrl(req)));
  });
  // The API reference of this municipality (Scalar, from the npm package) and the pages of the problem types
  // (issue 24): public, before the token.
  app.get('/docs', docsPage);
  app.get('/docs/scalar.js', docsBundle);
  app.get('/errors', problemTypeIndex);
  app.get('/errors/:status', problemStatusPage);
  app.get('/validation_errors/:code', validationRulePage);

  app.use(authenticate(db));
  const routes = routeTable(router);
  app.use(rateLimit(deps.rateLimiter, routes));
  app.use(rejectInvalidToken);
  app.use(methodNotAllowed(routes));
  app.use(cacheControl);
  app.use(readBody(undefined, rawBodyRoutes(router)));

  // The answer as a value, written once (platform/http/api.ts, answer.ts).
  const handle = apiHandler(router, { log, db, availability });
  const serveApi = (req: Request, res: Response) => {
    // HEAD is a GET without a body: node's response already knows not to send one.
    if (req.method === 'HEAD') req.method = 'GET';
    const { tenant } = tenantOf(req);
    const actor = actorOf(req);
    // The caller's viewer, built once for the request (platform/auth/viewer.ts).
    const viewer = viewerOfActor(actor);
    const buildContext = (): TrpcContext => ({
      tenant,
      viewer,
      em: orm.em.fork({ schema: tenant.schema }),
      log,
      jobs: deps.jobs,
      requestId: String(res.getHeader('X-Request-Id') ?? ''),
      upload: rawUploadOf(req),
    });
    return handle(req, res, { buildContext, tenantSchema: tenant.schema, tokenId: actor?.tokenId ?? null, withToken: !!actor });
  };
  // Again after the body was read: body parsing continues from the socket's events, outside the request's
  // connection affinity (db/affinity.ts) set when the tenant was resolved.
  app.use((req: Request, res: Response) => withConnectionAffinity(tenantOf(req).tenant.schema, () => serveApi(req, res)));

  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    // A client that hung up: nobody to answer, nothing wrong with the service.
    if (isClientGone(err) || req.destroyed && !res.headersSent && !res.writable) {
      log.debug({ requestId: (req as { id?: string }).id }, 'client closed the connection early');
      if (!res.writableEnded) res.destroy();
      return;
    }
    const problem = problemFromError(err, req.method, log, String(res.getHeader('X-Request-Id') ?? ''), availability);
    if (res.headersSent) return res.end();
    // Spec 1.10: a response to a token is private, also an error raised before `cacheControl` ran (429).
    send(res, problemAnswer(problem, !!actorOf(req)));
  });
  return app;
}

/** Constant-time comparison of two secrets (their hashes, so lengths do not leak either). */
function sameSecret(a: string, b: string): boolean {
  const h = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(h(a), h(b));
}

function securityHeaders(req: Request, res: Response, next: NextFunction) {
  const sent = String(req.headers['x-request-id'] ?? '');
  const requestId = /^[A-Za-z0-9-]{8,64}$/.test(sent) ? sent : randomUUID();
  (req as { id?: string }).id = requestId;
  res.setHeader('X-Request-Id', requestId);
  for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
  // Websites read the API from the browser; tokens travel in a header, never in cookies.
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', 'ETag, RateLimit, RateLimit-Policy, Retry-After, X-Request-Id, Idempotent-Replayed, Content-Disposition, X-Total-Count');
  if (req.method === 'OPTIONS') {
    res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PATCH, DELETE, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, Content-Disposition, X-Request-Id, If-Match, If-None-Match, Idempotency-Key');
    res.setHeader('Access-Control-Max-Age', '600');
    res.status(204).end();
    return;
  }
  next();
}

/** Spec 1.10 and D10: authenticated responses are private; anonymous reads of public offers are cacheable. */
function cacheControl(req: Request, res: Response, next: NextFunction) {
  res.setHeader('Vary', 'Authorization');
  if (actorOf(req)) res.setHeader('Cache-Control', 'private, no-store');
  else if (req.method === 'GET') res.setHeader('Cache-Control', 'public, max-age=60');
  else res.setHeader('Cache-Control', 'no-store');
  next();
}

/** The fixed words of the router's paths (`offers`, `transition`, …) and of the process's own endpoints. */
function routeWords(router: AnyRouter): Set<string> {
  const words = new Set(['api', 'openapi.json', 'healthz', 'readyz', 'docs', 'scalar.js', 'errors', 'validation_errors']);
  for (const { template } of operationsOf(router)) {
    for (const seg of template.split('/')) if (seg && !seg.startsWith('{')) words.add(seg);
  }
  return words;
}

/**
 * The path as logged: known words, base-path segments and identifiers stay; any other segment (an e-mail
 * address, a name or a token a client put in the path) becomes `~`.
 */
function loggablePath(path: string, words: Set<string>, basePath: string | undefined): string {
  const base = new Set(basePath?.split('/') ?? []);
  return path.split('/').map((seg) => (seg === '' || words.has(seg) || base.has(seg) || parseId(seg) ? seg : '~')).join('/');
}

/**
 * `/readyz`: the database, Redis (the shared rate limits) and the job queue (pg-boss's schema) separately.
 * Ready while the database and the job queue answer; Redis down is degraded (limits fall back to memory),
 * not unready. The database is asked on the pool guard's own connection (issue 23): a pool whose connections
 * are all busy (one municipality's statements waiting on a lock) still serves the others, so it is reported
 * (`pool`), not unready.
 */
async function readiness(db: ReturnType<typeof executorOf>, deps: AppDeps, guard: ReturnType<typeof poolGuardOf>) {
  const limiter = deps.rateLimiter.status();
  const timed = <T>(p: Promise<T>) => Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000).unref())]);
  const ask = (text: string): Promise<unknown> => (guard ? guard.probeQuery(text) : sqlTag.raw(text).execute(db));
  const database = await timed(ask('select 1')).then(() => 'ok', () => 'down');
  const jobQueue = !deps.jobs ? 'none'
    : deps.jobs instanceof InMemoryJobs ? 'in-memory'
    : database === 'down' ? 'down'
    : await timed(ask('select version from pgboss.version')).then(() => 'ok', () => 'down');
  const redis = limiter.backend === 'redis' ? 'ok' : limiter.degraded ? 'down' : 'not configured';
  const ready = database === 'ok' && jobQueue !== 'down';
  return { status: ready ? 'ready' : 'unavailable', database, redis, jobQueue, rateLimit: limiter, ...(guard ? { pool: poolReport(guard) } : {}) };
}

/** The pool as /readyz shows it: busy or not, and the municipalities holding the most connections. */
function poolReport(guard: NonNullable<ReturnType<typeof poolGuardOf>>) {
  const s = guard.snapshot();
  return {
    size: s.size, inUse: s.total - s.idle, waiting: s.waiting, saturated: s.total - s.idle >= s.size && s.waiting > 0,
    tenantShare: s.tenantShare, offerShare: s.offerShare, busiest: s.tenants.slice(0, 3),
  };
}

/** Method, path (never the query: it may hold an e-mail address), status, duration and tenant; and the metrics. */
function requestLog(log: Logger, words: Set<string>, metrics: Metrics) {
  const probes = new Set(['/healthz', '/readyz', '/metrics']);
  return (req: Request, res: Response, next: NextFunction) => {
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      const match = (req as { tenantMatch?: { tenant: { slug: string }; basePath: string } }).tenantMatch;
      const raw = req.originalUrl.split('?')[0];
      const below = match ? (match.basePath === '/' ? raw : raw.slice(match.basePath.length) || '/') : raw;
      const route = probes.has(raw) ? raw : !match ? 'unknown-host' : below === '/openapi.json' ? below : metrics.routeOf(req.method, below);
      metrics.observeRequest(req.method, route, res.statusCode, ms / 1000);
      if (res.statusCode === 429) metrics.rateLimitRefused(/"token"/.test(String(res.getHeader('RateLimit-Policy') ?? '')) ? 'token' : 'anonymous');
      const path = loggablePath(raw, words, match?.basePath);
      log.info({ method: req.method, path, status: res.statusCode, ms: Math.round(ms * 10) / 10, tenant: match?.tenant.slug, requestId: res.getHeader('X-Request-Id') }, 'request');
    });
    next();
  };
}

export { Problem };
