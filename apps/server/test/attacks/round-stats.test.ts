/**
 * The round statistics of the attack latency measurement (round-stats.mjs): one spiky window
 * decides the pooled p99 but not the medians over rounds.
 */

import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ES module without types (imported by measure-latency.mjs as well)
import { median, percentiles, quantile, summarizeRounds } from './round-stats.mjs';

/** `n` latencies: 1..n ms. */
const ramp = (n: number, scale = 1): number[] => Array.from({ length: n }, (_, i) => (i + 1) * scale);

describe('round statistics', () => {
  it('quantile and median', () => {
    expect(quantile(Float64Array.from([1, 2, 3, 4]), 0.5)).toBe(3);
    expect(quantile(Float64Array.from([1, 2, 3, 4]), 0.99)).toBe(4);
    expect(Number.isNaN(quantile(new Float64Array(0), 0.5))).toBe(true);
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    expect(median([Number.NaN, 5])).toBe(5);
    expect(Number.isNaN(median([]))).toBe(true);
    expect(percentiles(ramp(200))).toEqual({ p50: 101, p99: 199, count: 200 });
  });

  it('one spiky window moves the pooled p99 ratio, not the median paired ratio', () => {
    const rounds = Array.from({ length: 5 }, () => ({ base: ramp(100), attacked: ramp(100, 1.05) }));
    rounds[2] = { base: ramp(100), attacked: [...ramp(95, 1.05), 500, 500, 500, 500, 500] }; // a load spike hit one attacked window
    const s = summarizeRounds(rounds);
    expect(s.pooled.p99Ratio).toBeGreaterThan(4);
    expect(s.median.pairedRatio).toBeCloseTo(1.05, 5);
    expect(s.median.baseP99).toBe(100);
    expect(s.perRound).toHaveLength(5);
    expect(s.perRound[2].ratio).toBe(5);
  });

  it('a window without samples is left out of the medians', () => {
    const s = summarizeRounds([{ base: ramp(100), attacked: [] }, { base: ramp(100), attacked: ramp(100, 2) }]);
    expect(Number.isNaN(s.perRound[0].ratio)).toBe(true);
    expect(s.median.pairedRatio).toBe(2);
    expect(s.pooled.attacked.count).toBe(100);
  });
});
