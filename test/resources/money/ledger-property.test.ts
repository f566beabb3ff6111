import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { useHarness, type Schema } from '../../harness/harness.js';
import { createAccount, createEdition, createOffer, createParticipant, getOk } from './helpers.js';

// The money invariant (D8, D10), as a property over random sequences of what admins do: applications created
// (with and without a decision, held back or not), transitions, PATCH payable, transfers, deletions, receipts
// (full and partial amounts, several lines), reversals (all or one line, with and without withdraw) and children
// joining or leaving a family account (their unpaid charges move to the new debtor). After
// each sequence, through the API only:
// - every ledger's balance equals the sum of its book entries and of its bookings (GET /bookings);
// - every ledger's balance equals the fees of its debtor's open payments in that edition (payable and not
//   paid), plus the kept charges of unpaid applications that moved on to participated/noshow (D10: those keep
//   their charge; they are not `payable`, so not open payments);
// - an application is charged its fee while paid, and `receipts` is non-empty exactly then; its own bookings
//   sum to nothing while paid; a deleted or transferred application's bookings sum to nothing;
// - receipt numbers are unique and run without gaps.
// Bounded: PROPERTY_RUNS (default 15) sequences of up to 36 steps, interrupted after PROPERTY_BUDGET_MS (default
// 40 s); PROPERTY_SEED replays one.

const RUNS = Number(process.env.PROPERTY_RUNS ?? 15);
const BUDGET_MS = Number(process.env.PROPERTY_BUDGET_MS ?? 40_000);
const SEED = process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : undefined;

const TRANSITIONS = ['confirm', 'waitlist', 'reject', 'withdraw', 'reset', 'unfulfill', 'participated', 'noshow'] as const;

type Step =
  | { kind: 'apply'; participant: number; offer: number; status: 'confirmed' | 'waitlisted' | 'waiting' | null; commit: boolean }
  | { kind: 'transition'; app: number; name: (typeof TRANSITIONS)[number]; commit: boolean }
  | { kind: 'payable'; app: number; value: boolean }
  | { kind: 'pay'; open: boolean; apps: number[]; partial: boolean[] }
  | { kind: 'reverse'; receipt: number; oneLine: boolean; withdraw: boolean }
  | { kind: 'transfer'; app: number; offer: number; status: 'confirmed' | 'waitlisted' | 'waiting' }
  | { kind: 'delete'; app: number }
  | { kind: 'move'; participant: number; account: number | null };

const idx = fc.nat({ max: 50 });
const applyStep: fc.Arbitrary<Step> = fc.record({
  kind: fc.constant('apply' as const), participant: idx, offer: idx,
  status: fc.constantFrom('confirmed' as const, 'waitlisted' as const, 'waiting' as const, null), commit: fc.constantFrom(true, true, true, false),
});
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: applyStep },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('transition' as const), app: idx, name: fc.constantFrom(...TRANSITIONS), commit: fc.constantFrom(true, true, true, false) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('payable' as const), app: idx, value: fc.boolean() }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('pay' as const), open: fc.constantFrom(true, true, true, false), apps: fc.array(idx, { minLength: 1, maxLength: 3 }), partial: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('reverse' as const), receipt: idx, oneLine: fc.boolean(), withdraw: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('transfer' as const), app: idx, offer: idx, status: fc.constantFrom('confirmed' as const, 'waitlisted' as const, 'waiting' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), app: idx }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('move' as const), participant: idx, account: fc.option(fc.nat({ max: 1 }), { nil: null }) }) },
);

const stats = { runs: 0, steps: 0, ok: 0, refused: 0, receipts: 0, reversals: 0, transfers: 0 };

const { h, t } = useHarness();
afterAll(async () => {
  console.log(`[ledger-property] ${JSON.stringify(stats)}`);
});

/** Every page of a list: `read(n)` reads page n, 200 a page. */
async function all<T>(read: (page: number) => Promise<T[]>): Promise<T[]> {
  const out: T[] = [];
  for (let page = 1; ; page++) {
    const rows = await read(page);
    out.push(...rows);
    if (rows.length < 200) return out;
  }
}

type World = { editions: Schema<'Edition'>[]; offers: Schema<'Offer'>[]; accounts: Schema<'Account'>[]; participants: Schema<'Participant'>[]; apps: string[]; gone: string[]; receipts: Schema<'Receipt'>[] };

async function makeWorld(): Promise<World> {
  // Two editions (first come first served: a withdrawal refills), three offers with small capacities, two
  // families with children and one child without an account.
  const editions = [await createEdition(t, { procedure: 'firstcome' }), await createEdition(t, { procedure: 'firstcome' })];
  const offers = [
    await createOffer(t, { edition: editions[0].uuid, fee: 500, maxParticipants: 2 }),
    await createOffer(t, { edition: editions[0].uuid, fee: 1250, maxParticipants: null }),
    await createOffer(t, { edition: editions[1].uuid, fee: 300, maxParticipants: 1 }),
  ];
  const [f1, f2] = [await createAccount(t), await createAccount(t)];
  const participants = [
    await createParticipant(t, { account: f1.uuid }), await createParticipant(t, { account: f1.uuid }),
    await createParticipant(t, { account: f2.uuid }), await createParticipant(t, {}),
  ];
  return { editions, offers, accounts: [f1, f2], participants, apps: [], gone: [], receipts: [] };
}

