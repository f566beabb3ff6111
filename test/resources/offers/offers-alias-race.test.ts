import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, useHarness, type Schema } from '../../harness/harness.js';
import { edition } from './helpers.js';

// Issue 13 item 1 (D5, D10): an alias derived from the name is made unique, also under concurrency; only an
// alias the caller sent may be refused.
let ed: Schema<'Edition'>;

const { h, t } = useHarness();
beforeAll(async () => {
  ed = await edition(t, { name: 'Sommer', alias: 'sommer' });
});

describe('concurrent offers with one name', () => {
  it('gives 8 concurrent POST /offers without alias 201 each, with distinct derived aliases', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => t.post('/offers', { name: 'Gleicher Name', edition: ed.uuid })));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
    const aliases = results.map((r) => r.body.alias).sort();
    expect(new Set(aliases).size).toBe(8);
    expect(aliases).toEqual(['gleicher-name', ...[2, 3, 4, 5, 6, 7, 8].map((n) => `gleicher-name-${n}`)].sort());
  });

  it('copies made concurrently get distinct aliases too', async () => {
    const src = await t.post('/offers', { name: 'Vorlage', edition: ed.uuid });
    const copies = await Promise.all(Array.from({ length: 5 }, () => t.post(`/offers/${src.body.uuid}/copy`)));
    expect(copies.map((r) => r.status)).toEqual(Array(5).fill(201));
    expect(new Set(copies.map((r) => r.body.alias)).size).toBe(5);
  });

  it('still refuses a sent alias that is taken, also when racing', async () => {
    const results = await Promise.all(Array.from({ length: 4 }, () => t.post('/offers', { name: 'Eigen', alias: 'eigener-alias', edition: ed.uuid })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 201)) {
      const p = expectProblem(r, 422);
      expect(p.violations?.[0]).toMatchObject({ propertyPath: 'alias', message: 'This value is already used.' });
    }
  });
});

describe('concurrent categories, organisers and editions with one name', () => {
  it('derive distinct aliases for each, all 201', async () => {
    for (const path of ['/categories', '/organisers', '/editions'] as const) {
      const results = await Promise.all(Array.from({ length: 6 }, () => t.post(path, { name: 'Gleich' })));
      expect(results.map((r) => r.status), path).toEqual(Array(6).fill(201));
      expect(new Set(results.map((r) => r.body.alias)).size, path).toBe(6);
    }
  });
});
