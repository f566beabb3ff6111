import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { PoolGuard } from '../db/pool-guard.js';

// Issue 23: the database pool on /metrics. These carry a `schema` label (the municipality's schema, `t_<slug>`):
// one municipality's saturation is exactly what the operator must see. Only schemas that used the pool in
// this process appear; work of no municipality (the registry, job sweeps) is `schema=""`.

export function registerPoolMetrics(registry: Registry, guard: PoolGuard): void {
  const registers = [registry];
  new Gauge({
    name: 'hp_db_pool_connections',
    help: 'Connections of this process\'s pool: in_use, idle, and checkouts waiting for one (pg-pool\'s queue); size is the maximum',
    labelNames: ['state'] as const,
    registers,
    collect() {
      const s = guard.snapshot();
      this.set({ state: 'size' }, s.size);
      this.set({ state: 'in_use' }, s.total - s.idle);
      this.set({ state: 'idle' }, s.idle);
      this.set({ state: 'waiting' }, s.waiting);
    },
  });
  new Gauge({
    name: 'hp_db_pool_in_use',
    help: 'Connections held by each municipality now',
    labelNames: ['schema'] as const,
    registers,
    collect() {
      this.reset();
      for (const t of guard.snapshot().tenants) this.set({ schema: t.schema }, t.inUse);
    },
  });
  new Gauge({
    name: 'hp_db_pool_waiting',
    help: 'Requests and jobs of each municipality waiting for a connection of its share',
    labelNames: ['schema'] as const,
    registers,
    collect() {
      this.reset();
      for (const t of guard.snapshot().tenants) this.set({ schema: t.schema }, t.waiting);
    },
  });
  const wait = new Histogram({
    name: 'hp_db_pool_wait_seconds',
    help: 'Time from asking for a connection to having it (share and pool), by municipality',
    labelNames: ['schema'] as const,
    buckets: [0.001, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers,
  });
  const refused = new Counter({
    name: 'hp_db_pool_refused_total',
    help: 'Requests answered 503 after waiting for their share of the pool, by municipality and share (tenant or offer)',
    labelNames: ['schema', 'scope'] as const,
    registers,
  });
  const lockTimeouts = new Counter({ name: 'hp_db_lock_timeouts_total', help: 'Statements that gave up waiting for a lock (lock_timeout), by municipality', labelNames: ['schema'] as const, registers });
  const statementTimeouts = new Counter({ name: 'hp_db_statement_timeouts_total', help: 'Statements cancelled by statement_timeout, by municipality', labelNames: ['schema'] as const, registers });
  const retries = new Counter({
    name: 'hp_db_lock_retries_total',
    help: 'Use cases run again inside the service: deadlock, serialization, offer_share (waited for the offer\'s share), prepared_statement',
    labelNames: ['schema', 'reason'] as const,
    registers,
  });
  guard.on({
    waited: (schema, seconds) => wait.observe({ schema: schema ?? '' }, seconds),
    refused: (schema, scope) => refused.inc({ schema, scope }),
    lockTimeout: (schema) => lockTimeouts.inc({ schema: schema ?? '' }),
    statementTimeout: (schema) => statementTimeouts.inc({ schema: schema ?? '' }),
    retried: (schema, reason) => retries.inc({ schema: schema ?? '', reason }),
  });
}
