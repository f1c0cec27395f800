import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeClientMessage, decodeServerFrame } from './decode.js';
import { encodeClientMessage, encodeServerFrame } from './encode.js';
import { ORDER_CLIENT_MESSAGE_TYPES, ORDER_SERVER_MESSAGE_TYPES, ORDER_STATUS_CODES, type OrderClientMessage, type OrderServerMessage } from './messages.js';
import { blotterSubject, decodeOrderRequest, encodeOrderFrame, encodeOrderRequest, isClientOrderId, tradeSubject } from './order-codec.js';
import { isDecodeFailure } from './result.js';

const reqId = fc.integer({ min: 0, max: 2 ** 31 - 1 });
const clientOrderId = fc.stringMatching(/^[A-Za-z0-9._:-]{1,64}$/);
const instrument = fc.array(fc.stringMatching(/^[A-Za-z0-9_.@:-]{1,10}$/), { minLength: 1, maxLength: 3 }).map((s) => `/${s.join('/')}`);
const finite = fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0));

const orderRequest: fc.Arbitrary<OrderClientMessage> = fc.oneof(
  fc.record(
    {
      type: fc.constant('order.submit' as const), reqId, clientOrderId, instrument, side: fc.constantFrom('buy' as const, 'sell' as const),
      quantity: finite, price: finite, timeInForce: fc.constantFrom('day' as const, 'ioc' as const, 'gtc' as const),
    },
    { requiredKeys: ['type', 'reqId', 'clientOrderId', 'instrument', 'side', 'quantity', 'timeInForce'] },
  ),
  fc.record({ type: fc.constant('order.cancel' as const), reqId, clientOrderId }),
  fc.record({ type: fc.constant('order.amend' as const), reqId, clientOrderId, quantity: finite, price: finite }, { requiredKeys: ['type', 'reqId', 'clientOrderId', 'quantity'] }),
  fc.record({ type: fc.constant('order.amend' as const), reqId, clientOrderId, price: finite }),
);

