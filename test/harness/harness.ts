import http from 'node:http';
import pg from 'pg';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, inject } from 'vitest';
import type { AnyRouter } from '@trpc/server';
import { createApp } from '../../src/app.js';
import type { TrustProxy } from '../../src/platform/config.js';
import { insertToken, type TokenAccess, type TokenRole } from '../../src/platform/auth/tokens.js';
import { systemViewer } from '../../src/platform/auth/viewer.js';
import type { ServiceContext } from '../../src/platform/context.js';
import { createOrm, executorOf, migrateControl, type Orm } from '../../src/platform/db/orm.js';
import type { Executor } from '../../src/platform/db/sql.js';
import { createLogger, type Logger } from '../../src/platform/logging/logger.js';
import { createHttpServer } from '../../src/platform/http/server.js';
import { createRateLimiter, type RateLimiter } from '../../src/platform/rate-limit/index.js';
import { addTenant } from '../../src/platform/tenancy/operations.js';
import { TenantRegistry } from '../../src/platform/tenancy/registry.js';
import type { TenantSettings } from '../../src/platform/tenancy/settings.js';
import type { Tenant } from '../../src/platform/tenancy/tenant.js';
import { InMemoryJobs, QUEUES, type JobSender } from '../../src/platform/jobs/queue.js';
import { tenantJobHandlers } from '../../src/jobs.js';
import { entities } from '../../src/entities.js';
import type { ProblemBody } from '../../src/platform/http/problem.js';
import type { Violation } from '../../src/domain/errors.js';
import type { ResponseBody } from './api.js';
import { isRecord } from './json.js';

export type { RequestBody, ResponseBody, Schema } from './api.js';
export { at, isRecord, asList, maybe, asRecord } from './json.js';

// The integration harness: the real express stack on a random port, the real database of this run,
// a fresh tenant (own schema, own host) per call of `tenant()`, tokens, and an HTTP client that sends a
// chosen Host header. Its answers' bodies are typed by method and path from the OpenAPI document (./api.ts).
export type TestResponse<T = unknown> = { status: number; headers: http.IncomingHttpHeaders; body: T; text: string };

export type RequestOptions = {
  token?: string | null;
  body?: unknown;
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  host?: string;
};

export type TenantOptions = { basePath?: string; settings?: Partial<TenantSettings>; name?: string };

export type TokenOptions = { role?: TokenRole; access?: TokenAccess; organiserIds?: string[]; expiresAt?: Date | null; name?: string; ratePerMinute?: number };

export type TestTenant = {
  slug: string;
  host: string;
  basePath: string;
  tenant: Tenant;
  /** A read-write admin token, made once. */
  adminToken: string;
  token(opts?: TokenOptions): Promise<string>;
  request<M extends string, P extends string>(method: M, path: P, opts?: RequestOptions): Promise<TestResponse<ResponseBody<M, P>>>;
  get<P extends string>(path: P, opts?: RequestOptions): Promise<TestResponse<ResponseBody<'get', P>>>;
  post<P extends string>(path: P, body?: unknown, opts?: RequestOptions): Promise<TestResponse<ResponseBody<'post', P>>>;
  patch<P extends string>(path: P, body?: unknown, opts?: RequestOptions): Promise<TestResponse<ResponseBody<'patch', P>>>;
  del<P extends string>(path: P, opts?: RequestOptions): Promise<TestResponse<ResponseBody<'delete', P>>>;
  /** A service context for calling use cases directly. */
  context(): ServiceContext;
};

export type Harness = {
  orm: Orm;
  registry: TenantRegistry;
  port: number;
  /**
   * The background jobs the app enqueued (allocate, commit, refill), held in memory: `await h.jobs.drain()` runs
   * them now, through the same handlers as the pg-boss workers (mail-send and webhook-deliver jobs are dropped:
   * the mail stays in the outbox, the events wait for their webhooks). Unused when `HarnessOptions.jobs` replaced it.
   */
  jobs: InMemoryJobs;
  tenant(opts?: TenantOptions): Promise<TestTenant>;
  /** A raw request, for hosts that are no tenant's (a path under `/api` is typed as the tenant's). */
  request<M extends string, P extends string>(method: M, path: P, opts?: RequestOptions): Promise<TestResponse<ResponseBody<M, P>>>;
  close(): Promise<void>;
};

const silent = createLogger('silent');
let counter = 0;

export function generousRateLimiter(): RateLimiter {
  return createRateLimiter({
    log: { warn: () => {}, info: () => {} },
    tokenBucket: { capacity: 1_000_000, refillPerMinute: 1_000_000 },
    anonymous: { points: 1_000_000, durationSeconds: 3600 },
  });
}

