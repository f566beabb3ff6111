import { describe, expect, it } from 'vitest';
import { cycles, folderOf } from '../../scripts/import-graph.js';

// The folder-cycle check of `npm run lint:deps` (issue 15); the import rules themselves are dependency-cruiser's.
describe('import graph', () => {
  it('folds a file into its resource, engine or layer; entities are one node of their own', () => {
    expect(folderOf('src/resources/offers/service.ts')).toBe('resources/offers');
    expect(folderOf('src/resources/offers/entity.ts')).toBe('entities');
    expect(folderOf('src/engines/ledger/store.ts')).toBe('engines/ledger');
    expect(folderOf('src/platform/http/problem.ts')).toBe('platform');
    expect(folderOf('src/router.ts')).toBe('router.ts');
  });

  it('finds every cycle between folders and nothing else', () => {
    const graph = new Map<string, Set<string>>([
      ['a', new Set(['b'])], ['b', new Set(['c'])], ['c', new Set(['a', 'd'])], ['d', new Set()],
      ['e', new Set(['f'])], ['f', new Set(['e'])],
    ]);
    expect(cycles(graph)).toEqual([['a', 'b', 'c'], ['e', 'f']]);
    expect(cycles(new Map([['a', new Set(['b'])], ['b', new Set()]]))).toEqual([]);
  });
});
