/**
 * Rate pacing: sends spread evenly in time. Send number `i` is scheduled at
 * `startMs + i * 1000 / ratePerSec`; a timer ticks every `tickMs` (0.5 ms by default, with
 * `preciseTicks`) and takes every send that is due. As long as the timer fires at least once per
 * millisecond, every send leaves within 1 ms of its schedule; when the process stalls, the late
 * sends go out at the next tick (none are skipped) and the lateness is measured.
 */

import type { Clock } from './clock.js';
import { badArgument } from './errors.js';

/** Sends due at one tick: indices `first .. first + count - 1`. */
export interface DueSends {
  first: number;
  count: number;
}

/** Schedules sends at a fixed rate from a start time. Pure: time is passed in. */
export class Pacer {
  /** Time between two consecutive sends, ms. */
  readonly intervalMs: number;
  private nextIndex = 0;

  /**
   * @param ratePerSec sends per second (> 0, <= 10,000,000)
   * @param startMs epoch ms of send 0
   * @param maxCount stop after this many sends (default: unbounded count; the caller bounds time)
   */
  constructor(
    readonly ratePerSec: number,
    readonly startMs: number,
    readonly maxCount = Number.POSITIVE_INFINITY,
  ) {
    if (!(ratePerSec > 0 && ratePerSec <= 10_000_000)) throw badArgument('rate', ratePerSec, 'must be > 0 and <= 10,000,000 per second');
    this.intervalMs = 1000 / ratePerSec;
  }

  /** Scheduled time of send `index`, epoch ms. */
  scheduledMs(index: number): number {
    return this.startMs + index * this.intervalMs;
  }

  /** Index of the next send not yet taken. */
  get taken(): number {
    return this.nextIndex;
  }

  /** True when `maxCount` sends have been taken. */
  get done(): boolean {
    return this.nextIndex >= this.maxCount;
  }

  /** Takes every send scheduled at or before `nowMs` that was not taken yet. */
  take(nowMs: number): DueSends {
    const first = this.nextIndex;
    if (nowMs < this.startMs) return { first, count: 0 };
    const dueUpTo = Math.min(this.maxCount, Math.floor((nowMs - this.startMs) / this.intervalMs) + 1);
    const count = Math.max(0, dueUpTo - first);
    this.nextIndex = first + count;
    return { first, count };
  }
}

/** Starts a repeating timer; returns a function that stops it. Injected in tests. */
export type TickScheduler = (tick: () => void, everyMs: number) => () => void;

/** `setInterval`-based ticks (Node clamps the period to >= 1 ms and drifts: ticks come every 1-2 ms). */
export const intervalTicks: TickScheduler = (tick, everyMs) => {
  const t = setInterval(tick, everyMs);
  return () => clearInterval(t);
};

/**
 * Sub-millisecond ticks: sleeps with `Atomics.wait` (fractional ms, a futex: no busy loop) until
 * the next tick is due, ticks, then yields to the event loop with `setImmediate` so sockets and
 * timers keep running between ticks. Blocks this thread at most `everyMs` at a time.
 */
export const preciseTicks: TickScheduler = (tick, everyMs) => {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  let stopped = false;
  let next = performance.now() + everyMs;
  const loop = (): void => {
    if (stopped) return;
    const wait = next - performance.now();
    if (wait > 0) Atomics.wait(cell, 0, 0, Math.min(wait, everyMs));
    if (stopped) return;
    tick();
    // the next tick is due one period after this one was; after a stall, one period from now
    next = Math.max(next + everyMs, performance.now());
    setImmediate(loop);
  };
  setImmediate(loop);
  return () => {
    stopped = true;
  };
};

/** Options of `runPaced`. */
export interface PacedOptions {
  pacer: Pacer;
  clock: Clock;
  /** Called once per tick with the due sends and the tick's time (epoch ms). */
  send(due: DueSends, nowMs: number): void;
  /** Stop at this epoch ms even if sends remain. */
  untilMs: number;
  /** Timer period, ms. @default 0.5 */
  tickMs?: number;
  /** @default preciseTicks */
  ticks?: TickScheduler;
}

/** A running paced loop: `stop()` ends it early; `done` resolves when it ended. */
export interface PacedLoop {
  stop(): void;
  done: Promise<void>;
}

/** Runs `send` on every tick until `untilMs` or the pacer's `maxCount` (bounded in time and count). */
export function runPaced(opts: PacedOptions): PacedLoop {
  const ticks = opts.ticks ?? preciseTicks;
  let finish: () => void = () => {};
  const done = new Promise<void>((resolve) => (finish = resolve));
  let cancel: (() => void) | undefined;
  let stopped = false;
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    cancel?.();
    finish();
  };
  cancel = ticks(() => {
    if (stopped) return;
    const now = opts.clock();
    const due = opts.pacer.take(Math.min(now, opts.untilMs));
    if (due.count > 0) opts.send(due, now);
    if (now >= opts.untilMs || opts.pacer.done) stop();
  }, opts.tickMs ?? 0.5);
  if (stopped) cancel();
  return { stop, done };
}
