/**
 * The logged-in user's preferences (workspace layout, watchlist): loaded from the server once per
 * login (`prefs.get`), changed per key and saved back (`prefs.set`, only the keys that changed,
 * a short quiet time after the last change), so another browser of the same user restores them.
 * A copy stays in localStorage: it serves when the server keeps no preferences (UNAVAILABLE) and
 * keeps changes made while disconnected until they reach the server. Pure apart from the port and
 * storage it is given: tested in user-prefs.test.ts.
 */

import type { Prefs, PrefsPatch } from '@tidewire/protocol';
import type { StorageLike } from './session-token.js';

/** What UserPrefs needs of the connection (the client SDK's getPrefs / setPrefs). */
export interface PrefsPort {
  getPrefs(): Promise<{ prefs: Prefs; version: number }>;
  setPrefs(patch: PrefsPatch): Promise<{ version: number; bytes: number }>;
}

/**
 * `loading` until the server answered; `server`: kept on the server (`saving` while a save is in
 * flight or queued); `local`: this browser only (the server keeps none, or could not be read);
 * `error`: the last save was refused or failed (`error` says why; the next change tries again).
 */
export type PrefsStatus = 'loading' | 'server' | 'saving' | 'local' | 'error';

/** What components read. Immutable: a new object on every change. */
export interface PrefsSnapshot {
  readonly status: PrefsStatus;
  readonly values: Readonly<Prefs>;
  /** Why the last save or load failed (code: message); undefined when it did not. */
  readonly error: string | undefined;
}

/** Quiet time after the last change before it is sent, ms: a splitter drag saves once. */
export const SAVE_DELAY_MS = 400;

/** localStorage key of a user's copy. */
export function localPrefsKey(user: string): string {
  return `tidewire.prefs.${user}`;
}

function readLocal(storage: StorageLike | undefined, user: string): Prefs {
  try {
    const parsed = JSON.parse(storage?.getItem(localPrefsKey(user)) ?? '{}') as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
    return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return {};
  }
}

function describe(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return `${typeof code === 'string' ? code : 'ERROR'}: ${typeof message === 'string' ? message : String(error)}`;
}

/** One user's preferences for one login. */
export class UserPrefs {
  private snapshot: PrefsSnapshot = Object.freeze({ status: 'loading', values: Object.freeze({}), error: undefined });
  private readonly listeners = new Set<() => void>();
  /** Keys changed and not yet acknowledged by the server. */
  private pending = new Map<string, string | null>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inFlight = false;
  private disposed = false;

  constructor(
    private readonly port: PrefsPort,
    private readonly storage: StorageLike | undefined,
    private readonly user: string,
  ) {}

  /** Current snapshot (for useSyncExternalStore). */
  readonly getSnapshot = (): PrefsSnapshot => this.snapshot;

  /** Calls `listener` after every change; returns the unsubscribe function. */
  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /**
   * Reads the server's copy. Keys changed meanwhile keep their new values (and are saved); when
   * the server keeps none, the local copy serves (`local`).
   */
  async load(): Promise<void> {
    try {
      const { prefs } = await this.port.getPrefs();
      if (this.disposed) return;
      const values: Prefs = { ...prefs };
      for (const [key, value] of this.pending) {
        if (value === null) delete values[key];
        else values[key] = value;
      }
      this.set({ status: this.pending.size > 0 ? 'saving' : 'server', values, error: undefined });
      this.writeLocal();
      if (this.pending.size > 0) this.schedule();
    } catch (error) {
      if (this.disposed) return;
      this.pending.clear();
      this.set({ status: 'local', values: { ...readLocal(this.storage, this.user), ...this.snapshot.values }, error: describe(error) });
    }
  }

  /** Sets (or with null deletes) one key: at once here and in localStorage, on the server shortly. */
  put(key: string, value: string | null): void {
    if (this.disposed || (this.snapshot.values[key] ?? null) === value) return;
    const values: Prefs = { ...this.snapshot.values };
    if (value === null) delete values[key];
    else values[key] = value;
    const local = this.snapshot.status === 'local';
    if (!local) this.pending.set(key, value);
    this.set({ ...this.snapshot, values, status: local || this.snapshot.status === 'loading' ? this.snapshot.status : 'saving' });
    this.writeLocal();
    if (!local && this.snapshot.status !== 'loading') this.schedule();
  }

  /** Sends what is pending now (after a reconnect); nothing when nothing is. */
  flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    void this.save();
  }

  /** Stops saving and notifying (logout). */
  dispose(): void {
    this.disposed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.listeners.clear();
  }

  private schedule(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.save();
    }, SAVE_DELAY_MS);
  }

  private async save(): Promise<void> {
    if (this.disposed || this.inFlight || this.pending.size === 0 || this.snapshot.status === 'loading' || this.snapshot.status === 'local') return;
    const patch: PrefsPatch = Object.fromEntries(this.pending);
    const sent = new Map(this.pending);
    this.inFlight = true;
    try {
      await this.port.setPrefs(patch);
      // keys changed again while this save was in flight stay pending
      for (const [key, value] of sent) if (this.pending.get(key) === value) this.pending.delete(key);
      if (!this.disposed) this.set({ ...this.snapshot, status: this.pending.size > 0 ? 'saving' : 'server', error: undefined });
    } catch (error) {
      if (!this.disposed) this.set({ ...this.snapshot, status: 'error', error: describe(error) });
    } finally {
      this.inFlight = false;
    }
    if (!this.disposed && this.pending.size > 0 && this.snapshot.status === 'saving') this.schedule();
  }

  private writeLocal(): void {
    try {
      this.storage?.setItem(localPrefsKey(this.user), JSON.stringify(this.snapshot.values));
    } catch {
      // a full or refusing storage: the server copy (or this page) still has them
    }
  }

  private set(next: PrefsSnapshot): void {
    this.snapshot = Object.freeze({ ...next, values: Object.freeze({ ...next.values }) });
    for (const listener of this.listeners) listener();
  }
}
