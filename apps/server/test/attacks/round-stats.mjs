/**
 * Statistics of the attack latency measurement (measure-latency.mjs) over its rounds. One round is
 * a baseline window followed by a window with the attacker; their samples are victim latencies
 * in ms. Pooled percentiles let the worst window decide the p99 (one load spike from elsewhere on
 * a shared machine moves it by 0.3x); the median over rounds of each round's own p99, and of each
 * round's paired ratio (attacked p99 / the baseline p99 measured just before it), does not.
 */

/** Nearest-rank `q` quantile (0..1) of `sorted` (ascending); NaN when empty. */
export function quantile(sorted, q) {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** p50, p99 and sample count of `values` (ms). */
export function percentiles(values) {
  const v = Float64Array.from(values).sort();
  return { p50: quantile(v, 0.5), p99: quantile(v, 0.99), count: v.length };
}

/** Median of finite `values` (mean of the middle two for an even count); NaN when none is finite. */
export function median(values) {
  const v = Float64Array.from(values.filter((x) => Number.isFinite(x))).sort();
  if (v.length === 0) return Number.NaN;
  const mid = v.length >> 1;
  return v.length % 2 === 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

/**
 * Summary of `rounds` ({ base: number[], attacked: number[] } each, latencies in ms): pooled
 * p50 / p99 per condition and their p99 ratio; per round each condition's p99 and the paired
 * ratio; and the medians over rounds of those (a round whose window got no sample counts as NaN
 * and is left out of the medians). Work is O(samples log samples); nothing loops beyond the input.
 */
export function summarizeRounds(rounds) {
  const allBase = [];
  const allAttacked = [];
  const perRound = rounds.map(({ base, attacked }) => {
    for (const x of base) allBase.push(x);
    for (const x of attacked) allAttacked.push(x);
    const b = percentiles(base);
    const a = percentiles(attacked);
    return { baseP99: b.p99, attackedP99: a.p99, ratio: a.p99 / b.p99 };
  });
  const base = percentiles(allBase);
  const attacked = percentiles(allAttacked);
  return {
    pooled: { base, attacked, p99Ratio: attacked.p99 / base.p99 },
    perRound,
    median: {
      baseP99: median(perRound.map((r) => r.baseP99)),
      attackedP99: median(perRound.map((r) => r.attackedP99)),
      pairedRatio: median(perRound.map((r) => r.ratio)),
    },
  };
}
