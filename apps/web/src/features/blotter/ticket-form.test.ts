import { describe, expect, it } from 'vitest';
import {
  DEFAULT_TICK,
  INITIAL_TICKET,
  formatTicketPrice,
  isBlocked,
  isOnTick,
  newClientOrderId,
  marketPriceFor,
  parsePrice,
  parseQuantity,
  roundToTick,
  stepPrice,
  submitLabel,
  tickDecimals,
  tickOf,
  ticketHints,
  ticketOrder,
  type TicketState,
} from './ticket-form.js';

const EURUSD = { subject: '/FX/EURUSD', label: 'EUR/USD', description: 'FX spot' };
const MARKET = { bid: 1.08514, ask: 1.08523, tick: 0.00001 };
const ticket = (patch: Partial<TicketState>): TicketState => ({ ...INITIAL_TICKET, instrument: EURUSD, ...patch });

describe('parseQuantity', () => {
  it('reads plain, grouped and suffixed quantities', () => {
    expect(parseQuantity('1000000')).toBe(1_000_000);
    expect(parseQuantity(' 1,000,000 ')).toBe(1_000_000);
    expect(parseQuantity('1_000 000')).toBe(1_000_000);
    expect(parseQuantity('1m')).toBe(1_000_000);
    expect(parseQuantity('2.3M')).toBe(2_300_000);
    expect(parseQuantity('250k')).toBe(250_000);
    expect(parseQuantity('1 b')).toBe(1_000_000_000);
    expect(parseQuantity('.5k')).toBe(500);
    expect(parseQuantity('0')).toBe(0);
    expect(parseQuantity('-5')).toBe(-5);
    expect(parseQuantity('1.5')).toBe(1.5);
  });
  it('gives NaN for anything else', () => {
    for (const bad of ['', ' ', 'abc', '1x', '1mm', '1e6', '--1', 'k', ',', '1.2.3', `${'9'.repeat(400)}`]) expect(parseQuantity(bad)).toBeNaN();
  });
});

describe('parsePrice', () => {
  it('reads decimals', () => {
    expect(parsePrice('1.0852')).toBe(1.0852);
    expect(parsePrice(' 1,234.5 ')).toBe(1234.5);
    expect(parsePrice('.5')).toBe(0.5);
    expect(parsePrice('-1')).toBe(-1);
  });
  it('gives NaN for anything else', () => {
    for (const bad of ['', 'x', '1e3', '1.2.3', 'Infinity', 'NaN']) expect(parsePrice(bad)).toBeNaN();
  });
});

describe('ticks', () => {
  it('come from tickSize, else the price decimals, else the server default', () => {
    expect(tickOf({ tickSize: 0.25, decimals: 2 })).toBe(0.25);
    expect(tickOf({ decimals: 5 })).toBe(0.00001);
    expect(tickOf({ decimals: 3 })).toBe(0.001);
    expect(tickOf({ decimals: 0 })).toBe(1);
    expect(tickOf({ decimals: 7 })).toBe(DEFAULT_TICK);
    expect(tickOf({ assetClass: 'Bond' })).toBe(0.001);
    expect(tickOf({ assetClass: 'Equity' })).toBe(0.01);
    expect(tickOf({ assetClass: 'Equity', decimals: 4 })).toBe(0.0001);
    expect(tickOf({ assetClass: 'Fund' })).toBe(DEFAULT_TICK);
    expect(tickOf({ tickSize: -1, decimals: 'x' })).toBe(DEFAULT_TICK);
    expect(tickOf({})).toBe(DEFAULT_TICK);
  });
  it('know their decimals', () => {
    expect(tickDecimals(0.00001)).toBe(5);
    expect(tickDecimals(0.25)).toBe(2);
    expect(tickDecimals(1)).toBe(0);
    expect(tickDecimals(0.1 + 0.2)).toBe(1); // binary noise is not a decimal
    expect(tickDecimals(1 / 3)).toBe(10);
  });
  it('check, round and step prices', () => {
    expect(isOnTick(1.08523, 0.00001)).toBe(true);
    expect(isOnTick(1.085235, 0.00001)).toBe(false);
    expect(isOnTick(151.25, 0.25)).toBe(true);
    expect(isOnTick(Number.NaN, 0.01)).toBe(false);
    expect(isOnTick(1, 0)).toBe(false);
    expect(roundToTick(1.085236, 0.00001)).toBe(1.08524);
    expect(stepPrice(1.08523, 0.00001, 1)).toBe(1.08524);
    expect(stepPrice(1.08523, 0.00001, -3)).toBe(1.0852);
    expect(stepPrice(0.00001, 0.00001, -5)).toBe(0.00001);
    expect(stepPrice(Number.NaN, 0.01, 1, 12.5)).toBe(12.51);
    expect(stepPrice(Number.NaN, 0.01, 1)).toBeNaN();
    expect(formatTicketPrice(1.0852, 0.00001)).toBe('1.08520');
    expect(formatTicketPrice(Number.NaN, 0.01)).toBe('');
  });
  it('prefill from the side of the market the order would take', () => {
    expect(marketPriceFor('buy', MARKET)).toBe(1.08523);
    expect(marketPriceFor('sell', MARKET)).toBe(1.08514);
    expect(marketPriceFor('buy', { bid: 1, ask: undefined })).toBeUndefined();
  });
});

