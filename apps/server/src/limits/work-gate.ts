/**
 * A bounded gate for expensive work (password checks: scrypt, ~50 ms of CPU and 16 MiB each):
 * at most `inFlight` run at once, at most `maxQueued` wait; beyond that `run` refuses at once,
 * so a flood of logins can neither occupy every core nor queue without bound.
 */

/** Thrown by `run` when the queue is full. */
export class GateFullError extends Error {
  override readonly name = 'GateFullError';
}

/** The gate; one per transport thread. */
export class WorkGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  /** `inFlight` >= 1 concurrent tasks; `maxQueued` >= 0 tasks waiting for a slot. */
  constructor(readonly inFlight: number, readonly maxQueued: number) {}

  /** Runs `task` when a slot is free; rejects with GateFullError (without running it) when the queue is full. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.inFlight) {
      if (this.waiting.length >= this.maxQueued) throw new GateFullError(`${this.inFlight} running and ${this.maxQueued} waiting`);
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await task();
    } finally {
      // hand the slot to the next waiter directly (running stays counted), or free it
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  /** Tasks running now. */
  get active(): number {
    return this.running;
  }

  /** Tasks waiting now. */
  get queued(): number {
    return this.waiting.length;
  }
}
