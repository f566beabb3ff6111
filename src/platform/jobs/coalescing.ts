import type { Logger } from '../logging/logger.js';
import type { JobSender, QueueName, SendJobOptions, TenantJobData } from './names.js';

// Issue 25: every application of the opening rush wrote a job row for the tenant's mail sender (pg-boss's
// insert, deduplicated by its `stately` queue only inside PostgreSQL): one statement per application, for a
// wake-up that one statement per tenant and half second does as well. A send with `coalesceMs` is written at
// once when none of its queue and key was written in the last `coalesceMs`; otherwise it is folded into one
// trailing write at the end of that time. So every send is followed by a job written after it (what the
// committed work needs: a job that starts after its commit finds it), at most `coalesceMs` later. Sends without
// `coalesceMs` (those in a transaction, `db`) pass through unchanged.

type Window = { again: boolean; data: TenantJobData; opts: SendJobOptions; name: QueueName };

/** A job sender that can write its folded wake-ups before the process stops. */
export type CoalescingSender = JobSender & {
  /** Writes every trailing wake-up still waiting for its window to end (at shutdown, so none waits for the sweep). */
  flush(): Promise<void>;
};

/** Wraps a job sender so that coalescible wake-ups (SendJobOptions.coalesceMs) cost one write per window. */
export function coalescingSender(inner: JobSender, log?: Pick<Logger, 'warn'>): CoalescingSender {
  const windows = new Map<string, Window>();
  const write = (name: QueueName, w: Window) => inner.send(name, w.data, { ...w.opts, coalesceMs: undefined });
  const close = (key: string, name: QueueName, w: Window, ms: number) => {
    setTimeout(() => {
      if (!w.again) {
        windows.delete(key);
        return;
      }
      // The trailing write stands for every send folded in since the last one; a failure is only a later mail
      // (the minute's sweep finds the rows), never an error of a request.
      w.again = false;
      void write(name, w).catch((err: unknown) => log?.warn({ code: (err as { code?: string }).code, queue: name }, 'wake-up job not written; the sweep picks the work up'))
        .finally(() => close(key, name, w, ms));
    }, ms).unref();
  };
  return {
    // What the wrapped sender tells about its queues (/metrics) passes through.
    ...(inner.queueStats ? { queueStats: () => inner.queueStats!() } : {}),
    async send(name, data, opts = {}) {
      const ms = opts.coalesceMs;
      if (!ms || ms <= 0 || opts.db) return inner.send(name, data, opts);
      const key = `${name}\u0000${opts.singletonKey ?? data.tenant}`;
      const open = windows.get(key);
      if (open) {
        open.again = true;
        return;
      }
      const w: Window = { again: false, data, opts, name };
      windows.set(key, w);
      try {
        await write(name, w);
      } catch (err) {
        // The caller hears of it (and says the sweep picks the work up); the next send tries at once.
        if (!w.again) windows.delete(key);
        else close(key, name, w, ms);
        throw err;
      }
      close(key, name, w, ms);
    },
    async flush() {
      const due = [...windows.values()].filter((w) => w.again);
      for (const w of due) w.again = false;
      await Promise.all(due.map((w) => write(w.name, w).catch((err: unknown) => log?.warn({ code: (err as { code?: string }).code, queue: w.name }, 'wake-up job not written at stop; the sweep picks the work up'))));
    },
  };
}
