// When a webhook delivery that failed is tried again (issue 14): at least once, in order, so the subscription's
// next event waits while its head event is retried. Exponential backoff with jitter: the n-th failed attempt in
// a row waits base·2^(n-1), capped, ±20 % at random (a receiver coming back is not hit by every subscription in
// the same second), and never past the end of the window: the last attempt falls on the moment the streak has
// lasted `disableAfterMs` (24 h). A failure at or after that moment disables the subscription (the admin is
// told by e-mail); a 2xx ends the streak.

export type WebhookRetryPolicy = { baseMs: number; capMs: number; disableAfterMs: number };

export const DEFAULT_WEBHOOK_RETRY: WebhookRetryPolicy = { baseMs: 5_000, capMs: 3_600_000, disableAfterMs: 24 * 3_600_000 };

export type FailedDelivery = {
  /** Failed attempts in a row, this one included (1 for the first failure). */
  attempts: number;
  /** When the streak began (the first failure after the last 2xx), epoch ms. */
  failingSinceMs: number;
  nowMs: number;
};

/** What follows a failed attempt: the delay before the next one, or disabling the subscription. */
export function afterFailedDelivery(f: FailedDelivery, policy: WebhookRetryPolicy = DEFAULT_WEBHOOK_RETRY, random: () => number = Math.random): { disable: true } | { disable: false; delayMs: number } {
  const windowLeft = f.failingSinceMs + policy.disableAfterMs - f.nowMs;
  if (windowLeft <= 0) return { disable: true };
  const exponent = Math.min(30, Math.max(0, f.attempts - 1));
  const plain = Math.min(policy.capMs, policy.baseMs * 2 ** exponent);
  const jittered = Math.max(1, Math.round(plain * (0.8 + 0.4 * random())));
  return { disable: false, delayMs: Math.min(jittered, windowLeft) };
}

/** How many attempts a receiver that never answers 2xx gets before its subscription is disabled (no jitter). */
export function attemptsBeforeDisable(policy: WebhookRetryPolicy = DEFAULT_WEBHOOK_RETRY): number {
  let elapsed = 0;
  let attempts = 1;
  for (;;) {
    const next = afterFailedDelivery({ attempts, failingSinceMs: 0, nowMs: elapsed }, policy, () => 0.5);
    if (next.disable) return attempts;
    elapsed += next.delayMs;
    attempts++;
  }
}
