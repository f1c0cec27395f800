/**
 * HDR histograms (hdr-histogram-js, pure JS) for the server's metrics: latencies in µs and batch
 * sizes in messages, their exchange format between threads (V2 compressed base64) and the
 * summary the admin API shows. One second of data per histogram: they are reset every interval.
 */

import * as hdr from 'hdr-histogram-js';
import type { LatencyStatsMs } from '@tidewire/protocol';

/** Highest latency tracked, µs (one hour); larger values are clamped to it. */
export const MAX_LATENCY_MICROS = 3_600_000_000;
/** Highest batch size tracked, messages per frame; larger values are clamped to it. */
export const MAX_BATCH_MESSAGES = 10_000_000;

/** An HDR histogram of integers (µs or messages). */
export type Histogram = hdr.Histogram;

/** A new, empty histogram tracking 1..`highest` with 3 significant digits. */
export function newHistogram(highest: number): Histogram {
  // 32-bit buckets: recording costs a third of 'packed' (per message on the send path); ~120 KB each
  const h = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: highest, numberOfSignificantValueDigits: 3, bitBucketSize: 32, useWebAssembly: false });
  return withIntegerIndex(h);
}

/** The bucket layout hdr-histogram-js's JsHistogram keeps on each instance. */
interface BucketLayout {
  subBucketHalfCountMagnitude: number;
  subBucketHalfCount: number;
  unitMagnitude: number;
  countsArrayIndex(value: number): number;
}

/** Values below this take the integer bucket index (`withIntegerIndex`); 2^32 (every clamp above is lower). */
const INTEGER_INDEX_BELOW = 2 ** 32;

/**
 * Gives `h` a counts index computed with integer operations (`Math.clz32`, shifts) instead of the
 * library's `log2` and two `pow` per value: recording a sample (one per delivered message or so on
 * the send path) costs a fraction. Same bucket for every value (for an integer v >= 1 below 2^32,
 * floor(log2(v)) = 31 - clz32(v) and floor(v / 2^k) = v >>> k; fractions in [0, 1) go to bucket 0
 * either way); values from 2^32 on, and negative ones, take the library's own path (its range
 * check and error).
 */
export function withIntegerIndex<H extends Histogram>(h: H): H {
  const layout = h as unknown as BucketLayout;
  const library = layout.countsArrayIndex;
  if (typeof library !== 'function' || !Number.isInteger(layout.subBucketHalfCountMagnitude) || !Number.isInteger(layout.unitMagnitude)) return h;
  const halfMagnitude = layout.subBucketHalfCountMagnitude;
  const unitMagnitude = layout.unitMagnitude;
  const halfCount = layout.subBucketHalfCount;
  layout.countsArrayIndex = function countsArrayIndex(this: BucketLayout, value: number): number {
    if (!(value >= 0 && value < INTEGER_INDEX_BELOW)) return library.call(this, value);
    const bucket = Math.max(31 - Math.clz32(value) - halfMagnitude - unitMagnitude, 0);
    const sub = value >>> (bucket + unitMagnitude);
    return (bucket + 1) * (1 << halfMagnitude) + sub - halfCount;
  };
  return h;
}

/** Records a latency in ms into a µs histogram (negative clamps to 0, above an hour to an hour). */
export function recordLatencyMs(h: Histogram, latencyMs: number): void {
  const micros = Math.round(latencyMs * 1000);
  h.recordValue(Math.min(MAX_LATENCY_MICROS, Math.max(0, micros)));
}

/** The histogram as V2 compressed base64; '' when empty (nothing to send). */
export function encodeHistogram(h: Histogram): string {
  return h.totalCount === 0 ? '' : hdr.encodeIntoCompressedBase64(h);
}

/** Adds an encoded histogram (from `encodeHistogram` on another thread) into `into`. */
export function mergeEncoded(into: Histogram, encoded: string): void {
  if (encoded === '') return;
  const other = hdr.decodeFromCompressedBase64(encoded, 32, false);
  try {
    into.add(other);
  } finally {
    other.destroy();
  }
}

const round3 = (v: number): number => Math.round(v * 1000) / 1000;

/**
 * Mean of the recorded values (0 when empty). hdr-histogram-js walks every recorded bucket for
 * `mean` (no cache): read it once per histogram and pass it on.
 */
export function meanOf(h: Histogram): number {
  return h.totalCount === 0 ? 0 : h.mean;
}

/**
 * Summary of a histogram: count, mean, p50, p99, max, each divided by `scale` (1000: µs -> ms;
 * 1: counts) and rounded to 3 decimals. All 0 for an empty histogram. `mean`: the histogram's
 * mean when the caller has it (meanOf), else computed here.
 */
export function summarize(h: Histogram, scale: number, mean: number = meanOf(h)): LatencyStatsMs {
  if (h.totalCount === 0) return { count: 0, mean: 0, p50: 0, p99: 0, max: 0 };
  return {
    count: h.totalCount,
    mean: round3(mean / scale),
    p50: round3(h.getValueAtPercentile(50) / scale),
    p99: round3(h.getValueAtPercentile(99) / scale),
    max: round3(h.maxValue / scale),
  };
}
