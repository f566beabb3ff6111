import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createOrm, executorOf, preparedStatementsOf, type Orm } from '../../../src/platform/db/orm.js';
import { NamedStatements, prepared, preparedStatementsSetting, preparedStatementsWanted } from '../../../src/platform/db/prepared.js';
import { withConnectionAffinity } from '../../../src/platform/db/affinity.js';
import { LanePools } from '../../../src/platform/db/lanes.js';
import { PgDriver } from '../../../src/platform/db/pg-driver.js';
import { CompiledQuery } from 'kysely';
import { createLogger } from '../../../src/platform/logging/logger.js';
import { Writable } from 'node:stream';
import { sql } from '../../../src/platform/db/sql.js';
import { startHarness, useHarness, type Harness } from '../../harness/harness.js';
import { PGBOUNCER_BIN, startPgBouncer, type PgBouncer } from '../../harness/pgbouncer.js';
import { edition, offer, transition } from '../../resources/offers/helpers.js';
import { entities } from '../../../src/entities.js';

// Named statements for the hot projections (platform/db/prepared.ts): directly they are parsed once per
// connection; through Debian's PgBouncer 1.18 in transaction pooling mode they must be off, and the offer list
// works both ways.
const direct = inject('directDatabaseUrl');

type Stmt = { name: string; statement: string };
const ownStatements = (orm: Orm) =>
  sql<Stmt>`select name, statement from pg_prepared_statements where name like 'hp\\_%'`.execute(executorOf(orm)).then((r) => r.rows);

describe('PG_PREPARED_STATEMENTS', () => {
  it('is auto unless switched on or off; auto starts on', () => {
    expect(preparedStatementsSetting({})).toBe('auto');
    expect(preparedStatementsSetting({ PG_PREPARED_STATEMENTS: 'AUTO' })).toBe('auto');
    expect(preparedStatementsSetting({ PG_PREPARED_STATEMENTS: 'on' })).toBe('on');
    expect(preparedStatementsWanted({})).toBe(true);
    expect(preparedStatementsWanted({ PG_PREPARED_STATEMENTS: 'on' })).toBe(true);
    for (const off of ['off', 'OFF', '0', 'false', 'no']) {
      expect(preparedStatementsWanted({ PG_PREPARED_STATEMENTS: off })).toBe(false);
      expect(preparedStatementsSetting({ PG_PREPARED_STATEMENTS: off })).toBe('off');
    }
  });
});

/** A JSON logger whose lines a test reads. */
function capturedLog() {
  const lines: { msg: string; [k: string]: unknown }[] = [];
  const log = createLogger('info', new Writable({ write(c, _e, cb) { for (const l of String(c).split('\n')) if (l) lines.push(JSON.parse(l)); cb(); } }));
  return { log, lines };
}

describe('prepared() on a direct connection', () => {
  it('runs a marked statement as one named statement per connection, and only marked ones', async () => {
    const orm = await createOrm(direct, { entities, poolMax: 1, preparedStatements: true });
    try {
      const db = executorOf(orm);
      for (let i = 0; i < 5; i++) {
        const r = await prepared(sql<{ x: number }>`select ${i}::int + 1 as x`).execute(db);
        expect(r.rows).toEqual([{ x: i + 1 }]);
      }
      await sql`select 1 as unmarked`.execute(db);
      const stmts = await ownStatements(orm);
      expect(stmts).toHaveLength(1);
      expect(stmts[0].statement).toContain('+ 1 as x');
      expect(stmts[0].name).toMatch(/^hp_[A-Za-z0-9_-]{27}$/);
      // Other text, other statement.
      await prepared(sql`select ${1}::int * 2 as y`).execute(db);
      expect(await ownStatements(orm)).toHaveLength(2);
    } finally {
      await orm.close();
    }
  });

  it('parses a statement again after a migration changed its result type (that one execution fails)', async () => {
    const orm = await createOrm(direct, { entities, poolMax: 1, preparedStatements: true });
    const table = `prep_${Math.random().toString(36).slice(2, 8)}`;
    try {
      const db = executorOf(orm);
      await sql`create table ${sql.table(table)} (x int)`.execute(db);
      await sql`insert into ${sql.table(table)} values (1)`.execute(db);
      const read = () => prepared(sql<{ x: unknown }>`select x from ${sql.table(table)}`).execute(db);
      expect((await read()).rows).toEqual([{ x: 1 }]);
      await sql`alter table ${sql.table(table)} alter column x type text`.execute(db);
      await expect(read()).rejects.toMatchObject({ code: '0A000' });
      expect((await read()).rows).toEqual([{ x: '1' }]);
      expect(preparedStatementsOf(orm)).toBe(true);
    } finally {
      await sql`drop table if exists ${sql.table(table)}`.execute(executorOf(orm));
      await orm.close();
    }
  });

  it('sends them unnamed when switched off', async () => {
    const orm = await createOrm(direct, { entities, poolMax: 1, preparedStatements: false });
    try {
      for (let i = 0; i < 3; i++) await prepared(sql`select ${i}::int + 1 as x`).execute(executorOf(orm));
      expect(await ownStatements(orm)).toEqual([]);
    } finally {
      await orm.close();
    }
  });
});

