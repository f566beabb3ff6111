import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import pg from 'pg';
import { connectionAffinityWanted, onItsConnection, useConnectionAffinity, withConnectionAffinity } from '../../../src/platform/db/affinity.js';
import { usePreparedStatements } from '../../../src/platform/db/prepared.js';
import { createOrm, executorOf, poolSize, type Orm } from '../../../src/platform/db/orm.js';
import { sql } from '../../../src/platform/db/sql.js';
import { entities } from '../../../src/entities.js';

// Connection affinity (platform/db/affinity.ts): a schema's requests prefer one connection of the pool, idle or
// busy, and a request without a schema, or one that waited too long, is served as pg-pool would.
const direct = inject('directDatabaseUrl');

const pidOf = async (pool: pg.Pool, key?: string, sleepMs = 0): Promise<number> => {
  const run = async () => {
    const c = await pool.connect();
    try {
      const r = await c.query<{ pid: number }>('select pg_backend_pid() as pid, pg_sleep($1::float8 / 1000)', [sleepMs]);
      return r.rows[0]!.pid;
    } finally {
      c.release();
    }
  };
  return key === undefined ? run() : withConnectionAffinity(key, run);
};

/** Opens all `max` connections of the pool at once. */
const fill = (pool: pg.Pool, max: number) => Promise.all(Array.from({ length: max }, () => pidOf(pool, undefined, 50)));

describe('useConnectionAffinity on a pg pool', () => {
  let pool: pg.Pool;
  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: direct, max: 4 });
    useConnectionAffinity(pool);
    await fill(pool, 4);
  });
  afterAll(() => pool.end());

  it('serves one schema from one connection while the pool is idle, and other schemas from others', async () => {
    const keys = Array.from({ length: 12 }, (_, i) => `t_m${String(i).padStart(4, '0')}`);
    const seen = new Map<string, Set<number>>();
    for (let round = 0; round < 5; round++) {
      for (const key of keys) {
        const pid = await pidOf(pool, key);
        seen.set(key, (seen.get(key) ?? new Set()).add(pid));
      }
    }
    for (const key of keys) expect(seen.get(key)!.size, key).toBe(1);
    expect(new Set([...seen.values()].map((s) => [...s][0])).size).toBeGreaterThan(1);
  });

  it('without a schema takes the connection used last, as pg-pool does', async () => {
    const a = await pidOf(pool);
    const b = await pidOf(pool);
    expect(b).toBe(a);
  });

  it('gives a released connection to a waiting request of its schema before older waiters of other schemas', async () => {
    // Which schemas prefer which connection: learnt while idle.
    const keys = Array.from({ length: 40 }, (_, i) => `t_w${i}`);
    const home = new Map<string, number>();
    for (const key of keys) home.set(key, await pidOf(pool, key));
    const byPid = new Map<number, string[]>();
    for (const [key, pid] of home) byPid.set(pid, [...(byPid.get(pid) ?? []), key]);
    expect(byPid.size).toBe(4);
    // All four connections busy; then requests of other connections' schemas queue up first, and one of
    // connection X's schema last. When X is free again it goes to that last request.
    const [x, others] = [[...byPid.keys()][0]!, [...byPid.keys()].slice(1)];
    const busy = Array.from({ length: 4 }, (_, i) => pidOf(pool, byPid.get([...byPid.keys()][i]!)![0], 300));
    await new Promise((r) => setTimeout(r, 30));
    const waiting = others.map((pid) => pidOf(pool, byPid.get(pid)![1], 200));
    const mine = pidOf(pool, byPid.get(x)![1]);
    const [served] = await Promise.all([mine, ...busy, ...waiting]);
    expect(served).toBe(x);
  });

  it('takes another connection when its own stays busy and no request of that connection\'s schemas waits', async () => {
    const key = 't_patient';
    const homePid = await pidOf(pool, key);
    // Its own connection stays busy for a long time; the others free up after 100 ms.
    const others = Array.from({ length: 3 }, (_, i) => pidOf(pool, undefined, 100 + i));
    const own = pidOf(pool, key, 1000);
    await new Promise((r) => setTimeout(r, 20));
    const started = performance.now();
    const pid = await pidOf(pool, key);
    expect(performance.now() - started).toBeLessThan(800);
    expect(pid).not.toBe(homePid);
    await Promise.all([own, ...others]);
  });
});

describe('a request passed over again and again', () => {
  it('is served after at most 20 others went first', async () => {
    const pool = new pg.Pool({ connectionString: direct, max: 2 });
    useConnectionAffinity(pool);
    try {
      await fill(pool, 2);
      const home = new Map<number, string[]>();
      for (let i = 0; home.size < 2 || [...home.values()].some((k) => k.length < 2); i++) {
        const key = `t_s${i}`;
        const pid = await pidOf(pool, key);
        home.set(pid, [...(home.get(pid) ?? []), key]);
      }
      const [[a, aKeys], [b, bKeys]] = [...home.entries()];
      // a's connection busy for 2 s, b's for 50 ms; then one request of a's schema waits first, and 30 of b's
      // schema behind it.
      const hold = pidOf(pool, aKeys![0], 2000);
      const shortHold = pidOf(pool, bKeys![0], 50);
      await new Promise((r) => setTimeout(r, 20));
      const done: string[] = [];
      const head = pidOf(pool, aKeys![1]).then((pid) => { done.push('head'); return pid; });
      const behind = Array.from({ length: 30 }, () => pidOf(pool, bKeys![1], 5).then(() => done.push('b')));
      const pid = await head;
      expect(pid).toBe(b);
      expect(done.indexOf('head')).toBeLessThanOrEqual(20);
      expect(done.indexOf('head')).toBeGreaterThanOrEqual(15);
      await Promise.all([hold, shortHold, ...behind]);
      expect(a).not.toBe(b);
    } finally {
      await pool.end();
    }
  });
});

