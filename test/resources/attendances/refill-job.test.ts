import { describe, expect, it } from 'vitest';
import { useHarness, type TestTenant } from '../../harness/harness.js';
import { QUEUES } from '../../../src/platform/jobs/queue.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import {
  apply, createAccount, createOffer, createParticipant, expectDenseSorting, firstcome, list, lot, newApplication, outbox, transitionOk,
} from './helpers.js';

// Spec 4.2 refill, 4.3 transfer rule 3, D9 and D10 "any change to a participant list": the refill is a pg-boss
// job (here the harness's in-memory queue, the same handler; test/jobs runs it through real processes),
// deduplicated per offer, asked for by every change that frees a place during a running first-come phase.
// Before a lot edition's commit, its decisions are held back like the lot's own.

const { h, t } = useHarness();

const refillJobs = (u: TestTenant) => h.jobs.pending().filter((j) => j.name === QUEUES.offerRefill && j.data.tenant === u.slug);
const status = async (u: TestTenant, uuid: string) => (await u.get(`/attendances/${uuid}`)).body;

/** A first-come offer with one place, taken, and two families on the waiting list. */
async function fullOffer(u: TestTenant) {
  const e = await firstcome(u);
  const offer = await createOffer(u, { edition: e.uuid, maxParticipants: 1, fee: 900 });
  const holder = await newApplication(u, offer.uuid);
  const next = await newApplication(u, offer.uuid, {}, { email: `next-${offer.uuid}@example.org` });
  const later = await newApplication(u, offer.uuid, {}, { email: `later-${offer.uuid}@example.org` });
  expect([holder.status, next.status, later.status]).toEqual(['confirmed', 'waitlisted', 'waitlisted']);
  await h.jobs.drain();
  return { offer, holder, next, later };
}

describe('every freed place moves the waiting list up, as a job, during a running first-come phase', () => {
  for (const name of ['withdraw', 'reject', 'reset', 'unfulfill']) {
    it(`${name} of a confirmed place`, async () => {
      const { offer, holder, next, later } = await fullOffer(t);
      await transitionOk(t, holder.uuid, name);
      expect(refillJobs(t)).toEqual([{ name: QUEUES.offerRefill, data: { tenant: t.slug, offer: offer.uuid, notify: true } }]);
      await h.jobs.drain();
      const moved = await status(t, next.uuid);
      expect(moved).toMatchObject({ status: 'confirmed', heldBack: false, payable: true, decisionReason: 'Von der Warteliste nachgerückt' });
      expect((await status(t, later.uuid)).status).toBe('waitlisted');
      expect((await outbox(h, t)).filter((m) => m.payload.cause === 'refill').map((m) => m.recipient)).toContain(`next-${offer.uuid}@example.org`);
      expectDenseSorting(await list(t, offer.uuid));
    });
  }

  for (const name of ['participated', 'waitlist']) {
    it(`${name}: no refill job (no place to fill, or the place would go straight back)`, async () => {
      const { holder } = await fullOffer(t);
      await transitionOk(t, holder.uuid, name);
      expect(refillJobs(t)).toEqual([]);
    });
  }

  it('deleting the participant of a confirmed place: the offer is locked, the list renumbered, the waiting list moves up', async () => {
    const { offer, holder, next } = await fullOffer(t);
    expect((await t.del(`/participants/${holder.participant!.uuid}`)).status).toBe(204);
    const now = await list(t, offer.uuid);
    expect(now.map((a) => a.status)).toEqual(['waitlisted', 'waitlisted']);
    expectDenseSorting(now);
    await h.jobs.drain();
    expect((await status(t, next.uuid)).status).toBe('confirmed');
    expectDenseSorting(await list(t, offer.uuid));
  });

  it('freed places in a burst make one queued job per offer', async () => {
    const e = await firstcome(t);
    const offer = await createOffer(t, { edition: e.uuid, maxParticipants: 3 });
    const held = [];
    for (let i = 0; i < 3; i++) held.push(await newApplication(t, offer.uuid));
    for (let i = 0; i < 3; i++) await newApplication(t, offer.uuid);
    await h.jobs.drain();
    for (const a of held) await transitionOk(t, a.uuid, 'withdraw');
    expect(refillJobs(t)).toHaveLength(1);
    await h.jobs.drain();
    expect((await list(t, offer.uuid)).map((a) => a.status)).toEqual(['confirmed', 'confirmed', 'confirmed', 'withdrawn', 'withdrawn', 'withdrawn']);
  });

  it('a refill of an offer without a waiting list, or of an offer deleted meanwhile, does nothing', async () => {
    const e = await firstcome(t);
    const offer = await createOffer(t, { edition: e.uuid, maxParticipants: 5 });
    const a = await newApplication(t, offer.uuid);
    const before = await list(t, offer.uuid);
    expect((await t.post(`/offers/${offer.uuid}/refill`)).status).toBe(202);
    expect(await h.jobs.drain()).toBe(1);
    expect(await list(t, offer.uuid)).toEqual(before);
    const gone = await createOffer(t, { edition: e.uuid, maxParticipants: 1 });
    expect((await t.post(`/offers/${gone.uuid}/refill`)).status).toBe(202);
    expect((await t.del(`/offers/${gone.uuid}`)).status).toBe(204);
    expect(await h.jobs.drain()).toBe(1);
    expect((await status(t, a.uuid)).status).toBe('confirmed');
  });

  it('a job of a tenant removed meanwhile is dropped', async () => {
    await h.jobs.send(QUEUES.offerRefill, { tenant: 'no-such-tenant', offer: '6f1c3f0e-0000-4000-8000-000000000001', notify: true });
    expect(await h.jobs.drain()).toBe(1);
  });
});