describe('NamedStatements (one pool\'s names)', () => {
  const marked = '/*hp:prepared*/select $1::int as n';
  it('names a marked statement by its text; after a pooler error suspends them for a while, doubling, said once each time; that connection then uses new names', () => {
    let now = 1_000;
    const warnings: { msg: string; fields?: Record<string, unknown> }[] = [];
    const s = new NamedStatements('on', { warn: (msg, fields) => warnings.push({ msg, fields }) }, { suspendMs: 1_000, now: () => now });
    const [a, b] = [{}, {}];
    expect(s.nameFor(a, 'select 1', true)).toBeUndefined();
    const name = s.nameFor(a, marked, true)!;
    expect(name).toMatch(/^hp_[A-Za-z0-9_-]{27}$/);
    expect(s.nameFor(b, marked, true)).toBe(name);
    s.lost(a, '26000');
    s.lost(b, '42P05');
    expect(s.enabled).toBe(false);
    expect(s.nameFor(a, marked, true)).toBeUndefined();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.fields).toEqual({ code: '26000', suspendedMs: 1_000 });
    now += 1_000;
    expect(s.enabled).toBe(true);
    const renamed = s.nameFor(a, marked, true)!;
    expect(renamed).not.toBe(name);
    expect(renamed.startsWith(name)).toBe(true);
    s.lost(a, '26000');
    expect(warnings).toHaveLength(2);
    expect(warnings[1]!.fields).toEqual({ code: '26000', suspendedMs: 2_000 });
    now += 1_999;
    expect(s.enabled).toBe(false);
    now += 1;
    expect(s.enabled).toBe(true);
  });

  it('off never names; auto stops naming for good once the start-up check found a pooler, on keeps naming', () => {
    expect(new NamedStatements('off').nameFor({}, marked, true)).toBeUndefined();
    const auto = new NamedStatements('auto');
    const on = new NamedStatements('on');
    auto.poolerFound();
    on.poolerFound();
    expect(auto.enabled).toBe(false);
    expect(auto.nameFor({}, marked, true)).toBeUndefined();
    expect(on.nameFor({}, marked, true)).toBeDefined();
  });

  it('gives a statement whose result type changed a new name on that connection only', () => {
    const s = new NamedStatements('on');
    const [a, b] = [{}, {}];
    const name = s.nameFor(a, marked, true)!;
    s.resultTypeChanged(a, marked, name);
    expect(s.nameFor(a, marked, true)).toBe(`${name}_v1`);
    expect(s.nameFor(b, marked, true)).toBe(name);
  });
});

