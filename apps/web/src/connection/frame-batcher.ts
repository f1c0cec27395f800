/**
 * Coalesces many "this key changed" marks into one flush per animation frame, so a burst of ticks
 * costs one React render pass rather than one per tick. Pure and scheduler-injected: unit-tested
 * with a manual scheduler in frame-batcher.test.ts.
 */

/** Schedules a callback before the next paint (requestAnimationFrame in browsers). */
export interface FrameScheduler {
  /** Runs `callback` once, before the next frame; returns a handle for `cancel`. */
  request(callback: () => void): number;
  /** Cancels a pending callback; unknown handles are ignored. */
  cancel(handle: number): void;
}

/**
 * The browser's requestAnimationFrame, or a ~16 ms timer where there is none (Node, tests, or a
 * hidden tab's throttled rAF is still used: the browser decides).
 */
export function defaultFrameScheduler(): FrameScheduler {
  if (typeof globalThis.requestAnimationFrame === 'function') {
    return {
      request: (callback) => globalThis.requestAnimationFrame(() => callback()),
      cancel: (handle) => globalThis.cancelAnimationFrame(handle),
    };
  }
  return {
    request: (callback) => setTimeout(callback, 16) as unknown as number,
    cancel: (handle) => clearTimeout(handle),
  };
}

/**
 * Collects keys marked between two frames and hands them to `flush` once per frame, in the order
 * they were first marked. Marks made during `flush` go to the next frame. The set is bounded by
 * the number of distinct keys.
 */
export class FrameBatcher<K> {
  private pending = new Set<K>();
  private handle: number | undefined;
  private disposed = false;

  /**
   * @param flush called with the keys marked since the previous flush (never empty)
   * @param scheduler when to flush; default requestAnimationFrame
   */
  constructor(
    private readonly flush: (keys: ReadonlySet<K>) => void,
    private readonly scheduler: FrameScheduler = defaultFrameScheduler(),
  ) {}

  /** Marks `key` as changed; schedules a flush if none is pending. No-op after dispose(). */
  mark(key: K): void {
    if (this.disposed) return;
    this.pending.add(key);
    if (this.handle === undefined) this.handle = this.scheduler.request(() => this.run());
  }

  /** Number of keys waiting for the next flush. */
  get size(): number {
    return this.pending.size;
  }

  /** Flushes now (e.g. before tearing down) instead of waiting for the frame. */
  flushNow(): void {
    if (this.handle !== undefined) this.scheduler.cancel(this.handle);
    this.run();
  }

  /** Drops pending keys and cancels the scheduled flush; later marks are ignored. */
  dispose(): void {
    this.disposed = true;
    if (this.handle !== undefined) this.scheduler.cancel(this.handle);
    this.handle = undefined;
    this.pending.clear();
  }

  private run(): void {
    this.handle = undefined;
    if (this.pending.size === 0) return;
    const keys = this.pending;
    this.pending = new Set();
    this.flush(keys);
  }
}
