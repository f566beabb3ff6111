import { AsyncLocalStorage } from 'node:async_hooks';
import type { Pool, PoolClient } from 'pg';
import { readConfig } from '../config.js';

// Connection affinity (issue 10.4, a thousand municipalities). A PostgreSQL backend keeps what it learnt of a
// tenant's schema: its catalog entries and the plans of its named statements (prepared.ts; ~0.5 MB for the
// public offer page). With traffic spread over 500 schemas and every pool connection serving every schema,
// 10 connections hold 5,000 (connection, schema) pairs, and most requests land on a backend that has to parse
// and plan again. Here each schema has a preferred connection (its lane: a hash of the schema name over the
// pool's size), so a backend serves about 1/max of the schemas and keeps their plans.
//
// A preference only: a request takes an idle connection of its lane when there is one, and otherwise the
// connection it would have had anyway. When the pool is busy, a released connection goes to the oldest of the
// first WINDOW waiting requests of its lane if there is one, else to the oldest waiting request; a request that
// was passed over MAX_SKIPS times is served first regardless (a bound on the wait it adds: a few statements'
// time). Requests without a tenant (the registry, jobs' sweeps) have no lane: they take whatever connection
// pg-pool gives them.
//
// pg-pool (3.14, pinned in the lock file) has no hook for choosing; this reorders its idle list and its queue of
// waiting requests just before it takes the last idle connection and the first waiter (`_pulseQueue`). Should
// those internals change shape, nothing is reordered and the pool behaves as it does without affinity
// (test/platform/db/affinity.test.ts fails first).

const WINDOW = 32;
const MAX_SKIPS = 20;
const lane = new AsyncLocalStorage<string>();
const SLOT = Symbol('hp.slot');
const LANE = Symbol('hp.lane');
const SKIPPED = Symbol('hp.skipped');
const LANES = Symbol('hp.lanes');

type Tagged = { [SLOT]?: number; [LANES]?: number };
type Waiting = { [LANE]?: number; [SKIPPED]?: number };
type PoolInternals = {
  _idle: { client: PoolClient & Tagged }[];
  _pendingQueue: Waiting[];
  _pulseQueue: () => unknown;
  options: { max: number };
  ending?: boolean;
  ended?: boolean;
};

/** `PG_CONNECTION_AFFINITY`: on unless `off`/`0`/`false`/`no`. */
export function connectionAffinityWanted(env?: NodeJS.ProcessEnv): boolean {
  return readConfig(env).pgConnectionAffinity;
}

/** Runs `fn` (and everything it starts) with `key` (a tenant's schema) as its connection preference. */
export function withConnectionAffinity<T>(key: string, fn: () => T): T {
  return lane.run(key, fn);
}

/** The schema whose lane the current request or job runs in (the municipality its connections count for), if any. */
export function connectionLane(): string | undefined {
  return lane.getStore();
}

/**
 * Whether `client` is the connection of the current schema's lane (true without a schema or without affinity).
 * prepared.ts keeps most of a connection's named statements for its own schemas, so a backend keeps the plans
 * of its share of the schemas, not of whichever schemas reached it first while their own connections were busy.
 */
export function onItsConnection(client: object): boolean {
  const key = lane.getStore();
  const { [SLOT]: slot, [LANES]: lanes } = client as Tagged;
  return key === undefined || slot === undefined || lanes === undefined || laneOf(key, lanes) === slot;
}

function laneOf(key: string, lanes: number): number {
  // FNV-1a: cheap and spreads schema names like t_m0001..t_m0999 evenly.
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return (h >>> 0) % lanes;
}

function internalsOk(p: Partial<PoolInternals>): p is PoolInternals {
  return Array.isArray(p._idle) && Array.isArray(p._pendingQueue) && typeof p._pulseQueue === 'function' && typeof p.options?.max === 'number';
}

/** Gives each connection of `pool` a slot 0..max-1 and serves requests from their lane's slot where it can. */
export function useConnectionAffinity(pool: Pool): void {
  const p = pool as unknown as Partial<PoolInternals> & Pool;
  if (!internalsOk(p)) return;
  const used = new Set<number>();
  pool.on('connect', (client) => {
    let slot = 0;
    while (used.has(slot)) slot++;
    used.add(slot);
    (client as Tagged)[SLOT] = slot;
    (client as Tagged)[LANES] = p.options.max;
  });
  pool.on('remove', (client) => used.delete((client as Tagged)[SLOT] ?? -1));

  const connect = pool.connect.bind(pool) as (cb?: unknown) => unknown;
  (pool as unknown as { connect: (cb?: unknown) => unknown }).connect = (cb?: unknown) => {
    const key = lane.getStore();
    const queued = p._pendingQueue.length;
    const result = connect(cb);
    // Queued (the pool is full or has idle connections): tag the request pg-pool just queued.
    if (key !== undefined && p._pendingQueue.length === queued + 1) p._pendingQueue[queued]![LANE] = laneOf(key, p.options.max);
    return result;
  };

  const pulse = p._pulseQueue.bind(pool);
  p._pulseQueue = () => {
    if (!p.ending && !p.ended && p._pendingQueue.length && p._idle.length) choose(p);
    return pulse();
  };
}

/** Puts the chosen waiter first and the chosen idle connection last, where `_pulseQueue` takes them. */
function choose(p: PoolInternals): void {
  const queue = p._pendingQueue;
  const idle = p._idle;
  const head = queue[0]!;
  if ((head[SKIPPED] ?? 0) >= MAX_SKIPS) {
    prefer(idle, head[LANE]);
    return;
  }
  const n = Math.min(queue.length, WINDOW);
  for (let i = 0; i < n; i++) {
    const want = queue[i]![LANE];
    if (want === undefined) continue;
    const at = idle.findIndex((item) => item.client[SLOT] === want);
    if (at < 0) continue;
    for (let j = 0; j < i; j++) queue[j]![SKIPPED] = (queue[j]![SKIPPED] ?? 0) + 1;
    if (i > 0) queue.unshift(queue.splice(i, 1)[0]!);
    if (at !== idle.length - 1) idle.push(idle.splice(at, 1)[0]!);
    return;
  }
}

function prefer(idle: PoolInternals['_idle'], want: number | undefined): void {
  if (want === undefined) return;
  const at = idle.findIndex((item) => item.client[SLOT] === want);
  if (at >= 0 && at !== idle.length - 1) idle.push(idle.splice(at, 1)[0]!);
}
