import type { AddressInfo } from 'node:net';
import { createApp } from '../src/app.js';
import { createOrm, executorOf } from '../src/platform/db/orm.js';
import { createHttpServer } from '../src/platform/http/server.js';
import { createLogger } from '../src/platform/logging/logger.js';
import { createRateLimiter, type RateLimitDecision, type RateLimiter } from '../src/platform/rate-limit/index.js';
import { TenantRegistry } from '../src/platform/tenancy/registry.js';
import { entities } from '../src/entities.js';

// The real app for the bench, in its own process: src/app.ts on the production HTTP server, the
// production tenant registry (2 s snapshot), a rate limiter generous enough never to refuse (as
// test/harness/harness.ts does), and the log level from LOG_LEVEL (default silent here).
// Run: DATABASE_URL=… PORT=0 tsx bench/app-server.ts  (prints `listening <port>`).
const orm = await createOrm(process.env.DATABASE_URL!, { entities });
const log = createLogger(process.env.LOG_LEVEL || 'silent');
// BENCH_RATE_LIMIT: `memory` (default), `redis` (REDIS_URL, key prefix BENCH_RL_PREFIX; bench/limiter.ts) or `none`
// (a limiter that allows everything without counting: the baseline of bench/limiter.ts).
const GENEROUS = {
  tokenBucket: { capacity: 1_000_000_000, refillPerMinute: 1_000_000_000 },
  anonymous: { points: 1_000_000_000, durationSeconds: 3600 },
  failedAuth: { points: 1_000_000_000, durationSeconds: 3600 },
};
const mode = process.env.BENCH_RATE_LIMIT ?? 'memory';
const quiet = { warn: () => {}, info: () => {} };
const rateLimiter: RateLimiter = mode === 'none'
  ? noLimiter()
  : createRateLimiter({ log: quiet, ...GENEROUS, ...(mode === 'redis' ? { redisUrl: process.env.REDIS_URL || 'redis://127.0.0.1:6379', keyPrefix: process.env.BENCH_RL_PREFIX } : {}) });
if (mode === 'redis') {
  // Serve only once both Redis connections are up, so no request is answered from the in-memory insurance.
  for (let i = 0; i < 100 && rateLimiter.status().backend !== 'redis'; i++) await new Promise((r) => setTimeout(r, 50));
  if (rateLimiter.status().backend !== 'redis') throw new Error('Redis not reachable');
}

function noLimiter(): RateLimiter {
  const allow = (policy: RateLimitDecision['policy']): Promise<RateLimitDecision> => Promise.resolve({
    allowed: true, policy, limit: 1_000_000_000, remaining: 1_000_000_000, resetSeconds: 0,
    headers: { 'RateLimit-Policy': `"${policy}";q=1000000000;w=3600`, RateLimit: `"${policy}";r=1000000000;t=0` },
  });
  return {
    consumeToken: () => allow('token'),
    consumeAnonymous: () => allow('anonymous'),
    consumeFailedAuth: () => allow('failed-auth'),
    status: () => ({ backend: 'memory', degraded: false }),
    close: async () => {},
  };
}
const app = createApp({ orm, registry: new TenantRegistry(executorOf(orm)), rateLimiter, log, trustProxy: false });
const server = createHttpServer(app);
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`listening ${(server.address() as AddressInfo).port}`);
});
const stop = () => {
  server.closeAllConnections();
  server.close(() => void Promise.all([rateLimiter.close(), orm.close()]).then(() => process.exit(0)));
};
// bench/tenants.ts reads the process's memory after its warm-up: RSS and the V8 heap, on SIGUSR2.
process.on('SIGUSR2', () => {
  const m = process.memoryUsage();
  console.log(`memory ${JSON.stringify({ rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external })}`);
});
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
