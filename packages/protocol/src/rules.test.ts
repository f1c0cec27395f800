import { describe, expect, it } from 'vitest';
import { show, utf8Bytes } from './rules.js';

describe('utf8Bytes', () => {
  it('agrees with TextEncoder, including surrogate pairs and lone surrogates', () => {
    const enc = new TextEncoder();
    for (const s of ['', 'abc', 'é', '€', '😀', 'a😀b€é', '\ud83d', '\ude00x', '\ud83d\ud83d']) {
      expect(utf8Bytes(s)).toBe(enc.encode(s).length);
    }
  });
});

describe('show', () => {
  it('quotes strings, prints numbers as JavaScript does and cuts long values', () => {
    expect(show('EURUSD')).toBe('"EURUSD"');
    expect(show(Infinity)).toBe('Infinity');
    expect(show(undefined)).toBe('missing');
    expect(show('x'.repeat(100))).toHaveLength(41);
  });
});
