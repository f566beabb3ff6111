import http from 'node:http';
import os from 'node:os';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { createOrm, executorOf, migrateControl } from '../src/platform/db/orm.js';
import { systemViewer } from '../src/platform/auth/viewer.js';
import { EVENT_TYPES, recordEvents, type NewEvent } from '../src/platform/events/events.js';
import { newUuid } from '../src/platform/http/ids.js';
import { startJobSender } from '../src/platform/jobs/queue.js';
import { createLogger } from '../src/platform/logging/logger.js';
import { addTenant } from '../src/platform/tenancy/operations.js';
import type { Tenant } from '../src/platform/tenancy/tenant.js';
import { resolveTarget } from '../src/platform/net/outgoing.js';
import { postSigned } from '../src/platform/webhooks/sender.js';
import { webhookHeaders } from '../src/platform/webhooks/signature.js';
import { createWebhook } from '../src/resources/webhooks/service.js';
import { startService } from '../test/harness/processes.js';
import { scratchDatabase } from './scratch.js';
import { quick, reportResult, type BenchRow } from './result.js';
import { entities } from '../src/entities.js';

// `npm run bench:webhooks` (issue 14): EVENTS events over SUBSCRIPTIONS webhook subscriptions (TENANTS
// municipalities with SUBSCRIPTIONS / TENANTS subscriptions each, each subscription filtered to its own event type,
// so every event goes to exactly one subscription), delivered by one worker process (`src/main.ts --role worker`,
// real pg-boss) to a receiver in this process on loopback that verifies every request with the Standard Webhooks
// reference verifier. On a scratch database of the machine's PostgreSQL.
//   1. throughput: all events committed at once (transactions of 100), time until the last is accepted;
//   2. delay from commit to receipt at a steady rate the workers keep up with (BENCH_RATE events/s, default half
//      the throughput measured in 1., for SECONDS s);
//   baseline: the same signed POSTs sent straight from this process to the receiver (no database, no queue), one
//   in flight per subscription: what loopback HTTP, signing and verifying cost here.
// Env: BENCH_PG_URL, BENCH_EVENTS (10000), BENCH_SUBSCRIPTIONS (100), BENCH_TENANTS (20), BENCH_RATE (half of 1.), BENCH_SECONDS (15).
const PG = process.env.BENCH_PG_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const EVENTS = Number(process.env.BENCH_EVENTS || (quick ? 2000 : 10_000));
const SUBSCRIPTIONS = Number(process.env.BENCH_SUBSCRIPTIONS || (quick ? 20 : 100));
const TENANTS = Number(process.env.BENCH_TENANTS || (quick ? 4 : 20));
const RATE_SET = Number(process.env.BENCH_RATE) || null;
const SECONDS = Number(process.env.BENCH_SECONDS || (quick ? 5 : 15));
const PER_TENANT = SUBSCRIPTIONS / TENANTS;
if (!Number.isInteger(PER_TENANT) || PER_TENANT > EVENT_TYPES.length) throw new Error(`BENCH_SUBSCRIPTIONS / BENCH_TENANTS must be a whole number up to ${EVENT_TYPES.length}`);
const TYPES = EVENT_TYPES.slice(0, PER_TENANT);

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.max(0, Math.ceil(xs.length * p) - 1))]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The receiver: verifies each request under its subscription's secret, records the first arrival of each id. */
const secrets = new Map<string, Webhook>();
const arrived = new Map<string, number>();
let requests = 0;
let unverified = 0;
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    requests++;
    const hook = secrets.get(req.url!.slice(1));
    try {
      hook!.verify(Buffer.concat(chunks).toString('utf8'), req.headers as Record<string, string>);
    } catch {
      unverified++;
    }
    const id = String(req.headers['webhook-id']);
    if (!arrived.has(id)) arrived.set(id, Date.now());
    res.statusCode = 204;
    res.end();
  });
});

/** An event of the given type whose payload passes for its type (references only). */
function event(type: string): NewEvent {
  return { type, data: { offer: newUuid(), edition: newUuid(), status: ['published'], attendance: newUuid(), participant: newUuid(), receipt: newUuid(), debtor: newUuid(), attendances: [], total: 0 } } as unknown as NewEvent;
}