describe('order codec', () => {
  it('round-trips every valid order request through both decoders, whatever key order the caller built', () => {
    fc.assert(
      fc.property(orderRequest, (m) => {
        const shuffled = Object.fromEntries(Object.entries(m).reverse()) as OrderClientMessage;
        const text = encodeOrderRequest(shuffled);
        expect(text).toBe(encodeClientMessage(m));
        expect(decodeOrderRequest(text)).toEqual(m);
        expect(decodeClientMessage(text)).toEqual(m);
      }),
      { numRuns: 500 },
    );
  });

  it('writes the canonical key order of a submit (price before timeInForce)', () => {
    const m = { timeInForce: 'gtc', price: 101.5, quantity: 10, side: 'sell', instrument: '/PRODUCT/X', clientOrderId: 'a', reqId: 3, type: 'order.submit' } as const;
    expect(encodeOrderRequest(m)).toBe('{"type":"order.submit","reqId":3,"clientOrderId":"a","instrument":"/PRODUCT/X","side":"sell","quantity":10,"price":101.5,"timeInForce":"gtc"}');
  });

  it('encodes replies in canonical order, the same through the server frame encoder', () => {
    const ms: OrderServerMessage[] = [
      { status: 'filled', seq: 9, orderId: 2, clientOrderId: 'x', action: 'amend', reqId: 4, type: 'order.ack' },
      { message: 'm', rule: 'offTick', field: 'price', clientOrderId: 'y', action: 'submit', reqId: 5, type: 'order.reject' },
    ];
    const frame = encodeOrderFrame(ms);
    expect(frame).toBe('[{"type":"order.ack","reqId":4,"action":"amend","clientOrderId":"x","orderId":2,"seq":9,"status":"filled"},'
      + '{"type":"order.reject","reqId":5,"action":"submit","clientOrderId":"y","field":"price","rule":"offTick","message":"m"}]');
    expect(encodeServerFrame(ms)).toBe(frame);
    expect(decodeServerFrame(frame)).toEqual(JSON.parse(frame));
  });

  it('names the value and the rule in its errors', () => {
    const r = decodeOrderRequest('{"type":"order.submit","reqId":4,"clientOrderId":"a b","instrument":"/FX/EURUSD","side":"buy","quantity":1,"timeInForce":"day"}');
    expect(isDecodeFailure(r) && r.error).toEqual({
      code: 'BAD_REQUEST', reqId: 4, field: 'clientOrderId',
      message: `'clientOrderId' ("a b") must be 1..64 characters of letters, digits and ._:-`,
    });
    const amend = decodeOrderRequest('{"type":"order.amend","reqId":5,"clientOrderId":"a"}');
    expect(isDecodeFailure(amend) && amend.error.message).toBe("an order.amend needs 'quantity' or 'price' (or both)");
  });

  it('refuses other types and non-objects, keeping a readable reqId', () => {
    expect(decodeOrderRequest('{"type":"view.close","reqId":1,"viewId":1}')).toMatchObject({ error: { code: 'UNKNOWN_TYPE', reqId: 1 } });
    expect(decodeOrderRequest('[]')).toMatchObject({ error: { code: 'BAD_FRAME' } });
    expect(decodeOrderRequest('{')).toMatchObject({ error: { code: 'BAD_FRAME' } });
    expect(decodeOrderRequest('{"reqId":2}')).toMatchObject({ error: { code: 'BAD_REQUEST', field: 'type', reqId: 2 } });
  });

  it('gives the same verdict as decodeClientMessage on any JSON object', () => {
    const anyOrder = fc.record({ type: fc.constantFrom(...ORDER_CLIENT_MESSAGE_TYPES), reqId: fc.jsonValue(), clientOrderId: fc.jsonValue(), quantity: fc.jsonValue(), price: fc.jsonValue() }, { requiredKeys: ['type'] });
    fc.assert(
      fc.property(anyOrder, (o) => {
        const text = JSON.stringify(o);
        const [a, b] = [decodeClientMessage(text), decodeOrderRequest(text)];
        expect(isDecodeFailure(a)).toBe(isDecodeFailure(b));
        if (isDecodeFailure(a) && isDecodeFailure(b)) expect([a.error.code, a.error.field, a.error.reqId]).toEqual([b.error.code, b.error.field, b.error.reqId]);
      }),
      { numRuns: 500 },
    );
  });

  it('knows client order ids, subjects and status codes', () => {
    expect(isClientOrderId('1700000000000-12')).toBe(true);
    expect(isClientOrderId('x'.repeat(64))).toBe(true);
    expect(isClientOrderId('x'.repeat(65))).toBe(false);
    expect(isClientOrderId('')).toBe(false);
    expect(isClientOrderId('a/b')).toBe(false);
    expect(blotterSubject('alice')).toBe('/BLOTTER/alice');
    expect(tradeSubject('alice', 42)).toBe('/TRADE/alice/42');
    const open = Object.entries(ORDER_STATUS_CODES).filter(([, c]) => c < 10).map(([s]) => s);
    expect(open).toEqual(['new', 'acknowledged', 'partiallyFilled']);
    expect(ORDER_SERVER_MESSAGE_TYPES).toEqual(['order.ack', 'order.reject']);
  });
});

describe('order golden frames', () => {
  const vectors = JSON.parse(readFileSync(new URL('../vectors/frames.json', import.meta.url), 'utf8')) as Array<{ name: string; messages?: Array<{ type: string }>; error?: unknown }>;
  const orders = vectors.filter((v) => v.name.startsWith('order-'));

  it('cover every order message type, valid and invalid (vectors.test.ts checks each one)', () => {
    const types = new Set(orders.flatMap((v) => (v.messages ?? []).map((m) => m.type)));
    for (const t of [...ORDER_CLIENT_MESSAGE_TYPES, ...ORDER_SERVER_MESSAGE_TYPES]) expect(types.has(t), t).toBe(true);
    expect(orders.filter((v) => v.error !== undefined).length).toBeGreaterThanOrEqual(10);
  });
});
