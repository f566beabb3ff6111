import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { useHarness } from '../../harness/harness.js';
import { startSmtp, type TestSmtp } from '../../harness/smtp.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import { createMailer } from '../../../src/platform/mail/mailer.js';
import { dispatchOutbox, listOutbox, outboxMetricsSource, purgeOutbox, queueMail, retryFailed, tenantsWithDueMail } from '../../../src/platform/mail/outbox.js';
import { startWorkers, QUEUES } from '../../../src/platform/jobs/workers.js';
import { loadConfig } from '../../../src/platform/config.js';
import { createLogger } from '../../../src/platform/logging/logger.js';

// D9: the transactional outbox against a real SMTP server started in-process, and sent by real pg-boss workers.
let smtp: TestSmtp;

beforeAll(async () => {
  smtp = await startSmtp();
});
afterAll(() => smtp.close());
const { h, t, own } = useHarness({ ownDatabase: 'outbox', tenant: { settings: { mailFrom: 'Ferienprogramm Test <fp@test.example>' } } });

const outbox = () => qualified(t.tenant.schema, 'outbox');
const db = () => executorOf(h.orm);
const mail = (recipient: string, subject = 'Betreff') => ({ kind: 'test', recipient, subject, body: 'Ihr Kind hat einen Platz.' });
const to = (address: string) => (m: { to: string[] }) => m.to.includes(address);
const row = async (recipient: string) => (await sql<{ uuid: string; attempts: number; sent_at: Date | null; failed_at: Date | null; next_attempt_at: Date; last_error: string | null }>`
  select uuid, attempts, sent_at, failed_at, next_attempt_at, last_error from ${outbox()} where recipient = ${recipient}`.execute(db())).rows[0]!;
const fastRetry = { baseMs: 200, capMs: 1000, maxAttempts: 40 };

