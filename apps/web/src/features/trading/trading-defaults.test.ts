import { describe, expect, it } from 'vitest';
import { defaultsFor, instrumentKind, needsConfirm, notionalOf } from './trading-defaults.js';

describe('trading defaults', () => {
  it('sizes FX in millions of base currency and products in units', () => {
    expect(instrumentKind('/FX/EURUSD')).toBe('fx');
    expect(instrumentKind('/PRODUCT/XS1', { assetClass: 'Equity' })).toBe('equity');
    expect(instrumentKind('/PRODUCT/XS2', { assetClass: 'Bond' })).toBe('bond');
    expect(instrumentKind('/PRODUCT/XS3')).toBe('other');
    expect(defaultsFor('/FX/EURUSD').quantity).toBe(1_000_000);
    expect(defaultsFor('/PRODUCT/XS1', { assetClass: 'Equity' }).quantity).toBe(100);
  });

  it('asks for a confirm above the notional of the kind (FX: the base amount)', () => {
    expect(needsConfirm('/FX/USDJPY', 10_000_000, 150)).toBe(false); // 10m USD: the amount, not 1.5bn JPY
    expect(needsConfirm('/FX/USDJPY', 10_000_001, 150)).toBe(true);
    expect(needsConfirm('/PRODUCT/XS1', 100, 43, { assetClass: 'Equity' })).toBe(false);
    expect(needsConfirm('/PRODUCT/XS1', 30_000, 43, { assetClass: 'Equity' })).toBe(true); // 1.29m
    expect(needsConfirm('/PRODUCT/XS1', Number.NaN, 43)).toBe(false);
    expect(notionalOf(3, 2.5)).toBe(7.5);
    expect(notionalOf(3, Number.POSITIVE_INFINITY)).toBeNaN();
  });
});
