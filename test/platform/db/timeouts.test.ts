import { describe, expect, it } from 'vitest';
import { currentTimeoutProfile, dbTimeouts, lockConflictOf, setLocalSql, startupOptions, withTimeoutProfile } from '../../../src/platform/db/timeouts.js';

// Issue 23: the timeouts of every connection (timeouts.ts): settings, how they reach PostgreSQL, and which
// errors are lock conflicts.
describe('database timeouts', () => {
  it('has short request defaults, longer ones for jobs and migrations, each settable', () => {
    expect(dbTimeouts({})).toEqual({
      request: { lockMs: 3_000, statementMs: 30_000 },
      job: { lockMs: 30_000, statementMs: 600_000 },
      migration: { lockMs: 60_000, statementMs: 0 },
      idleInTransactionMs: 60_000,
    });
    const t = dbTimeouts({ PG_LOCK_TIMEOUT_MS: '1500', PG_STATEMENT_TIMEOUT_MS: '0', PG_MIGRATION_STATEMENT_TIMEOUT_MS: '900000' });
    expect(t.request).toEqual({ lockMs: 1_500, statementMs: 0 });
    expect(() => dbTimeouts({ PG_JOB_LOCK_TIMEOUT_MS: 'x' })).toThrow(/^PG_JOB_LOCK_TIMEOUT_MS must be a whole number/);
    expect(t.job.lockMs).toBe(30_000);
    expect(t.migration.statementMs).toBe(900_000);
  });

  it('are sent as startup parameters and as SET LOCAL with a transaction\'s BEGIN', () => {
    expect(startupOptions({ lockMs: 3000, statementMs: 30000 }, 60000))
      .toBe('-c lock_timeout=3000 -c statement_timeout=30000 -c idle_in_transaction_session_timeout=60000');
    expect(setLocalSql({ lockMs: 30000, statementMs: 0 })).toBe('set local lock_timeout = 30000; set local statement_timeout = 0');
  });

  it('knows the profile of the code it runs in', async () => {
    expect(currentTimeoutProfile()).toBe('request');
    await withTimeoutProfile('job', async () => {
      await new Promise((r) => setTimeout(r, 1));
      expect(currentTimeoutProfile()).toBe('job');
    });
    expect(currentTimeoutProfile()).toBe('request');
  });

  it('tells lock conflicts by SQLSTATE, also wrapped as a cause', () => {
    expect(lockConflictOf({ code: '55P03' })).toBe('lock_timeout');
    expect(lockConflictOf({ code: '57014', message: 'canceling statement due to statement timeout' })).toBe('statement_timeout');
    expect(lockConflictOf({ code: '57014', message: 'canceling statement due to user request' })).toBeNull();
    expect(lockConflictOf({ message: 'x', cause: { code: '40P01' } })).toBe('deadlock');
    expect(lockConflictOf({ code: '40001' })).toBe('serialization');
    expect(lockConflictOf({ code: '23505' })).toBeNull();
    expect(lockConflictOf(null)).toBeNull();
  });
});
