export {
  createRateLimiter,
  DEFAULT_ANONYMOUS,
  DEFAULT_FAILED_AUTH,
  DEFAULT_TOKEN_BUCKET,
  type RateLimitDecision,
  type RateLimiter,
  type RateLimiterOptions,
  type RateLimitLog,
} from './rate-limiter.js';
export { MemoryTokenBucket, RedisTokenBucket, stepBucket, type BucketTake, type TokenBucketPolicy } from './token-bucket.js';
