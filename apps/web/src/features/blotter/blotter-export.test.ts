import { describe, expect, it } from 'vitest';
import { blotterCsv, csvField, readAllRows, type OpenView } from './blotter-export.js';
import { toBlotterRow } from './blotter-row.js';

const row = (fields: Record<string, unknown>) => toBlotterRow({ id: 1, subject: '/TRADE/alice/1', index: 0, fields });

describe('blotter CSV', () => {
  it('quotes fields with commas, quotes or line breaks', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
  });
  it('prints a header and one line per order, prices with the instrument decimals', () => {
    const created = new Date(2026, 10, 27, 14, 5, 9, 123).getTime();
    const orders = [
      row({ orderId: 3, clientOrderId: 'c-3', instrument: '/PRODUCT/X', side: 'sell', quantity: 10, orderType: 'limit', price: 0.6, timeInForce: 'gtc',
        status: 'rejected', statusCode: 12, filledQuantity: 0, reason: 'no market, try later', created }),
      row({ orderId: 2, clientOrderId: 'c-2', instrument: '/FX/EURUSD', side: 'buy', quantity: 1_000_000, orderType: 'market', timeInForce: 'ioc',
        status: 'filled', statusCode: 10, filledQuantity: 1_000_000, averagePrice: 1.08523, lastFillQuantity: 1_000_000, lastFillPrice: 1.08523, created }),
    ];
    const csv = blotterCsv(orders, new Map([['/PRODUCT/X', 2], ['/FX/EURUSD', 5]]));
    expect(csv.split('\r\n')).toEqual([
      'Time,Instrument,Side,Qty,Price,Notional,Status,Filled,Avg px,Last fill,TIF,Order,Client id,Reason',
      '2026-11-27 14:05:09.123,X,Sell,10,0.60,6.00,Rejected,0,,,GTC,3,c-3,"no market, try later"',
      '2026-11-27 14:05:09.123,EUR/USD,Buy,1000000,MKT,1085230,Filled,1000000,1.08523,1000000 @ 1.08523,IOC,2,c-2,',
      '',
    ]);
  });
});

describe('reading every row', () => {
  it('reads window after window until the count is reached, closing each view', async () => {
    const all = Array.from({ length: 25_000 }, (_, i) => ({ id: i, subject: `/TRADE/a/${i}`, index: i, seq: 1, ts: 1, fields: { orderId: i } }));
    const asked: { offset: number; size: number; filter: string | undefined }[] = [];
    let closed = 0;
    const open: OpenView = (request, handler) => {
      const { offset, size } = request.window ?? { offset: 0, size: 0 };
      asked.push({ offset, size, filter: request.filter });
      queueMicrotask(() => handler.onRows?.(all.slice(offset, offset + size), all.length, undefined as never));
      return { close: () => void closed++ } as never;
    };
    const rows = await readAllRows(open, '/BLOTTER/a', 'side = "buy"');
    expect(rows.map((r) => r.fields.orderId)).toEqual(all.map((r) => r.fields.orderId));
    expect(asked).toEqual([
      { offset: 0, size: 10_000, filter: 'side = "buy"' },
      { offset: 10_000, size: 10_000, filter: 'side = "buy"' },
      { offset: 20_000, size: 10_000, filter: 'side = "buy"' },
    ]);
    expect(closed).toBe(3);
  });
  it('rejects with the server refusal, and when logged out', async () => {
    const refusing: OpenView = (_request, handler) => {
      queueMicrotask(() => handler.onError?.({ code: 'BAD_REQUEST', message: 'filter at 1: nope' } as never));
      return { close: () => undefined } as never;
    };
    await expect(readAllRows(refusing, '/BLOTTER/a', 'x')).rejects.toThrow('BAD_REQUEST: filter at 1: nope');
    await expect(readAllRows(() => undefined, '/BLOTTER/a', '')).rejects.toThrow('not logged in');
  });
});
