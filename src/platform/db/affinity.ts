import { AsyncLocalStorage } from 'node:async_hooks';
import { readConfig } from '../config.js';

// Connection affinity (issue 10.4, a thousand municipalities), the part every layer reads: which municipality's
// schema the current request or job runs for (its lane). A PostgreSQL backend keeps what it learnt of a tenant's
// schema: its catalog entries and the plans of its named statements (prepared.ts; ~0.5 MB for the public offer
// page). With traffic spread over 500 schemas and every pool connection serving every schema, 10 connections
// hold 5,000 (connection, schema) pairs, and most requests land on a backend that has to parse and plan again.
// So each schema has a preferred connection (its lane: a hash of the schema name over the pool's size); the
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

/** The lane (0..lanes-1) of `key`. FNV-1a: cheap, and spreads schema names like t_m0001..t_m0999 evenly. */
export function laneOf(key: string, lanes: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return (h >>> 0) % lanes;
}
