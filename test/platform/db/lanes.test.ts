import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { connectionAffinityWanted, withConnectionAffinity } from '../../../src/platform/db/affinity.js';
import { LanePools, SharedPool, type ConnectionSource } from '../../../src/platform/db/lanes.js';
import { createOrm, executorOf, poolSize, type Orm } from '../../../src/platform/db/orm.js';
import { sql } from '../../../src/platform/db/sql.js';
import { entities } from '../../../src/entities.js';

// Connection affinity (platform/db/lanes.ts, one pg.Pool of one connection per lane): a schema's requests prefer
// one connection, idle or busy, and a request without a schema, or one that waited too long, is served as
// pg-pool would.
const direct = inject('directDatabaseUrl');

const lanes = (size: number, connectTimeoutMs = 5_000) => new LanePools({ config: { connectionString: direct }, size, connectTimeoutMs });

const pidOf = async (source: ConnectionSource, key?: string, sleepMs = 0): Promise<number> => {
  const lease = await source.acquire(key);
  try {
    const r = await lease.client.query<{ pid: number }>('select pg_backend_pid() as pid, pg_sleep($1::float8 / 1000)', [sleepMs]);
    return r.rows[0]!.pid;
  } finally {
    lease.release();
  }
};

/** Opens all `max` connections of the pool at once. */
const fill = (source: ConnectionSource, max: number) => Promise.all(Array.from({ length: max }, () => pidOf(source, undefined, 50)));

describe('LanePools', () => {
  let pool: LanePools;
  beforeAll(async () => {
    pool = lanes(4);
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
    expect(pool.totalCount).toBe(4);
    expect(pool.idleCount).toBe(4);
    expect(pool.waitingCount).toBe(0);
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
    expect(pool.waitingCount).toBe(0);
    const waiting = others.map((pid) => pidOf(pool, byPid.get(pid)![1], 200));
    const mine = pidOf(pool, byPid.get(x)![1]);
    expect(pool.waitingCount).toBe(4);
    const [served] = await Promise.all([mine, ...busy, ...waiting]);
    expect(served).toBe(x);
  });

  it('takes another connection when its own stays busy and no request of that connection\'s schemas waits', async () => {
    const key = 't_patient';
    const homePid = await pidOf(pool, key);
    // Its own connection stays busy for a long time; the others free up after 100 ms.
    const own = pidOf(pool, key, 1000);
    const others = Array.from({ length: 3 }, (_, i) => pidOf(pool, undefined, 100 + i));
    await new Promise((r) => setTimeout(r, 20));
    const started = performance.now();
    const pid = await pidOf(pool, key);
    expect(performance.now() - started).toBeLessThan(800);
    expect(pid).not.toBe(homePid);
    await Promise.all([own, ...others]);
  });

  it('keeps a schema on its connection under concurrent load far more often than a shared pool', async () => {
    // 16 schemas, 4 connections, 12 requests in flight at a time in random order: how often does a schema's
    // request run on the connection that served it most?
    const keys = Array.from({ length: 16 }, (_, i) => `t_load${i}`);
    const share = async (source: ConnectionSource) => {
      const seen = new Map<string, Map<number, number>>();
      let next = 0;
      const order = Array.from({ length: 240 }, (_, i) => keys[(i * 7 + Math.floor(i / 16)) % keys.length]!);
      await Promise.all(Array.from({ length: 12 }, async () => {
        while (next < order.length) {
          const key = order[next++]!;
          const pid = await pidOf(source, key, 2);
          const m = seen.get(key) ?? new Map<number, number>();
          seen.set(key, m.set(pid, (m.get(pid) ?? 0) + 1));
        }
      }));
      let most = 0;
      for (const m of seen.values()) most += Math.max(...m.values());
      return most / order.length;
    };
    const shared = new SharedPool({ config: { connectionString: direct }, size: 4, connectTimeoutMs: 5_000 });
    try {
      await fill(shared, 4);
      const [withLanes, without] = [await share(pool), await share(shared)];
      expect(withLanes).toBeGreaterThan(0.6);
      expect(withLanes).toBeGreaterThan(without + 0.2);
    } finally {
      await shared.end();
    }
  });
});

describe('LanePools of 10: two lanes per schema', () => {
  let pool: LanePools;
  beforeAll(async () => {
    pool = lanes(10);
    await fill(pool, 10);
  });
  afterAll(() => pool.end());

  /** The slot a request of `key` ran on, and whether the lease called it one of the schema's own. */
  const slotOf = async (key: string, sleepMs: number): Promise<{ slot: number; home: boolean }> => {
    const lease = await pool.acquire(key);
    try {
      await lease.client.query('select pg_sleep($1::float8 / 1000)', [sleepMs]);
      return { slot: lease.slot, home: lease.home };
    } finally {
      lease.release();
    }
  };

  it('takes the schema\'s second lane when its own is busy, as one of its own connections', async () => {
    const key = 't_second';
    const [own, second] = pool.lanesOf(key);
    // Its own lane busy (held by a schema of that lane); every other connection free.
    let holder = 0;
    while (pool.laneOf(`t_holder${holder}`) !== own) holder++;
    const lease = await pool.acquire(`t_holder${holder}`);
    try {
      expect(lease.slot).toBe(own);
      expect(await slotOf(key, 0)).toEqual({ slot: second, home: true });
    } finally {
      lease.release();
    }
    // Free again: its own lane first.
    expect(await slotOf(key, 0)).toEqual({ slot: own, home: true });
  });

  it('serves 20 schemas under load from their two connections each (the opening morning\'s shape)', async () => {
    // 20 schemas, 40 requests in flight, interleaved: every connection stays busy and requests wait. A released
    // connection goes to a waiting request with it among its lanes: the (connection, schema) pairs stay near 40
    // (one lane each: a released connection often found no request of its own schemas and went to another's).
    const keys = Array.from({ length: 20 }, (_, i) => `t_morning${i}`);
    const order = Array.from({ length: 800 }, (_, i) => keys[i % keys.length]!);
    const pairs = new Set<string>();
    let own = 0;
    let next = 0;
    await Promise.all(Array.from({ length: 40 }, async () => {
      while (next < order.length) {
        const key = order[next++]!;
        const { slot, home } = await slotOf(key, 2);
        pairs.add(`${key}@${slot}`);
        if (home) own++;
        expect(home).toBe(pool.lanesOf(key).includes(slot));
      }
    }));
    expect(own / order.length).toBeGreaterThan(0.9);
    expect(pairs.size).toBeLessThanOrEqual(60);
  });
});

describe('a request passed over again and again', () => {
  it('is served after at most 20 others went first', async () => {
    const pool = lanes(2);
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

  it('times out with pg-pool\'s words when every connection stays busy', async () => {
    const pool = lanes(1, 200);
    try {
      const hold = pidOf(pool, 't_x', 600);
      await new Promise((r) => setTimeout(r, 20));
      await expect(pidOf(pool, 't_y')).rejects.toThrow(/timeout exceeded when trying to connect/);
      expect(pool.waitingCount).toBe(0);
      await hold;
      expect(await pidOf(pool, 't_y')).toBeGreaterThan(0);
    } finally {
      await pool.end();
    }
  });

  it('gives a slot back when its connection is closed with an error, and opens a new one for the next request', async () => {
    const pool = lanes(1);
    try {
      const lease = await pool.acquire('t_z');
      const before = (await lease.client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      lease.release(new Error('broken'));
      expect(pool.totalCount).toBe(0);
      expect(await pidOf(pool, 't_z')).not.toBe(before);
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
