import type { Redis, Result } from 'ioredis';

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
// The same arithmetic runs in Redis (a Lua script defined on the shared ioredis connection with ioredis's
// public `defineCommand`; clock = Redis TIME so every process shares one clock) and in memory (fallback and
// REDIS_URL-less mode). Issue 26: a class of our own, not a subclass of rate-limiter-flexible's limiters
// (it has no token bucket), so no second Redis connection and no unused storage. Both answer a BucketTake:
//   allowed: remaining = floor(tokens left), msToFull = ms until the bucket is full again
//   refused: msToAvailable = ms until `cost` tokens are available

export type TokenBucketPolicy = { capacity: number; refillPerMinute: number };

/** Tolerance for float rounding (ms); 1 µs, far below anything observable. */
const EPSILON_MS = 0.001;

export type BucketTake = { allowed: true; remaining: number; msToFull: number } | { allowed: false; msToAvailable: number };
export type BucketStep = (BucketTake & { allowed: true; fullAt: number }) | (BucketTake & { allowed: false });

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
 * The step in Lua: KEYS[1] = the bucket's key, ARGV = [cost, capacity, interval in ms]. One script for every
 * policy (the policy travels in ARGV), so any number of buckets share one connection and one command.
 * Answers {1, msToFull, remaining} or {0, msToAvailable, 0}.
 */
export const TOKEN_BUCKET_LUA = `
local cost = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local interval = tonumber(ARGV[3])
local window = capacity * interval
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local stored = tonumber(redis.call('GET', KEYS[1]))
local base = now
if stored and stored > now then base = stored end
local newFullAt = base + cost * interval
local ahead = newFullAt - now
if ahead > window + ${EPSILON_MS} then
  return {0, math.ceil(ahead - window), 0}
end
redis.call('SET', KEYS[1], string.format('%.3f', newFullAt), 'PX', math.ceil(ahead) + 1000)
return {1, math.ceil(ahead), math.floor((window - ahead) / interval + 1e-9)}
`;

/** The command's name on the connection (rate-limiter-flexible's own is `rlflxIncr`). */
const COMMAND = 'hpTokenBucket';

// ioredis's documented way to type a command added with defineCommand.
declare module 'ioredis' {
  interface RedisCommander<Context> {
    hpTokenBucket(key: string, cost: number, capacity: number, intervalMs: string): Result<[number, number, number], Context>;
  }
}

/** The bucket in Redis, shared by every process. Key `<keyPrefix>:<key>`; it expires once the bucket is full. */
export class RedisTokenBucket {
  private readonly interval: string;

  constructor(private readonly client: Redis, private readonly policy: TokenBucketPolicy, private readonly keyPrefix: string) {
    // Defining the same script under the same name again (a second bucket on this connection) is harmless.
    client.defineCommand(COMMAND, { numberOfKeys: 1, lua: TOKEN_BUCKET_LUA });
    this.interval = String(intervalMs(policy));
  }

  async take(key: string, cost = 1): Promise<BucketTake> {
    const [ok, ms, remaining] = await this.client.hpTokenBucket(`${this.keyPrefix}:${key}`, cost, this.policy.capacity, this.interval);
    return ok === 1 ? { allowed: true, remaining, msToFull: ms } : { allowed: false, msToAvailable: ms };
  }
}

/** The same bucket in this process's memory (REDIS_URL unset, or Redis unreachable). */
export class MemoryTokenBucket {
  private readonly buckets = new Map<string, number>();
  private lastSweep: number;

  constructor(private readonly policy: TokenBucketPolicy, private readonly now: () => number = () => performance.now()) {
    this.lastSweep = this.now();
  }

  take(key: string, cost = 1): BucketTake {
    const now = this.now();
    this.sweep(now);
    const step = stepBucket(this.policy, this.buckets.get(key), now, cost);
    if (!step.allowed) return step;
    this.buckets.set(key, step.fullAt);
    return { allowed: true, remaining: step.remaining, msToFull: step.msToFull };
  }

  /** Forget buckets that are full again (equivalent to absent), at most once a minute. */
  private sweep(now: number): void {
    if (now - this.lastSweep < 60000) return;
    this.lastSweep = now;
    for (const [k, fullAt] of this.buckets) if (fullAt <= now) this.buckets.delete(k);
  }
}
