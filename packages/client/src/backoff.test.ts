import { describe, expect, it } from 'vitest';
import { backoffDelayMs } from './backoff.js';

describe('backoffDelayMs', () => {
  it('doubles per attempt up to the cap, with jitter in [0.5, 1)', () => {
    expect(backoffDelayMs(1, 250, 10_000, () => 0)).toBe(125);
    expect(backoffDelayMs(1, 250, 10_000, () => 0.999999)).toBeCloseTo(250, 3);
    expect(backoffDelayMs(3, 250, 10_000, () => 1 - Number.EPSILON)).toBeCloseTo(1000, 3);
    expect(backoffDelayMs(50, 250, 10_000, () => 0.5)).toBe(7_500);
    expect(backoffDelayMs(10_000, 250, 10_000, () => 0)).toBe(5_000);
  });
});