describe('before a lot edition is committed, a refill holds its decisions back (spec 2.2 heldBack)', () => {
  it('no fee due and no mail until the commit; earlier held-back decisions stay held back; the commit releases all', async () => {
    const u = await h.tenant();
    const e = await lot(u);
    const offer = await createOffer(u, { edition: e.uuid, maxParticipants: 2, fee: 1500 });
    const families = [];
    for (let i = 0; i < 4; i++) {
      const account = await createAccount(u, { email: `lot${i}@example.org` });
      const child = await createParticipant(u, { firstname: `Kind${i}`, account: account.uuid });
      families.push(await apply(u, offer.uuid, child.uuid));
    }
    expect((await u.post(`/editions/${e.uuid}/allocate`, { seed: 7 })).status).toBe(202);
    await h.jobs.drain();
    const drawn = await list(u, offer.uuid);
    expect(drawn.map((a) => [a.status, a.heldBack])).toEqual([['confirmed', true], ['confirmed', true], ['waitlisted', true], ['waitlisted', true]]);
    // A place freed before the commit (the team withdraws one of the drawn), then a refill.
    await transitionOk(u, drawn[0].uuid, 'withdraw', { commit: false });
    expect((await u.post(`/offers/${offer.uuid}/refill`)).status).toBe(202);
    await h.jobs.drain();
    const refilled = await list(u, offer.uuid);
    const moved = refilled.find((a) => a.uuid === drawn[2].uuid)!;
    expect(moved).toMatchObject({ status: 'confirmed', heldBack: true, payable: false });
    expect(refilled.find((a) => a.uuid === drawn[1].uuid)).toMatchObject({ status: 'confirmed', heldBack: true });
    // Not told, nothing due.
    expect(await outbox(h, u)).toEqual([]);
    expect((await u.get(`/bookings?attendance=${moved.uuid}`)).body).toEqual([]);

    expect((await u.post(`/editions/${e.uuid}/commit`, { notify: true })).status).toBe(202);
    await h.jobs.drain();
    const committed = await list(u, offer.uuid);
    expect(committed.every((a) => !a.heldBack)).toBe(true);
    expect(committed.find((a) => a.uuid === moved.uuid)).toMatchObject({ status: 'confirmed', payable: true });
    expect((await u.get(`/bookings?attendance=${moved.uuid}`)).body.map((b) => b.amount)).toEqual([1500]);
    const mails = await outbox(h, u);
    expect(mails.filter((m) => m.kind === 'edition_decisions')).toHaveLength(4);

    // Committed: a later refill of the same lot edition is final at once, also with a `commit: false` decision in it.
    const other = await createOffer(u, { edition: e.uuid, maxParticipants: 5 });
    await newApplication(u, other.uuid, { status: 'confirmed', commit: false });
    await newApplication(u, offer.uuid, { status: 'waitlisted' }, { email: 'spaet@example.org' });
    await transitionOk(u, committed.find((a) => a.uuid === moved.uuid)!.uuid, 'withdraw');
    expect((await u.post(`/offers/${offer.uuid}/refill`)).status).toBe(202);
    await h.jobs.drain();
    const after = (await list(u, offer.uuid)).find((a) => a.status === 'confirmed' && a.decisionReason === 'Von der Warteliste nachgerückt' && a.uuid !== moved.uuid);
    expect(after).toMatchObject({ heldBack: false, payable: true });
  });
});

