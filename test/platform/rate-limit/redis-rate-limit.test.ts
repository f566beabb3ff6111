import { describe, it, expect, afterAll } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { createRateLimiter, type RateLimiter } from '../../../src/platform/rate-limit/index.js';

// Against the real Redis at 127.0.0.1:6379 (skipped, loudly, when it does not answer), plus throwaway
// redis-server processes for the outage/recovery case and a closed port for "unreachable".

// RATE_LIMIT_TEST_REDIS_URL only to try the skip path (point it at a closed port).
const REDIS_URL = process.env.RATE_LIMIT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function ping(url: string): Promise<boolean> {
  const c = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, connectTimeout: 500, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  c.on('error', () => {});
  try {
    await c.connect();
    return (await c.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    c.disconnect();
  }
}

const redisUp = await ping(REDIS_URL);
if (!redisUp) {
  console.warn(`\n*** rate-limit Redis tests SKIPPED: no Redis answering at ${REDIS_URL} ***\n`);
}

function makeLog() {
  const lines: { level: 'warn' | 'info'; msg: string; fields?: Record<string, unknown> }[] = [];
  return {
    lines,
    log: {
      warn: (msg: string, fields?: Record<string, unknown>) => lines.push({ level: 'warn', msg, fields }),
      info: (msg: string, fields?: Record<string, unknown>) => lines.push({ level: 'info', msg, fields }),
    },
  };
}

const prefixes: string[] = [];
function newPrefix(): string {
  const p = `rltest-${randomBytes(6).toString('hex')}`;
  prefixes.push(p);
  return p;
}

const limiters: RateLimiter[] = [];
function track(rl: RateLimiter): RateLimiter {
  limiters.push(rl);
  return rl;
}

async function waitFor(cond: () => boolean, timeoutMs: number, stepMs = 20): Promise<number> {
  const start = performance.now();
  while (!cond()) {
    if (performance.now() - start > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(stepMs);
  }
  return performance.now() - start;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

const children = new Set<ChildProcess>();
async function startRedisServer(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], {
    stdio: 'ignore',
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const start = performance.now();
  while (!(await ping(`redis://127.0.0.1:${port}`))) {
    if (child.exitCode !== null) throw new Error(`redis-server on ${port} exited with ${child.exitCode}`);
    if (performance.now() - start > 5000) throw new Error(`redis-server on ${port} did not answer`);
    await sleep(25);
  }
  return child;
}
async function stopRedisServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

afterAll(async () => {
  await Promise.all(limiters.map((l) => l.close()));
  for (const child of children) await stopRedisServer(child);
  if (redisUp && prefixes.length) {
    const c = new Redis(REDIS_URL);
    for (const p of prefixes) {
      const keys = await c.keys(`${p}:*`);
      if (keys.length) await c.del(...keys);
    }
    await c.quit();
  }
});

async function readyLimiter(opts: Parameters<typeof createRateLimiter>[0]): Promise<RateLimiter> {
  const rl = track(createRateLimiter(opts));
  await waitFor(() => rl.status().backend === 'redis', 3000, 5);
  return rl;
}

describe.skipIf(!redisUp)('rate limiter on Redis', () => {
  it('token: 300 quick requests pass, the 301st is refused with Retry-After and headers', async () => {
    const keyPrefix = newPrefix();
    const { log, lines } = makeLog();
    const rl = await readyLimiter({ redisUrl: REDIS_URL, log, keyPrefix });
    expect(rl.status()).toEqual({ backend: 'redis', degraded: false });

    const first = await rl.consumeToken('tenant-a', 'tok1');
    expect(first).toMatchObject({ allowed: true, policy: 'token', limit: 300, remaining: 299, resetSeconds: 1 });
    expect(first.retryAfterSeconds).toBeUndefined();
    expect(first.headers).toEqual({ 'RateLimit-Policy': '"token";q=300;w=180', RateLimit: '"token";r=299;t=1' });

    for (let i = 0; i < 9; i++) await rl.consumeToken('tenant-a', 'tok1');
    const tenth = await rl.consumeToken('tenant-a', 'tok1');
    // 11 taken: 11 x 0.6 s = 6.6 s until full, minus a few ms -> 7 (rounded up)
    expect(tenth.headers.RateLimit).toBe('"token";r=289;t=7');

    const start = performance.now();
    const burst = await Promise.all(Array.from({ length: 289 }, () => rl.consumeToken('tenant-a', 'tok1')));
    expect(burst.every((d) => d.allowed)).toBe(true);
    const last = burst.reduce((a, b) => (a.remaining < b.remaining ? a : b));
    expect(last.remaining).toBe(0);
    expect(last.headers.RateLimit).toBe('"token";r=0;t=1'); // empty: seconds until the next token

    const refused = await rl.consumeToken('tenant-a', 'tok1');
    const elapsed = performance.now() - start;
    expect(elapsed).toBeLessThan(500); // else a token could have been refilled meanwhile
    expect(refused).toMatchObject({ allowed: false, policy: 'token', limit: 300, remaining: 0, resetSeconds: 1, retryAfterSeconds: 1 });
    expect(refused.headers).toEqual({
      'RateLimit-Policy': '"token";q=300;w=180',
      RateLimit: '"token";r=0;t=1',
      'Retry-After': '1',
    });

    // other token, other tenant: own buckets
    expect((await rl.consumeToken('tenant-a', 'tok2')).remaining).toBe(299);
    expect((await rl.consumeToken('tenant-b', 'tok1')).remaining).toBe(299);

    // the key layout of the brief; expires once the bucket would be full again (~180 s)
    const c = new Redis(REDIS_URL);
    const pttl = await c.pttl(`${keyPrefix}:tok:tenant-a:tok1`);
    await c.quit();
    expect(pttl).toBeGreaterThan(179_000);
    expect(pttl).toBeLessThanOrEqual(181_000);

    expect(lines.map((l) => l.level)).toEqual(['info']);
    console.info(`[rate-limit] 300 token consumes (first 11 sequential, 289 concurrent) + refusal in ${elapsed.toFixed(0)} ms`);
  });

  it('token: refills continuously at the stated rate (capacity 3, 600/min = one per 100 ms)', async () => {
    const keyPrefix = newPrefix();
    const { log } = makeLog();
    const rl = await readyLimiter({ redisUrl: REDIS_URL, log, keyPrefix, tokenBucket: { capacity: 3, refillPerMinute: 600 } });

    const t0 = performance.now();
    const drained = [];
    for (let i = 0; i < 3; i++) drained.push(await rl.consumeToken('t', 'small'));
    expect(drained.map((d) => d.remaining)).toEqual([2, 1, 0]);
    expect(drained[0]!.headers['RateLimit-Policy']).toBe('"token";q=3;w=1'); // 0.3 s, rounded up
    const refused = await rl.consumeToken('t', 'small');
    expect(refused.allowed).toBe(false);
    expect(refused.headers['Retry-After']).toBe('1');

    // poll (refused polls do not consume) until the next token: ~100 ms after the first consume
    while (!(await rl.consumeToken('t', 'small')).allowed) await sleep(2);
    const firstRefill = performance.now() - t0;
    expect(firstRefill).toBeGreaterThanOrEqual(95);
    expect(firstRefill).toBeLessThan(400);
    expect((await rl.consumeToken('t', 'small')).allowed).toBe(false);

    // 250 ms later: 2.5 tokens -> exactly 2 pass
    await sleep(250);
    const after = [];
    for (let i = 0; i < 3; i++) after.push((await rl.consumeToken('t', 'small')).allowed);
    expect(after).toEqual([true, true, false]);

    // idle long enough: full again, capped at capacity
    await sleep(400);
    const full = [];
    for (let i = 0; i < 4; i++) full.push((await rl.consumeToken('t', 'small')).allowed);
    expect(full).toEqual([true, true, true, false]);
    console.info(`[rate-limit] first refill after ${firstRefill.toFixed(1)} ms (expected 100)`);
  });

  it('anonymous: 5 per hour per IP and tenant, the 6th is refused', async () => {
    const keyPrefix = newPrefix();
    const { log } = makeLog();
    const rl = await readyLimiter({ redisUrl: REDIS_URL, log, keyPrefix });

    const allowed = [];
    for (let i = 0; i < 5; i++) allowed.push(await rl.consumeAnonymous('tenant-a', '203.0.113.7'));
    expect(allowed.every((d) => d.allowed && d.policy === 'anonymous' && d.limit === 5)).toBe(true);
    expect(allowed.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0]);
    expect(allowed[0]!.headers).toEqual({ 'RateLimit-Policy': '"anonymous";q=5;w=3600', RateLimit: '"anonymous";r=4;t=3600' });

    const sixth = await rl.consumeAnonymous('tenant-a', '203.0.113.7');
    expect(sixth.allowed).toBe(false);
    expect(sixth.retryAfterSeconds).toBeGreaterThanOrEqual(3599);
    expect(sixth.retryAfterSeconds).toBeLessThanOrEqual(3600);
    expect(sixth.headers).toEqual({
      'RateLimit-Policy': '"anonymous";q=5;w=3600',
      RateLimit: `"anonymous";r=0;t=${sixth.retryAfterSeconds}`,
      'Retry-After': String(sixth.retryAfterSeconds),
    });

    expect((await rl.consumeAnonymous('tenant-a', '2001:db8::1')).remaining).toBe(4); // other IP
    expect((await rl.consumeAnonymous('tenant-b', '203.0.113.7')).remaining).toBe(4); // other tenant

    const c = new Redis(REDIS_URL);
    const ttl = await c.ttl(`${keyPrefix}:anon:tenant-a:203.0.113.7`);
    await c.quit();
    expect(ttl).toBeGreaterThan(3590);
  });

  it('two limiter instances (two processes) share one bucket', async () => {
    const keyPrefix = newPrefix();
    const a = await readyLimiter({ redisUrl: REDIS_URL, log: makeLog().log, keyPrefix, tokenBucket: { capacity: 5, refillPerMinute: 1 } });
    const b = await readyLimiter({ redisUrl: REDIS_URL, log: makeLog().log, keyPrefix, tokenBucket: { capacity: 5, refillPerMinute: 1 } });

    expect((await a.consumeToken('t', 'shared')).remaining).toBe(4);
    expect((await b.consumeToken('t', 'shared')).remaining).toBe(3);
    expect((await a.consumeToken('t', 'shared')).remaining).toBe(2);
    expect((await b.consumeToken('t', 'shared')).remaining).toBe(1);
    expect((await b.consumeToken('t', 'shared')).remaining).toBe(0);
    expect((await a.consumeToken('t', 'shared')).allowed).toBe(false);
    expect((await b.consumeToken('t', 'shared')).allowed).toBe(false);

    for (let i = 0; i < 3; i++) await a.consumeAnonymous('t', '198.51.100.1');
    for (let i = 0; i < 2; i++) await b.consumeAnonymous('t', '198.51.100.1');
    expect((await a.consumeAnonymous('t', '198.51.100.1')).allowed).toBe(false);
  });

  it('all three policies and the per-token rates share ONE connection (issue 26)', async () => {
    const port = await freePort();
    const server = await startRedisServer(port);
    const url = `redis://127.0.0.1:${port}`;
    const rl = await readyLimiter({ redisUrl: url, log: makeLog().log, keyPrefix: newPrefix(), anonymous: { points: 1, durationSeconds: 60 } });
    expect((await rl.consumeToken('t', 'a')).remaining).toBe(299);
    expect((await rl.consumeToken('t', 'b', 50)).remaining).toBe(149);
    expect((await rl.consumeAnonymous('t', '192.0.2.9')).allowed).toBe(true);
    expect((await rl.consumeAnonymous('t', '192.0.2.9')).allowed).toBe(false); // the library's fixed window on Redis
    expect((await rl.consumeFailedAuth('t', '192.0.2.9')).remaining).toBe(299);
    expect(rl.status()).toEqual({ backend: 'redis', degraded: false });
    const check = new Redis(url, { lazyConnect: true, retryStrategy: () => null });
    check.on('error', () => {});
    await check.connect();
    const clients = String(await check.client('LIST')).trim().split('\n');
    check.disconnect();
    expect(clients).toHaveLength(2); // the limiter's one connection and this check
    await rl.close();
    await stopRedisServer(server);
  });

  it('Redis unreachable (closed port): answers from memory at once, status degraded, one log line', async () => {
    const port = await freePort(); // nothing listens there
    const { log, lines } = makeLog();
    const rl = track(createRateLimiter({ redisUrl: `redis://127.0.0.1:${port}`, log, tokenBucket: { capacity: 3, refillPerMinute: 60 } }));

    const durations: number[] = [];
    const decisions = [];
    for (let i = 0; i < 4; i++) {
      const t = performance.now();
      decisions.push(await rl.consumeToken('t', 'x'));
      durations.push(performance.now() - t);
    }
    for (let i = 0; i < 6; i++) {
      const t = performance.now();
      decisions.push(await rl.consumeAnonymous('t', '192.0.2.1'));
      durations.push(performance.now() - t);
      await sleep(50); // spread over several reconnect attempts
    }
    expect(Math.max(...durations)).toBeLessThan(1000);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, true, true, true, true, true, false]);
    expect(decisions[3]!.headers).toEqual({ 'RateLimit-Policy': '"token";q=3;w=3', RateLimit: '"token";r=0;t=1', 'Retry-After': '1' });
    expect(rl.status()).toEqual({ backend: 'memory', degraded: true });

    const warns = lines.filter((l) => l.level === 'warn');
    expect(warns).toHaveLength(1);
    expect(warns[0]!.msg).toMatch(/unreachable/);
    expect(lines).toHaveLength(1);

    const t = performance.now();
    await rl.close();
    expect(performance.now() - t).toBeLessThan(1000);
    console.info(`[rate-limit] unreachable Redis: slowest call ${Math.max(...durations).toFixed(1)} ms`);
  });

  it('Redis hung (SIGSTOP): a couple of calls wait for the command timeout, then memory at once', { timeout: 10_000 }, async () => {
    const port = await freePort();
    const server = await startRedisServer(port);
    const { log, lines } = makeLog();
    const rl = await readyLimiter({ redisUrl: `redis://127.0.0.1:${port}`, log, keyPrefix: newPrefix() });

    server.kill('SIGSTOP');
    const durations: number[] = [];
    for (let i = 0; i < 6; i++) {
      const t = performance.now();
      expect((await rl.consumeToken('t', 'x')).allowed).toBe(true);
      durations.push(performance.now() - t);
    }
    // Bounded, not timed: under a loaded CI machine only "never hangs" is a fair assertion.
    expect(Math.max(...durations)).toBeLessThan(2000); // commandTimeout 250 ms
    expect(durations.slice(-3).every((d) => d < 250)).toBe(true); // socket dropped: no command timeout any more
    expect(rl.status()).toEqual({ backend: 'memory', degraded: true });

    server.kill('SIGCONT');
    await waitFor(() => !rl.status().degraded, 4000, 10);
    expect(lines.map((l) => l.level)).toEqual(['info', 'warn', 'info']);
    await rl.close();
    await stopRedisServer(server);
    console.info(`[rate-limit] hung Redis: call durations ${durations.map((d) => d.toFixed(0)).join(', ')} ms`);
  });

  it('Redis stopped and restarted: memory while down, back to Redis within a few seconds', { timeout: 15_000 }, async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    let server = await startRedisServer(port);
    const { log, lines } = makeLog();
    const keyPrefix = newPrefix();
    const rl = await readyLimiter({ redisUrl: url, log, keyPrefix, tokenBucket: { capacity: 3, refillPerMinute: 60 } });

    expect((await rl.consumeToken('t', 'x')).remaining).toBe(2);
    const check = new Redis(url, { lazyConnect: true, retryStrategy: () => null });
    check.on('error', () => {});
    await check.connect();
    expect(await check.exists(`${keyPrefix}:tok:t:x`)).toBe(1);
    check.disconnect();

    await stopRedisServer(server);
    const downAt = performance.now();
    const durations: number[] = [];
    const down = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      down.push(await rl.consumeToken('t', 'x'));
      durations.push(performance.now() - t);
    }
    expect(Math.max(...durations)).toBeLessThan(1000);
    // memory starts from a full bucket of its own
    expect(down.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
    await waitFor(() => rl.status().degraded, 2000, 5);
    expect(rl.status()).toEqual({ backend: 'memory', degraded: true });
    await sleep(300); // several failed reconnects: still one line
    expect(lines.map((l) => l.level)).toEqual(['info', 'warn']);

    server = await startRedisServer(port);
    const restartedAt = performance.now();
    const recovery = await waitFor(() => !rl.status().degraded, 4000, 10);
    expect(rl.status()).toEqual({ backend: 'redis', degraded: false });
    expect(lines.map((l) => l.level)).toEqual(['info', 'warn', 'info']);

    // served from the (fresh, empty) Redis again
    expect((await rl.consumeToken('t', 'x')).remaining).toBe(2);
    const check2 = new Redis(url, { lazyConnect: true, retryStrategy: () => null });
    check2.on('error', () => {});
    await check2.connect();
    expect(await check2.exists(`${keyPrefix}:tok:t:x`)).toBe(1);
    check2.disconnect();

    await rl.close();
    await stopRedisServer(server);
    console.info(
      `[rate-limit] outage: slowest call while down ${Math.max(...durations).toFixed(1)} ms; ` +
        `down for ${(restartedAt - downAt).toFixed(0)} ms; back on Redis ${recovery.toFixed(0)} ms after restart`,
    );
  });
});
