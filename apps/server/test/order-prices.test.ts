/**
 * Limit prices and quantities at the edges of a double, end to end: a real server (real engine,
 * journal in a temp directory, uWS on 127.0.0.1 port 0), instruments published through /source,
 * raw order frames written as text (so the exponents are exactly what a client can send) on the
 * engine's fast path and on the decoder path, and amends through the SDK. Every absurd price is
 * an `order.reject` naming the rule, the value as sent and the bound with the tick's decimals;
 * nothing of it is journaled; a valid order is still acknowledged.
 */

import { OrderRejectedError } from '@tidewire/client';
import type { ServerMessage } from '@tidewire/protocol';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { closeAll, image, removeTempDirs, sdkClient, sourceSocket, startTestServer, streamSocket, tempDir, type RawSocket } from './helpers.js';

afterEach(closeAll);
afterAll(removeTempDirs);

/** /FX/EURUSD with the tick the FX feed publishes (10 ** -5), /PRODUCT/BANDED with tick 0.01 and a 50..150 band. */
async function priceServer() {
  const server = await startTestServer({
    orders: { journalDir: tempDir('tidewire-prices-'), maxQuantity: 1_000_000, fillIntervalMs: 10 },
    limits: { ordersPerSecPerUser: 0, requestsPerSec: 0 },
  });
  const source = await sourceSocket(server);
  source.publish([
    image('/FX/EURUSD', { bid: 1.085, ask: 1.0852, tickSize: 10 ** -5 }),
    image('/PRODUCT/BANDED', { bid: 99.5, ask: 99.75, tickSize: 0.01, minPrice: 50, maxPrice: 150 }),
  ]);
  await source.barrier();
  return { server, trader: await streamSocket(server) };
}

let nextReq = 100;

/**
 * Sends an `order.submit` whose price and quantity are written as the given JSON number text;
 * `slowPath` escapes one character of the client order id, which the engine's fast path leaves to
 * the protocol decoder. Resolves with the reply to it.
 */
async function submitRaw(s: RawSocket, price: string, opts: { quantity?: string; instrument?: string; slowPath?: boolean } = {}): Promise<ServerMessage> {
  const reqId = nextReq++;
  const cid = opts.slowPath ? `p\\u002d${reqId}` : `p-${reqId}`;
  s.send(`{"type":"order.submit","reqId":${reqId},"clientOrderId":"${cid}","instrument":"${opts.instrument ?? '/FX/EURUSD'}","side":"buy","quantity":${opts.quantity ?? '10'},"price":${price},"timeInForce":"gtc"}`);
  return s.next((m) => 'reqId' in m && m.reqId === reqId, `reply to ${reqId}`);
}

async function rejected(p: Promise<unknown>): Promise<OrderRejectedError> {
  const e = await p.then(() => undefined, (x: unknown) => x);
  expect(e).toBeInstanceOf(OrderRejectedError);
  return e as OrderRejectedError;
}

function rejectOf(m: ServerMessage): [string, string, string] {
  if (m.type !== 'order.reject') throw new Error(`expected order.reject, got ${JSON.stringify(m)}`);
  return [m.field, m.rule, m.message];
}

