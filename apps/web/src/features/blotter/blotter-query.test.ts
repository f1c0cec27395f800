import { describe, expect, it } from 'vitest';
import { ORDER_STATUS_CODES } from '@tidewire/protocol';
import { BLOTTER_CHIPS, DEFAULT_CHIP, DONE_STATUS_CODE, chipFilter, isBlotterChip } from './blotter-query.js';

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
