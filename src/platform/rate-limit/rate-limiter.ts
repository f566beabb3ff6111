import { Redis, type RedisOptions } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { intervalMs, MemoryTokenBucket, RedisTokenBucket, type BucketTake, type TokenBucketPolicy } from './token-bucket.js';

// Rate limits of D3 / D10 (framework-free; the HTTP layer decides what to consume and sets the headers).
//
// - Token policy: an exact token bucket per (tenant, token), capacity 300, refilled continuously at
//   100/min. Redis key `<prefix>:tok:<tenantSlug>:<tokenId>` (prefix `rl` by default).
// - Anonymous policy: fixed window, 5 per 3600 s per (tenant, client IP).
//   Redis key `<prefix>:anon:<tenantSlug>:<clientIp>`. Refused requests count too (fixed window).
// - Failed-authentication policy (issue 13): fixed window, 300 per 3600 s per (tenant, client IP), spent by
//   requests whose token is unknown, revoked, expired or another tenant's. Those are answered 401 while
//   this allowance lasts, whatever the anonymous allowance (they still count against it, D10); past it 429.
//   Redis key `<prefix>:authfail:<tenantSlug>:<clientIp>`.
//
// Headers (D10):
//   RateLimit-Policy: "token";q=<capacity>;w=<capacity / refill per second>   ("anonymous";q=5;w=3600)
//   RateLimit: "<policy>";r=<remaining>;t=<seconds>
//   Retry-After: <seconds>   (refused only; whole seconds until one unit is available, at least 1)
// `t` for the token bucket: while r > 0, the seconds until the bucket is full again (the quota is
// completely restored); when r = 0 (the last token was just taken, or the request was refused), the seconds
// until the next token, so that t agrees with Retry-After. Seconds are always rounded UP, so a client that
// waits t or Retry-After seconds is never refused for being early. For the anonymous window, t is the
// seconds until the window resets. `w` must be an integer: a bucket whose refill time is not a whole
// number of seconds reports it rounded up.
//
// Redis (issue 26): ONE ioredis connection for all three policies. The fixed windows are rate-limiter-flexible's
// RateLimiterRedis as documented (its own `rlflxIncr` script); the token bucket is a script of our own under
// its own command name (token-bucket.ts). No offline queue, short timeouts, no resend after reconnect (a
// consume must never be counted twice): when Redis is not ready, or a command fails, the call is answered at
// once by an in-memory limiter with the same policy, and the state change is logged once. Counts in memory
// are per process and start from a full bucket.

export type RateLimitDecision = {
  allowed: boolean;
  policy: 'token' | 'anonymous' | 'failed-auth';
  limit: number;
  remaining: number;
  resetSeconds: number;
  retryAfterSeconds?: number;
  headers: Record<string, string>;
};

export interface RateLimiter {
  /**
   * One request of a token. `ratePerMinute` (issue 21: a token's own limit, e.g. a website's) refills its bucket
   * at that rate instead of the default; its capacity is what the same refill window holds (D3: 300 for 100).
   */
  consumeToken(tenantSlug: string, tokenId: string, ratePerMinute?: number | null): Promise<RateLimitDecision>;
  consumeAnonymous(tenantSlug: string, clientIp: string): Promise<RateLimitDecision>;
  /** One failed authentication (invalid token) from this address on this tenant. */
  consumeFailedAuth(tenantSlug: string, clientIp: string): Promise<RateLimitDecision>;
  /** degraded = Redis configured but not reachable (answers come from memory). */
  status(): { backend: 'redis' | 'memory'; degraded: boolean };
  close(): Promise<void>;
}