describe('ticketHints and ticketOrder', () => {
  it('sends a market order without a price', () => {
    const state = ticket({ quantityText: '1m' });
    expect(ticketHints(state, MARKET)).toEqual([]);
    expect(ticketOrder(state)).toEqual({ instrument: '/FX/EURUSD', side: 'buy', quantity: 1_000_000, timeInForce: 'day' });
  });
  it('sends a limit order with its price', () => {
    const state = ticket({ side: 'sell', orderType: 'limit', priceText: '1.08520', timeInForce: 'gtc' });
    expect(ticketHints(state, MARKET)).toEqual([]);
    expect(ticketOrder(state)).toEqual({ instrument: '/FX/EURUSD', side: 'sell', quantity: 1_000_000, price: 1.0852, timeInForce: 'gtc' });
  });
  it('blocks when there is nothing to send', () => {
    const none = { ...INITIAL_TICKET };
    expect(ticketHints(none, undefined)).toEqual([{ field: 'instrument', message: 'Pick an instrument', blocking: true, missing: true }]);
    expect(isBlocked(ticketHints(none, undefined))).toBe(true);
    expect(ticketHints(ticket({ quantityText: ' ' }), MARKET)).toEqual([{ field: 'quantity', message: 'Enter a quantity', blocking: true, missing: true }]);
    expect(ticketHints(ticket({ quantityText: 'lots' }), MARKET)[0]!.missing).toBeUndefined();
    expect(ticketOrder(none)).toBeUndefined();
    for (const patch of [{ quantityText: '' }, { quantityText: 'lots' }, { orderType: 'limit' as const, priceText: '' }, { orderType: 'limit' as const, priceText: 'abc' }]) {
      const state = ticket(patch);
      const hints = ticketHints(state, MARKET);
      expect(isBlocked(hints), JSON.stringify(patch)).toBe(true);
      expect(ticketOrder(state)).toBeUndefined();
    }
  });
  it('advises but still sends what only the server may refuse', () => {
    const cases: [Partial<TicketState>, string, RegExp][] = [
      [{ quantityText: '0' }, 'quantity', /positive/],
      [{ quantityText: '1.5' }, 'quantity', /whole/],
      [{ orderType: 'limit', priceText: '1.085235' }, 'price', /Off tick.*0\.00001/],
      [{ orderType: 'limit', priceText: '0' }, 'price', /positive/],
    ];
    for (const [patch, field, message] of cases) {
      const state = ticket(patch);
      const hints = ticketHints(state, MARKET);
      expect(hints).toHaveLength(1);
      expect(hints[0]).toMatchObject({ field, blocking: false });
      expect(hints[0]!.message).toMatch(message);
      expect(ticketOrder(state)).toBeDefined();
    }
  });
  it('warns that a market order without a market will be rejected', () => {
    const hints = ticketHints(ticket({ side: 'sell' }), { bid: undefined, ask: 1.1, tick: 0.00001 });
    expect(hints).toEqual([{ field: 'instrument', message: 'No live bid: a market order will be rejected', blocking: false }]);
  });
  it('labels the submit button with the order', () => {
    expect(submitLabel(ticket({}))).toBe('Buy 1,000,000 EUR/USD @ MKT');
    expect(submitLabel(ticket({ side: 'sell', quantityText: '250k', orderType: 'limit', priceText: '1.08520' }))).toBe('Sell 250,000 EUR/USD @ 1.08520');
    expect(submitLabel({ ...INITIAL_TICKET, quantityText: 'x', orderType: 'limit' })).toBe('Buy');
  });
});

describe('newClientOrderId', () => {
  it('is a valid, distinct client order id', () => {
    const id = newClientOrderId(1_795_396_116_092, 3, () => 0.5);
    expect(id).toBe(`t${(1_795_396_116_092).toString(36)}-3-${Math.floor(0.5 * 36 ** 4).toString(36)}`);
    expect(id).toMatch(/^[A-Za-z0-9._:-]{1,64}$/);
    expect(newClientOrderId(1, 1, () => 0)).toBe('t1-1-0000');
    expect(newClientOrderId(1, 1, () => 1)).toMatch(/^t1-1-[0-9a-z]{4}$/);
    const ids = new Set(Array.from({ length: 200 }, (_, i) => newClientOrderId(1_795_396_116_092, i)));
    expect(ids.size).toBe(200);
  });
});
