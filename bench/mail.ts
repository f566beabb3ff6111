import os from 'node:os';
import pg from 'pg';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { tenantJobHandlers } from '../src/jobs.js';
import type { Actor } from '../src/platform/auth/tokens.js';
import { viewerOfActor } from '../src/platform/auth/viewer.js';
import type { ServiceContext } from '../src/platform/context.js';
import { createOrm, executorOf, migrateControl } from '../src/platform/db/orm.js';
import { sql } from '../src/platform/db/sql.js';
import { startWorkers } from '../src/platform/jobs/workers.js';
import { createLogger } from '../src/platform/logging/logger.js';
import { loadConfig } from '../src/platform/config.js';
import { addTenant } from '../src/platform/tenancy/operations.js';
import { createAttendance, transitionAttendance } from '../src/resources/attendances/service.js';
import { allocateEdition, commitEdition } from '../src/resources/editions/allocation.js';
import { createEdition } from '../src/resources/editions/service.js';
import { createEditionInput } from '../src/resources/editions/schema.js';
import { createOffer } from '../src/resources/offers/service.js';
import { createOfferInput } from '../src/resources/offers/schema.js';
import { createParticipant } from '../src/resources/participants/service.js';
import { createParticipantInput } from '../src/resources/participants/schema.js';
import { bulkFamilies } from '../test/factories/bulk.js';
import nodemailer from 'nodemailer';
import { scratchDatabase } from './scratch.js';
import { quick, reportResult, type BenchRow } from './result.js';
import { entities } from '../src/entities.js';

// `npm run bench:mail`: the work after the response (issue 9), through the real services, real pg-boss workers in
// this process and a real SMTP server on loopback, on a scratch database of the machine's PostgreSQL:
//   1. latency of one family mail: from the answer of an application created with notify to SMTP acceptance;
//   2. a refill: from the answer of a withdrawal to the acceptance of the mail of the family moved up;
//   3. a lot commit with notify over FAMILIES families: the commit job and every decision mail accepted.
// Baseline of the same run: one mail handed straight to the same SMTP server by nodemailer (the floor of any
// "answer → acceptance" figure). Reports through bench/result.ts.
// Env: BENCH_PG_URL (default the test PostgreSQL), BENCH_FAMILIES (4000; quick 500), BENCH_SAMPLES (40; quick 10).
const PG = process.env.BENCH_PG_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const FAMILIES = Number(process.env.BENCH_FAMILIES || (quick ? 500 : 4000));
const SAMPLES = Number(process.env.BENCH_SAMPLES || (quick ? 10 : 40));
const ACTOR: Actor = { tokenId: '00000000-0000-4000-8000-00000000be0c', name: 'Benchmark', role: 'admin', access: 'read-write', ownerKind: 'service', organiserIds: [] };

