/**
 * Connections refused at open for breaking limits (the reconnect throttle, 4029) are held open,
 * unread, until the address's penalty has run out (at most `maxHoldMs`), then closed with the
 * refusal. A client that reconnects as soon as it is closed (slowloris and flood loops do, 10-20
 * ms later) would otherwise make the server accept, upgrade and close connections as fast as it
 * can open them: a refused reconnect then costs one accept per penalty period instead of
 * dozens. Bounded: past `maxHeld` held connections (per transport worker) the next refusals
 * close at once, as before.
 */

/** Longest a refused connection is held before its close, ms. */
export const REFUSAL_HOLD_MAX_MS = 1000;

/** Refused connections held at once per transport worker; past it refusals close at once. */
export const REFUSAL_HOLD_MAX = 1024;

/** Holds refused connections until their close is due. */
export class RefusalHold {
  private readonly held = new Map<object, { timer: ReturnType<typeof setTimeout>; close: () => void }>();

  /** `maxHeld` connections at most, each for at most `maxHoldMs` (0: close every refusal at once). */
  constructor(readonly maxHeld = REFUSAL_HOLD_MAX, readonly maxHoldMs = REFUSAL_HOLD_MAX_MS) {}

  /**
   * Runs `close` after `ms` (capped at `maxHoldMs`), or now when `ms` <= 0, holding is off or
   * `maxHeld` connections are held already. `key` names the connection for `release`. Returns
   * true when the connection is held.
   */
  refuse(key: object, ms: number, close: () => void): boolean {
    if (ms <= 0 || this.maxHoldMs <= 0 || this.held.size >= this.maxHeld || this.held.has(key)) {
      close();
      return false;
    }
    const timer = setTimeout(() => {
      this.held.delete(key);
      close();
    }, Math.min(ms, this.maxHoldMs));
    this.held.set(key, { timer, close });
    return true;
  }

  /** The held connection went away (the peer closed it): its close is not run. */
  release(key: object): void {
    const entry = this.held.get(key);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    this.held.delete(key);
  }

  /** Runs every held close now (shutdown). */
  flush(): void {
    const entries = [...this.held.values()];
    this.held.clear();
    for (const { timer, close } of entries) {
      clearTimeout(timer);
      close();
    }
  }

  /** Connections held now. */
  get size(): number {
    return this.held.size;
  }
}
