import { describe, expect, it } from 'vitest';
import { flashDirection } from './flash.js';

describe('flashDirection', () => {
  it('flashes up on a higher price and down on a lower one', () => {
    expect(flashDirection(1.1, 1.2)).toBe('up');
    expect(flashDirection(1.2, 1.1)).toBe('down');
  });
  it('does not flash when unchanged', () => {
    expect(flashDirection(1.1, 1.1)).toBeUndefined();
  });
  it('does not flash on the first value or a deleted field', () => {
    expect(flashDirection(undefined, 1.1)).toBeUndefined();
    expect(flashDirection(1.1, null)).toBeUndefined();
    expect(flashDirection('1.1', 1.2)).toBeUndefined();
    expect(flashDirection(Number.NaN, 1.2)).toBeUndefined();
  });
});
