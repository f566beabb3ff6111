import { describe, expect, it } from 'vitest';
import { coalescingSender } from '../../../src/platform/jobs/coalescing.js';
import { QUEUES, type JobSender, type QueueName, type SendJobOptions, type TenantJobData } from '../../../src/platform/jobs/names.js';

// Issue 25: wake-ups for committed work (SendJobOptions.coalesceMs) cost one job write per queue, key and window,
// and every send is followed by a write that started after it, at most the window later.
type Write = { name: QueueName; data: TenantJobData; opts: SendJobOptions; at: number };

function recorder(fail?: () => boolean): JobSender & { writes: Write[] } {
  const writes: Write[] = [];
  return {
    writes,
    async send(name, data, opts = {}) {
      const at = performance.now();
      await new Promise((r) => setTimeout(r, 2));
      if (fail?.()) throw Object.assign(new Error('job table unreachable'), { code: 'ECONNREFUSED' });
      writes.push({ name, data, opts, at });
    },
  };
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const WINDOW = 60;

describe('coalescingSender', () => {
  it('writes a lone wake-up at once, and nothing more', async () => {
    const inner = recorder();
    const sender = coalescingSender(inner);
    await sender.send(QUEUES.mailSend, { tenant: 'a' }, { singletonKey: 'a', coalesceMs: WINDOW });
    expect(inner.writes).toHaveLength(1);
    expect(inner.writes[0]!.opts).toEqual({ singletonKey: 'a', coalesceMs: undefined });
    await sleep(WINDOW * 3);
    expect(inner.writes).toHaveLength(1);
  });

  it('folds a burst into one write at once and one trailing write after the last send', async () => {
    const inner = recorder();
    const sender = coalescingSender(inner);
    const sent: number[] = [];
    for (let i = 0; i < 40; i++) {
      sent.push(performance.now());
      await sender.send(QUEUES.mailSend, { tenant: 'a' }, { singletonKey: 'a', coalesceMs: WINDOW });
      await sleep(3);
    }
    await sleep(WINDOW * 3);
    // About one write per window of the burst (40 sends over ~200 ms), not one per send.
    expect(inner.writes.length).toBeGreaterThanOrEqual(2);
    expect(inner.writes.length).toBeLessThanOrEqual(8);
    // Every send has a write that started after it, within the window (and the timer's lateness).
    for (const at of sent) {
      const after = inner.writes.find((w) => w.at >= at);
      expect(after).toBeDefined();
      expect(after!.at - at).toBeLessThan(WINDOW + 40);
    }
  });

  it('writes the folded trailing wake-up at flush (the process stops), and not again when the window ends', async () => {
    const inner = recorder();
    const sender = coalescingSender(inner);
    await sender.send(QUEUES.mailSend, { tenant: 'a' }, { singletonKey: 'a', coalesceMs: WINDOW });
    await sender.send(QUEUES.mailSend, { tenant: 'a' }, { singletonKey: 'a', coalesceMs: WINDOW });
    await sender.send(QUEUES.mailSend, { tenant: 'b' }, { singletonKey: 'b', coalesceMs: WINDOW });
    expect(inner.writes).toHaveLength(2);
    await sender.flush();
    expect(inner.writes.map((w) => w.data.tenant)).toEqual(['a', 'b', 'a']);
    await sleep(WINDOW * 3);
    expect(inner.writes).toHaveLength(3);
  });

  it('keeps queues and keys apart', async () => {
    const inner = recorder();
    const sender = coalescingSender(inner);
    await sender.send(QUEUES.mailSend, { tenant: 'a' }, { singletonKey: 'a', coalesceMs: WINDOW });
    await sender.send(QUEUES.mailSend, { tenant: 'b' }, { singletonKey: 'b', coalesceMs: WINDOW });
    await sender.send(QUEUES.webhookDeliver, { tenant: 'a' }, { singletonKey: 'a', coalesceMs: WINDOW });
    expect(inner.writes.map((w) => [w.name, w.data.tenant])).toEqual([[QUEUES.mailSend, 'a'], [QUEUES.mailSend, 'b'], [QUEUES.webhookDeliver, 'a']]);
  });

  it('passes sends in a transaction and sends without a window straight through', async () => {
    const inner = recorder();
    const sender = coalescingSender(inner);
    const db = {} as NonNullable<SendJobOptions['db']>;
    for (let i = 0; i < 3; i++) {
      await sender.send(QUEUES.mailSend, { tenant: 'a' }, { singletonKey: 'a' });
      await sender.send(QUEUES.mailSend, { tenant: 'a' }, { singletonKey: 'a', db, coalesceMs: WINDOW });
    }
    expect(inner.writes).toHaveLength(6);
  });

  it('a failed write reaches the caller; a failed trailing write is logged, and the next send writes at once', async () => {
    let failing = true;
    const inner = recorder(() => failing);
    const warnings: unknown[] = [];
    const sender = coalescingSender(inner, { warn: (obj: unknown) => void warnings.push(obj) } as never);
    await expect(sender.send(QUEUES.mailSend, { tenant: 'a' }, { singletonKey: 'a', coalesceMs: WINDOW })).rejects.toThrow('unreachable');
    // Nothing folded in: the window closed with the failure, so this one is written at once (and fails too).
    const second = sender.send(QUEUES.mailSend, { tenant: 'a' }, { singletonKey: 'a', coalesceMs: WINDOW });
    await sender.send(QUEUES.mailSend, { tenant: 'a' }, { singletonKey: 'a', coalesceMs: WINDOW });
    await expect(second).rejects.toThrow('unreachable');
    await sleep(WINDOW * 2);
    expect(warnings).toEqual([{ code: 'ECONNREFUSED', queue: QUEUES.mailSend }]);
    failing = false;
    await sleep(WINDOW * 2);
    await sender.send(QUEUES.mailSend, { tenant: 'a' }, { singletonKey: 'a', coalesceMs: WINDOW });
    expect(inner.writes).toHaveLength(1);
  });
});
