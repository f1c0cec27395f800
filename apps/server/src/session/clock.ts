/** Time source for session code; tests inject a manual clock. */
export interface Clock {
  /** Current time, epoch ms. */
  now(): number;
}

/** The wall clock (`Date.now()`). */
export const systemClock: Clock = { now: () => Date.now() };
