import { createHash } from 'node:crypto';
import { readConfig } from '../config.js';
import { sql, type RawBuilder } from './sql.js';

// Prepared statements for the hot projections (issue 10.2). PostgreSQL parses and plans an unnamed statement
// on every execution: for the offer page that was 2-4 ms of its CPU per request (bench/README.md). A statement
// marked with `prepared()` is sent as a named statement instead, through pg's public query config
// `{ name, text, values }` (pg-driver.ts): parsed once per connection (pg remembers which names a connection
// has parsed and then sends only Bind/Execute), and its plan cached by PostgreSQL's plan cache.
//
// Named statements live in one server session. Behind a transaction pooler that does not carry them across
// transactions (PgBouncer before 1.21, or without `max_prepared_statements`; Debian 12 ships 1.18) a later
// execution lands on another server connection. `PG_PREPARED_STATEMENTS=auto` (the default) finds a pooler at
// start (connections.ts `detectPooler`) and sends them unnamed there, as every other statement; `off` always.
// Should one still meet a "prepared statement does not exist / already exists" error (`on` behind such a pooler,
// or a session reset under the service), the statement is sent again unnamed on the same connection (the
// request does not fail), that connection's statements get new names (pg's record of the old ones is left
// alone: those names are simply not used again), and this pool sends them unnamed for a while (SUSPEND_MS,
// doubling while it recurs, at most MAX_SUSPEND_MS), said once in the JSON log. Inside a transaction the
// error has aborted it, so the use case runs again instead (attempts.ts), unnamed by then.

const MARKER = '/*hp:prepared*/';
/**
 * At most this many named statements per connection (schemas × query shapes); more run unnamed. The offer
 * page's plan takes ~0.5 MB of the backend's memory. Statements of schemas with this connection among their
 * lanes (affinity.ts `lanesOf`) get HOME of them; those of other schemas FOREIGN, and only from their second
 * execution here, so a schema that came by once while its own connections were busy does not take a place.
 */
const HOME = 150;
const FOREIGN = 50;
const MAX_PER_CONNECTION = HOME + FOREIGN;
export const POOLER_ERRORS = new Set(['26000', '42P05']);
const SUSPEND_MS = 60_000;
const MAX_SUSPEND_MS = 3_600_000;

export type PreparedLog = { warn(msg: string, fields?: Record<string, unknown>): void };

// A statement's name is a hash of its text, once per text: a page's statement is ~6 KB, and a statement reused
// as the same string (list.ts keeps compiled pages) is looked up without reading it again (V8 keeps a string's
// own hash). At most HASHES texts; then the memo starts over.
const HASHES = 2_000;
const hashes = new Map<string, string>();

function textHash(text: string): string {
  let hash = hashes.get(text);
  if (hash === undefined) {
    hash = createHash('sha1').update(text).digest('base64url');
    if (hashes.size >= HASHES) hashes.clear();
    hashes.set(text, hash);
  }
  return hash;
}

/** Marks a statement to run as a named (prepared) statement where the setting allows it. */
export function prepared<R>(query: RawBuilder<R>): RawBuilder<R> {
  return sql<R>`${sql.raw(MARKER)}${query}`;
}

/** Whether `text` was marked by `prepared()`. */
export function isMarked(text: string): boolean {
  return text.startsWith(MARKER);
}

export type PreparedSetting = 'auto' | 'on' | 'off';

/** `PG_PREPARED_STATEMENTS`: `auto` (default: on unless a pooler is found at start), `on`, or `off` (`0`/`false`/`no`). */
export function preparedStatementsSetting(env?: NodeJS.ProcessEnv): PreparedSetting {
  return readConfig(env).pgPreparedStatements;
}

/** Whether named statements start switched on (`auto` and `on`; `auto` may switch them off once the pooler check ran). */
export function preparedStatementsWanted(env?: NodeJS.ProcessEnv): boolean {
  return preparedStatementsSetting(env) !== 'off';
}

