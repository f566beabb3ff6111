import os from 'node:os';
import { createOrm, executorOf, migrateControl } from '../src/platform/db/orm.js';
import { qualified, sql } from '../src/platform/db/sql.js';
import { encodeCursor, readEvents, recordEvent, recordEvents, type NewEvent } from '../src/platform/events/events.js';
import { newUuid } from '../src/platform/http/ids.js';
import { queueMails } from '../src/platform/mail/outbox.js';
import { addTenant } from '../src/platform/tenancy/operations.js';
import { scratchDatabase } from './scratch.js';
import { quick, reportResult, type BenchRow } from './result.js';
import { entities } from '../src/entities.js';

// `node --import tsx bench/events.ts [--quick]` (issue 14): what the event log costs, each against a baseline of
// the same run on a scratch database of the machine's PostgreSQL.
//   1. hot path: a short transaction that inserts one application-like row, with and without `recordEvent`
//      (the one extra statement POST /attendances now makes; the real create makes about ten statements, so
//      this is an upper bound of the relative cost);
//   2. bulk: a commit's N `attendance.status_changed` events in one `recordEvents`, against queueing the same
//      number of mails in one `queueMails` (the commit already does that with notify);
//   3. the feed: a page of 200 after a cursor deep in a table of M events, through `readEvents` (visibility rule,
//      (tx, id) order), against a plain primary-key range read of 200 rows of the same table.
// Env: BENCH_PG_URL (default the test PostgreSQL).
const PG = process.env.BENCH_PG_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const TX = quick ? 300 : 2000;
const BULK = quick ? 2000 : 10_000;
const ROWS = quick ? 20_000 : 200_000;
const READS = quick ? 100 : 500;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timeEach(n: number, work: (i: number) => Promise<void>): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await work(i);
    ms.push(performance.now() - t0);
  }
  return ms;
}

