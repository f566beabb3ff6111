// Allocation of places by lot: D7 and D10 "Lot and commit". Pure: the caller loads the edition's
// `waiting` applications and persists the decisions (all heldBack, with `reason` as decisionReason).

import { ageAtFirstDate, ageLimitsText, ageVerdict, berlinDay } from './age.js';

export { ageOn } from './age.js';

export interface LotInterval {
  /** ISO 8601 timestamps (with offset). Recurring dates must be passed already expanded. */
  begin: string;
  end: string;
}

export interface LotApplication {
  id: string;
  participantId: string;
  offerId: string;
  /** 1 = most wanted. null, 0 (or negative, spec 8) go after all numbered ones (D10). */
  userPriority: number | null;
  /** Creation order of the application (e.g. a serial). With the seed, the only input to the draw (D10). */
  createdOrder: number;
  /** 'YYYY-MM-DD' or null when unknown. */
  dateOfBirth: string | null;
}

export interface LotOffer {
  id: string;
  /** maxParticipants; null = unlimited. */
  capacity: number | null;
  /** Places already taken (confirmed, held back or not: D10 vacancies). */
  confirmedCount: number;
  minAge: number | null;
  maxAge: number | null;
  /** Day or timestamp of the first date; falls back to the earliest of `dates`. */
  firstDate: string | null;
  dates: LotInterval[];
}

export interface LotInput {
  seed: number;
  applications: LotApplication[];
  offers: LotOffer[];
  /** Places the children already hold, in any edition (D10), as date intervals. */
  existingConfirmed: Array<{ participantId: string; dates: LotInterval[] }>;
  /** D7: losers are waitlisted (default) or unfulfilled. */
  waitlist: boolean;
}

export type LotStatus = 'confirmed' | 'waitlisted' | 'unfulfilled';
export type LotReasonCode = 'won' | 'no_place' | 'overlap' | 'age';

export interface LotDecision {
  id: string;
  status: LotStatus;
  reasonCode: LotReasonCode;
  /** Human-readable German text, stored as the application's `decisionReason`. */
  reason: string;
  /** 1-based round (rounds ordered by userPriority, unprioritised last). */
  round: number;
  /** 1-based position in the whole draw; waitlists follow this order. */
  drawPosition: number;
}

export interface LotResult {
  /** In draw order. */
  decisions: LotDecision[];
  counts: { confirmed: number; waitlisted: number; unfulfilled: number };
}

/** mulberry32: a tiny, well-mixed 32-bit PRNG. Returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Folds an integer of up to 53 bits into 32 bits (both halves count).
function fold(n: number): number {
  const x = Math.trunc(n);
  const low = x >>> 0;
  const high = Math.floor(x / 4294967296) >>> 0;
  return (low ^ Math.imul(high ^ 0x9e3779b9, 0x85ebca6b)) >>> 0;
}

/**
 * The random draw number of one application: depends only on the seed and its creation order, never on
 * ids (D10), so an identical scenario in another edition draws the same winners.
 */
export function drawKey(seed: number, createdOrder: number): number {
  const first = mulberry32(fold(seed))();
  const mixed = (Math.floor(first * 4294967296) ^ Math.imul(fold(createdOrder) + 0x7f4a7c15, 0xc2b2ae35)) >>> 0;
  return mulberry32(mixed)();
}

interface Span {
  begin: number;
  end: number;
}

const toSpans = (dates: LotInterval[]): Span[] =>
  dates.map((d) => ({ begin: Date.parse(d.begin), end: Date.parse(d.end) }));

/** Intervals overlap when they share time; touching ends (one ends as the other begins) do not. */
function overlaps(a: Span[], b: Span[]): boolean {
  return a.some((x) => b.some((y) => x.begin < y.end && y.begin < x.end));
}