describe('outbox', () => {
  it('never sends a mail whose transaction rolled back, and sends a committed one exactly once', async () => {
    await expect(
      db().transaction().execute(async (tx) => {
        await queueMail({ tenant: t.tenant }, tx, mail('rollback@family.example', 'Nein'));
        throw new Error('change failed');
      }),
    ).rejects.toThrow('change failed');
    await db().transaction().execute((tx) => queueMail({ tenant: t.tenant }, tx, mail('eltern@family.example', 'Zusage')));

    const mailer = createMailer({ smtpUrl: smtp.url, dataDir: '.data/test-mail' });
    const first = await dispatchOutbox(db(), t.tenant, mailer);
    const second = await dispatchOutbox(db(), t.tenant, mailer);
    mailer.close();
    expect(first).toEqual({ sent: 1, failed: 0, gaveUp: 0, nextDueAt: null });
    expect(second).toEqual({ sent: 0, failed: 0, gaveUp: 0, nextDueAt: null });
    const mine = smtp.received.filter(to('eltern@family.example'));
    expect(mine).toHaveLength(1);
    expect(mine[0].from).toBe('fp@test.example');
    expect(mine[0].subject).toBe('Zusage');
    // A stable Message-ID per outbox row: a resend after a crash is recognisable as the same message.
    expect(mine[0].messageId).toBe(`<${(await row('eltern@family.example')).uuid}@${t.slug}.holiday-programme>`);
    expect(smtp.received.some(to('rollback@family.example'))).toBe(false);
  });

  it('keeps a refused mail, tries it again only after its backoff, and then sends it once', async () => {
    await queueMail({ tenant: t.tenant }, db(), mail('retry@family.example', 'Später'));
    const mailer = createMailer({ smtpUrl: smtp.url, dataDir: '.data/test-mail' });
    smtp.refuse = true;
    const refused = await dispatchOutbox(db(), t.tenant, mailer);
    smtp.refuse = false;
    expect(refused).toMatchObject({ sent: 0, failed: 1, gaveUp: 0 });
    const after = await row('retry@family.example');
    expect(after.attempts).toBe(1);
    expect(after.last_error).toMatch(/^451 /);
    // Backoff: ~10 s (±20 %) before the next attempt, so an immediate dispatch sends nothing (no tight loop).
    const waitMs = new Date(after.next_attempt_at).getTime() - Date.now();
    expect(waitMs).toBeGreaterThan(6_000);
    expect(waitMs).toBeLessThan(12_500);
    expect(refused.nextDueAt!.getTime()).toBe(new Date(after.next_attempt_at).getTime());
    expect(await dispatchOutbox(db(), t.tenant, mailer)).toMatchObject({ sent: 0, failed: 0 });
    // Time passes.
    await sql`update ${outbox()} set next_attempt_at = now() where recipient = ${'retry@family.example'}`.execute(db());
    expect(await dispatchOutbox(db(), t.tenant, mailer)).toMatchObject({ sent: 1, failed: 0 });
    mailer.close();
    expect(await row('retry@family.example')).toMatchObject({ attempts: 2, last_error: null });
    expect(smtp.received.filter(to('retry@family.example'))).toHaveLength(1);
  });

  it('gives a mail up after its last attempt: logged at error level, listed for the operator, retried by command', async () => {
    await queueMail({ tenant: t.tenant }, db(), mail('never@family.example'));
    const mailer = createMailer({ smtpUrl: smtp.url, dataDir: '.data/test-mail' });
    const errors: { obj: object; msg: string }[] = [];
    const log = { error: (obj: object, msg: string) => errors.push({ obj, msg }) };
    smtp.refuse = true;
    const policy = { baseMs: 1, capMs: 1, maxAttempts: 3 };
    const results = [];
    for (let i = 0; i < 3; i++) {
      results.push(await dispatchOutbox(db(), t.tenant, mailer, { retry: policy, log }));
      await new Promise((r) => setTimeout(r, 10));
    }
    smtp.refuse = false;
    expect(results.map((r) => [r.failed, r.gaveUp])).toEqual([[1, 0], [1, 0], [0, 1]]);
    const gone = await row('never@family.example');
    expect(gone.failed_at).not.toBeNull();
    expect(errors).toHaveLength(1);
    expect(errors[0].msg).toBe('mail given up after its last attempt');
    // The log names the mail, never the recipient.
    expect(JSON.stringify(errors[0].obj)).not.toContain('never@family.example');
    expect(JSON.stringify(errors[0].obj)).toContain(gone.uuid);
    // Given up means not tried again by the workers.
    expect(await dispatchOutbox(db(), t.tenant, mailer)).toMatchObject({ sent: 0, failed: 0, gaveUp: 0 });
    const failed = await listOutbox(db(), t.tenant.schema, { failedOnly: true });
    expect(failed.map((f) => [f.uuid, f.state, f.attempts])).toEqual([[gone.uuid, 'failed', 3]]);
    expect(JSON.stringify(failed)).not.toContain('never@family.example');

    expect(await retryFailed(db(), t.tenant.schema, { uuid: gone.uuid })).toBe(1);
    expect(await dispatchOutbox(db(), t.tenant, mailer)).toMatchObject({ sent: 1 });
    mailer.close();
    expect(smtp.received.filter(to('never@family.example'))).toHaveLength(1);
    expect(await listOutbox(db(), t.tenant.schema, { failedOnly: true })).toEqual([]);
  });

  it('holds no transaction and no row lock while the SMTP server takes its time', async () => {
    await queueMail({ tenant: t.tenant }, db(), mail('slow@family.example'));
    const mailer = createMailer({ smtpUrl: smtp.url, dataDir: '.data/test-mail' });
    smtp.delayMs = 1500;
    const sending = dispatchOutbox(db(), t.tenant, mailer);
    await new Promise((r) => setTimeout(r, 600));
    const probe = new pg.Client({ connectionString: own.url });
    await probe.connect();
    try {
      await probe.query('begin');
      // The claimed row is not locked: another transaction can lock it at once.
      const locked = await probe.query(`select uuid from ${t.tenant.schema}.outbox where recipient = $1 for update nowait`, ['slow@family.example']);
      expect(locked.rows).toHaveLength(1);
      await probe.query('rollback');
      // No session of ours sits in a transaction over the outbox (other test files share the database).
      const open = await probe.query(`select count(*)::int as n from pg_stat_activity
        where datname = current_database() and state like 'idle in transaction%' and query ilike '%outbox%'`);
      expect(open.rows[0].n).toBe(0);
    } finally {
      await probe.end();
    }
    expect(await sending).toMatchObject({ sent: 1 });
    smtp.delayMs = 0;
    mailer.close();
  });

  it('claims and settles in batches: one statement per batch of mails, not one per mail (issue 25)', async () => {
    const u = await h.tenant();
    let statements = 0;
    const counted = db().withPlugin({ transformQuery: (args) => (statements++, args.node), transformResult: async (args) => args.result });
    await db().transaction().execute(async (tx) => {
      for (let i = 0; i < 40; i++) await queueMail({ tenant: u.tenant }, tx, mail(`grouped-settle${i}@family.example`));
    });
    const mailer = createMailer({ smtpUrl: smtp.url, dataDir: '.data/test-mail' });
    const sent = await dispatchOutbox(counted, u.tenant, mailer, { concurrency: 8, retry: fastRetry });
    expect(sent).toMatchObject({ sent: 40, failed: 0, gaveUp: 0, nextDueAt: null });
    // Three batches of 16: claim, settle-and-claim twice, the last settle (its claim finds nothing), the next due.
    expect(statements).toBe(5);
    const rows = await sql<{ n: number }>`select count(*)::int as n from ${qualified(u.tenant.schema, 'outbox')}
      where sent_at is not null and lease_until is null and attempts = 1`.execute(db());
    expect(rows.rows[0]!.n).toBe(40);

    // Refused ones are settled in the same statements: their next attempt after the backoff, the lease given back.
    await db().transaction().execute(async (tx) => {
      for (let i = 0; i < 20; i++) await queueMail({ tenant: u.tenant }, tx, mail(`grouped-refused${i}@family.example`));
    });
    smtp.refuse = true;
    statements = 0;
    try {
      expect(await dispatchOutbox(counted, u.tenant, mailer, { concurrency: 8, retry: fastRetry })).toMatchObject({ sent: 0, failed: 20, gaveUp: 0 });
    } finally {
      smtp.refuse = false;
    }
    expect(statements).toBe(4);
    const waiting = await sql<{ n: number }>`select count(*)::int as n from ${qualified(u.tenant.schema, 'outbox')}
      where sent_at is null and failed_at is null and lease_until is null and attempts = 1 and last_error is not null and next_attempt_at > now()`.execute(db());
    expect(waiting.rows[0]!.n).toBe(20);
    await new Promise((r) => setTimeout(r, 1_300));
    expect(await dispatchOutbox(db(), u.tenant, mailer, { retry: fastRetry })).toMatchObject({ sent: 20, failed: 0 });
    mailer.close();
    expect(new Set(smtp.received.filter((m) => m.to.some((a) => a.startsWith('grouped-'))).map((m) => m.messageId)).size).toBe(60);
  });

  it("a row claimed by a worker that died is sent again when the worker's lease runs out, with the same Message-ID", async () => {
    await queueMail({ tenant: t.tenant }, db(), mail('lease@family.example'));
    // The dead worker's claim: leased, attempt counted, never settled.
    await sql`update ${outbox()} set lease_until = now() + interval '1 hour', attempts = 1 where recipient = ${'lease@family.example'}`.execute(db());
    const mailer = createMailer({ smtpUrl: smtp.url, dataDir: '.data/test-mail' });
    expect(await dispatchOutbox(db(), t.tenant, mailer)).toMatchObject({ sent: 0 });
    expect(await tenantsWithDueMail(db(), [t.tenant])).toEqual([]);
    await sql`update ${outbox()} set lease_until = now() - interval '1 second' where recipient = ${'lease@family.example'}`.execute(db());
    expect(await tenantsWithDueMail(db(), [t.tenant])).toEqual([t.slug]);
    expect(await dispatchOutbox(db(), t.tenant, mailer)).toMatchObject({ sent: 1 });
    mailer.close();
    const got = smtp.received.filter(to('lease@family.example'));
    expect(got.map((m) => m.messageId)).toEqual([`<${(await row('lease@family.example')).uuid}@${t.slug}.holiday-programme>`]);
  });

  it("the safety net's one query names only tenants with due mail", async () => {
    const other = await h.tenant();
    const quiet = await h.tenant();
    await queueMail({ tenant: other.tenant }, db(), mail('due@family.example'));
    const due = await tenantsWithDueMail(db(), [t.tenant, other.tenant, quiet.tenant]);
    expect(due).toEqual([other.slug]);
    const mailer = createMailer({ smtpUrl: smtp.url, dataDir: '.data/test-mail' });
    await dispatchOutbox(db(), other.tenant, mailer);
    mailer.close();
    expect(await tenantsWithDueMail(db(), [t.tenant, other.tenant, quiet.tenant])).toEqual([]);
  });
});

