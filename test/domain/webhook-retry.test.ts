import { describe, expect, it } from 'vitest';
import { afterFailedDelivery, attemptsBeforeDisable, DEFAULT_WEBHOOK_RETRY } from '../../src/domain/webhook-retry.js';

describe('webhook retry (issue 14)', () => {
  const policy = { baseMs: 1000, capMs: 8000, disableAfterMs: 60_000 };
  const mid = () => 0.5; // jitter factor exactly 1

  it('doubles the delay after each failed attempt in a row, up to the cap', () => {
    expect([1, 2, 3, 4, 5, 6].map((attempts) => afterFailedDelivery({ attempts, failingSinceMs: 0, nowMs: 0 }, policy, mid))).toEqual([
      { disable: false, delayMs: 1000 }, { disable: false, delayMs: 2000 }, { disable: false, delayMs: 4000 },
      { disable: false, delayMs: 8000 }, { disable: false, delayMs: 8000 }, { disable: false, delayMs: 8000 },
    ]);
  });

  it('spreads retries by ±20 %, so a receiver coming back is not hit by every subscription at once', () => {
    expect(afterFailedDelivery({ attempts: 1, failingSinceMs: 0, nowMs: 0 }, policy, () => 0)).toEqual({ disable: false, delayMs: 800 });
    expect(afterFailedDelivery({ attempts: 1, failingSinceMs: 0, nowMs: 0 }, policy, () => 0.999999)).toEqual({ disable: false, delayMs: 1200 });
  });

  it('never schedules past the end of the window: the last attempt falls on its end', () => {
    expect(afterFailedDelivery({ attempts: 9, failingSinceMs: 0, nowMs: 57_000 }, policy, mid)).toEqual({ disable: false, delayMs: 3000 });
  });

  it('disables once the streak has lasted the whole window, not before', () => {
    expect(afterFailedDelivery({ attempts: 12, failingSinceMs: 0, nowMs: 59_999 }, policy, mid)).toEqual({ disable: false, delayMs: 1 });
    expect(afterFailedDelivery({ attempts: 12, failingSinceMs: 0, nowMs: 60_000 }, policy, mid)).toEqual({ disable: true });
    expect(afterFailedDelivery({ attempts: 1, failingSinceMs: 0, nowMs: 90_000 }, policy, mid)).toEqual({ disable: true });
  });

  it('with the defaults: 5 s first, an hour at most, disabled after 24 hours (about 30 attempts)', () => {
    expect(afterFailedDelivery({ attempts: 1, failingSinceMs: 0, nowMs: 0 }, DEFAULT_WEBHOOK_RETRY, mid)).toEqual({ disable: false, delayMs: 5000 });
    expect(afterFailedDelivery({ attempts: 20, failingSinceMs: 0, nowMs: 0 }, DEFAULT_WEBHOOK_RETRY, mid)).toEqual({ disable: false, delayMs: 3_600_000 });
    const hour = 3_600_000;
    expect(afterFailedDelivery({ attempts: 30, failingSinceMs: 0, nowMs: 24 * hour }, DEFAULT_WEBHOOK_RETRY, mid)).toEqual({ disable: true });
    const n = attemptsBeforeDisable(DEFAULT_WEBHOOK_RETRY);
    expect(n).toBeGreaterThan(25);
    expect(n).toBeLessThan(40);
  });
});
