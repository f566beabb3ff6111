import { describe, expect, inject, it } from 'vitest';
import { Redis } from 'ioredis';
import { morningResult, runMorning, type MorningOptions } from '../../bench/morning.js';
import { SCENARIOS } from '../../bench/run.js';

// Issue 25: the opening-morning scenario (`npm run bench -- morning`) at a tiny size, with everything it uses for
// real: an API and a worker process (NODE_ENV=production, Redis limiter), the load generator's process, the SMTP
// server, the bare-SQL baseline. The figures are the bench's; here: every application answered 201, nothing
// overbooked, every mail at the SMTP server, the CPU split and the baseline measured, the rows as the runner
// writes them.
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function redisUp(): Promise<boolean> {
  const c = new Redis(REDIS_URL, { lazyConnect: true, enableOfflineQueue: false, connectTimeout: 500, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  try { await c.connect(); await c.ping(); return true; } catch { return false; } finally { c.disconnect(); }
}
const haveRedis = await redisUp();
if (!haveRedis) console.warn(`\n*** morning bench test SKIPPED: no Redis answering at ${REDIS_URL} ***\n`);

describe.runIf(haveRedis)('the opening morning bench, tiny', () => {
  it('answers every application, overbooks nothing, delivers every mail and splits the CPU', { timeout: 180_000 }, async () => {
    const o: MorningOptions = {
      server: inject('directDatabaseUrl'), redisUrl: REDIS_URL, municipalities: 2, offers: 2, places: 2, children: 5,
      inFlight: 4, visitors: 2, warmUp: 3, mailTimeoutMs: 30_000, apiLogLevel: 'warn', log: () => {},
    };
    const f = await runMorning(o);
    const report = JSON.stringify({ ...f, client: { ...f.client, latencies: undefined, timeline: undefined, page: undefined } });
    expect(f.applications, report).toBe(10);
    // Each application's send time and latency; the warm-up's (3 per municipality) are not among them.
    expect(f.client.timeline, report).toHaveLength(10);
    expect(f.client.timeline.every(([sent, latency]) => sent >= 0 && latency > 0), report).toBe(true);
    expect(f.notCreated, report).toBe(0);
    expect(f.pageNotOk, report).toBe(0);
    // 5 children on 2 offers of 2 places: 4 confirmed and 1 waitlisted per municipality, none beyond.
    expect(f.overbooked, report).toBe(0);
    expect(f.notDense, report).toBe(0);
    expect(f.mailsArrived, report).toBe(10);
    expect(Number.isFinite(f.mailSeconds), report).toBe(true);
    expect(f.cpu.api, report).toBeGreaterThan(0);
    expect(f.cpu.worker, report).toBeGreaterThan(0);
    expect(f.cpu.postgres, report).toBeGreaterThan(0);
    expect(f.database.inserted, report).toBeGreaterThanOrEqual(10);
    expect(f.idle.seconds, report).toBeGreaterThan(0);
    expect(f.bare.rate, report).toBeGreaterThan(0);
    expect(f.bare.pool, report).toBe(Number(process.env.PG_POOL_SIZE || 10));

    const result = morningResult(o, f);
    const row = (start: string) => result.rows.find((r) => r.name.startsWith(start));
    expect(row('morning, applications/s')?.name).toContain(`pool of ${f.bare.pool} = the service's PG_POOL_SIZE`);
    expect(row('morning, applications/s')?.target).toBe('≥ 400 /s');
    expect(row('morning, overbooked places')).toMatchObject({ value: 0, met: true });
    expect(row('morning, answers not 201')).toMatchObject({ value: 0, met: true });
    expect(row('morning, all 10 mails at the SMTP server')?.unit).toBe('s');
    expect(row('morning, POST /attendances p99 of the applications sent in the first second')?.unit).toMatch(/^ms \(\d+ applications\); /);
    expect(result.inputs).toMatchObject({ warmUpPerMunicipality: 3 });
    // The baseline's PostgreSQL CPU of 10 bare applications may be below one clock tick (10 ms): only measured.
    expect(row('morning, CPU per application: PostgreSQL')?.baseline).toBeGreaterThanOrEqual(0);
    expect(SCENARIOS.find((s) => s.name === 'morning')?.file).toBe('bench/morning.ts');
  });
});
