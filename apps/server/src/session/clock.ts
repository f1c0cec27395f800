/** Time source for session code; tests inject a manual clock. */
export interface Clock {
  /** Current time, epoch ms. */
  now(): number;
}

/** The wall clock (`Date.now()`). */
export const systemClock: Clock = { now: () => Date.now() };

/** The thread's `performance.timeOrigin`, read once (the getter costs an allocation per read). */
const TIME_ORIGIN = performance.timeOrigin;

/**
 * Wall clock with sub-millisecond precision (`performance.timeOrigin + performance.now()`): origin
 * timestamps and latency metrics need it (Date.now() floors to whole ms). It follows the monotonic
 * clock from the thread's start, so it can drift from the system clock by what NTP slews meanwhile.
 */
export const preciseClock: Clock = { now: () => TIME_ORIGIN + performance.now() };
