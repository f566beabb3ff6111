import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, useHarness } from '../../harness/harness.js';
import { startSmtp, type TestSmtp } from '../../harness/smtp.js';
import * as attendances from '../../factories/attendance.factory.js';
import * as editions from '../../factories/edition.factory.js';
import * as offers from '../../factories/offer.factory.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import { loadConfig } from '../../../src/platform/config.js';
import { startWorkers, QUEUES } from '../../../src/platform/jobs/workers.js';
import { createLogger } from '../../../src/platform/logging/logger.js';
import { queueMail } from '../../../src/platform/mail/outbox.js';
import { activeTenants, setTenantSuspension } from '../../../src/platform/tenancy/registry.js';

// Issue 24 (2): `tenant suspend` answers every request of the municipality with 503 and a sentence, holds its jobs
// and mail back, and keeps its data; `tenant resume` brings all of it back. (The CLI commands: test/cli/tenant-admin.)
let smtp: TestSmtp;
beforeAll(async () => {
  smtp = await startSmtp();
});
afterAll(() => smtp.close());

// A database of its own: the pg-boss workers below serve every tenant they find.
const { h, t } = useHarness({ ownDatabase: 'suspend', tenant: { name: 'Ferienpass Nordstadt', settings: { mailFrom: 'fp@nordstadt.example' } } });
const db = () => executorOf(h.orm);
const suspend = (slug: string, reason: string | null = 'Umzug in ein neues Rechenzentrum') => setTenantSuspension(db(), slug, { reason });
const resume = (slug: string) => setTenantSuspension(db(), slug, null);

describe('a suspended municipality', () => {
  it('answers every request of its hosts 503 with a sentence naming it and the reason; others are served; resume serves it again, data kept', async () => {
    const other = await h.tenant();
    const offer = await offers.create(t);
    await suspend(t.slug);
    try {
      const answers = await Promise.all([
        t.get('/offers', { token: null }), t.get(`/offers/${offer.uuid}`), t.post('/categories', { name: 'Neu' }),
        t.get('/openapi.json', { token: null }), t.get('/docs', { token: null }), t.get('/nowhere', { token: null }),
      ]);
      for (const res of answers) {
        const p = expectProblem(res, 503);
        expect(p.detail).toBe('The holiday programme "Ferienpass Nordstadt" is suspended by its provider: Umzug in ein neues Rechenzentrum. Its data is kept; this API answers again once it is resumed.');
      }
      expect((await other.get('/categories')).status).toBe(200);
      // The process probes do not belong to a municipality.
      expect((await h.request('GET', '/healthz', { host: t.host })).status).toBe(200);
    } finally {
      await resume(t.slug);
    }
    const back = await t.get(`/offers/${offer.uuid}`);
    expect(back.status).toBe(200);
    expect(back.body.uuid).toBe(offer.uuid);
  });

  it('says so without a reason too', async () => {
    const u = await h.tenant({ name: 'Ferienprogramm Süd' });
    await suspend(u.slug, null);
    const p = expectProblem(await u.get('/categories'), 503);
    expect(p.detail).toBe('The holiday programme "Ferienprogramm Süd" is suspended by its provider. Its data is kept; this API answers again once it is resumed.');
    await resume(u.slug);
    expect((await u.get('/categories')).status).toBe(200);
  });

  it('keeps its background jobs for later: a queued lot is drawn only after the resumption', async () => {
    const u = await h.tenant();
    const edition = await editions.create(u, { procedure: 'lot' });
    const offer = await offers.create(u, { edition: edition.uuid, maxParticipants: 1 });
    for (let i = 0; i < 3; i++) await attendances.create(u, { offer: offer.uuid, status: 'waiting' });
    expect((await u.post(`/editions/${edition.uuid}/allocate`, { seed: 7 })).status).toBe(202);
    await suspend(u.slug);
    expect(await h.jobs.drain()).toBe(0);
    expect(h.jobs.pending().map((j) => j.data.tenant)).toContain(u.slug);
    await resume(u.slug);
    expect(await h.jobs.drain()).toBeGreaterThan(0);
    const confirmed = (await u.get(`/attendances?offer=${offer.uuid}&status=confirmed`)).body;
    expect(confirmed).toHaveLength(1);
  });

  it('holds its mail back under real pg-boss workers: not sent, the job kept for later; sent once resumed', async () => {
    const workers = await startWorkers(h.orm, { ...loadConfig(), smtpUrl: smtp.url }, createLogger('silent'), { schedule: false });
    try {
      await queueMail({ tenant: t.tenant }, db(), { kind: 'test', recipient: 'eltern@nordstadt.example', subject: 'Zusage', body: 'Ihr Kind hat einen Platz.' });
      await suspend(t.slug);
      expect((await activeTenants(db())).map((x) => x.slug)).not.toContain(t.slug);
      await workers.sender.send(QUEUES.mailSend, { tenant: t.slug }, { singletonKey: t.slug });
      // The worker takes the job, finds the municipality suspended and sends the job again for a minute later.
      const deadline = Date.now() + 20_000;
      let later: { n: number } | undefined;
      while (Date.now() < deadline) {
        later = (await sql<{ n: number }>`select count(*)::int as n from pgboss.job where name = ${QUEUES.mailSend}
          and data->>'tenant' = ${t.slug} and state = 'created' and start_after > now() + interval '30 seconds'`.execute(db())).rows[0];
        if (later!.n > 0) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(later?.n).toBe(1);
      const row = await sql<{ sent_at: string | null }>`select sent_at from ${qualified(t.tenant.schema, 'outbox')} where recipient = 'eltern@nordstadt.example'`.execute(db());
      expect(row.rows[0]!.sent_at).toBeNull();
      expect(smtp.received.some((m) => m.to.includes('eltern@nordstadt.example'))).toBe(false);

      await resume(t.slug);
      await workers.sender.send(QUEUES.mailSend, { tenant: t.slug }, { singletonKey: `${t.slug}:after` });
      await smtp.waitFor(1, (m) => m.to.includes('eltern@nordstadt.example'), 20_000);
    } finally {
      await resume(t.slug);
      await workers.stop();
    }
  }, 60_000);
});
