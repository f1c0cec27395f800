import { describe, expect, it } from 'vitest';
import { noticeRow, orderNotices, type NoticeRow, type Seen } from './order-notices.js';

const row = (over: Partial<NoticeRow>): NoticeRow => ({ orderId: 1, status: 'acknowledged', filledQuantity: 0, side: 'buy', quantity: 1_000_000, instrument: '/FX/EURUSD', ...over });

describe('orderNotices', () => {
  it('announces nothing of the first window, then fills, partial fills, rejects and expiries', () => {
    const seen: Seen = new Map();
    expect(orderNotices([row({ status: 'filled', filledQuantity: 1_000_000 }), row({ orderId: 2 })], seen, true)).toEqual([]);
    // the resting order 2 fills in part, then in full
    const part = orderNotices([row({ orderId: 2, status: 'partiallyFilled', filledQuantity: 400_000, lastFillQuantity: 400_000, lastFillPrice: 1.0851 })], seen, false);
    expect(part.map((n) => [n.tone, n.text])).toEqual([['fill', 'Partly filled (400,000 of 1,000,000): Buy 1,000,000 EUR/USD #2 400,000 @ 1.0851']]);
    const full = orderNotices([row({ orderId: 2, status: 'filled', filledQuantity: 1_000_000, lastFillQuantity: 600_000, lastFillPrice: 1.0852 })], seen, false);
    expect(full[0]!.text).toBe('Filled: Buy 1,000,000 EUR/USD #2 600,000 @ 1.0852');
    // the same state again (a later update of another field) is not news
    expect(orderNotices([row({ orderId: 2, status: 'filled', filledQuantity: 1_000_000 })], seen, false)).toEqual([]);
    // a new order that is rejected; an end-of-day expiry; an IOC that did not fill
    expect(orderNotices([row({ orderId: 3, side: 'sell', status: 'rejected', reason: 'no liquidity', instrument: '/PRODUCT/SAP' })], seen, false)[0]!.text)
      .toBe('Rejected: Sell 1,000,000 SAP #3 (no liquidity)');
    expect(orderNotices([row({ orderId: 4, status: 'cancelled', reason: 'endOfDay' })], seen, false)[0]!.text).toBe('Cancelled: Buy 1,000,000 EUR/USD #4, expired at end of day');
    expect(orderNotices([row({ orderId: 5, status: 'cancelled', reason: 'ioc' })], seen, false)[0]!.tone).toBe('cancel');
    // a cancel the trader asked for is not a notice
    expect(orderNotices([row({ orderId: 6, status: 'cancelled', reason: 'user' })], seen, false)).toEqual([]);
  });

  it('reads blotter view rows and skips rows missing a field', () => {
    expect(noticeRow({ orderId: 7, status: 'filled', filledQuantity: 5, quantity: 5, instrument: '/FX/EURUSD', side: 'buy', lastFillQuantity: 5, lastFillPrice: 1.1, reason: '' }))
      .toEqual({ orderId: 7, status: 'filled', filledQuantity: 5, quantity: 5, instrument: '/FX/EURUSD', side: 'buy', lastFillQuantity: 5, lastFillPrice: 1.1 });
    expect(noticeRow({ orderId: 7, status: 'filled' })).toBeUndefined();
  });
});
