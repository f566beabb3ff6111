import { describe, expect, it } from 'vitest';
import { afterFailure, DEFAULT_RETRY, retryWindowMs } from '../../src/domain/mail-retry.js';

describe('mail retry (D9)', () => {
  const policy = { baseMs: 1000, capMs: 8000, maxAttempts: 6 };

  it('doubles the delay after each failed attempt, up to the cap', () => {
    const mid = () => 0.5; // jitter factor exactly 1
    expect([1, 2, 3, 4, 5].map((n) => afterFailure(n, policy, mid))).toEqual([
      { giveUp: false, delayMs: 1000 }, { giveUp: false, delayMs: 2000 }, { giveUp: false, delayMs: 4000 },
      { giveUp: false, delayMs: 8000 }, { giveUp: false, delayMs: 8000 },
    ]);
  });

  it('spreads retries by ±20 % so a recovering server is not hit all at once', () => {
    expect(afterFailure(1, policy, () => 0)).toEqual({ giveUp: false, delayMs: 800 });
    expect(afterFailure(1, policy, () => 0.999999)).toEqual({ giveUp: false, delayMs: 1200 });
  });

  it('gives up after the last attempt', () => {
    expect(afterFailure(6, policy)).toEqual({ giveUp: true });
    expect(afterFailure(7, policy)).toEqual({ giveUp: true });
  });

  it('keeps trying for about a day with the defaults, so an hour of SMTP outage loses nothing', () => {
    const hours = retryWindowMs(DEFAULT_RETRY) / 3_600_000;
    expect(hours).toBeGreaterThan(20);
    expect(hours).toBeLessThan(30);
  });
});
