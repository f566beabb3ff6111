import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AnyRouter } from '@trpc/server';
import { readConfig } from '../config.js';
import type { QueueStat } from '../jobs/names.js';
import type { Logger } from '../logging/logger.js';
import type { PoolGuard } from '../db/pool-guard.js';
import { registerPoolMetrics } from './pool.js';
import { operationsOf } from '../http/operations.js';

// `/metrics` in Prometheus text format (prom-client), one registry per app. Labels are bounded: the route
// template (from the router's own paths, never the raw URL), the method, the status, the queue name; no
// tenant label (a provider may host hundreds of municipalities) except where noted (the pool's, metrics/pool.ts).

export type OutboxStats = { backlog: number; failed?: number; oldestSeconds?: number };
export type OutboxSource = () => Promise<OutboxStats>;

export type Metrics = {
  registry: Registry;
  /** Records a finished HTTP request (route template, status, seconds). */
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  /** A 429: `policy` is the RateLimit-Policy's name (`token` or `anonymous`). */
  rateLimitRefused(policy: string): void;
  /** Points the outbox gauges at a function (the outbox module owns the query). */
  setOutboxSource(source: OutboxSource | null): void;
  /** `up` 1 or 0: whether the database answers (the outage tracker sets it). */
  setDatabaseUp(up: boolean): void;
  /** The route template of a path below the tenant's base path, or `other`. */
  routeOf(method: string, pathBelowBase: string): string;
  render(): Promise<string>;
  contentType: string;
};

