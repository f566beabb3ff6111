import { beforeAll, describe, expect, it } from 'vitest';
import { create as uploadFile } from '../../factories/file.factory.js';
import { expectProblem, useHarness, type Schema } from '../../harness/harness.js';
import { uuidToBase58 } from '../../../src/platform/http/ids.js';
import { createOffer, createOrganiser, firstcome, lot, newApplication, setColumns, transitionOk } from './helpers.js';

// PATCH /attendances/{uuid} (spec 4.3 "Update", 8; D10 payable and answers).
let edition: Schema<'Edition'>;
let offer: Schema<'Offer'>;
let q: Record<'yn' | 'int' | 'txt' | 'file', string>;

const { h, t } = useHarness();
beforeAll(async () => {
  edition = await firstcome(t);
  offer = await createOffer(t, {
    edition: edition.uuid, fee: 1500, maxParticipants: null,
    applicationQuestions: [
      { label: 'Schwimmer?', type: 'yn', required: true },
      { label: 'Alter', type: 'int' },
      { label: 'Allergien', type: 'txt' },
      { label: 'Attest', type: 'file' },
    ],
  });
  const byType = Object.fromEntries(offer.applicationQuestions!.map((x) => [x.type, x.uuid]));
  q = byType as typeof q;
});

const patch = (uuid: string, body: unknown, token?: string) => t.patch(`/attendances/${uuid}`, body, token ? { token } : {});

describe('payable', () => {
  it('false removes it from the open payments; true makes it due again', async () => {
    const a = await newApplication(t, offer.uuid);
    expect(a.payable).toBe(true);
    const off = await patch(a.uuid, { payable: false });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ payable: false, status: 'confirmed' });
    expect((await t.get(`/attendances?payable=true&participant=${a.participant!.uuid}`)).body).toEqual([]);
    expect((await patch(a.uuid, { payable: true })).body.payable).toBe(true);
  });

  it('false on a paid application is 409', async () => {
    const a = await newApplication(t, offer.uuid);
    await setColumns(h, t, a.uuid, { paid: true });
    const p = expectProblem(await patch(a.uuid, { payable: false }), 409);
    expect(p.detail).toMatch(/receipt/);
    expect((await t.get(`/attendances/${a.uuid}`)).body.payable).toBe(true);
  });

  it('true where it cannot be due (not confirmed, held back, free) is 422', async () => {
    const waitlisted = await newApplication(t, offer.uuid, { status: 'waitlisted' });
    expectProblem(await patch(waitlisted.uuid, { payable: true }), 422);
    const held = await newApplication(t, offer.uuid, { commit: false });
    expectProblem(await patch(held.uuid, { payable: true }), 422);
    const free = await createOffer(t, { edition: edition.uuid, fee: 0 });
    const f = await newApplication(t, free.uuid);
    expectProblem(await patch(f.uuid, { payable: true }), 422);
  });

  it('a switched-off application stays non-payable across transitions until switched on', async () => {
    const a = await newApplication(t, offer.uuid);
    await patch(a.uuid, { payable: false });
    await transitionOk(t, a.uuid, 'waitlist');
    expect((await transitionOk(t, a.uuid, 'confirm')).payable).toBe(false);
  });
});

describe('allAlternateDates and userPriority', () => {
  it('sets allAlternateDates; userPriority negative becomes 0, null clears', async () => {
    const a = await newApplication(t, offer.uuid);
    expect((await patch(a.uuid, { allAlternateDates: false })).body.allAlternateDates).toBe(false);
    expect((await patch(a.uuid, { userPriority: 3 })).body.userPriority).toBe(3);
    expect((await patch(a.uuid, { userPriority: -5 })).body.userPriority).toBe(0);
    const cleared = (await patch(a.uuid, { userPriority: null })).body;
    expect(cleared).not.toHaveProperty('userPriority');
    expect(cleared.allAlternateDates).toBe(false);
  });

  it('userPriority: "high" or 1.5 is 422 naming the field', async () => {
    const a = await newApplication(t, offer.uuid);
    for (const value of ['high', 1.5]) {
      const p = expectProblem(await patch(a.uuid, { userPriority: value }), 422);
      expect(p.violations?.map((v) => v.propertyPath)).toEqual(['userPriority']);
    }
  });
});