describe('order prices at the edges of a double, over a real server', () => {
  it('rejects absurd prices and quantities on submit, naming the rule and the bound, on both paths', async () => {
    const { server, trader } = await priceServer();
    const cases: Array<[string, { quantity?: string; instrument?: string }, [string, string, string]]> = [
      ['5e-324', {}, ['price', 'belowLimit', 'price 5e-324 is below the minimum 0.00001 for /FX/EURUSD']],
      ['1e308', {}, ['price', 'aboveLimit', 'price 1e+308 is above the maximum 10000.00000 for /FX/EURUSD']],
      ['1E+308', {}, ['price', 'aboveLimit', 'price 1e+308 is above the maximum 10000.00000 for /FX/EURUSD']],
      ['1.7976931348623157e308', {}, ['price', 'aboveLimit', 'price 1.7976931348623157e+308 is above the maximum 10000.00000 for /FX/EURUSD']],
      ['1e-9', {}, ['price', 'belowLimit', 'price 1e-9 is below the minimum 0.00001 for /FX/EURUSD']],
      ['10000.00001', {}, ['price', 'aboveLimit', 'price 10000.00001 is above the maximum 10000.00000 for /FX/EURUSD']],
      ['1e-400', {}, ['price', 'notPositive', 'price 0 must be > 0']],
      ['-0', {}, ['price', 'notPositive', 'price 0 must be > 0']],
      ['1.080001', {}, ['price', 'offTick', 'price 1.080001 is not a multiple of tick 0.00001 for /FX/EURUSD (nearest: 1.08000, 1.08001)']],
      ['49.99', { instrument: '/PRODUCT/BANDED' }, ['price', 'belowLimit', 'price 49.99 is below the minimum 50.00 for /PRODUCT/BANDED']],
      ['150.01', { instrument: '/PRODUCT/BANDED' }, ['price', 'aboveLimit', 'price 150.01 is above the maximum 150.00 for /PRODUCT/BANDED']],
      ['1.0852', { quantity: '1e308' }, ['quantity', 'aboveLimit', 'quantity 1e+308 is above the limit 1000000']],
      ['1.0852', { quantity: '5e-324' }, ['quantity', 'notWhole', 'quantity 5e-324 must be a whole number']],
    ];
    for (const [price, opts, want] of cases) {
      for (const slowPath of [false, true]) {
        expect(rejectOf(await submitRaw(trader, price, { ...opts, slowPath })), `${price} ${JSON.stringify(opts)} slowPath=${slowPath}`).toEqual(want);
      }
    }
    // Not a finite double: the decoder's error, never an order.reject (JSON has no NaN; 1e999 is Infinity).
    for (const price of ['1e999', '-1e999']) {
      const m = await submitRaw(trader, price);
      expect(m).toMatchObject({ type: 'error', code: 'BAD_REQUEST', field: 'price' });
    }
    const stats = server.engine.stats();
    expect(stats.ordersAccepted).toBe(0);
    expect(stats.ordersRejected).toBe(cases.length * 2);
    expect(stats.journalDurableSeq).toBe(0);
    // The valid orders at the bounds are acknowledged.
    for (const [price, instrument] of [['1.0852', '/FX/EURUSD'], ['10000', '/FX/EURUSD'], ['0.00001', '/FX/EURUSD'], ['50', '/PRODUCT/BANDED'], ['150', '/PRODUCT/BANDED']] as const) {
      const m = await submitRaw(trader, price, { instrument });
      expect(m, `${price} on ${instrument}`).toMatchObject({ type: 'order.ack', status: 'acknowledged' });
    }
  });

  it('rejects an amend to an absurd price with the same rules and keeps the order as it was', async () => {
    const { server } = await priceServer();
    const client = sdkClient(server);
    await client.connect();
    const ack = await client.submitOrder({ clientOrderId: 'a', instrument: '/FX/EURUSD', side: 'buy', quantity: 100, price: 1.0801, timeInForce: 'gtc' });
    const cases: Array<[number, string, string]> = [
      [1e308, 'aboveLimit', 'price 1e+308 is above the maximum 10000.00000 for /FX/EURUSD'],
      [Number.MAX_VALUE, 'aboveLimit', 'price 1.7976931348623157e+308 is above the maximum 10000.00000 for /FX/EURUSD'],
      [5e-324, 'belowLimit', 'price 5e-324 is below the minimum 0.00001 for /FX/EURUSD'],
      [1e-9, 'belowLimit', 'price 1e-9 is below the minimum 0.00001 for /FX/EURUSD'],
      [1.080001, 'offTick', 'price 1.080001 is not a multiple of tick 0.00001 for /FX/EURUSD (nearest: 1.08000, 1.08001)'],
    ];
    for (const [price, rule, message] of cases) {
      const e = await rejected(client.amendOrder('a', { price }));
      expect([e.action, e.field, e.rule, e.message], String(price)).toEqual(['amend', 'price', rule, message]);
    }
    const q = await rejected(client.amendOrder('a', { quantity: 1e308 }));
    expect([q.field, q.rule, q.message]).toEqual(['quantity', 'aboveLimit', 'quantity 1e+308 is above the limit 1000000']);
    expect(server.engine.stats().journalDurableSeq).toBeLessThanOrEqual(ack.seq + 1); // the submit and its acknowledgement only
    // A valid amend still goes through, and the order shows the price it asked for.
    const amended = await client.amendOrder('a', { price: 1.0802 });
    expect(amended).toMatchObject({ action: 'amend', clientOrderId: 'a', orderId: ack.orderId });
    expect(server.engine.stats().ordersRejected).toBe(cases.length + 1);
  });
});