describe('named statements on lanes (pg-driver.ts)', () => {
  it('names a statement on its schema\'s own connection at once, on another from its second execution', async () => {
    const pool = new LanePools({ config: { connectionString: direct }, size: 2, connectTimeoutMs: 5_000 });
    const driver = new PgDriver(pool, new NamedStatements('on'));
    try {
      const keys = Array.from({ length: 20 }, (_, i) => `t_named_${i}`);
      const home = keys.find((k) => pool.laneOf(k) === 0)!;
      const away = keys.find((k) => pool.laneOf(k) === 1)!;
      const marked = (key: string) => `/*hp:prepared*/select ${JSON.stringify(key).replace(/"/g, "'")}::text as k, $1::int as n`;
      const run = (key: string, text: string, values: unknown[] = []) => withConnectionAffinity(key, async () => {
        const c = await driver.acquireConnection();
        try { return await c.executeQuery<Record<string, unknown>>(CompiledQuery.raw(text, values)); } finally { await driver.releaseConnection(c); }
      });
      // Connection 1 (away's own) busy, so away's statements run on connection 0, home's.
      const busy = await pool.acquire(away);
      expect(busy.slot).toBe(1);
      const names = async () => (await run(home, `select statement from pg_prepared_statements where name like 'hp\\_%'`)).rows.map((r) => r.statement);
      await run(home, marked(home), [1]);
      expect(await names()).toEqual([marked(home)]);
      await run(away, marked(away), [1]);
      expect(await names()).toHaveLength(1);
      const again = await run(away, marked(away), [2]);
      expect(again.rows).toEqual([{ k: away, n: 2 }]);
      expect((await names()).sort()).toEqual([marked(home), marked(away)].sort());
      busy.release();
    } finally {
      await pool.end();
    }
  });
});

describe('a named statement lost under the service (a session reset on a direct connection)', () => {
  it('is answered anyway, suspends naming on this pool for a while, and comes back under a new name', async () => {
    const { log, lines } = capturedLog();
    const orm = await createOrm(direct, { entities, poolMax: 1, preparedStatements: true, log, preparedSuspendMs: 300 });
    try {
      const db = executorOf(orm);
      const read = (i: number) => prepared(sql<{ x: number }>`select ${i}::int + 1 as x`).execute(db);
      expect((await read(1)).rows).toEqual([{ x: 2 }]);
      const [first] = await ownStatements(orm);
      expect(first!.name).toMatch(/^hp_[A-Za-z0-9_-]{27}$/);
      // Something under the service drops the session's statements; pg still believes the name is parsed.
      await sql`deallocate all`.execute(db);
      expect((await read(2)).rows).toEqual([{ x: 3 }]);
      expect(preparedStatementsOf(orm)).toBe(false);
      expect(lines.filter((l) => l.msg.includes('named prepared statements suspended'))).toHaveLength(1);
      expect((await read(3)).rows).toEqual([{ x: 4 }]);
      expect(await ownStatements(orm)).toEqual([]);
      await new Promise((r) => setTimeout(r, 350));
      expect(preparedStatementsOf(orm)).toBe(true);
      expect((await read(4)).rows).toEqual([{ x: 5 }]);
      const after = await ownStatements(orm);
      expect(after).toHaveLength(1);
      expect(after[0]!.name).toBe(`${first!.name}_g1`);
    } finally {
      await orm.close();
    }
  });
});

async function publishedOffers(h: Harness, n: number) {
  const t = await h.tenant();
  const ed = await edition(t);
  for (let i = 0; i < n; i++) {
    const o = await offer(t, { name: `Angebot ${String(i).padStart(2, '0')}`, edition: ed.uuid, maxParticipants: 10 });
    await transition(t, o.uuid, 'publish');
  }
  return t;
}

/** Many lists at once, anonymous (cache off) and with a token: all 200 and the same body each time. */
async function listsConcurrently(h: Harness, t: Awaited<ReturnType<typeof publishedOffers>>) {
  const previous = process.env.PUBLIC_CACHE_MS;
  process.env.PUBLIC_CACHE_MS = '0';
  try {
    const anonymous = await Promise.all(Array.from({ length: 24 }, () => t.get('/offers?itemsPerPage=5', { token: null })));
    const token = await Promise.all(Array.from({ length: 24 }, () => t.get('/offers?itemsPerPage=5')));
    for (const r of [...anonymous, ...token]) expect(r.status, r.text).toBe(200);
    expect(new Set(anonymous.map((r) => r.text)).size).toBe(1);
    expect(new Set(token.map((r) => r.text)).size).toBe(1);
    expect(anonymous[0].body.map((o: { name: string }) => o.name)).toEqual(['Angebot 00', 'Angebot 01', 'Angebot 02', 'Angebot 03', 'Angebot 04']);
    return { anonymous: anonymous[0].body, token: token[0].body };
  } finally {
    process.env.PUBLIC_CACHE_MS = previous;
  }
}

describe('the offer list directly with named statements', () => {
  const { h } = useHarness({ databaseUrl: direct, preparedStatements: true, tenant: false });

  it('answers many concurrent lists, anonymous and with a token, and keeps the statements on', async () => {
    const t = await publishedOffers(h, 6);
    await listsConcurrently(h, t);
    expect(preparedStatementsOf(h.orm)).toBe(true);
  });
});

