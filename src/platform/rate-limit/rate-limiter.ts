import { Redis, type RedisOptions } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { intervalMs, MemoryTokenBucket, tokenBucketLua, type TokenBucketPolicy } from './token-bucket.js';

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
// Redis: one ioredis connection for the anonymous limiter and a dedicated duplicate for the token bucket
// (rate-limiter-flexible registers its Lua under one command name per connection). No offline queue,
// short timeouts, no resend after reconnect (a consume must never be counted twice): when Redis is not
// ready every call is answered at once by the in-memory insurance limiter with the same policy, and the
// state change is logged once. Counts in memory are per process and start from a full bucket.

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

/** Passed as rate-limiter-flexible `options`; the insurance limiters mark it when they answer. */
type CallContext = { fromMemory?: boolean };

class AnonymousMemoryLimiter extends RateLimiterMemory {
  constructor(opts: { points: number; duration: number; keyPrefix: string }, private readonly onConsume: (options: Record<string, unknown>) => void) {
    super(opts);
  }

  override consume(key: string | number, pointsToConsume?: number, options: Record<string, unknown> = {}): Promise<RateLimiterRes> {
    this.onConsume(options);
    return super.consume(key, pointsToConsume, options);
  }
}

const markMemory = (options: Record<string, unknown>): void => {
  options.fromMemory = true;
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

  const tokenMemory = new MemoryTokenBucket(bucket, `${prefix}:tok`, { onConsume: markMemory });
  // Issue 21, tokens with a rate of their own: one bucket policy for every rate, counted in microseconds of the
  // refill window (the window is the same for every rate, so a token of rate r holds windowMs / (60000 / r)
  // requests); a request of a token of rate r costs 60e6 / r units. Integer costs, as rate-limiter-flexible
  // wants, and one Lua script for every rate.
  const windowMs = bucket.capacity * interval;
  const scaled: TokenBucketPolicy = { capacity: Math.round(windowMs * 1000), refillPerMinute: 60_000_000 };
  const scaledMemory = new MemoryTokenBucket(scaled, `${prefix}:tokr`, { onConsume: markMemory });
  const anonMemory = new AnonymousMemoryLimiter({ points: anon.points, duration: anon.durationSeconds, keyPrefix: `${prefix}:anon` }, markMemory);
  const failedMemory = new AnonymousMemoryLimiter({ points: failed.points, duration: failed.durationSeconds, keyPrefix: `${prefix}:authfail` }, markMemory);

  // ---- backend and state ------------------------------------------------------------------------------
  type State = 'memory-only' | 'connecting' | 'redis' | 'degraded';
  let state: State = 'memory-only';
  let closed = false;
  let tokenLimiter: MemoryTokenBucket | RateLimiterRedis = tokenMemory;
  let scaledLimiter: MemoryTokenBucket | RateLimiterRedis = scaledMemory;
  let anonLimiter: RateLimiterMemory | RateLimiterRedis = anonMemory;
  let failedLimiter: RateLimiterMemory | RateLimiterRedis = failedMemory;
  const clients: Redis[] = [];
  const redisUrl = opts.redisUrl?.trim();
  const target = redisUrl ? describeRedis(redisUrl) : '';

  const setState = (next: 'redis' | 'degraded', reason?: string): void => {
    if (closed || state === next) return;
    state = next;
    if (next === 'redis') log.info('rate limiter: Redis reachable, limits shared across processes', { redis: target });
    else log.warn('rate limiter: Redis unreachable, counting in memory per process', { redis: target, reason });
  };
  const clientsReady = (): boolean => clients.every((c) => c.status === 'ready');

  if (!redisUrl) {
    log.info('rate limiter: REDIS_URL not set, counting in memory per process');
  } else {
    state = 'connecting';
    const main = new Redis(redisUrl, REDIS_OPTIONS);
    const tokenClient = main.duplicate(); // own connection: own `rlflxIncr` script
    const scaledClient = main.duplicate(); // and the per-token rates' script on a third
    clients.push(main, tokenClient, scaledClient);
    for (const c of clients) {
      c.on('ready', () => {
        if (clientsReady()) setState('redis');
      });
      // 'error' must have a listener (ioredis prints unhandled ones); reconnecting is automatic.
      c.on('error', (err: Error) => {
        if (!clientsReady()) setState('degraded', err.message);
      });
      c.on('close', () => setState('degraded', 'connection closed'));
    }
    anonLimiter = new RateLimiterRedis({
      storeClient: main,
      keyPrefix: `${prefix}:anon`,
      points: anon.points,
      duration: anon.durationSeconds,
      rejectIfRedisNotReady: true,
      insuranceLimiter: anonMemory,
    });
    failedLimiter = new RateLimiterRedis({
      storeClient: main,
      keyPrefix: `${prefix}:authfail`,
      points: failed.points,
      duration: failed.durationSeconds,
      rejectIfRedisNotReady: true,
      insuranceLimiter: failedMemory,
    });
    tokenLimiter = new RateLimiterRedis({
      storeClient: tokenClient,
      keyPrefix: `${prefix}:tok`,
      points: bucket.capacity,
      // Not used by the script, but must be >= 1 s or the library bypasses the Lua script.
      duration: tokenWindowSeconds,
      customIncrTtlLuaScript: tokenBucketLua(bucket),
      rejectIfRedisNotReady: true,
      insuranceLimiter: tokenMemory,
    });
    scaledLimiter = new RateLimiterRedis({
      storeClient: scaledClient,
      keyPrefix: `${prefix}:tokr`,
      points: scaled.capacity,
      duration: tokenWindowSeconds,
      customIncrTtlLuaScript: tokenBucketLua(scaled),
      rejectIfRedisNotReady: true,
      insuranceLimiter: scaledMemory,
    });
  }

  /** After each call: a Redis answer proves Redis is back, a memory answer while "redis" proves it is not. */
  const observe = (ctx: CallContext): void => {
    if (state === 'memory-only') return;
    if (ctx.fromMemory) {
      if (state === 'redis') setState('degraded', 'command failed');
    } else if (state === 'degraded' && clientsReady()) {
      setState('redis');
    }
  };

  const run = async (limiter: RateLimiterMemory | RateLimiterRedis, key: string, cost = 1): Promise<{ allowed: boolean; res: RateLimiterRes }> => {
    const ctx: CallContext = {};
    try {
      const res = await limiter.consume(key, cost, ctx);
      observe(ctx);
      return { allowed: true, res };
    } catch (err) {
      observe(ctx);
      if (err instanceof RateLimiterRes) return { allowed: false, res: err };
      throw err;
    }
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
    const { allowed, res } = await run(scaledLimiter, key, cost);
    if (!allowed) return decide('token', capacity, policyHeader, false, 0, res.msBeforeNext);
    // One unit of slack: the units left are floored, a whole number of requests must not lose one to it.
    const remaining = Math.min(capacity, Math.floor((res.remainingPoints + 1) / cost));
    const resetMs = remaining > 0 ? res.msBeforeNext : res.msBeforeNext - (windowMs - perRequestMs);
    return decide('token', capacity, policyHeader, true, remaining, resetMs);
  };

  return {
    async consumeToken(tenantSlug, tokenId, ratePerMinute) {
      if (ratePerMinute && ratePerMinute !== bucket.refillPerMinute) return consumeAtRate(`${tenantSlug}:${tokenId}`, ratePerMinute);
      const { allowed, res } = await run(tokenLimiter, `${tenantSlug}:${tokenId}`);
      if (!allowed) return decide('token', bucket.capacity, tokenPolicyHeader, false, 0, res.msBeforeNext);
      const remaining = res.remainingPoints;
      // msBeforeNext = ms until full; with no whole token left report the ms until the next one instead.
      const resetMs = remaining > 0 ? res.msBeforeNext : res.msBeforeNext - (bucket.capacity - 1) * interval;
      return decide('token', bucket.capacity, tokenPolicyHeader, true, remaining, resetMs);
    },

    async consumeAnonymous(tenantSlug, clientIp) {
      const { allowed, res } = await run(anonLimiter, `${tenantSlug}:${clientIp}`);
      return decide('anonymous', anon.points, anonPolicyHeader, allowed, allowed ? res.remainingPoints : 0, res.msBeforeNext);
    },

    async consumeFailedAuth(tenantSlug, clientIp) {
      const { allowed, res } = await run(failedLimiter, `${tenantSlug}:${clientIp}`);
      return decide('failed-auth', failed.points, failedPolicyHeader, allowed, allowed ? res.remainingPoints : 0, res.msBeforeNext);
    },

    status() {
      if (state === 'memory-only') return { backend: 'memory', degraded: false };
      if (state === 'redis') return { backend: 'redis', degraded: false };
      return { backend: 'memory', degraded: true };
    },

    async close() {
      if (closed) return;
      closed = true;
      await Promise.all(
        clients.map(async (c) => {
          if (c.status === 'ready') {
            try {
              await c.quit();
              return;
            } catch {
              // fall through to disconnect
            }
          }
          c.disconnect();
        }),
      );
    },
  };
}
