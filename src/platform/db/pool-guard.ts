import pg from 'pg';
import type { Logger } from '../logging/logger.js';
import { databaseSettings } from '../config.js';
import { KeyedSemaphore, placesOf, type ShareScope } from './bulkhead.js';
import type { RetryReason } from './attempts.js';
import { currentTimeoutProfile, type DbTimeouts, type TimeoutProfile } from './timeouts.js';

// Issue 23: what the service knows about its pool, in one place: the municipalities' and offers' shares
// (bulkhead.ts), connections in use per municipality, what went wrong (a share full, the pool saturated, lock
// and statement timeouts, retried conflicts: for /metrics and the log), and a probe connection of its own, so
// /readyz and the outage probe ask the database, not the (possibly busy) pool.

/** `PG_TENANT_POOL_SHARE` (0.6): the share of a process's pool one municipality's requests and jobs may hold. */
export function tenantPoolShare(env: NodeJS.ProcessEnv = process.env): number {
  return databaseSettings(env).tenantPoolShare;
}

/** `PG_OFFER_POOL_SHARE` (0.2): the share of the pool the writers of one offer (its row lock) may hold. */
export function offerPoolShare(env: NodeJS.ProcessEnv = process.env): number {
  return databaseSettings(env).offerPoolShare;
}

/** `PG_POOL_WAIT_MS` (5000): how long a request waits for its municipality's or offer's share before 503. */
export function poolWaitMs(env: NodeJS.ProcessEnv = process.env): number {
  return databaseSettings(env).poolWaitMs;
}

export type PoolEvents = {
  /** Time from asking for a connection to having it. `schema` null: work of no municipality. */
  waited?(schema: string | null, seconds: number): void;
  refused?(schema: string, scope: ShareScope): void;
  lockTimeout?(schema: string | null): void;
  statementTimeout?(schema: string | null): void;
  retried?(schema: string | null, reason: RetryReason): void;
};

/** What the guard reads of the connections: pg-pool's counts (lanes.ts answers them for its lanes too). */
export type PoolCounts = { readonly totalCount: number; readonly idleCount: number; readonly waitingCount: number };

export type PoolSnapshot = {
  size: number;
  /** The pool's counts: connections open, idle, and checkouts waiting for one. */
  total: number;
  idle: number;
  waiting: number;
  tenantShare: number;
  offerShare: number;
  /** Municipalities holding or waiting for connections (schema, held, waiting for their share). */
  tenants: { schema: string; inUse: number; waiting: number }[];
};

const LOG_EVERY_MS = 10_000;

export class PoolGuard {
  readonly tenants: KeyedSemaphore;
  readonly offers: KeyedSemaphore;
  /** Connections checked out per schema ('' for work of no municipality), nested checkouts included. */
  readonly inUse = new Map<string, number>();
  private readonly listeners: PoolEvents[] = [];
  private readonly lastLog = new Map<string, number>();
  private probePool: pg.Pool | null = null;

  constructor(
    readonly pool: PoolCounts,
    readonly size: number,
    readonly timeouts: DbTimeouts,
    private readonly log: Logger,
    private readonly probeConfig: pg.PoolConfig,
    shares: { tenant?: number; offer?: number; waitMs?: number } = {},
    /** The timeouts of the pool's sessions, and of its transactions unless a caller chose a profile. */
    readonly profile: TimeoutProfile = 'request',
  ) {
    const waitMs = shares.waitMs ?? poolWaitMs();
    this.tenants = new KeyedSemaphore('tenant', placesOf(shares.tenant ?? tenantPoolShare(), size), waitMs, (schema, held) => {
      this.warnOnce(`full:${schema}`, { schema, inUse: held, share: this.tenants.limit },
        'database pool: this municipality holds its whole share of connections; its further requests wait (a slow or blocked statement of it?)');
    }, (schema, waitedMs) => this.refused('tenant', schema, waitedMs));
    this.offers = new KeyedSemaphore('offer', placesOf(shares.offer ?? offerPoolShare(), size), waitMs, (key, held) => {
      const [schema, offer] = key.split(':');
      this.warnOnce(`full:${key}`, { schema, offer, inUse: held, share: this.offers.limit },
        'database pool: the writers of one offer hold its whole share of connections; its further writers wait (its row locked for long?)');
    }, (key, waitedMs) => this.refused('offer', key, waitedMs));
  }

  /** The lock timeout of the current profile (ms), for a single statement that sets it itself (`set_config(…, true)`). */
  lockTimeoutMs(): number {
    return this.timeouts[currentTimeoutProfile(this.profile)].lockMs;
  }

  on(listener: PoolEvents): void {
    this.listeners.push(listener);
  }

  emit<K extends keyof PoolEvents>(event: K, ...args: Parameters<NonNullable<PoolEvents[K]>>): void {
    for (const l of this.listeners) (l[event] as ((...a: unknown[]) => void) | undefined)?.(...args);
  }

  checkedOut(schema: string | null, delta: 1 | -1): void {
    const key = schema ?? '';
    const n = (this.inUse.get(key) ?? 0) + delta;
    if (n <= 0) this.inUse.delete(key);
    else this.inUse.set(key, n);
  }

