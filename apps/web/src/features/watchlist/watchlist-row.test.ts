import { describe, expect, it } from 'vitest';
import type { RecordSnapshot } from '../../connection/record-store.js';
import { formatCellPrice, formatTime, formatVolume, priceDecimals, rowFromSnapshot, rowName, statusLabel, statusTooltip, subjectOfVwap, vwapSubject, withMoves } from './watchlist-row.js';

const snapshot = (partial: Partial<RecordSnapshot>): RecordSnapshot => ({
  subject: '/X',
  status: 'live',
  seq: 1,
  ts: 0,
  fields: {},
  stale: false,
  ...partial,
});

describe('rowFromSnapshot', () => {
  it('maps an FX record, deriving last from the mid', () => {
    const row = rowFromSnapshot(
      snapshot({ subject: '/FX/EURUSD', ts: 5, fields: { pair: 'EUR/USD', decimals: 5, bid: 1.1, ask: 1.1002, change: 0.001, changePct: 0.09, high: 1.2, low: 1 } }),
    );
    expect(row).toMatchObject({ subject: '/FX/EURUSD', name: 'EUR/USD', decimals: 5, bid: 1.1, ask: 1.1002, changePct: 0.09, ts: 5 });
    expect(row.last).toBeCloseTo(1.1001, 10);
    expect(row.volume).toBeUndefined();
  });
  it('maps a product record', () => {
    const row = rowFromSnapshot(
      snapshot({ subject: '/PRODUCT/XS1', fields: { code: 'XS1', description: 'Atlas Bank 2% 2030', assetClass: 'Bond', bid: 99.1, ask: 99.3, last: 99.2, volume: 30000 } }),
    );
    expect(row).toMatchObject({ name: 'Atlas Bank 2% 2030', decimals: 3, last: 99.2, volume: 30000, changePct: undefined });
  });
  it('shows a live record whose source is gone as stale, keeping its last prices', () => {
    const row = rowFromSnapshot(snapshot({ stale: true, fields: { bid: 1.1, ask: 1.2 } }));
    expect(row).toMatchObject({ status: 'stale', bid: 1.1, ask: 1.2 });
    expect(rowFromSnapshot(snapshot({ stale: true, status: 'pending', seq: 0 })).status).toBe('pending');
  });
  it('shows status and error detail for records without an image', () => {
    const row = rowFromSnapshot(snapshot({ subject: '/BAD', status: 'error', seq: 0, error: { code: 'NOT_ENTITLED', message: 'no' } }));
    expect(row).toMatchObject({ name: '', status: 'error', statusDetail: 'NOT_ENTITLED: no', bid: undefined, last: undefined });
  });
  it('ignores fields of the wrong type', () => {
    const row = rowFromSnapshot(snapshot({ fields: { bid: '1.1', ask: null, pair: 5 } }));
    expect(row).toMatchObject({ bid: undefined, ask: undefined, name: '', decimals: 4 });
  });
});

describe('cell formatting', () => {
  it('formats prices, volumes and times', () => {
    expect(priceDecimals({ assetClass: 'Equity' })).toBe(2);
    expect(priceDecimals({ decimals: 3, assetClass: 'Equity' })).toBe(3);
    expect(formatCellPrice(1.2, 5)).toBe('1.20000');
    expect(formatCellPrice(undefined, 5)).toBe('');
    expect(formatVolume(1234500.4)).toBe('1,234,500');
    expect(formatVolume(undefined)).toBe('');
    expect(formatTime(0)).toBe('');
    expect(formatTime(new Date(2026, 0, 2, 3, 4, 5, 6).getTime())).toBe('03:04:05.006');
  });
});

describe('price moves', () => {
  const snap = (bid: number | undefined, ask: number) => rowFromSnapshot(snapshot({ subject: '/FX/EURUSD', fields: bid === undefined ? { ask } : { bid, ask } }));
  it('record which way each price moved, keeping the last direction while it stands still', () => {
    const first = withMoves(undefined, snap(1.1, 1.2));
    expect(first.moves).toEqual({});
    const second = withMoves(first, snap(1.2, 1.1));
    expect(second.moves).toEqual({ bid: 'up', ask: 'down' });
    const third = withMoves(second, snap(1.2, 1.15));
    expect(third.moves).toEqual({ bid: 'up', ask: 'up', last: 'up' }); // the mid moved up too
    // a price that disappears does not move
    expect(withMoves(third, snap(undefined, 1.15)).moves).toEqual(third.moves);
  });

  it('pairs products with their VWAP result records', () => {
    expect(vwapSubject('/PRODUCT/XS1')).toBe('/STAT/vwap/PRODUCT/XS1');
    expect(vwapSubject('/FX/EURUSD')).toBeUndefined();
    expect(subjectOfVwap('/STAT/vwap/PRODUCT/XS1')).toBe('/PRODUCT/XS1');
    expect(subjectOfVwap('/STAT/other/PRODUCT/XS1')).toBeUndefined();
    expect(subjectOfVwap('/PRODUCT/XS1')).toBeUndefined();
  });
});

describe('rows without data', () => {
  it('say "no data" for a subject nobody publishes, and why', () => {
    const row = rowFromSnapshot(snapshot({ subject: '/FX/NOSUCH', status: 'pending', seq: 0 }));
    expect(statusLabel(row.status)).toBe('no data');
    expect(rowName(row)).toBe('No such subject: no data');
    expect(statusTooltip(row)).toContain('No source publishes /FX/NOSUCH');
  });
  it('name the refusal of a refused subject, and keep a live name', () => {
    const refused = rowFromSnapshot(snapshot({ status: 'error', error: { code: 'NOT_ENTITLED', message: 'no' } }));
    expect(statusLabel(refused.status)).toBe('refused');
    expect(rowName(refused)).toBe('Refused: NOT_ENTITLED: no');
    expect(rowName(rowFromSnapshot(snapshot({ fields: { pair: 'EUR/USD' } })))).toBe('EUR/USD');
    expect(statusLabel('subscribing')).toBe('subscribing…');
  });
});
