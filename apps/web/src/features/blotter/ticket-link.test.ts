import { describe, expect, it } from 'vitest';
import { instrumentFromHash, ticketHash } from './ticket-link.js';

describe('ticket links', () => {
  it('round-trips an instrument through the blotter hash', () => {
    const instrument = { subject: '/PRODUCT/XS0000000017', label: 'XS0000000017', description: 'Acme 4.25% 2031 & co' };
    const hash = ticketHash(instrument);
    expect(hash.startsWith('#/blotter?instrument=%2FPRODUCT%2FXS0000000017&')).toBe(true);
    expect(instrumentFromHash(hash)).toEqual(instrument);
  });

  it('links a tier subject by its base subject', () => {
    const hash = ticketHash({ subject: '/PRODUCT/X1@T2', label: 'X1', description: '' });
    expect(instrumentFromHash(hash)?.subject).toBe('/PRODUCT/X1');
    expect(instrumentFromHash('#/blotter?instrument=/PRODUCT/X1@T3')?.subject).toBe('/PRODUCT/X1');
  });

  it('derives a missing label from the subject and trims long texts', () => {
    expect(instrumentFromHash('#/blotter?instrument=/FX/EURUSD')).toEqual({ subject: '/FX/EURUSD', label: 'EURUSD', description: '' });
    expect(instrumentFromHash(`#/blotter?instrument=/P/1&description=${'x'.repeat(500)}`)?.description).toHaveLength(200);
  });

  it('names nothing for a hash without an instrument or with a bad one', () => {
    for (const hash of ['', '#/blotter', '#/blotter?', '#/blotter?instrument=', '#/blotter?instrument=PRODUCT', '#/blotter?instrument=/', '#/blotter?instrument=/A%20B', `#/blotter?instrument=/${'a'.repeat(300)}`]) {
      expect(instrumentFromHash(hash)).toBeUndefined();
    }
  });
});
