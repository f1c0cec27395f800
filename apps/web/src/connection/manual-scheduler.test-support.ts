/**
 * A frame scheduler the connection tests advance by hand (frame-batcher, record-store,
 * connection): `request` queues a callback, `frame()` runs what was queued, as one animation
 * frame would.
 */

import type { FrameScheduler } from './frame-batcher.js';

/** The scheduler; `pendingCount()` is how many callbacks wait for the next `frame()`. */
export function manualScheduler(): FrameScheduler & { frame(): void; pendingCount(): number } {
  let next = 1;
  const queued = new Map<number, () => void>();
  return {
    request(callback) {
      const handle = next++;
      queued.set(handle, callback);
      return handle;
    },
    cancel(handle) {
      queued.delete(handle);
    },
    frame() {
      const callbacks = [...queued.values()];
      queued.clear();
      for (const callback of callbacks) callback();
    },
    pendingCount: () => queued.size,
  };
}
