import express, { type NextFunction, type Request, type Response } from 'express';
import { randomUUID } from 'node:crypto';
import type { AnyRouter } from '@trpc/server';
import type { Orm } from './platform/db/orm.js';
import type { JobSender } from './platform/jobs/queue.js';
import { executorOf } from './platform/db/orm.js';
import type { Logger } from './platform/logging/logger.js';
import type { TenantRegistry } from './platform/tenancy/registry.js';
import { resolveTenant, tenantOf } from './platform/tenancy/middleware.js';
import { actorOf, authenticate, rejectInvalidToken } from './platform/auth/middleware.js';
import { readBody } from './platform/http/body.js';
import { openApiHandler } from './platform/http/openapi-adapter.js';
import { buildOpenApiDocument } from './platform/http/openapi-document.js';
import { problemFromError } from './platform/http/errors.js';
import { parseId } from './platform/http/ids.js';
import { notFound, Problem, PROBLEM_CONTENT_TYPE } from './platform/http/problem.js';
import type { TrpcContext } from './platform/http/trpc.js';
import { SECURITY_HEADERS } from './platform/http/server.js';
import { rateLimit } from './platform/rate-limit/middleware.js';
import type { RateLimiter } from './platform/rate-limit/index.js';
import { appRouter } from './router.js';

export type AppDeps = {
  orm: Orm;
  registry: TenantRegistry;
  rateLimiter: RateLimiter;
  log: Logger;
  trustProxy: boolean;
  router?: AnyRouter;
  /** Where background actions (allocate, commit) enqueue their jobs: pg-boss in main.ts, in memory in tests. */
  jobs?: JobSender;
};

export function createApp(deps: AppDeps) {
  const { orm, registry, log } = deps;
  const router = deps.router ?? appRouter;
  const db = executorOf(orm);
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', deps.trustProxy);
  app.set('query parser', 'simple');

  app.use(securityHeaders);
  app.use(requestLog(log, routeWords(router)));

  // Process-level probes answer on any host, before tenancy.
  app.get('/healthz', (_req, res) => { res.json({ status: 'ok' }); });
  app.get('/readyz', async (_req, res) => {
    const limiter = deps.rateLimiter.status();
    try {
      await db.selectNoFrom((eb) => eb.lit(1).as('one')).execute();
      res.status(200).json({ status: 'ready', database: 'ok', rateLimit: limiter });
    } catch {
      res.status(503).json({ status: 'unavailable', database: 'down', rateLimit: limiter });
    }
  });

  app.use(resolveTenant(registry, { trustProxy: deps.trustProxy }));

  const docs = new Map<string, Record<string, unknown>>();
  app.get('/openapi.json', (req, res) => {
    const { host, basePath } = tenantOf(req);
    const baseUrl = `https://${host}${basePath === '/' ? '' : basePath}`;
    let doc = docs.get(baseUrl);
    if (!doc) docs.set(baseUrl, (doc = buildOpenApiDocument(router, baseUrl)));
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.json(doc);
  });

  app.use(authenticate(db));
  app.use(rateLimit(deps.rateLimiter));
  app.use(rejectInvalidToken);
  app.use(cacheControl);
  app.use(readBody());

  const handle = openApiHandler(router, log);
  app.use((req: Request, res: Response) => {
    // HEAD is a GET without a body: node's response already knows not to send one.
    if (req.method === 'HEAD') req.method = 'GET';
    const { tenant } = tenantOf(req);
    const actor = actorOf(req);
    (req as unknown as { hp: { buildContext: () => TrpcContext } }).hp = {
      buildContext: () => ({
        tenant,
        actor,
        em: orm.em.fork({ schema: tenant.schema }),
        log,
        jobs: deps.jobs,
        requestId: String(res.getHeader('X-Request-Id') ?? ''),
      }),
    };
    return handle(req as never, res);
  });

  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const { body, headers } = problemFromError(err, req.method, log, String(res.getHeader('X-Request-Id') ?? ''));
    if (res.headersSent) return res.end();
    res.status(body.status);
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    // Spec 1.10: a response to a token is private, also an error raised before `cacheControl` ran (429).
    res.setHeader('Cache-Control', actorOf(req) ? 'private, no-store' : 'no-store');
    res.setHeader('Content-Type', PROBLEM_CONTENT_TYPE);
    res.end(JSON.stringify(body));
  });
  return app;
}

function securityHeaders(req: Request, res: Response, next: NextFunction) {
  const sent = String(req.headers['x-request-id'] ?? '');
  const requestId = /^[A-Za-z0-9-]{8,64}$/.test(sent) ? sent : randomUUID();
  (req as { id?: string }).id = requestId;
  res.setHeader('X-Request-Id', requestId);
  for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
  // Websites read the API from the browser; tokens travel in a header, never in cookies.
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', 'RateLimit, RateLimit-Policy, Retry-After, X-Request-Id');
  if (req.method === 'OPTIONS') {
    res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PATCH, DELETE, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, X-Request-Id');
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
  const words = new Set(['api', 'openapi.json', 'healthz', 'readyz']);
  for (const proc of Object.values(router._def.procedures as Record<string, { _def: { meta?: { openapi?: { path: string } } } }>)) {
    for (const seg of proc._def.meta?.openapi?.path.split('/') ?? []) if (seg && !seg.startsWith('{')) words.add(seg);
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

/** Method, path (never the query: it may hold an e-mail address), status, duration and tenant. */
function requestLog(log: Logger, words: Set<string>) {
  return (req: Request, res: Response, next: NextFunction) => {
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      const match = (req as { tenantMatch?: { tenant: { slug: string }; basePath: string } }).tenantMatch;
      const path = loggablePath(req.originalUrl.split('?')[0], words, match?.basePath);
      log.info({ method: req.method, path, status: res.statusCode, ms: Math.round(ms * 10) / 10, tenant: match?.tenant.slug, requestId: res.getHeader('X-Request-Id') }, 'request');
    });
    next();
  };
}

export { Problem, notFound };