export type RateLimitLog = {
  warn(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
};

export type RateLimiterOptions = {
  /** Unset or empty: in memory from the start (per process). */
  redisUrl?: string;
  log: RateLimitLog;
  /** Default `rl`; tests use a random one to isolate their keys. */
  keyPrefix?: string;
  tokenBucket?: TokenBucketPolicy;
  anonymous?: { points: number; durationSeconds: number };
  failedAuth?: { points: number; durationSeconds: number };
};

export const DEFAULT_TOKEN_BUCKET: TokenBucketPolicy = { capacity: 300, refillPerMinute: 100 };
export const DEFAULT_ANONYMOUS = { points: 5, durationSeconds: 3600 };
/** Generous: tokens are long random strings, so guessing is no real threat; this only caps a flood. */
export const DEFAULT_FAILED_AUTH = { points: 300, durationSeconds: 3600 };

const REDIS_OPTIONS: RedisOptions = {
  connectionName: 'hp-rate-limit', // how the one connection shows in Redis's CLIENT LIST
  enableOfflineQueue: false, // fail at once instead of queueing while disconnected
  connectTimeout: 1000,
  // A hung (connected but silent) Redis: a command gives up after 250 ms and is answered from memory;
  // after 500 ms without a reply the socket is dropped, so the client is no longer "ready" and further
  // calls go straight to memory until it has reconnected.
  commandTimeout: 250,
  socketTimeout: 500,
  maxRetriesPerRequest: 0, // in-flight commands fail when the connection drops
  autoResendUnfulfilledCommands: false, // never replay a consume after reconnect
  retryStrategy: (times: number) => Math.min(100 * times, 1000), // keep trying, at least once a second
};

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new Error(`rate limit: ${name} must be a positive integer, got ${value}`);
  return value;
}

