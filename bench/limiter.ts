import { randomBytes } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import { Redis } from 'ioredis';
import { insertToken } from '../src/platform/auth/tokens.js';
import { createOrm, executorOf, migrateControl } from '../src/platform/db/orm.js';
import { qualified, sql } from '../src/platform/db/sql.js';
import { createRateLimiter } from '../src/platform/rate-limit/index.js';
import { addTenant } from '../src/platform/tenancy/operations.js';
import { scratchDatabase } from './scratch.js';
import { quick, reportResult, type BenchRow } from './result.js';
import { entities } from '../src/entities.js';
import { spawnServer, type Server } from './server.js';

// `npm run bench:limiter` (issue 10.5): the same request through the same app with and without the Redis rate
// limiter. Two app processes (bench/app-server.ts) on one scratch database: BENCH_RATE_LIMIT=none (a limiter that
// allows everything, the baseline) and =redis (the production limiter on the machine's Redis, limits too
// generous to refuse). One keep-alive connection, requests one after another, the two servers alternating in
// batches of 20 so drift of the machine hits both alike; medians of the latency per request, and the overhead as
// the median over batch pairs of (median with Redis − median without).
// Requests: with a token (token bucket, a Lua script) on GET /categories (3 rows) and anonymous (fixed window)
// on GET /offers (none, from the public list cache): cheap endpoints, so the limiter's share is visible. Also the limiter alone, in this process.
// Env: BENCH_PG_URL, REDIS_URL (default redis://127.0.0.1:6379), BENCH_REQUESTS (4000; quick 600).
const PG = process.env.BENCH_PG_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const REQUESTS = Number(process.env.BENCH_REQUESTS || (quick ? 600 : 4000));
const BATCH = 20;
const TARGET_MS = 0.3;
const HOST = 'limiter.localhost';

/** One request on the keep-alive agent; milliseconds from sending to the end of the body. */
function timed(port: number, agent: http.Agent, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    http.get({ host: '127.0.0.1', port, path, agent, headers: { host: HOST, ...headers } }, (res) => {
      res.resume();
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`GET ${path}: ${res.statusCode}`));
        else resolve(Number(process.hrtime.bigint() - t0) / 1e6);
      });
    }).on('error', reject);
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const r3 = (x: number) => Math.round(x * 1000) / 1000;

