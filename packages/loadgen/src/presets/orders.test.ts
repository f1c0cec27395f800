import { encodeClientMessage } from '@tidewire/protocol';
import { describe, expect, it } from 'vitest';
import { IdSet, idGaps, orderOf } from './orders.js';

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

  it('order 7 encodes to the text the Rust simulator sends for it (native/src/order_codec.rs pins the same string)', () => {
    const o = orderOf(7, 'P');
    const text = encodeClientMessage({ type: 'order.submit', reqId: 10, clientOrderId: o.clientOrderId, instrument: o.instrument, side: 'buy', quantity: o.quantity, price: o.price, timeInForce: 'day' });
    expect(text).toBe('{"type":"order.submit","reqId":10,"clientOrderId":"P-7","instrument":"/BENCH/ORD/7","side":"buy","quantity":800,"price":97,"timeInForce":"day"}');
  });

  it('counts missing ids between the acknowledged ones', () => {
    expect(idGaps([])).toBe(0);
    expect(idGaps([5, 3, 4])).toBe(0);
    expect(idGaps([1, 2, 5, 9])).toBe(5);
  });

  it('the id set counts gaps across chunks, once per id, whatever the order', () => {
    const set = new IdSet();
    expect(set.gaps).toBe(0);
    const ids = [70_000, 3, 65_535, 65_536, 3, 131_072, 4, 65_537];
    for (const id of ids) set.add(id);
    expect(set.size).toBe(7); // 3 twice
    expect(set.gaps).toBe(131_072 - 3 + 1 - 7);
    // against a plain sort on a shuffled run of ids with holes
    const many: number[] = [];
    for (let i = 0; i < 200_000; i++) if (i % 997 !== 5) many.push(1_000_000 + ((i * 7919) % 200_000));
    const big = new IdSet();
    for (const id of many) big.add(id);
    const sorted = [...new Set(many)].sort((a, b) => a - b);
    expect(big.gaps).toBe((sorted.at(-1) as number) - (sorted[0] as number) + 1 - sorted.length);
    expect(big.gaps).toBeGreaterThan(0);
    big.add(-1);
    big.add(1.5);
    big.add(Number.NaN);
    expect(big.size).toBe(sorted.length); // not ids: ignored
  });
});
