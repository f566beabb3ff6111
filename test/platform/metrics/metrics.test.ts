import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PgBoss } from 'pg-boss';
import { createRateLimiter } from '../../../src/platform/rate-limit/index.js';
import { startJobSender } from '../../../src/platform/jobs/queue.js';
import { createLogger } from '../../../src/platform/logging/logger.js';
import { createMetrics, type Metrics } from '../../../src/platform/metrics/index.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { appRouter } from '../../../src/router.js';
import { useHarness } from '../../harness/harness.js';
import { entities } from '../../../src/entities.js';

// `/metrics` (Prometheus text, prom-client): requests by route template and status, latency histograms,
// jobs by queue and state with the oldest waiting job's age (pg-boss's public API), rate-limit refusals,
// registry size, outbox gauges from a pluggable source. No tenant label except the database pool's (issue 23).
// Fresh job counts on every scrape here (production reads them at most every 5 s).
process.env.METRICS_JOBS_CACHE_MS = '0';

describe('/metrics', () => {
  let metrics: Metrics;
  let boss: PgBoss;
  let stopBoss: () => Promise<void>;

  const { h } = useHarness({
    // One anonymous request per hour: the second is refused.
    rateLimiter: createRateLimiter({ log: { warn: () => {}, info: () => {} }, anonymous: { points: 1, durationSeconds: 3600 }, tokenBucket: { capacity: 1000, refillPerMinute: 1000 } }),
    jobs: async (orm) => {
      const s = await startJobSender(orm, createLogger('silent'));
      boss = s.boss;
      stopBoss = s.stop;
      return s.sender;
    },
    tenant: false,
  });
  beforeAll(() => {
    metrics = createMetrics({ router: appRouter, registrySize: async () => (await h.registry.list()).length });
  });
  afterAll(() => stopBoss?.());

  const scrape = async () => {
    const res = await h.request('GET', '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    return res.text;
  };

  it('counts requests by route template and status, with latency histograms, and no raw ids or tenants', async () => {
    const t = await h.tenant();
    const created = await t.post('/categories', { name: 'Sport' });
    expect(created.status).toBe(201);
    await t.get(`/categories/${created.body.uuid}`);
    await t.get('/categories/00000000-0000-4000-8000-000000000000');
    const text = await scrape();
    expect(text).toContain('hp_http_requests_total{method="POST",route="/categories",status="201"} 1');
    expect(text).toContain('hp_http_requests_total{method="GET",route="/categories/{uuid}",status="200"} 1');
    expect(text).toContain('hp_http_requests_total{method="GET",route="/categories/{uuid}",status="404"} 1');
    expect(text).toMatch(/hp_http_request_duration_seconds_bucket\{le="0\.1",method="GET",route="\/categories\/\{uuid\}"\} \d/);
    expect(text).toMatch(/hp_http_request_duration_seconds_count\{method="POST",route="\/categories"\} 1/);
    expect(text).not.toContain(created.body.uuid);
    // Only the database pool's series name a municipality (its schema, issue 23); nothing else does.
    const others = text.split('\n').filter((l) => !l.startsWith('hp_db_')).join('\n');
    expect(others).not.toContain(t.slug.replace(/-/g, '_'));
    expect(others).not.toContain(t.slug);
    expect(text).toMatch(new RegExp(`^hp_db_pool_wait_seconds_count\\{schema="${t.tenant.schema}"\\} \\d+$`, 'm'));
    expect(text).toMatch(/^hp_registry_tenants \d+$/m);
    expect(text).toMatch(/^hp_database_up 1$/m);
  });

  it('counts rate-limit refusals by policy', async () => {
    const t = await h.tenant();
    await t.get('/offers', { token: null });
    const refused = await t.get('/offers', { token: null });
    expect(refused.status).toBe(429);
    expect(await scrape()).toMatch(/^hp_rate_limit_refusals_total\{policy="anonymous"\} [1-9]/m);
  });

  it('shows jobs by queue and state, and the age of the oldest waiting job', async () => {
    // A queue of the test's own: the workers other test files run on this database never take its job.
    await boss.createQueue('metrics-probe');
    await boss.send('metrics-probe', { tenant: 'nobody' });
    await new Promise((r) => setTimeout(r, 1100));
    const text = await scrape();
    expect(text).toMatch(/^hp_jobs\{queue="metrics-probe",state="queued"\} [1-9]/m);
    expect(text).toMatch(/^hp_jobs\{queue="metrics-probe",state="ready"\} [1-9]/m);
    expect(text).toMatch(/^hp_jobs\{queue="metrics-probe",state="active"\} 0/m);
    expect(text).toMatch(/^hp_jobs\{queue="metrics-probe",state="failed"\} 0/m);
    const age = Number(/^hp_jobs_oldest_waiting_seconds\{queue="metrics-probe"\} ([\d.]+)/m.exec(text)?.[1]);
    expect(age).toBeGreaterThanOrEqual(1);
  });

  it('reads the outbox gauges from the source it is pointed at', async () => {
    expect(await metrics.render()).not.toMatch(/^hp_outbox_backlog \d/m);
    metrics.setOutboxSource(async () => ({ backlog: 7, failed: 2, oldestSeconds: 42 }));
    const text = await metrics.render();
    expect(text).toMatch(/^hp_outbox_backlog 7$/m);
    expect(text).toMatch(/^hp_outbox_failed 2$/m);
    expect(text).toMatch(/^hp_outbox_oldest_seconds 42$/m);
    metrics.setOutboxSource(async () => { throw new Error('outbox down'); });
    await expect(metrics.render()).resolves.toContain('hp_http_requests_total');
  });
});

describe('/metrics with METRICS_TOKEN, and an outbox source given to the app', () => {
  it('answers only to the metrics token, and reports the outbox source', async () => {
    const { createApp } = await import('../../../src/app.js');
    const { createHttpServer } = await import('../../../src/platform/http/server.js');
    const { createOrm } = await import('../../../src/platform/db/orm.js');
    const { TenantRegistry } = await import('../../../src/platform/tenancy/registry.js');
    const { generousRateLimiter } = await import('../../harness/harness.js');
    const { httpRequest } = await import('../../harness/processes.js');
    const { inject } = await import('vitest');
    const orm = await createOrm(inject('databaseUrl'), { entities, poolMax: 2 });
    const app = createApp({
      orm, registry: new TenantRegistry(executorOf(orm), 0), rateLimiter: generousRateLimiter(), log: createLogger('silent'), trustProxy: false,
      metricsToken: 'scrape-secret-1', outboxSource: async () => ({ backlog: 3 }),
    });
    const server = createHttpServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    try {
      const refused = await httpRequest(port, 'GET', '/metrics');
      expect(refused.status).toBe(401);
      expect(refused.headers['content-type']).toContain('application/problem+json');
      expect((await httpRequest(port, 'GET', '/metrics', { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
      const ok = await httpRequest(port, 'GET', '/metrics', { headers: { authorization: 'Bearer scrape-secret-1' } });
      expect(ok.status).toBe(200);
      expect(ok.text).toMatch(/^hp_outbox_backlog 3$/m);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
      await orm.close();
    }
  });
});
