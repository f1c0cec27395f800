/**
 * Rate pacing: sends spread evenly in time. Send number `i` is scheduled at
 * `startMs + i * 1000 / ratePerSec`; a timer ticks and takes every send that is due; late sends go
 * out at the next tick (none are skipped) and the lateness is measured. Three timers:
 * - `intervalTicks`: `setInterval`, 1 ms at best and often 2 (libuv timers have 1 ms resolution and
 *   fire late): a send waits ~1 ms after its schedule on average. Fine where the wait is not
 *   charged to a latency.
 * - `workerTicks`: a worker thread sleeps (`Atomics.wait`, a futex with a fractional-ms timeout)
 *   until the next send is due, then wakes the main event loop with `postMessage`; the main
 *   thread never blocks, so socket reads (acks) are taken on time between ticks. For open-loop
 *   latency, where a late send is charged to the result.
 * - `preciseTicks`: `Atomics.wait` in the calling thread; the thread does nothing else while it
 *   sleeps (reads wait), so only for a thread that only sends (the feed publishers).
 */

import { Worker } from 'node:worker_threads';
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

/**
 * Starts a repeating timer; returns a function that stops it. Injected in tests. `tick` may return
 * how long until it has work again (ms); a scheduler that can sleep that long (`workerTicks`) does,
 * never shorter than `everyMs`; the others tick every `everyMs` regardless.
 */
export type TickScheduler = (tick: () => number | void, everyMs: number) => () => void;

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

/** Longest single sleep of the ticker thread, ms: it rechecks its state at least this often. */
const WORKER_MAX_SLEEP_MS = 50;

/* Shared state of a `WorkerTicker`: three Int32 cells, then (at byte 16) one Float64. */
const STOP = 0; // 1: the owner stopped it
const IN_FLIGHT = 1; // 1: a tick message was posted and the main thread has not run it yet
const POSTED = 2; // tick messages posted so far

/**
 * The ticker thread: sleeps until the next wanted tick (the main thread's hint, no sooner than
 * `everyMs` after the last one) and posts one message, unless the previous one is still in flight
 * (a busy main thread gets no queue of stale ticks: it takes every due send at its next tick
 * anyway). The main thread only writes shared memory, never wakes this thread (a futex wake per
 * tick cost ~30% more CPU). Every sleep is bounded and rechecks `STOP`. Plain CommonJS, run with
 * `eval`.
 */
const TICKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { sab, everyMs, maxSleepMs } = workerData;
const cells = new Int32Array(sab, 0, 3);
const next = new Float64Array(sab, 16, 1);
const mono = () => Number(process.hrtime.bigint()) / 1e6;
let last = -Infinity;
while (Atomics.load(cells, ${STOP}) === 0) {
  const now = mono();
  const due = Math.max(next[0], last + everyMs);
  if (due > now) {
    Atomics.wait(cells, ${STOP}, 0, Math.min(due - now, maxSleepMs));
    continue;
  }
  last = now;
  if (Atomics.compareExchange(cells, ${IN_FLIGHT}, 0, 1) === 0) {
    Atomics.add(cells, ${POSTED}, 1);
    parentPort.postMessage(0);
  }
}
`;

const monoNowMs = (): number => Number(process.hrtime.bigint()) / 1e6;

/**
 * A sub-millisecond ticker on a worker thread (see `workerTicks`). `exited` resolves with the
 * thread's exit code once it has ended after `stop()`.
 */
export class WorkerTicker {
  /** Ticks run so far (on the main thread). */
  ticks = 0;
  /** Tick messages the thread has posted so far (at most one more than `ticks` ever: none queue up). */
  get posted(): number {
    return Atomics.load(this.cells, POSTED);
  }
  readonly exited: Promise<number>;
  private readonly worker: Worker;
  private readonly cells: Int32Array;
  private readonly next: Float64Array;
  private stopped = false;

  /**
   * @param tick runs on the calling thread; returns ms until it has work again (or nothing: one period)
   * @param everyMs shortest time between two ticks, ms (>= 0.05)
   */
  constructor(
    private readonly tick: () => number | void,
    readonly everyMs: number,
  ) {
    if (!(everyMs >= 0.05 && everyMs <= 60_000)) throw badArgument('tick period', everyMs, 'must be 0.05..60,000 ms');
    const sab = new SharedArrayBuffer(24);
    this.cells = new Int32Array(sab, 0, 3);
    this.next = new Float64Array(sab, 16, 1);
    this.next[0] = monoNowMs();
    this.worker = new Worker(TICKER_SOURCE, { eval: true, workerData: { sab, everyMs, maxSleepMs: WORKER_MAX_SLEEP_MS } });
    this.worker.on('message', () => this.onMessage());
    this.worker.on('error', (err) => (this.failure = this.failure ?? err.message));
    this.exited = new Promise((resolve) => {
      this.worker.once('exit', (code) => {
        if (!this.stopped) this.fallBack(`ticker thread exited (${code})`);
        resolve(code);
      });
    });
  }

  /** Why the thread stopped ticking before `stop()` (then `setInterval` ticks instead), if it did. */
  failure: string | undefined;
  private fallback: ReturnType<typeof setInterval> | undefined;

  /** The thread is gone: keep ticking with `setInterval` (1 ms at best) so the owner still ends. */
  private fallBack(why: string): void {
    this.failure = this.failure ?? why;
    Atomics.store(this.cells, IN_FLIGHT, 0);
    this.fallback = setInterval(() => this.onMessage(), Math.max(1, this.everyMs));
  }

  private onMessage(): void {
    if (this.stopped) return;
    let wait: number | void = undefined;
    try {
      this.ticks++;
      wait = this.tick();
    } finally {
      // when the next tick is wanted (even if this one threw), then allow the next message
      const ms = typeof wait === 'number' && Number.isFinite(wait) ? Math.max(0, wait) : this.everyMs;
      this.next[0] = monoNowMs() + ms;
      Atomics.store(this.cells, IN_FLIGHT, 0);
    }
  }

  /** Stops ticking at once (no tick runs after this returns); the thread exits on its own. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.fallback) clearInterval(this.fallback);
    Atomics.store(this.cells, STOP, 1);
    Atomics.notify(this.cells, STOP);
  }
}

/**
 * Sub-millisecond ticks that leave the event loop free: a `WorkerTicker` (a worker thread sleeping
 * with `Atomics.wait`, waking this thread with `postMessage`). With a `tick` that says when its
 * next send is due, the thread sleeps until then (never less than `everyMs`), so a low rate costs
 * few wake-ups. Costs one message per tick on this thread (~5-10 µs).
 */
export const workerTicks: TickScheduler = (tick, everyMs) => {
  const t = new WorkerTicker(tick, everyMs);
  return () => t.stop();
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
    if (now >= opts.untilMs || opts.pacer.done) return stop();
    return opts.pacer.scheduledMs(opts.pacer.taken) - opts.clock(); // ms until the next send is due
  }, opts.tickMs ?? 0.5);
  if (stopped) cancel();
  return { stop, done };
}
