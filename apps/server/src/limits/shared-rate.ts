/**
 * Rate limits that hold server-wide: one token bucket per key (`login:<address>`,
 * `order:<user>`, ...) in the shared limits buffer (shared-layout.ts), taken with Atomics by
 * every transport worker, so N workers do not mean N times the configured rate.
 *
 * A bucket is stored as one number, its theoretical arrival time (GCRA, the generic cell rate
 * algorithm, equivalent to a token bucket of `ratePerSec` and `burst`): a request at `now` is
 * allowed when `max(tat, now) + 1/rate <= now + burst/rate`, and moves `tat` there with one
 * compare-and-swap. Times are microseconds since the epoch.
 *
 * Each slot is two words: the key's 48-bit hash (0 = empty) and its `tat`. A slot whose bucket
 * has been full for `STALE_MS` may be taken over by another key when a probe finds no free slot
 * (a request of the old key racing with the takeover can count once against the new key).
 * When no slot can be had the table answers `untracked`; SharedRateLimiter then falls back to
 * a per-thread bucket. Distinct keys with equal 48-bit hashes share a bucket (negligible below
 * millions of keys).
 */

import { hash48, sharedLimitsRegion } from './shared-layout.js';
import { KeyedRateLimiter } from './token-bucket.js';

/** A slot whose bucket has been full this long (ms) may be reused for another key. */
export const STALE_MS = 60_000;
/** How far a probe walks before it gives up. */
const MAX_PROBE = 256;

/** Outcome of `SharedRateTable.take`. */
export type RateResult = 'ok' | 'limit' | 'untracked';

const micros = (ms: number): bigint => BigInt(Math.round(ms * 1000));

/** A view of the shared rate table; one per thread over the same buffer. */
export class SharedRateTable {
  private readonly words: BigInt64Array;
  private readonly slots: number;

  /** `buffer` from `allocateSharedLimits` / `SharedCounter.allocate`. */
  constructor(buffer: SharedArrayBuffer) {
    const region = sharedLimitsRegion(buffer);
    this.words = region.words.subarray(region.rateStart, region.rateStart + 2 * region.rateSlots);
    this.slots = region.rateSlots;
  }

  /**
   * Index of the key word of `key`'s slot; claims an empty or stale slot when `claim`; -1 when the
   * key has none (and none could be claimed).
   */
  private slot(h: bigint, nowUs: bigint, claim: boolean): number {
    const start = Number(h % BigInt(this.slots));
    let stale = -1;
    for (let i = 0; i < Math.min(MAX_PROBE, this.slots); i++) {
      const s = ((start + i) % this.slots) * 2;
      for (;;) {
        const k = Atomics.load(this.words, s);
        if (k === h) return s;
        if (k !== 0n) {
          if (stale < 0 && Atomics.load(this.words, s + 1) + micros(STALE_MS) < nowUs) stale = s;
          break;
        }
        if (!claim) return -1;
        // empty: claim it (its tat is 0: a full bucket); on a lost race re-read (maybe our key now)
        if (Atomics.compareExchange(this.words, s, 0n, h) === 0n) return s;
      }
    }
    if (!claim || stale < 0) return -1;
    const old = Atomics.load(this.words, stale);
    // the old key's bucket is full (tat in the past), so is the new key's: the tat stays as it is
    return Atomics.compareExchange(this.words, stale, old, h) === old ? stale : -1;
  }

  /**
   * Takes one request for `key` at `nowMs` (epoch ms) from a bucket of `ratePerSec` (> 0) per
   * second and `burst` (>= 1): `ok` (taken), `limit` (over the rate: nothing taken) or
   * `untracked` (no slot free: nothing counted).
   */
  take(key: string, nowMs: number, ratePerSec: number, burst: number): RateResult {
    const now = micros(nowMs);
    const s = this.slot(hash48(key), now, true);
    if (s < 0) return 'untracked';
    const interval = micros(1000 / ratePerSec);
    const limit = now + micros((1000 * Math.max(1, burst)) / ratePerSec);
    for (;;) {
      const tat = Atomics.load(this.words, s + 1);
      const next = (tat > now ? tat : now) + interval;
      if (next > limit) return 'limit';
      if (Atomics.compareExchange(this.words, s + 1, tat, next) === tat) return 'ok';
    }
  }

