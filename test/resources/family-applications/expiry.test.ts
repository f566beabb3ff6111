import { describe, expect, it } from 'vitest';
import { EXPIRED_REASON } from '../../../src/domain/family-expiry.js';
import type { RetryReason } from '../../../src/platform/db/attempts.js';
import { executorOf, poolGuardOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import { QUEUES } from '../../../src/platform/jobs/queue.js';
import { tenantsWithFamilyWork } from '../../../src/resources/attendances/family-expiry.js';
import { PDF } from '../../fixtures/files.js';
import { create as upload } from '../../factories/file.factory.js';
import { expectProblem, useHarness } from '../../harness/harness.js';
import { expectDenseSorting, list } from '../attendances/helpers.js';
import { familyBody, linkToken, mails, publishedOffer, submit, submitOk, websiteToken } from './helpers.js';

// D11, issue 21 item 4: links expire after 72 h; the `family-expiry` job (the handler the pg-boss worker runs)
// withdraws the applications still waiting for an expired link and deletes what the unconfirmed submission made
// (children, an account with nothing else) with their applications and answer files. A child that existed before
// keeps its application, withdrawn. The family may apply again for what expired (201, the application reused);
// any other application of the child for the offer is still a 409 naming the wish. The rule itself is
// src/domain/family-expiry.ts (test/domain/family-expiry.test.ts); here it runs through HTTP and the real job.
const { h, t } = useHarness();
const db = () => executorOf(h.orm);
const table = (name: string) => qualified(t.tenant.schema, name);

const confirm = (token: string, link: string) => t.post('/family-applications/confirm', { token: link }, { token });
const lastLink = async (recipient: string) => linkToken((await mails(h, t, 'family_confirmation')).filter((m) => m.recipient === recipient).at(-1)!.body);
const events = async (attendance: string) => (await sql<{ type: string; data: Record<string, unknown> }>`select type, data from ${table('event')}
  where data->>'attendance' = ${attendance} order by id`.execute(db())).rows.map((e) => [e.type, e.data.to ?? e.data.status, e.data.cause]);
const accountsWith = async (email: string) => (await sql<{ n: number }>`select count(*)::int as n from ${table('accounts')} where lower(email) = lower(${email})`.execute(db())).rows[0]!.n;
/** Moves the open links of the submission an application came with `hours` into the past (the other tests' links stay). */
async function age(attendance: string, hours: number): Promise<void> {
  await sql`update ${table('family_confirmations')} set expires_at = expires_at - make_interval(hours => ${hours})
    where submission_uuid = (select submission_uuid from ${table('attendances')} where uuid = ${attendance}::uuid)`.execute(db());
}
async function runExpiry(): Promise<void> {
  await h.jobs.send(QUEUES.familyExpiry, { tenant: t.slug });
  await h.jobs.drain();
}

describe('the expiry of an unconfirmed submission (72 h)', () => {
  it('a new child and a new account, nothing else: deleted with their applications and answer files; not before 72 h', async () => {
    const token = await websiteToken(t);
    const offer = await publishedOffer(t, { applicationQuestions: [{ label: 'Impfpass', type: 'file', required: false }] });
    const second = await publishedOffer(t);
    const file = await upload(t, { token, bytes: PDF, type: 'application/pdf' });
    const body = familyBody([[offer.uuid, second.uuid]]);
    body.participants[0].wishes[0].answers = { [offer.applicationQuestions![0].uuid]: file.uuid };
    const [a, b] = await submitOk(t, token, body);
    expect((await t.get(`/attendances/${a.uuid}`)).body.files).toHaveLength(1);

    await age(a.uuid, 71);
    await runExpiry();
    expect((await t.get(`/attendances/${a.uuid}`)).body.status).toBe('email_unconfirmed'); // 72 h not over yet
    await age(a.uuid, 2);
    expect(await tenantsWithFamilyWork(db(), [t.tenant])).toEqual([t.slug]);
    await runExpiry();

    for (const path of [`/attendances/${a.uuid}`, `/attendances/${b.uuid}`, `/participants/${a.participant!.uuid}`, `/accounts/${a.account!.uuid}`, `/files/${file.uuid}`]) {
      expectProblem(await t.request('GET', path), 404);
    }
    expect(await accountsWith(body.account.email)).toBe(0);
    expect((await sql<{ n: number }>`select count(*)::int as n from ${table('files')} where uuid = ${file.uuid}::uuid`.execute(db())).rows[0]!.n).toBe(0);
    // Each application reports its withdrawal and its deletion; the lists stay numbered 1..n.
    for (const x of [a, b]) {
      expect(await events(x.uuid)).toEqual([
        ['attendance.created', 'email_unconfirmed', undefined], ['attendance.status_changed', 'withdrawn', 'expiry'], ['attendance.deleted', 'withdrawn', undefined],
      ]);
    }
    expectDenseSorting(await list(t, offer.uuid));
    expect(await tenantsWithFamilyWork(db(), [t.tenant])).toEqual([]);
    // The same family applies again: a new account and child, as if it never had.
    const again = await submitOk(t, token, familyBody([[offer.uuid]], { email: body.account.email }));
    expect(again[0]).toMatchObject({ status: 'email_unconfirmed' });
    expect(again[0].participant!.uuid).not.toBe(a.participant!.uuid);
  });

  it('a child the team made before keeps its application, withdrawn (reason, event); the team\'s account stays; a new sibling goes', async () => {
    const token = await websiteToken(t);
    const offer = await publishedOffer(t, { maxParticipants: 3 });
    const email = `team-familie-${Date.now()}@example.org`;
    const account = (await t.post('/accounts', { email, firstname: 'Katrin', lastname: 'Müller' })).body;
    const emma = await t.post('/participants', { firstname: 'Emma', lastname: 'Müller', dateOfBirth: '2018-03-01', account: account.uuid });
    expect(emma.status, emma.text).toBe(201);
    const [known, sibling] = await submitOk(t, token, familyBody([[offer.uuid], [offer.uuid]], { email }));
    expect(known.participant!.uuid).toBe(emma.body.uuid);
    expect(sibling.participant!.uuid).not.toBe(emma.body.uuid);

    await age(known.uuid, 73);
    await runExpiry();

    const kept = await t.get(`/attendances/${known.uuid}`);
    expect(kept.status).toBe(200);
    expect(kept.body).toMatchObject({ status: 'withdrawn', decisionReason: EXPIRED_REASON, consentOutstanding: false, heldBack: false, createdByAdmin: false });
    expect(await events(known.uuid)).toEqual([['attendance.created', 'email_unconfirmed', undefined], ['attendance.status_changed', 'withdrawn', 'expiry']]);
    expect((await t.get(`/participants/${emma.body.uuid}`)).status).toBe(200);
    expect((await t.get(`/accounts/${account.uuid}`)).body.participants.map((p) => p.uuid)).toEqual([emma.body.uuid]);
    expectProblem(await t.get(`/participants/${sibling.participant!.uuid}`), 404);
    expectProblem(await t.get(`/attendances/${sibling.uuid}`), 404);
    const listed = await list(t, offer.uuid);
    expectDenseSorting(listed);
    expect(listed.map((x) => [x.uuid, x.status])).toEqual([[known.uuid, 'withdrawn']]);
    // Withdrawn, it holds no place and counts for no limit.
    expect((await t.get(`/offers/${offer.uuid}`)).body.vacancies).toBe(3);
  });

  it('a child of a confirmed family (another submission made it) keeps its application, withdrawn, and so does the account', async () => {
    const token = await websiteToken(t);
    const a = await publishedOffer(t);
    const b = await publishedOffer(t);
    const body = familyBody([[a.uuid]]);
    const [first] = await submitOk(t, token, body);
    expect((await confirm(token, await lastLink(body.account.email))).status).toBe(200);
    // A confirmed address applying again is e-mailed again; this time nobody clicks.
    const [later] = await submitOk(t, token, { ...body, participants: [{ ...body.participants[0], wishes: [{ offer: b.uuid }] }] });
    expect(later.participant!.uuid).toBe(first.participant!.uuid);
    await age(later.uuid, 73);
    await runExpiry();
    expect((await t.get(`/attendances/${later.uuid}`)).body).toMatchObject({ status: 'withdrawn', decisionReason: EXPIRED_REASON });
    expect((await t.get(`/attendances/${first.uuid}`)).body.status).toBe('confirmed');
    expect((await t.get(`/participants/${first.participant!.uuid}`)).status).toBe(200);
    expect((await t.get(`/accounts/${first.account!.uuid}`)).status).toBe(200);
  });

  it('an account with something else stays: a child the team added; a later submission still waiting (until it expires too)', async () => {
    const token = await websiteToken(t);
    const a = await publishedOffer(t);
    const b = await publishedOffer(t);
    // The team added a child to the account an unconfirmed submission made.
    const teamBody = familyBody([[a.uuid]]);
    const [x] = await submitOk(t, token, teamBody);
    const added = await t.post('/participants', { firstname: 'Ben', lastname: 'Müller', dateOfBirth: '2017-01-01', account: x.account!.uuid });
    expect(added.status, added.text).toBe(201);
    // A second family: its first submission expires while its second (another child) still waits.
    const body = familyBody([[a.uuid]]);
    const [first] = await submitOk(t, token, body);
    const [second] = await submitOk(t, token, { ...body, participants: [{ ...body.participants[0], firstname: 'Paul', wishes: [{ offer: b.uuid }] }] });
    expect(second.account!.uuid).toBe(first.account!.uuid);
    await age(x.uuid, 73);
    await age(first.uuid, 73);
    await runExpiry();

    expectProblem(await t.get(`/participants/${x.participant!.uuid}`), 404);
    expect((await t.get(`/accounts/${x.account!.uuid}`)).body.participants.map((p) => p.uuid)).toEqual([added.body.uuid]);
    expectProblem(await t.get(`/participants/${first.participant!.uuid}`), 404);
    expect((await t.get(`/attendances/${second.uuid}`)).body.status).toBe('email_unconfirmed');
    expect((await t.get(`/accounts/${first.account!.uuid}`)).body.participants.map((p) => p.uuid)).toEqual([second.participant!.uuid]);
    // The second submission expires too: now the account has nothing else and goes.
    await age(second.uuid, 73);
    await runExpiry();
    expectProblem(await t.get(`/participants/${second.participant!.uuid}`), 404);
    expectProblem(await t.get(`/accounts/${first.account!.uuid}`), 404);
    expect(await accountsWith(body.account.email)).toBe(0);
  });

  it('an expired consent withdraws that child\'s waiting applications and deletes nothing (the address is confirmed)', async () => {
    const token = await websiteToken(t);
    const offer = await publishedOffer(t);
    const body = familyBody([[offer.uuid], [offer.uuid]], { emailVerified: true, children: [{ guardianEmail: 'niemand@example.org' }] });
    const [teen, sibling] = await submitOk(t, token, body);
    expect(teen).toMatchObject({ status: 'consents_outstanding', consentOutstanding: true });
    expect(sibling.status).toBe('confirmed');
    await age(teen.uuid, 73);
    await runExpiry();
    expect((await t.get(`/attendances/${teen.uuid}`)).body).toMatchObject({ status: 'withdrawn', consentOutstanding: false, decisionReason: EXPIRED_REASON });
    expect(await events(teen.uuid)).toEqual([['attendance.created', 'consents_outstanding', undefined], ['attendance.status_changed', 'withdrawn', 'expiry']]);
    expect((await t.get(`/attendances/${sibling.uuid}`)).body.status).toBe('confirmed');
    expect((await t.get(`/participants/${teen.participant!.uuid}`)).status).toBe(200);
    expect((await t.get(`/accounts/${teen.account!.uuid}`)).status).toBe(200);
  });
});

describe('unused uploads', () => {
  it('the same job deletes an upload no application used within 24 h; a fresh one stays', async () => {
    const token = await websiteToken(t);
    const unused = await upload(t, { token });
    await sql`update ${table('files')} set created_at = now() - interval '25 hours' where uuid = ${unused.uuid}::uuid`.execute(db());
    const fresh = await upload(t, { token });
    expect(await tenantsWithFamilyWork(db(), [t.tenant])).toEqual([t.slug]);
    await runExpiry();
    expectProblem(await t.request('GET', `/files/${unused.uuid}`), 404);
    expect((await t.request('GET', `/files/${fresh.uuid}`)).status).toBe(200);
    expect(await tenantsWithFamilyWork(db(), [t.tenant])).toEqual([]);
  });
});

describe('applying again after the expiry', () => {
  it('the same child and offer: 201, the withdrawn application reused (same uuid, new submission, answers and files), confirmable', async () => {
    const token = await websiteToken(t);
    const offer = await publishedOffer(t, { maxParticipants: 2, applicationQuestions: [{ label: 'Impfpass', type: 'file', required: false }] });
    const question = offer.applicationQuestions![0].uuid;
    const email = `wieder-${Date.now()}@example.org`;
    const account = (await t.post('/accounts', { email, firstname: 'Katrin', lastname: 'Müller' })).body;
    await t.post('/participants', { firstname: 'Emma', lastname: 'Müller', dateOfBirth: '2018-03-01', account: account.uuid });
    const oldFile = await upload(t, { token, bytes: PDF, type: 'application/pdf' });
    const body = familyBody([[offer.uuid]], { email });
    body.participants[0].wishes[0].answers = { [question]: oldFile.uuid };
    const [expired] = await submitOk(t, token, body);
    // Someone else takes a place meanwhile, so the list has more than one row.
    const other = await submitOk(t, token, familyBody([[offer.uuid]], { emailVerified: true }));
    expect(other[0].status).toBe('confirmed');
    await age(expired.uuid, 73);
    await runExpiry();
    expect((await t.get(`/attendances/${expired.uuid}`)).body.status).toBe('withdrawn');

    const newFile = await upload(t, { token, bytes: PDF, type: 'application/pdf' });
    body.participants[0].wishes[0].answers = { [question]: newFile.uuid };
    const res = await submit(t, token, body);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual([expect.objectContaining({
      uuid: expired.uuid, status: 'email_unconfirmed', consentOutstanding: false, createdByAdmin: false, decisionReason: expect.stringMatching(/E-Mail-Adresse/),
    })]);
    expect((await t.get(`/attendances/${expired.uuid}`)).body.files.map((f) => f.uuid)).toEqual([newFile.uuid]);
    expectProblem(await t.request('GET', `/files/${oldFile.uuid}`), 404);
    const listed = await list(t, offer.uuid);
    expectDenseSorting(listed);
    expect(listed.map((x) => [x.uuid, x.status])).toEqual([[other[0].uuid, 'confirmed'], [expired.uuid, 'email_unconfirmed']]);
    expect(await events(expired.uuid)).toEqual([
      ['attendance.created', 'email_unconfirmed', undefined], ['attendance.status_changed', 'withdrawn', 'expiry'],
      ['attendance.status_changed', 'email_unconfirmed', 'reapplication'],
    ]);
    // The new link confirms it: the procedure decides as for any new application.
    const confirmed = await confirm(token, await lastLink(email));
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.body).toEqual([expect.objectContaining({ uuid: expired.uuid, status: 'confirmed' })]);
    // Now it is an application like any other: applying for it once more is a 409.
    expect(expectProblem(await submit(t, token, familyBody([[offer.uuid]], { email })), 409).detail).toMatch(/^participants\[0\]\.wishes\[0\]\.offer: Emma already applied for this offer \(application in state confirmed\)/);
  });

  it('vouched for by the website, the reused application is decided at once', async () => {
    const token = await websiteToken(t);
    const offer = await publishedOffer(t);
    const body = familyBody([[offer.uuid]]);
    const pre = await t.post('/accounts', { email: body.account.email, firstname: 'Katrin', lastname: 'Müller' });
    await t.post('/participants', { firstname: 'Emma', lastname: 'Müller', dateOfBirth: '2018-03-01', account: pre.body.uuid });
    const [expired] = await submitOk(t, token, body);
    await age(expired.uuid, 73);
    await runExpiry();
    const again = await submitOk(t, token, { ...body, emailVerified: true });
    expect(again).toEqual([expect.objectContaining({ uuid: expired.uuid, status: 'confirmed', payable: true })]);
    expect((await events(expired.uuid)).at(-1)).toEqual(['attendance.status_changed', 'confirmed', 'reapplication']);
    expectDenseSorting(await list(t, offer.uuid));
  });

  it('any other application of the child for the offer is 409 problem+json naming the wish, and nothing is saved', async () => {
    const token = await websiteToken(t);
    const a = await publishedOffer(t);
    const b = await publishedOffer(t);
    const c = await publishedOffer(t);
    const email = `doppelt-${Date.now()}@example.org`;
    const account = (await t.post('/accounts', { email, firstname: 'Katrin', lastname: 'Müller' })).body;
    const emma = (await t.post('/participants', { firstname: 'Emma', lastname: 'Müller', dateOfBirth: '2018-03-01', account: account.uuid })).body;
    // Withdrawn by the team (not by an expiry), and one still waiting for its confirmation.
    const byTeam = await t.post('/attendances', { offer: a.uuid, participant: emma.uuid });
    expect(byTeam.status, byTeam.text).toBe(201);
    expect((await t.post(`/attendances/${byTeam.body.uuid}/transition`, { transition: 'withdraw' })).body.status).toBe('withdrawn');
    const [waiting] = await submitOk(t, token, familyBody([[b.uuid]], { email }));
    const count = async () => (await sql<{ n: number }>`select count(*)::int as n from ${table('attendances')} where participant_uuid = ${emma.uuid}::uuid`.execute(db())).rows[0]!.n;
    const before = await count();
    for (const [offer, state] of [[a.uuid, 'withdrawn'], [b.uuid, 'email_unconfirmed']] as const) {
      const res = await submit(t, token, familyBody([[c.uuid, offer]], { email }));
      const p = expectProblem(res, 409);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(p.detail).toBe(`participants[0].wishes[1].offer: Emma already applied for this offer (application in state ${state}); nothing of this request was saved.`);
    }
    expect(await count()).toBe(before);
    expect((await t.get(`/attendances/${waiting.uuid}`)).body.status).toBe('email_unconfirmed');
  });
});

