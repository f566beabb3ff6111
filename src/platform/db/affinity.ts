import { AsyncLocalStorage } from 'node:async_hooks';
import { readConfig } from '../config.js';

// Connection affinity (issue 10.4, a thousand municipalities), the part every layer reads: which municipality's
// schema the current request or job runs for (its lane). A PostgreSQL backend keeps what it learnt of a tenant's
// schema: its catalog entries and the plans of its named statements (prepared.ts; ~0.5 MB for the public offer
// page). With traffic spread over 500 schemas and every pool connection serving every schema, 10 connections
// hold 5,000 (connection, schema) pairs, and most requests land on a backend that has to parse and plan again.
// So each schema has preferred connections (its lane, a hash of the schema name over the pool's size, and in
// pools of 10 or more one or two more: `lanesOf`); the
// pool that serves lanes is lanes.ts, built from one small pg.Pool per connection (public pg API only). The
// schema is also the key of the municipality's share of the pool (guarded-dialect.ts).

const lane = new AsyncLocalStorage<string>();

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

function fnv1a(key: string, basis: number): number {
  let h = basis;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The lane (0..lanes-1) of `key`. FNV-1a: cheap, and spreads schema names like t_m0001..t_m0999 evenly. */
export function laneOf(key: string, lanes: number): number {
  return fnv1a(key, 0x811c9dc5) % lanes;
}

/**
 * How many connections serve one schema under load: 1 in pools under 10, 2 from 10, 3 from 15. With one lane per
 * schema and a few dozen municipalities applying at once (issue 25, the opening morning: 20 over 10 connections),
 * a released connection often found no waiting request of its own schemas and went to another's, and the oldest
 * waiter was passed over until it went anywhere: in the first second every connection met every schema, and
 * each (connection, schema) met for the first time costs PostgreSQL ~4 ms (its catalog entries, the plans of the
 * named statements, of append_application's statements and of the foreign-key checks). Two lanes make a match
 * for a released connection near certain, and keep the pairs at two per schema.
 */
export function lanesPerKey(lanes: number): number {
  return Math.max(1, Math.min(3, Math.floor(lanes / 5)));
}

/**
 * The lanes of `key`, its own (`laneOf`) first: `lanesPerKey` distinct lanes, the others a step apart that a
 * second hash chooses, so that two schemas sharing one lane rarely share the next.
 */
export function lanesOf(key: string, lanes: number): number[] {
  const home = laneOf(key, lanes);
  const k = lanesPerKey(lanes);
  if (k === 1) return [home];
  const step = 1 + (fnv1a(key, 0x01000193) % (lanes - 1));
  const out = [home];
  for (let i = 1; out.length < k && i < lanes; i++) {
    const next = (home + i * step) % lanes;
    if (!out.includes(next)) out.push(next);
  }
  // A step sharing a factor with the pool's size comes back to the lanes it had: the next ones then.
  for (let next = (home + 1) % lanes; out.length < k; next = (next + 1) % lanes) {
    if (!out.includes(next)) out.push(next);
  }
  return out;
}
