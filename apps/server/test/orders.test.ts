/**
 * Orders end to end: real server (real engine with a journal in a fresh temp directory,
 * real uWS) on 127.0.0.1 port 0, instruments published through /source, the client SDK as the
 * trader. Covers ack with seq, every reject rule with field/rule, cancel/amend, trade record and
 * blotter progressing to filled, privacy, roles, and a server without a journal.
 */

import { OrderRejectedError, type ClientRecord, type TidewireError, type ViewRow } from '@tidewire/client';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { closeAll, image, removeTempDirs, sdkClient, sourceSocket, startTestServer, streamSocket, tempDir, TEST_ROLES, waitFor } from './helpers.js';

afterEach(closeAll);
afterAll(removeTempDirs);

/** A server with orders on, instruments /FX/EURUSD and /PRODUCT/BOND1 (tickSize 0.01) published. */
async function orderServer(orders: Record<string, unknown> = {}) {
  const server = await startTestServer({
    orders: { journalDir: tempDir('tidewire-orders-'), maxQuantity: 1_000_000, fillIntervalMs: 10, ...orders },
    limits: { ordersPerSecPerUser: 0, requestsPerSec: 0 },
  });
  const source = await sourceSocket(server);
  source.publish([
    image('/FX/EURUSD', { bid: 1.0850, ask: 1.0852 }),
    image('/PRODUCT/BOND1', { bid: 99.5, ask: 99.75, tickSize: 0.01 }),
  ]);
  await source.barrier(); // applied before the orders (control-lane requests would overtake them)
  const client = sdkClient(server);
  await client.connect();
  return { server, source, client };
}

async function rejected(p: Promise<unknown>): Promise<OrderRejectedError> {
  const e = await p.then(() => undefined, (x: unknown) => x);
  expect(e).toBeInstanceOf(OrderRejectedError);
  return e as OrderRejectedError;
}