export function createMetrics(opts: {
  router?: AnyRouter; registrySize?: () => Promise<number>; defaultMetrics?: boolean;
  /** The job queue's counts (pg-boss's public API: jobs/queue.ts `queueStats`); without it no job gauges. */
  jobStats?: () => Promise<QueueStat[]>;
  /** Where a failed read of a gauge is reported (it then shows NaN or nothing, never a made-up 0). */
  log?: Pick<Logger, 'warn'>;
  /** How long one read of the job queue's counts serves scrapes (every API pod is scraped): METRICS_JOBS_CACHE_MS, 5 s. */
  jobsCacheMs?: number;
  /** The database pool's guard: connections and waits per municipality, lock timeouts, retries (metrics/pool.ts). */
  pool?: PoolGuard;
}): Metrics {
  const jobsCacheMs = opts.jobsCacheMs ?? readConfig().metricsJobsCacheMs;
  const registry = new Registry();
  // Issue 22: a gauge whose read failed (the database down, a timeout) is logged, not silently NaN or empty.
  const failed = (metric: string) => (err: unknown) => {
    opts.log?.warn({ err, metric }, `metrics: could not read ${metric}`);
  };
  if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'hp_' });

  const requests = new Counter({ name: 'hp_http_requests_total', help: 'HTTP requests by method, route template and status', labelNames: ['method', 'route', 'status'] as const, registers: [registry] });
  const duration = new Histogram({
    name: 'hp_http_request_duration_seconds',
    help: 'HTTP request latency by method and route template',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const refusals = new Counter({ name: 'hp_rate_limit_refusals_total', help: 'Requests refused with 429, by policy (token or anonymous)', labelNames: ['policy'] as const, registers: [registry] });
  const dbUp = new Gauge({ name: 'hp_database_up', help: '1 while the database answers, 0 during an outage seen by requests', registers: [registry] });
  dbUp.set(1);
  if (opts.pool) registerPoolMetrics(registry, opts.pool);

  new Gauge({
    name: 'hp_registry_tenants',
    help: 'Municipalities in the tenant registry (this process\'s snapshot)',
    registers: [registry],
    async collect() {
      if (opts.registrySize) this.set(await opts.registrySize().catch((err: unknown) => (failed('hp_registry_tenants')(err), NaN)));
    },
  });

  // Jobs, from pg-boss's public API (every process sees the same queues; issue 26): counts by queue and state
  // (`queued` = not yet started, of which `deferred` wait for a later start and `ready` could run now; `active`;
  // `failed` as pg-boss retains them), and the age of the oldest job not yet started per queue.
  let jobsRead: Promise<QueueStat[]> | null = null;
  const readJobs = () => (jobsRead ??= (async () => {
    try {
      return opts.jobStats ? await opts.jobStats() : [];
    } finally {
      setTimeout(() => (jobsRead = null), jobsCacheMs).unref();
    }
  })());
  new Gauge({
    name: 'hp_jobs',
    help: 'Background jobs by queue and state (pg-boss: queued, deferred, ready, active, failed)',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const queues = await readJobs().catch((err: unknown) => (failed('hp_jobs')(err), [] as QueueStat[]));
      for (const q of queues) for (const [state, n] of Object.entries(q.counts)) this.set({ queue: q.name, state }, n);
    },
  });
  new Gauge({
    name: 'hp_jobs_oldest_waiting_seconds',
    help: 'Age of the oldest job not yet started (queued, including retries and deferred jobs), by queue',
    labelNames: ['queue'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const queues = await readJobs().catch((err: unknown) => (failed('hp_jobs_oldest_waiting_seconds')(err), [] as QueueStat[]));
      for (const q of queues) if (q.oldestWaitingSeconds !== null) this.set({ queue: q.name }, q.oldestWaitingSeconds);
    },
  });

  let outboxSource: OutboxSource | null = null;
  let outboxRead: Promise<OutboxStats | null> | null = null;
  const readOutbox = () => (outboxRead ??= (async () => {
    try {
      return outboxSource ? await outboxSource() : null;
    } catch (err) {
      failed('hp_outbox')(err);
      return null;
    } finally {
      setTimeout(() => (outboxRead = null), 0);
    }
  })());
  // Registered only once a source is set: an unknown backlog is absent, not 0.
  const outboxGauges: Gauge[] = [];
  outboxGauges.push(new Gauge({
    name: 'hp_outbox_backlog',
    help: 'E-mails queued in the outbox and not yet sent (all tenants)',
    registers: [],
    async collect() {
      const s = await readOutbox();
      if (s) this.set(s.backlog);
    },
  }));
  outboxGauges.push(new Gauge({
    name: 'hp_outbox_failed',
    help: 'Outbox e-mails whose last attempt failed (all tenants)',
    registers: [],
    async collect() {
      const s = await readOutbox();
      if (s?.failed !== undefined) this.set(s.failed);
    },
  }));
  outboxGauges.push(new Gauge({
    name: 'hp_outbox_oldest_seconds',
    help: 'Age of the oldest unsent outbox e-mail',
    registers: [],
    async collect() {
      const s = await readOutbox();
      if (s?.oldestSeconds !== undefined) this.set(s.oldestSeconds);
    },
  }));

  const routes = routeTable(opts.router);
  return {
    registry,
    observeRequest(method, route, status, seconds) {
      requests.inc({ method, route, status: String(status) });
      duration.observe({ method, route }, seconds);
    },
    rateLimitRefused(policy) {
      refusals.inc({ policy: policy === 'token' ? 'token' : 'anonymous' });
    },
    setOutboxSource(source) {
      outboxSource = source;
      for (const g of outboxGauges) {
        const name = (g as unknown as { name: string }).name;
        const registered = registry.getSingleMetric(name);
        if (source && !registered) registry.registerMetric(g);
        if (!source && registered) registry.removeSingleMetric(name);
      }
    },
    setDatabaseUp(up) {
      dbUp.set(up ? 1 : 0);
    },
    routeOf(method, path) {
      for (const r of routes) if ((r.method === method || (method === 'HEAD' && r.method === 'GET')) && r.re.test(path)) return r.template;
      return 'other';
    },
    render: () => registry.metrics(),
    contentType: registry.contentType,
  };
}

/** `/offers/{uuid}/transition` → a regex over the path below the base path. */
function routeTable(router?: AnyRouter): { method: string; re: RegExp; template: string }[] {
  if (!router) return [];
  const out: { method: string; re: RegExp; template: string }[] = [];
  // The router's procedures through their public surfaces (http/operations.ts), not `router._def`.
  for (const o of operationsOf(router)) {
    const template = o.template.startsWith('/') ? o.template : `/${o.template}`;
    const re = new RegExp(`^${template.split('/').map((seg) => (seg.startsWith('{') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}/?$`);
    out.push({ method: o.method.toUpperCase(), re, template });
  }
  // Literal segments before parameters: `/offers/{uuid}` must not swallow a fixed word.
  return out.sort((a, b) => (b.template.match(/\{/g)?.length ?? 0) < (a.template.match(/\{/g)?.length ?? 0) ? 1 : -1);
}
