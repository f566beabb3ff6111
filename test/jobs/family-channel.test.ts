import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useHarness } from '../harness/harness.js';
import { decodedHeader, mailText, startSmtp, type TestSmtp } from '../harness/smtp.js';
import { tenantJobHandlers, tenantJobSweeps } from '../../src/jobs.js';
import { loadConfig } from '../../src/platform/config.js';
import { startWorkers, type Workers } from '../../src/platform/jobs/workers.js';
import { createLogger } from '../../src/platform/logging/logger.js';
import { PDF } from '../fixtures/files.js';
import { list } from '../resources/attendances/helpers.js';
import { QUEUES } from '../../src/platform/jobs/queue.js';
import { ageLinks, familyBody, linkToken, publishedOffer, websiteToken } from '../resources/family-applications/helpers.js';

// Issue 21 "Done when": a family applies through the website token, confirms, a guardian consents, a file
// answer is uploaded and read back by the admin, and the first-come list orders by confirmation. Every step
// through HTTP; the mails come from the real outbox, sent by real pg-boss workers to a real SMTP server, and
// the links are taken from the mails as the family and the guardian receive them.
let smtp: TestSmtp;
let workers: Workers;

beforeAll(async () => {
  smtp = await startSmtp();
});
afterAll(() => smtp.close());
const { h, t } = useHarness({
  ownDatabase: 'family',
  tenant: { settings: { confirmationUrlTemplate: 'https://www.musterstadt.example/ferienpass/bestaetigen/{token}', mailFrom: 'Ferienpass Musterstadt <ferienpass@musterstadt.example>' } },
  jobs: async (orm) => {
    workers = await startWorkers(orm, { ...loadConfig(), smtpUrl: smtp.url }, createLogger('silent'), { schedule: false, handlers: tenantJobHandlers, sweeps: tenantJobSweeps });
    return workers.sender;
  },
});
afterAll(() => workers?.stop());

const mailTo = async (recipient: string, subject: RegExp) =>
  (await smtp.waitFor(1, (m) => m.to.includes(recipient) && subject.test(decodedHeader(m.subject)), 15_000)).at(-1)!;

