import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { TidewireClient } from './client.js';
import { TidewireError } from './errors.js';
import { OrderRejectedError } from './orders.js';
import { ScriptedPeer } from './scripted-peer.test-support.js';

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function connected(options: { requestTimeoutMs?: number; clock?: () => number } = {}) {
  const p = await ScriptedPeer.start();
  cleanup.push(() => p.close());
  const c = new TidewireClient({
    url: p.url,
    WebSocket,
    credentials: { user: 'alice', password: 'alice123' },
    reconnect: { initialDelayMs: 10, maxDelayMs: 50 },
    requestTimeoutMs: options.requestTimeoutMs ?? 2_000,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  cleanup.push(() => c.close());
  await c.connect();
  return { p, c, conn: await p.connection(0) };
}

describe('TidewireClient orders', () => {
  it('submits with a generated client order id and default time in force, and resolves with the ack', async () => {
    const { c, conn } = await connected({ clock: () => 1_700_000_000_123.7 });
    const acked = c.submitOrder({ instrument: '/FX/EURUSD', side: 'buy', quantity: 1_000_000, price: 1.0852 });
    const sent = await conn.next('order.submit');
    expect(sent).toEqual({
      type: 'order.submit', reqId: sent.reqId, clientOrderId: '1700000000123-1', instrument: '/FX/EURUSD',
      side: 'buy', quantity: 1_000_000, price: 1.0852, timeInForce: 'day',
    });
    conn.send([{ type: 'order.ack', reqId: sent.reqId, action: 'submit', clientOrderId: sent.clientOrderId, orderId: 1, seq: 1, status: 'acknowledged' }]);
    await expect(acked).resolves.toEqual({ type: 'order.ack', reqId: sent.reqId, action: 'submit', clientOrderId: '1700000000123-1', orderId: 1, seq: 1, status: 'acknowledged' });
    // the next generated id is unique within the client; a market order sends no price
    const second = c.submitOrder({ instrument: '/FX/EURUSD', side: 'sell', quantity: 5, timeInForce: 'ioc' });
    const sent2 = await conn.next('order.submit', conn.received.indexOf(sent) + 1);
    expect(sent2.clientOrderId).toBe('1700000000123-2');
    expect('price' in sent2).toBe(false);
    expect(sent2.timeInForce).toBe('ioc');
    conn.send([{ type: 'order.ack', reqId: sent2.reqId, action: 'submit', clientOrderId: sent2.clientOrderId, orderId: 2, seq: 3, status: 'acknowledged' }]);
    await expect(second).resolves.toMatchObject({ orderId: 2 });
  });

  it('rejects with OrderRejectedError carrying field, rule and message', async () => {
    const { c, conn } = await connected();
    const result = c.submitOrder({ clientOrderId: 'big', instrument: '/FX/EURUSD', side: 'buy', quantity: 5e9 });
    const sent = await conn.next('order.submit');
    conn.send([{ type: 'order.reject', reqId: sent.reqId, action: 'submit', clientOrderId: 'big', field: 'quantity', rule: 'aboveLimit', message: 'quantity 5000000000 is above the limit 1000000000' }]);
    const e = await result.catch((x: unknown) => x);
    expect(e).toBeInstanceOf(OrderRejectedError);
    expect(e).toBeInstanceOf(TidewireError);
    expect(e).toMatchObject({ code: 'ORDER_REJECTED', retryable: false, action: 'submit', clientOrderId: 'big', field: 'quantity', rule: 'aboveLimit', reqId: sent.reqId });
    expect((e as Error).message).toBe('quantity 5000000000 is above the limit 1000000000');
  });

  it('cancels and amends by client order id', async () => {
    const { c, conn } = await connected();
    const cancelled = c.cancelOrder('c-1');
    const cancel = await conn.next('order.cancel');
    expect(cancel).toEqual({ type: 'order.cancel', reqId: cancel.reqId, clientOrderId: 'c-1' });
    conn.send([{ type: 'order.ack', reqId: cancel.reqId, action: 'cancel', clientOrderId: 'c-1', orderId: 4, seq: 9, status: 'cancelled' }]);
    await expect(cancelled).resolves.toMatchObject({ action: 'cancel', status: 'cancelled' });

    const amended = c.amendOrder('c-2', { price: 1.0851 });
    const amend = await conn.next('order.amend');
    expect(amend).toEqual({ type: 'order.amend', reqId: amend.reqId, clientOrderId: 'c-2', price: 1.0851 });
    conn.send([{ type: 'order.reject', reqId: amend.reqId, action: 'amend', clientOrderId: 'c-2', field: 'order', rule: 'notOpen', message: 'order c-2 is filled' }]);
    await expect(amended).rejects.toMatchObject({ code: 'ORDER_REJECTED', field: 'order', rule: 'notOpen' });
  });

  it('passes server errors through (UNAVAILABLE when orders are off)', async () => {
    const { c, conn } = await connected();
    const result = c.submitOrder({ instrument: '/FX/EURUSD', side: 'buy', quantity: 1 });
    const sent = await conn.next('order.submit');
    conn.send([{ type: 'error', reqId: sent.reqId, code: 'UNAVAILABLE', message: 'orders are disabled: set orders.journalDir' }]);
    await expect(result).rejects.toMatchObject({ code: 'UNAVAILABLE', retryable: true, message: 'orders are disabled: set orders.journalDir' });
  });

  it('refuses malformed requests before sending, naming the field', async () => {
    const { c, conn } = await connected();
    await expect(c.submitOrder({ instrument: '/FX/EURUSD', side: 'buy', quantity: Number.NaN })).rejects.toMatchObject({ code: 'BAD_REQUEST', field: 'quantity', message: "'quantity' (NaN) must be a finite number" });
    await expect(c.submitOrder({ clientOrderId: 'a b', instrument: '/FX/EURUSD', side: 'buy', quantity: 1 })).rejects.toMatchObject({ code: 'BAD_REQUEST', field: 'clientOrderId' });
    await expect(c.submitOrder({ instrument: 'EURUSD', side: 'buy', quantity: 1 })).rejects.toMatchObject({ code: 'BAD_REQUEST', field: 'instrument' });
    await expect(c.submitOrder({ instrument: '/FX/EURUSD', side: 'long' as 'buy', quantity: 1 })).rejects.toMatchObject({ code: 'BAD_REQUEST', field: 'side' });
    await expect(c.amendOrder('c-1', {})).rejects.toMatchObject({ code: 'BAD_REQUEST', field: 'quantity' });
    await expect(c.amendOrder('c-1', { price: Infinity })).rejects.toMatchObject({ code: 'BAD_REQUEST', field: 'price' });
    await expect(c.cancelOrder('')).rejects.toMatchObject({ code: 'BAD_REQUEST', field: 'clientOrderId' });
    // nothing but the login reached the server
    expect(conn.received.map((m) => m.type)).toEqual(['session.login']);
  });

  it('rejects an order in flight with DISCONNECTED when the connection drops, and does not queue orders while logged out', async () => {
    const { c, conn } = await connected();
    const result = c.submitOrder({ clientOrderId: 'lost-1', instrument: '/FX/EURUSD', side: 'buy', quantity: 1 });
    await conn.next('order.submit');
    conn.socket.terminate();
    await expect(result).rejects.toMatchObject({ code: 'DISCONNECTED', retryable: true });
    c.close();
    await expect(c.submitOrder({ instrument: '/FX/EURUSD', side: 'buy', quantity: 1 })).rejects.toMatchObject({ code: 'DISCONNECTED' });
    await expect(c.cancelOrder('lost-1')).rejects.toMatchObject({ code: 'DISCONNECTED' });
  });

  it('times out an order the server never answers', async () => {
    const { c } = await connected({ requestTimeoutMs: 100 });
    await expect(c.submitOrder({ instrument: '/FX/EURUSD', side: 'buy', quantity: 1 })).rejects.toMatchObject({ code: 'TIMEOUT' });
  });
});
