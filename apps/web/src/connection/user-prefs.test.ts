import type { Prefs, PrefsPatch } from '@tidewire/protocol';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { StorageLike } from './session-token.js';
import { SAVE_DELAY_MS, UserPrefs, localPrefsKey, type PrefsPort } from './user-prefs.js';

/** A port whose answers the test gives: the server's copy and every patch it was sent. */
class FakePort implements PrefsPort {
  stored: Prefs = {};
  sent: PrefsPatch[] = [];
  refuseGet: { code: string; message: string } | undefined;
  refuseSet: { code: string; message: string } | undefined;
  getPrefs() {
    return this.refuseGet ? Promise.reject(this.refuseGet) : Promise.resolve({ prefs: { ...this.stored }, version: 1 });
  }
  setPrefs(patch: PrefsPatch) {
    this.sent.push(patch);
    if (this.refuseSet) return Promise.reject(this.refuseSet);
    for (const [k, v] of Object.entries(patch)) {
      if (v === null) delete this.stored[k];
      else this.stored[k] = v;
    }
    return Promise.resolve({ version: this.sent.length + 1, bytes: 0 });
  }
}

function memoryStorage(): StorageLike & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return { data, getItem: (k) => data.get(k) ?? null, setItem: (k, v) => void data.set(k, v), removeItem: (k) => void data.delete(k) };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('UserPrefs', () => {
  it("loads the server's copy, saves changed keys once after a quiet time, and mirrors them locally", async () => {
    const port = new FakePort();
    port.stored = { watchlist: '["/FX/EURUSD"]' };
    const storage = memoryStorage();
    const prefs = new UserPrefs(port, storage, 'alice');
    await prefs.load();
    expect(prefs.getSnapshot()).toMatchObject({ status: 'server', values: { watchlist: '["/FX/EURUSD"]' } });
    prefs.put('workspace', '{"sizes":[1]}');
    prefs.put('workspace', '{"sizes":[2]}');
    expect(prefs.getSnapshot().status).toBe('saving');
    expect(port.sent).toEqual([]);
    await vi.advanceTimersByTimeAsync(SAVE_DELAY_MS);
    expect(port.sent).toEqual([{ workspace: '{"sizes":[2]}' }]);
    expect(prefs.getSnapshot().status).toBe('server');
    expect(JSON.parse(storage.data.get(localPrefsKey('alice'))!)).toEqual({ watchlist: '["/FX/EURUSD"]', workspace: '{"sizes":[2]}' });
  });

  it('keeps a change made before the load and saves it', async () => {
    const port = new FakePort();
    port.stored = { watchlist: 'old', zoom: '1' };
    const prefs = new UserPrefs(port, undefined, 'alice');
    const loading = prefs.load();
    prefs.put('watchlist', 'new');
    await loading;
    expect(prefs.getSnapshot().values).toEqual({ watchlist: 'new', zoom: '1' });
    await vi.advanceTimersByTimeAsync(SAVE_DELAY_MS);
    expect(port.sent).toEqual([{ watchlist: 'new' }]);
  });

  it('uses the local copy when the server keeps none, and sends nothing', async () => {
    const port = new FakePort();
    port.refuseGet = { code: 'UNAVAILABLE', message: 'this server keeps no preferences' };
    const storage = memoryStorage();
    storage.setItem(localPrefsKey('bob'), JSON.stringify({ workspace: 'w' }));
    const prefs = new UserPrefs(port, storage, 'bob');
    await prefs.load();
    expect(prefs.getSnapshot()).toMatchObject({ status: 'local', values: { workspace: 'w' }, error: 'UNAVAILABLE: this server keeps no preferences' });
    prefs.put('workspace', 'v');
    await vi.advanceTimersByTimeAsync(SAVE_DELAY_MS * 2);
    expect(port.sent).toEqual([]);
    expect(JSON.parse(storage.data.get(localPrefsKey('bob'))!)).toEqual({ workspace: 'v' });
  });

  it('shows a refused save and sends the key again with the next change', async () => {
    const port = new FakePort();
    const prefs = new UserPrefs(port, undefined, 'alice');
    await prefs.load();
    port.refuseSet = { code: 'LIMIT_EXCEEDED', message: 'too big' };
    prefs.put('a', '1');
    await vi.advanceTimersByTimeAsync(SAVE_DELAY_MS);
    expect(prefs.getSnapshot()).toMatchObject({ status: 'error', error: 'LIMIT_EXCEEDED: too big' });
    port.refuseSet = undefined;
    prefs.put('b', '2');
    await vi.advanceTimersByTimeAsync(SAVE_DELAY_MS);
    expect(port.sent.at(-1)).toEqual({ a: '1', b: '2' });
    expect(prefs.getSnapshot().status).toBe('server');
  });
});
