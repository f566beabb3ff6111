// Issue 23, bulkheads: a share of the connection pool per key (a municipality's schema, one offer). Holders of a
// key take at most `limit` places at once; the rest wait in order, and a wait longer than `maxWaitMs` ends with
// `ShareFull` (answered 503 with Retry-After), so one key's trouble never takes the places of the others.
// Plain in-process counting: no connection is held while waiting here.

export type ShareScope = 'tenant' | 'offer';

/** A key's share stayed full for the whole wait. */
export class ShareFull extends Error {
  override name = 'ShareFull';
  constructor(readonly scope: ShareScope, readonly key: string, readonly waitedMs: number) {
    super(scope === 'tenant'
      ? 'the municipality\'s share of database connections stayed in use'
      : 'the offer\'s share of database connections stayed in use');
  }
}

type Waiter = { grant: (release: () => void) => void; fail: (err: Error) => void; timer: NodeJS.Timeout | null };
type Entry = { held: number; queue: Waiter[]; fullSince: number | null };

export type ShareStats = { key: string; held: number; waiting: number };

export class KeyedSemaphore {
  private readonly entries = new Map<string, Entry>();

  /** `onFull(key)`: the first request of a key that has to wait (the key reached its limit); `onRefused`: a wait ran out. */
  constructor(
    readonly scope: ShareScope,
    readonly limit: number,
    private readonly maxWaitMs: number,
    private readonly onFull?: (key: string, held: number) => void,
    private readonly onRefused?: (key: string, waitedMs: number) => void,
  ) {
    if (!(limit >= 1)) throw new Error('a share needs a limit of at least 1');
  }

  private entry(key: string): Entry {
    let e = this.entries.get(key);
    if (!e) this.entries.set(key, (e = { held: 0, queue: [], fullSince: null }));
    return e;
  }

  /** A place for `key` if one is free now, else null. */
  tryAcquire(key: string): (() => void) | null {
    const e = this.entry(key);
    if (e.held >= this.limit || e.queue.length > 0) {
      this.tidy(key, e);
      return null;
    }
    e.held++;
    return this.releaser(key, e);
  }

  /** Waits (in arrival order) for a place for `key`; rejects with `ShareFull` after `maxWaitMs`. */
  acquire(key: string): Promise<() => void> {
    const now = this.tryAcquire(key);
    if (now) return Promise.resolve(now);
    const e = this.entry(key);
    if (e.fullSince === null) {
      e.fullSince = Date.now();
      this.onFull?.(key, e.held);
    }
    const started = Date.now();
    return new Promise((resolve, reject) => {
      const w: Waiter = { grant: resolve, fail: reject, timer: null };
      if (this.maxWaitMs > 0) {
        w.timer = setTimeout(() => {
          const at = e.queue.indexOf(w);
          if (at >= 0) e.queue.splice(at, 1);
          this.tidy(key, e);
          this.onRefused?.(key, Date.now() - started);
          reject(new ShareFull(this.scope, key, Date.now() - started));
        }, this.maxWaitMs);
        w.timer.unref();
      }
      e.queue.push(w);
    });
  }

  private releaser(key: string, e: Entry): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = e.queue.shift();
      if (next) {
        // The place passes straight to the next waiter.
        if (next.timer) clearTimeout(next.timer);
        next.grant(this.releaser(key, e));
        return;
      }
      e.held--;
      this.tidy(key, e);
    };
  }

  private tidy(key: string, e: Entry): void {
    if (e.queue.length === 0) e.fullSince = null;
    if (e.held === 0 && e.queue.length === 0 && this.entries.get(key) === e) this.entries.delete(key);
  }

  /** Held places and waiting requests per key (keys with neither are left out). */
  stats(): ShareStats[] {
    return [...this.entries].map(([key, e]) => ({ key, held: e.held, waiting: e.queue.length }));
  }

  /** Whether `key` is at its limit now. */
  full(key: string): boolean {
    return (this.entries.get(key)?.held ?? 0) >= this.limit;
  }
}

/** `share` (0 < share ≤ 1) of `poolSize` places, at least one. */
export function placesOf(share: number, poolSize: number): number {
  return Math.max(1, Math.floor(share * poolSize + 1e-9));
}
