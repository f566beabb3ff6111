import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

// An exact token bucket, written as GCRA (generic cell rate algorithm): instead of a token count and a
// timestamp, a bucket is ONE number, `fullAt`, the moment at which it will be full again.
//
//   interval  = 60000 / refillPerMinute   ms per token (100/min -> 600 ms)
//   window    = capacity * interval       ms to refill an empty bucket (300 x 600 ms = 180 s)
//   tokens(now) = capacity - max(0, fullAt - now) / interval   (continuous, fractional)
//
// Taking `cost` tokens moves fullAt to max(fullAt, now) + cost * interval; that is allowed while the bucket
// does not go below zero, i.e. while fullAt - now <= window. A refused request changes nothing (a token
// bucket cannot go negative, so hammering an empty bucket does not push recovery further away).
//
// The same arithmetic runs in Redis (Lua script below, clock = Redis TIME so every process shares one
// clock) and in memory (fallback and REDIS_URL-less mode). Both hand back a rate-limiter-flexible
// RateLimiterRes:
//   allowed: remainingPoints = floor(tokens left), consumedPoints = capacity - remainingPoints,
//            msBeforeNext = ms until the bucket is full again
//   refused: rejected with remainingPoints = 0, consumedPoints = capacity + cost,
//            msBeforeNext = ms until `cost` tokens are available

export type TokenBucketPolicy = { capacity: number; refillPerMinute: number };

/** Tolerance for float rounding (ms); 1 µs, far below anything observable. */
const EPSILON_MS = 0.001;

export type BucketStep =
  | { allowed: true; fullAt: number; remaining: number; msToFull: number }
  | { allowed: false; msToAvailable: number };

export function intervalMs(policy: TokenBucketPolicy): number {
  return 60000 / policy.refillPerMinute;
}

/** Pure GCRA step; `fullAt` undefined means a full (never used or expired) bucket. */
export function stepBucket(policy: TokenBucketPolicy, fullAt: number | undefined, now: number, cost = 1): BucketStep {
  const interval = intervalMs(policy);
  const window = policy.capacity * interval;
  const base = fullAt !== undefined && fullAt > now ? fullAt : now;
  const newFullAt = base + cost * interval;
  const ahead = newFullAt - now;
  if (ahead > window + EPSILON_MS) {
    return { allowed: false, msToAvailable: Math.ceil(ahead - window) };
  }
  const remaining = Math.floor((window - ahead) / interval + 1e-9);
  return { allowed: true, fullAt: newFullAt, remaining, msToFull: Math.ceil(ahead) };
}

/**
 * Lua for RateLimiterRedis' `customIncrTtlLuaScript`. rate-limiter-flexible calls it as
 * KEYS[1] = key, ARGV = [pointsToConsume, secDuration, points, duration] and expects {consumed, ttlMs}.
 * Only ARGV[1] is used; capacity and interval are baked into the script text (each policy gets its own
 * script, and the script must therefore live on its own ioredis connection: the library registers every
 * limiter's script under the same command name `rlflxIncr`).
 */
export function tokenBucketLua(policy: TokenBucketPolicy): string {
  const interval = intervalMs(policy);
  return `
local cost = tonumber(ARGV[1])
local capacity = ${policy.capacity}
local interval = ${String(interval)}
local window = capacity * interval
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local stored = tonumber(redis.call('GET', KEYS[1]))
local base = now
if stored and stored > now then base = stored end
local newFullAt = base + cost * interval
local ahead = newFullAt - now
if ahead > window + ${EPSILON_MS} then
  return {capacity + cost, math.ceil(ahead - window)}
end
redis.call('SET', KEYS[1], string.format('%.3f', newFullAt), 'PX', math.ceil(ahead) + 1000)
local remaining = math.floor((window - ahead) / interval + 1e-9)
return {capacity - remaining, math.ceil(ahead)}
`;
}

/**
 * In-memory twin of the Lua bucket, usable as rate-limiter-flexible `insuranceLimiter` (it has to be a
 * RateLimiterAbstract, and RateLimiterMemory is the only exported one). Only `consume` is implemented;
 * the inherited fixed-window storage of RateLimiterMemory is unused.
 * `onConsume(options)` is called on every consume, so the owner can tell it served a request.
 */
export class MemoryTokenBucket extends RateLimiterMemory {
  private readonly buckets = new Map<string, number>();
  private lastSweep: number;

  constructor(
    private readonly policy: TokenBucketPolicy,
    keyPrefix: string,
    private readonly hooks: { now?: () => number; onConsume?: (options: Record<string, unknown>) => void } = {},
  ) {
    super({ points: policy.capacity, duration: Math.max(1, Math.ceil(policy.capacity * intervalMs(policy) / 1000)), keyPrefix });
    this.lastSweep = this.now();
  }

  private now(): number {
    return this.hooks.now ? this.hooks.now() : performance.now();
  }

  override consume(key: string | number, pointsToConsume = 1, options: Record<string, unknown> = {}): Promise<RateLimiterRes> {
    this.hooks.onConsume?.(options);
    const now = this.now();
    this.sweep(now);
    const rlKey = this.getKey(String(key));
    const step = stepBucket(this.policy, this.buckets.get(rlKey), now, pointsToConsume);
    if (!step.allowed) {
      return Promise.reject(new RateLimiterRes(0, step.msToAvailable, this.policy.capacity + pointsToConsume, false));
    }
    this.buckets.set(rlKey, step.fullAt);
    return Promise.resolve(new RateLimiterRes(step.remaining, step.msToFull, this.policy.capacity - step.remaining, false));
  }

  /** Forget buckets that are full again (equivalent to absent), at most once a minute. */
  private sweep(now: number): void {
    if (now - this.lastSweep < 60000) return;
    this.lastSweep = now;
    for (const [k, fullAt] of this.buckets) if (fullAt <= now) this.buckets.delete(k);
  }
}
