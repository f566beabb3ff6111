// Load generation shared by the scenarios that send many requests or transactions at once (rush, families,
// morning): `n` lanes take the next item as soon as their previous one ended (a closed loop with `n` in flight),
// the latency of each item, and the rate and percentiles of a run.

/** The p-th percentile (0 < p ≤ 1) of xs, nearest rank. */
export const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * p) - 1)]!;

/** Works through `items` with `n` in flight; the latency of each item (ms), in the order they ended. */
export async function lanes<T>(items: T[], n: number, work: (item: T, lane: number) => Promise<void>): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: n }, async (_, lane) => {
    for (let i = next++; i < items.length; i = next++) {
      const started = performance.now();
      await work(items[i]!, lane);
      latencies.push(performance.now() - started);
    }
  }));
  return latencies;
}

export type Run = { rate: number; p50: number; p99: number; seconds: number; statuses: number[] };

/** Times `work`; `perItem` counts what one item stands for (a family's request holds four applications). */
export async function timed(work: () => Promise<{ latencies: number[]; statuses: number[] }>, perItem = 1): Promise<Run> {
  const started = performance.now();
  const { latencies, statuses } = await work();
  const seconds = (performance.now() - started) / 1000;
  return { rate: (latencies.length * perItem) / seconds, p50: pct(latencies, 0.5), p99: pct(latencies, 0.99), seconds, statuses };
}
