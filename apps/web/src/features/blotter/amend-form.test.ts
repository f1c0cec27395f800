import { describe, expect, it } from 'vitest';
import { amendHints, amendLabel, amendment, initialAmend, type AmendOrder } from './amend-form.js';

const TICK = 0.00001;
/** A working limit buy of 1,000,000 at 1.0852, 250,000 filled. */
const LIMIT: AmendOrder = { clientOrderId: 'c-1', orderType: 'limit', quantity: 1_000_000, price: 1.0852, filledQuantity: 250_000, status: 'partiallyFilled', statusCode: 3 };
const MARKET: AmendOrder = { ...LIMIT, orderType: 'market', price: undefined, filledQuantity: 0, status: 'acknowledged', statusCode: 2 };

const fields = (hints: ReturnType<typeof amendHints>) => hints.map((h) => `${h.field}${h.blocking ? '!' : '?'} ${h.message}`);

describe('initialAmend', () => {
  it('starts from the order: grouped quantity, price in the tick decimals', () => {
    expect(initialAmend(LIMIT, TICK)).toEqual({ quantityText: '1,000,000', priceText: '1.08520' });
    expect(initialAmend(LIMIT, undefined)).toEqual({ quantityText: '1,000,000', priceText: '1.0852' });
    // a price off the tick (the server's tick may be finer than the one the page knows) is never rounded
    expect(initialAmend({ ...LIMIT, price: 149.6535 }, 0.001)).toEqual({ quantityText: '1,000,000', priceText: '149.6535' });
    expect(initialAmend(MARKET, TICK)).toEqual({ quantityText: '1,000,000', priceText: '' });
    expect(initialAmend({ ...LIMIT, quantity: undefined, price: undefined }, TICK)).toEqual({ quantityText: '', priceText: '' });
  });
});

describe('amendment', () => {
  it('sends only what changed', () => {
    expect(amendment({ quantityText: '2m', priceText: '1.08520' }, LIMIT)).toEqual({ quantity: 2_000_000 });
    expect(amendment({ quantityText: '1,000,000', priceText: '1.08510' }, LIMIT)).toEqual({ price: 1.0851 });
    expect(amendment({ quantityText: '500k', priceText: '1.085' }, LIMIT)).toEqual({ quantity: 500_000, price: 1.085 });
  });
  it('is undefined when nothing changed or a field is not a number', () => {
    expect(amendment({ quantityText: '1m', priceText: '1.0852' }, LIMIT)).toBeUndefined();
    expect(amendment({ quantityText: 'lots', priceText: '1.09' }, LIMIT)).toBeUndefined();
    expect(amendment({ quantityText: '2m', priceText: 'x' }, LIMIT)).toBeUndefined();
  });
  it('never sends a price for a market order', () => {
    expect(amendment({ quantityText: '2m', priceText: '1.2' }, MARKET)).toEqual({ quantity: 2_000_000 });
    expect(amendment({ quantityText: '1m', priceText: '1.2' }, MARKET)).toBeUndefined();
  });
  it('sends advice-level values as entered: the server judges them', () => {
    expect(amendment({ quantityText: '0', priceText: '1.085205' }, LIMIT)).toEqual({ quantity: 0, price: 1.085205 });
  });
});

describe('amendHints', () => {
  it('says nothing for a valid change', () => {
    expect(amendHints({ quantityText: '2m', priceText: '1.08510' }, LIMIT, TICK)).toEqual([]);
  });
  it('blocks when nothing changed, naming what can change', () => {
    expect(fields(amendHints(initialAmend(LIMIT, TICK), LIMIT, TICK))).toEqual(['order! Change the quantity or the price']);
    expect(fields(amendHints(initialAmend(MARKET, TICK), MARKET, TICK))).toEqual(['order! Change the quantity']);
  });
  it('blocks on text that is not a number, and on a missing field', () => {
    expect(fields(amendHints({ quantityText: 'lots', priceText: '' }, LIMIT, TICK))).toEqual([
      "quantity! 'lots' is not a quantity (e.g. 1000000, 1m, 250k)",
      'price! Enter a limit price',
    ]);
    expect(fields(amendHints({ quantityText: ' ', priceText: '1.0x' }, LIMIT, TICK))).toEqual(['quantity! Enter a quantity', "price! '1.0x' is not a price"]);
  });
  it('advises on what the server will refuse, without blocking', () => {
    expect(fields(amendHints({ quantityText: '0', priceText: '1.08520' }, LIMIT, TICK))).toEqual(['quantity? Quantity must be positive']);
    expect(fields(amendHints({ quantityText: '1.5', priceText: '1.08520' }, LIMIT, TICK))).toEqual(['quantity? Quantity must be a whole number']);
    expect(fields(amendHints({ quantityText: '100k', priceText: '1.08520' }, LIMIT, TICK))).toEqual(['quantity? Below the 250,000 already filled']);
    expect(fields(amendHints({ quantityText: '1m', priceText: '1.085205' }, LIMIT, TICK))).toEqual(['price? Off tick: prices move in steps of 0.00001']);
    expect(fields(amendHints({ quantityText: '1m', priceText: '-1' }, LIMIT, TICK))).toEqual(['price? Price must be positive']);
  });
  it('skips the tick advice without a known tick', () => {
    expect(amendHints({ quantityText: '1m', priceText: '1.085205' }, LIMIT, undefined)).toEqual([]);
  });
  it('blocks once the order is no longer open (filled, cancelled, rejected, unknown)', () => {
    const filled = { ...LIMIT, status: 'filled', statusCode: 10 };
    expect(fields(amendHints({ quantityText: '2m', priceText: '1.085' }, filled, TICK))).toEqual(['order! Filled: the order is no longer open']);
    expect(fields(amendHints({ quantityText: '2m', priceText: '1.085' }, { ...LIMIT, status: '', statusCode: undefined }, TICK))).toEqual(['order! not open: the order is no longer open']);
  });
});

describe('amendLabel', () => {
  it('says what will be sent', () => {
    expect(amendLabel({ quantityText: '1m', priceText: '1.08520' }, LIMIT)).toBe('Amend');
    expect(amendLabel({ quantityText: '2m', priceText: '1.08520' }, LIMIT)).toBe('Amend quantity to 2,000,000');
    expect(amendLabel({ quantityText: '1m', priceText: '1.08510' }, LIMIT)).toBe('Amend price to 1.08510');
    expect(amendLabel({ quantityText: '2m', priceText: ' 1.08510 ' }, LIMIT)).toBe('Amend to 2,000,000 @ 1.08510');
  });
});