describe('orders over a real server', () => {
  it('acknowledges a submit with the order id and the journal seq, once durable', async () => {
    const { client, server } = await orderServer();
    const ack = await client.submitOrder({ clientOrderId: 'c-1', instrument: '/FX/EURUSD', side: 'buy', quantity: 1000, price: 1.08 });
    expect(ack).toMatchObject({ type: 'order.ack', action: 'submit', clientOrderId: 'c-1', orderId: 1, status: 'acknowledged' });
    expect(ack.seq).toBeGreaterThanOrEqual(1);
    const second = await client.submitOrder({ instrument: '/FX/EURUSD', side: 'sell', quantity: 5, price: 1.09 });
    expect(second.orderId).toBe(2);
    expect(second.seq).toBeGreaterThan(ack.seq);
    expect(second.clientOrderId).toMatch(/^\d+-1$/);
    const stats = server.engine.stats();
    expect(stats.ordersAccepted).toBe(2);
    expect(stats.journalDurableSeq).toBeGreaterThanOrEqual(second.seq);
  });

  it('brings every reject rule to the client with its field and rule, and a reject changes nothing', async () => {
    const { client, server } = await orderServer();
    const base = { instrument: '/FX/EURUSD', side: 'buy' as const, quantity: 10, price: 1.08 };
    const cases: Array<[Promise<unknown>, string, string]> = [
      [client.submitOrder({ ...base, instrument: '/FX/NOPE' }), 'instrument', 'unknownInstrument'],
      [client.submitOrder({ ...base, quantity: 0 }), 'quantity', 'notPositive'],
      [client.submitOrder({ ...base, quantity: -5 }), 'quantity', 'notPositive'],
      [client.submitOrder({ ...base, quantity: 1.5 }), 'quantity', 'notWhole'],
      [client.submitOrder({ ...base, quantity: 2_000_000 }), 'quantity', 'aboveLimit'],
      [client.submitOrder({ ...base, price: 1.080001 }), 'price', 'offTick'],
      [client.submitOrder({ ...base, instrument: '/PRODUCT/BOND1', price: 99.755 }), 'price', 'offTick'],
      [client.submitOrder({ ...base, price: 0 }), 'price', 'notPositive'],
      [client.cancelOrder('never-sent'), 'clientOrderId', 'unknownOrder'],
      [client.amendOrder('never-sent', { quantity: 3 }), 'clientOrderId', 'unknownOrder'],
    ];
    for (const [p, field, rule] of cases) {
      const e = await rejected(p);
      expect([e.field, e.rule], e.message).toEqual([field, rule]);
      expect(e.message.length).toBeGreaterThan(0);
    }
    const before = server.engine.stats();
    expect(before.ordersAccepted).toBe(0);
    expect(before.ordersRejected).toBe(cases.length);
    // a durable order, then the rules that need one
    await client.submitOrder({ ...base, clientOrderId: 'dup', price: 1.07 });
    const dup = await rejected(client.submitOrder({ ...base, clientOrderId: 'dup' }));
    expect([dup.field, dup.rule, dup.action, dup.clientOrderId]).toEqual(['clientOrderId', 'duplicate', 'submit', 'dup']);
    const same = await rejected(client.amendOrder('dup', { quantity: 10, price: 1.07 }));
    expect([same.field, same.rule]).toEqual(['order', 'noChange']);
    await client.cancelOrder('dup');
    const closed = await rejected(client.cancelOrder('dup'));
    expect([closed.field, closed.rule]).toEqual(['order', 'notOpen']);
    const journal = server.engine.stats().journalDurableSeq;
    await rejected(client.amendOrder('dup', { quantity: 1 }));
    expect(server.engine.stats().journalDurableSeq).toBe(journal);
  });

  it('cancels and amends open orders, each acked when durable with the status after it', async () => {
    const { client } = await orderServer();
    const a = await client.submitOrder({ clientOrderId: 'a', instrument: '/FX/EURUSD', side: 'buy', quantity: 100, price: 1.07 });
    const amended = await client.amendOrder('a', { quantity: 200, price: 1.071 });
    expect(amended).toMatchObject({ action: 'amend', clientOrderId: 'a', orderId: a.orderId, status: 'acknowledged' });
    expect(amended.seq).toBeGreaterThan(a.seq);
    const cancelled = await client.cancelOrder('a');
    expect(cancelled).toMatchObject({ action: 'cancel', clientOrderId: 'a', orderId: a.orderId, status: 'cancelled' });
    expect(cancelled.seq).toBeGreaterThan(amended.seq);
  });

  it('publishes the trade record and the blotter; fills on market ticks move the order to filled', async () => {
    const { client, source } = await orderServer();
    let blotter: ViewRow[] = [];
    client.view({ container: '/BLOTTER/alice', window: { offset: 0, size: 20 } }, { onRows: (rows) => (blotter = structuredClone([...rows])) });
    const resting = await client.submitOrder({ clientOrderId: 'rest', instrument: '/FX/EURUSD', side: 'buy', quantity: 100, price: 1.08 });
    const filling = await client.submitOrder({ clientOrderId: 'fill', instrument: '/FX/EURUSD', side: 'buy', quantity: 1000, price: 1.0852 });
    await waitFor(() => blotter.length === 2, 'both orders in the blotter', 10_000);
    // newest first
    expect(blotter.map((r) => r.subject)).toEqual([`/TRADE/alice/${filling.orderId}`, `/TRADE/alice/${resting.orderId}`]);
    let record: ClientRecord | undefined;
    let marketRecord: ClientRecord | undefined;
    const statuses: string[] = [];
    client.subscribe(`/TRADE/alice/${filling.orderId}`, {
      onImage: (r) => ((record = structuredClone(r)), statuses.push(String(r.fields.status))),
      onUpdate: (r) => ((record = structuredClone(r)), statuses.push(String(r.fields.status))),
    });
    // a market order (no price) fills at the touch too
    const market = await client.submitOrder({ clientOrderId: 'mkt', instrument: '/FX/EURUSD', side: 'sell', quantity: 300, timeInForce: 'gtc' });
    client.subscribe(`/TRADE/alice/${market.orderId}`, { onImage: (r) => (marketRecord = structuredClone(r)), onUpdate: (r) => (marketRecord = structuredClone(r)) });
    // ticks of the instrument drive the simulator: one every 20 ms (a feed's pace), at most 500
    for (let i = 0; i < 500 && (record?.fields.status !== 'filled' || marketRecord?.fields.status !== 'filled'); i++) {
      source.publish([{ type: 'record.publish', subject: '/FX/EURUSD', fields: { bid: 1.0849, ask: 1.0851 } }]);
      await new Promise((r) => setTimeout(r, 20));
    }
    await waitFor(() => record?.fields.status === 'filled', 'the order filled', 10_000);
    const f = record!.fields;
    expect(f).toMatchObject({ orderId: filling.orderId, clientOrderId: 'fill', instrument: '/FX/EURUSD', side: 'buy', quantity: 1000, orderType: 'limit', timeInForce: 'day', statusCode: 10, filledQuantity: 1000, reason: '' });
    expect(f.averagePrice as number).toBeLessThanOrEqual(1.0852);
    expect(f.seq as number).toBeGreaterThan(filling.seq);
    expect(statuses.at(-1)).toBe('filled');
    await waitFor(() => marketRecord?.fields.status === 'filled', 'the market order filled', 10_000);
    expect(marketRecord!.fields).toMatchObject({ clientOrderId: 'mkt', orderType: 'market', side: 'sell', timeInForce: 'gtc', filledQuantity: 300, statusCode: 10 });
    expect(marketRecord!.fields.price ?? 0).toBe(0);
    // the blotter row followed; the resting order (limit below the ask) is still working
    await waitFor(() => blotter.length === 3 && blotter[1]?.fields.statusCode === 10, 'blotter row filled', 10_000);
    expect(blotter.map((r) => r.fields.clientOrderId)).toEqual(['mkt', 'fill', 'rest']);
    expect(blotter[2]?.fields).toMatchObject({ clientOrderId: 'rest', status: 'acknowledged', statusCode: 2 });
    // a filled order cannot be cancelled
    const e = await rejected(client.cancelOrder('fill'));
    expect([e.field, e.rule]).toEqual(['order', 'notOpen']);
  });

  it("refuses another user's blotter and trades, and source publishes under /TRADE and /BLOTTER", async () => {
    const { client, server, source } = await orderServer();
    const ack = await client.submitOrder({ instrument: '/FX/EURUSD', side: 'buy', quantity: 1, price: 1.08 });
    const bob = await streamSocket(server, 'bob');
    bob.send({ type: 'record.subscribe', reqId: 50, subjects: ['/BLOTTER/alice'] });
    bob.send({ type: 'record.subscribe', reqId: 51, subjects: [`/TRADE/alice/${ack.orderId}`] });
    bob.send({ type: 'view.create', reqId: 52, container: '/BLOTTER/alice', window: { offset: 0, size: 10 } });
    for (const reqId of [50, 51, 52]) {
      const m = await bob.next((x) => 'reqId' in x && x.reqId === reqId, `reply ${reqId}`);
      expect(m, JSON.stringify(m)).toMatchObject({ type: 'error', reqId, code: 'NOT_ENTITLED' });
    }
    // bob's own (empty) blotter is his to read
    bob.send({ type: 'record.subscribe', reqId: 53, subjects: ['/BLOTTER/bob'] });
    expect(await bob.next((x) => 'reqId' in x && x.reqId === 53, 'own blotter')).toMatchObject({ type: 'record.subscribed' });
    source.publish([{ type: 'record.publish', subject: `/TRADE/alice/${ack.orderId}`, fields: { status: 'filled' } }]);
    const refused = await source.next((x) => x.type === 'error', 'publish refused');
    expect(refused).toMatchObject({ code: 'NOT_ENTITLED' });
    // a source cannot order at all: /source does not know order messages
    source.send({ type: 'order.submit', reqId: 9, clientOrderId: 'x', instrument: '/FX/EURUSD', side: 'buy', quantity: 1, timeInForce: 'day' });
    expect(await source.next((x) => x.type === 'error' && x.reqId === 9, 'order on /source')).toMatchObject({ code: 'UNKNOWN_TYPE' });
  });

  it('refuses an instrument outside the order grants with the same error on the fast and the decoder path', async () => {
    const server = await startTestServer({
      orders: { journalDir: tempDir('tidewire-orders-') },
      auth: { roles: { ...TEST_ROLES, trader: { subscribe: ['/**'], order: ['/FX/**'] } } },
    });
    const alice = await streamSocket(server);
    // as the SDK writes it (the engine reads the bytes), and with an escape (decoded first)
    alice.send('{"type":"order.submit","reqId":61,"clientOrderId":"s-1","instrument":"/SECRET/X","side":"buy","quantity":1,"timeInForce":"day"}');
    alice.send('{"type":"order.submit","reqId":62,"clientOrderId":"s\\u002d2","instrument":"/SECRET/X","side":"buy","quantity":1,"timeInForce":"day"}');
    for (const reqId of [61, 62]) {
      const m = await alice.next((x) => 'reqId' in x && x.reqId === reqId, `reply ${reqId}`);
      expect(m).toEqual({ type: 'error', reqId, code: 'NOT_ENTITLED', field: 'instrument', message: "user 'alice' (role trader) may not order '/SECRET/X'" });
    }
    expect(server.engine.stats().ordersAccepted).toBe(0);
  });

  it('answers UNAVAILABLE naming the setting when the server has no journal', async () => {
    const server = await startTestServer();
    const client = sdkClient(server);
    await client.connect();
    const e = await client.submitOrder({ instrument: '/FX/EURUSD', side: 'buy', quantity: 1 }).then(() => undefined, (x: TidewireError) => x);
    expect(e).toMatchObject({ code: 'UNAVAILABLE', retryable: true });
    expect(e!.message).toContain('orders.journalDir');
    expect(server.engine.recovery()).toBeNull();
  });
});
