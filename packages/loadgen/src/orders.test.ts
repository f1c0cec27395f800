import { describe, expect, it } from 'vitest';
import { idGaps, orderOf } from './orders.js';

describe('orders shape', () => {
  it('orders are unique per run, priced below the bid, whole quantities', () => {
    const a = orderOf(12345, 'Lrun1');
    expect(a.clientOrderId).toMatch(/^[A-Za-z0-9._:-]{1,64}$/);
    expect(orderOf(12346, 'Lrun1').clientOrderId).not.toBe(a.clientOrderId);
    expect(orderOf(12345, 'Lrun2').clientOrderId).not.toBe(a.clientOrderId);
    expect(a.instrument).toBe('/BENCH/ORD/45');
    expect(a.price).toBe(135); // bid of instrument 45 is 145
    expect(Number.isInteger(a.quantity) && a.quantity > 0).toBe(true);
  });

  it('counts missing ids between the acknowledged ones', () => {
    expect(idGaps([])).toBe(0);
    expect(idGaps([5, 3, 4])).toBe(0);
    expect(idGaps([1, 2, 5, 9])).toBe(5);
  });
});
