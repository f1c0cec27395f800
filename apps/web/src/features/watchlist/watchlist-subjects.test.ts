import { describe, expect, it } from 'vitest';
import type { StorageLike } from '../../connection/session-token.js';
import {
  DEFAULT_WATCHLIST,
  MAX_WATCHLIST_SUBJECTS,
  loadWatchlist,
  parseSubjectInput,
  parseWatchlist,
  watchlistKey,
} from './watchlist-subjects.js';

function memoryStorage(): StorageLike & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return { data, getItem: (k) => data.get(k) ?? null, setItem: (k, v) => void data.set(k, v), removeItem: (k) => void data.delete(k) };
}

describe('parseSubjectInput', () => {
  it('accepts full subjects, pairs and ISINs', () => {
    expect(parseSubjectInput(' /PRODUCT/XS0123456789 ', [])).toEqual({ ok: true, subject: '/PRODUCT/XS0123456789' });
    expect(parseSubjectInput('eurusd', [])).toEqual({ ok: true, subject: '/FX/EURUSD' });
    expect(parseSubjectInput('EUR/JPY', [])).toEqual({ ok: true, subject: '/FX/EURJPY' });
    expect(parseSubjectInput('xs0123456789', [])).toEqual({ ok: true, subject: '/PRODUCT/XS0123456789' });
  });
  it('rejects empty, malformed, duplicate and overflowing input with a message', () => {
    expect(parseSubjectInput('  ', [])).toMatchObject({ ok: false });
    expect(parseSubjectInput('hello world', [])).toMatchObject({ ok: false, message: expect.stringContaining('not a subject') });
    expect(parseSubjectInput('/FX/EUR USD', [])).toMatchObject({ ok: false, message: expect.stringContaining("segments") });
    expect(parseSubjectInput('/FX//X', [])).toMatchObject({ ok: false });
    expect(parseSubjectInput(`/${'A'.repeat(300)}`, [])).toMatchObject({ ok: false, message: expect.stringContaining('256 bytes') });
    expect(parseSubjectInput('EURUSD', ['/FX/EURUSD'])).toMatchObject({ ok: false, message: '/FX/EURUSD is already in the watchlist' });
    const full = Array.from({ length: MAX_WATCHLIST_SUBJECTS }, (_, i) => `/X/${i}`);
    expect(parseSubjectInput('/Y/1', full)).toMatchObject({ ok: false, message: expect.stringContaining('at most') });
  });
});

describe('watchlist storage', () => {
  it("defaults, or reads an earlier version's copy per user", () => {
    const storage = memoryStorage();
    expect(loadWatchlist(storage, 'alice')).toEqual(DEFAULT_WATCHLIST);
    storage.setItem(watchlistKey('alice'), JSON.stringify(['/FX/EURUSD', '/PRODUCT/A1']));
    expect(loadWatchlist(storage, 'alice')).toEqual(['/FX/EURUSD', '/PRODUCT/A1']);
    expect(loadWatchlist(storage, 'bob')).toEqual(DEFAULT_WATCHLIST);
  });
  it('parses the stored preference; missing or unreadable is undefined', () => {
    expect(parseWatchlist('["/FX/EURUSD","/FX/EURUSD","x"]')).toEqual(['/FX/EURUSD']);
    expect(parseWatchlist('[]')).toEqual([]);
    expect(parseWatchlist(undefined)).toBeUndefined();
    expect(parseWatchlist('{')).toBeUndefined();
  });
  it('cleans up corrupt entries', () => {
    const storage = memoryStorage();
    storage.setItem(watchlistKey('alice'), '[1, "/FX/A", "/FX/A", "bad", null]');
    expect(loadWatchlist(storage, 'alice')).toEqual(['/FX/A']);
    storage.setItem(watchlistKey('alice'), '{"x":1}');
    expect(loadWatchlist(storage, 'alice')).toEqual(DEFAULT_WATCHLIST);
    storage.setItem(watchlistKey('alice'), 'not json');
    expect(loadWatchlist(storage, 'alice')).toEqual(DEFAULT_WATCHLIST);
    expect(loadWatchlist(undefined, 'alice')).toEqual(DEFAULT_WATCHLIST);
  });
});
