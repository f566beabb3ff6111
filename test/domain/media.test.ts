import { describe, expect, it } from 'vitest';
import { imageFits, MAX_IMAGE_PIXELS } from '../../src/domain/media.js';

describe('imageFits (spec 8: at most 3000 x 3000 pixels)', () => {
  it('accepts up to 3000 on both sides', () => {
    expect(MAX_IMAGE_PIXELS).toBe(3000);
    expect(imageFits(300, 200)).toBe(true);
    expect(imageFits(3000, 3000)).toBe(true);
    expect(imageFits(1, 3000)).toBe(true);
  });
  it('refuses a side above 3000, and empty images', () => {
    expect(imageFits(3001, 10)).toBe(false);
    expect(imageFits(4000, 10)).toBe(false);
    expect(imageFits(10, 3001)).toBe(false);
    expect(imageFits(0, 10)).toBe(false);
  });
});