async function main() {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
  const port = (receiver.address() as AddressInfo).port;
  const scratch = await scratchDatabase(PG, 'webhooks');
  const { admin, name: dbName } = scratch;
  const url = new URL(scratch.url);
  process.env.WEBHOOK_ALLOW_HOSTS = '127.0.0.1';
  const log = createLogger('silent');
  const orm = await createOrm(url.toString(), { entities });
  const rows: BenchRow[] = [];
  const notes: string[] = [];
  let worker: ReturnType<typeof startService> | undefined;
  let sender: Awaited<ReturnType<typeof startJobSender>> | undefined;
  try {
    await migrateControl(orm);
    const tenants: Tenant[] = [];
    for (let i = 0; i < TENANTS; i++) tenants.push(await addTenant(orm, { slug: `wh${i}`, name: `Gemeinde ${i}`, hosts: [{ host: `wh${i}.test`, basePath: '/api' }] }));
    const subscriptions: { secret: string; path: string }[] = [];
    for (const tenant of tenants) {
      for (const type of TYPES) {
        const hookPath = `${tenant.slug}-${type}`;
        const ctx = { tenant, em: orm.em.fork({ schema: tenant.schema }), viewer: systemViewer('bench'), log };
        const w = await createWebhook(ctx, { url: `http://127.0.0.1:${port}/${hookPath}`, events: [type] });
        secrets.set(hookPath, new Webhook(w.secret));
        subscriptions.push({ secret: w.secret, path: hookPath });
      }
    }

    // Baseline: the same number of signed POSTs straight to the receiver, one in flight per subscription.
    const target = await resolveTarget(`http://127.0.0.1:${port}/`, new Set(['127.0.0.1']));
    if (!target.ok) throw new Error(target.reason);
    const perSub = Math.ceil(EVENTS / SUBSCRIPTIONS);
    let started = performance.now();
    await Promise.all(subscriptions.map(async (s) => {
      for (let i = 0; i < perSub; i++) {
        const id = newUuid();
        const body = JSON.stringify({ id, type: 'offer.published', timestamp: new Date().toISOString(), data: event('offer.published').data });
        const t = { ...target.target, url: new URL(`http://127.0.0.1:${port}/${s.path}`) };
        const out = await postSigned(t, body, webhookHeaders([s.secret], id, Math.floor(Date.now() / 1000), body));
        if (!out.ok) throw new Error(`baseline: ${out.error}`);
      }
    }));
    const baselinePerSecond = Math.round((perSub * SUBSCRIPTIONS) / ((performance.now() - started) / 1000));
    arrived.clear();
    requests = 0;

    worker = startService({
      role: 'worker', port: 0,
      env: { DATABASE_URL: url.toString(), LOG_LEVEL: 'info', REDIS_URL: '', TENANTS_DIR: mkdtempSync(path.join(tmpdir(), 'bench-wh-')), WEBHOOK_ALLOW_HOSTS: '127.0.0.1' },
    });
    await worker.ready();
    sender = await startJobSender(orm, log);
    const jobs = sender.sender;
    const db = executorOf(orm);

    // 1. Throughput: every event committed at once (transactions of 100 events of one municipality).
    const committed = new Map<string, number>();
    const perTenant = Math.floor(EVENTS / TENANTS);
    started = performance.now();
    const startedAt = Date.now();
    await Promise.all(tenants.map(async (tenant) => {
      for (let done = 0; done < perTenant; done += 100) {
        const batch = Array.from({ length: Math.min(100, perTenant - done) }, (_, i) => event(TYPES[(done + i) % TYPES.length]!));
        const ids = await db.transaction().execute((tx) => recordEvents({ tenant, jobs }, tx, batch));
        const at = Date.now();
        for (const id of ids) committed.set(id, at);
      }
    }));
    const total = committed.size;
    const writeMs = Date.now() - startedAt;
    const deadline = Date.now() + 600_000;
    while ([...committed.keys()].some((id) => !arrived.has(id))) {
      if (Date.now() > deadline) throw new Error(`only ${[...committed.keys()].filter((id) => arrived.has(id)).length} of ${total} delivered`);
      await sleep(50);
    }
    const lastAt = Math.max(...[...committed.keys()].map((id) => arrived.get(id)!));
    const throughput = Math.round(total / ((lastAt - startedAt) / 1000));
    const bulkDelays = [...committed].map(([id, at]) => arrived.get(id)! - at);
    rows.push({ name: `${total} events over ${SUBSCRIPTIONS} subscriptions (${TENANTS} municipalities), committed at once: deliveries/s`, value: throughput, unit: 'deliveries/s', baseline: baselinePerSecond, ratio: throughput / baselinePerSecond });
    rows.push({ name: 'the same: all delivered after the first commit', value: lastAt - startedAt, unit: 'ms' });
    notes.push(`writing the ${total} events took ${writeMs} ms (${TENANTS} municipalities in parallel, 100 per transaction); delay commit → receipt over the backlog p50 ${pct(bulkDelays, 0.5)} ms, p95 ${pct(bulkDelays, 0.95)} ms (a backlog, not the steady state)`);

    // 2. Delay from commit to receipt at a steady rate: one transaction of 5 events every 5 × 1000 / RATE ms,
    //    municipalities in turn.
    committed.clear();
    // The feed's visibility rule waits for every older writing transaction of the whole cluster: on a shared
    // machine another program's long transaction delays every event. Sampled here so the figures can be read.
    let oldestWriterMs = 0;
    let oldestWriterDb = '';
    const sampler = setInterval(() => {
      void admin.query<{ ms: number; db: string }>(`select extract(epoch from clock_timestamp() - xact_start)::float8 * 1000 as ms, datname as db
        from pg_stat_activity where backend_xid is not null order by xact_start limit 1`).then((r) => {
        const row = r.rows[0];
        if (row && row.ms > oldestWriterMs) [oldestWriterMs, oldestWriterDb] = [row.ms, row.db === dbName ? 'this benchmark\'s database' : 'another database'];
      }, () => {});
    }, 500);
    const rate = RATE_SET ?? Math.max(10, Math.round(throughput / 2));
    const every = (5 * 1000) / rate;
    const end = Date.now() + SECONDS * 1000;
    let n = 0;
    const inFlight: Promise<void>[] = [];
    while (Date.now() < end) {
      const tenant = tenants[n % TENANTS]!;
      const batch = Array.from({ length: 5 }, (_, i) => event(TYPES[(n + i) % TYPES.length]!));
      n++;
      inFlight.push(db.transaction().execute((tx) => recordEvents({ tenant, jobs }, tx, batch)).then((ids) => {
        const at = Date.now();
        for (const id of ids) committed.set(id, at);
      }));
      await sleep(every);
    }
    await Promise.all(inFlight);
    const steadyDeadline = Date.now() + 120_000;
    while ([...committed.keys()].some((id) => !arrived.has(id))) {
      if (Date.now() > steadyDeadline) throw new Error('steady phase: not all delivered');
      await sleep(20);
    }
    clearInterval(sampler);
    const delays = [...committed].map(([id, at]) => arrived.get(id)! - at);
    notes.push(`the oldest writing transaction of the database cluster seen during the steady phase had been open ${Math.round(oldestWriterMs)} ms${oldestWriterDb ? ` (in ${oldestWriterDb})` : ''}; events wait for it`);
    const p95 = pct(delays, 0.95);
    rows.push({ name: `delay commit → receipt at ${Math.round(committed.size / SECONDS)} events/s for ${SECONDS} s, p50`, value: pct(delays, 0.5), unit: 'ms' });
    rows.push({ name: `delay commit → receipt at ${Math.round(committed.size / SECONDS)} events/s for ${SECONDS} s, p95`, value: p95, unit: 'ms', target: '≤ 2000 ms', met: p95 <= 2000 });
    rows.push({ name: 'the same, max', value: Math.max(...delays), unit: 'ms' });
    notes.push(`requests received ${requests} for ${total + committed.size} events (more than one per event only when an attempt is repeated); signatures refused by the reference verifier: ${unverified}`);
    notes.push(`load average at the end: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} (${os.cpus().length} cores)`);
  } finally {
    if (worker) await worker.stop();
    await sender?.stop();
    await orm.close();
    await scratch.drop();
    receiver.close();
  }
  reportResult({
    scenario: 'webhooks',
    title: 'Webhook delivery (issue 14)',
    inputs: { events: EVENTS, subscriptions: SUBSCRIPTIONS, tenants: TENANTS, rate: RATE_SET ?? 'half of the throughput', seconds: SECONDS, quick },
    rows,
    notes,
  });
  for (const note of notes) console.log(`[webhooks] ${note}`);
  if (unverified > 0) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
