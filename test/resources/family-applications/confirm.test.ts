import { describe, expect, it } from 'vitest';
import { expectProblem, useHarness } from '../../harness/harness.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import { SCRUBBED_BODY } from '../../../src/platform/mail/outbox.js';
import { list } from '../attendances/helpers.js';
import { ageLinks, familyBody, linkToken, mails, publishedOffer, submitOk, websiteToken } from './helpers.js';

// D11, issue 21 items 4 and 5: the e-mail confirmation (double opt-in) and the guardian's consent, their
// single-use links (404 for any wrong, used or expired one), first come first served in the order of
// confirmation. The expiry job that withdraws and cleans up: expiry.test.ts.
const { h, t } = useHarness();

const confirm = (token: string, link: string) => t.post('/family-applications/confirm', { token: link }, { token });
const consent = (token: string, link: string) => t.post('/family-applications/consent', { token: link }, { token });
const lastLink = async (recipient: string, kind = 'family_confirmation', path: 'bestaetigen' | 'einwilligen' = 'bestaetigen') =>
  linkToken((await mails(h, t, kind)).filter((m) => m.recipient === recipient).at(-1)!.body, path);
const events = async (attendance: string) => (await sql<{ type: string; data: Record<string, unknown> }>`select type, data from ${qualified(t.tenant.schema, 'event')}
  where data->>'attendance' = ${attendance} order by id`.execute(executorOf(h.orm))).rows;

describe('e-mail confirmation (item 4)', () => {
  it('confirming applies await_email: the procedure decides, in the order of confirmation, not of application', async () => {
    const token = await websiteToken(t);
    const offer = await publishedOffer(t, { maxParticipants: 1 });
    const early = familyBody([[offer.uuid]]);
    const late = familyBody([[offer.uuid]]);
    const [a] = await submitOk(t, token, early);
    const [b] = await submitOk(t, token, late);
    // Unconfirmed applications hold no place, whoever came first.
    expect((await t.get(`/offers/${offer.uuid}`)).body.vacancies).toBe(1);
    const second = await confirm(token, await lastLink(late.account.email));
    expect(second.status, second.text).toBe(200);
    expect(second.body).toEqual([expect.objectContaining({ uuid: b.uuid, status: 'confirmed', decisionReason: 'Anmeldung nach Eingang: ein Platz war frei' })]);
    const first = await confirm(token, await lastLink(early.account.email));
    expect(first.body).toEqual([expect.objectContaining({ uuid: a.uuid, status: 'waitlisted' })]);
    expect((await list(t, offer.uuid)).map((x) => [x.uuid, x.status, x.sorting])).toEqual([[b.uuid, 'confirmed', 1], [a.uuid, 'waitlisted', 2]]);
    // The place is charged (D8) and the family is told where it stands.
    expect((await t.get(`/attendances/${b.uuid}`)).body).toMatchObject({ payable: true, confirmedAt: expect.any(String) });
    const told = (await mails(h, t, 'family_application_state')).filter((m) => m.recipient === late.account.email);
    expect(told.at(-1)?.body).toContain(`„${offer.name}“: Platz erhalten (Teilnahmebeitrag 5,00 €)`);
    // Events: created as email_unconfirmed, then the await_email decision.
    expect((await events(b.uuid)).map((e) => [e.type, e.data.status ?? e.data.to, e.data.cause])).toEqual([
      ['attendance.created', 'email_unconfirmed', undefined], ['attendance.status_changed', 'confirmed', 'await_email'],
    ]);
  });

  it('in a lot edition a confirmed application waits for the draw', async () => {
    const token = await websiteToken(t);
    const offer = await publishedOffer(t, {}, { procedure: 'lot' });
    const body = familyBody([[offer.uuid]]);
    await submitOk(t, token, body);
    const res = await confirm(token, await lastLink(body.account.email));
    expect(res.body[0]).toMatchObject({ status: 'waiting', decisionReason: 'Losverfahren: wartet auf die Platzvergabe' });
  });

  it('a wrong, used or expired token: one answer for all (404); only website tokens may confirm', async () => {
    const token = await websiteToken(t);
    const offer = await publishedOffer(t);
    const body = familyBody([[offer.uuid]]);
    await submitOk(t, token, body);
    const link = await lastLink(body.account.email);
    const bodies = [];
    for (const wrong of ['nope', `${link}x`, link.slice(0, -1), 'x'.repeat(200)]) bodies.push(expectProblem(await confirm(token, wrong), 404));
    expectProblem(await confirm(t.adminToken, link), 403);
    expect((await confirm(token, link)).status).toBe(200);
    bodies.push(expectProblem(await confirm(token, link), 404));
    // A consent link is no confirmation link.
    const expired = familyBody([[offer.uuid]]);
    await submitOk(t, token, expired);
    const old = await lastLink(expired.account.email);
    await ageLinks(h, t, 73);
    bodies.push(expectProblem(await confirm(token, old), 404));
    expect(new Set(bodies.map((b) => `${b.type} ${b.title} ${b.detail}`)).size).toBe(1);
    expectProblem(await t.post('/family-applications/confirm', {}, { token }), 422);
  });

  it('concurrent uses of one link: one wins', async () => {
    const token = await websiteToken(t);
    const offer = await publishedOffer(t);
    const body = familyBody([[offer.uuid]]);
    await submitOk(t, token, body);
    const link = await lastLink(body.account.email);
    const results = await Promise.all([1, 2, 3, 4].map(() => confirm(token, link)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 404, 404, 404]);
  });

  it('the link lives only as a hash; the mail\'s text is scrubbed once sent', async () => {
    const token = await websiteToken(t);
    const offer = await publishedOffer(t);
    const body = familyBody([[offer.uuid]]);
    await submitOk(t, token, body);
    const mail = (await mails(h, t, 'family_confirmation')).filter((m) => m.recipient === body.account.email).at(-1)!;
    const link = linkToken(mail.body);
    const stored = await sql<{ n: number }>`select count(*)::int as n from ${qualified(t.tenant.schema, 'family_confirmations')}
      where position(convert_to(${link}, 'UTF8') in token_hash) > 0`.execute(executorOf(h.orm));
    expect(stored.rows[0]!.n).toBe(0);
    const { dispatchOutbox } = await import('../../../src/platform/mail/outbox.js');
    await dispatchOutbox(executorOf(h.orm), t.tenant, { send: async () => {}, close: () => {} });
    const sent = (await mails(h, t, 'family_confirmation')).find((m) => m.uuid === mail.uuid)!;
    expect(sent.sentAt).not.toBeNull();
    expect(sent.body).toBe(SCRUBBED_BODY);
  });
});