  /** Municipalities holding the most connections now. */
  holders(limit = 5): { schema: string; inUse: number }[] {
    return [...this.inUse].filter(([k]) => k !== '').map(([schema, inUse]) => ({ schema, inUse })).sort((a, b) => b.inUse - a.inUse).slice(0, limit);
  }

  snapshot(): PoolSnapshot {
    const waiting = new Map(this.tenants.stats().map((s) => [s.key, s.waiting]));
    const schemas = new Set([...this.inUse.keys()].filter(Boolean).concat([...waiting.keys()]));
    return {
      size: this.size,
      total: this.pool.totalCount,
      idle: this.pool.idleCount,
      waiting: this.pool.waitingCount,
      tenantShare: this.tenants.limit,
      offerShare: this.offers.limit,
      tenants: [...schemas].map((schema) => ({ schema, inUse: this.inUse.get(schema) ?? 0, waiting: waiting.get(schema) ?? 0 }))
        .sort((a, b) => b.inUse + b.waiting - (a.inUse + a.waiting)),
    };
  }

  /** One warning per `key` per 10 s, with how many were left out. */
  warnOnce(key: string, fields: Record<string, unknown>, msg: string): boolean {
    const now = Date.now();
    const last = this.lastLog.get(key) ?? 0;
    if (now - last < LOG_EVERY_MS) return false;
    if (this.lastLog.size > 10_000) this.lastLog.clear();
    this.lastLog.set(key, now);
    this.log.warn(fields, msg);
    return true;
  }

  /** A request was refused after waiting for its share. */
  refused(scope: ShareScope, key: string, waitedMs: number): void {
    const [schema, offer] = key.split(':');
    this.emit('refused', schema!, scope);
    this.warnOnce(`refused:${key}`, { schema, offer, waitedMs, share: scope === 'tenant' ? this.tenants.limit : this.offers.limit },
      scope === 'tenant'
        ? 'database pool saturated by this municipality: request answered 503 after waiting for its share of connections'
        : 'database pool: the writers of one offer held its share for too long: request answered 503');
  }

  /** Every connection of the pool in use and a checkout timed out: busy, not a database outage. */
  saturated(): void {
    this.warnOnce('saturated', { size: this.size, waiting: this.pool.waitingCount, holders: this.holders() },
      'database pool saturated: every connection in use, request answered 503 (the database itself answers)');
  }

  /** A statement gave up waiting for a lock (or ran out of time): counted, and logged with who holds the schema's tables. */
  timedOut(kind: 'lock' | 'statement', schema: string | null): void {
    this.emit(kind === 'lock' ? 'lockTimeout' : 'statementTimeout', schema);
    const t = this.timeouts[this.profile];
    const key = `${kind}:${schema ?? ''}`;
    if (Date.now() - (this.lastLog.get(key) ?? 0) < LOG_EVERY_MS) return;
    this.lastLog.set(key, Date.now());
    void this.blockers(schema, Math.max(1, Math.floor(t.lockMs / 1000))).then((blockers) => {
      this.log.warn({ schema, lockTimeoutMs: t.lockMs, statementTimeoutMs: t.statementMs, blockers },
        kind === 'lock'
          ? 'lock wait timed out: the request was answered 503 (another transaction holds rows or tables it needs)'
          : 'statement timed out: the request was answered 503');
    });
  }

  /**
   * The oldest transactions holding locks on the schema's tables and not themselves waiting for one (pid, state,
   * age, application, tables): who an operator should look at. No statement text (it may quote data).
   */
  private async blockers(schema: string | null, olderThanSeconds: number): Promise<unknown[]> {
    if (!schema) return [];
    try {
      const r = await this.probeQuery<{ pid: number; state: string; seconds: number; application: string; tables: string[] }>(
        `select a.pid, a.state, extract(epoch from now() - a.xact_start)::int as seconds, a.application_name as application,
           array_agg(distinct c.relname::text order by c.relname::text) as tables
         from pg_locks l join pg_class c on c.oid = l.relation join pg_namespace n on n.oid = c.relnamespace
         join pg_stat_activity a on a.pid = l.pid
         where l.granted and l.database = (select oid from pg_database where datname = current_database())
           and c.relkind in ('r', 'p') and n.nspname = $1 and a.pid <> pg_backend_pid() and a.xact_start < now() - make_interval(secs => $2)
           and a.wait_event_type is distinct from 'Lock'
         group by a.pid, a.state, a.xact_start, a.application_name order by a.xact_start limit 3`,
        [schema, olderThanSeconds],
      );
      return r;
    } catch {
      return [];
    }
  }

  /** A statement on the probe connection (its own small pool, 2 s), never waiting for the request pool. */
  async probeQuery<R>(text: string, values: unknown[] = []): Promise<R[]> {
    if (!this.probePool) {
      this.probePool = new pg.Pool({ ...this.probeConfig, max: 1, connectionTimeoutMillis: 2_000, query_timeout: 2_000, idleTimeoutMillis: 30_000 });
      this.probePool.on('error', () => {});
    }
    return (await this.probePool.query(text, values)).rows as R[];
  }

  async close(): Promise<void> {
    const p = this.probePool;
    this.probePool = null;
    await p?.end().catch(() => {});
  }
}
