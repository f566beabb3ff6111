import { describe, expect, it } from 'vitest';
import { BEGIN, END, renderGenerated, spliceGenerated } from '../../bench/run.js';

// The runner rewrites only the generated part of docs/benchmarks.md; the hand-written sections survive, and a
// run of some scenarios leaves the other scenarios' rows as they were (they come from docs/benchmarks.json).
const machine = { cpu: 'AMD EPYC', cores: 2, memoryGiB: 24, node: 'v24.21.0', postgres: '15.20', redis: '7.0.15' };
const entry = (scenario: string, value: number) => ({
  scenario, status: 'ok' as const, at: '2026-11-24T21:00:00.000Z', quick: true, seconds: 12, loadBefore: [1, 2, 3], loadAfter: [2, 2, 3], machine,
  result: { scenario, title: scenario, inputs: { n: 1 }, rows: [{ name: `${scenario} measure`, value, unit: 'ms', baseline: 2, ratio: 0.5, target: '≥ 0.7 of baseline', met: false }], notes: [`${scenario}: missed by 0.2`] },
});

describe('bench runner: docs/benchmarks.md', () => {
  it('puts the generated part after the title the first time and replaces only it later', () => {
    const doc = '# Benchmarks\n\nIntro.\n\n## Mail\n\nHand-written history.\n';
    const first = spliceGenerated(doc, renderGenerated({ page: entry('page', 1.5) }));
    expect(first.indexOf(BEGIN)).toBeGreaterThan(first.indexOf('Intro.'));
    expect(first.indexOf(END)).toBeLessThan(first.indexOf('## Mail'));
    expect(first).toContain('| page | page measure | 1.5 ms | 2 | 0.5 | ≥ 0.7 of baseline | **missed** |');
    expect(first).toContain('- **page**: page: missed by 0.2');
    expect(first).toContain('Machine: 2 cores (AMD EPYC), 24 GiB, Node v24.21.0, PostgreSQL 15.20, Redis 7.0.15.');

    const second = spliceGenerated(first, renderGenerated({ page: entry('page', 1.5), limiter: entry('limiter', 0.25) }));
    expect(second).toContain('| limiter | limiter measure | 0.25 ms |');
    expect(second).toContain('| page | page measure | 1.5 ms |');
    expect(second.split(BEGIN)).toHaveLength(2);
    expect(second.endsWith('## Mail\n\nHand-written history.\n')).toBe(true);
    expect(second.startsWith('# Benchmarks\n\nIntro.\n\n')).toBe(true);
  });

  it('lists scenarios without a result as not run, with the reason', () => {
    const md = renderGenerated({ webhooks: { ...entry('webhooks', 0), status: 'missing', result: undefined, reason: 'bench/webhooks.ts not written yet' } });
    expect(md).toContain('| webhooks | not run: bench/webhooks.ts not written yet | | | |');
    expect(md).toContain('| rush | not run | | | |');
  });

  it('says how long each scenario waited for a quiet machine, and when it never came', () => {
    const md = renderGenerated({
      page: { ...entry('page', 1), settled: { seconds: 8, busyCores: 0.03, quiet: true } },
      rush: { ...entry('rush', 1), settled: { seconds: 180, busyCores: 0.9, quiet: false } },
    });
    expect(md).toContain('| page | 2026-11-24 21:00 | quick, 12 s; quiet after 8 s | 1.0 / 2.0 / 3.0 → 2.0 / 2.0 / 3.0 |');
    expect(md).toContain('| rush | 2026-11-24 21:00 | quick, 12 s; **not quiet** after 180 s (0.9 cores busy) |');
  });
});