async function run(w: World, s: Step): Promise<boolean> {
  const app = (i: number) => (w.apps.length ? w.apps[i % w.apps.length] : null);
  switch (s.kind) {
    case 'apply': {
      const body: Record<string, unknown> = {
        offer: w.offers[s.offer % w.offers.length].uuid, participant: w.participants[s.participant % w.participants.length].uuid,
      };
      if (s.status) body.status = s.status;
      if (!s.commit) body.commit = false;
      const res = await t.post('/attendances', body);
      if (res.status === 201 && !w.apps.includes(res.body.uuid)) w.apps.push(res.body.uuid);
      return res.status === 201;
    }
    case 'transition': {
      const a = app(s.app);
      if (!a) return false;
      const res = await t.post(`/attendances/${a}/transition`, { transition: s.name, ...(s.commit ? {} : { commit: false }) });
      expect([200, 409], res.text).toContain(res.status);
      return res.status === 200;
    }
    case 'payable': {
      const a = app(s.app);
      if (!a) return false;
      const res = await t.patch(`/attendances/${a}`, { payable: s.value });
      expect([200, 409, 422], res.text).toContain(res.status);
      return res.status === 200;
    }
    case 'pay': {
      let ids: string[];
      if (s.open) {
        // Mostly: due applications of one family (what an admin does), several lines at once.
        const open = (await Promise.all(w.editions.map((e) => getOk(t, `/attendances?edition=${e.uuid}&payable=true&paid=false&itemsPerPage=200`)))).flat();
        if (open.length === 0) return false;
        const first = open[s.apps[0]! % open.length];
        const party = (a: Schema<'Attendance'>) => a.account?.uuid ?? a.participant!.uuid;
        const same = open.filter((a) => a.uuid !== first.uuid && party(a) === party(first));
        ids = [first.uuid, ...s.apps.slice(1).map((i) => same[i % Math.max(1, same.length)]?.uuid).filter((x): x is string => !!x)];
      } else {
        ids = s.apps.map(app).filter((x): x is string => !!x);
      }
      ids = [...new Set(ids)];
      if (ids.length === 0) return false;
      const items = await Promise.all(ids.map(async (id, i) => {
        const fee = (await getOk(t, `/attendances/${id}`)).fee as number;
        return s.partial[i] ? { attendance: id, amount: Math.floor(fee / 3) } : { attendance: id };
      }));
      const res = await t.post('/receipts', { items });
      expect([201, 422], res.text).toContain(res.status);
      if (res.status === 201) w.receipts.push(res.body);
      return res.status === 201;
    }
    case 'reverse': {
      if (w.receipts.length === 0) return false;
      const r = w.receipts[s.receipt % w.receipts.length];
      const current = await getOk(t, `/receipts/${r.uuid}`);
      const body: Record<string, unknown> = s.withdraw ? { withdraw: true } : {};
      if (s.oneLine) body.items = [current.items[current.items.length - 1].attendance];
      const res = await t.post(`/receipts/${r.uuid}/reverse`, body);
      expect([200, 409], res.text).toContain(res.status);
      if (res.status === 200) stats.reversals++;
      return res.status === 200;
    }
    case 'transfer': {
      const a = app(s.app);
      if (!a) return false;
      const res = await t.post(`/attendances/${a}/transfer`, { offer: w.offers[s.offer % w.offers.length].uuid, status: s.status });
      expect([201, 409], res.text).toContain(res.status);
      if (res.status === 201) {
        w.apps[w.apps.indexOf(a)] = res.body.uuid;
        w.gone.push(a);
        stats.transfers++;
      }
      return res.status === 201;
    }
    case 'move': {
      // A child joins another family, or leaves its family (its own debtor then).
      const p = w.participants[s.participant % w.participants.length];
      const res = await t.patch(`/participants/${p.uuid}`, { account: s.account === null ? null : w.accounts[s.account].uuid });
      expect(res.status, res.text).toBe(200);
      return true;
    }
    case 'delete': {
      const a = app(s.app);
      if (!a) return false;
      const res = await t.del(`/attendances/${a}`);
      expect([204, 409], res.text).toContain(res.status);
      if (res.status === 204) {
        w.apps.splice(w.apps.indexOf(a), 1);
        w.gone.push(a);
      }
      return res.status === 204;
    }
  }
}

const KEEPS_CHARGE = new Set(['participated', 'noshow']);
const CHARGE_TYPES = new Set(['charge', 'cancellation']);

