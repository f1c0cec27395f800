import { describe, expect, it } from 'vitest';
import { decodeClientMessage, encodeClientMessage, isDecodeFailure, MAX_PREFS_BYTES, MAX_PREFS_KEYS, prefsBytes } from './index.js';

const frame = (prefs: unknown) => JSON.stringify({ type: 'prefs.set', reqId: 1, prefs });

describe('prefs codec', () => {
  it('decodes a patch with strings and nulls and encodes it with keys sorted', () => {
    const m = decodeClientMessage(frame({ zoom: null, layout: '{"a":1}' }));
    expect(isDecodeFailure(m)).toBe(false);
    expect(encodeClientMessage(m as never)).toBe('{"type":"prefs.set","reqId":1,"prefs":{"layout":"{\\"a\\":1}","zoom":null}}');
  });

  it('names the key and the rule of a refused patch', () => {
    const cases: Array<[unknown, string]> = [
      [[], 'prefs'],
      [{}, 'prefs'],
      [{ 'a/b': 'x' }, 'prefs.a/b'],
      [{ ['k'.repeat(65)]: 'x' }, `prefs.${'k'.repeat(65)}`],
      [{ list: ['x'] }, 'prefs.list'],
      [Object.fromEntries(Array.from({ length: MAX_PREFS_KEYS + 1 }, (_, i) => [`k${i}`, ''])), 'prefs'],
      [{ big: 'é'.repeat(MAX_PREFS_BYTES / 2) }, 'prefs'],
    ];
    for (const [prefs, field] of cases) {
      const m = decodeClientMessage(frame(prefs));
      expect(isDecodeFailure(m), JSON.stringify(prefs).slice(0, 60)).toBe(true);
      if (isDecodeFailure(m)) expect(m.error).toMatchObject({ code: 'BAD_REQUEST', field, reqId: 1 });
    }
  });

  it('counts UTF-8 bytes of keys and values, keys only for deletions', () => {
    expect(prefsBytes({ ab: 'é', c: null })).toBe(2 + 2 + 1);
  });
});