describe('a family applies through the website, confirms, a guardian consents, the team reads the file', () => {
  it('every step over HTTP, every mail through SMTP', async () => {
    const website = await websiteToken(t, 600);
    const offer = await publishedOffer(t, {
      maxParticipants: 2,
      applicationQuestions: [{ label: 'Kann schwimmen', type: 'yn', required: true }, { label: 'Impfpass', type: 'file', required: true }],
    });
    const [swim, pass] = offer.applicationQuestions!;

    // A file answer, uploaded with the website token.
    const uploaded = await t.request('POST', '/files', { rawBody: PDF, headers: { 'content-type': 'application/pdf', 'content-disposition': 'attachment; filename="impfpass.pdf"' }, token: website });
    expect(uploaded.status, uploaded.text).toBe(201);

    // Three families apply, in this order; the second names a guardian for its teenager.
    const bodies = [0, 1, 2].map((i) => familyBody([[offer.uuid]], { email: `familie${i}@family.example`, children: [i === 1 ? { guardianEmail: 'vormund@family.example' } : {}] }));
    bodies[0]!.participants[0].wishes[0].answers = { [swim.uuid]: true, [pass.uuid]: uploaded.body.uuid };
    for (const b of bodies.slice(1)) {
      const file = await t.request('POST', '/files?name=scan.pdf', { rawBody: PDF, headers: { 'content-type': 'application/pdf' }, token: website });
      b.participants[0].wishes[0].answers = { [swim.uuid]: false, [pass.uuid]: file.body.uuid };
    }
    const apps = [];
    for (const b of bodies) {
      const res = await t.post('/family-applications', b, { token: website });
      expect(res.status, res.text).toBe(201);
      expect(res.body[0]).toMatchObject({ status: 'email_unconfirmed', createdByAdmin: false });
      apps.push(res.body[0]);
    }
    expect(apps[1].consentOutstanding).toBe(true);

    // The confirmation mails arrive at the families, from the municipality's sender, with the website's link.
    const links = [];
    for (const b of bodies) {
      const m = await mailTo(b.account.email, /Bitte bestätigen Sie Ihre Anmeldung/);
      expect(m.from).toBe('ferienpass@musterstadt.example');
      const text = mailText(m.raw);
      expect(text).toContain(`„${offer.name}“`);
      expect(text).toMatch(/https:\/\/www\.musterstadt\.example\/ferienpass\/bestaetigen\/[1-9A-HJ-NP-Za-km-z]+/);
      links.push(linkToken(text.replace('/ferienpass/bestaetigen/', '/anmeldung/bestaetigen/')));
    }

    // Confirmed in the reverse order: the third family first, then the second, then the first.
    const third = await t.post('/family-applications/confirm', { token: links[2] }, { token: website });
    expect(third.body[0]).toMatchObject({ status: 'confirmed' });
    const second = await t.post('/family-applications/confirm', { token: links[1] }, { token: website });
    expect(second.body[0]).toMatchObject({ status: 'consents_outstanding', consentOutstanding: true });
    const first = await t.post('/family-applications/confirm', { token: links[0] }, { token: website });
    expect(first.body[0]).toMatchObject({ status: 'confirmed' });
    expect(decodedHeader((await mailTo(bodies[2]!.account.email, /^Ihre Anmeldung/)).subject)).toContain(t.tenant.name);

    // The guardian's consent mail, then the consent: the last place is gone, so the teenager is waitlisted.
    const consentMail = await mailTo('vormund@family.example', /Einverständnis erbeten/);
    const consentLink = linkToken(mailText(consentMail.raw), 'einwilligen');
    const consented = await t.post('/family-applications/consent', { token: consentLink }, { token: website });
    expect(consented.status, consented.text).toBe(200);
    expect(consented.body[0]).toMatchObject({ uuid: apps[1].uuid, status: 'waitlisted', consentOutstanding: false });

    // The first-come list follows the order of confirmation (and consent), not of application.
    expect((await list(t, offer.uuid)).map((a) => a.uuid)).toEqual([apps[2].uuid, apps[0].uuid, apps[1].uuid]);

    // The team reads the file answer back.
    const admin = await t.get(`/attendances/${apps[0].uuid}`);
    expect(admin.body.files).toEqual([{ uuid: uploaded.body.uuid, question: pass.uuid, name: 'impfpass.pdf', mimeType: 'application/pdf', size: PDF.length }]);
    const file = await t.request('GET', `/files/${uploaded.body.uuid}`);
    expect(file.status).toBe(200);
    expect(file.headers['content-disposition']).toContain('attachment');
    expect(file.headers['x-content-type-options']).toBe('nosniff');
    expect(Buffer.from(file.text, 'utf8').equals(PDF)).toBe(true);
  }, 60_000);
});

describe('the family-expiry job on pg-boss (issue 21 item 4)', () => {
  it('an unconfirmed family\'s application expires through the worker: withdrawn and deleted with what it made; applying again is 201', async () => {
    const website = await websiteToken(t, 600);
    const offer = await publishedOffer(t);
    const body = familyBody([[offer.uuid]], { email: 'vergessen@family.example' });
    const res = await t.post('/family-applications', body, { token: website });
    expect(res.status, res.text).toBe(201);
    const [a] = res.body;
    await ageLinks(h, t, 73);
    await workers.sender.send(QUEUES.familyExpiry, { tenant: t.slug });
    const deadline = Date.now() + 15_000;
    while ((await t.get(`/attendances/${a.uuid}`)).status === 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect((await t.get(`/attendances/${a.uuid}`)).status).toBe(404);
    expect((await t.get(`/participants/${a.participant!.uuid}`)).status).toBe(404);
    expect((await t.get(`/accounts/${a.account!.uuid}`)).status).toBe(404);
    const again = await t.post('/family-applications', body, { token: website });
    expect(again.status, again.text).toBe(201);
    expect(again.body[0]).toMatchObject({ status: 'email_unconfirmed' });
  }, 30_000);
});
