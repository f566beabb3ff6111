import type { AddressInfo } from 'node:net';
import { createApp } from '../src/app.js';
import { createOrm, executorOf } from '../src/platform/db/orm.js';
import { createHttpServer } from '../src/platform/http/server.js';
import { createLogger } from '../src/platform/logging/logger.js';
import { createRateLimiter } from '../src/platform/rate-limit/index.js';
import { TenantRegistry } from '../src/platform/tenancy/registry.js';

// The real app for the bench, in its own process: src/app.ts on the production HTTP server, the
// production tenant registry (2 s snapshot), an in-memory rate limiter generous enough never to refuse
// (as test/harness/harness.ts does), and the log level from LOG_LEVEL (default silent here).
// Run: DATABASE_URL=… PORT=0 tsx bench/app-server.ts  (prints `listening <port>`).
const orm = await createOrm(process.env.DATABASE_URL!);
const log = createLogger(process.env.LOG_LEVEL || 'silent');
const rateLimiter = createRateLimiter({
  log: { warn: () => {}, info: () => {} },
  tokenBucket: { capacity: 1_000_000_000, refillPerMinute: 1_000_000_000 },
  anonymous: { points: 1_000_000_000, durationSeconds: 3600 },
});
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
