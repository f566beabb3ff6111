import { execSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

// CPU time of processes from /proc (Linux), for the scenarios that split a run's CPU between the service's
// processes and PostgreSQL: user + system time of one process, and of the PostgreSQL backends serving one
// database (a backend's process title names its database: `postgres: <user> <database> <client> <state>`).

const TICK = (() => {
  try {
    return Number(execSync('getconf CLK_TCK').toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU seconds (user + system) of a process; 0 when it is gone. */
export function cpuOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICK;
  } catch {
    return 0;
  }
}

/** CPU seconds of each PostgreSQL backend serving `database` (by pid), not other databases'. */
export function postgresCpu(database: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
      if (!readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(` ${database} `)) continue;
      out.set(Number(entry), cpuOf(Number(entry)));
    } catch {
      // gone
    }
  }
  return out;
}

/** The CPU seconds the backends of `after` used since `before` (a backend started since counts from 0). */
export function pgDelta(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, t] of after) sum += t - (before.get(pid) ?? 0);
  return sum;
}

/**
 * The PostgreSQL backends of `database` sampled every `everyMs` while a run lasts, so that a backend that ends
 * during the run (a pool closing an idle connection) still counts, up to its last sample. `mark()` returns the CPU
 * seconds used since `start()`; `stop()` ends the sampling.
 */
export function postgresCpuSampler(database: string, everyMs = 200) {
  const first = postgresCpu(database);
  const last = new Map(first);
  const sample = () => {
    for (const [pid, t] of postgresCpu(database)) last.set(pid, t);
  };
  const timer = setInterval(sample, everyMs);
  timer.unref();
  return {
    mark(): number {
      sample();
      return pgDelta(first, last);
    },
    stop(): void {
      clearInterval(timer);
    },
  };
}

/**
 * CPU seconds the whole machine has been busy (all cores: user, nice, system, irq, softirq, steal; /proc/stat), to
 * tell how much of the machine a run had while others shared it.
 */
export function machineBusy(): number {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = cpu;
    return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) / TICK;
  } catch {
    return NaN;
  }
}
