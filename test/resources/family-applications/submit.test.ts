import { describe, expect, it } from 'vitest';
import { expectProblem, useHarness } from '../../harness/harness.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import { RULE_CODES } from '../../../src/domain/errors.js';
import { PDF } from '../../fixtures/files.js';
import { create as upload } from '../../factories/file.factory.js';
import { familyBody, mails, publishedOffer, submit, submitOk, websiteToken, type FamilyBody } from './helpers.js';

// D11, issue 21 items 1-3 and "Bad input and faults": a family's own application through the website token,
// all or nothing, each rule of a wish a 422 naming the wish, an existing application a 409.
const { h, t } = useHarness();

const count = async (table: 'accounts' | 'participants' | 'attendances' | 'family_submissions' | 'outbox' | 'event') =>
  (await sql<{ n: number }>`select count(*)::int as n from ${qualified(t.tenant.schema, table)}`.execute(executorOf(h.orm))).rows[0]!.n;
const state = async () => Promise.all((['accounts', 'participants', 'attendances', 'family_submissions', 'outbox', 'event'] as const).map(count));

/** A refused request: the problem, and nothing stored. */
async function refused(token: string, body: unknown, status: number) {
  const before = await state();
  const p = expectProblem(await submit(t, token, body), status);
  expect(await state(), 'nothing may be stored by a refused request').toEqual(before);
  return p;
}

describe('one request per family (item 2)', () => {
  it('201 with the applications it made: email_unconfirmed, createdByAdmin false, holding no place; the confirmation mail queued', async () => {
    const token = await websiteToken(t);
    const a = await publishedOffer(t, { maxParticipants: 1 });
    const b = await publishedOffer(t);
    const body = familyBody([[a.uuid, b.uuid], [a.uuid]]);
    const apps = await submitOk(t, token, body);
    expect(apps).toHaveLength(3);
    for (const x of apps) expect(x).toMatchObject({ status: 'email_unconfirmed', createdByAdmin: false, consentOutstanding: false, heldBack: false, payable: false });
    expect(apps.map((x) => x.offer.uuid)).toEqual([a.uuid, b.uuid, a.uuid]);
    // Spec 2.2 transitions: the team may still withdraw it.
    expect(apps[0].transitions).toContain('withdraw');
    // Waiting, they stand at the end of the participant list, numbered on (D10 sorting).
    const { list, expectDenseSorting } = await import('../attendances/helpers.js');
    const listed = await list(t, a.uuid);
    expectDenseSorting(listed);
    expect(listed.map((x) => x.uuid)).toEqual([apps[0].uuid, apps[2].uuid]);
    // Unconfirmed applications hold no place: the offer of one place still has it.
    expect((await t.get(`/offers/${a.uuid}`)).body).toMatchObject({ vacancies: 1, fullyBooked: false });
    const admin = await t.get(`/attendances/${apps[0].uuid}`);
    expect(admin.body).toMatchObject({ participant: { name: 'Emma Müller' }, account: { name: 'Katrin Müller' }, decisionReason: expect.stringMatching(/E-Mail-Adresse/) });
    const account = (await t.get(`/accounts?q=${encodeURIComponent(body.account.email)}`)).body[0];
    expect(account).toMatchObject({ email: body.account.email, firstname: 'Katrin', lastname: 'Müller', phone: '0170 1234567', city: 'Musterstadt' });
    expect(account.participants).toHaveLength(2);
    const m = (await mails(h, t, 'family_confirmation')).at(-1)!;
    expect(m.recipient).toBe(body.account.email);
    expect(m.subject).toContain('Bitte bestätigen Sie Ihre Anmeldung');
    expect(m.body).toMatch(new RegExp(`https://${t.host}/anmeldung/bestaetigen/[1-9A-HJ-NP-Za-km-z]{30,}`));
    expect(m.body).toContain(`„${a.name}“`);
  });

  it('the same family again adds wishes to the same account and children; a child already applied for an offer is 409 naming the wish', async () => {
    const token = await websiteToken(t);
    const a = await publishedOffer(t);
    const b = await publishedOffer(t);
    const body = familyBody([[a.uuid]]);
    const first = await submitOk(t, token, body);
    const again = await submitOk(t, token, { ...body, account: { ...body.account, email: body.account.email!.toUpperCase(), firstname: 'Fremd' }, participants: [{ ...body.participants[0], firstname: ' emma ', wishes: [{ offer: b.uuid }] }] });
    expect(again[0].participant!.uuid).toBe(first[0].participant!.uuid);
    expect(again[0].account!.uuid).toBe(first[0].account!.uuid);
    // An unverified request never changes the family's data.
    expect((await t.get(`/accounts/${first[0].account!.uuid}`)).body.firstname).toBe('Katrin');
    // Another birth date is another child.
    const sibling = await submitOk(t, token, { ...body, participants: [{ ...body.participants[0], dateOfBirth: '2019-01-01', wishes: [{ offer: a.uuid }] }] });
    expect(sibling[0].participant!.uuid).not.toBe(first[0].participant!.uuid);
    const p = await refused(token, { ...body, participants: [{ ...body.participants[0], wishes: [{ offer: b.uuid }, { offer: a.uuid }] }] }, 409);
    expect(p.detail).toMatch(/^participants\[0\]\.wishes\[0\]\.offer: Emma already applied/);
  });

  it('guardianEmail other than the account\'s: consents_outstanding after confirmation; both outstanding at once meanwhile', async () => {
    const token = await websiteToken(t);
    const a = await publishedOffer(t);
    const body = familyBody([[a.uuid], [a.uuid]], { children: [{ guardianEmail: 'papa@example.org' }, { guardianEmail: 'ANOTHER@example.org' }] });
    body.participants[1].guardianEmail = body.account.email.toUpperCase();
    const apps = await submitOk(t, token, body);
    expect(apps[0]).toMatchObject({ status: 'email_unconfirmed', consentOutstanding: true });
    expect(apps[1]).toMatchObject({ status: 'email_unconfirmed', consentOutstanding: false });
    // No mail to the guardian before the family proved its address.
    expect((await mails(h, t, 'guardian_consent')).filter((m) => m.recipient === 'papa@example.org')).toEqual([]);
  });

  it('emailVerified: the website answers for the address; the procedure decides at once and the family is told', async () => {
    const token = await websiteToken(t);
    const a = await publishedOffer(t, { maxParticipants: 1 });
    const [first] = await submitOk(t, token, familyBody([[a.uuid]], { emailVerified: true }));
    const [second] = await submitOk(t, token, familyBody([[a.uuid]], { emailVerified: true }));
    expect(first).toMatchObject({ status: 'confirmed', decisionReason: 'Anmeldung nach Eingang: ein Platz war frei' });
    expect(second).toMatchObject({ status: 'waitlisted' });
    expect(first.sorting).toBe(1);
    const m = (await mails(h, t, 'family_application_state')).at(-1)!;
    expect(m.body).toContain(`„${a.name}“: auf der Warteliste`);
    expect(await mails(h, t, 'family_confirmation').then((x) => x.filter((y) => y.payload.submission === undefined))).toEqual([]);
  });
});

