import { describe, expect, it } from 'vitest';
import {
  decimalPlaces,
  fillRatio,
  formatAveragePrice,
  formatLastFill,
  formatOrderPrice,
  formatQuantity,
  formatSide,
  formatTimeInForce,
  instrumentLabel,
  isOpenOrder,
  priceDecimalsOf,
  statusClass,
  statusLabel,
  statusTone,
  toBlotterRow,
} from './blotter-row.js';

const trade = (fields: Record<string, unknown>, index = 0) => ({ id: 7, subject: '/TRADE/alice/42', index, fields });

const LIMIT = {
  orderId: 42, clientOrderId: 'c-1', instrument: '/FX/EURUSD', side: 'buy', quantity: 1_000_000, price: 1.0852, orderType: 'limit',
  timeInForce: 'day', status: 'partiallyFilled', statusCode: 3, filledQuantity: 250_000, averagePrice: 1.08515, lastFillQuantity: 250_000,
  lastFillPrice: 1.08515, reason: '', created: 1_700_000_000_000, updated: 1_700_000_001_000, version: 3, seq: 117,
};

describe('toBlotterRow', () => {
  it('maps every contract field', () => {
    const row = toBlotterRow(trade(LIMIT, 4));
    expect(row).toMatchObject({
      rowId: 7, subject: '/TRADE/alice/42', rank: 4, orderId: 42, clientOrderId: 'c-1', instrument: '/FX/EURUSD', instrumentLabel: 'EUR/USD',
      side: 'buy', quantity: 1_000_000, orderType: 'limit', price: 1.0852, timeInForce: 'day', status: 'partiallyFilled', statusCode: 3,
      filledQuantity: 250_000, averagePrice: 1.08515, lastFillQuantity: 250_000, lastFillPrice: 1.08515, reason: '', created: 1_700_000_000_000,
      updated: 1_700_000_001_000, seq: 117, decimals: 5,
    });
  });
  it('treats a market order (price 0 or absent) as MKT', () => {
    const market = toBlotterRow(trade({ ...LIMIT, price: 0, orderType: 'market', lastFillPrice: undefined }));
    expect(market.orderType).toBe('market');
    expect(market.price).toBeUndefined();
    expect(formatOrderPrice(market)).toBe('MKT');
    const noType = toBlotterRow(trade({ ...LIMIT, orderType: undefined, price: undefined }));
    expect(noType.orderType).toBe('');
    expect(toBlotterRow(trade({ ...LIMIT, orderType: undefined, price: 0 })).orderType).toBe('market');
    expect(toBlotterRow(trade({ ...LIMIT, orderType: undefined, price: 2.5 })).orderType).toBe('limit');
  });
  it('shows empty cells for missing or mistyped fields, never throws', () => {
    const row = toBlotterRow(trade({ side: 'short', quantity: 'lots', statusCode: Number.NaN, price: Infinity, created: null }));
    expect(row).toMatchObject({ side: '', quantity: undefined, statusCode: undefined, price: undefined, created: undefined, status: '', reason: '', clientOrderId: '' });
    expect(formatOrderPrice(row)).toBe('');
    expect(formatLastFill(row)).toBe('');
    expect(formatAveragePrice(row)).toBe('');
    expect(toBlotterRow(trade({})).decimals).toBe(2);
  });
});

describe('status', () => {
  it('labels and colours each contract status', () => {
    const cases: [string, number, string, string][] = [
      ['new', 1, 'New', 'working'],
      ['acknowledged', 2, 'Working', 'working'],
      ['partiallyFilled', 3, 'Partially filled', 'partial'],
      ['filled', 10, 'Filled', 'filled'],
      ['cancelled', 11, 'Cancelled', 'cancelled'],
      ['rejected', 12, 'Rejected', 'rejected'],
    ];
    for (const [status, code, label, tone] of cases) {
      expect(statusLabel(status)).toBe(label);
      expect(statusTone(status)).toBe(tone);
      // a record carrying only the code reads the same
      expect(statusLabel('', code)).toBe(label);
      expect(statusTone('', code)).toBe(tone);
      expect(statusClass(status)).toBe(`order-status order-status-${tone}`);
    }
  });
  it('shows an unknown status as sent, in the neutral colour', () => {
    expect(statusLabel('suspended')).toBe('suspended');
    expect(statusTone('suspended', 99)).toBe('unknown');
    expect(statusTone('toString')).toBe('unknown');
  });
  it('says which orders are open (statusCode < 10, else the status text)', () => {
    expect(isOpenOrder({ status: 'filled', statusCode: 3 })).toBe(true);
    expect(isOpenOrder({ status: 'acknowledged', statusCode: 10 })).toBe(false);
    expect(isOpenOrder({ status: 'acknowledged', statusCode: undefined })).toBe(true);
    expect(isOpenOrder({ status: 'partiallyFilled', statusCode: undefined })).toBe(true);
    expect(isOpenOrder({ status: 'cancelled', statusCode: undefined })).toBe(false);
    expect(isOpenOrder({ status: 'weird', statusCode: undefined })).toBe(false);
  });
});

describe('formatting', () => {
  it('names instruments', () => {
    expect(instrumentLabel('/FX/EURUSD')).toBe('EUR/USD');
    expect(instrumentLabel('/PRODUCT/GB00B03MLX29')).toBe('GB00B03MLX29');
    expect(instrumentLabel('/OTHER/X')).toBe('/OTHER/X');
    expect(instrumentLabel('')).toBe('');
  });
  it('counts decimals without float noise', () => {
    expect(decimalPlaces(1.0852)).toBe(4);
    expect(decimalPlaces(0.1 + 0.2)).toBe(1);
    expect(decimalPlaces(151)).toBe(0);
    expect(decimalPlaces(1e21)).toBe(0);
    expect(decimalPlaces(Number.NaN)).toBe(0);
    expect(priceDecimalsOf(12.5, undefined)).toBe(2);
    expect(priceDecimalsOf(1.08523, 1.0852)).toBe(5);
    expect(priceDecimalsOf(1.123456789)).toBe(6);
  });
  it('formats quantities, sides, TIF, fills', () => {
    expect(formatQuantity(1_000_000)).toBe('1,000,000');
    expect(formatQuantity(undefined)).toBe('');
    expect(formatSide('buy')).toBe('Buy');
    expect(formatSide('sell')).toBe('Sell');
    expect(formatSide('')).toBe('');
    expect(formatTimeInForce('ioc')).toBe('IOC');
    const row = toBlotterRow(trade(LIMIT));
    expect(formatOrderPrice(row)).toBe('1.08520');
    expect(formatLastFill(row)).toBe('250,000 @ 1.08515');
    expect(formatAveragePrice(row)).toBe('1.085150');
    expect(formatAveragePrice({ ...row, filledQuantity: 0 })).toBe('');
    expect(fillRatio(row)).toBe(0.25);
    expect(fillRatio({ filledQuantity: 5, quantity: 0 })).toBe(0);
    expect(fillRatio({ filledQuantity: 5, quantity: 2 })).toBe(1);
  });
});