export type HarnessOptions = {
  /** A database of its own (migrated here), for tests whose worker processes serve every tenant they find. */
  databaseUrl?: string;
  /** Named statements for `prepared()` queries (default PG_PREPARED_STATEMENTS, on). */
  preparedStatements?: boolean;
  /** Shares of the pool other than the settings' (issue 23; platform/db/pool-guard.ts). */
  shares?: { tenant?: number; offer?: number; waitMs?: number };
  rateLimiter?: RateLimiter;
  /** TRUST_PROXY: `true` is one hop (D12). */
  trustProxy?: TrustProxy | boolean;
  /** A router other than the app's (test-only procedures); default the app's own. */
  router?: AnyRouter;
  /** Builds the app's tenant registry; default one that reloads on every request (refresh 0). */
  registry?: (db: Executor) => TenantRegistry;
  /** The app's logger; default a silent one. */
  log?: Logger;
  /** Where the app enqueues background jobs; default the in-memory `Harness.jobs` (run by `drain()`). */
  jobs?: (orm: Orm) => JobSender | Promise<JobSender>;
};

export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const orm = await createOrm(opts.databaseUrl ?? inject('databaseUrl'), { entities, poolMax: 8, preparedStatements: opts.preparedStatements, log: opts.log ?? silent, shares: opts.shares });
  if (opts.databaseUrl) await migrateControl(orm);
  const registry = opts.registry ? opts.registry(executorOf(orm)) : new TenantRegistry(executorOf(orm), 0);
  const rateLimiter = opts.rateLimiter ?? generousRateLimiter();
  // Mail stays in the outbox here (tests read the rows); test/platform/mail and test/jobs send it through
  // real pg-boss workers and a real SMTP server.
  // Webhook deliveries likewise stay queued (test/resources/webhooks deliver them to receivers of their own).
  const jobs = new InMemoryJobs(orm, silent, { ...tenantJobHandlers, [QUEUES.mailSend]: async () => {}, [QUEUES.webhookDeliver]: async () => {} });
  const sender = opts.jobs ? await opts.jobs(orm) : jobs;
  const app = createApp({ orm, registry, rateLimiter, log: opts.log ?? silent, trustProxy: opts.trustProxy ?? false, router: opts.router, jobs: sender });
  // The production server (header size and timeouts, src/platform/http/server.ts).
  const server = createHttpServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

  // The body is the parsed JSON (undefined when there is none or it is no JSON).
  const send = (method: string, path: string, o: RequestOptions = {}): Promise<TestResponse> =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string> = { ...(o.headers ?? {}) };
      if (o.host) headers.host = o.host;
      if (o.token) headers.authorization = `Bearer ${o.token}`;
      let payload: string | Buffer | undefined = o.rawBody;
      if (o.body !== undefined) {
        payload = JSON.stringify(o.body);
        headers['content-type'] ??= 'application/json';
      }
      if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload));
      const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text });
        });
      });
      req.on('error', reject);
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  // Its type is the one the OpenAPI document declares for the success answer of `method path` (./api.ts), taken on
  // trust here: the document is made from the output schemas every answer is checked against in tests
  // (`outputChecks`, src/platform/http/response.ts). An error answer's body is read through `expectProblem`.
  const request = <M extends string, P extends string>(method: M, path: P, o: RequestOptions = {}) =>
    send(method, path, o) as Promise<TestResponse<ResponseBody<M, P>>>;

  const tenant = async (o: TenantOptions = {}): Promise<TestTenant> => {
    const slug = `t${process.pid.toString(36)}${(++counter).toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const host = `${slug}.test`;
    const basePath = o.basePath ?? '/api';
    const t = await addTenant(orm, { slug, name: o.name ?? `Test ${slug}`, hosts: [{ host, basePath }], settings: o.settings });
    const db = executorOf(orm);
    const token = async (to: TokenOptions = {}) =>
      (await insertToken(db, t.schema, {
        name: to.name ?? 'Test token',
        role: to.role ?? 'admin',
        access: to.access ?? 'read-write',
        ownerKind: 'person',
        organiserIds: to.organiserIds ?? [],
        expiresAt: to.expiresAt ?? null,
        ratePerMinute: to.ratePerMinute ?? null,
      })).token;
    const adminToken = await token();
    const prefix = basePath === '/' ? '' : basePath;
    const req = <M extends string, P extends string>(method: M, path: P, ro: RequestOptions = {}): Promise<TestResponse<ResponseBody<M, P>>> =>
      send(method, prefix + path, { host, ...ro, token: ro.token === undefined ? adminToken : ro.token }) as Promise<TestResponse<ResponseBody<M, P>>>;
    return {
      slug,
      host,
      basePath,
      tenant: t,
      adminToken,
      token,
      request: req,
      get: (p, ro) => req('GET', p, ro),
      post: (p, body, ro) => req('POST', p, { body, ...ro }),
      patch: (p, body, ro) => req('PATCH', p, { body, ...ro }),
      del: (p, ro) => req('DELETE', p, ro),
      context: () => ({ tenant: t, em: orm.em.fork({ schema: t.schema }), viewer: systemViewer('test'), log: silent, jobs: sender }),
    };
  };

  return {
    orm,
    registry,
    port,
    jobs,
    tenant,
    request,
    close: async () => {
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rateLimiter.close();
      await orm.close();
    },
  };
}

export type UseHarnessOptions = HarnessOptions & {
  /** The file's tenant `t` (made once, after the harness); `false` for files that make their own. */
  tenant?: TenantOptions | false;
  /** A database of the file's own (`ownDatabase(suffix)`): the harness migrates it, `afterAll` drops it. */
  ownDatabase?: string;
};

/**
 * The setup of an integration test file, in one place: registers a `beforeAll` that starts the harness (and
 * the file's tenant) and an `afterAll` that closes it (and drops the file's own database). The handles are
 * filled in place when the `beforeAll` has run; hooks the file registers after this call run after it
 * (before each test), its later `afterAll`s before the close (vitest's hook order "stack").
 * Options may be a function, called in the `beforeAll`, for options made by an earlier `beforeAll`.
 */
export function useHarness(opts: UseHarnessOptions | (() => UseHarnessOptions) = {}): { h: Harness; t: TestTenant; own: { url: string } } {
  const h = {} as Harness;
  const t = {} as TestTenant;
  const own = { url: '' };
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const { tenant, ownDatabase: suffix, ...harness } = typeof opts === 'function' ? opts() : opts;
    if (suffix) {
      const db = await ownDatabase(suffix);
      own.url = db.url;
      drop = db.drop;
    }
    Object.assign(h, await startHarness({ ...harness, databaseUrl: harness.databaseUrl ?? (suffix ? own.url : undefined) }));
    if (tenant !== false) Object.assign(t, await h.tenant(tenant));
  });
  afterAll(async () => {
    await h.close?.();
    await drop?.();
  });
  return { h, t, own };
}

/**
 * A database of the test file's own beside this run's (created empty; `startHarness({ databaseUrl })` migrates
 * it). For files whose pg-boss workers must see only their own jobs: workers serve every tenant of their
 * database, and another file's worker would otherwise take this file's mail to its own SMTP server.
 */
export async function ownDatabase(suffix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = new URL(inject('databaseUrl'));
  const url = new URL(base.toString());
  url.pathname = `${base.pathname}_${suffix}`;
  const admin = async (text: string) => {
    const c = new pg.Client({ connectionString: new URL('/postgres', base).toString() });
    await c.connect();
    try {
      await c.query(text);
    } finally {
      await c.end();
    }
  };
  await admin(`create database ${url.pathname.slice(1)}`);
  return { url: url.toString(), drop: () => admin(`drop database if exists ${url.pathname.slice(1)} with (force)`) };
}

/** A connection of its own to this run's database, for transactions held open across other connections' work. */
export async function pgClient(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: inject('databaseUrl') });
  await c.connect();
  return c;
}

/** A fresh tenant slug with the given prefix, for tenants made outside the harness (CLI, registry). */
export const slugOf = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 9)}`;

const isViolation = (v: unknown): v is Violation =>
  isRecord(v) && typeof v.propertyPath === 'string' && typeof v.message === 'string' && typeof v.code === 'string';

/** Whether `b` has the problem+json shape of spec 7 (`violations`, when present, a list of violations). */
function isProblemBody(b: unknown): b is ProblemBody {
  return isRecord(b) && typeof b.type === 'string' && typeof b.title === 'string' && typeof b.status === 'number' && typeof b.detail === 'string'
    && (b.violations === undefined || (Array.isArray(b.violations) && b.violations.every(isViolation)));
}

/** Asserts the problem+json shape of spec 7 and returns the body. */
export function expectProblem(res: TestResponse, status: number): ProblemBody {
  const ct = String(res.headers['content-type'] ?? '');
  if (res.status !== status || !ct.startsWith('application/problem+json')) {
    throw new Error(`expected a ${status} problem, got ${res.status} ${ct}: ${res.text.slice(0, 500)}`);
  }
  const b = res.body;
  if (!isProblemBody(b) || b.status !== status || !b.detail) {
    throw new Error(`not a problem body: ${res.text.slice(0, 500)}`);
  }
  if (status !== 422 || !b.violations) {
    if (b.type !== `/errors/${status}`) throw new Error(`type should be /errors/${status}: ${b.type}`);
  } else if (b.type !== `/validation_errors/${b.violations[0].code}`) {
    throw new Error(`type should name the first violation's code: ${b.type}`);
  }
  return b;
}