describe('locks', () => {
  it('the job and the same families\' new submissions and confirmations at once: no 5xx, no deadlock, each family whole', { timeout: 120_000 }, async () => {
    const token = await websiteToken(t, 100_000);
    const a = await publishedOffer(t, { maxParticipants: 500 });
    const b = await publishedOffer(t, { maxParticipants: 500 });
    const families = [];
    for (let i = 0; i < 12; i++) {
      const body = familyBody([[a.uuid]], { email: `lock-${i}-${Date.now()}@example.org` });
      const [expiring] = await submitOk(t, token, body);
      // Every other family also has a newer submission (another child) whose link is confirmed meanwhile.
      const newer = i % 2 === 0 ? (await submitOk(t, token, { ...body, participants: [{ ...body.participants[0], firstname: 'Mia', wishes: [{ offer: b.uuid }] }] }))[0] : null;
      const link = newer ? await lastLink(body.account.email) : null;
      await age(expiring.uuid, 73);
      families.push({ body, expiring, newer, link });
    }
    const retries: RetryReason[] = [];
    poolGuardOf(h.orm)!.on({ retried: (_schema, reason) => retries.push(reason) });
    await h.jobs.send(QUEUES.familyExpiry, { tenant: t.slug });
    const [, submitted, confirmed] = await Promise.all([
      h.jobs.drain(),
      Promise.all(families.map((f) => submit(t, token, { ...f.body, participants: [{ ...f.body.participants[0], wishes: [{ offer: b.uuid }] }] }))),
      Promise.all(families.filter((f) => f.link).map((f) => confirm(token, f.link!))),
    ]);
    for (const r of submitted) expect(r.status, r.text).toBe(201);
    for (const r of confirmed) expect(r.status, r.text).toBe(200);
    expect(retries.filter((r) => r === 'deadlock')).toEqual([]);
    await runExpiry();
    for (const f of families) {
      // The expired application: withdrawn (the family's new one came first and kept the child) or gone with its child.
      const old = await t.get(`/attendances/${f.expiring.uuid}`);
      if (old.status === 200) expect(old.body).toMatchObject({ status: 'withdrawn', decisionReason: EXPIRED_REASON });
      else expectProblem(old, 404);
      expect(await accountsWith(f.body.account.email)).toBe(1);
      if (f.newer) expect((await t.get(`/attendances/${f.newer.uuid}`)).body.status).toBe('confirmed');
    }
    for (const o of [a, b]) expectDenseSorting(await list(t, o.uuid));
  });
});