async function main() {
  const loadBefore = os.loadavg();
  const scratch = await scratchDatabase(PG, 'limiter');
  const url = new URL(scratch.url);
  const prefix = `bench-rl-${randomBytes(4).toString('hex')}`;
  const redis = new Redis(REDIS_URL);
  const servers: Server[] = [];
  try {
    const orm = await createOrm(url.toString(), { entities, poolMax: 2 });
    let token: string;
    try {
      await migrateControl(orm);
      const tenant = await addTenant(orm, { slug: 'limiter', name: 'Limiter', hosts: [{ host: HOST, basePath: '/api' }] });
      token = (await insertToken(executorOf(orm), tenant.schema, { name: 'Bench', role: 'admin', access: 'read', ownerKind: 'service', organiserIds: [], expiresAt: null })).token;
      for (const name of ['Natur', 'Sport', 'Kunst']) {
        await sql`insert into ${qualified(tenant.schema, 'categories')} (uuid, name, alias) values (gen_random_uuid(), ${name}, ${name.toLowerCase()})`.execute(executorOf(orm));
      }
    } finally {
      await orm.close();
    }
    const env = { DATABASE_URL: url.toString(), REDIS_URL, BENCH_RL_PREFIX: prefix };
    const none = await spawnServer('none', 'bench/app-server.ts', { NODE_ENV: 'production', ...env, BENCH_RATE_LIMIT: 'none' });
    servers.push(none);
    const withRedis = await spawnServer('redis', 'bench/app-server.ts', { NODE_ENV: 'production', ...env, BENCH_RATE_LIMIT: 'redis' });
    servers.push(withRedis);

    const cases = [
      { name: 'with a token (token bucket)', path: '/api/categories', headers: { authorization: `Bearer ${token}` } },
      // Anonymous callers may read only the offers; the tenant has none and the public list cache answers.
      { name: 'anonymous (fixed window)', path: '/api/offers', headers: {} as Record<string, string> },
    ];
    const rows: BenchRow[] = [];
    const notes: string[] = [];
    for (const c of cases) {
      const agents = new Map(servers.map((s) => [s.name, new http.Agent({ keepAlive: true, maxSockets: 1 })]));
      const samples = new Map<string, number[]>(servers.map((s) => [s.name, []]));
      /** Per pair of neighbouring batches: median with Redis minus median without (robust to the machine's drift). */
      const pairDiffs: number[] = [];
      try {
        for (const s of servers) for (let i = 0; i < 100; i++) await timed(s.port, agents.get(s.name)!, c.path, c.headers); // warm-up
        for (let done = 0; done < REQUESTS; done += BATCH) {
          const order = (done / BATCH) % 2 ? [...servers].reverse() : servers;
          const batch = new Map<string, number[]>();
          for (const s of order) {
            const xs: number[] = [];
            for (let i = 0; i < BATCH; i++) xs.push(await timed(s.port, agents.get(s.name)!, c.path, c.headers));
            batch.set(s.name, xs);
            samples.get(s.name)!.push(...xs);
          }
          pairDiffs.push(median(batch.get('redis')!) - median(batch.get('none')!));
        }
      } finally {
        for (const a of agents.values()) a.destroy();
      }
      const base = median(samples.get('none')!);
      const value = median(samples.get('redis')!);
      const overhead = median(pairDiffs);
      console.log(`${c.name}: median ${value.toFixed(3)} ms with the Redis limiter, ${base.toFixed(3)} ms without: +${overhead.toFixed(3)} ms`);
      const endpoint = `GET ${c.path.replace('/api', '')}`;
      rows.push({ name: `${endpoint} ${c.name}, median latency with the Redis limiter (baseline: no limiter)`, value: r3(value), unit: 'ms', baseline: r3(base), ratio: Math.round((base / value) * 100) / 100 });
      rows.push({ name: `${endpoint} ${c.name}, median overhead of the Redis limiter`, value: r3(overhead), unit: 'ms', target: `≤ ${TARGET_MS} ms`, met: r3(overhead) <= TARGET_MS });
      if (overhead > TARGET_MS) notes.push(`${c.name}: the Redis limiter adds ${overhead.toFixed(3)} ms, ${(overhead - TARGET_MS).toFixed(3)} ms over the target.`);
    }

    // The limiter alone, in this process: what one consume costs (a round trip to Redis and the script).
    const limiter = createRateLimiter({
      redisUrl: REDIS_URL, keyPrefix: prefix, log: { warn: () => {}, info: () => {} },
      tokenBucket: { capacity: 1_000_000_000, refillPerMinute: 1_000_000_000 }, anonymous: { points: 1_000_000_000, durationSeconds: 3600 },
    });
    try {
      for (let i = 0; i < 100 && limiter.status().backend !== 'redis'; i++) await new Promise((r) => setTimeout(r, 50));
      const ping: number[] = [];
      const consume: number[] = [];
      for (let i = 0; i < Math.min(REQUESTS, 2000); i++) {
        let t0 = process.hrtime.bigint();
        await redis.ping();
        ping.push(Number(process.hrtime.bigint() - t0) / 1e6);
        t0 = process.hrtime.bigint();
        await limiter.consumeToken('limiter', 'bench');
        consume.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      if (limiter.status().backend !== 'redis') throw new Error('the limiter answered from memory');
      console.log(`limiter alone: consumeToken median ${median(consume).toFixed(3)} ms, Redis PING median ${median(ping).toFixed(3)} ms`);
      rows.push({ name: 'consumeToken alone (in process), median (baseline: one Redis PING round trip)', value: r3(median(consume)), unit: 'ms', baseline: r3(median(ping)), ratio: Math.round((median(ping) / median(consume)) * 100) / 100 });
    } finally {
      await limiter.close();
    }
    console.log(`load average before ${loadBefore.map((x) => x.toFixed(1)).join(' ')}, now ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
    reportResult({
      scenario: 'limiter',
      title: 'The same request through the app with and without the Redis rate limiter',
      inputs: { requestsPerCase: REQUESTS, batch: BATCH, connections: 1, endpoints: 'GET /categories (3 rows) with a token, GET /offers (empty, cached) anonymous', quick },
      rows,
      notes,
    });
  } finally {
    for (const s of servers) {
      s.child.kill('SIGTERM');
      await new Promise((resolve) => (s.child.exitCode !== null ? resolve(null) : s.child.once('exit', resolve)));
    }
    // The bench's own keys only.
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await scratch.drop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