async function main() {
  const scratch = await scratchDatabase(PG, 'events');
  const url = new URL(scratch.url);
  const orm = await createOrm(url.toString(), { entities, poolMax: 4 });
  try {
    await migrateControl(orm);
    const tenant = await addTenant(orm, { slug: 'events', name: 'Events', hosts: [{ host: 'events.test', basePath: '/api' }] });
    const ctx = { tenant };
    const db = executorOf(orm);
    const t = (name: string) => qualified(tenant.schema, name);
    // A table shaped like a small application row, for the hot-path transaction.
    await sql`create table ${t('bench_rows')} (uuid uuid primary key, offer uuid not null, participant uuid not null, status text not null)`.execute(db);
    const refs = () => ({ attendance: newUuid(), offer: newUuid(), edition: newUuid(), participant: newUuid(), account: newUuid() });

    // 1. hot path, alternating so load changes hit both alike.
    const plain: number[] = [];
    const withEvent: number[] = [];
    for (let i = 0; i < TX; i++) {
      for (const record of i % 2 === 0 ? [false, true] : [true, false]) {
        const r = refs();
        const t0 = performance.now();
        await db.transaction().execute(async (tx) => {
          await sql`insert into ${t('bench_rows')} values (${r.attendance}::uuid, ${r.offer}::uuid, ${r.participant}::uuid, 'confirmed')`.execute(tx);
          if (record) await recordEvent(ctx, tx, 'attendance.created', { ...r, status: 'confirmed', heldBack: false, decisionReason: 'Anmeldung nach Eingang: ein Platz war frei' });
        });
        (record ? withEvent : plain).push(performance.now() - t0);
      }
    }

    // 2. bulk, three rounds each, alternating.
    const bulkEvents: number[] = [];
    const bulkMails: number[] = [];
    for (let round = 0; round < 3; round++) {
      const events: NewEvent[] = Array.from({ length: BULK }, () => ({
        type: 'attendance.status_changed' as const,
        data: { ...refs(), from: 'confirmed' as const, to: 'confirmed' as const, heldBack: false, decisionReason: 'Platz in der Verlosung erhalten', cause: 'commit' as const },
      }));
      const mails = Array.from({ length: BULK }, (_, i) => ({
        kind: 'edition_decisions', recipient: `familie-${i}@example.org`, subject: 'Platzvergabe: Sommerferien',
        body: 'Guten Tag,\n\nEmma hat einen Platz für „Fußball-Feriencamp“ bekommen.\n\nIhr Ferienprogramm-Team\n', payload: { edition: newUuid() },
      }));
      let t0 = performance.now();
      await db.transaction().execute((tx) => recordEvents(ctx, tx, events));
      bulkEvents.push(performance.now() - t0);
      t0 = performance.now();
      await db.transaction().execute((tx) => queueMails(ctx, tx, mails));
      bulkMails.push(performance.now() - t0);
    }

    // 3. the feed over a big table.
    const chunk = 10_000;
    for (let done = 0; done < ROWS; done += chunk) {
      await recordEvents(ctx, db, Array.from({ length: Math.min(chunk, ROWS - done) }, () => ({
        type: 'attendance.created' as const, data: { ...refs(), status: 'waiting' as const, heldBack: false },
      })));
    }
    await sql`analyze ${t('event')}`.execute(db);
    const ids = await sql<{ id: string; tx: string }>`select id::text as id, tx::text as tx from ${t('event')} order by tx, id`.execute(db);
    const cursorAt = (i: number) => ids.rows[i]!;
    // Visible once every older writing transaction of the cluster has ended (other work on the machine).
    const until = Date.now() + 60_000;
    while ((await readEvents(db, tenant.schema, { after: encodeCursor(cursorAt(ids.rows.length - 300)), limit: 200 })).events.length < 200) {
      if (Date.now() > until) throw new Error('the events did not become visible within 60 s');
      await new Promise((r) => setTimeout(r, 20));
    }
    const positions = Array.from({ length: READS }, (_, i) => Math.floor(((i * 7919) % 97) / 97 * (ids.rows.length - 400)) + 100);
    const feed = await timeEach(READS, async (i) => {
      const p = cursorAt(positions[i]!);
      const page = await readEvents(db, tenant.schema, { after: encodeCursor(p), limit: 200 });
      if (page.events.length !== 200) throw new Error(`page of ${page.events.length}`);
    });
    const byId = await timeEach(READS, async (i) => {
      const p = cursorAt(positions[i]!);
      // Qualified: a bare `id` in ORDER BY would sort by the text column of the output (a seq scan and a sort).
      const res = await sql`select e.id::text as id, e.uuid, e.type, e.occurred_at, e.data, e.tx::text as tx from ${t('event')} e
        where e.id > ${p.id}::bigint order by e.id limit 200`.execute(db);
      if (res.rows.length !== 200) throw new Error('short page');
    });

    const rows: BenchRow[] = [
      {
        name: 'hot path: one-row transaction with recordEvent, median', value: +median(withEvent).toFixed(2), unit: 'ms',
        baseline: +median(plain).toFixed(2), ratio: +(median(withEvent) / median(plain)).toFixed(2),
        target: 'one extra insert, no extra read (ratio is the upper bound for POST /attendances)',
      },
      {
        name: `bulk: ${BULK} events in one recordEvents, median of 3`, value: +median(bulkEvents).toFixed(0), unit: 'ms',
        baseline: +median(bulkMails).toFixed(0), ratio: +(median(bulkEvents) / median(bulkMails)).toFixed(2),
        target: 'no slower than queueing the same number of mails (≤ 1.0)', met: median(bulkEvents) <= median(bulkMails),
      },
      {
        name: `feed: page of 200 after a cursor in ${ROWS} events, median`, value: +median(feed).toFixed(2), unit: 'ms',
        baseline: +median(byId).toFixed(2), ratio: +(median(feed) / median(byId)).toFixed(2),
        target: 'the visibility rule costs about nothing (≤ 1.5 of a primary-key range read)', met: median(feed) <= 1.5 * median(byId),
      },
    ];
    reportResult({
      scenario: 'events',
      title: 'Event log (issue 14): hot-path insert, bulk recording, feed reads',
      inputs: { quick, transactions: TX, bulk: BULK, rows: ROWS, reads: READS },
      rows,
      notes: [`load average at the end: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} on ${os.cpus().length} cores`],
    });
  } finally {
    await orm.close();
    await scratch.drop();
  }
}

main().then(() => process.exit(0), (err) => {
  console.error(err);
  process.exit(1);
});
