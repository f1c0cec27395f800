import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FilePrefsStore, prefsFileName } from './prefs-store.js';

const dirs: string[] = [];
const fresh = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'tidewire-prefs-unit-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('FilePrefsStore', () => {
  it('names plain users by name and others by their UTF-8 in hex', () => {
    expect(prefsFileName('alice')).toBe('alice.json');
    expect(prefsFileName('../x')).toBe(`~${Buffer.from('../x').toString('hex')}.json`);
    expect(prefsFileName('zoë')).toBe(`~${Buffer.from('zoë').toString('hex')}.json`);
  });

  it('applies saves of one user in call order, each seeing the last', async () => {
    const store = new FilePrefsStore(fresh());
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => store.setPrefs('alice', { [`k${i}`]: String(i), last: String(i) })));
    expect(results.map((r) => r.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const stored = await store.getPrefs('alice');
    expect(stored.version).toBe(10);
    expect(stored.prefs.last).toBe('9');
    expect(Object.keys(stored.prefs)).toHaveLength(11);
  });

  it('refuses a damaged file with UNAVAILABLE and leaves it as it is', async () => {
    const dir = fresh();
    writeFileSync(path.join(dir, 'alice.json'), '{"version":1,"prefs":');
    const store = new FilePrefsStore(dir);
    await expect(store.getPrefs('alice')).rejects.toMatchObject({ code: 'UNAVAILABLE', message: expect.stringContaining('damaged') });
    await expect(store.setPrefs('alice', { a: 'b' })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(readFileSync(path.join(dir, 'alice.json'), 'utf8')).toBe('{"version":1,"prefs":');
    expect(readdirSync(dir)).toEqual(['alice.json']);
  });

  it('refuses more than MAX_PREFS_KEYS keys in total', async () => {
    const store = new FilePrefsStore(fresh());
    await store.setPrefs('bob', Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`k${i}`, 'v'])));
    await expect(store.setPrefs('bob', { extra: 'v' })).rejects.toMatchObject({ code: 'LIMIT_EXCEEDED' });
    expect((await store.setPrefs('bob', { k0: null, extra: 'v' })).version).toBe(2);
  });
});