describe('answers', () => {
  it('validates against the offer’s questions and returns them with label and type, in question order', async () => {
    const a = await newApplication(t, offer.uuid);
    // Issue 21: a file answer names an upload (POST /files) that no other application uses.
    const file = (await uploadFile(t)).uuid;
    const res = await patch(a.uuid, { answers: { [q.txt]: 'Nüsse', [q.yn]: true, [uuidToBase58(q.int)]: 9, [q.file]: file } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.answers).toEqual([
      { question: q.yn, label: 'Schwimmer?', type: 'yn', answer: true },
      { question: q.int, label: 'Alter', type: 'int', answer: 9 },
      { question: q.txt, label: 'Allergien', type: 'txt', answer: 'Nüsse' },
      { question: q.file, label: 'Attest', type: 'file', answer: file },
    ]);
    // Keys sent merge; null removes one answer.
    const next = (await patch(a.uuid, { answers: { [q.int]: 10, [q.txt]: null } })).body.answers;
    expect(next.map((x) => [x.type, x.answer])).toEqual([['yn', true], ['int', 10], ['file', file]]);
    // answers: null clears them all.
    expect((await patch(a.uuid, { answers: null })).body.answers).toEqual([]);
  });

  it('an answer of the wrong type is 422 naming the question; nothing is stored', async () => {
    const a = await newApplication(t, offer.uuid);
    const cases: [string, unknown][] = [[q.yn, 'ja'], [q.int, '9'], [q.int, 2.5], [q.txt, 5], [q.file, 'attest.pdf'], [q.file, true]];
    for (const [question, answer] of cases) {
      const p = expectProblem(await patch(a.uuid, { answers: { [q.txt]: 'ok', [question]: answer } }), 422);
      const paths = p.violations?.map((v) => v.propertyPath) ?? [];
      expect(paths.some((x) => x.startsWith('answers')), JSON.stringify(p)).toBe(true);
    }
    expect((await t.get(`/attendances/${a.uuid}`)).body.answers).toEqual([]);
  });

  it('an unknown question is 422', async () => {
    const a = await newApplication(t, offer.uuid);
    const p = expectProblem(await patch(a.uuid, { answers: { '6f1c3f0e-0000-4000-8000-000000000001': 'x' } }), 422);
    expect(p.violations?.[0].propertyPath).toBe('answers.6f1c3f0e-0000-4000-8000-000000000001');
  });
});

describe('the rest of PATCH', () => {
  it('never changes the state; an empty body (or only unknown keys) is 422; unknown ids are 404', async () => {
    const a = await newApplication(t, offer.uuid);
    expectProblem(await patch(a.uuid, {}), 422);
    expectProblem(await patch(a.uuid, { status: 'rejected' }), 422);
    expect((await t.get(`/attendances/${a.uuid}`)).body.status).toBe('confirmed');
    expectProblem(await patch('6f1c3f0e-0000-4000-8000-000000000001', { userPriority: 1 }), 404);
  });

  it('accepts application/merge-patch+json', async () => {
    const a = await newApplication(t, offer.uuid);
    const res = await t.request('PATCH', `/attendances/${a.uuid}`, { rawBody: JSON.stringify({ userPriority: 2 }), headers: { 'content-type': 'application/merge-patch+json' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.userPriority).toBe(2);
  });

  it('organisers only where the installation lets them edit their released lists; read tokens never', async () => {
    const u = await h.tenant({ settings: { organisersEditParticipantLists: true } });
    const host = await createOrganiser(u);
    const e = await lot(u, { releaseParticipantLists: true });
    const o = await createOffer(u, { edition: e.uuid, hosts: [host.uuid] });
    const a = await newApplication(u, o.uuid);
    const org = await u.token({ role: 'organiser', organiserIds: [host.uuid] });
    const res = await u.patch(`/attendances/${a.uuid}`, { userPriority: 1 }, { token: org });
    expect(res.status, res.text).toBe(200);
    expectProblem(await u.patch(`/attendances/${a.uuid}`, { userPriority: 1 }, { token: await u.token({ role: 'organiser', access: 'read', organiserIds: [host.uuid] }) }), 403);
    expectProblem(await u.patch(`/attendances/${a.uuid}`, { userPriority: 1 }, { token: await u.token({ access: 'read' }) }), 403);

    const v = await h.tenant();
    const vHost = await createOrganiser(v);
    const ve = await lot(v, { releaseParticipantLists: true });
    const vo = await createOffer(v, { edition: ve.uuid, hosts: [vHost.uuid] });
    const va = await newApplication(v, vo.uuid);
    const vOrg = await v.token({ role: 'organiser', organiserIds: [vHost.uuid] });
    expectProblem(await v.patch(`/attendances/${va.uuid}`, { userPriority: 1 }, { token: vOrg }), 403);
  });
});
