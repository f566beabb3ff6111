import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  ageOn,
  allocateByLot,
  drawKey,
  mulberry32,
  type LotApplication,
  type LotInput,
  type LotOffer,
} from '../../src/domain/lottery.js';

const day = (d: number, from = 9, to = 12) => ({
  begin: `2027-07-${String(d).padStart(2, '0')}T${String(from).padStart(2, '0')}:00:00+02:00`,
  end: `2027-07-${String(d).padStart(2, '0')}T${String(to).padStart(2, '0')}:00:00+02:00`,
});

const offer = (id: string, capacity: number | null, dates = [day(10)], extra: Partial<LotOffer> = {}): LotOffer => ({
  id, capacity, confirmedCount: 0, minAge: null, maxAge: null, firstDate: null, dates, ...extra,
});

let order = 0;
const apply = (participantId: string, offerId: string, userPriority: number | null = 1, extra: Partial<LotApplication> = {}): LotApplication => {
  order += 1;
  return { id: `${participantId}-${offerId}`, participantId, offerId, userPriority, createdOrder: order, dateOfBirth: '2017-05-01', ...extra };
};

const run = (partial: Partial<LotInput>) =>
  allocateByLot({ seed: 42, applications: [], offers: [], existingConfirmed: [], waitlist: true, ...partial });
const statusOf = (r: ReturnType<typeof run>) => Object.fromEntries(r.decisions.map((d) => [d.id, d.status]));

describe('PRNG and draw', () => {
  it('mulberry32 is deterministic and in [0,1)', () => {
    const a = mulberry32(7), b = mulberry32(7);
    const xs = Array.from({ length: 100 }, () => a());
    expect(xs).toEqual(Array.from({ length: 100 }, () => b()));
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(new Set(xs).size).toBe(100);
  });

  it('drawKey depends on seed and createdOrder only', () => {
    expect(drawKey(1, 5)).toBe(drawKey(1, 5));
    expect(drawKey(1, 5)).not.toBe(drawKey(2, 5));
    expect(drawKey(1, 5)).not.toBe(drawKey(1, 6));
    expect(drawKey(2 ** 40, 5)).not.toBe(drawKey(0, 5)); // high bits of a large seed count
  });

  it.each([
    ['2017-05-01', '2027-04-30', 9],
    ['2017-05-01', '2027-05-01', 10],
    ['2016-02-29', '2027-02-28', 10],
    ['2016-02-29', '2027-03-01', 11],
  ])('ageOn(%s, %s) = %s', (dob, on, age) => {
    expect(ageOn(dob, on)).toBe(age);
  });
});

