import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useHarness, type Schema } from '../harness/harness.js';
import { startSmtp, type TestSmtp } from '../harness/smtp.js';
import { tenantJobHandlers } from '../../src/jobs.js';
import { loadConfig } from '../../src/platform/config.js';
import { startWorkers, type Workers } from '../../src/platform/jobs/workers.js';
import { createLogger } from '../../src/platform/logging/logger.js';
import { apply, createAccount, createParticipant, firstcome, createOffer, list, lot, newApplication, transitionOk } from '../resources/attendances/helpers.js';

// Work after the response through real pg-boss and a real SMTP server (issue 9): the refill (spec 4.2, D9, D10)
// and every path that e-mails a family (spec 6: create, transition, transfer, refill; D5 offer cancel; D7
// commit): the API writes the mail and its send job in the change's transaction, a worker sends it in seconds.
let smtp: TestSmtp;
let workers: Workers;

beforeAll(async () => {
  smtp = await startSmtp();
});
afterAll(() => smtp.close());
const { t } = useHarness({
  ownDatabase: 'after',
  jobs: async (orm) => {
    workers = await startWorkers(orm, { ...loadConfig(), smtpUrl: smtp.url }, createLogger('silent'), { schedule: false, handlers: tenantJobHandlers });
    return workers.sender;
  },
});
afterAll(() => workers?.stop());

describe('refill through real pg-boss', () => {
  it('a withdrawal answered, the refill job moves the waiting list up and the family is mailed within seconds', async () => {
    const e = await firstcome(t);
    const offer = await createOffer(t, { edition: e.uuid, maxParticipants: 2 });
    const a = await newApplication(t, offer.uuid);
    await newApplication(t, offer.uuid);
    const next = await newApplication(t, offer.uuid, {}, { email: 'nachruecker@family.example' });
    expect(next.status).toBe('waitlisted');
    await transitionOk(t, a.uuid, 'withdraw');
    const answered = Date.now();
    const [mail] = await smtp.waitFor(1, (m) => m.to.includes('nachruecker@family.example'), 10_000);
    console.log(`[refill job] withdrawal answered -> mail of the family moved up accepted: ${mail!.at - answered} ms`);
    expect(mail!.subject).toMatch(/^Platzzusage/);
    const items = await list(t, offer.uuid);
    expect(items.find((x) => x.uuid === next.uuid)).toMatchObject({ status: 'confirmed', heldBack: false });
  });

  it('POST /offers/{uuid}/refill: 202 at once, the job fills every free place once', async () => {
    const e = await firstcome(t);
    const offer = await createOffer(t, { edition: e.uuid, maxParticipants: 1 });
    await newApplication(t, offer.uuid);
    const waiting = [];
    for (let i = 0; i < 3; i++) waiting.push(await newApplication(t, offer.uuid, {}, { email: `w${i}@refill.example` }));
    expect((await t.patch(`/offers/${offer.uuid}`, { maxParticipants: 3 })).status).toBe(200);
    const requests = await Promise.all([1, 2, 3].map(() => t.post(`/offers/${offer.uuid}/refill`)));
    expect(requests.map((r) => r.status)).toEqual([202, 202, 202]);
    await smtp.waitFor(2, (m) => m.to.some((x) => x.endsWith('@refill.example')), 10_000);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(smtp.received.filter((m) => m.to.some((x) => x.endsWith('@refill.example')))).toHaveLength(2);
    expect((await list(t, offer.uuid)).map((x) => x.status)).toEqual(['confirmed', 'confirmed', 'confirmed', 'waitlisted']);
  });
});