const received = new Map<string, number>();
const smtp = new SMTPServer({
  authOptional: true, disabledCommands: ['STARTTLS'], logger: false,
  onData(stream, session, cb) {
    stream.on('data', () => {});
    stream.on('end', () => {
      for (const r of session.envelope.rcptTo) received.set(r.address, Date.now());
      cb();
    });
  },
});
smtp.on('error', () => {});

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * p) - 1)]!;
async function waitFor(address: string, timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const at = received.get(address);
    if (at) return at;
    if (Date.now() > deadline) throw new Error(`no mail to ${address} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

async function main() {
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
  const smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;
  const scratch = await scratchDatabase(PG, 'mail');
  const url = new URL(scratch.url);
  const log = createLogger('silent');
  const orm = await createOrm(url.toString(), { entities });
  const results: string[] = [];
  const rows: BenchRow[] = [];
  const loadBefore = os.loadavg();
  try {
    // The floor: the same kind of mail sent directly, SAMPLES times, one after another.
    const direct: number[] = [];
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: (smtp.server.address() as AddressInfo).port, secure: false, ignoreTLS: true });
    for (let i = 0; i < SAMPLES; i++) {
      const t0 = Date.now();
      await transport.sendMail({ from: 'bench@bench.example', to: `direct${i}@bench.example`, subject: 'Direkt', text: 'Guten Tag' });
      direct.push((await waitFor(`direct${i}@bench.example`)) - t0);
    }
    transport.close();
    const floor = pct(direct, 0.5);
    await migrateControl(orm);
    const tenant = await addTenant(orm, { slug: 'bench', name: 'Bench', hosts: [{ host: 'bench.test', basePath: '/api' }] });
    const workers = await startWorkers(orm, { ...loadConfig(), smtpUrl }, log, { schedule: false, handlers: tenantJobHandlers });
    const ctx = (): ServiceContext => ({ tenant, em: orm.em.fork({ schema: tenant.schema }), viewer: viewerOfActor(ACTOR), log, jobs: workers.sender });
    try {
      // 1. One family mail after an application with notify (first come first served, unlimited places).
      const open = await createEdition(ctx(), createEditionInput.parse({ name: 'Offen', procedure: 'firstcome' }));
      const free = await createOffer(ctx(), createOfferInput.parse({ name: 'Offen für alle', edition: open.uuid }));
      const latency: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const child = await createParticipant(ctx(), createParticipantInput.parse({ firstname: 'Kind', lastname: `L${i}`, email: `latency${i}@bench.example` }));
        await createAttendance(ctx(), { offer: free.uuid, participant: child.uuid, notify: true } as never);
        const answered = Date.now();
        latency.push((await waitFor(`latency${i}@bench.example`)) - answered);
      }
      results.push(`| family mail after POST /attendances (notify), answer → SMTP acceptance, ${SAMPLES} samples | p50 ${pct(latency, 0.5)} ms, p95 ${pct(latency, 0.95)} ms |`);
      rows.push({ name: `family mail after POST /attendances (notify), answer → SMTP acceptance, p50 (baseline: the mail sent directly)`, value: pct(latency, 0.5), unit: 'ms', baseline: floor });
      rows.push({ name: 'family mail after POST /attendances (notify), p95', value: pct(latency, 0.95), unit: 'ms' });

      // 2. Refill: a withdrawal frees the one place; the refill job moves the next family up and mails it.
      const refill: number[] = [];
      for (let i = 0; i < Math.min(SAMPLES, 20); i++) {
        const offer = await createOffer(ctx(), createOfferInput.parse({ name: `Ein Platz ${i}`, edition: open.uuid, maxParticipants: 1 }));
        const holder = await createParticipant(ctx(), createParticipantInput.parse({ firstname: 'A', lastname: `H${i}` }));
        const next = await createParticipant(ctx(), createParticipantInput.parse({ firstname: 'B', lastname: `N${i}`, email: `refill${i}@bench.example` }));
        const held = await createAttendance(ctx(), { offer: offer.uuid, participant: holder.uuid } as never);
        await createAttendance(ctx(), { offer: offer.uuid, participant: next.uuid } as never);
        await transitionAttendance(ctx(), { uuid: held.uuid, transition: 'withdraw' } as never);
        const answered = Date.now();
        refill.push((await waitFor(`refill${i}@bench.example`)) - answered);
      }
      results.push(`| refill: withdrawal answered → mail of the family moved up accepted, ${refill.length} samples | p50 ${pct(refill, 0.5)} ms, p95 ${pct(refill, 0.95)} ms |`);
      rows.push({ name: 'refill: withdrawal answered → mail of the family moved up accepted, p50 (baseline: the mail sent directly)', value: pct(refill, 0.5), unit: 'ms', baseline: floor });

      // 3. A lot commit with notify over FAMILIES families (200 offers of 15 places: 3,000 confirmed).
      const lot = await createEdition(ctx(), createEditionInput.parse({ name: 'Los', procedure: 'lot' }));
      const offers: string[] = [];
      for (let i = 0; i < 200; i++) offers.push((await createOffer(ctx(), createOfferInput.parse({ name: `Los ${i}`, edition: lot.uuid, maxParticipants: 15, fee: 500 }))).uuid);
      await bulkFamilies(executorOf(orm), tenant, { families: FAMILIES, offers });
      await allocateEdition(ctx(), { uuid: lot.uuid, seed: 1 } as never);
      const db = executorOf(orm);
      const waitJob = async (name: string) => {
        for (;;) {
          const r = await sql<{ state: string; ms: number }>`select state, extract(epoch from completed_on - started_on) * 1000 as ms
            from pgboss.job where name = ${name} order by created_on desc limit 1`.execute(db);
          if (r.rows[0]?.state === 'completed') return Number(r.rows[0].ms);
          await new Promise((res) => setTimeout(res, 50));
        }
      };
      const drawMs = await waitJob('edition-allocation');
      const before = received.size;
      await commitEdition(ctx(), { uuid: lot.uuid, notify: true } as never);
      const answered = Date.now();
      const commitMs = await waitJob('edition-commit-decisions');
      const family = (i: number) => `family${i}@bulk.example`;
      let first = Infinity;
      let last = 0;
      for (let i = 1; i <= FAMILIES; i++) {
        const at = await waitFor(family(i), 120_000);
        first = Math.min(first, at);
        last = Math.max(last, at);
      }
      results.push(`| lot draw of ${FAMILIES} applications over 200 offers (allocate job) | ${Math.round(drawMs)} ms |`);
      results.push(`| commit with notify: commit job (release, charges, ${FAMILIES} outbox rows) | ${Math.round(commitMs)} ms |`);
      results.push(`| commit answered → first decision mail accepted | ${first - answered} ms |`);
      results.push(`| commit answered → all ${FAMILIES} decision mails accepted (${received.size - before} mails) | ${last - answered} ms (${Math.round(FAMILIES / ((last - first) / 1000))} mails/s after the first) |`);
      rows.push({ name: `lot draw of ${FAMILIES} applications over 200 offers (allocate job)`, value: Math.round(drawMs), unit: 'ms' });
      rows.push({ name: `commit with notify: commit job (${FAMILIES} outbox rows)`, value: Math.round(commitMs), unit: 'ms' });
      rows.push({ name: 'commit answered → first decision mail accepted', value: first - answered, unit: 'ms' });
      rows.push({ name: `commit answered → all ${FAMILIES} decision mails accepted`, value: last - answered, unit: 'ms' });
      rows.push({ name: 'decision mails per second after the first', value: Math.round(FAMILIES / ((last - first) / 1000)), unit: 'mails/s' });
    } finally {
      await workers.stop();
    }
  } finally {
    await orm.close();
    await scratch.drop();
    smtp.close();
  }
  console.log(`Machine: ${os.cpus().length} × ${os.cpus()[0]?.model}, Node ${process.version}, PostgreSQL ${PG.replace(/\/\/.*@/, '//')}`);
  console.log('| what | measured |\n|---|---|');
  for (const r of results) console.log(r);
  console.log(`load average before ${loadBefore.map((x) => x.toFixed(1)).join(' ')}, now ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  reportResult({
    scenario: 'mail',
    title: 'Work after the response: mail latency, refill, lot commit mails (real pg-boss workers, real SMTP on loopback)',
    inputs: { families: FAMILIES, samples: SAMPLES, notify: process.env.PG_LISTEN_NOTIFY ?? 'off', quick },
    rows,
    notes: ['Workers poll (mail and refill every 0.5 s, others every 1 s) unless PG_LISTEN_NOTIFY=on; the latency rows are the worst case of a poll.'],
  });
}

main().then(() => process.exit(0), (err) => {
  console.error(err);
  process.exit(1);
});