  /** Milliseconds until `key` may take a request at `nowMs` (0 when it may now, or is unknown). */
  waitMs(key: string, nowMs: number, ratePerSec: number, burst: number): number {
    const now = micros(nowMs);
    const s = this.slot(hash48(key), now, false);
    if (s < 0) return 0;
    const tat = Atomics.load(this.words, s + 1);
    const over = tat + micros(1000 / ratePerSec) - (now + micros((1000 * Math.max(1, burst)) / ratePerSec));
    return over > 0n ? Math.ceil(Number(over) / 1000) : 0;
  }

  /**
   * Gives back one request `take` took for `key` (its `tat` one interval earlier): the request
   * turned out not to count. False when the key has no slot (nothing was taken here).
   */
  giveBack(key: string, nowMs: number, ratePerSec: number): boolean {
    const s = this.slot(hash48(key), micros(nowMs), false);
    if (s < 0) return false;
    const interval = micros(1000 / ratePerSec);
    for (;;) {
      const tat = Atomics.load(this.words, s + 1);
      if (Atomics.compareExchange(this.words, s + 1, tat, tat - interval) === tat) return true;
    }
  }

  /**
   * Stores a bucket level for `key`: its `tat` becomes at least `tatMs` (epoch ms; a later one
   * already stored stays). Used to carry a session's request bucket to the user's next session.
   * False when no slot could be had.
   */
  raise(key: string, tatMs: number, nowMs: number): boolean {
    const s = this.slot(hash48(key), micros(nowMs), true);
    if (s < 0) return false;
    const want = micros(tatMs);
    for (;;) {
      const tat = Atomics.load(this.words, s + 1);
      if (tat >= want) return true;
      if (Atomics.compareExchange(this.words, s + 1, tat, want) === tat) return true;
    }
  }

  /**
   * The stored `tat` of `key` in epoch ms when it is later than `nowMs` (a bucket not yet full),
   * else undefined. Leaves it in place (several sessions of one user may read it).
   */
  peek(key: string, nowMs: number): number | undefined {
    const now = micros(nowMs);
    const s = this.slot(hash48(key), now, false);
    if (s < 0) return undefined;
    const tat = Atomics.load(this.words, s + 1);
    return tat > now ? Number(tat) / 1000 : undefined;
  }
}

/**
 * A per-key rate limit counted across every transport worker (SharedRateTable under a key
 * prefix), with the same interface as KeyedRateLimiter. When the shared table is full a
 * per-thread bucket counts the key instead (with N workers such a key gets up to N times the rate).
 */
export class SharedRateLimiter {
  private readonly fallback: KeyedRateLimiter;

  /**
   * `table` the shared rate table; `prefix` separates this limit's keys from others (`login:`);
   * `ratePerSec` per key (0: off, every take allowed); `burst` >= 1 requests at once.
   */
  constructor(private readonly table: SharedRateTable, private readonly prefix: string, readonly ratePerSec: number, readonly burst: number) {
    this.fallback = new KeyedRateLimiter(ratePerSec, burst);
  }

  /** Takes one request for `key` at `nowMs`; true when allowed (always when the limit is off). */
  take(key: string, nowMs: number): boolean {
    if (this.ratePerSec <= 0) return true;
    const r = this.table.take(this.prefix + key, nowMs, this.ratePerSec, this.burst);
    return r === 'untracked' ? this.fallback.take(key, nowMs) : r === 'ok';
  }

  /** Gives back one request `take` allowed for `key` at `nowMs` (it turned out not to count). */
  giveBack(key: string, nowMs: number): void {
    if (this.ratePerSec <= 0) return;
    if (!this.table.giveBack(this.prefix + key, nowMs, this.ratePerSec)) this.fallback.giveBack(key);
  }

  /** Milliseconds until `key` may take a request at `nowMs` (0 when now or the limit is off). */
  waitMs(key: string, nowMs: number): number {
    return this.ratePerSec <= 0 ? 0 : this.table.waitMs(this.prefix + key, nowMs, this.ratePerSec, this.burst);
  }
}