async function checkInvariants(w: World): Promise<void> {
  const debtors = await all((page) => getOk(t, `/debtors?itemsPerPage=200&page=${page}`));
  const debtorOfParty = new Map<string | undefined, string>();
  for (const d of debtors) debtorOfParty.set(d.account?.uuid ?? d.participant?.uuid, d.uuid);
  const netBy = (rows: Schema<'Booking'>[], pick: (b: Schema<'Booking'>) => boolean) => rows.filter(pick).reduce((s, b) => s + b.amount, 0);

  for (const e of w.editions) {
    const ledgers = await all((page) => getOk(t, `/ledgers?edition=${e.uuid}&itemsPerPage=200&page=${page}`));
    const bookings = await all((page) => getOk(t, `/bookings?edition=${e.uuid}&itemsPerPage=200&page=${page}`));
    const apps = await all((page) => getOk(t, `/attendances?edition=${e.uuid}&itemsPerPage=200&page=${page}`));
    // Every ledger: balance = its entries = its bookings.
    for (const l of ledgers) {
      const entries = l.bookEntries.reduce((s, x) => s + x.amount, 0);
      const own = netBy(bookings, (b) => b.ledger === l.uuid);
      expect(l.balance, `ledger ${l.uuid}`).toBe(entries);
      expect(l.balance, `ledger ${l.uuid}`).toBe(own);
    }
    // Every application: charged its fee while paid (bookings net 0), its receipts listed exactly then; unpaid,
    // charged its fee exactly while payable (a kept participated/noshow charge aside).
    const expected = new Map<string, number>();
    for (const a of apps) {
      const mine = bookings.filter((b) => b.attendance === a.uuid);
      const charged = netBy(mine, (b) => CHARGE_TYPES.has(b.type));
      const ctx = `${a.uuid} ${a.status} paid=${a.paid} payable=${a.payable} heldBack=${a.heldBack} ${JSON.stringify(mine.map((b) => [b.type, b.amount]))}`;
      expect(a.paid, ctx).toBe(a.receipts.length > 0);
      if (a.paid) {
        expect(charged, ctx).toBe(a.fee);
        expect(netBy(mine, () => true), ctx).toBe(0);
      } else if (KEEPS_CHARGE.has(a.status)) {
        expect([0, a.fee], ctx).toContain(charged);
      } else {
        expect(charged, ctx).toBe(a.payable ? a.fee : 0);
        expect(netBy(mine, () => true), ctx).toBe(charged);
      }
      const debtor = debtorOfParty.get(a.account?.uuid ?? a.participant!.uuid);
      if (!a.paid) expected.set(debtor!, (expected.get(debtor!) ?? 0) + netBy(mine, () => true));
    }
    // Every ledger's balance: its open payments' fees (+ kept charges of participated/noshow).
    for (const l of ledgers) {
      const open = apps.filter((a) => a.payable && !a.paid && debtorOfParty.get(a.account?.uuid ?? a.participant!.uuid) === l.debtor.uuid);
      const kept = apps.filter((a) => !a.paid && KEEPS_CHARGE.has(a.status) && debtorOfParty.get(a.account?.uuid ?? a.participant!.uuid) === l.debtor.uuid)
        .reduce((s, a) => s + netBy(bookings.filter((b) => b.attendance === a.uuid), (b) => CHARGE_TYPES.has(b.type)), 0);
      expect(l.balance, `ledger ${l.uuid} of ${l.debtor.uuid}`).toBe(open.reduce((s, a) => s + a.fee, 0) + kept);
      expect(l.balance).toBe(expected.get(l.debtor.uuid) ?? 0);
    }
    // Deleted and transferred applications leave nothing behind in the books.
    for (const g of w.gone) expect(netBy(bookings, (b) => b.attendance === g), `gone ${g}`).toBe(0);
  }
}

describe('ledgers over random sequences of transitions, receipts and reversals', () => {
  it('every ledger balance equals the sum of its bookings and matches the open payments', async () => {
    const started = Date.now();
    await fc.assert(
      fc.asyncProperty(fc.tuple(fc.array(applyStep, { minLength: 3, maxLength: 6 }), fc.array(step, { minLength: 10, maxLength: 30 })).map(([a, b]) => [...a, ...b]), async (steps) => {
        const w = await makeWorld();
        stats.runs++;
        for (const s of steps) {
          stats.steps++;
          if (await run(w, s)) stats.ok++;
          else stats.refused++;
          // Background refills (D9) run between steps, as a worker would.
          await h.jobs.drain();
        }
        stats.receipts += w.receipts.length;
        await checkInvariants(w);
      }),
      { numRuns: RUNS, seed: SEED, interruptAfterTimeLimit: BUDGET_MS, markInterruptAsFailure: false },
    );
    // Receipt numbers: unique, without gaps.
    const numbers = (await all((page) => getOk(t, `/receipts?itemsPerPage=200&page=${page}`))).map((r) => Number(r.number.split('-').pop())).sort((a, b) => a - b);
    expect(numbers).toEqual(numbers.map((_, i) => i + 1));
    expect(stats.receipts).toBeGreaterThan(0);
    expect(Date.now() - started).toBeLessThan(BUDGET_MS + 20_000);
  }, BUDGET_MS + 40_000);
});
