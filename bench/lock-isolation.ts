import { loadavg } from 'node:os';
import { runLockScenario, type Figures } from './lock-scenario.js';
import { quick, reportResult, type BenchRow } from './result.js';

// `npm run bench:lock [-- --quick]` (issue 23): one offer's row held by another transaction for BENCH_HOLD_SECONDS
// (30; 10 with --quick) while BENCH_FAMILIES families (300; 100) apply to it, BENCH_IN_FLIGHT (50) at a time,
// and the unrelated streams run beside (bench/lock-scenario.ts). Prints each stream's p50/p99/max and errors
// before the lock and while it is held, and how the held offer's applications ended. The baseline of this
// scenario is the same streams in the same run before the lock. Env: BENCH_PG_URL, BENCH_PORT (18300-18399),
// and the service's settings (PG_LOCK_TIMEOUT_MS, PG_TENANT_POOL_SHARE, …) pass through to it.
const PG = process.env.BENCH_PG_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const HOLD = Number(process.env.BENCH_HOLD_SECONDS || (quick ? 10 : 30));
const FAMILIES = Number(process.env.BENCH_FAMILIES || (quick ? 100 : 300));
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT || 50);
const PORT = Number(process.env.BENCH_PORT || 18300 + Math.floor(Math.random() * 100));

const line = (name: string, f: Figures) =>
  `| ${name} | ${f.requests} | ${f.errors} | ${f.p50} ms | ${f.p99} ms | ${f.max} ms | ${Object.entries(f.statuses).map(([s, n]) => `${s}×${n}`).join(' ')} |`;

async function main() {
  const loadBefore = loadavg().map((x) => x.toFixed(2)).join(' ');
  const r = await runLockScenario({ server: PG, port: PORT, holdSeconds: HOLD, baselineSeconds: quick ? 4 : 8, families: FAMILIES, inFlight: IN_FLIGHT });
  const loadAfter = loadavg().map((x) => x.toFixed(2)).join(' ');
  console.log(`\nLock scenario: one offer's row held ${HOLD} s; ${FAMILIES} families applying to it, ${IN_FLIGHT} at a time.`);
  console.log('| stream | requests | errors | p50 | p99 | max | statuses |');
  console.log('|---|---|---|---|---|---|---|');
  for (const [name, f] of Object.entries(r.baseline)) console.log(line(`before the lock: ${name}`, f));
  for (const [name, f] of Object.entries(r.during)) console.log(line(`while held: ${name}`, f));
  console.log(line('the held offer\'s applications ended while it was held', r.rush));
  console.log(line('the held offer\'s applications ended after its release', r.rushAfterRelease));
  console.log(`after the release, an application to the held offer: ${r.afterRelease}`);
  console.log(`load average before ${loadBefore}, after ${loadAfter}`);
  const warnings = new Map<string, number>();
  for (const l of r.log) warnings.set(l.msg, (warnings.get(l.msg) ?? 0) + 1);
  console.log('service log, warnings and errors:');
  for (const [msg, n] of warnings) console.log(`  ${n} × ${msg}`);

  const unrelated = Object.entries(r.during).filter(([name]) => name !== '/readyz');
  const errors = unrelated.reduce((s, [, f]) => s + f.errors, 0);
  const worstP99 = Math.max(...unrelated.map(([, f]) => f.p99));
  const baseP99 = Math.max(...Object.entries(r.baseline).filter(([name]) => name !== '/readyz').map(([, f]) => f.p99));
  const ready = r.during['/readyz']!;
  const rows: BenchRow[] = [
    { name: 'lock held: unrelated streams, errors', value: errors, unit: `of ${unrelated.reduce((s, [, f]) => s + f.requests, 0)}`, target: '0', met: errors === 0 },
    { name: 'lock held: unrelated streams, worst p99', value: worstP99, unit: 'ms', baseline: baseP99, ratio: worstP99 / Math.max(baseP99, 1), target: 'below the lock timeout (3000 ms)', met: worstP99 < 3000 },
    { name: 'lock held: /readyz not 200', value: ready.errors, unit: `of ${ready.requests}`, target: '0', met: ready.errors === 0 },
    { name: 'lock held: held offer, answers other than 503', value: r.rush.requests - (r.rush.statuses['503'] ?? 0), unit: `of ${r.rush.requests}`, target: '0', met: r.rush.requests === (r.rush.statuses['503'] ?? 0) },
    { name: 'lock held: held offer, slowest answer', value: r.rush.max, unit: 'ms', target: '≤ lock timeout + 2 × pool wait (13000 ms) + 2 s', met: r.rush.max <= 15_000 },
  ];
  reportResult({
    scenario: 'lock',
    title: 'One municipality never takes the others down (issue 23)',
    inputs: { holdSeconds: HOLD, families: FAMILIES, inFlight: IN_FLIGHT, quick, loadBefore, loadAfter },
    rows,
    notes: [...warnings].map(([msg, n]) => `${n} × ${msg}`),
  });
}

main().then(() => process.exit(0), (err) => {
  console.error(err);
  process.exit(1);
});
