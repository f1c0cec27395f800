import { describe, expect, it } from 'vitest';
import { SubmitRejects, isSubmitRefusal } from '../../connection/submit-rejects.js';
import type { StorageLike } from '../../connection/session-token.js';
import { rejectRows } from './reject-rows.js';

function memoryStorage(): StorageLike {
  const data = new Map<string, string>();
  return { getItem: (k) => data.get(k) ?? null, setItem: (k, v) => void data.set(k, v), removeItem: (k) => void data.delete(k) };
}

const offTick = { code: 'ORDER_REJECTED', field: 'price', rule: 'offTick', clientOrderId: 'c-9', message: 'price 1.080001 is not a multiple of tick 0.00001' };

describe('orders refused at submit', () => {
  it('are kept newest first with the reason, across a reload of the tab; unknown fates are not', () => {
    const storage = memoryStorage();
    const rejects = new SubmitRejects(storage, 'alice', () => 1000);
    rejects.add({ instrument: '/FX/EURUSD', side: 'buy', quantity: 1_000_000, price: 1.080001 }, offTick);
    rejects.add({ instrument: '/FX/GBPUSD', side: 'sell', quantity: 0 }, { code: 'BAD_REQUEST', message: "'quantity' (0) must be positive" });
    rejects.add({ instrument: '/FX/GBPUSD', side: 'sell', quantity: 5 }, { code: 'TIMEOUT', message: 'no reply' });
    expect(isSubmitRefusal({ code: 'DISCONNECTED' })).toBe(false);
    const again = new SubmitRejects(storage, 'alice').getSnapshot();
    expect(again.map((r) => r.seq)).toEqual([2, 1]);
    expect(new SubmitRejects(storage, 'bob').getSnapshot()).toEqual([]);

    const rows = rejectRows(again, 'all', { instrument: '', side: 'any' });
    expect(rows[1]).toMatchObject({ clientOrderId: 'c-9', instrumentLabel: 'EUR/USD', side: 'buy', quantity: 1_000_000, orderType: 'limit', price: 1.080001, status: 'rejected', created: 1000 });
    expect(rows[1]!.reason).toBe('price (offTick): price 1.080001 is not a multiple of tick 0.00001');
    expect(rows[0]).toMatchObject({ orderType: 'market', reason: "BAD_REQUEST: 'quantity' (0) must be positive" });
    expect(rows.every((r) => r.rowId < 0)).toBe(true);
  });

  it('follow the chip, instrument and side filters', () => {
    const rejects = new SubmitRejects(undefined, 'alice');
    rejects.add({ instrument: '/FX/EURUSD', side: 'buy', quantity: 1 }, offTick);
    rejects.add({ instrument: '/FX/GBPUSD', side: 'sell', quantity: 1 }, offTick);
    const list = rejects.getSnapshot();
    expect(rejectRows(list, 'open', { instrument: '', side: 'any' })).toEqual([]);
    expect(rejectRows(list, 'done', { instrument: 'eur/usd', side: 'any' }).map((r) => r.instrument)).toEqual(['/FX/EURUSD']);
    expect(rejectRows(list, 'all', { instrument: '', side: 'sell' }).map((r) => r.instrument)).toEqual(['/FX/GBPUSD']);
  });
});