describe('the backlog for /metrics', () => {
  it('sums waiting and given-up mails over the tenants, and reads at most every ttl', async () => {
    const a = await h.tenant();
    const b = await h.tenant();
    for (let i = 0; i < 3; i++) await queueMail({ tenant: a.tenant }, db(), mail(`m${i}@a.example`));
    await queueMail({ tenant: b.tenant }, db(), mail('gone@b.example'));
    await sql`update ${qualified(b.tenant.schema, 'outbox')} set failed_at = now()`.execute(db());
    const source = outboxMetricsSource(db(), async () => [a.tenant, b.tenant], 60_000);
    const first = await source();
    expect(first).toMatchObject({ backlog: 3, failed: 1 });
    expect(first.oldestSeconds).toBeGreaterThanOrEqual(0);
    await queueMail({ tenant: a.tenant }, db(), mail('later@a.example'));
    expect((await source()).backlog).toBe(3); // cached
    expect((await outboxMetricsSource(db(), async () => [a.tenant, b.tenant], 0)()).backlog).toBe(4);
  });
});

describe('old mails (addresses, first names) are deleted', () => {
  it('sent ones after 30 days, given-up ones after 90, waiting ones never', async () => {
    const u = await h.tenant();
    const box = qualified(u.tenant.schema, 'outbox');
    const ids = [];
    for (const r of ['old-sent', 'new-sent', 'old-failed', 'new-failed', 'waiting']) ids.push(await queueMail({ tenant: u.tenant }, db(), mail(`${r}@family.example`)));
    await sql`update ${box} set sent_at = now() - interval '31 days' where recipient = 'old-sent@family.example'`.execute(db());
    await sql`update ${box} set sent_at = now() - interval '29 days' where recipient = 'new-sent@family.example'`.execute(db());
    await sql`update ${box} set failed_at = now() - interval '91 days' where recipient = 'old-failed@family.example'`.execute(db());
    await sql`update ${box} set failed_at = now() - interval '89 days' where recipient = 'new-failed@family.example'`.execute(db());
    await sql`update ${box} set created_at = now() - interval '400 days' where recipient = 'waiting@family.example'`.execute(db());
    expect(await purgeOutbox(db(), u.tenant.schema)).toBe(2);
    const left = await sql<{ recipient: string }>`select recipient from ${box} order by recipient`.execute(db());
    expect(left.rows.map((r) => r.recipient)).toEqual(['new-failed@family.example', 'new-sent@family.example', 'waiting@family.example']);
    expect(await purgeOutbox(db(), u.tenant.schema)).toBe(0);
  });
});

