import { describe, expect, it } from 'vitest';
import { MAX_SEARCH, baseSubject, instrumentFromRow, pickerFilters } from './instrument-search.js';

describe('pickerFilters', () => {
  it('lists FX pairs for blank text', () => {
    expect(pickerFilters('  ')).toEqual({ fx: '', products: undefined });
  });
  it('searches pairs with and without the slash', () => {
    expect(pickerFilters('eurus').fx).toBe('pair icontains "eurus" or pair icontains "eur/us"');
    expect(pickerFilters('EUR/').fx).toBe('pair icontains "EUR/"');
    expect(pickerFilters('eu').fx).toBe('pair icontains "eu"');
  });
  it('searches products by code prefix and description', () => {
    expect(pickerFilters(' gb00 ').products).toBe('code startsWith "GB00" or description icontains "gb00"');
  });
  it('quotes what the trader typed and caps its length', () => {
    expect(pickerFilters('a"b\\c').products).toBe('code startsWith "A\\"B\\\\C" or description icontains "a\\"b\\\\c"');
    const long = pickerFilters('x'.repeat(500)).products!;
    expect(long).toContain(`"${'x'.repeat(MAX_SEARCH)}"`);
    expect(long).not.toContain('x'.repeat(MAX_SEARCH + 1));
  });
});

describe('instrumentFromRow', () => {
  it('names the base subject, never the tier subject', () => {
    expect(baseSubject('/PRODUCT/X@T2')).toBe('/PRODUCT/X');
    expect(baseSubject('/FX/EURUSD')).toBe('/FX/EURUSD');
    expect(instrumentFromRow({ subject: '/PRODUCT/GB1@T2', fields: { code: 'GB1', description: 'Acme 4% 2031' } }, 'product')).toEqual({
      subject: '/PRODUCT/GB1', label: 'GB1', description: 'Acme 4% 2031',
    });
  });
  it('labels FX pairs, with or without a pair field', () => {
    expect(instrumentFromRow({ subject: '/FX/EURUSD', fields: { pair: 'EUR/USD' } }, 'fx').label).toBe('EUR/USD');
    expect(instrumentFromRow({ subject: '/FX/GBPUSD', fields: {} }, 'fx')).toEqual({ subject: '/FX/GBPUSD', label: 'GBP/USD', description: 'FX spot' });
    expect(instrumentFromRow({ subject: '/PRODUCT/Z', fields: {} }, 'product')).toMatchObject({ label: 'Z', description: '' });
  });
});
