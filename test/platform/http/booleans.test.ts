import { describe, expect, it } from 'vitest';
import { parseBoolean } from '../../../src/platform/http/booleans.js';

// Spec 1.9: booleans are `true` or `false`; `1`/`0` and `yes`/`no` also work.
describe('parseBoolean', () => {
  it('reads true, 1 and yes as true', () => {
    for (const v of ['true', '1', 'yes', 'TRUE', 'Yes', ' true ']) expect(parseBoolean(v), v).toBe(true);
  });

  it('reads false, 0 and no as false', () => {
    for (const v of ['false', '0', 'no', 'FALSE', 'No']) expect(parseBoolean(v), v).toBe(false);
  });

  it('refuses anything else', () => {
    for (const v of ['', 'maybe', 'y', 'n', 't', 'f', '2', '-1', 'on', 'off', 'null', 'truefalse']) {
      expect(parseBoolean(v), v).toBeNull();
    }
  });
});
