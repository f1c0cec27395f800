import { describe, expect, it } from 'vitest';
import { CHOOSABLE_COLUMNS, COLUMN_WIDTHS, HIDE_ORDER, columnsToHide, hiddenColumns } from './blotter-columns.js';

const total = Object.values(COLUMN_WIDTHS).reduce((a, b) => a + b, 0);
const shownWidth = (width: number) => total - hiddenColumns(width).reduce((sum, id) => sum + (COLUMN_WIDTHS[id] ?? 0), 0);

describe('blotter columns by width', () => {
  it('hide nothing when everything fits or the width is unknown', () => {
    expect(hiddenColumns(total + 40)).toEqual([]);
    expect(hiddenColumns(0)).toEqual([]);
  });
  it('hide the least needed first, only as many as needed', () => {
    const hidden = hiddenColumns(total - 10);
    expect(hidden).toEqual(['clientOrderId']);
    for (const width of [1100, 1000, 900, 800, 700, 600]) {
      const h = hiddenColumns(width);
      expect(h).toEqual(HIDE_ORDER.slice(0, h.length));
      if (h.length < HIDE_ORDER.length) expect(shownWidth(width) + 20).toBeLessThanOrEqual(width);
    }
  });
  it('never hide instrument, side, size, price, status, filled or the actions', () => {
    for (const id of ['instrumentLabel', 'side', 'quantity', 'price', 'status', 'filledQuantity', 'actions']) {
      expect(HIDE_ORDER).not.toContain(id);
      expect(hiddenColumns(100)).not.toContain(id);
    }
  });
  it('keep last fill and notional on a grid about 1000 px wide (a 1440 px window)', () => {
    const h = hiddenColumns(1000);
    expect(h).not.toContain('lastFill');
    expect(h).not.toContain('notional');
  });
});

describe('column choice', () => {
  it('shows chosen columns that would not fit and hides chosen ones that would', () => {
    expect(columnsToHide(['clientOrderId', 'orderId'], new Map())).toEqual(['clientOrderId', 'orderId']);
    expect(columnsToHide(['clientOrderId', 'orderId'], new Map([['clientOrderId', true]]))).toEqual(['orderId']);
    expect(columnsToHide([], new Map([['reason', false], ['orderId', true]]))).toEqual(['reason']);
  });
  it('offers exactly the columns that may hide', () => {
    expect(CHOOSABLE_COLUMNS.map((c) => c.id).sort()).toEqual([...HIDE_ORDER].sort());
  });
});
