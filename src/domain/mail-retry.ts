// When a mail that could not be sent is tried again (D9: retried on failure, never lost silently).
// Exponential backoff with jitter: the n-th failed attempt waits base·2^(n-1), capped, ±20 % at random so a
// recovering SMTP server is not hit by every waiting mail in the same second. With the defaults (10 s base,
// 1 h cap, 30 attempts) a mail keeps being tried for about a day before it is given up and shown to the
// operator (`cli mail list --failed`), so an SMTP outage of an hour, or a night, loses nothing.

export type RetryPolicy = { baseMs: number; capMs: number; maxAttempts: number };

export const DEFAULT_RETRY: RetryPolicy = { baseMs: 10_000, capMs: 3_600_000, maxAttempts: 30 };

/** What follows a failed attempt (`attempts` counts it): the delay before the next one, or give up. */
export function afterFailure(attempts: number, policy: RetryPolicy, random: () => number = Math.random): { giveUp: true } | { giveUp: false; delayMs: number } {
  if (attempts >= policy.maxAttempts) return { giveUp: true };
  const exponent = Math.min(30, Math.max(0, attempts - 1));
  const plain = Math.min(policy.capMs, policy.baseMs * 2 ** exponent);
  const jitter = 0.8 + 0.4 * random();
  return { giveUp: false, delayMs: Math.max(1, Math.round(plain * jitter)) };
}

/** The whole time a mail is retried before it is given up, without jitter (for docs and tests). */
export function retryWindowMs(policy: RetryPolicy): number {
  let total = 0;
  for (let n = 1; n < policy.maxAttempts; n++) total += Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(30, n - 1));
  return total;
}
