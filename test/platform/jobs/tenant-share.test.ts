import { describe, expect, it } from 'vitest';
import { useHarness } from '../../harness/harness.js';
import { loadConfig } from '../../../src/platform/config.js';
import { connectionLane } from '../../../src/platform/db/affinity.js';
import { QUEUES } from '../../../src/platform/jobs/queue.js';
import { startWorkers } from '../../../src/platform/jobs/workers.js';
import { createLogger } from '../../../src/platform/logging/logger.js';

// Issue 23, bulkheads for the worker's per-tenant jobs: every tenant job is sent in its tenant's pg-boss group,
// and a worker runs at most the tenant's share (PG_TENANT_POOL_SHARE, 0.6) of a queue's slots for one tenant:
// of the two `offer-refill` slots one. So one municipality's stuck refills leave the other slot to the others.
// Its database connections count for its municipality's share of the pool (the job runs in its lane).
const { h } = useHarness({ tenant: false, ownDatabase: 'jobshare' });

const until = async (cond: () => boolean, ms = 15_000) => {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
};

describe('a worker and one municipality\'s jobs', () => {
  it('runs at most its share of a queue\'s slots for one tenant; another tenant\'s job runs beside', { timeout: 60_000 }, async () => {
    const [a, b] = [await h.tenant(), await h.tenant()];
    const active = new Map<string, number>();
    const most = new Map<string, number>();
    const lanes: (string | undefined)[] = [];
    let open = false;
    const workers = await startWorkers(h.orm, loadConfig(), createLogger('silent'), {
      schedule: false,
      handlers: {
        [QUEUES.offerRefill]: async (ctx) => {
          const slug = ctx.tenant.slug;
          active.set(slug, (active.get(slug) ?? 0) + 1);
          most.set(slug, Math.max(most.get(slug) ?? 0, active.get(slug)!));
          lanes.push(connectionLane());
          await until(() => open, 30_000);
          active.set(slug, active.get(slug)! - 1);
        },
      },
    });
    try {
      const done = () => [...active.values()].every((n) => n === 0);
      for (const offer of ['o1', 'o2', 'o3']) await workers.sender.send(QUEUES.offerRefill, { tenant: a.slug, offer }, { singletonKey: `${a.slug}:${offer}` });
      await until(() => (active.get(a.slug) ?? 0) > 0);
      await workers.sender.send(QUEUES.offerRefill, { tenant: b.slug, offer: 'o1' }, { singletonKey: `${b.slug}:o1` });
      // B's job gets the second slot although A has two more waiting.
      await until(() => (active.get(b.slug) ?? 0) > 0);
      expect(active.get(a.slug)).toBe(1);
      open = true;
      await until(() => done() && lanes.length === 4);
      expect(most.get(a.slug)).toBe(1);
      expect(lanes.sort()).toEqual([a.tenant.schema, a.tenant.schema, a.tenant.schema, b.tenant.schema].sort());
    } finally {
      open = true;
      await workers.stop();
    }
  });
});
