/**
 * The `order.submit` fast path (order.ts `submitFrame`, the engine's one-call `orderSubmitFrame`):
 * the same replies and the same engine orders as the decoder path, for every scenario of
 * order.test.ts; and the engine's frame reader takes only frames the protocol decoder accepts as
 * that same order.submit (differential, over mutations).
 */

import { decodeClientMessage, isDecodeFailure } from '@tidewire/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import type { UserEntry } from '../config.js';
import { ORDER_FRAME_NO_TOKEN, ORDER_FRAME_NOT_TAKEN, type OrderGrants, type OrderSubmitInput } from '../engine-port.js';
import { setLogSink } from '../log.js';
import { closeRealEngine, FakeOrderEngine, orderRig, realEngine, submit } from '../../test/order-rig.js';

setLogSink(() => {});

afterAll(closeRealEngine);

/**
 * The order-rig engine; with `fast`, frames reach the real engine's reader and grants check
 * (`orderSubmitFrame` without an order token: it submits nothing), and the submits it permits
 * with a token arrive as frames.
 */
class FastOrderEngine extends FakeOrderEngine {
  framesTaken = 0;
  orderSubmitFrame?: (sid: number, frame: Uint8Array, grants: OrderGrants, token: boolean) => number;
  constructor(fast: boolean) {
    super();
    if (!fast) return;
    this.orderSubmitFrame = (sid, frame, grants, token) => {
      const r = realEngine().orderSubmitFrame(sid, Buffer.from(frame), grants, false);
      if (r === ORDER_FRAME_NOT_TAKEN) return r;
      expect(r).toBe(ORDER_FRAME_NO_TOKEN);
      this.framesTaken++;
      if (!token) return r;
      const m = JSON.parse(Buffer.from(frame).toString()) as OrderSubmitInput & { reqId: number };
      const order: OrderSubmitInput = { clientOrderId: m.clientOrderId, instrument: m.instrument, side: m.side, quantity: m.quantity, timeInForce: m.timeInForce };
      if (m.price !== undefined) order.price = m.price;
      this.call(['submit', sid, m.reqId, order]);
      return m.reqId;
    };
  }
}

const setup = (fast: boolean, role: UserEntry['role'], orders: Record<string, unknown>, limits: Record<string, unknown>) =>
  orderRig(new FastOrderEngine(fast), role, orders, limits);

type Rig = ReturnType<typeof setup>;

/** Runs `scenario` on the decoder path and on the fast path: same frames out, same engine calls; returns the fast rig. */
function bothPaths(scenario: (t: Rig) => void, role: UserEntry['role'] = 'trader', orders: Record<string, unknown> = { journalDir: '/tmp/j' }, limits: Record<string, unknown> = {}): Rig {
  const slow = setup(false, role, orders, limits);
  const fast = setup(true, role, orders, limits);
  scenario(slow);
  scenario(fast);
  expect(fast.port.frames).toEqual(slow.port.frames);
  expect(fast.engine.calls).toEqual(slow.engine.calls);
  return fast;
}