describe('outbox through real pg-boss workers', () => {
  it('a mail leaves within seconds of its commit; mails written together make one send job', async () => {
    const workers = await startWorkers(h.orm, { ...loadConfig(), smtpUrl: smtp.url }, createLogger('silent'), { schedule: false, mail: { retry: fastRetry } });
    const u = await h.tenant();
    try {
      const latencies: number[] = [];
      for (let i = 0; i < 15; i++) {
        const recipient = `fast${i}@family.example`;
        await db().transaction().execute((tx) => queueMail({ tenant: u.tenant, jobs: workers.sender }, tx, mail(recipient)));
        const committed = Date.now();
        const [m] = await smtp.waitFor(1, to(recipient), 10_000);
        latencies.push(m!.at - committed);
      }
      latencies.sort((a, b) => a - b);
      const p50 = latencies[Math.floor(latencies.length * 0.5)]!;
      const p95 = latencies[Math.ceil(latencies.length * 0.95) - 1]!;
      console.log(`[mail latency] commit -> SMTP acceptance over 15 mails: p50 ${p50} ms, p95 ${p95} ms`);
      // Seconds, not the minute of a sweep (the target of 2 s p95 is measured in the benchmark).
      expect(p95).toBeLessThan(5_000);

      // 30 mails in one transaction: one queued send job for the tenant (deduplicated), every mail once.
      const before = (await sql<{ now: Date }>`select clock_timestamp() as now`.execute(db())).rows[0]!.now;
      await db().transaction().execute(async (tx) => {
        for (let i = 0; i < 30; i++) await queueMail({ tenant: u.tenant, jobs: workers.sender }, tx, mail(`batch${i}@family.example`));
      });
      const jobs = await sql<{ n: number }>`select count(*)::int as n from pgboss.job
        where name = ${QUEUES.mailSend} and singleton_key = ${u.slug} and created_on >= ${before}`.execute(db());
      expect(jobs.rows[0]!.n).toBe(1);
      const batch = await smtp.waitFor(30, (m) => m.to.some((a) => a.startsWith('batch')), 15_000);
      expect(new Set(batch.map((m) => m.messageId)).size).toBe(30);
    } finally {
      await workers.stop();
    }
  });

  it('an SMTP server that refuses for a while and then accepts gets every mail exactly once', async () => {
    const workers = await startWorkers(h.orm, { ...loadConfig(), smtpUrl: smtp.url }, createLogger('silent'), { schedule: false, mail: { retry: fastRetry } });
    const u = await h.tenant();
    try {
      smtp.refuse = true;
      await db().transaction().execute(async (tx) => {
        for (let i = 0; i < 40; i++) await queueMail({ tenant: u.tenant, jobs: workers.sender }, tx, mail(`outage${i}@family.example`));
      });
      await new Promise((r) => setTimeout(r, 2_500));
      expect(smtp.received.filter((m) => m.to.some((a) => a.startsWith('outage')))).toHaveLength(0);
      const tried = await sql<{ n: number }>`select count(*)::int as n from ${qualified(u.tenant.schema, 'outbox')} where attempts > 0 and sent_at is null and failed_at is null`.execute(db());
      expect(tried.rows[0]!.n).toBe(40);
      smtp.refuse = false;
      const got = await smtp.waitFor(40, (m) => m.to.some((a) => a.startsWith('outage')), 20_000);
      await new Promise((r) => setTimeout(r, 1_000));
      const all = smtp.received.filter((m) => m.to.some((a) => a.startsWith('outage')));
      expect(all).toHaveLength(40);
      expect(new Set(got.map((m) => m.messageId)).size).toBe(40);
      const failed = await sql<{ n: number }>`select count(*)::int as n from ${qualified(u.tenant.schema, 'outbox')} where sent_at is null`.execute(db());
      expect(failed.rows[0]!.n).toBe(0);
    } finally {
      smtp.refuse = false;
      await workers.stop();
    }
  });
});