// Issue 22.2: a held-back decision holds a refill back only in a lot edition whose run awaits its commit.
describe('a commit: false decision in a first-come edition', () => {
  it('does not freeze the move-ups of the edition: they are final, charged and e-mailed', async () => {
    const { offer: b, holder, next } = await fullOffer(t);
    const a = await createOffer(t, { edition: b.edition.uuid, maxParticipants: 5 });
    const held = await newApplication(t, a.uuid, { status: 'confirmed', commit: false });
    expect(held.heldBack).toBe(true);
    await transitionOk(t, holder.uuid, 'withdraw');
    await h.jobs.drain();
    const moved = await status(t, next.uuid);
    expect(moved).toMatchObject({ status: 'confirmed', heldBack: false, payable: true });
    expect((await t.get(`/bookings?attendance=${next.uuid}`)).body.map((x) => x.amount)).toEqual([900]);
    expect((await outbox(h, t)).filter((m) => m.payload.cause === 'refill').map((m) => m.recipient)).toContain(`next-${b.uuid}@example.org`);
  });
});

describe('deletes take the offer locks first (issue 13.4)', () => {
  it('deleting a participant races a receipt for its application: never both succeed', async () => {
    const e = await firstcome(t);
    for (let round = 0; round < 8; round++) {
      const offer = await createOffer(t, { edition: e.uuid, maxParticipants: 5, fee: 400 });
      const a = await newApplication(t, offer.uuid);
      expect(a).toMatchObject({ status: 'confirmed', payable: true });
      const [receipt, deleted] = await Promise.all([
        t.post('/receipts', { items: [{ attendance: a.uuid }] }),
        t.del(`/participants/${a.participant!.uuid}`),
      ]);
      const outcome = `${receipt.status}/${deleted.status}`;
      expect(['201/409', '422/204'], `${outcome}: ${receipt.text} ${deleted.text}`).toContain(outcome);
      if (deleted.status === 204) {
        // No receipt was left for a deleted application.
        const orphan = await sql<{ n: number }>`select count(*)::int as n from ${qualified(t.tenant.schema, 'receipt_items')} l
          where l.attendance_uuid = ${a.uuid}::uuid`.execute(executorOf(h.orm));
        expect(orphan.rows[0]!.n).toBe(0);
      }
    }
  });

  it('deleting an account races a transfer of its child: both succeed, charges end in the right ledgers', async () => {
    const e = await firstcome(t);
    for (let round = 0; round < 5; round++) {
      const source = await createOffer(t, { edition: e.uuid, maxParticipants: 5, fee: 300 });
      const target = await createOffer(t, { edition: e.uuid, maxParticipants: 5, fee: 300 });
      const account = await createAccount(t);
      const child = await createParticipant(t, { account: account.uuid });
      const a = await apply(t, source.uuid, child.uuid);
      const [moved, gone] = await Promise.all([
        t.post(`/attendances/${a.uuid}/transfer`, { offer: target.uuid, status: 'confirmed' }),
        t.del(`/accounts/${account.uuid}`),
      ]);
      expect([moved.status, gone.status], `${moved.text} ${gone.text}`).toEqual([201, 204]);
      // The charge lives with the child now (its own debtor): one charge and its cancellation on the old
      // application, one charge on the new, summing to the fee.
      const all = (await t.get(`/bookings?itemsPerPage=200&attendance=${moved.body.uuid}`)).body;
      expect(all.reduce((s, b) => s + b.amount, 0)).toBe(300);
      const debtor = (await t.get(`/debtors?itemsPerPage=200`)).body.find((d) => d.participant?.uuid === child.uuid);
      expect(debtor).toMatchObject({ balance: 300 });
    }
  });
});
