import { AsyncLocalStorage } from 'node:async_hooks';
import { KeyedSemaphore, ShareFull } from './bulkhead.js';
import { lockConflictOf } from './timeouts.js';

// Issue 23: a use case (a tRPC procedure, a tenant job) runs as an *attempt*. Lock conflicts that PostgreSQL
// resolves by aborting one transaction (deadlock 40P01, serialization failure 40001) are retried inside the
// service, at most twice, after a small random pause, so they never reach the caller; likewise a named
// statement a pooler lost (26000/42P05, prepared.ts) and an offer whose share of the pool was full (below).
// Only an attempt that changed nothing may run again: the attempt is "dirty" once a transaction committed or an
// autocommit statement wrote (guarded-dialect.ts sees every statement). A write hidden in a function call says
// so itself (`noteWrite`; the only one is `append_application`).
//
// Offer shares: one offer's writers (its row lock) may hold at most a share of the pool. Writers lock the offer
// inside their transaction (src/engines/participant-list), with a connection already in hand; waiting there
// would keep that connection. So a writer that finds the offer's share full gives up at once (`OfferBusy`), its
// transaction rolls back and frees the connection, and the attempt waits for a place of the offer without a
// connection, then runs again holding it. The places an attempt took are kept until the use case ends.

export type Attempt = {
  /** The offer shares of the pool the use case runs on (absent: no offer shares, e.g. a plain ORM in a tool). */
  offers: KeyedSemaphore | null;
  /** Offer keys whose place this use case holds, with their release. */
  held: Map<string, () => void>;
  /** Something was committed or written: running again could do it twice. */
  dirty: boolean;
  /** Connections this attempt holds right now (a nested checkout then skips its share: guarded-dialect.ts). */
  connections: number;
};

const attempts = new AsyncLocalStorage<Attempt>();

export function currentAttempt(): Attempt | undefined {
  return attempts.getStore();
}

/** A write the statement's text does not show (a function that writes), now committed. */
export function noteWrite(): void {
  const a = attempts.getStore();
  if (a) a.dirty = true;
}

/** The offer's share of the pool was full when a transaction came to lock it. */
export class OfferBusy extends Error {
  override name = 'OfferBusy';
  constructor(readonly key: string) {
    super('the offer\'s share of database connections is in use');
  }
}

const offerKey = (schema: string, offer: string) => `${schema}:${offer}`;

/**
 * Inside a transaction, before the offer's row lock: takes a place of the offer's share for the rest of the use
 * case, or throws `OfferBusy` when none is free (the attempt then waits without its connection and runs again).
 */
export function claimOfferShare(schema: string, offer: string): void {
  const a = attempts.getStore();
  if (!a?.offers) return;
  const key = offerKey(schema, offer);
  if (a.held.has(key)) return;
  const release = a.offers.tryAcquire(key);
  if (!release) throw new OfferBusy(key);
  a.held.set(key, release);
}

/** Outside a transaction: runs `fn` (one statement that locks the offer) on a place of the offer's share, waiting for one. */
export async function withOfferShare<T>(schema: string, offer: string, fn: () => Promise<T>): Promise<T> {
  const a = attempts.getStore();
  const key = offerKey(schema, offer);
  if (!a?.offers || a.held.has(key)) return fn();
  const release = await a.offers.acquire(key);
  try {
    return await fn();
  } finally {
    release();
  }
}

export type RetryReason = 'deadlock' | 'serialization' | 'prepared_statement' | 'offer_share';

export type AttemptOptions<T> = {
  offers: KeyedSemaphore | null;
  /** A resolved value that stands for a failure (tRPC's `{ ok: false, error }`): the error in it, else null. */
  failureOf?: (value: T) => unknown;
  /** Called before each run again. */
  onRetry?: (reason: RetryReason) => void;
  /** Pause before running again after a conflict (ms); default 5-50 ms, growing with each attempt. */
  pause?: (n: number) => number;
};

const MAX_CONFLICT_RETRIES = 2;
const MAX_RUNS = 8;

function reasonOf(err: unknown): RetryReason | null {
  if (err instanceof OfferBusy) return 'offer_share';
  const conflict = lockConflictOf(err);
  if (conflict === 'deadlock' || conflict === 'serialization') return conflict;
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, i = 0; e && typeof e === 'object' && i < 5; e = e.cause as typeof e, i++) {
    if (e instanceof OfferBusy) return 'offer_share';
    if (e.code === '26000' || e.code === '42P05') return 'prepared_statement';
  }
  return null;
}

function offerBusyIn(err: unknown): OfferBusy | null {
  for (let e = err as { cause?: unknown } | undefined, i = 0; e && typeof e === 'object' && i < 5; e = e.cause as typeof e, i++) {
    if (e instanceof OfferBusy) return e;
  }
  return null;
}

/** Runs `run` as attempts (above) until it succeeds, fails for another reason, or may not run again. */
export async function runAttempts<T>(run: () => Promise<T>, opts: AttemptOptions<T>): Promise<T> {
  const held = new Map<string, () => void>();
  let conflicts = 0;
  let preparedRetried = false;
  try {
    for (let n = 1; ; n++) {
      const attempt: Attempt = { offers: opts.offers, held, dirty: false, connections: 0 };
      let value: T | undefined;
      let error: unknown = null;
      let threw = false;
      try {
        value = await attempts.run(attempt, run);
        error = opts.failureOf?.(value) ?? null;
      } catch (err) {
        error = err;
        threw = true;
      }
      if (!error) return value as T;
      let reason = attempt.dirty || n >= MAX_RUNS ? null : reasonOf(error);
      if ((reason === 'deadlock' || reason === 'serialization') && conflicts >= MAX_CONFLICT_RETRIES) reason = null;
      if (reason === 'prepared_statement' && preparedRetried) reason = null;
      if (!reason) {
        // An offer share that stayed full, and could not be waited for, is the same answer as waiting too long.
        const busy = offerBusyIn(error);
        if (busy) throw new ShareFull('offer', busy.key, 0);
        if (threw) throw error;
        return value as T;
      }
      opts.onRetry?.(reason);
      if (reason === 'offer_share') {
        // Every place this use case needs, taken again in one order (key order), so two use cases waiting for each
        // other's offers cannot wait for ever.
        const keys = [...new Set([...held.keys(), offerBusyIn(error)!.key])].sort();
        for (const release of held.values()) release();
        held.clear();
        for (const key of keys) held.set(key, await opts.offers!.acquire(key));
      } else {
        if (reason === 'prepared_statement') preparedRetried = true;
        else conflicts++;
        const pause = opts.pause ? opts.pause(n) : (5 + Math.random() * 45) * n;
        if (pause > 0) await new Promise((r) => setTimeout(r, pause));
      }
    }
  } finally {
    for (const release of held.values()) release();
  }
}
