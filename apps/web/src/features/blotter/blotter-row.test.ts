import { describe, expect, it } from 'vitest';
import {
  decimalPlaces,
  fillRatio,
  formatAveragePrice,
  formatDateTime,
  formatLastFill,
  formatNotional,
  formatOrderTime,
  formatOrderPrice,
  formatQuantity,
  formatSide,
  formatTimeInForce,
  instrumentDecimals,
  instrumentLabel,
  isOpenOrder,
  notionalOf,
  priceDecimalsOf,
  rowDecimals,
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
    expect(formatAveragePrice(row)).toBe('1.08515');
    expect(formatAveragePrice({ ...row, filledQuantity: 0 })).toBe('');
    expect(fillRatio(row)).toBe(0.25);
    expect(fillRatio({ filledQuantity: 5, quantity: 0 })).toBe(0);
    expect(fillRatio({ filledQuantity: 5, quantity: 2 })).toBe(1);
  });
});

describe('instrument decimals', () => {
  it('come from the tick size, else the decimals field, else the asset class', () => {
    expect(instrumentDecimals({ tickSize: 0.01, decimals: 5 })).toBe(2);
    expect(instrumentDecimals({ tickSize: 0.001 })).toBe(3);
    expect(instrumentDecimals({ decimals: 3 })).toBe(3);
    expect(instrumentDecimals({ assetClass: 'Equity' })).toBe(2);
    expect(instrumentDecimals({ tickSize: 0.00001 })).toBe(5);
  });
  it('print every price of a row alike once the instrument is known', () => {
    // an equity with tick 0.01: the limit, the fill and the average all get 2 decimals
    const row = toBlotterRow(trade({ ...LIMIT, instrument: '/PRODUCT/X', price: 0.6, lastFillPrice: 9.99999, averagePrice: 0.6, filledQuantity: 10, lastFillQuantity: 10 }));
    expect(row.decimals).toBe(5); // the guess from the fill's digits
    const known = new Map([['/PRODUCT/X', instrumentDecimals({ tickSize: 0.01 })]]);
    const shown = { ...row, decimals: rowDecimals(row, known) };
    expect(formatOrderPrice(shown)).toBe('0.60');
    expect(formatAveragePrice(shown)).toBe('0.60');
    expect(formatLastFill(shown)).toBe('10 @ 10.00');
    // an instrument not known yet keeps the row's guess
    expect(rowDecimals(row, new Map())).toBe(5);
  });
});

describe('notional', () => {
  it('is quantity x limit price, or filled x average for a market order', () => {
    const limit = toBlotterRow(trade(LIMIT));
    expect(notionalOf(limit)).toBeCloseTo(1_000_000 * 1.0852, 6);
    expect(formatNotional(notionalOf(limit))).toBe('1,085,200');
    const market = { orderType: 'market' as const, quantity: 100, price: undefined, filledQuantity: 40, averagePrice: 12.5 };
    expect(notionalOf(market)).toBe(500);
    expect(formatNotional(500)).toBe('500.00');
    expect(notionalOf({ ...market, filledQuantity: 0 })).toBeUndefined();
    expect(notionalOf({ ...market, filledQuantity: undefined })).toBeUndefined();
    expect(formatNotional(undefined)).toBe('');
  });
});

describe('order time', () => {
  const at = (y: number, mo: number, d: number, h: number, mi: number, s = 0, ms = 0) => new Date(y, mo - 1, d, h, mi, s, ms).getTime();
  it('is the time of day today, the date on earlier days, with the year in other years', () => {
    const now = at(2026, 11, 28, 9, 30);
    expect(formatOrderTime(at(2026, 11, 28, 8, 5, 9, 42), now)).toBe('08:05:09');
    expect(formatOrderTime(at(2026, 11, 27, 23, 59, 1), now)).toBe('27 Nov');
    expect(formatOrderTime(at(2025, 12, 31, 10, 0), now)).toBe('31 Dec 25');
    expect(formatOrderTime(at(2009, 1, 2, 10, 0), now)).toBe('2 Jan 09');
    expect(formatOrderTime(undefined, now)).toBe('');
    expect(formatOrderTime(0, now)).toBe('');
  });
  it('has a full form for tooltips and exports', () => {
    expect(formatDateTime(at(2026, 1, 2, 3, 4, 5, 6))).toBe('2026-01-02 03:04:05.006');
    expect(formatDateTime(undefined)).toBe('');
  });
});
