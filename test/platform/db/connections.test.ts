import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { connectionLane, withConnectionAffinity } from '../../../src/platform/db/affinity.js';
import { createOrm, executorOf, poolGuardOf, type Orm } from '../../../src/platform/db/orm.js';
import { PoolSaturated } from '../../../src/platform/db/guarded-dialect.js';
import { sql } from '../../../src/platform/db/sql.js';
import { withTimeoutProfile } from '../../../src/platform/db/timeouts.js';
import { runTenantJob } from '../../../src/platform/jobs/queue.js';
import { busyProblem } from '../../../src/platform/http/busy.js';
import { isDatabaseUnavailable } from '../../../src/platform/http/availability.js';
import { createLogger } from '../../../src/platform/logging/logger.js';
import { useHarness } from '../../harness/harness.js';
import { entities } from '../../../src/entities.js';

// Issue 23: the service's connections (platform/db/connections.ts, guarded-dialect.ts): timeouts on every
// connection and per profile, the municipality a job's connections count for, and a saturated pool told apart
// from a database outage.
const direct = inject('directDatabaseUrl');
const settings = (orm: Orm, trx?: unknown) => orm.em.getConnection().execute<{ lock: string; statement: string; idle: string }[]>(
  `select current_setting('lock_timeout') as lock, current_setting('statement_timeout') as statement, current_setting('idle_in_transaction_session_timeout') as idle`,
  [], 'all', trx as never).then((r) => r[0]);

describe('timeouts on every connection', () => {
  it('requests: the session defaults; jobs and migrations: their own in each transaction', async () => {
    const orm = await createOrm(direct, { entities, poolMax: 2, log: createLogger('silent') });
    try {
      expect(await settings(orm)).toEqual({ lock: '3s', statement: '30s', idle: '1min' });
      const conn = orm.em.getConnection();
      expect(await conn.transactional((trx) => settings(orm, trx))).toEqual({ lock: '3s', statement: '30s', idle: '1min' });
      expect(await withTimeoutProfile('job', () => conn.transactional((trx) => settings(orm, trx)))).toEqual({ lock: '30s', statement: '10min', idle: '1min' });
      expect(await withTimeoutProfile('migration', () => conn.transactional((trx) => settings(orm, trx)))).toEqual({ lock: '1min', statement: '0', idle: '1min' });
      // SET LOCAL ends with its transaction: the connection is back at the request defaults.
      expect(await settings(orm)).toEqual({ lock: '3s', statement: '30s', idle: '1min' });
    } finally {
      await orm.close();
    }
  });
});

describe('plans on every connection', () => {
  it('are generic from the first execution (issue 25: no custom planning per connection and municipality)', async () => {
    const orm = await createOrm(direct, { entities, poolMax: 1, log: createLogger('silent') });
    try {
      const mode = await orm.em.getConnection().execute<{ mode: string }[]>(`select current_setting('plan_cache_mode') as mode`);
      expect(mode[0]!.mode).toBe('force_generic_plan');
    } finally {
      await orm.close();
    }
  });
});

describe('the operator CLI\'s pool (profile job)', () => {
  it('has the job timeouts as its session defaults and in its transactions', async () => {
    const orm = await createOrm(direct, { entities, poolMax: 1, log: createLogger('silent'), profile: 'job' });
    try {
      expect(await settings(orm)).toEqual({ lock: '30s', statement: '10min', idle: '1min' });
      expect(await orm.em.getConnection().transactional((trx) => settings(orm, trx))).toEqual({ lock: '30s', statement: '10min', idle: '1min' });
    } finally {
      await orm.close();
    }
  });
});

describe('a tenant job', () => {
  const { h, t } = useHarness();

  it('counts its connections for its municipality and runs its transactions with the job timeouts', async () => {
    let seen: { lane?: string; outside?: unknown; inside?: unknown } = {};
    await runTenantJob(h.orm, createLogger('silent'), async (ctx) => {
      seen = {
        lane: connectionLane(),
        outside: await settings(h.orm),
        inside: await ctx.em.transactional((em) => settings(h.orm, em.getTransactionContext())),
      };
    }, { tenant: t.slug });
    // Outside a transaction: the session defaults, which a pooler (TEST_VIA_PGBOUNCER) does not pass on.
    const pooled = inject('databaseUrl') !== direct;
    expect(seen).toEqual({ lane: t.tenant.schema, outside: pooled ? expect.anything() : expect.objectContaining({ lock: '3s' }), inside: expect.objectContaining({ lock: '30s', statement: '10min' }) });
  });
});

describe('a pool with every connection in use', () => {
  it('answers 503 for the request that found none (not an outage), while the probe connection still asks the database', async () => {
    const orm = await createOrm(direct, { entities, poolMax: 1, log: createLogger('silent'), shares: { tenant: 1 } });
    try {
      let free!: () => void;
      const holding = orm.em.getConnection().transactional(() => new Promise<void>((r) => (free = r)));
      await new Promise((r) => setTimeout(r, 100));
      const err = await withConnectionAffinity('t_other', () => sql`select 1`.execute(executorOf(orm))).catch((e) => e);
      expect(err).toBeInstanceOf(PoolSaturated);
      expect(isDatabaseUnavailable(err)).toBe(false);
      expect(busyProblem(err)).toMatchObject({ body: { status: 503 }, headers: { 'Retry-After': '2' } });
      expect(await poolGuardOf(orm)!.probeQuery<{ one: number }>('select 1 as one')).toEqual([{ one: 1 }]);
      free();
      await holding;
    } finally {
      await orm.close();
    }
  });
});
