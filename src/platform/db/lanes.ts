import pg from 'pg';
import { laneOf, lanesOf } from './affinity.js';

// The service's connections (issue 26: the pool without private fields). Two shapes behind one small interface:
//
// - `LanePools` (PG_CONNECTION_AFFINITY on, the default): `size` pg.Pools of one connection each, one per lane
//   (affinity.ts). A schema has one lane in pools under 10 connections, two or three in larger ones
//   (`lanesOf`, its own first). A request of schema S takes a free connection of its lanes; otherwise the free
//   connection released last (as pg-pool's own idle order would give it), so nothing waits for its own lane
//   while another connection is free. When all are busy, requests wait in this class's queue: a released
//   connection goes to the oldest of the first WINDOW waiting requests with it among their lanes if there is
//   one, else to the oldest waiting request; a request passed over MAX_SKIPS times is served first regardless
//   (a bound on the wait it adds: a few statements' time). Requests without a schema (the registry, jobs'
//   sweeps) have no lane.
//   The choice is ours; opening, checking and closing connections stay pg-pool's (each lane's pool: its idle
//   timeout, its error handling, its connect timeout), all through its public API.
// - `SharedPool` (affinity off): one pg.Pool of `size` connections, pg's plain order.
//
// Both answer the counts the guard reports (pool-guard.ts) and time a checkout out after `connectTimeoutMs`
// with pg-pool's own words ("timeout exceeded when trying to connect"), which guarded-dialect.ts turns into
// `PoolSaturated` when every connection is in use.

/** A checked-out connection: its client, its lane slot (-1 in a shared pool), and whether it is the lane's own. */
export type Lease = {
  readonly client: pg.PoolClient;
  readonly slot: number;
  /** A connection of the request's schema's lanes (or the request has no schema, or there are no lanes). */
  readonly home: boolean;
  /** Gives the connection back; with an error, pg-pool closes it instead (a new one is opened when next needed). */
  release(err?: Error): void;
};

export interface ConnectionSource {
  readonly size: number;
  /** Connections open, open and not in use, and checkouts waiting for one. */
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
  /** A connection, preferring the lane of `key` (a tenant's schema) where there are lanes. */
  acquire(key?: string): Promise<Lease>;
  end(): Promise<void>;
}

export type SourceOptions = {
  /** Connection settings shared by every connection (pg.PoolConfig without `max`). */
  config: pg.PoolConfig;
  size: number;
  connectTimeoutMs: number;
  /** Each new client, once (error listeners, per-connection state). */
  onConnect?: (client: pg.PoolClient) => void;
  /** A pool's `error` event (an idle connection dropped by the server). */
  onError?: (err: Error) => void;
};

/** What pg-pool says when a checkout waited for its whole connect timeout; lanes say the same. */
export const CONNECT_TIMEOUT_MESSAGE = 'timeout exceeded when trying to connect';

export function isConnectTimeout(err: unknown): boolean {
  return /timeout exceeded when trying to connect/i.test(String((err as Error | undefined)?.message));
}

export class SharedPool implements ConnectionSource {
  readonly pool: pg.Pool;
  readonly size: number;

  constructor(opts: SourceOptions) {
    this.size = opts.size;
    this.pool = new pg.Pool({ ...opts.config, max: opts.size, connectionTimeoutMillis: opts.connectTimeoutMs });
    if (opts.onConnect) this.pool.on('connect', opts.onConnect);
    this.pool.on('error', (err) => opts.onError?.(err));
  }

  get totalCount(): number {
    return this.pool.totalCount;
  }

  get idleCount(): number {
    return this.pool.idleCount;
  }

  get waitingCount(): number {
    return this.pool.waitingCount;
  }

  async acquire(): Promise<Lease> {
    const client = await this.pool.connect();
    return { client, slot: -1, home: true, release: (err?: Error) => client.release(err) };
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}

const WINDOW = 32;
const MAX_SKIPS = 20;

type Waiter = {
  /** The request's lanes, its own first; undefined without a schema. */
  lanes: readonly number[] | undefined;
  skipped: number;
  resolve: (lease: Lease) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout | null;
};

export class LanePools implements ConnectionSource {
  readonly size: number;
  private readonly pools: pg.Pool[];
  private readonly busy: boolean[];
  /** Free slots, the one released last at the end. */
  private readonly free: number[];
  private readonly queue: Waiter[] = [];
  private ended = false;

  constructor(private readonly opts: SourceOptions) {
    this.size = opts.size;
    this.pools = Array.from({ length: opts.size }, () => {
      const pool = new pg.Pool({ ...opts.config, max: 1, connectionTimeoutMillis: opts.connectTimeoutMs });
      if (opts.onConnect) pool.on('connect', opts.onConnect);
      pool.on('error', (err) => opts.onError?.(err));
      return pool;
    });
    this.busy = Array.from({ length: opts.size }, () => false);
    // Slot 0 is the first a request without a lane gets on a fresh pool.
    this.free = Array.from({ length: opts.size }, (_, i) => opts.size - 1 - i);
  }

