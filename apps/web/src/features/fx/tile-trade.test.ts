import { describe, expect, it } from 'vitest';
import { tileClick, tileDefaultQuantity, tileOutcome } from './tile-trade.js';

const quote = { bid: 1.08431, ask: 1.08434, decimals: 5 };

describe('tile clicks', () => {
  it('buys at the ask and sells at the bid, limit IOC, with the typed amount', () => {
    expect(tileClick('EURUSD', 'buy', '1m', quote, 5)).toEqual({
      kind: 'order', order: { instrument: '/FX/EURUSD', side: 'buy', quantity: 1_000_000, price: 1.08434, timeInForce: 'ioc' }, confirm: false, summary: 'Buy 1,000,000 EUR/USD at 1.08434',
    });
    const sell = tileClick('EURUSD', 'sell', '250,000', quote, 5);
    expect(sell.kind === 'order' && sell.order).toMatchObject({ side: 'sell', quantity: 250_000, price: 1.08431 });
  });

  it('asks for a confirm above the FX threshold (10 million of base currency), not at it', () => {
    expect(tileClick('EURUSD', 'buy', '10m', quote, 5)).toMatchObject({ kind: 'order', confirm: false });
    expect(tileClick('EURUSD', 'buy', '10,000,001', quote, 5)).toMatchObject({ kind: 'order', confirm: true, summary: 'Buy 10,000,001 EUR/USD at 1.08434' });
  });

  it('refuses amounts that are not positive whole numbers, and a side without a price', () => {
    for (const bad of ['', '0', '-5', '1.5', 'lots', '2.5k5']) expect(tileClick('EURUSD', 'buy', bad, quote, 5)).toMatchObject({ kind: 'invalid' });
    expect(tileClick('EURUSD', 'buy', '1m', { bid: 1.1 }, 5)).toEqual({ kind: 'invalid', message: 'no ask price to buy at' });
    expect(tileClick('EURUSD', 'sell', '1m', { ask: 1.1, bid: 0 }, 5)).toEqual({ kind: 'invalid', message: 'no bid price to sell at' });
  });

  it('starts FX tiles at one million', () => {
    expect(tileDefaultQuantity('GBPUSD')).toBe(1_000_000);
  });
});

describe('tile outcome line', () => {
  it('follows the trade record: working, filled, partly filled, not filled, rejected', () => {
    expect(tileOutcome('buy', 1_000_000, undefined, 5)).toEqual({ tone: 'working', text: 'Buying 1,000,000…' });
    expect(tileOutcome('buy', 1_000_000, { status: 'acknowledged' }, 5)).toEqual({ tone: 'working', text: 'Buying 1,000,000…' });
    expect(tileOutcome('buy', 1_000_000, { status: 'filled', filledQuantity: 1_000_000, averagePrice: 1.08434 }, 5)).toEqual({ tone: 'done', text: 'Bought 1,000,000 at 1.08434' });
    expect(tileOutcome('sell', 1_000_000, { status: 'cancelled', filledQuantity: 400_000, averagePrice: 1.0843 }, 5)).toEqual({ tone: 'done', text: 'Sold 400,000 of 1,000,000 at 1.08430; rest cancelled' });
    expect(tileOutcome('sell', 1_000_000, { status: 'cancelled', filledQuantity: 0, reason: 'ioc' }, 5)).toEqual({ tone: 'failed', text: 'Not filled at the clicked price (ioc)' });
    expect(tileOutcome('buy', 5, { status: 'rejected', reason: 'price collar' }, 5)).toEqual({ tone: 'failed', text: 'Rejected: price collar' });
  });
});
