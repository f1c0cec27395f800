/**
 * The run clock. Every timestamp the load generator writes (`ts` on published updates) or
 * compares (receipt times) is epoch milliseconds with a microsecond fraction:
 * `performance.timeOrigin + performance.now()`, which advances with CLOCK_MONOTONIC. The Rust
 * client simulator gets an (epoch, monotonic) anchor so its receipt times are the same clock.
 */

/** A source of time, epoch ms with fraction. Injected so pacing can be tested with a fake clock. */
export type Clock = () => number;

/** The run clock: `performance.timeOrigin + performance.now()`, epoch ms with µs fraction. */
export const epochNowMs: Clock = () => performance.timeOrigin + performance.now();

/** One reading of the run clock paired with CLOCK_MONOTONIC (ms), taken back to back. */
export interface ClockAnchor {
  /** Run clock, epoch ms. */
  epochMs: number;
  /** CLOCK_MONOTONIC (what `process.hrtime` reads), ms. */
  monoMs: number;
}

/** Pairs the run clock with CLOCK_MONOTONIC, so another process can derive the same clock. */
export function clockAnchor(): ClockAnchor {
  const monoMs = Number(process.hrtime.bigint()) / 1e6;
  const epochMs = epochNowMs();
  return { epochMs, monoMs };
}

/** Resolves after `ms` (used for measurement windows, never for synchronisation in tests). */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
