import { writeFileSync } from 'node:fs';

// The contract between each benchmark scenario (`bench/<scenario>.ts`) and the runner (`npm run bench`):
// a scenario measures itself against a baseline in the same run and, when BENCH_RESULT names a file,
// writes what it measured there; the runner collects the files into docs/benchmarks.md.
// `--quick` (or BENCH_QUICK=1) asks a scenario for a short run with smaller inputs.

export type BenchRow = {
  /** What was measured, in the spec's words ("rush, one offer, applications/s"). */
  name: string;
  value: number;
  unit: string;
  /** The same measure of the baseline of this run, if the row compares with one. */
  baseline?: number;
  /** value / baseline (or the inverse where smaller is better; say so in `target`). */
  ratio?: number;
  /** The issue's target as text ("≥ 0.5 of baseline", "≤ 5 s"). */
  target?: string;
  /** Whether the target was met in this run. */
  met?: boolean;
};

export type BenchResult = {
  scenario: string;
  title: string;
  /** Inputs of this run (sizes, concurrency, quick or full). */
  inputs: Record<string, string | number | boolean>;
  rows: BenchRow[];
  /** Where the time goes, what was missed by how much, caveats of the run. */
  notes?: string[];
};

export const quick = process.argv.includes('--quick') || process.env.BENCH_QUICK === '1';

/** Prints the result and, when the runner asked for it (BENCH_RESULT), writes it as JSON. */
export function reportResult(result: BenchResult): void {
  for (const r of result.rows) {
    const ratio = r.ratio === undefined ? '' : ` ratio ${r.ratio.toFixed(2)}`;
    const target = r.target ? ` (target ${r.target}${r.met === undefined ? '' : r.met ? ': met' : ': missed'})` : '';
    console.log(`[${result.scenario}] ${r.name}: ${r.value} ${r.unit}${r.baseline === undefined ? '' : ` vs ${r.baseline}`}${ratio}${target}`);
  }
  if (process.env.BENCH_RESULT) writeFileSync(process.env.BENCH_RESULT, JSON.stringify(result, null, 2));
}
