import { describe, expect, it } from 'vitest';
import { ORDER_STATUS_CODES } from '@tidewire/protocol';
import { BLOTTER_CHIPS, DEFAULT_CHIP, DONE_STATUS_CODE, NO_FILTERS, allOf, blotterFilter, chipFilter, instrumentFilter, isBlotterChip, sideFilter } from './blotter-query.js';

describe('blotter chips', () => {
  it('turn into server filters on statusCode', () => {
    expect(chipFilter('all')).toBe('');
    expect(chipFilter('open')).toBe('statusCode < 10');
    expect(chipFilter('done')).toBe('statusCode >= 10');
  });
  it('list each chip once, the default among them', () => {
    const ids = BLOTTER_CHIPS.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toContain(DEFAULT_CHIP);
    for (const id of ids) expect(isBlotterChip(id)).toBe(true);
  });
  it('split the contract statuses into in progress and done', () => {
    const open = Object.entries(ORDER_STATUS_CODES).filter(([, code]) => code < DONE_STATUS_CODE).map(([s]) => s);
    expect(open.sort()).toEqual(['acknowledged', 'new', 'partiallyFilled']);
  });
  it('refuses what is not a chip', () => {
    for (const v of ['', 'ALL', 'toString', 'constructor', undefined, 1, null]) expect(isBlotterChip(v)).toBe(false);
  });
});

describe('instrument and side filters', () => {
  it('match typed instrument text without slashes or spaces, ignoring case', () => {
    expect(instrumentFilter('')).toBe('');
    expect(instrumentFilter(' / ')).toBe('');
    expect(instrumentFilter('EUR/USD')).toBe('instrument icontains "EURUSD"');
    expect(instrumentFilter('eur usd')).toBe('instrument icontains "eurusd"');
    expect(instrumentFilter('a"b\\c')).toBe('instrument icontains "a\\"b\\\\c"');
  });
  it('pick one side or both', () => {
    expect(sideFilter('any')).toBe('');
    expect(sideFilter('buy')).toBe('side = "buy"');
    expect(sideFilter('sell')).toBe('side = "sell"');
  });
  it('join with the chip, each part parenthesised', () => {
    expect(allOf([])).toBe('');
    expect(allOf(['', 'a = 1', ''])).toBe('a = 1');
    expect(blotterFilter('all', NO_FILTERS)).toBe('');
    expect(blotterFilter('open', NO_FILTERS)).toBe('statusCode < 10');
    expect(blotterFilter('done', { instrument: 'usdjpy', side: 'sell' })).toBe('(statusCode >= 10) and (instrument icontains "usdjpy") and (side = "sell")');
    expect(blotterFilter('all', { instrument: '', side: 'buy' })).toBe('side = "buy"');
  });
});
