import { describe, expect, it } from 'vitest';
import { SESSION_STORAGE_KEY, clearStoredSession, readStoredSession, writeStoredSession, type StorageLike } from './session-token.js';

/** An in-memory Storage. */
function memoryStorage(): StorageLike & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return {
    data,
    getItem: (key) => data.get(key) ?? null,
    setItem: (key, value) => void data.set(key, value),
    removeItem: (key) => void data.delete(key),
  };
}

describe('stored session', () => {
  it('round-trips a valid session', () => {
    const storage = memoryStorage();
    writeStoredSession(storage, { user: 'alice', token: 't.sig', expiresAt: 100_000 });
    expect(readStoredSession(storage, 1_000)).toEqual({ user: 'alice', token: 't.sig', expiresAt: 100_000 });
    clearStoredSession(storage);
    expect(readStoredSession(storage, 1_000)).toBeUndefined();
  });

  it('drops expired or nearly expired tokens', () => {
    const storage = memoryStorage();
    writeStoredSession(storage, { user: 'alice', token: 't', expiresAt: 10_000 });
    expect(readStoredSession(storage, 6_000)).toBeUndefined();
    expect(storage.data.has(SESSION_STORAGE_KEY)).toBe(false);
  });

  it('drops malformed entries instead of throwing', () => {
    const storage = memoryStorage();
    storage.setItem(SESSION_STORAGE_KEY, '{not json');
    expect(readStoredSession(storage, 0)).toBeUndefined();
    storage.setItem(SESSION_STORAGE_KEY, JSON.stringify({ user: 'alice', token: '', expiresAt: 1e15 }));
    expect(readStoredSession(storage, 0)).toBeUndefined();
    expect(storage.data.size).toBe(0);
  });

  it('survives a storage that throws', () => {
    const broken: StorageLike = {
      getItem: () => {
        throw new Error('denied');
      },
      setItem: () => {
        throw new Error('quota');
      },
      removeItem: () => {
        throw new Error('denied');
      },
    };
    expect(readStoredSession(broken, 0)).toBeUndefined();
    expect(() => writeStoredSession(broken, { user: 'a', token: 't', expiresAt: 1 })).not.toThrow();
    expect(() => clearStoredSession(broken)).not.toThrow();
    expect(readStoredSession(undefined, 0)).toBeUndefined();
  });
});
