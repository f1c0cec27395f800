/**
 * What both paced publishers (source.ts, feed-publisher.ts) count about their sends' timing, and
 * the one place that counts it.
 */

/** Timing of paced sends since the last `takeStats()`. */
export interface PacingStats {
  /** Largest send time minus scheduled time, ms. */
  maxLatenessMs: number;
  /** Updates sent more than 1 ms after their schedule. */
  lateOver1Ms: number;
  /** Largest `bufferedAmount` after a paced frame: bytes sent but not yet taken by the server's socket. */
  maxBufferedBytes: number;
}

export const emptyPacing = (): PacingStats => ({ maxLatenessMs: 0, lateOver1Ms: 0, maxBufferedBytes: 0 });

/** Counts one update sent at `sentMs` that was scheduled for `scheduledMs`. */
export function noteLateness(s: PacingStats, sentMs: number, scheduledMs: number): void {
  const lateness = sentMs - scheduledMs;
  if (lateness > s.maxLatenessMs) s.maxLatenessMs = lateness;
  if (lateness > 1) s.lateOver1Ms++;
}

/** Counts the socket's `bufferedAmount` after a paced frame. */
export function noteBuffered(s: PacingStats, bufferedBytes: number): void {
  if (bufferedBytes > s.maxBufferedBytes) s.maxBufferedBytes = bufferedBytes;
}