/** host:port only: the URL may carry a password. */
function describeRedis(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '6379'}`;
  } catch {
    return 'redis';
  }
}

export function createRateLimiter(opts: RateLimiterOptions): RateLimiter {
  const log = opts.log;
  const prefix = opts.keyPrefix ?? 'rl';
  const bucket = opts.tokenBucket ?? DEFAULT_TOKEN_BUCKET;
  const anon = opts.anonymous ?? DEFAULT_ANONYMOUS;
  positiveInteger('tokenBucket.capacity', bucket.capacity);
  if (!(bucket.refillPerMinute > 0) || !Number.isFinite(bucket.refillPerMinute)) {
    throw new Error(`rate limit: tokenBucket.refillPerMinute must be positive, got ${bucket.refillPerMinute}`);
  }
  positiveInteger('anonymous.points', anon.points);
  positiveInteger('anonymous.durationSeconds', anon.durationSeconds);
  const failed = opts.failedAuth ?? DEFAULT_FAILED_AUTH;
  positiveInteger('failedAuth.points', failed.points);
  positiveInteger('failedAuth.durationSeconds', failed.durationSeconds);
  const failedPolicyHeader = `"failed-auth";q=${failed.points};w=${failed.durationSeconds}`;

  const interval = intervalMs(bucket);
  const tokenWindowSeconds = Math.max(1, Math.ceil((bucket.capacity * interval) / 1000 - 1e-9));
  const tokenPolicyHeader = `"token";q=${bucket.capacity};w=${tokenWindowSeconds}`;
  const anonPolicyHeader = `"anonymous";q=${anon.points};w=${anon.durationSeconds}`;

  const tokenMemory = new MemoryTokenBucket(bucket);
  // Issue 21, tokens with a rate of their own: one bucket policy for every rate, counted in microseconds of the
  // refill window (the window is the same for every rate, so a token of rate r holds windowMs / (60000 / r)
  // requests); a request of a token of rate r costs 60e6 / r units. Integer costs, and one bucket for every rate.
  const windowMs = bucket.capacity * interval;
  const scaled: TokenBucketPolicy = { capacity: Math.round(windowMs * 1000), refillPerMinute: 60_000_000 };
  const scaledMemory = new MemoryTokenBucket(scaled);
  const anonMemory = new RateLimiterMemory({ points: anon.points, duration: anon.durationSeconds, keyPrefix: `${prefix}:anon` });
  const failedMemory = new RateLimiterMemory({ points: failed.points, duration: failed.durationSeconds, keyPrefix: `${prefix}:authfail` });

  // ---- backend and state ------------------------------------------------------------------------------
  type State = 'memory-only' | 'connecting' | 'redis' | 'degraded';
  let state: State = 'memory-only';
  let closed = false;
  let client: Redis | null = null;
  let tokenRedis: RedisTokenBucket | null = null;
  let scaledRedis: RedisTokenBucket | null = null;
  let anonRedis: RateLimiterRedis | null = null;
  let failedRedis: RateLimiterRedis | null = null;
  const redisUrl = opts.redisUrl?.trim();
  const target = redisUrl ? describeRedis(redisUrl) : '';

  const setState = (next: 'redis' | 'degraded', reason?: string): void => {
    if (closed || state === next) return;
    state = next;
    if (next === 'redis') log.info('rate limiter: Redis reachable, limits shared across processes', { redis: target });
    else log.warn('rate limiter: Redis unreachable, counting in memory per process', { redis: target, reason });
  };
  const ready = (): boolean => client?.status === 'ready';

  if (!redisUrl) {
    log.info('rate limiter: REDIS_URL not set, counting in memory per process');
  } else {
    state = 'connecting';
    const c = new Redis(redisUrl, REDIS_OPTIONS);
    client = c;
    c.on('ready', () => setState('redis'));
    // 'error' must have a listener (ioredis prints unhandled ones); reconnecting is automatic.
    c.on('error', (err: Error) => {
      if (!ready()) setState('degraded', err.message);
    });
    c.on('close', () => setState('degraded', 'connection closed'));
    // rejectIfRedisNotReady: a call while the connection is not ready fails at once (answered from memory below).
    anonRedis = new RateLimiterRedis({ storeClient: c, keyPrefix: `${prefix}:anon`, points: anon.points, duration: anon.durationSeconds, rejectIfRedisNotReady: true });
    failedRedis = new RateLimiterRedis({ storeClient: c, keyPrefix: `${prefix}:authfail`, points: failed.points, duration: failed.durationSeconds, rejectIfRedisNotReady: true });
    tokenRedis = new RedisTokenBucket(c, bucket, `${prefix}:tok`);
    scaledRedis = new RedisTokenBucket(c, scaled, `${prefix}:tokr`);
  }

  /** After each call: a Redis answer proves Redis is back, a memory answer while "redis" proves it is not. */
  const observe = (fromMemory: boolean): void => {
    if (state === 'memory-only') return;
    if (fromMemory) {
      if (state === 'redis') setState('degraded', 'command failed');
    } else if (state === 'degraded' && ready()) {
      setState('redis');
    }
  };

  /** A fixed window: Redis when the connection is ready and answers, else this process's memory. */
  const fixedWindow = async (redis: RateLimiterRedis | null, memory: RateLimiterMemory, key: string): Promise<{ allowed: boolean; res: RateLimiterRes }> => {
    if (redis && ready()) {
      try {
        const res = await redis.consume(key);
        observe(false);
        return { allowed: true, res };
      } catch (err) {
        if (err instanceof RateLimiterRes) {
          observe(false);
          return { allowed: false, res: err };
        }
        // A timeout or a dropped connection: memory answers.
      }
    }
    observe(redis !== null);
    try {
      return { allowed: true, res: await memory.consume(key) };
    } catch (err) {
      if (err instanceof RateLimiterRes) return { allowed: false, res: err };
      throw err;
    }
  };

  /** A token bucket: Redis when the connection is ready and answers, else this process's memory. */
  const take = async (redis: RedisTokenBucket | null, memory: MemoryTokenBucket, key: string, cost = 1): Promise<BucketTake> => {
    if (redis && ready()) {
      try {
        const answer = await redis.take(key, cost);
        observe(false);
        return answer;
      } catch {
        // A timeout or a dropped connection: memory answers.
      }
    }
    observe(redis !== null);
    return memory.take(key, cost);
  };

  const seconds = (ms: number): number => Math.max(0, Math.ceil(ms / 1000));

  const decide = (
    policy: RateLimitDecision['policy'],
    limit: number,
    policyHeader: string,
    allowed: boolean,
    remaining: number,
    resetMs: number,
  ): RateLimitDecision => {
    const resetSeconds = allowed ? seconds(resetMs) : Math.max(1, seconds(resetMs));
    const headers: Record<string, string> = {
      'RateLimit-Policy': policyHeader,
      RateLimit: `"${policy}";r=${remaining};t=${resetSeconds}`,
    };
    const decision: RateLimitDecision = { allowed, policy, limit, remaining, resetSeconds, headers };
    if (!allowed) {
      decision.retryAfterSeconds = resetSeconds;
      headers['Retry-After'] = String(resetSeconds);
    }
    return decision;
  };

  /** A token with a rate of its own: the scaled bucket (units of a microsecond), answered in requests. */
  const consumeAtRate = async (key: string, ratePerMinute: number): Promise<RateLimitDecision> => {
    const perRequestMs = 60_000 / ratePerMinute;
    const cost = Math.max(1, Math.round(perRequestMs * 1000));
    const capacity = Math.max(1, Math.floor(windowMs / perRequestMs + 1e-9));
    const policyHeader = `"token";q=${capacity};w=${tokenWindowSeconds}`;
    const got = await take(scaledRedis, scaledMemory, key, cost);
    if (!got.allowed) return decide('token', capacity, policyHeader, false, 0, got.msToAvailable);
    // One unit of slack: the units left are floored, a whole number of requests must not lose one to it.
    const remaining = Math.min(capacity, Math.floor((got.remaining + 1) / cost));
    const resetMs = remaining > 0 ? got.msToFull : got.msToFull - (windowMs - perRequestMs);
    return decide('token', capacity, policyHeader, true, remaining, resetMs);
  };

  return {
    async consumeToken(tenantSlug, tokenId, ratePerMinute) {
      if (ratePerMinute && ratePerMinute !== bucket.refillPerMinute) return consumeAtRate(`${tenantSlug}:${tokenId}`, ratePerMinute);
      const got = await take(tokenRedis, tokenMemory, `${tenantSlug}:${tokenId}`);
      if (!got.allowed) return decide('token', bucket.capacity, tokenPolicyHeader, false, 0, got.msToAvailable);
      const remaining = got.remaining;
      // msToFull = ms until full; with no whole token left report the ms until the next one instead.
      const resetMs = remaining > 0 ? got.msToFull : got.msToFull - (bucket.capacity - 1) * interval;
      return decide('token', bucket.capacity, tokenPolicyHeader, true, remaining, resetMs);
    },

    async consumeAnonymous(tenantSlug, clientIp) {
      const { allowed, res } = await fixedWindow(anonRedis, anonMemory, `${tenantSlug}:${clientIp}`);
      return decide('anonymous', anon.points, anonPolicyHeader, allowed, allowed ? res.remainingPoints : 0, res.msBeforeNext);
    },

    async consumeFailedAuth(tenantSlug, clientIp) {
      const { allowed, res } = await fixedWindow(failedRedis, failedMemory, `${tenantSlug}:${clientIp}`);
      return decide('failed-auth', failed.points, failedPolicyHeader, allowed, allowed ? res.remainingPoints : 0, res.msBeforeNext);
    },

    status() {
      if (state === 'memory-only') return { backend: 'memory', degraded: false };
      if (state === 'redis') return { backend: 'redis', degraded: false };
      return { backend: 'memory', degraded: true };
    },

    async close() {
      if (closed || !client) {
        closed = true;
        return;
      }
      closed = true;
      if (client.status === 'ready') {
        try {
          await client.quit();
          return;
        } catch {
          // fall through to disconnect
        }
      }
      client.disconnect();
    },
  };
}