describe('every path that e-mails a family delivers within seconds of the answer', () => {
  const within = async (what: string, recipient: string, act: () => Promise<unknown>) => {
    const before = smtp.received.filter((x) => x.to.includes(recipient)).length;
    await act();
    const answered = Date.now();
    const m = (await smtp.waitFor(before + 1, (x) => x.to.includes(recipient), 10_000))[before];
    const ms = m!.at - answered;
    console.log(`[mail path] ${what}: ${ms} ms from the answer to SMTP acceptance`);
    expect(ms, what).toBeLessThan(5_000);
    return m!;
  };

  it('create, transition, transfer, offer cancel and commit (with notify)', async () => {
    const e = await firstcome(t);
    const dates = [{ begin: '2030-07-01T10:00:00+02:00', end: '2030-07-01T12:00:00+02:00' }];
    const offer = await createOffer(t, { edition: e.uuid, maxParticipants: 10, dates });
    const other = await createOffer(t, { edition: e.uuid, maxParticipants: 10, dates });
    const child = await createParticipant(t, { email: 'pfade@family.example' });
    let a: Schema<'Attendance'>;
    await within('POST /attendances (notify)', 'pfade@family.example', async () => {
      a = await apply(t, offer.uuid, child.uuid, { notify: true });
    });
    const second = await createParticipant(t, { email: 'zweites@family.example' });
    const b = await apply(t, offer.uuid, second.uuid);
    await within('transition (notify)', 'zweites@family.example', () => transitionOk(t, b.uuid, 'waitlist', { notify: true }));
    const third = await createParticipant(t, { email: 'umzug@family.example' });
    const c = await apply(t, offer.uuid, third.uuid);
    await within('transfer (notify)', 'umzug@family.example', async () => {
      const res = await t.post(`/attendances/${c.uuid}/transfer`, { offer: other.uuid, status: 'confirmed', notify: true });
      expect(res.status, res.text).toBe(201);
    });
    expect((await t.post(`/offers/${offer.uuid}/transition`, { transition: 'publish' })).status).toBe(200);
    await within('offer cancel (notify)', 'pfade@family.example', async () => {
      const res = await t.post(`/offers/${offer.uuid}/transition`, { transition: 'cancel', notify: true });
      expect(res.status, res.text).toBe(200);
    });
    expect(smtp.received.filter((m) => m.to.includes('pfade@family.example')).map((m) => m.subject)).toEqual([
      expect.stringMatching(/^Platzzusage/), expect.stringMatching(/^Abgesagt/),
    ]);

    const edition = await lot(t);
    const lotOffer = await createOffer(t, { edition: edition.uuid, maxParticipants: 1 });
    const family = await createAccount(t, { email: 'los@family.example' });
    const kid = await createParticipant(t, { account: family.uuid });
    await apply(t, lotOffer.uuid, kid.uuid);
    expect((await t.post(`/editions/${edition.uuid}/allocate`, { seed: 1 })).status).toBe(202);
    const m = await within('allocate then commit (notify)', 'los@family.example', () => t.post(`/editions/${edition.uuid}/commit`, { notify: true }));
    expect(m.subject).toMatch(/Platzvergabe/);
  });

  it('a burst of applications with notify (their send jobs folded per tenant, issue 25): every mail within seconds of the last answer', async () => {
    const e = await firstcome(t);
    const offers = await Promise.all([0, 1].map(() => createOffer(t, { edition: e.uuid, maxParticipants: 10 })));
    const children = await Promise.all(Array.from({ length: 30 }, (_, i) => createParticipant(t, { email: `burst${i}@family.example` })));
    const started = Date.now();
    const answers = await Promise.all(children.map((c, i) => t.post('/attendances', { offer: offers[i % 2]!.uuid, participant: c.uuid, notify: true })));
    expect(answers.map((r) => r.status)).toEqual(children.map(() => 201));
    const answered = Date.now();
    const mails = await smtp.waitFor(30, (m) => m.to.some((x) => x.startsWith('burst')), 10_000);
    const last = Math.max(...mails.map((m) => m.at));
    console.log(`[burst] 30 applications with notify answered in ${answered - started} ms; the last mail ${last - answered} ms after the last answer`);
    expect(last - answered).toBeLessThan(5_000);
    expect(new Set(mails.map((m) => m.messageId)).size).toBe(30);
  });
});