describe('order.submit fast path', () => {
  it('sends well-formed submits as frames (market orders without price), other order requests decoded', () => {
    const t = bothPaths((r) => {
      r.send(submit);
      r.send(' {"timeInForce":"ioc","side":"sell","quantity":5,"instrument":"/FX/EURUSD","clientOrderId":"m-1","reqId":8,"type":"order.submit"}\n');
      r.send({ type: 'order.cancel', reqId: 9, clientOrderId: 'c-1' });
      r.send({ type: 'order.amend', reqId: 10, clientOrderId: 'c-1', price: 1.0851 });
    });
    expect(t.engine.framesTaken).toBe(2);
    expect(t.engine.calls[1]).toEqual(['submit', 42, 8, { clientOrderId: 'm-1', instrument: '/FX/EURUSD', side: 'sell', quantity: 5, timeInForce: 'ioc' }]);
    expect(t.port.frames).toEqual([]);
  });

  it('refuses roles without orders and disabled orders as the decoder path does (the engine reads nothing)', () => {
    expect(bothPaths((r) => r.send(submit), 'source').engine.framesTaken).toBe(0);
    expect(bothPaths((r) => r.send(submit), 'admin', { journalDir: '' }).port.frames[0]![0]).toMatchObject({ code: 'UNAVAILABLE', reqId: 7 });
  });

  it('answers entitlement, order-rate and request-rate refusals with the frame reqId', () => {
    const t = bothPaths((r) => {
      r.send({ ...submit, instrument: '/TRADE/bob/1' });
      for (let i = 1; i <= 3; i++) r.send({ ...submit, reqId: i, clientOrderId: `c-${i}` });
    }, 'trader', { journalDir: '/tmp/j' }, { ordersPerSecPerUser: 2 });
    expect(t.port.frames.map((f) => f[0])).toMatchObject([{ code: 'NOT_ENTITLED', reqId: 7, field: 'instrument' }, { code: 'RATE_LIMITED', reqId: 3 }]);
    const r = bothPaths((x) => {
      for (let i = 1; i <= 3; i++) x.send({ ...submit, reqId: i, clientOrderId: `r-${i}` });
    }, 'trader', { journalDir: '/tmp/j' }, { requestsPerSec: 1 });
    expect(r.port.frames.map((f) => f[0])).toMatchObject([{ code: 'RATE_LIMITED', reqId: 3, message: expect.stringContaining("'order.submit' was not handled") }]);
  });

  it('turns what the engine throws into an error frame with the reqId', () => {
    const t = bothPaths((r) => {
      r.engine.fail = Object.assign(new Error('orders are disabled (no journalDir)'), { code: 'UNAVAILABLE' });
      r.send(submit);
      r.engine.fail = new TypeError('boom');
      r.send({ ...submit, reqId: 8 });
    });
    expect(t.port.frames.map((f) => f[0])).toMatchObject([{ reqId: 7, code: 'UNAVAILABLE' }, { reqId: 8, code: 'INTERNAL' }]);
  });

  it('leaves malformed, duplicated, escaped and not-logged-in frames to the decoder', () => {
    const t = bothPaths((r) => {
      r.send({ ...submit, side: 'long' });
      r.send('{"type":"order.submit","reqId":7,"reqId":8,"clientOrderId":"c-1","instrument":"/FX/EURUSD","side":"buy","quantity":1,"timeInForce":"day"}');
      r.send('{"type":"order.submit","reqId":9,"clientOrderId":"c\\u002d2","instrument":"/FX/EURUSD","side":"buy","quantity":1,"timeInForce":"day"}');
      r.send({ ...submit, quantity: '1' });
      r.session.state = 'anonymous';
      r.send(submit);
    });
    expect(t.engine.framesTaken).toBe(0);
    expect(t.engine.calls.map((c) => c[2])).toEqual([8, 9]);
    expect(t.port.frames.map((f) => f[0])).toMatchObject([{ field: 'side' }, { field: 'quantity' }, { code: 'NOT_LOGGED_IN' }]);
  });
});

describe('engine order frame reader vs the protocol decoder', () => {
  it('takes only frames the decoder reads as the same order.submit (random mutations of real frames)', () => {
    const base = [
      JSON.stringify(submit),
      JSON.stringify({ ...submit, price: undefined, side: 'sell', timeInForce: 'gtc', quantity: -0.5e-3 }),
      '{ "type" : "order.submit" , "reqId" : 0 , "clientOrderId" : "L.a:b_c-1" , "instrument" : "/A/b@T1" , "side" : "buy" , "quantity" : 1e2 , "price" : 12.5E-1 , "timeInForce" : "ioc" }',
    ];
    const alphabet = '{}[]":,.-+eE0123456789 \\/abcdefgiklmnopqrstuvwyzABCDT_@\u00e9\u0000\t\n';
    let seed = 12345;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed % n;
    };
    const nothing = realEngine().orderGrants('alice', 'trader', [], null, []);
    let taken = 0;
    for (let i = 0; i < 20_000; i++) {
      let s = base[i % base.length]!;
      for (let k = 0, edits = 1 + rand(3); k < edits && i >= base.length; k++) {
        const at = rand(s.length + 1);
        const ch = alphabet[rand(alphabet.length)]!;
        const op = rand(3);
        s = op === 0 ? s.slice(0, at) + s.slice(at + 1) : op === 1 ? s.slice(0, at) + ch + s.slice(at) : s.slice(0, at) + ch + s.slice(at + 1);
      }
      // grants that permit nothing: a frame the reader takes is refused naming its instrument
      let instrument: string | undefined;
      try {
        if (realEngine().orderSubmitFrame(1, Buffer.from(s), nothing, true) === ORDER_FRAME_NOT_TAKEN) continue;
        throw new Error(`permitted with no rules: ${s}`);
      } catch (err) {
        instrument = /may not order '(.*)'$/.exec((err as Error).message)?.[1];
        expect((err as { code?: string }).code).toBe('NOT_ENTITLED');
      }
      taken++;
      const m = decodeClientMessage(s);
      if (isDecodeFailure(m) || m.type !== 'order.submit') throw new Error(`the reader took a frame the decoder refuses: ${s}`);
      expect(m.instrument).toBe(instrument);
    }
    expect(taken).toBeGreaterThan(base.length); // mutations that stay valid (digits, key order) are taken too
  });
});