describe('allocateByLot', () => {
  it('is deterministic: same seed and input give the same output; ids do not matter', () => {
    const offers = [offer('A', 2), offer('B', 1, [day(11)])];
    const apps = ['p1', 'p2', 'p3', 'p4', 'p5'].flatMap((p) => [apply(p, 'A'), apply(p, 'B', 2)]);
    const r1 = run({ offers, applications: apps, seed: 99 });
    const r2 = run({ offers, applications: [...apps].reverse(), seed: 99 });
    expect(r2).toEqual(r1);
    // renaming ids keeps the winners (by creation order)
    const renamed = apps.map((a) => ({ ...a, id: `x${a.createdOrder}`, participantId: `q${a.participantId}` }));
    const r3 = run({ offers, applications: renamed, seed: 99 });
    const byOrder = (r: typeof r1, list: LotApplication[]) =>
      r.decisions.map((d) => [list.find((a) => a.id === d.id)!.createdOrder, d.status, d.drawPosition]);
    expect(byOrder(r3, renamed)).toEqual(byOrder(r1, apps));
  });

  it('different seeds can give different winners', () => {
    const offers = [offer('A', 1)];
    const apps = Array.from({ length: 10 }, (_, i) => apply(`p${i}`, 'A'));
    const winners = new Set(
      Array.from({ length: 20 }, (_, s) => run({ seed: s, offers, applications: apps }).decisions.find((d) => d.status === 'confirmed')!.id),
    );
    expect(winners.size).toBeGreaterThan(1);
  });

  it('respects capacity, counting places already taken, and waitlists the rest in draw order', () => {
    const offers = [offer('A', 5, [day(10)], { confirmedCount: 2 }), offer('U', null, [day(12)])];
    const apps = [
      ...Array.from({ length: 6 }, (_, i) => apply(`p${i}`, 'A')),
      ...Array.from({ length: 4 }, (_, i) => apply(`q${i}`, 'U')),
    ];
    const r = run({ offers, applications: apps });
    const a = r.decisions.filter((d) => d.id.endsWith('-A'));
    expect(a.filter((d) => d.status === 'confirmed')).toHaveLength(3);
    expect(a.filter((d) => d.status === 'waitlisted')).toHaveLength(3);
    expect(r.decisions.filter((d) => d.id.endsWith('-U')).every((d) => d.status === 'confirmed')).toBe(true);
    expect(r.counts).toEqual({ confirmed: 7, waitlisted: 3, unfulfilled: 0 });
    // decisions come in draw order, numbered 1..n
    expect(r.decisions.map((d) => d.drawPosition)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    expect(r.decisions[0].reason).toMatch(/^Losverfahren: Platz erhalten \(Runde 1, Ziehung 1\)$/);
    expect(a.find((d) => d.status === 'waitlisted')!.reason).toContain('Warteliste');
  });

  it('makes losers unfulfilled when waitlist is false', () => {
    const r = run({ offers: [offer('A', 1)], applications: [apply('p1', 'A'), apply('p2', 'A')], waitlist: false });
    expect(r.counts).toEqual({ confirmed: 1, waitlisted: 0, unfulfilled: 1 });
    expect(r.decisions[1]).toMatchObject({ status: 'unfulfilled', reasonCode: 'no_place' });
  });

  it('serves priority rounds in order: 1, 2, ..., then null/0', () => {
    // p1 wants A with priority 2, p2 with priority 1, p3 without priority, p4 with 0: p2 wins whatever the seed.
    for (let seed = 0; seed < 30; seed++) {
      const apps = [apply('p1', 'A', 2), apply('p2', 'A', 1), apply('p3', 'A', null), apply('p4', 'A', 0)];
      const r = run({ seed, offers: [offer('A', 1)], applications: apps });
      expect(statusOf(r)).toMatchObject({ 'p2-A': 'confirmed', 'p1-A': 'waitlisted', 'p3-A': 'waitlisted', 'p4-A': 'waitlisted' });
      expect(r.decisions.slice(0, 2).map((d) => d.id)).toEqual(['p2-A', 'p1-A']);
      expect(r.decisions.slice(2).every((d) => d.round === 3)).toBe(true);
    }
  });

  it('gives children with fewer places so far precedence within a round', () => {
    // Round 1: p1 gets X (only applicant). Round 2: p1 and p2 both want Y (1 place): p2 (0 places) wins
    // whatever the draw says.
    for (let seed = 0; seed < 30; seed++) {
      const apps = [apply('p1', 'X', 1), apply('p1', 'Y', 2), apply('p2', 'Y', 2)];
      const r = run({ seed, offers: [offer('X', 1, [day(5)]), offer('Y', 1, [day(6)])], applications: apps });
      expect(statusOf(r)).toEqual({ 'p1-X': 'confirmed', 'p2-Y': 'confirmed', 'p1-Y': 'waitlisted' });
    }
  });

  it('re-evaluates fairness during a round (places won earlier in the same round count)', () => {
    // Everyone's priority 1. p1 applies to A and B; p2 to B only; each 1 place. If p1 draws A first,
    // p2 goes before p1's B application; p2 always ends with B when p1 has A.
    for (let seed = 0; seed < 30; seed++) {
      const apps = [apply('p1', 'A'), apply('p1', 'B'), apply('p2', 'B')];
      const r = run({ seed, offers: [offer('A', 1, [day(1)]), offer('B', 1, [day(2)])], applications: apps });
      const s = statusOf(r);
      if (s['p1-A'] === 'confirmed' && r.decisions[0].id === 'p1-A') expect(s['p2-B']).toBe('confirmed');
      expect(s['p1-B'] === 'confirmed' && s['p2-B'] === 'confirmed').toBe(false);
    }
  });

  it('never gives a child two overlapping places, including places held before', () => {
    const offers = [offer('A', 5, [day(10, 9, 12)]), offer('B', 5, [day(10, 11, 14)]), offer('C', 5, [day(10, 12, 15)])];
    const r = run({ offers, applications: [apply('p1', 'A', 1), apply('p1', 'B', 2), apply('p1', 'C', 3)] });
    // B overlaps A; C touches A's end (12:00) and is fine.
    expect(statusOf(r)).toEqual({ 'p1-A': 'confirmed', 'p1-B': 'unfulfilled', 'p1-C': 'confirmed' });
    expect(r.decisions[1]).toMatchObject({ reasonCode: 'overlap' });
    expect(r.decisions[1].reason).toContain('überschneiden');

    const r2 = run({
      offers,
      applications: [apply('p1', 'A'), apply('p2', 'A')],
      existingConfirmed: [{ participantId: 'p1', dates: [{ begin: '2027-07-10T08:00:00Z', end: '2027-07-10T08:30:00Z' }] }],
    });
    expect(statusOf(r2)).toEqual({ 'p1-A': 'unfulfilled', 'p2-A': 'confirmed' });
  });

  it.each([
    // dob, minAge, maxAge, expected  (first date 2027-07-10)
    ['2017-07-10', 10, 12, 'confirmed'], // 10th birthday on the first date
    ['2017-07-11', 10, 12, 'unfulfilled'], // still 9
    ['2014-07-11', 10, 12, 'confirmed'], // 12, turns 13 next day
    ['2014-07-10', 10, 12, 'unfulfilled'], // 13
    ['2014-07-10', null, null, 'confirmed'],
    ['2020-01-01', 6, null, 'confirmed'], // 7
    [null, 10, 12, 'confirmed'], // unknown birth date: not checked
  ] as const)('age: born %s, limits %s-%s -> %s', (dateOfBirth, minAge, maxAge, expected) => {
    const r = run({
      offers: [offer('A', 3, [day(10)], { minAge, maxAge })],
      applications: [apply('p1', 'A', 1, { dateOfBirth })],
    });
    expect(r.decisions[0].status).toBe(expected);
    if (expected === 'unfulfilled') expect(r.decisions[0]).toMatchObject({ reasonCode: 'age' });
  });

  it('uses the given firstDate for the age (Berlin day of a timestamp)', () => {
    const r = run({
      offers: [offer('A', 3, [day(10)], { minAge: 10, firstDate: '2027-07-10T23:30:00Z' })], // 11 July in Berlin
      applications: [apply('p1', 'A', 1, { dateOfBirth: '2017-07-11' })],
    });
    expect(r.decisions[0].status).toBe('confirmed');
  });

  it('throws on an application for an unknown offer', () => {
    expect(() => run({ applications: [apply('p1', 'nope')] })).toThrow(/unknown offer/);
  });

  it('property: capacity and overlap invariants hold, every application decided once, deterministic', () => {
    const offerArb = fc.record({
      capacity: fc.option(fc.integer({ min: 0, max: 4 }), { nil: null }),
      confirmedCount: fc.integer({ min: 0, max: 2 }),
      day: fc.integer({ min: 1, max: 5 }),
      from: fc.integer({ min: 8, max: 14 }),
      hours: fc.integer({ min: 1, max: 4 }),
    });
    const appArb = fc.record({
      participant: fc.integer({ min: 0, max: 7 }),
      offer: fc.nat(),
      userPriority: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
    });
    fc.assert(
      fc.property(
        fc.integer(),
        fc.boolean(),
        fc.array(offerArb, { minLength: 1, maxLength: 6 }),
        fc.array(appArb, { maxLength: 40 }),
        (seed, waitlist, offerSpecs, appSpecs) => {
          const offers = offerSpecs.map((o, i) =>
            offer(`o${i}`, o.capacity, [day(o.day, o.from, o.from + o.hours)], { confirmedCount: o.confirmedCount }),
          );
          const seen = new Set<string>();
          const applications: LotApplication[] = [];
          appSpecs.forEach((a, i) => {
            const offerId = `o${a.offer % offers.length}`;
            const key = `p${a.participant}|${offerId}`;
            if (seen.has(key)) return; // one application per child and offer
            seen.add(key);
            applications.push({
              id: `a${i}`, participantId: `p${a.participant}`, offerId, userPriority: a.userPriority, createdOrder: i, dateOfBirth: null,
            });
          });
          const input = { seed, waitlist, offers, applications, existingConfirmed: [] };
          const r = allocateByLot(input);
          expect(allocateByLot(input)).toEqual(r);
          expect(r.decisions.map((d) => d.id).sort()).toEqual(applications.map((a) => a.id).sort());
          if (!waitlist) expect(r.counts.waitlisted).toBe(0);

          const confirmed = r.decisions.filter((d) => d.status === 'confirmed').map((d) => applications.find((a) => a.id === d.id)!);
          for (const o of offers) {
            const n = confirmed.filter((a) => a.offerId === o.id).length;
            if (o.capacity !== null) expect(n).toBeLessThanOrEqual(Math.max(0, o.capacity - o.confirmedCount));
            // no one waitlisted for lack of places while a place was left
            const left = o.capacity === null ? Infinity : o.capacity - o.confirmedCount - n;
            const noPlace = r.decisions.filter((d) => d.reasonCode === 'no_place' && applications.find((a) => a.id === d.id)!.offerId === o.id);
            if (noPlace.length > 0) expect(left).toBeLessThanOrEqual(0);
          }
          const spanOf = (offerId: string) => {
            const d = offers.find((o) => o.id === offerId)!.dates[0];
            return [Date.parse(d.begin), Date.parse(d.end)];
          };
          for (const x of confirmed) {
            for (const y of confirmed) {
              if (x === y || x.participantId !== y.participantId) continue;
              const [b1, e1] = spanOf(x.offerId), [b2, e2] = spanOf(y.offerId);
              expect(b1 < e2 && b2 < e1).toBe(false);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('property: every pick is the rule\'s pick (round by priority, fewest places so far, then the seeded draw)', () => {
    // Checks the order the heap produces against the rule itself, recomputed naively from the decisions.
    const appArb = fc.record({
      participant: fc.integer({ min: 0, max: 12 }),
      offer: fc.integer({ min: 0, max: 7 }),
      userPriority: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
    });
    fc.assert(
      fc.property(fc.integer(), fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 8, maxLength: 8 }), fc.array(appArb, { maxLength: 80 }),
        (seed, capacities, appSpecs) => {
          const offers = capacities.map((c, i) => offer(`o${i}`, c, [day(1 + (i % 4), 9 + (i % 3), 13)]));
          const seen = new Set<string>();
          const applications: LotApplication[] = [];
          appSpecs.forEach((a, i) => {
            const key = `p${a.participant}|o${a.offer}`;
            if (seen.has(key)) return;
            seen.add(key);
            applications.push({ id: `a${i}`, participantId: `p${a.participant}`, offerId: `o${a.offer}`, userPriority: a.userPriority, createdOrder: i + 1, dateOfBirth: null });
          });
          const r = allocateByLot({ seed, waitlist: true, offers, applications, existingConfirmed: [] });
          const byId = new Map(applications.map((a) => [a.id, a]));
          const roundKey = (a: LotApplication) => (a.userPriority !== null && a.userPriority >= 1 ? a.userPriority : Infinity);
          const won = new Map<string, number>();
          const decided = new Set<string>();
          let lastKey = -Infinity;
          r.decisions.forEach((d, k) => {
            const a = byId.get(d.id)!;
            expect(d.drawPosition).toBe(k + 1);
            expect(roundKey(a)).toBeGreaterThanOrEqual(lastKey);
            lastKey = roundKey(a);
            const rest = applications.filter((x) => !decided.has(x.id) && roundKey(x) === roundKey(a));
            const rank = (x: LotApplication) => [won.get(x.participantId) ?? 0, drawKey(seed, x.createdOrder), x.createdOrder] as const;
            const best = rest.reduce((m, x) => {
              const [w1, k1, c1] = rank(x), [w2, k2, c2] = rank(m);
              return w1 < w2 || (w1 === w2 && (k1 < k2 || (k1 === k2 && c1 < c2))) ? x : m;
            });
            expect(a.id).toBe(best.id);
            decided.add(a.id);
            if (d.status === 'confirmed') won.set(a.participantId, (won.get(a.participantId) ?? 0) + 1);
          });
          expect(decided.size).toBe(applications.length);
        }),
      { numRuns: 300 },
    );
  });

  it('draws 20,000 applications of 8,000 children in one round the same way twice', () => {
    // The size of the benchmark (bench/lot.ts) in one round, the worst case for the fairness rule.
    const offers = Array.from({ length: 600 }, (_, i) => offer(`o${i}`, 15, [day(1 + (i % 20), 9, 12 + (i % 3))]));
    const applications: LotApplication[] = Array.from({ length: 20_000 }, (_, i) => ({
      id: `a${i}`, participantId: `p${i % 8000}`, offerId: `o${(i * 7) % 600}`, userPriority: 1, createdOrder: i + 1, dateOfBirth: null,
    }));
    const input = { seed: 7, waitlist: true, offers, applications, existingConfirmed: [] };
    const r = allocateByLot(input);
    expect(r.decisions).toHaveLength(20_000);
    expect(r.counts.confirmed).toBeLessThanOrEqual(600 * 15);
    expect(allocateByLot(input)).toEqual(r);
  });
});