export function allocateByLot(input: LotInput): LotResult {
  const offers = new Map(input.offers.map((o) => [o.id, o]));
  const remaining = new Map(
    input.offers.map((o) => [o.id, o.capacity === null ? Infinity : Math.max(0, o.capacity - o.confirmedCount)]),
  );
  const offerSpans = new Map(input.offers.map((o) => [o.id, toSpans(o.dates)]));
  const firstDay = new Map(
    input.offers.map((o) => {
      const first = o.firstDate ?? [...o.dates].sort((a, b) => Date.parse(a.begin) - Date.parse(b.begin))[0]?.begin ?? null;
      return [o.id, first === null ? null : berlinDay(first)];
    }),
  );
  const held = new Map<string, Span[]>();
  for (const e of input.existingConfirmed) {
    held.set(e.participantId, [...(held.get(e.participantId) ?? []), ...toSpans(e.dates)]);
  }
  const placesWon = new Map<string, number>();

  // Rounds by userPriority, 1 first; null/0/negative after all numbered ones (D10).
  const roundKey = (a: LotApplication) => (a.userPriority !== null && a.userPriority >= 1 ? a.userPriority : Infinity);
  const keys = [...new Set(input.applications.map(roundKey))].sort((a, b) => a - b);

  const decisions: LotDecision[] = [];
  let position = 0;
  keys.forEach((key, roundIndex) => {
    const round = roundIndex + 1;
    const pending = input.applications
      .filter((a) => roundKey(a) === key)
      .map((a) => ({ a, draw: drawKey(input.seed, a.createdOrder) }))
      .sort((x, y) => x.draw - y.draw || x.a.createdOrder - y.a.createdOrder);

    // Fairness (D7): among the rest of this round, the child with the fewest places so far goes first;
    // within equal counts the draw decides (the earliest in draw order). A min-heap on (places won, draw
    // index) with lazy keys: counts only grow, so an entry whose stored count is behind its child's count
    // now goes back in with the current one, and the first entry popped with a current count is the one the
    // rule names. O(n log n) per round instead of a scan of the rest for every pick.
    const heap = new DrawHeap(pending.length);
    for (let i = 0; i < pending.length; i++) heap.push(placesWon.get(pending[i]!.a.participantId) ?? 0, i);
    while (heap.size > 0) {
      const { won, index } = heap.pop();
      const a = pending[index]!.a;
      const now = placesWon.get(a.participantId) ?? 0;
      if (now !== won) {
        heap.push(now, index);
        continue;
      }
      position += 1;
      decisions.push(decide(a, round, position));
    }
  });

  function decide(a: LotApplication, round: number, drawPosition: number): LotDecision {
    const offer = offers.get(a.offerId);
    if (!offer) throw new Error(`allocateByLot: application ${a.id} names unknown offer ${a.offerId}`);
    const where = `(Runde ${round}, Ziehung ${drawPosition})`;
    const base = { id: a.id, round, drawPosition };

    // Age at the offer's first date, limits inclusive. Unknown birth date or no dates: not checked
    // (the lot does not punish missing data; the team can still correct it).
    // The one age rule (domain/age.ts), shared with retention and the families' own applications.
    const age = ageAtFirstDate(a.dateOfBirth, firstDay.get(offer.id) ?? null);
    if (age !== null && ageVerdict(age, offer) !== 'fits') {
      // Never admissible, so never waitlisted (a refill must not confirm it later).
      return { ...base, status: 'unfulfilled', reasonCode: 'age', reason: `Losverfahren: Alter ${age} außerhalb der Altersgrenzen ${ageLimitsText(offer)} ${where}` };
    }

    const spans = offerSpans.get(offer.id) ?? [];
    const mine = held.get(a.participantId) ?? [];
    if (overlaps(spans, mine)) {
      // The child already holds a place at that time (this draw or any edition, D10).
      return {
        ...base,
        status: 'unfulfilled',
        reasonCode: 'overlap',
        reason: `Losverfahren: Termine überschneiden sich mit einem anderen Platz des Kindes ${where}`,
      };
    }

    const left = remaining.get(offer.id) ?? 0;
    if (left <= 0) {
      return input.waitlist
        ? { ...base, status: 'waitlisted', reasonCode: 'no_place', reason: `Losverfahren: kein Platz frei, Warteliste ${where}` }
        : { ...base, status: 'unfulfilled', reasonCode: 'no_place', reason: `Losverfahren: kein Platz frei ${where}` };
    }

    remaining.set(offer.id, left - 1);
    placesWon.set(a.participantId, (placesWon.get(a.participantId) ?? 0) + 1);
    held.set(a.participantId, [...mine, ...spans]);
    return { ...base, status: 'confirmed', reasonCode: 'won', reason: `Losverfahren: Platz erhalten ${where}` };
  }

  const counts = { confirmed: 0, waitlisted: 0, unfulfilled: 0 };
  for (const d of decisions) counts[d.status] += 1;
  return { decisions, counts };
}

/** A binary min-heap of (places won, draw index) pairs, ordered by won, then index. */
class DrawHeap {
  private won: Float64Array;
  private index: Int32Array;
  size = 0;

  constructor(capacity: number) {
    this.won = new Float64Array(Math.max(1, capacity));
    this.index = new Int32Array(Math.max(1, capacity));
  }

  private less(i: number, j: number): boolean {
    return this.won[i]! < this.won[j]! || (this.won[i] === this.won[j] && this.index[i]! < this.index[j]!);
  }

  private swap(i: number, j: number): void {
    const w = this.won[i]!;
    this.won[i] = this.won[j]!;
    this.won[j] = w;
    const x = this.index[i]!;
    this.index[i] = this.index[j]!;
    this.index[j] = x;
  }

  push(won: number, index: number): void {
    // Never more entries than the round has applications: each is in the heap at most once.
    let i = this.size++;
    this.won[i] = won;
    this.index[i] = index;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  pop(): { won: number; index: number } {
    const top = { won: this.won[0]!, index: this.index[0]! };
    this.size -= 1;
    if (this.size > 0) {
      this.won[0] = this.won[this.size]!;
      this.index[0] = this.index[this.size]!;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < this.size && this.less(l, m)) m = l;
        if (r < this.size && this.less(r, m)) m = r;
        if (m === i) break;
        this.swap(i, m);
        i = m;
      }
    }
    return top;
  }
}