describe('the rules of a wish (item 3): each a 422 naming the wish, nothing stored', () => {
  const QUESTIONS = [
    { label: 'Kann schwimmen', type: 'yn', required: true },
    { label: 'Allergien', type: 'txt', required: false },
    { label: 'Impfpass', type: 'file', required: false },
  ];

  async function violationOf(offer: { uuid: string }, wish: Record<string, unknown> = {}, child: Record<string, unknown> = {}, token?: string) {
    const tok = token ?? (await websiteToken(t));
    const ok = await publishedOffer(t);
    const body = familyBody([[ok.uuid, offer.uuid]], { children: [child] });
    Object.assign(body.participants[0].wishes[1], wish);
    const p = await refused(tok, body, 422);
    return p;
  }

  it.each([
    ['a draft offer (not visible to the public)', async () => (await import('../../factories/offer.factory.js')).create(t), 'notOpen'],
    ['a private-link offer', () => publishedOffer(t, { publish: 'private_link' }), 'notOpen'],
    ['an offer of an edition that is offline', () => publishedOffer(t, {}, { online: false }), 'notOpen'],
    ['an offer that needs no application', () => publishedOffer(t, { requiresApplication: false }), 'notOpen'],
    ['an offer without online application', () => publishedOffer(t, { onlineApplication: false }), 'notOpen'],
    ['an offer whose deadline passed', () => publishedOffer(t, { applicationDeadline: '2026-01-01T00:00:00+01:00' }), 'deadlinePassed'],
    ['an edition outside its application phase', () => publishedOffer(t, {}, { tasks: [{ type: 'application_system', title: 'Anmeldung', begin: '2099-01-01T00:00:00+01:00', end: '2099-02-01T00:00:00+01:00', applicationSystem: 'firstcome' }] }), 'outsidePhase'],
    ['a child too young for the offer', () => publishedOffer(t, { minAge: 12, maxAge: 14 }), 'ageLimit'],
    ['a child too old for the offer', () => publishedOffer(t, { minAge: 3, maxAge: 6 }), 'ageLimit'],
  ])('%s', async (_, make, rule) => {
    const offer = await make();
    const p = await violationOf(offer);
    expect(p.violations).toEqual([expect.objectContaining({ propertyPath: 'participants[0].wishes[1].offer', code: RULE_CODES[rule as keyof typeof RULE_CODES] })]);
    expect(p.detail).toMatch(/^participants\[0\]\.wishes\[1\]\.offer: /);
  });

  it('a cancelled offer', async () => {
    const offer = await publishedOffer(t);
    expect((await t.post(`/offers/${offer.uuid}/transition`, { transition: 'cancel' })).status).toBe(200);
    expect((await violationOf(offer)).violations?.[0]?.code).toBe(RULE_CODES.notOpen);
  });

  it('an unknown offer and an offer of another municipality name the wish too', async () => {
    const other = await h.tenant();
    const foreign = await publishedOffer(other);
    for (const uuid of ['00000000-0000-4000-8000-000000000000', foreign.uuid]) {
      const p = await violationOf({ uuid });
      expect(p.violations).toEqual([expect.objectContaining({ propertyPath: 'participants[0].wishes[1].offer', code: RULE_CODES.identifier })]);
      expect(p.detail).not.toContain(foreign.name);
    }
  });

  it('maxApplications of the running phase counts the child\'s applications and this request\'s wishes', async () => {
    const tasks = [{ type: 'application_system', title: 'Anmeldung', begin: '2026-01-01T00:00:00+01:00', end: '2099-01-01T00:00:00+01:00', applicationSystem: 'firstcome', maxApplications: 2 }];
    const edition = (await (await import('../../factories/edition.factory.js')).create(t, { procedure: 'firstcome', tasks })).uuid;
    const offers = [];
    for (let i = 0; i < 3; i++) offers.push(await publishedOffer(t, { edition }));
    const token = await websiteToken(t);
    const p = await refused(token, familyBody([offers.map((o) => o.uuid)]), 422);
    expect(p.violations).toEqual([expect.objectContaining({ propertyPath: 'participants[0].wishes[2].offer', code: RULE_CODES.applicationLimit })]);
    const body = familyBody([[offers[0].uuid]]);
    await submitOk(t, token, body);
    const again = await refused(token, { ...body, participants: [{ ...body.participants[0], wishes: [{ offer: offers[1].uuid }, { offer: offers[2].uuid }] }] }, 422);
    expect(again.violations?.[0]?.propertyPath).toBe('participants[0].wishes[1].offer');
  });

  it('every required question answered, each answer of its type; unknown questions refused', async () => {
    const offer = await publishedOffer(t, { applicationQuestions: QUESTIONS });
    const [swim, allergies] = offer.applicationQuestions!;
    const missing = await violationOf(offer, { answers: { [allergies.uuid]: 'Nüsse' } });
    expect(missing.violations).toEqual([expect.objectContaining({ propertyPath: `participants[0].wishes[1].answers.${swim.uuid}`, code: RULE_CODES.required })]);
    const wrongType = await violationOf(offer, { answers: { [swim.uuid]: 'ja', [allergies.uuid]: 5 } });
    expect(wrongType.violations?.map((v) => [v.propertyPath.split('.').at(-1), v.code])).toEqual([
      [swim.uuid, RULE_CODES.type], [allergies.uuid, RULE_CODES.type], [swim.uuid, RULE_CODES.required],
    ]);
    const unknown = await violationOf(offer, { answers: { [swim.uuid]: true, '11111111-1111-4111-8111-111111111111': 'x' } });
    expect(unknown.violations).toEqual([expect.objectContaining({ propertyPath: 'participants[0].wishes[1].answers.11111111-1111-4111-8111-111111111111', code: RULE_CODES.choice })]);
    const token = await websiteToken(t);
    const ok = await submitOk(t, token, { ...familyBody([[offer.uuid]]), participants: [{ ...familyBody([[offer.uuid]]).participants[0], wishes: [{ offer: offer.uuid, answers: { [swim.uuid]: true, [allergies.uuid]: 'Nüsse' }, userPriority: -3 }] }] });
    expect(ok[0].answers).toEqual([
      { question: swim.uuid, label: 'Kann schwimmen', type: 'yn', answer: true },
      { question: allergies.uuid, label: 'Allergien', type: 'txt', answer: 'Nüsse' },
    ]);
    expect(ok[0].userPriority).toBe(0);
  });

  it('a file answer names an upload of the same token that no application uses; it becomes the application\'s file', async () => {
    const offer = await publishedOffer(t, { applicationQuestions: QUESTIONS });
    const [swim, , pass] = offer.applicationQuestions!;
    const token = await websiteToken(t);
    const other = await websiteToken(t);
    const mine = await upload(t, { token, bytes: PDF, type: 'application/pdf', name: 'impfpass.pdf' });
    const theirs = await upload(t, { token: other });
    const byAdmin = await upload(t);
    for (const file of [theirs, byAdmin, { uuid: '00000000-0000-4000-8000-000000000000' }]) {
      const p = await violationOf(offer, { answers: { [swim.uuid]: true, [pass.uuid]: file.uuid } }, {}, token);
      expect(p.violations).toEqual([expect.objectContaining({ propertyPath: `participants[0].wishes[1].answers.${pass.uuid}`, code: RULE_CODES.fileUnavailable })]);
    }
    const body = familyBody([[offer.uuid]]);
    body.participants[0].wishes[0].answers = { [swim.uuid]: true, [pass.uuid]: mine.uuid };
    const [app] = await submitOk(t, token, body);
    expect(app.files).toEqual([{ uuid: mine.uuid, question: pass.uuid, name: 'impfpass.pdf', mimeType: 'application/pdf', size: PDF.length }]);
    const read = await t.request('GET', `/files/${mine.uuid}`);
    expect(read.status).toBe(200);
    expect(read.text).toBe(PDF.toString('utf8'));
    // Used now: a second application cannot name it.
    const p = await violationOf(offer, { answers: { [swim.uuid]: true, [pass.uuid]: mine.uuid } }, {}, token);
    expect(p.violations?.[0]?.code).toBe(RULE_CODES.fileUnavailable);
  });

  it('one bad wish among good ones refuses the request: all or nothing, every violation named', async () => {
    const good = await publishedOffer(t);
    const old = await publishedOffer(t, { minAge: 0, maxAge: 3 });
    const token = await websiteToken(t);
    const p = await refused(token, familyBody([[good.uuid], [good.uuid, old.uuid]]), 422);
    expect(p.violations?.map((v) => v.propertyPath)).toEqual(['participants[1].wishes[1].offer']);
  });
});

