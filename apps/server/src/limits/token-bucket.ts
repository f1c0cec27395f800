/**
 * Token buckets for request and order rates: `ratePerSec` tokens are added per second up to
 * `burst`; each request takes one. Time comes from the caller (the handler's Clock), so tests
 * drive it by hand.
 */

/** One bucket; starts full. */
export class TokenBucket {
  private tokens: number;
  private last: number;

  /** Refill rate, tokens per second. */
  get rate(): number {
    return this.ratePerSec;
  }

  /** Capacity, tokens. */
  get capacity(): number {
    return this.burst;
  }

  /**
   * `ratePerSec` > 0 refill rate, tokens per second; `burst` >= 1 capacity (also the start
   * level); `nowMs` the creation time, epoch ms.
   */
  constructor(private readonly ratePerSec: number, private readonly burst: number, nowMs: number) {
    this.tokens = burst;
    this.last = nowMs;
  }

  /**
   * Takes `count` tokens (default 1; more than the capacity takes the capacity, so a request
   * never costs more than a full bucket) at `nowMs`: true when there were that many, and nothing
   * is taken otherwise. A clock going backwards adds nothing (never a negative refill).
   */
  take(nowMs: number, count = 1): boolean {
    if (nowMs > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((nowMs - this.last) * this.ratePerSec) / 1000);
      this.last = nowMs;
    }
    const need = this.cost(count);
    if (this.tokens < need) return false;
    this.tokens -= need;
    return true;
  }

  /**
   * Like `take`, but a refused request still costs its tokens: the bucket goes below zero (down to
   * minus the capacity), so a client that keeps sending what it cannot afford stays refused until
   * the debt has refilled. For requests whose cost is their work (a subscribe of many subjects).
   */
  takeOrOwe(nowMs: number, count: number): boolean {
    if (this.take(nowMs, count)) return true;
    this.tokens = Math.max(-this.burst, this.tokens - this.cost(count));
    return false;
  }

  /** Returns one token `take` took (up to the capacity): the request turned out not to count. */
  giveBack(): void {
    this.tokens = Math.min(this.burst, this.tokens + 1);
  }

  /** Tokens `count` costs: at least 1, at most the capacity (a request never costs more than a full bucket). */
  private cost(count: number): number {
    return Math.min(this.burst, Math.max(1, count));
  }

  /** Tokens available at `nowMs` (-burst .. burst, fractional; below 0 after `takeOrOwe` refused). */
  level(nowMs: number): number {
    return Math.min(this.burst, this.tokens + (Math.max(0, nowMs - this.last) * this.ratePerSec) / 1000);
  }

  /**
   * Lowers the bucket to `tokens` at `nowMs` when it holds more (never raises it): a session
   * inherits a drained bucket of an earlier session of the same user.
   */
  lowerTo(tokens: number, nowMs: number): void {
    const have = this.level(nowMs);
    if (tokens >= have) return;
    this.tokens = Math.max(0, tokens);
    this.last = Math.max(this.last, nowMs);
  }

  /** Milliseconds until `count` tokens (default 1, capped as in `take`) are there at `nowMs` (0 when they are). */
  waitMs(nowMs: number, count = 1): number {
    const need = this.cost(count);
    const have = this.tokens + (Math.max(0, nowMs - this.last) * this.ratePerSec) / 1000;
    return have >= need ? 0 : Math.ceil(((need - have) * 1000) / this.ratePerSec);
  }
}

/** Keys whose bucket was idle (full) this long are forgotten by `KeyedRateLimiter.sweep`. */
const IDLE_FORGET_MS = 60_000;

/**
 * One token bucket per key (e.g. per user for orders/s). Memory stays bounded: buckets idle for
 * a minute are dropped by `sweep`, which `take` runs every 1,000 calls.
 */
export class KeyedRateLimiter {
  private readonly buckets = new Map<string, { bucket: TokenBucket; lastMs: number }>();
  private calls = 0;

  /** `ratePerSec` tokens per second per key, `burst` capacity per key; 0 `ratePerSec` turns the limiter off. */
  constructor(readonly ratePerSec: number, readonly burst: number) {}

  /** Takes a token for `key` at `nowMs`; true when allowed (always when the limiter is off). */
  take(key: string, nowMs: number): boolean {
    if (this.ratePerSec <= 0) return true;
    if (++this.calls % 1000 === 0) this.sweep(nowMs);
    let entry = this.buckets.get(key);
    if (!entry) {
      entry = { bucket: new TokenBucket(this.ratePerSec, this.burst, nowMs), lastMs: nowMs };
      this.buckets.set(key, entry);
    }
    entry.lastMs = nowMs;
    return entry.bucket.take(nowMs);
  }

  /** Returns one token `take` took for `key` (nothing when the key has no bucket). */
  giveBack(key: string): void {
    this.buckets.get(key)?.bucket.giveBack();
  }

  /** Drops buckets not used for a minute (they would be full again anyway). */
  sweep(nowMs: number): void {
    for (const [key, entry] of this.buckets) if (nowMs - entry.lastMs > IDLE_FORGET_MS) this.buckets.delete(key);
  }

  /** Keys currently tracked. */
  get size(): number {
    return this.buckets.size;
  }
}
