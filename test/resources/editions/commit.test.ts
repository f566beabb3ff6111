import { describe, expect, it } from 'vitest';
import { expectProblem, useHarness, type TestTenant } from '../../harness/harness.js';
import { QUEUES } from '../../../src/platform/jobs/queue.js';
import { runAllocationJob, runCommitJob } from '../../../src/engines/allocation/jobs.js';
import {
  allocate, allocateNow, applicationsOf, applyLot, commit, createAccount, createParticipant, getEdition, list, lot, mailsOfKind, offerOn, outbox,
} from './lot-helpers.js';

// POST /editions/{uuid}/commit (D7, D10 "Lot and commit"): releases every held-back decision of the edition
// in the background; fees become due; each family gets one e-mail listing its children's decisions.

const { h, t } = useHarness();

/**
 * A lot edition "Sommer <n>": family Muster (account) with Kim and Lena, Kim applying for two offers and Lena
 * for one; a child without an account but with its own address (Ole); one with neither (Pia). Canoe has one
 * place, so one of Kim and Ole is waitlisted. Allocated, not committed.
 */
async function allocatedScenario(u: TestTenant, name: string) {
  const edition = await lot(u, { name });
  const canoe = await offerOn(u, edition.uuid, 1, 1, { name: 'Kanu', fee: 1250 });
  const pottery = await offerOn(u, edition.uuid, 2, 5, { name: 'Töpfern', fee: 0 });
  const family = await createAccount(u, { email: `muster-${name.replace(/\W/g, '')}@example.org` });
  const kim = await createParticipant(u, { firstname: 'Kim', account: family.uuid });
  const lena = await createParticipant(u, { firstname: 'Lena', account: family.uuid, email: 'lena-own@example.org' });
  const ole = await createParticipant(u, { firstname: 'Ole', email: `ole-${name.replace(/\W/g, '')}@example.org` });
  const pia = await createParticipant(u, { firstname: 'Pia' });
  await applyLot(u, canoe.uuid, kim.uuid, 1);
  await applyLot(u, pottery.uuid, kim.uuid, 2);
  await applyLot(u, pottery.uuid, lena.uuid, 1);
  await applyLot(u, canoe.uuid, ole.uuid, 1);
  await applyLot(u, pottery.uuid, pia.uuid, 1);
  const after = await allocateNow(h, u, edition.uuid, { seed: 31 });
  expect(after.allocations[0]).toMatchObject({ confirmed: 4, waitlisted: 1, unfulfilled: 0 });
  return { edition, canoe, pottery, family, kim, lena, ole, pia };
}

