import { describe, expect, it } from 'vitest';
import { fixStoreText } from './fix-store.js';

describe('fixStoreText', () => {
  it('says ok while the store works', () => {
    expect(fixStoreText({ unstoredMessages: 0 })).toBe('ok');
  });

  it('names the error, since when and what waits for the store', () => {
    const s = { storeError: 'No space left on device (os error 28)', storeFailedSinceMs: Date.UTC(2026, 10, 29, 8, 30, 5), unstoredMessages: 2 };
    expect(fixStoreText(s)).toBe('failed since 2026-11-29T08:30:05.000Z: No space left on device (os error 28) (2 messages waiting)');
    expect(fixStoreText({ ...s, unstoredMessages: 0 })).toBe('failed since 2026-11-29T08:30:05.000Z: No space left on device (os error 28)');
  });
});
