/**
 * Connection counts per key (`ip:<address>`, `user:<name>`) shared by every transport worker
 * thread: a fixed-size open-addressing table in a SharedArrayBuffer, updated with Atomics only
 * (no locks, no messages), so a connection limit holds server-wide whichever worker the kernel
 * gave the connection to.
 *
 * The table is one region of the shared limits buffer (shared-layout.ts). Each slot is one 64-bit
 * word: a 48-bit key hash (0 = empty) and a 16-bit count, changed by one compare-and-swap, so a check-and-increment is atomic. Slots are never freed (a key's count goes
 * back to 0); once every slot is taken, new keys are not counted (acquire answers `untracked`,
 * the caller logs it). Distinct keys with equal 48-bit hashes share a count (probability about
 * n^2 / 2^49: negligible below millions of keys).
 */

import { allocateSharedLimits, DEFAULT_COUNTER_SLOTS, DEFAULT_RATE_SLOTS, hash48, sharedLimitsRegion } from './shared-layout.js';

export { DEFAULT_COUNTER_SLOTS } from './shared-layout.js';

/** Largest count per key (16 bits); limits above it cannot be enforced. */
export const MAX_COUNT = 0xffff;
/** How far a probe walks before it gives up (keeps a nearly full table cheap). */
const MAX_PROBE = 512;

const COUNT_MASK = 0xffffn;

/** Outcome of `acquire`. */
export type AcquireResult = 'ok' | 'limit' | 'untracked';

/** A view of the shared table; one per thread over the same buffer. */
export class SharedCounter {
  private readonly words: BigInt64Array;
  private readonly slots: number;

  /**
   * Allocates the shared limits buffer (shared-layout.ts) with `slots` connection-count slots
   * (a power of two is not required) and `rateSlots` rate slots; the same buffer serves
   * SharedRateTable and SharedWorkGate.
   */
  static allocate(slots = DEFAULT_COUNTER_SLOTS, rateSlots = DEFAULT_RATE_SLOTS): SharedArrayBuffer {
    return allocateSharedLimits(slots, rateSlots);
  }

  /** `buffer` from `allocate` (passed to worker threads in their workerData). */
  constructor(buffer: SharedArrayBuffer) {
    const region = sharedLimitsRegion(buffer);
    this.words = region.words.subarray(region.counterStart, region.counterStart + region.counterSlots);
    this.slots = region.counterSlots;
  }

  /** Slot holding `h`, or the first empty slot of its probe chain (claimed for `h`), or -1. */
  private slot(h: bigint, claim: boolean): number {
    const start = Number(h % BigInt(this.slots));
    for (let i = 0; i < Math.min(MAX_PROBE, this.slots); i++) {
      const s = (start + i) % this.slots;
      for (;;) {
        const w = Atomics.load(this.words, s);
        if (w !== 0n && BigInt.asUintN(64, w) >> 16n === h) return s;
        if (w !== 0n) break; // another key: probe on
        if (!claim) return -1;
        // empty: claim it with count 0; on a lost race re-read the slot (maybe our key now)
        if (Atomics.compareExchange(this.words, s, 0n, BigInt.asIntN(64, h << 16n)) === 0n) return s;
      }
    }
    return -1;
  }

  /**
   * Increments `key`'s count when it is below `limit` (`limit` <= 0: no limit other than MAX_COUNT, still counted).
   * `untracked`: the table is full; nothing was counted and `release` must not be called.
   */
  acquire(key: string, limit: number): AcquireResult {
    const h = hash48(key);
    const s = this.slot(h, true);
    if (s < 0) return 'untracked';
    for (;;) {
      const w = Atomics.load(this.words, s);
      const count = Number(BigInt.asUintN(64, w) & COUNT_MASK);
      if ((limit > 0 && count >= limit) || count >= MAX_COUNT) return 'limit';
      if (Atomics.compareExchange(this.words, s, w, w + 1n) === w) return 'ok';
    }
  }

  /** Decrements `key`'s count (after an `ok` acquire); never below 0. */
  release(key: string): void {
    const s = this.slot(hash48(key), false);
    if (s < 0) return;
    for (;;) {
      const w = Atomics.load(this.words, s);
      if ((BigInt.asUintN(64, w) & COUNT_MASK) === 0n) return;
      if (Atomics.compareExchange(this.words, s, w, w - 1n) === w) return;
    }
  }

  /** Current count of `key` (0 when never seen). */
  count(key: string): number {
    const s = this.slot(hash48(key), false);
    return s < 0 ? 0 : Number(BigInt.asUintN(64, Atomics.load(this.words, s)) & COUNT_MASK);
  }
}