describe.runIf(!!PGBOUNCER_BIN)('the offer list through PgBouncer 1.18 in transaction pooling mode', () => {
  let bouncer: PgBouncer;
  beforeAll(async () => {
    // Few server connections for many client connections: consecutive transactions of one client land on
    // different server connections.
    bouncer = await startPgBouncer(direct, { poolSize: 2 });
  });
  afterAll(async () => bouncer?.stop());

  it('with PG_PREPARED_STATEMENTS=off: every list answers, anonymous and with a token', async () => {
    const h = await startHarness({ databaseUrl: bouncer.url(direct), preparedStatements: false });
    try {
      const t = await publishedOffers(h, 6);
      const pooled = await listsConcurrently(h, t);
      expect(pooled.token[0].attendances).toBeDefined();
      expect(pooled.anonymous[0].attendances).toBeUndefined();
    } finally {
      await h.close();
    }
  });

  it('left on (PG_PREPARED_STATEMENTS=on): the first failure suspends them on this pool and the statement is sent again, so nothing fails', async () => {
    const { log, lines } = capturedLog();
    const orm = await createOrm(bouncer.url(direct), { entities, poolMax: 6, preparedStatements: true, log });
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      const db = executorOf(orm);
      // Found at start, but `on` is what was asked for: they stay on until the pooler loses one.
      expect(lines.some((l) => /goes through a pooler/.test(l.msg) && l.namedStatements === true)).toBe(true);
      const errors: string[] = [];
      let rounds = 0;
      for (; rounds < 20 && preparedStatementsOf(orm); rounds++) {
        const results = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => prepared(sql<{ x: number }>`select ${i}::int + 1 as x, pg_sleep(0.01)::text as s`).execute(db)));
        for (const r of results) {
          if (r.status === 'rejected') errors.push(String((r.reason as { code?: string }).code));
          else expect(r.value.rows[0].x).toBeGreaterThan(0);
        }
      }
      expect(errors).toEqual([]);
      expect(preparedStatementsOf(orm)).toBe(false);
      // Said once, in the JSON log (not as a Node warning on stderr).
      const switched = lines.filter((l) => l.msg.includes('named prepared statements suspended'));
      expect(switched).toHaveLength(1);
      expect(switched[0].level).toBe(40);
      expect(['26000', '42P05']).toContain(switched[0].code);
      expect(warnings).toEqual([]);
      const after = await Promise.all(Array.from({ length: 12 }, (_, i) => prepared(sql<{ x: number }>`select ${i}::int + 1 as x, pg_sleep(0.01)::text as s`).execute(db)));
      expect(after.map((r) => r.rows[0].x)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    } finally {
      process.off('warning', onWarning);
      await orm.close();
    }
  });

  it('auto (the default): the pooler is found at start and named statements start off; directly they stay on', async () => {
    const pooled = capturedLog();
    const viaBouncer = await createOrm(bouncer.url(direct), { entities, poolMax: 2, log: pooled.log });
    const plain = capturedLog();
    const directly = await createOrm(direct, { entities, poolMax: 2, log: plain.log });
    try {
      if (process.env.PG_PREPARED_STATEMENTS === undefined || preparedStatementsSetting() === 'auto') {
        expect(preparedStatementsOf(viaBouncer)).toBe(false);
        expect(preparedStatementsOf(directly)).toBe(true);
      }
      const found = pooled.lines.find((l) => /goes through a pooler/.test(l.msg));
      expect(found, JSON.stringify(pooled.lines)).toMatchObject({ level: 40, sessionTimeouts: false });
      expect(plain.lines.filter((l) => /pooler/.test(l.msg))).toEqual([]);
      // Through the pooler a transaction still gets the request timeouts (SET LOCAL with its BEGIN).
      const inside = await viaBouncer.em.getConnection().transactional(async (trx) =>
        viaBouncer.em.getConnection().execute<{ lock: string; statement: string }[]>(`select current_setting('lock_timeout') as lock, current_setting('statement_timeout') as statement`, [], 'all', trx));
      expect(inside[0]).toEqual({ lock: '3s', statement: '30s' });
    } finally {
      await viaBouncer.close();
      await directly.close();
    }
  });
});
