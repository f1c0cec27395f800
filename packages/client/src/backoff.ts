/** Reconnect delays: exponential backoff with jitter. */

/**
 * Delay before reconnect attempt `attempt` (1-based), ms: `initialDelayMs * 2^(attempt-1)`,
 * capped at `maxDelayMs`, then scaled by a random factor in [0.5, 1) so that clients dropped
 * together do not come back together. `random` returns [0, 1) (injectable for tests).
 */
export function backoffDelayMs(
  attempt: number,
  initialDelayMs: number,
  maxDelayMs: number,
  random: () => number = Math.random,
): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 30); // 2^30 * anything positive is past any cap
  const base = Math.min(maxDelayMs, initialDelayMs * 2 ** exponent);
  return base * (0.5 + 0.5 * random());
}
