import { Writable } from 'node:stream';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { executorOf, poolGuardOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import { newUuid } from '../../../src/platform/http/ids.js';
import { createLogger } from '../../../src/platform/logging/logger.js';
import { expectProblem, useHarness, type TestResponse, type TestTenant, at } from '../../harness/harness.js';
import { edition, offer } from '../../resources/offers/helpers.js';

// Issue 23, in one process (the real-process scenario with figures is test/deploy/lock-isolation.test.ts): a
// second connection holds one offer's row; the writers of that offer end by the lock timeout (503 with
// Retry-After) or after waiting for the offer's share of the pool, for those requests only, while the other
// offers of the municipality, another municipality and /readyz answer as usual. The harness's pool has 8
// connections: a municipality may hold 4, the writers of one offer 1.
const lines: { msg: string; [k: string]: unknown }[] = [];
const log = createLogger('info', new Writable({ write(c, _e, cb) { for (const l of String(c).split('\n')) if (l) lines.push(JSON.parse(l)); cb(); } }));
const { h } = useHarness({ log, tenant: false });

async function children(t: TestTenant, n: number): Promise<string[]> {
  const ids = Array.from({ length: n }, () => newUuid());
  await sql`insert into ${qualified(t.tenant.schema, 'participants')} (uuid, firstname, lastname, date_of_birth)
    select unnest(${ids}::uuid[]), 'Kind', 'Sperre', date '2016-05-23'`.execute(executorOf(h.orm));
  return ids;
}

/** Holds `offer`'s row (as an operator's forgotten `select … for update` in psql would) until released. */
async function holdOffer(schema: string, offerUuid: string): Promise<() => Promise<void>> {
  const c = new pg.Client({ connectionString: inject('databaseUrl'), application_name: 'hp-lock-test' });
  await c.connect();
  await c.query('begin');
  await c.query(`select 1 from "${schema}".offers where uuid = $1 for update`, [offerUuid]);
  return async () => {
    await c.query('rollback');
    await c.end();
  };
}

const timed = async <T>(p: Promise<T>): Promise<{ value: T; ms: number }> => {
  const started = performance.now();
  const value = await p;
  return { value, ms: performance.now() - started };
};

describe('one offer\'s row held by another transaction', () => {
  let release: (() => Promise<void>) | undefined;
  afterAll(async () => release?.());

  it('ends its writers by the timeout with 503 and Retry-After; the rest of the service answers as usual', { timeout: 60_000 }, async () => {
    const a = await h.tenant();
    const b = await h.tenant();
    const edA = await edition(a);
    const held = await offer(a, { name: 'Gesperrt', edition: edA.uuid, maxParticipants: 100 });
    const other = await offer(a, { name: 'Frei', edition: edA.uuid, maxParticipants: 100 });
    const edB = await edition(b);
    const elsewhere = await offer(b, { name: 'Anderswo', edition: edB.uuid, maxParticipants: 100 });
    const [kidsA, kidsB] = [await children(a, 40), await children(b, 10)];
    // One application of the held offer exists already: its transition takes the general (transactional) way.
    const existing = await a.post('/attendances', { offer: held.uuid, participant: kidsA[39] });
    expect(existing.status, existing.text).toBe(201);

    release = await holdOffer(a.tenant.schema, held.uuid);
    const started = performance.now();
    const rush = Promise.all(kidsA.slice(0, 20).map((kid) => timed(a.post('/attendances', { offer: held.uuid, participant: kid }))));
    const transitions = Promise.all([0, 1, 2].map(() => timed(a.post(`/attendances/${existing.body.uuid}/transition`, { transition: 'waitlist' }))));
    // Beside it, one after another: the municipality's other offer (reads and writes), another municipality, /readyz.
    const beside: { what: string; res: TestResponse; ms: number }[] = [];
    for (let i = 0; i < 10; i++) {
      const r = [
        { what: 'A read', ...(await timed(a.get(`/offers/${other.uuid}`))) },
        { what: 'A write', ...(await timed(a.post('/attendances', { offer: other.uuid, participant: kidsA[20 + i] }))) },
        { what: 'B write', ...(await timed(b.post('/attendances', { offer: elsewhere.uuid, participant: kidsB[i] }))) },
        { what: 'B list', ...(await timed(b.get('/offers'))) },
        { what: 'readyz', ...(await timed(h.request('GET', '/readyz'))) },
      ];
      beside.push(...r.map((x) => ({ what: x.what, res: x.value, ms: x.ms })));
      await new Promise((r) => setTimeout(r, 200));
    }
    for (const x of beside) {
      expect(x.res.status, `${x.what}: ${x.res.text}`).toBeLessThan(300);
      // Their usual time on a busy test machine, far below the lock timeout (3 s) they would otherwise wait.
      expect(x.ms, x.what).toBeLessThan(1_500);
    }
    const ready = beside.filter((x) => x.what === 'readyz').map((x) => x.res.body);
    expect(ready.every((r) => at(r, 'status') === 'ready' && at(r, 'database') === 'ok')).toBe(true);

    // The held offer's writers: 503 with Retry-After, each by the lock timeout (3 s) or its share's wait (5 s).
    for (const { value: res, ms } of [...(await rush), ...(await transitions)]) {
      const p = expectProblem(res, 503);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(p.detail).toMatch(/try again/);
      expect(ms).toBeLessThan(3_000 + 5_000 + 3_000);
    }
    expect(performance.now() - started).toBeLessThan(30_000);

    // The log names what happened: lock waits in this municipality, and who holds its tables.
    const timedOut = lines.find((l) => /lock wait timed out/.test(l.msg) && l.schema === a.tenant.schema);
    expect(timedOut, JSON.stringify(lines.map((l) => l.msg))).toBeDefined();
    // The oldest transaction holding the municipality's tables comes first: the one holding the row.
    expect((timedOut!.blockers as unknown[])[0]).toMatchObject({ application: 'hp-lock-test', tables: ['offers'], state: 'idle in transaction' });
    expect(lines.some((l) => /database unreachable/.test(l.msg))).toBe(false);

    // /metrics counts them per municipality.
    const metrics = (await h.request('GET', '/metrics')).text;
    expect(metrics).toMatch(new RegExp(`^hp_db_lock_timeouts_total\\{schema="${a.tenant.schema}"\\} [1-9]\\d*$`, 'm'));
    expect(metrics).toMatch(/^hp_db_pool_connections\{state="size"\} 8$/m);
    // Writers that waited for the offer's share without their connection and ran again, and those refused.
    expect(metrics).toMatch(new RegExp(`^hp_db_lock_retries_total\\{schema="${a.tenant.schema}",reason="offer_share"\\} [1-9]\\d*$`, 'm'));
    expect(metrics).toMatch(new RegExp(`^hp_db_pool_refused_total\\{schema="${a.tenant.schema}",scope="offer"\\} [1-9]\\d*$`, 'm'));
    expect(metrics).toMatch(new RegExp(`^hp_db_pool_wait_seconds_count\\{schema="${b.tenant.schema}"\\} [1-9]\\d*$`, 'm'));

    // Once the row is free, the offer takes applications again.
    await release();
    release = undefined;
    const after = await a.post('/attendances', { offer: held.uuid, participant: kidsA[0] });
    expect(after.status, after.text).toBe(201);
    expect(poolGuardOf(h.orm)!.snapshot().tenants.every((t) => t.inUse === 0 && t.waiting === 0)).toBe(true);
  });
});