  /** The lane slot of `key` in this pool (its own; `lanesOf` gives all it is served by under load). */
  laneOf(key: string): number {
    return laneOf(key, this.size);
  }

  /** The lane slots of `key` in this pool, its own first. */
  lanesOf(key: string): readonly number[] {
    return lanesOf(key, this.size);
  }

  get totalCount(): number {
    let n = 0;
    for (const p of this.pools) n += p.totalCount;
    return n;
  }

  get idleCount(): number {
    let n = 0;
    for (const slot of this.free) n += this.pools[slot]!.totalCount;
    return n;
  }

  get waitingCount(): number {
    return this.queue.length;
  }

  acquire(key?: string): Promise<Lease> {
    if (this.ended) return Promise.reject(new Error('Cannot use a pool after calling end on the pool'));
    const lanes = key === undefined ? undefined : lanesOf(key, this.size);
    if (this.queue.length === 0) {
      const slot = this.pick(lanes);
      if (slot !== undefined) return this.take(slot, lanes);
    }
    return new Promise<Lease>((resolve, reject) => {
      const w: Waiter = { lanes, skipped: 0, resolve, reject, timer: null };
      if (this.opts.connectTimeoutMs > 0) {
        w.timer = setTimeout(() => {
          const at = this.queue.indexOf(w);
          if (at >= 0) this.queue.splice(at, 1);
          reject(new Error(CONNECT_TIMEOUT_MESSAGE));
        }, this.opts.connectTimeoutMs);
      }
      this.queue.push(w);
    });
  }

  /** A free slot for `lanes`: the first of them free, else the free one released last that is open, else any free one. */
  private pick(lanes: readonly number[] | undefined): number | undefined {
    if (this.free.length === 0) return undefined;
    if (lanes !== undefined) {
      for (const lane of lanes) if (!this.busy[lane]) return lane;
    }
    for (let i = this.free.length - 1; i >= 0; i--) {
      if (this.pools[this.free[i]!]!.totalCount > 0) return this.free[i];
    }
    return this.free[this.free.length - 1];
  }

  private async take(slot: number, lanes: readonly number[] | undefined): Promise<Lease> {
    this.busy[slot] = true;
    const at = this.free.indexOf(slot);
    if (at >= 0) this.free.splice(at, 1);
    let client: pg.PoolClient;
    try {
      client = await this.pools[slot]!.connect();
    } catch (err) {
      // Could not open the connection: the slot is free again (least preferred), and the next waiter tries it.
      this.busy[slot] = false;
      if (this.queue.length > 0) this.dispatch(slot);
      else this.free.unshift(slot);
      throw err;
    }
    let released = false;
    return {
      client,
      slot,
      home: lanes === undefined || lanes.includes(slot),
      release: (err?: Error) => {
        if (released) return;
        released = true;
        client.release(err);
        this.busy[slot] = false;
        this.dispatch(slot);
      },
    };
  }

  /** `slot` just became free: hand it to the waiter it suits best, or keep it as the most recently freed. */
  private dispatch(slot: number): void {
    if (this.busy[slot]) return;
    if (this.queue.length === 0 || this.ended) {
      const at = this.free.indexOf(slot);
      if (at >= 0) this.free.splice(at, 1);
      this.free.push(slot);
      return;
    }
    let chosen = 0;
    if (this.queue[0]!.skipped < MAX_SKIPS) {
      const n = Math.min(this.queue.length, WINDOW);
      for (let i = 0; i < n; i++) {
        if (this.queue[i]!.lanes?.includes(slot)) {
          chosen = i;
          break;
        }
      }
    }
    for (let j = 0; j < chosen; j++) this.queue[j]!.skipped++;
    const [w] = this.queue.splice(chosen, 1);
    if (w!.timer) clearTimeout(w!.timer);
    this.take(slot, w!.lanes).then(w!.resolve, w!.reject);
  }

  async end(): Promise<void> {
    this.ended = true;
    for (const w of this.queue.splice(0)) {
      if (w.timer) clearTimeout(w.timer);
      w.reject(new Error('Cannot use a pool after calling end on the pool'));
    }
    await Promise.all(this.pools.map((p) => p.end()));
  }
}

/** Lanes (affinity on) or one shared pool (off). */
export function createConnectionSource(opts: SourceOptions & { lanes: boolean }): ConnectionSource {
  return opts.lanes ? new LanePools(opts) : new SharedPool(opts);
}