describe('the service pool (createOrm)', () => {
  let orm: Orm;
  beforeAll(async () => {
    orm = await createOrm(direct, { entities, poolMax: 4, connectionAffinity: true });
  });
  afterAll(() => orm.close());

  it('runs a schema\'s statements on its connection', async () => {
    const db = executorOf(orm);
    const pid = (key: string) => withConnectionAffinity(key, async () => (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid);
    await Promise.all(Array.from({ length: 4 }, () => sql`select pg_sleep(0.05)`.execute(db)));
    const seen = new Map<string, Set<number>>();
    for (let round = 0; round < 4; round++) {
      for (const key of ['t_a', 't_b', 't_c', 't_d', 't_e', 't_f']) seen.set(key, (seen.get(key) ?? new Set()).add(await pid(key)));
    }
    for (const [key, pids] of seen) expect(pids.size, key).toBe(1);
  });
});

describe('named statements and affinity (prepared.ts)', () => {
  it('names a statement on its schema\'s own connection at once, on another from its second execution', async () => {
    const pool = new pg.Pool({ connectionString: direct, max: 2 });
    useConnectionAffinity(pool);
    usePreparedStatements(pool, { enabled: true });
    try {
      // One connection only (slot 0): find a schema whose lane it is and one whose lane it is not.
      const client = await pool.connect();
      const keys = Array.from({ length: 20 }, (_, i) => `t_named_${i}`);
      const home = keys.find((k) => withConnectionAffinity(k, () => onItsConnection(client)))!;
      const away = keys.find((k) => !withConnectionAffinity(k, () => onItsConnection(client)))!;
      client.release();
      const names = async () => (await pool.query<{ statement: string }>(`select statement from pg_prepared_statements where name like 'hp\\_%'`)).rows.map((r) => r.statement);
      const marked = (key: string) => `/*hp:prepared*/select ${JSON.stringify(key).replace(/"/g, "'")}::text as k, $1::int as n`;
      // As kysely sends it: a checked-out client's query(text, values), no callback.
      const run = (key: string, n: number) => withConnectionAffinity(key, async () => {
        const c = await pool.connect();
        try { return await c.query(marked(key), [n]); } finally { c.release(); }
      });
      await run(home, 1);
      expect(await names()).toEqual([marked(home)]);
      await run(away, 1);
      expect(await names()).toHaveLength(1);
      const again = await run(away, 2);
      expect(again.rows).toEqual([{ k: away, n: 2 }]);
      expect((await names()).sort()).toEqual([marked(home), marked(away)].sort());
    } finally {
      await pool.end();
    }
  });
});

describe('PG_CONNECTION_AFFINITY', () => {
  it('is on unless switched off', () => {
    expect(connectionAffinityWanted({})).toBe(true);
    expect(connectionAffinityWanted({ PG_CONNECTION_AFFINITY: 'on' })).toBe(true);
    for (const off of ['off', 'OFF', '0', 'false', 'no']) expect(connectionAffinityWanted({ PG_CONNECTION_AFFINITY: off })).toBe(false);
  });

  it('off: the service pool serves every schema from the connection pg-pool gives (the one used last)', async () => {
    const before = process.env.PG_CONNECTION_AFFINITY;
    process.env.PG_CONNECTION_AFFINITY = 'off';
    const orm = await createOrm(direct, { entities, poolMax: 4 });
    try {
      const db = executorOf(orm);
      await Promise.all(Array.from({ length: 4 }, () => sql`select pg_sleep(0.05)`.execute(db)));
      const pids = new Set<number>();
      for (const key of ['t_a', 't_b', 't_c', 't_d', 't_e', 't_f']) {
        pids.add(await withConnectionAffinity(key, async () => (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid));
      }
      expect(pids.size).toBe(1);
    } finally {
      await orm.close();
      if (before === undefined) delete process.env.PG_CONNECTION_AFFINITY;
      else process.env.PG_CONNECTION_AFFINITY = before;
    }
  });
});

describe('PG_POOL_SIZE', () => {
  it('sizes the pool: 10 unless set; a value that is no positive whole number is refused naming the setting', () => {
    expect(poolSize({})).toBe(10);
    expect(poolSize({ PG_POOL_SIZE: '' })).toBe(10);
    expect(poolSize({ PG_POOL_SIZE: '4' })).toBe(4);
    for (const bad of ['0', '-2', '2.5', 'many']) expect(() => poolSize({ PG_POOL_SIZE: bad }), bad).toThrow(/^PG_POOL_SIZE must be a whole number/);
  });
});