describe('bad input and faults', () => {
  it.each([
    ['no participants', (b: FamilyBody) => { b.participants = []; }, 'participants'],
    ['a child without wishes', (b: FamilyBody) => { b.participants[0].wishes = []; }, 'participants[0].wishes'],
    ['a birth date in the future', (b: FamilyBody) => { b.participants[0].dateOfBirth = '2099-01-01'; }, 'participants[0].dateOfBirth'],
    ['a birth date that is none', (b: FamilyBody) => { b.participants[0].dateOfBirth = '2019-02-30'; }, 'participants[0].dateOfBirth'],
    ['a malformed offer id', (b: FamilyBody) => { b.participants[0].wishes[0].offer = 'x'; }, 'participants[0].wishes[0].offer'],
    ['no e-mail address', (b: FamilyBody) => { b.account.email = 'nobody'; }, 'account.email'],
    ['a guardian address that is none', (b: FamilyBody) => { b.participants[0].guardianEmail = 'mama'; }, 'participants[0].guardianEmail'],
    ['an empty first name', (b: FamilyBody) => { b.participants[0].firstname = '  '; }, 'participants[0].firstname'],
    ['thousands of wishes', (b: FamilyBody) => { b.participants[0].wishes = Array.from({ length: 2000 }, () => ({ offer: b.participants[0].wishes[0].offer })); }, 'participants[0].wishes'],
    ['too many children', (b: FamilyBody) => { b.participants = Array.from({ length: 13 }, (_, i) => ({ ...b.participants[0], dateOfBirth: `2015-01-${String(i + 1).padStart(2, '0')}` })); }, 'participants'],
    ['the same child twice', (b: FamilyBody) => { b.participants = [b.participants[0], { ...b.participants[0] }]; }, 'participants[1]'],
    ['the same offer twice for a child', (b: FamilyBody) => { b.participants[0].wishes = [b.participants[0].wishes[0], b.participants[0].wishes[0]]; }, 'participants[0].wishes[1].offer'],
  ])('%s: 422 naming %s', async (_, spoil, path) => {
    const offer = await publishedOffer(t);
    const body = familyBody([[offer.uuid]]);
    spoil(body);
    const p = await refused(await websiteToken(t), body, 422);
    expect(p.violations?.map((v) => v.propertyPath)).toContain(path);
  });

  it('only website tokens: admins and organisers 403, anonymous 401, a read-only website token 403', async () => {
    const offer = await publishedOffer(t);
    const body = familyBody([[offer.uuid]]);
    await refused(t.adminToken, body, 403);
    await refused(await t.token({ role: 'website', access: 'read' }), body, 403);
    const res = await t.post('/family-applications', body, { token: null });
    expectProblem(res, 401);
  });
});