describe('POST /editions/{uuid}/commit', () => {
  it('releases every held-back decision in the background, makes fees due and e-mails each family once', async () => {
    const s = await allocatedScenario(t, 'Sommer 1');
    const mailsBefore = (await outbox(h, t)).length;

    // No body and no content type (D10).
    const res = await t.request('POST', `/editions/${s.edition.uuid}/commit`);
    expect(res.status, res.text).toBe(202);
    expect(res.body).toMatchObject({ uuid: s.edition.uuid, allocations: [expect.objectContaining({ confirmed: 4 })] });
    expect(h.jobs.pending()).toEqual([
      { name: QUEUES.editionCommit, data: { tenant: t.slug, edition: s.edition.uuid, notify: true, upToRun: expect.any(Number) } },
    ]);
    // Still held back until the job ran; nothing charged yet.
    expect((await applicationsOf(t, s.edition.uuid)).every((a) => a.heldBack)).toBe(true);
    expect((await t.get(`/bookings?edition=${s.edition.uuid}`)).body).toEqual([]);

    expect(await h.jobs.drain()).toBe(2); // the commit, then the send job of its e-mails
    const apps = await applicationsOf(t, s.edition.uuid);
    expect(apps).toHaveLength(5);
    for (const a of apps) {
      expect(a.heldBack).toBe(false);
      expect(a.decisionReason).toMatch(/^Losverfahren: /);
      // Fees become due: a confirmed place with a fee is payable now.
      expect(a.payable).toBe(a.status === 'confirmed' && a.fee > 0);
    }

    const mails = (await outbox(h, t)).slice(mailsBefore);
    expect(mails.every((m) => m.kind === 'edition_decisions')).toBe(true);
    // One per family with an address: the Musters (to the account, not Lena's own address) and Ole; Pia has none.
    expect(mails.map((m) => m.recipient).sort()).toEqual([s.family.email, 'ole-Sommer1@example.org'].sort());
    const muster = mails.find((m) => m.recipient === s.family.email)!;
    expect(muster.subject).toBe('Ergebnis der Platzvergabe: Sommer 1');
    expect(muster.body).toContain('für das Ferienprogramm „Sommer 1“ stehen die Entscheidungen über Ihre Anmeldungen fest');
    expect(muster.body).toMatch(/Kim:\n- „Kanu“: (Platz erhalten \(Teilnahmebeitrag 12,50 €\)|auf der Warteliste.*)\n- „Töpfern“: Platz erhalten\n\nLena:\n- „Töpfern“: Platz erhalten\n/);
    // Children are named by first name only.
    expect(muster.body).not.toContain(s.kim.lastname);
    expect(muster.payload).toMatchObject({ edition: s.edition.uuid, cause: 'commit' });
    expect(muster.payload.attendances).toHaveLength(3);
    const ole = mails.find((m) => m.recipient.startsWith('ole-'))!;
    expect(ole.body).toMatch(/Ole:\n- „Kanu“: /);
    expect(ole.body).not.toContain('Kim');
    // The canoe's one place went to Kim or Ole; the other is on the waiting list, and the mails say so.
    const canoe = await list(t, s.canoe.uuid);
    expect(canoe.map((a) => a.status)).toEqual(['confirmed', 'waitlisted']);
    const winner = canoe[0].participant!.uuid === s.kim.uuid ? muster : ole;
    const loser = winner === muster ? ole : muster;
    expect(winner.body).toContain('„Kanu“: Platz erhalten (Teilnahmebeitrag 12,50 €)');
    expect(winner.body).toContain('Die Teilnahmebeiträge für die erhaltenen Plätze sind ab jetzt fällig.');
    expect(loser.body).toContain('„Kanu“: auf der Warteliste');
    // D8: the decision became final, so the confirmed place's fee is charged (syncCharges, same transaction).
    const charges = await t.get(`/bookings?attendance=${canoe[0].uuid}`);
    expect(charges.status, charges.text).toBe(200);
    expect(charges.body.map((b) => [b.type, b.amount])).toEqual([['charge', 1250]]);
    expect((await t.get(`/bookings?attendance=${canoe[1].uuid}`)).body).toEqual([]);

    // A second commit finds nothing held back: 202, nothing queued, nobody written to twice.
    await commit(t, s.edition.uuid, { notify: true });
    expect(h.jobs.pending()).toEqual([]);
    await h.jobs.drain();
    expect((await outbox(h, t)).length).toBe(mailsBefore + 2);
  });

  it('with nothing held back: 202 and nothing happens', async () => {
    const edition = await lot(t);
    const offer = await offerOn(t, edition.uuid, 3, 2);
    const waiting = await applyLot(t, offer.uuid, (await createParticipant(t)).uuid);
    const before = (await outbox(h, t)).length;
    const res = await commit(t, edition.uuid);
    expect(res).toEqual(await getEdition(t, edition.uuid));
    expect(h.jobs.pending()).toEqual([]);
    expect(await h.jobs.drain()).toBe(0);
    expect((await list(t, offer.uuid))[0]).toMatchObject({ uuid: waiting.uuid, status: 'waiting', heldBack: false, modifiedAt: waiting.modifiedAt });
    expect((await outbox(h, t)).length).toBe(before);
  });

  it('with notify false releases without e-mails', async () => {
    const s = await allocatedScenario(t, 'Sommer 2');
    const before = (await outbox(h, t)).length;
    await commit(t, s.edition.uuid, { notify: false });
    await h.jobs.drain();
    expect((await applicationsOf(t, s.edition.uuid)).every((a) => !a.heldBack)).toBe(true);
    expect((await outbox(h, t)).length).toBe(before);
  });

  it('releases decisions held back with commit:false too, and only those of this edition', async () => {
    const edition = await lot(t, { name: 'Sommer 3' });
    const offer = await offerOn(t, edition.uuid, 4, 3, { name: 'Basteln' });
    const family = await createAccount(t);
    const child = await createParticipant(t, { firstname: 'Mia', account: family.uuid });
    const a = await applyLot(t, offer.uuid, child.uuid);
    const tr = await t.post(`/attendances/${a.uuid}/transition`, { transition: 'confirm', commit: false });
    expect(tr.body).toMatchObject({ status: 'confirmed', heldBack: true });
    const s = await allocatedScenario(t, 'Sommer 4'); // another edition, held back as well
    await commit(t, edition.uuid);
    await h.jobs.drain();
    expect((await list(t, offer.uuid))[0]).toMatchObject({ status: 'confirmed', heldBack: false, payable: true });
    expect((await applicationsOf(t, s.edition.uuid)).every((x) => x.heldBack)).toBe(true);
    const mails = await mailsOfKind(h, t, 'edition_decisions');
    const mine = mails.filter((m) => m.recipient === family.email);
    expect(mine).toHaveLength(1);
    expect(mine[0].body).toContain('Mia:\n- „Basteln“: Platz erhalten (Teilnahmebeitrag 5,00 €)');
  });

  it('a commit that runs before a pending allocation draws it first, then releases its decisions', async () => {
    const edition = await lot(t, { name: 'Sommer 5' });
    const offer = await offerOn(t, edition.uuid, 5, 1);
    for (let i = 0; i < 2; i++) await applyLot(t, offer.uuid, (await createParticipant(t)).uuid);
    await allocate(t, edition.uuid, { seed: 4 });
    await commit(t, edition.uuid, { notify: false });
    const [allocJob, commitJob] = h.jobs.pending();
    expect([allocJob.name, commitJob.name]).toEqual([QUEUES.editionAllocate, QUEUES.editionCommit]);
    // The commit's job happens to run first.
    await runCommitJob(t.context(), commitJob.data);
    const edited = await getEdition(t, edition.uuid);
    expect(edited.allocations[0]).toMatchObject({ confirmed: 1, waitlisted: 1, finishedAt: expect.any(String) });
    expect((await list(t, offer.uuid)).map((a) => [a.status, a.heldBack])).toEqual([['confirmed', false], ['waitlisted', false]]);
    // The allocation's own job then finds its run drawn and does nothing.
    await h.jobs.drain();
    expect((await getEdition(t, edition.uuid)).allocations).toEqual(edited.allocations);
  });
  it('an allocate job whose run a commit was requested after leaves the run to the commit\'s job (one write)', async () => {
    const edition = await lot(t, { name: 'Sommer 7' });
    const offer = await offerOn(t, edition.uuid, 7, 1);
    for (let i = 0; i < 2; i++) await applyLot(t, offer.uuid, (await createParticipant(t)).uuid);
    await allocate(t, edition.uuid, { seed: 9 });
    await commit(t, edition.uuid, { notify: false });
    const [allocJob, commitJob] = h.jobs.pending();
    // The allocation's job runs first and draws nothing: the run stays pending, the applications waiting.
    await runAllocationJob(t.context(), allocJob.data);
    expect((await getEdition(t, edition.uuid)).allocations[0].finishedAt).toBeUndefined();
    expect((await list(t, offer.uuid)).map((a) => a.status)).toEqual(['waiting', 'waiting']);
    // The commit's job draws it and releases the decisions in one go.
    await runCommitJob(t.context(), commitJob.data);
    expect((await getEdition(t, edition.uuid)).allocations[0]).toMatchObject({ confirmed: 1, waitlisted: 1, finishedAt: expect.any(String) });
    expect((await list(t, offer.uuid)).map((a) => [a.status, a.heldBack])).toEqual([['confirmed', false], ['waitlisted', false]]);
    await h.jobs.drain();
  });

  it('an allocation requested after a commit is drawn by its own job and held back', async () => {
    const edition = await lot(t, { name: 'Sommer 8' });
    const offer = await offerOn(t, edition.uuid, 8, 1);
    const first = await createParticipant(t);
    await applyLot(t, offer.uuid, first.uuid);
    await allocateNow(h, t, edition.uuid, { seed: 2 });
    await commit(t, edition.uuid, { notify: false });
    await h.jobs.drain();
    await applyLot(t, offer.uuid, (await createParticipant(t)).uuid);
    const after = await allocateNow(h, t, edition.uuid, { seed: 3 });
    expect(after.allocations[1]).toMatchObject({ confirmed: 0, waitlisted: 1, finishedAt: expect.any(String) });
    expect((await list(t, offer.uuid)).map((a) => [a.status, a.heldBack])).toEqual([['confirmed', false], ['waitlisted', true]]);
  });

  it('a commit that draws the pending allocation itself writes the decisions final: charged, mailed once, with their reasons', async () => {
    // The commit's own draw writes its decisions released at once (one write per application): the result must
    // be the same as drawing, holding back and releasing.
    const edition = await lot(t, { name: 'Sommer 6' });
    const offer = await offerOn(t, edition.uuid, 6, 1, { name: 'Segeln', fee: 900 });
    const family = await createAccount(t, { email: 'segel-familie@example.org' });
    const jo = await createParticipant(t, { firstname: 'Jo', account: family.uuid });
    const max = await createParticipant(t, { firstname: 'Max', account: family.uuid });
    await applyLot(t, offer.uuid, jo.uuid);
    await applyLot(t, offer.uuid, max.uuid);
    await allocate(t, edition.uuid, { seed: 8 });
    await commit(t, edition.uuid, { notify: true });
    const [, commitJob] = h.jobs.pending();
    await runCommitJob(t.context(), commitJob.data);
    const rows = await list(t, offer.uuid);
    expect(rows.map((a) => [a.status, a.heldBack])).toEqual([['confirmed', false], ['waitlisted', false]]);
    expect(rows.every((a) => /^Losverfahren: .*\(Runde 1, Ziehung [12]\)$/.test(a.decisionReason!))).toBe(true);
    expect(rows.map((a) => a.payable)).toEqual([true, false]);
    const ledgers = await t.get(`/ledgers?edition=${edition.uuid}`);
    expect(ledgers.status, ledgers.text).toBe(200);
    expect(ledgers.body.map((l) => l.balance)).toEqual([900]);
    const mine = (await mailsOfKind(h, t, 'edition_decisions')).filter((m) => m.recipient === family.email);
    expect(mine).toHaveLength(1);
    expect(mine[0].body).toContain('Platz erhalten (Teilnahmebeitrag 9,00 €)');
    expect(mine[0].body).toMatch(/Jo:\n- „Segeln“: .*\n\nMax:\n- „Segeln“: /);
    await h.jobs.drain();
    expect((await list(t, offer.uuid)).map((a) => [a.status, a.heldBack])).toEqual([['confirmed', false], ['waitlisted', false]]);
  });
});

describe('commit: refusals', () => {
  it('404 for an unknown or malformed edition', async () => {
    expectProblem(await t.post('/editions/0b7a4c38-5d6e-4f1a-9b2c-3d4e5f6a7b8c/commit', {}), 404);
    expectProblem(await t.post('/editions/xyz/commit'), 404);
  });

  it('403 for organisers and read-only tokens', async () => {
    const edition = await lot(t);
    expectProblem(await t.post(`/editions/${edition.uuid}/commit`, {}, { token: await t.token({ role: 'organiser' }) }), 403);
    expectProblem(await t.post(`/editions/${edition.uuid}/commit`, {}, { token: await t.token({ access: 'read' }) }), 403);
  });

  it('422 for a notify that is not a boolean', async () => {
    const edition = await lot(t);
    const p = expectProblem(await t.post(`/editions/${edition.uuid}/commit`, { notify: 'yes' }), 422);
    expect(p.violations?.[0].propertyPath).toBe('notify');
  });
});
