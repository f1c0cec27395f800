/**
 * Latency histograms (HdrHistogram, values in µs, 1 µs .. 1 hour, 3 significant digits), their
 * exchange format between processes and threads (V2 compressed, base64: what the Rust
 * `hdrhistogram` crate writes too), merging, and the millisecond summary of the reports.
 */

import * as hdr from 'hdr-histogram-js';

/** Highest latency tracked, µs (one hour); larger values are clamped to it. */
export const MAX_LATENCY_MICROS = 3_600_000_000;

/** An HDR histogram of latencies in µs. */
export type LatencyHistogram = hdr.Histogram;

/** A new, empty latency histogram. */
export function newLatencyHistogram(): LatencyHistogram {
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: MAX_LATENCY_MICROS,
    numberOfSignificantValueDigits: 3,
    bitBucketSize: 'packed',
    useWebAssembly: false,
  });
}

/** Records a latency in ms (negative clamps to 0, above an hour to an hour). */
export function recordLatencyMs(h: LatencyHistogram, latencyMs: number): void {
  const micros = Math.round(latencyMs * 1000);
  h.recordValue(Math.min(MAX_LATENCY_MICROS, Math.max(0, micros)));
}

/** The histogram as V2 compressed base64 (empty string for an empty histogram). */
export function encodeHistogram(h: LatencyHistogram): string {
  if (h.totalCount === 0) return '';
  return hdr.encodeIntoCompressedBase64(h);
}

/** Adds an encoded histogram (from another thread or the Rust simulator) into `into`. */
export function mergeEncoded(into: LatencyHistogram, encoded: string): void {
  if (encoded === '') return;
  const other = hdr.decodeFromCompressedBase64(encoded, 'packed', false);
  try {
    into.add(other);
  } finally {
    other.destroy();
  }
}

/** Latency summary in ms, the shape of a report step's `latencyMs`. All 0 when nothing was recorded. */
export interface LatencySummaryMs {
  mean: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

const round3 = (v: number): number => Math.round(v * 1000) / 1000;

/** Summarises a µs histogram in ms, rounded to the µs. */
export function summarizeMs(h: LatencyHistogram): LatencySummaryMs {
  if (h.totalCount === 0) return { mean: 0, min: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0 };
  const q = (p: number) => round3(h.getValueAtPercentile(p) / 1000);
  return {
    mean: round3(h.mean / 1000),
    min: round3(h.minNonZeroValue === Number.MAX_SAFE_INTEGER ? 0 : Math.min(h.minNonZeroValue, h.getValueAtPercentile(0)) / 1000),
    p50: q(50),
    p90: q(90),
    p99: q(99),
    p999: q(99.9),
    max: q(100), // bucket-precise (3 digits), identical before and after merging
  };
}
