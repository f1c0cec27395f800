import { describe, expect, it } from 'vitest';
import { FX_PAIRS, displayPair, fxSubject, pipDecimalsOf } from './fx-pairs.js';

describe('fx pairs', () => {
  it('lists about thirty distinct six-letter pairs', () => {
    expect(FX_PAIRS.length).toBeGreaterThanOrEqual(25);
    expect(new Set(FX_PAIRS).size).toBe(FX_PAIRS.length);
    for (const pair of FX_PAIRS) expect(pair).toMatch(/^[A-Z]{6}$/);
  });
  it('builds subjects and display names', () => {
    expect(fxSubject('EURUSD')).toBe('/FX/EURUSD');
    expect(displayPair('USDJPY')).toBe('USD/JPY');
    expect(displayPair('XAU')).toBe('XAU');
  });
  it('takes pip decimals from the decimals field, else the fallback', () => {
    expect(pipDecimalsOf(5, 2)).toBe(4);
    expect(pipDecimalsOf(3, 4)).toBe(2);
    expect(pipDecimalsOf(undefined, 2)).toBe(2);
    expect(pipDecimalsOf(1, 4)).toBe(4);
    expect(pipDecimalsOf(4.5, 4)).toBe(4);
    expect(pipDecimalsOf(12, 4)).toBe(4);
  });
});
