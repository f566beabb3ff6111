import { describe, expect, it } from 'vitest';
import { parsePgArray } from '../../../src/platform/auth/tokens.js';

// A token's organiser ids may come back as PostgreSQL's array text; postgres-array reads it (issue 26).
describe('parsePgArray', () => {
  it('reads arrays, array text with quotes and NULLs, and nothing', () => {
    expect(parsePgArray(null)).toEqual([]);
    expect(parsePgArray(['a', 'b'])).toEqual(['a', 'b']);
    expect(parsePgArray('{}')).toEqual([]);
    expect(parsePgArray('{7f4c8a1e-0b7e-4b8e-9a59-0c1f2d3e4f50,0b7e4b8e-9a59-4c1f-8d3e-4f507f4c8a1e}')).toEqual([
      '7f4c8a1e-0b7e-4b8e-9a59-0c1f2d3e4f50', '0b7e4b8e-9a59-4c1f-8d3e-4f507f4c8a1e',
    ]);
    expect(parsePgArray('{"a,b","c\\"d",NULL}')).toEqual(['a,b', 'c"d']);
  });
});
