/**
 * A server-wide gate for expensive work (password checks: scrypt, ~50 ms of CPU and 16 MiB
 * each): at most one task runs at once across EVERY transport worker, so a password flood takes
 * at most one core whatever the number of workers. Each worker keeps its own bounded FIFO of
 * waiting tasks; beyond `maxQueued` `run` refuses at once (GateFullError).
 *
 * The slot is one word of the shared limits buffer (shared-layout.ts, PASSWORD_LEASE_WORD): 0
 * when free, else the holder's lease deadline (epoch ms). A holder that died or stalled past its
 * lease loses the slot to the next taker, so a crashed worker cannot stop every login. The head
 * of each worker's queue waits for the word to change with `Atomics.waitAsync` (never blocking
 * the event loop), re-checking at least every `POLL_MS`.
 *
 * Share of a core (`sharePct` < 100): a task that ran `t` ms and whose result `rests` (for
 * password checks: a refused password) leaves the slot closed for another `t * (100 / sharePct -
 * 1)` ms (the word holds that deadline with no holder), so such work takes at most `sharePct`% of
 * one core's time, server-wide, however many addresses send it. Tasks that do not rest (correct
 * passwords: a login rush at the open) run back to back, as at 100%.
 */

import { PASSWORD_LEASE_WORD, sharedLimitsRegion } from './shared-layout.js';
import { GateFullError } from './work-gate.js';

/** `Atomics.waitAsync` (Node >= 16; typed in lib es2024, which this build does not target). */
const waitAsync = (Atomics as unknown as {
  waitAsync(a: BigInt64Array, index: number, value: bigint, timeoutMs: number): { async: boolean; value: Promise<string> | string };
}).waitAsync;

/** Longest wait (ms) between two attempts of a queue head, also when no release was signalled. */
const POLL_MS = 50;
/** Default lease (ms): a task still running after it no longer holds the slot. */
export const DEFAULT_LEASE_MS = 10_000;

/** The gate's view of the shared buffer; one per thread. */
export class SharedWorkGate {
  private readonly words: BigInt64Array;
  private readonly waiting: Array<() => void> = [];
  private running = 0;
  private pumping = false;
  /** The lease value this thread wrote, while it holds the slot. */
  private held: bigint | undefined;
  /** When this thread took the slot (its clock, ms), while it holds it. */
  private heldSince = 0;
  /** Closed time after a task, per ms the task ran: 100 / sharePct - 1 (0 at 100%). */
  private readonly restPerMs: number;

  /**
   * `buffer` from `allocateSharedLimits`; `maxQueued` >= 0 tasks waiting in this thread;
   * `leaseMs` > 0 how long one task may hold the slot; `now` the clock (epoch ms); `sharePct`
   * 1..100 the most of one core's time the tasks may take (100: back to back).
   */
  constructor(buffer: SharedArrayBuffer, readonly maxQueued: number, private readonly leaseMs = DEFAULT_LEASE_MS, private readonly now: () => number = Date.now, sharePct = 100) {
    if (!(sharePct >= 1 && sharePct <= 100)) throw new RangeError(`sharePct must be 1..100, got ${sharePct}`);
    this.words = sharedLimitsRegion(buffer).words;
    this.restPerMs = 100 / sharePct - 1;
  }

  /**
   * Runs `task` once this thread holds the server-wide slot; rejects with GateFullError (without
   * running it) when `maxQueued` tasks already wait in this thread. `rests(result)` says whether
   * the slot rests after it (below a 100% share); a task that throws rests.
   */
  async run<T>(task: () => Promise<T>, rests: (result: T) => boolean = () => true): Promise<T> {
    const now = this.running === 0 && this.waiting.length === 0 && this.tryAcquire();
    if (!now) {
      if (this.waiting.length >= this.maxQueued) {
        throw new GateFullError(`a password check is running and ${this.waiting.length} wait on this thread`);
      }
      // resolved by `pump` once this thread holds the slot for this task
      await new Promise<void>((resolve) => {
        this.waiting.push(resolve);
        this.pump();
      });
    }
    this.running++;
    let rest = true;
    try {
      const result = await task();
      rest = rests(result);
      return result;
    } finally {
      this.running--;
      this.release(rest);
      if (this.waiting.length > 0) this.pump();
    }
  }

  /** Takes the slot when it is free or its lease ran out. */
  private tryAcquire(): boolean {
    if (this.held !== undefined) return false;
    const now = this.now();
    const cur = Atomics.load(this.words, PASSWORD_LEASE_WORD);
    if (cur !== 0n && Number(cur) > now) return false;
    const lease = BigInt(Math.ceil(now + this.leaseMs));
    if (Atomics.compareExchange(this.words, PASSWORD_LEASE_WORD, cur, lease) !== cur) return false;
    this.held = lease;
    this.heldSince = now;
    return true;
  }

  /**
   * Frees the slot (unless the lease ran out and another thread took it) and wakes the waiters;
   * below a 100% share, when `rest`, the slot stays closed (a deadline, no holder) for the task's
   * rest time.
   */
  private release(rest: boolean): void {
    const lease = this.held;
    if (lease === undefined) return;
    this.held = undefined;
    const now = this.now();
    const restMs = rest ? Math.min(this.leaseMs, Math.max(0, now - this.heldSince) * this.restPerMs) : 0;
    Atomics.compareExchange(this.words, PASSWORD_LEASE_WORD, lease, restMs >= 1 ? BigInt(Math.ceil(now + restMs)) : 0n);
    Atomics.notify(this.words, PASSWORD_LEASE_WORD);
  }

  /** Hands the slot to this thread's queue head once it gets it; one loop per thread at a time. */
  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    void (async () => {
      try {
        while (this.waiting.length > 0 && this.running === 0) {
          if (this.tryAcquire()) {
            this.waiting.shift()!();
            return;
          }
          const cur = Atomics.load(this.words, PASSWORD_LEASE_WORD);
          if (cur === 0n) continue; // freed between the attempt and the read: try again at once
          const until = Math.max(1, Math.min(POLL_MS, Number(cur) - this.now()));
          const w = waitAsync(this.words, PASSWORD_LEASE_WORD, cur, until);
          if (!w.async) continue;
          // a timer too: a pending waitAsync does not keep Node's event loop alive
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([w.value, new Promise<void>((resolve) => { timer = setTimeout(resolve, until); })]);
          clearTimeout(timer);
        }
      } finally {
        this.pumping = false;
      }
    })();
  }

  /** Tasks running now on this thread (0 or 1). */
  get active(): number {
    return this.running;
  }

  /** Tasks waiting now on this thread. */
  get queued(): number {
    return this.waiting.length;
  }
}
