import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { startHarness, type Harness, type TestTenant } from '../../harness/harness.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import { createMailer } from '../../../src/platform/mail/mailer.js';
import { dispatchOutbox, queueMail } from '../../../src/platform/mail/outbox.js';
import { startWorkers, QUEUES } from '../../../src/platform/jobs/workers.js';
import { loadConfig } from '../../../src/platform/config.js';
import { createLogger } from '../../../src/platform/logging/logger.js';

// D9: the transactional outbox against a real SMTP server started in-process.
type Received = { from: string; to: string[]; raw: string };

let h: Harness;
let t: TestTenant;
let smtp: SMTPServer;
let smtpUrl: string;
const received: Received[] = [];
let refuse = false;

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, cb) {
      let raw = '';
      stream.on('data', (c) => (raw += c.toString()));
      stream.on('end', () => {
        if (refuse) return cb(new Error('mailbox unavailable'));
        received.push({ from: session.envelope.mailFrom ? String((session.envelope.mailFrom as { address: string }).address) : '', to: session.envelope.rcptTo.map((r) => r.address), raw });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
  smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;
  h = await startHarness();
  t = await h.tenant({ settings: { mailFrom: 'Ferienprogramm Test <fp@test.example>' } });
});

afterAll(async () => {
  await h.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

const outbox = () => qualified(t.tenant.schema, 'outbox');

describe('outbox', () => {
  it('never sends a mail whose transaction rolled back, and sends a committed one exactly once', async () => {
    const db = executorOf(h.orm);
    await expect(
      db.transaction().execute(async (tx) => {
        await queueMail(tx, t.tenant.schema, { kind: 'test', recipient: 'rollback@family.example', subject: 'Nein', body: 'x' });
        throw new Error('change failed');
      }),
    ).rejects.toThrow('change failed');
    await db.transaction().execute((tx) => queueMail(tx, t.tenant.schema, { kind: 'test', recipient: 'eltern@family.example', subject: 'Zusage', body: 'Ihr Kind hat einen Platz.' }));

    const mailer = createMailer({ smtpUrl, dataDir: '.data/test-mail' });
    const first = await dispatchOutbox(db, t.tenant, mailer);
    const second = await dispatchOutbox(db, t.tenant, mailer);
    mailer.close();
    expect(first).toEqual({ sent: 1, failed: 0 });
    expect(second).toEqual({ sent: 0, failed: 0 });
    const mine = received.filter((r) => r.to.includes('eltern@family.example'));
    expect(mine).toHaveLength(1);
    expect(mine[0].from).toBe('fp@test.example');
    expect(mine[0].raw).toContain('Subject: Zusage');
    expect(received.some((r) => r.to.includes('rollback@family.example'))).toBe(false);
  });

  it('keeps a mail the server refused and retries it later', async () => {
    const db = executorOf(h.orm);
    await queueMail(db, t.tenant.schema, { kind: 'test', recipient: 'retry@family.example', subject: 'Später', body: 'x' });
    const mailer = createMailer({ smtpUrl, dataDir: '.data/test-mail' });
    refuse = true;
    expect(await dispatchOutbox(db, t.tenant, mailer)).toEqual({ sent: 0, failed: 1 });
    refuse = false;
    expect(await dispatchOutbox(db, t.tenant, mailer)).toEqual({ sent: 1, failed: 0 });
    mailer.close();
    const row = await sql<{ attempts: number; sent_at: string | null }>`select attempts, sent_at from ${outbox()} where recipient = ${'retry@family.example'}`.execute(db);
    expect(row.rows[0].attempts).toBe(2);
    expect(row.rows[0].sent_at).not.toBeNull();
  });

  it('is sent by the pg-boss worker with the tenant in the job data', async () => {
    const db = executorOf(h.orm);
    await queueMail(db, t.tenant.schema, { kind: 'test', recipient: 'worker@family.example', subject: 'Vom Worker', body: 'x' });
    const workers = await startWorkers(h.orm, { ...loadConfig(), smtpUrl }, createLogger('silent'), { schedule: false });
    try {
      await workers.boss.send(QUEUES.outboxTenant, { tenant: t.slug });
      const deadline = Date.now() + 15_000;
      while (!received.some((r) => r.to.includes('worker@family.example')) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await workers.stop();
    }
    expect(received.filter((r) => r.to.includes('worker@family.example'))).toHaveLength(1);
  });
});
