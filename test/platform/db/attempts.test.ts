import { describe, expect, it } from 'vitest';
import { claimOfferShare, currentAttempt, noteWrite, OfferBusy, runAttempts, withOfferShare, type RetryReason } from '../../../src/platform/db/attempts.js';
import { KeyedSemaphore, ShareFull } from '../../../src/platform/db/bulkhead.js';

// Issue 23: use cases run as attempts (attempts.ts): a deadlock or serialization failure runs again at most
// twice, only while nothing was committed; a writer whose offer share is full waits without its connection
// and runs again holding the place.
const deadlock = () => Object.assign(new Error('deadlock detected'), { code: '40P01' });

describe('runAttempts', () => {
  it('runs a use case again after a deadlock, at most twice, then lets the error go', async () => {
    const reasons: RetryReason[] = [];
    let runs = 0;
    const ok = await runAttempts(async () => {
      if (++runs < 3) throw deadlock();
      return 'done';
    }, { offers: null, onRetry: (r) => reasons.push(r), pause: () => 0 });
    expect(ok).toBe('done');
    expect(reasons).toEqual(['deadlock', 'deadlock']);
    runs = 0;
    await expect(runAttempts(async () => { runs++; throw deadlock(); }, { offers: null, pause: () => 0 })).rejects.toMatchObject({ code: '40P01' });
    expect(runs).toBe(3);
  });

  it('never runs again what already wrote something', async () => {
    let runs = 0;
    await expect(runAttempts(async () => {
      runs++;
      noteWrite();
      throw deadlock();
    }, { offers: null, pause: () => 0 })).rejects.toMatchObject({ code: '40P01' });
    expect(runs).toBe(1);
  });

  it('reads a failure from a resolved value (tRPC\'s { ok: false }) and leaves other errors alone', async () => {
    let runs = 0;
    const r = await runAttempts(async () => (++runs === 1 ? { ok: false, error: { cause: { code: '40001' } } } : { ok: true }), {
      offers: null, failureOf: (v) => (v.ok ? null : v.error?.cause), pause: () => 0,
    });
    expect(r).toEqual({ ok: true });
    expect(runs).toBe(2);
    runs = 0;
    const other = await runAttempts(async () => { runs++; return { ok: false, error: { cause: { code: '23505' } } }; }, { offers: null, failureOf: (v) => (v.ok ? null : v.error?.cause) });
    expect(other.ok).toBe(false);
    expect(runs).toBe(1);
  });

  it('an offer\'s full share: gives up the transaction, waits for a place, runs again holding it, releases it at the end', async () => {
    const offers = new KeyedSemaphore('offer', 1, 2_000);
    const other = offers.tryAcquire('t_a:o1')!;
    const reasons: RetryReason[] = [];
    let runs = 0;
    setTimeout(other, 50);
    const result = await runAttempts(async () => {
      runs++;
      claimOfferShare('t_a', 'o1');
      // Held now, for the rest of the use case: claiming again is free.
      claimOfferShare('t_a', 'o1');
      expect(currentAttempt()!.held.has('t_a:o1')).toBe(true);
      return 'locked';
    }, { offers, onRetry: (r) => reasons.push(r) });
    expect(result).toBe('locked');
    expect(runs).toBe(2);
    expect(reasons).toEqual(['offer_share']);
    expect(offers.stats()).toEqual([]);
  });

  it('an offer share that stays full ends in ShareFull (503), and outside any use case nothing is counted', async () => {
    const offers = new KeyedSemaphore('offer', 1, 30);
    const held = offers.tryAcquire('t_a:o1')!;
    await expect(runAttempts(async () => claimOfferShare('t_a', 'o1'), { offers })).rejects.toBeInstanceOf(ShareFull);
    await expect(runAttempts(async () => withOfferShare('t_a', 'o1', async () => 1), { offers })).rejects.toBeInstanceOf(ShareFull);
    held();
    expect(() => claimOfferShare('t_a', 'o1')).not.toThrow();
    await expect(withOfferShare('t_a', 'o1', async () => 2)).resolves.toBe(2);
    expect(new OfferBusy('k').key).toBe('k');
  });
});