describe('guardian consent (item 5)', () => {
  it('both outstanding at once; the consent mail after the confirmation; consent applies await_consents; either order', async () => {
    const token = await websiteToken(t);
    const offer = await publishedOffer(t, { maxParticipants: 5 });
    const body = familyBody([[offer.uuid]], { children: [{ guardianEmail: 'vormund@example.org' }] });
    const [a] = await submitOk(t, token, body);
    expect(a).toMatchObject({ status: 'email_unconfirmed', consentOutstanding: true });
    const confirmed = await confirm(token, await lastLink(body.account.email));
    expect(confirmed.body[0]).toMatchObject({ status: 'consents_outstanding', consentOutstanding: true, decisionReason: expect.stringMatching(/Einverständnis/) });
    const m = (await mails(h, t, 'guardian_consent')).filter((x) => x.recipient === 'vormund@example.org').at(-1)!;
    expect(m.body).toContain('Katrin Müller hat Emma Müller');
    expect(m.body).toContain(`„${offer.name}“`);
    const given = await consent(token, linkToken(m.body, 'einwilligen'));
    expect(given.status, given.text).toBe(200);
    expect(given.body[0]).toMatchObject({ uuid: a.uuid, status: 'confirmed', consentOutstanding: false });
    expect((await events(a.uuid)).map((e) => [e.data.to ?? e.data.status, e.data.cause])).toEqual([
      ['email_unconfirmed', undefined], ['consents_outstanding', 'await_email'], ['confirmed', 'await_consents'],
    ]);
    expectProblem(await consent(token, linkToken(m.body, 'einwilligen')), 404);
    expectProblem(await confirm(token, linkToken(m.body, 'einwilligen')), 404);
  });

  it('a consent given before the address is confirmed leaves email_unconfirmed until it is (website-verified family)', async () => {
    const token = await websiteToken(t);
    const offer = await publishedOffer(t);
    const body = familyBody([[offer.uuid], [offer.uuid]], { emailVerified: true, children: [{ guardianEmail: 'oma@example.org' }] });
    const [child, sibling] = await submitOk(t, token, body);
    expect(child).toMatchObject({ status: 'consents_outstanding', consentOutstanding: true });
    expect(sibling).toMatchObject({ status: 'confirmed', consentOutstanding: false });
    const res = await consent(token, await lastLink('oma@example.org', 'guardian_consent', 'einwilligen'));
    expect(res.body).toEqual([expect.objectContaining({ uuid: child.uuid, status: 'confirmed' })]);
  });
});