/** What one connection has named: per generation (a pooler error starts a new one) and per statement. */
type ConnectionNames = {
  generation: number;
  names: Set<string>;
  foreign: Set<string>;
  seenOnce: Set<string>;
  /** Statements whose result type changed under them (0A000): their next version number. */
  versions: Map<string, number>;
};

/**
 * The named statements of one pool: whether they are on, and which name a marked statement gets on a connection.
 * Per-connection state lives in this object's own WeakMap, keyed by the pg client.
 */
export class NamedStatements {
  private readonly connections = new WeakMap<object, ConnectionNames>();
  private pooledAtStart = false;
  private suspendedUntil = 0;
  private suspendMs = SUSPEND_MS;

  constructor(
    readonly setting: PreparedSetting,
    private readonly log?: PreparedLog,
    private readonly opts: { suspendMs?: number; now?: () => number } = {},
  ) {
    if (opts.suspendMs) this.suspendMs = opts.suspendMs;
  }

  private now(): number {
    return this.opts.now ? this.opts.now() : Date.now();
  }

  /** Whether marked statements are sent named right now. */
  get enabled(): boolean {
    return this.setting !== 'off' && !this.pooledAtStart && this.now() >= this.suspendedUntil;
  }

  /** The start-up check found a pooler: with `auto`, named statements stay off for this pool (the setting's meaning). */
  poolerFound(): void {
    if (this.setting === 'auto') this.pooledAtStart = true;
  }

  private of(client: object): ConnectionNames {
    let c = this.connections.get(client);
    if (!c) this.connections.set(client, (c = { generation: 0, names: new Set(), foreign: new Set(), seenOnce: new Set(), versions: new Map() }));
    return c;
  }

  /**
   * The name `text` runs under on `client`, or undefined to send it unnamed. `home`: the connection is the lane
   * of the request's schema (or the request has none).
   */
  nameFor(client: object, text: string, home: boolean): string | undefined {
    if (!isMarked(text) || !this.enabled) return undefined;
    const c = this.of(client);
    const hash = textHash(text);
    const version = c.versions.get(hash) ?? 0;
    const name = `hp_${hash}${c.generation ? `_g${c.generation}` : ''}${version ? `_v${version}` : ''}`;
    if (c.names.has(name)) return name;
    if (home) {
      if (c.names.size - c.foreign.size >= HOME) return undefined;
    } else {
      if (c.foreign.size >= FOREIGN) return undefined;
      if (!c.seenOnce.has(name)) {
        if (c.seenOnce.size >= 4 * MAX_PER_CONNECTION) c.seenOnce.clear();
        c.seenOnce.add(name);
        return undefined;
      }
      c.seenOnce.delete(name);
      c.foreign.add(name);
    }
    c.names.add(name);
    return name;
  }

  /**
   * "cached plan must not change result type" (0A000: a migration changed a column under the statement): the
   * statement gets a new name on this connection, so its next execution is parsed and planned again.
   */
  resultTypeChanged(client: object, text: string, name: string): void {
    const c = this.of(client);
    const hash = textHash(text);
    c.versions.set(hash, (c.versions.get(hash) ?? 0) + 1);
    c.names.delete(name);
    c.foreign.delete(name);
  }

  /**
   * A pooler error (26000/42P05) on `client`: its statements get new names (the old ones may live on another
   * server connection, or nowhere), and this pool sends them unnamed for a while, said once per suspension.
   */
  lost(client: object, code: string): void {
    const c = this.of(client);
    c.generation++;
    c.names.clear();
    c.foreign.clear();
    c.seenOnce.clear();
    if (this.now() < this.suspendedUntil || this.setting === 'off') return;
    const ms = this.suspendMs;
    this.suspendedUntil = this.now() + ms;
    this.suspendMs = Math.min(ms * 2, MAX_SUSPEND_MS);
    this.log?.warn(`named prepared statements suspended on this pool for ${Math.round(ms / 1000)} s: a connection lost one (a transaction pooler such as PgBouncer < 1.21, or a session reset?); the statement was sent again unnamed. Behind such a pooler set PG_PREPARED_STATEMENTS=auto or off`,
      { code, suspendedMs: ms });
  }
}
