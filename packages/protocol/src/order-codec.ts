/**
 * Codec of the order messages (messages.ts, section "Orders").
 *
 * Same conventions as view-codec.ts: decoders check untrusted input strictly and never throw (a
 * `DecodeFailure` names the field, its value and the rule); encoders rebuild each message in the
 * canonical key order of messages.ts, so the Rust engine can write `order.ack` / `order.reject`
 * byte-identically (the order.* golden frames in ../vectors/frames.json pin it). The decoder
 * checks shapes only (a quantity is a finite number); the business rules (whole, positive, under
 * the limit, on the tick, known instrument, unique client order id) are the engine's, answered
 * with `order.reject` naming the field and the rule.
 */

import { BLOTTER_SUBJECT_PREFIX, CLIENT_ORDER_ID_PATTERN, MAX_CLIENT_ORDER_ID_CHARS, TRADE_SUBJECT_PREFIX } from './limits.js';
import {
  ORDER_CLIENT_MESSAGE_TYPES,
  type OrderClientMessage,
  type OrderServerMessage,
} from './messages.js';
import type { DecodeFailure } from './result.js';
import { Violation, checkFinite, checkKeys, checkReqId, checkSubject, fail, isObject, readReqId, show, type JsonObject } from './rules.js';
import type { Ordered } from './view-codec.js';

const SUBMIT_KEYS: ReadonlySet<string> = new Set(['type', 'reqId', 'clientOrderId', 'instrument', 'side', 'quantity', 'price', 'timeInForce']);
const CANCEL_KEYS: ReadonlySet<string> = new Set(['type', 'reqId', 'clientOrderId']);
const AMEND_KEYS: ReadonlySet<string> = new Set(['type', 'reqId', 'clientOrderId', 'quantity', 'price']);
const ORDER_TYPES: ReadonlySet<string> = new Set(ORDER_CLIENT_MESSAGE_TYPES);

/** True when `value` is a valid client order id (1..64 characters of `[A-Za-z0-9._:-]`). */
export function isClientOrderId(value: unknown): value is string {
  return typeof value === 'string' && CLIENT_ORDER_ID_PATTERN.test(value);
}

function checkClientOrderId(value: unknown): string {
  if (!isClientOrderId(value)) fail('clientOrderId', value, `must be 1..${MAX_CLIENT_ORDER_ID_CHARS} characters of letters, digits and ._:-`);
  return value as string;
}

/** Checks a parsed order request (its `type` is one of ORDER_CLIENT_MESSAGE_TYPES); throws Violation. */
export function checkOrderRequest(m: JsonObject): OrderClientMessage {
  checkReqId(m.reqId);
  switch (m.type) {
    case 'order.submit':
      checkKeys(m, SUBMIT_KEYS);
      checkClientOrderId(m.clientOrderId);
      checkSubject('instrument', m.instrument);
      if (m.side !== 'buy' && m.side !== 'sell') fail('side', m.side, "must be 'buy' or 'sell'");
      checkFinite('quantity', m.quantity);
      if (m.price !== undefined) checkFinite('price', m.price);
      if (m.timeInForce !== 'day' && m.timeInForce !== 'ioc' && m.timeInForce !== 'gtc') {
        fail('timeInForce', m.timeInForce, "must be 'day', 'ioc' or 'gtc'");
      }
      break;
    case 'order.cancel':
      checkKeys(m, CANCEL_KEYS);
      checkClientOrderId(m.clientOrderId);
      break;
    default:
      checkKeys(m, AMEND_KEYS);
      checkClientOrderId(m.clientOrderId);
      if (m.quantity === undefined && m.price === undefined) {
        throw new Violation('BAD_REQUEST', "an order.amend needs 'quantity' or 'price' (or both)", 'quantity');
      }
      if (m.quantity !== undefined) checkFinite('quantity', m.quantity);
      if (m.price !== undefined) checkFinite('price', m.price);
  }
  return m as unknown as OrderClientMessage;
}

/**
 * Decodes an order request a client sent on `/stream` (`order.submit`, `order.cancel`,
 * `order.amend`). Failures: BAD_FRAME (not JSON, not an object), UNKNOWN_TYPE (another type),
 * BAD_REQUEST naming the field (unknown key, bad client order id, side, time in force, a
 * quantity or price that is not a finite number, an amend with neither), with the reqId when it
 * was readable. Never throws.
 */
export function decodeOrderRequest(text: string): OrderClientMessage | DecodeFailure {
  let reqId: number | undefined;
  try {
    let m: unknown;
    try {
      m = JSON.parse(text);
    } catch (e) {
      throw new Violation('BAD_FRAME', `the frame is not valid JSON: ${(e as Error).message}`);
    }
    if (!isObject(m)) throw new Violation('BAD_FRAME', `a client frame must be one JSON object, got ${show(m)}`);
    reqId = readReqId(m.reqId);
    if (typeof m.type !== 'string') fail('type', m.type, 'must be a message type string');
    if (!ORDER_TYPES.has(m.type)) throw new Violation('UNKNOWN_TYPE', `'type' (${show(m.type)}) is not an order request`);
    return checkOrderRequest(m);
  } catch (e) {
    const v = e instanceof Violation ? e : new Violation('INTERNAL', `decoder fault: ${String(e)}`);
    const error: DecodeFailure['error'] = { code: v.code, message: v.message };
    if (v.field !== undefined) error.field = v.field;
    if (reqId !== undefined) error.reqId = reqId;
    return { ok: false, error };
  }
}

/** An order request rebuilt in canonical key order (`price` / `quantity` only when given). */
export function orderOrderRequest(m: OrderClientMessage): Ordered {
  switch (m.type) {
    case 'order.submit': {
      const o: Ordered = { type: m.type, reqId: m.reqId, clientOrderId: m.clientOrderId, instrument: m.instrument, side: m.side, quantity: m.quantity };
      if (m.price !== undefined) o.price = m.price;
      o.timeInForce = m.timeInForce;
      return o;
    }
    case 'order.cancel':
      return { type: m.type, reqId: m.reqId, clientOrderId: m.clientOrderId };
    case 'order.amend': {
      const o: Ordered = { type: m.type, reqId: m.reqId, clientOrderId: m.clientOrderId };
      if (m.quantity !== undefined) o.quantity = m.quantity;
      if (m.price !== undefined) o.price = m.price;
      return o;
    }
  }
}

/** An order request as wire text, canonical key order. */
export function encodeOrderRequest(m: OrderClientMessage): string {
  return JSON.stringify(orderOrderRequest(m));
}

/** An order reply rebuilt in canonical key order. */
export function orderOrderReply(m: OrderServerMessage): Ordered {
  if (m.type === 'order.ack') {
    return { type: m.type, reqId: m.reqId, action: m.action, clientOrderId: m.clientOrderId, orderId: m.orderId, seq: m.seq, status: m.status };
  }
  return { type: m.type, reqId: m.reqId, action: m.action, clientOrderId: m.clientOrderId, field: m.field, rule: m.rule, message: m.message };
}

/** Order replies as one server frame (a JSON array), canonical key order. */
export function encodeOrderFrame(ms: readonly OrderServerMessage[]): string {
  return JSON.stringify(ms.map(orderOrderReply));
}

/** `/BLOTTER/<user>`: the container of a user's trade records, newest first. */
export function blotterSubject(user: string): string {
  return `${BLOTTER_SUBJECT_PREFIX}${user}`;
}

/** `/TRADE/<user>/<orderId>`: the trade record of one order. */
export function tradeSubject(user: string, orderId: number): string {
  return `${TRADE_SUBJECT_PREFIX}${user}/${orderId}`;
}
