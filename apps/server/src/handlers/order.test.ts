import { afterAll, describe, expect, it } from 'vitest';
import type { UserEntry } from '../config.js';
import { setLogSink } from '../log.js';
import { closeRealEngine, FakeOrderEngine, orderRig, submit } from '../../test/order-rig.js';

afterAll(closeRealEngine);

setLogSink(() => {});

const setup = (role?: UserEntry['role'], orders?: Record<string, unknown>, limits?: Record<string, unknown>) =>
  orderRig(new FakeOrderEngine(), role, orders, limits);

describe('order handler', () => {
  it('passes submit (no price key for a market order), cancel and amend (null when absent) to the engine and replies nothing itself', () => {
    const t = setup();
    t.send(submit);
    t.send({ ...submit, reqId: 8, clientOrderId: 'm-1', price: undefined, timeInForce: 'ioc' });
    t.send({ type: 'order.cancel', reqId: 9, clientOrderId: 'c-1' });
    t.send({ type: 'order.amend', reqId: 10, clientOrderId: 'c-1', price: 1.0851 });
    t.send({ type: 'order.amend', reqId: 11, clientOrderId: 'c-1', quantity: 5 });
    expect(t.engine.calls).toEqual([
      ['submit', 42, 7, { clientOrderId: 'c-1', instrument: '/FX/EURUSD', side: 'buy', quantity: 100, price: 1.0852, timeInForce: 'day' }],
      ['submit', 42, 8, { clientOrderId: 'm-1', instrument: '/FX/EURUSD', side: 'buy', quantity: 100, timeInForce: 'ioc' }],
      ['cancel', 42, 9, 'c-1'],
      ['amend', 42, 10, 'c-1', null, 1.0851],
      ['amend', 42, 11, 'c-1', 5, null],
    ]);
    expect('price' in (t.engine.calls[1]![3] as object)).toBe(false);
    expect(t.port.frames).toEqual([]);
  });

  it('refuses a source session with NOT_ENTITLED, the engine never sees it', () => {
    const t = setup('source');
    t.send(submit);
    expect(t.port.last()).toEqual({ type: 'error', reqId: 7, code: 'NOT_ENTITLED', message: "'order.submit' needs the trader or admin role; user 'alice' has role 'source'" });
    expect(t.engine.calls).toEqual([]);
  });

  it('answers UNAVAILABLE naming the setting when orders are disabled', () => {
    const t = setup('admin', { journalDir: '' });
    t.send({ type: 'order.cancel', reqId: 3, clientOrderId: 'c-1' });
    expect(t.port.last()).toMatchObject({ type: 'error', reqId: 3, code: 'UNAVAILABLE', message: expect.stringContaining('orders.journalDir') });
    expect(t.engine.calls).toEqual([]);
  });

  it('refuses an instrument the user may not order (entitlements), and a rate above the per-user limit', () => {
    const t = setup('trader', { journalDir: '/tmp/j' }, { ordersPerSecPerUser: 2 });
    t.send({ ...submit, instrument: '/TRADE/bob/1' });
    expect(t.port.last()).toMatchObject({ type: 'error', reqId: 7, code: 'NOT_ENTITLED', field: 'instrument' });
    t.send({ ...submit, reqId: 1 });
    t.send({ ...submit, reqId: 2 });
    t.send({ ...submit, reqId: 3 });
    expect(t.port.last()).toMatchObject({ type: 'error', reqId: 3, code: 'RATE_LIMITED' });
    expect(t.engine.calls.map((c) => c[2])).toEqual([1, 2]);
  });

  it('turns what the engine throws into an error frame with the reqId (unknown shapes: INTERNAL)', () => {
    const t = setup();
    t.engine.fail = Object.assign(new Error('orders are disabled (no journalDir)'), { code: 'UNAVAILABLE' });
    t.send(submit);
    expect(t.port.last()).toEqual({ type: 'error', reqId: 7, code: 'UNAVAILABLE', message: 'orders are disabled (no journalDir)' });
    t.engine.fail = new TypeError('boom');
    t.send({ type: 'order.cancel', reqId: 8, clientOrderId: 'c-1' });
    expect(t.port.last()).toMatchObject({ type: 'error', reqId: 8, code: 'INTERNAL' });
  });

  it('leaves malformed orders to the decoder (BAD_REQUEST naming the field) and needs a login', () => {
    const t = setup();
    t.send({ ...submit, side: 'long' });
    expect(t.port.last()).toMatchObject({ type: 'error', reqId: 7, code: 'BAD_REQUEST', field: 'side' });
    t.session.state = 'anonymous';
    t.send(submit);
    expect(t.port.last()).toMatchObject({ type: 'error', reqId: 7, code: 'NOT_LOGGED_IN' });
    expect(t.engine.calls).toEqual([]);
  });
});
