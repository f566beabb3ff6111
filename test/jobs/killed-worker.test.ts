import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { useHarness } from '../harness/harness.js';
import { sigkill, startService, until, type ServiceProcess } from '../harness/processes.js';
import { startSmtp, type TestSmtp } from '../harness/smtp.js';
import { startJobSender } from '../../src/platform/jobs/queue.js';
import { createLogger } from '../../src/platform/logging/logger.js';
import { QUEUES } from '../../src/platform/jobs/queue.js';
import { bulkFamilies } from '../factories/bulk.js';
import { executorOf } from '../../src/platform/db/orm.js';
import { create as createEdition } from '../factories/edition.factory.js';
import { create as createOffer } from '../factories/offer.factory.js';

// D9 and issue 9.4/9.5: background work survives a worker killed with SIGKILL. Real processes (`src/main.ts
// --role worker`), real pg-boss, a real SMTP server: a worker killed in the middle of a lot commit with notify
// over a large edition, and again while the decision mails go out. Nothing is lost, no decision is made twice,
// and every family ends with exactly one decision mail (a resend after the kill carries the same Message-ID).

const FAMILIES = 400;
let smtp: TestSmtp;
let stopSender: () => Promise<void>;
const workers: ServiceProcess[] = [];
const tenantsDir = mkdtempSync(path.join(tmpdir(), 'hp-no-tenants-'));
let databaseUrl: URL;

beforeAll(async () => {
  smtp = await startSmtp();
});
afterAll(() => smtp.close());
// A database of its own: the worker processes serve every tenant they find, and must not send other test
// files' mail or run their jobs.
const { h, t, own } = useHarness({
  ownDatabase: 'killed',
  jobs: async (orm) => {
    const s = await startJobSender(orm, createLogger('silent'));
    stopSender = s.stop;
    return s.sender;
  },
  tenant: { settings: { mailFrom: 'Ferienprogramm <fp@test.example>' } },
});
beforeAll(() => {
  databaseUrl = new URL(own.url);
});
afterAll(async () => {
  for (const w of workers) await sigkill(w);
  await stopSender?.();
});

function worker(): ServiceProcess {
  const w = startService({
    role: 'worker', port: 0,
    env: {
      DATABASE_URL: databaseUrl.toString(), SMTP_URL: smtp.url, TENANTS_DIR: tenantsDir, LOG_LEVEL: 'warn', REDIS_URL: '',
      MAIL_LEASE_SECONDS: '3', JOB_HEARTBEAT_SECONDS: '10',
    },
  });
  workers.push(w);
  return w;
}

async function query<T = Record<string, unknown>>(text: string, values: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: databaseUrl.toString() });
  await c.connect();
  try {
    return (await c.query(text, values)).rows as T[];
  } finally {
    await c.end();
  }
}

const jobState = async (name: string) => (await query<{ state: string }>(
  `select state from pgboss.job where name = $1 and data->>'tenant' = $2 order by created_on desc limit 1`, [name, t.slug]))[0]?.state;

describe('a worker killed with SIGKILL', () => {
  it('in the middle of a commit with notify and again during its mails: nothing lost, no decision twice, one mail per family', async () => {
    const schema = t.tenant.schema;
    const edition = await createEdition(t, { procedure: 'lot' });
    const offers = [];
    for (let i = 0; i < 20; i++) offers.push(await createOffer(t, { edition: edition.uuid, maxParticipants: 15, fee: 500 }));
    await bulkFamilies(executorOf(h.orm), t.tenant, { families: FAMILIES, offers: offers.map((o) => o.uuid) });

    expect((await t.post(`/editions/${edition.uuid}/allocate`, { seed: 42 })).status).toBe(202);
    expect((await t.post(`/editions/${edition.uuid}/commit`, { notify: true })).status).toBe(202);

    // Kill 1: hold the edition's row so the first worker's job is stuck inside the lot, then kill it there.
    const blocker = new pg.Client({ connectionString: databaseUrl.toString() });
    await blocker.connect();
    await blocker.query('begin');
    await blocker.query(`select uuid from ${schema}.editions where uuid = $1 for update`, [edition.uuid]);
    const first = worker();
    await until('the allocation job is taken', async () => (await jobState(QUEUES.editionAllocate)) === 'active', 30_000);
    await sigkill(first);
    await blocker.query('rollback');
    await blocker.end();
    const killedAt = Date.now();

    // A second worker: the dead worker's job is failed by its missing heartbeat and taken up again.
    smtp.delayMs = 60; // a slow SMTP server, so the mails are still going out at the second kill
    const second = worker();
    const resumedMs = await until('the lot is drawn after the kill', async () => (await jobState(QUEUES.editionAllocate)) === 'completed', 60_000);
    console.log(`[killed worker] allocation taken up again and finished ${Date.now() - killedAt} ms after the SIGKILL (${resumedMs} ms after the second worker started)`);
    expect(Date.now() - killedAt).toBeLessThan(60_000);

    // Kill 2: while the decision mails go out.
    await smtp.waitFor(40, (m) => m.to[0]!.endsWith('@bulk.example'), 60_000);
    await sigkill(second);
    const receivedAtKill = smtp.received.filter((m) => m.to[0]!.endsWith('@bulk.example')).length;
    worker();
    // The worker serves every tenant of the test database; only this edition's families count here.
    const ours = () => smtp.received.filter((m) => m.to[0]!.endsWith('@bulk.example'));
    await until('every family has its mail', async () => new Set(ours().map((m) => m.to[0])).size >= FAMILIES, 90_000);
    await new Promise((r) => setTimeout(r, 4_000)); // leases of the killed worker run out; anything left would arrive now

    // Nothing lost, no decision twice.
    const state = await query<{ held: number; decided: number; runs: number; charges: number; confirmed: number }>(`
      select (select count(*)::int from ${schema}.attendances where held_back) as held,
        (select count(*)::int from ${schema}.attendances where status in ('confirmed', 'waitlisted')) as decided,
        (select count(*)::int from ${schema}.edition_allocations where finished_at is not null) as runs,
        (select count(*)::int from ${schema}.bookings where type = 'charge') as charges,
        (select count(*)::int from ${schema}.attendances where status = 'confirmed') as confirmed`);
    expect(state[0]).toEqual({ held: 0, decided: FAMILIES, runs: 1, charges: 300, confirmed: 300 });
    const unsent = await query<{ n: number }>(`select count(*)::int as n from ${schema}.outbox where sent_at is null`);
    expect(unsent[0]!.n).toBe(0);

    // One mail per family: exactly one distinct Message-ID for each; a duplicate delivery can only be a mail
    // in flight at the kill, resent with its own Message-ID.
    const byFamily = new Map<string, Set<string>>();
    for (const m of ours()) {
      const ids = byFamily.get(m.to[0]!) ?? new Set();
      ids.add(m.messageId);
      byFamily.set(m.to[0]!, ids);
    }
    expect(byFamily.size).toBe(FAMILIES);
    expect([...byFamily.values()].every((ids) => ids.size === 1)).toBe(true);
    const duplicates = ours().length - FAMILIES;
    console.log(`[killed worker] ${ours().length} deliveries for ${FAMILIES} families (${receivedAtKill} before the second kill), ${duplicates} resent after the kill with their Message-ID`);
    expect(duplicates).toBeLessThanOrEqual(16); // at most the mails in flight (2 × 8 claimed)
  }, 240_000);
});
