/**
 * Cheap refusal of reconnect-and-flood cycles, server-wide (the shared rate table of
 * shared-rate.ts, so every transport worker sees the same state):
 *
 * - Abusive closes per address: each connection the server closes for breaking a limit (1009
 *   frame too large, 4001 login timeout, 4002 protocol violation) costs its address
 *   `limits.abusePenaltyMs`. An address owing more than ABUSE_BURST penalties has its new
 *   connections closed at open (4029), before any frame is read or password checked, until it is
 *   back under: a flooder gets about one connection per penalty instead of one per reconnect.
 * - Request buckets per user: when a `/stream` session closes with its request bucket
 *   (`limits.requestsPerSec`) not full, the level is kept under the user's name until it would
 *   have refilled; the user's next session (token reconnects included) starts at that level, not
 *   with a fresh burst. Several sessions of one user each start from the lowest level carried.
 */

import { CloseCodes } from '@tidewire/protocol';
import type { SharedRateTable } from './shared-rate.js';
import type { TokenBucket } from './token-bucket.js';

/** Abusive closes an address may have outstanding before its connections are refused at open. */
export const ABUSE_BURST = 10;

/** Close codes that count as abusive (the server closed the connection for breaking a limit). */
export const ABUSIVE_CLOSE_CODES: ReadonlySet<number> = new Set([
  CloseCodes.FRAME_TOO_LARGE.code, CloseCodes.LOGIN_TIMEOUT.code, CloseCodes.PROTOCOL_VIOLATION.code,
]);

/** The throttle; one per transport thread over the shared table. */
export class ReconnectThrottle {
  /** `penaltyMs` per abusive close (0: off); `rates` the shared table. */
  constructor(private readonly rates: SharedRateTable, private readonly penaltyMs: number) {}

  /**
   * Milliseconds until `address` may connect again at `nowMs`: 0 when it may now (or the throttle
   * is off); else the connection should be closed at open with 4029.
   */
  refuseMs(address: string, nowMs: number): number {
    if (this.penaltyMs <= 0) return 0;
    return this.rates.waitMs(`abuse:${address}`, nowMs, 1000 / this.penaltyMs, ABUSE_BURST);
  }

  /**
   * Records a closed connection: an abusive `code` costs `address` one penalty; a `/stream`
   * session of `user` whose request `bucket` is not full carries its level to the user's next
   * session. Call once per closed connection.
   */
  closed(address: string, code: number, nowMs: number, user?: string, bucket?: TokenBucket): void {
    if (this.penaltyMs > 0 && ABUSIVE_CLOSE_CODES.has(code)) this.rates.take(`abuse:${address}`, nowMs, 1000 / this.penaltyMs, ABUSE_BURST);
    if (user !== undefined && bucket) {
      const missing = bucket.capacity - bucket.level(nowMs);
      // full again at now + missing / rate
      if (missing >= 1) this.rates.raise(`requests:${user}`, nowMs + (missing * 1000) / bucket.rate, nowMs);
    }
  }

  /** Lowers a new session's request `bucket` of `user` to the level the user's last drained session left (if it has not refilled yet). */
  inherit(user: string, bucket: TokenBucket | undefined, nowMs: number): void {
    if (!bucket) return;
    const fullAt = this.rates.peek(`requests:${user}`, nowMs);
    if (fullAt !== undefined) bucket.lowerTo(bucket.capacity - ((fullAt - nowMs) * bucket.rate) / 1000, nowMs);
  }
}
