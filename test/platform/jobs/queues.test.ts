import { describe, expect, it } from 'vitest';
import { PgBoss } from 'pg-boss';
import { useHarness } from '../../harness/harness.js';
import { loadConfig } from '../../../src/platform/config.js';
import { QUEUE_OPTIONS, QUEUES } from '../../../src/platform/jobs/queue.js';
import { startWorkers } from '../../../src/platform/jobs/workers.js';
import { createLogger } from '../../../src/platform/logging/logger.js';

// The queues of D9: every tenant queue beats (a dead worker's job is taken up in seconds), mail and refill
// are deduplicated per tenant / offer, and the queues of earlier versions are retired at a worker's start.
const { h } = useHarness({ tenant: false });

describe('job queues', () => {
  it('every tenant queue has a heartbeat; mail and refill collapse bursts (stately)', () => {
    for (const name of [QUEUES.mailSend, QUEUES.offerRefill, QUEUES.editionAllocate, QUEUES.editionCommit]) {
      expect(QUEUE_OPTIONS[name]?.heartbeatSeconds, name).toBeGreaterThanOrEqual(10);
    }
    expect(QUEUE_OPTIONS[QUEUES.mailSend]?.policy).toBe('stately');
    expect(QUEUE_OPTIONS[QUEUES.offerRefill]?.policy).toBe('stately');
  });

  it("a worker's start drops the retired queues and their schedules", async () => {
    const url = String(h.orm.config.get('clientUrl'));
    const old = new PgBoss({ connectionString: url, schema: 'pgboss', supervise: false, schedule: false });
    await old.start();
    await old.createQueue('outbox-sweep');
    await old.createQueue('outbox-tenant');
    await old.schedule('outbox-sweep', '* * * * *');
    await old.stop({ graceful: false } as never);
    const workers = await startWorkers(h.orm, loadConfig(), createLogger('silent'), { schedule: false });
    try {
      expect(await workers.boss.getQueue('outbox-sweep')).toBeNull();
      expect(await workers.boss.getQueue('outbox-tenant')).toBeNull();
      expect((await workers.boss.getSchedules()).map((s) => s.name)).not.toContain('outbox-sweep');
      expect(await workers.boss.getQueue(QUEUES.mailSend)).toMatchObject({ policy: 'stately', heartbeatSeconds: 10 });
    } finally {
      await workers.stop();
    }
  });
});
