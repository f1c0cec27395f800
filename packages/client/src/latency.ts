/**
 * Latency statistics with bounded memory: count, sum, max and a log-bucketed histogram
 * (5% wide buckets from 0.01 ms) for the 99th percentile.
 */

import type { ClientLatencyReport } from '@tidewire/protocol';
import type { LatencySnapshot, LatencyStats } from './types.js';

const MIN_MS = 0.01;
const GROWTH = 1.05;
const LOG_GROWTH = Math.log(GROWTH);
/** 0.01 ms * 1.05^420 ~ 8e6 ms (2+ hours): anything slower lands in the last bucket. */
const BUCKETS = 422;

function bucketOf(ms: number): number {
  if (!(ms > MIN_MS)) return 0; // also NaN
  return Math.min(BUCKETS - 1, 1 + Math.floor(Math.log(ms / MIN_MS) / LOG_GROWTH));
}

function upperBound(bucket: number): number {
  return MIN_MS * GROWTH ** bucket;
}

/** One window of latency samples. */
export class LatencyWindow {
  private count = 0;
  private sum = 0;
  private max = 0;
  private readonly histogram = new Uint32Array(BUCKETS);

  /** Adds one sample, ms (negative values come from clock skew and are kept as they are). */
  add(ms: number): void {
    if (!Number.isFinite(ms)) return;
    if (this.count === 0 || ms > this.max) this.max = ms;
    this.count++;
    this.sum += ms;
    this.histogram[bucketOf(ms)]!++;
  }

  /** Count, mean, p99 (bucket upper bound, capped at the max) and max; zeros when empty. */
  stats(): LatencyStats {
    if (this.count === 0) return { samples: 0, meanMs: 0, p99Ms: 0, maxMs: 0 };
    const rank = Math.ceil(this.count * 0.99);
    let seen = 0;
    let p99 = this.max;
    for (let b = 0; b < BUCKETS; b++) {
      seen += this.histogram[b]!;
      if (seen >= rank) {
        p99 = Math.min(upperBound(b), this.max);
        break;
      }
    }
    return { samples: this.count, meanMs: this.sum / this.count, p99Ms: p99, maxMs: this.max };
  }

  /** Empties the window. */
  reset(): void {
    this.count = 0;
    this.sum = 0;
    this.max = 0;
    this.histogram.fill(0);
  }
}

/** Receipt latency (current period, last period, lifetime) and paint latency of a client. */
export class LatencyTracker {
  private readonly current = new LatencyWindow();
  private readonly lifetime = new LatencyWindow();
  private period: LatencyStats = { samples: 0, meanMs: 0, p99Ms: 0, maxMs: 0 };
  private reported: LatencyStats = { samples: 0, meanMs: 0, p99Ms: 0, maxMs: 0 };
  private paintSum = 0;
  private paintCount = 0;
  private periodPaintMeanMs: number | undefined;

  /** Records one origin -> receipt sample, ms. */
  receipt(ms: number): void {
    this.current.add(ms);
    this.lifetime.add(ms);
  }

  /** Records one origin -> paint sample, ms. */
  paint(ms: number): void {
    if (!Number.isFinite(ms)) return;
    this.paintSum += ms;
    this.paintCount++;
  }

  /** Closes the current period and returns its report (what a heartbeat carries). */
  rotate(): ClientLatencyReport {
    this.period = this.current.stats();
    if (this.period.samples > 0) this.reported = this.period;
    this.current.reset();
    const report: ClientLatencyReport = { ...this.period };
    this.periodPaintMeanMs = this.paintCount > 0 ? this.paintSum / this.paintCount : undefined;
    if (this.periodPaintMeanMs !== undefined) report.paintMeanMs = this.periodPaintMeanMs;
    this.paintSum = 0;
    this.paintCount = 0;
    return report;
  }

  /** Last period, current period and lifetime statistics. */
  snapshot(): LatencySnapshot {
    const s: LatencySnapshot = { period: this.period, reported: this.reported, current: this.current.stats(), lifetime: this.lifetime.stats() };
    if (this.periodPaintMeanMs !== undefined) s.paintMeanMs = this.periodPaintMeanMs;
    return s;
  }
}
