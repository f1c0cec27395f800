/**
 * `order.submit` / `order.cancel` / `order.amend` (on `/stream`): already validated by the
 * protocol decoder (shapes); handed to the engine, which checks the order rules, journals the
 * request and answers through `drain` with `order.ack` (only once the journal entry is on disk)
 * or `order.reject` (nothing changed). The server keeps no order state.
 *
 * Checks here, before the engine: the role (traders and admins order; anything else gets
 * NOT_ENTITLED), orders enabled (`orders.journalDir` set; else UNAVAILABLE naming the setting),
 * and for a submit the user's entitlement to order the instrument plus the per-user order rate
 * (`entitlements/security.ts` checkOrder: NOT_ENTITLED field `instrument`, or RATE_LIMITED).
 *
 * Fast path (`orderFrameInstrument` / `submitFrame`): a well-formed `order.submit` from a session
 * that may order goes to the engine as the frame's bytes (packages/engine napi/orders.rs reads
 * them), with the same checks in the same order and the same replies; no JSON.parse, no message
 * object, no per-field napi conversion. Every other frame takes the decoder path.
 */

import { decodeClientMessage, isDecodeFailure, type OrderAmend, type OrderCancel, type OrderClientMessage, type OrderSubmit } from '@tidewire/protocol';
import { checkOrder } from '../entitlements/security.js';
import type { EnginePort, OrderSubmitInput } from '../engine-port.js';
import type { Session } from '../session/session.js';
import type { ConnectionPort, HandlerContext } from './context.js';
import { fromEngineError, replyError } from './errors.js';

/** Roles that may send orders. */
const ORDER_ROLES: ReadonlySet<string> = new Set(['trader', 'admin']);

/**
 * The engine's input for a decoded `order.submit`; no `price` key for a market order (napi
 * converts an absent field to None but refuses null in an object field).
 */
export function submitInput(m: OrderSubmit): OrderSubmitInput {
  const input: OrderSubmitInput = { clientOrderId: m.clientOrderId, instrument: m.instrument, side: m.side, quantity: m.quantity, timeInForce: m.timeInForce };
  if (m.price !== undefined) input.price = m.price;
  return input;
}

/** Handles one order request of a logged-in session (dispatch checks the login). */
export function handleOrder(ctx: HandlerContext, session: Session, port: ConnectionPort, m: OrderClientMessage): void {
  const user = session.user!;
  if (!ORDER_ROLES.has(user.role)) {
    replyError(ctx, session, port, {
      code: 'NOT_ENTITLED', reqId: m.reqId,
      message: `'${m.type}' needs the trader or admin role; user '${user.user}' has role '${user.role}'`,
    });
    return;
  }
  if (ctx.config.orders.journalDir === '') {
    replyError(ctx, session, port, {
      code: 'UNAVAILABLE', reqId: m.reqId,
      message: `orders are disabled on this server: it was started without a journal (set orders.journalDir / --journal-dir / TIDEWIRE_JOURNAL_DIR)`,
    });
    return;
  }
  if (m.type === 'order.submit') {
    const refused = checkOrder(ctx.security, user, m.instrument, m.reqId, ctx.clock.now());
    if (refused !== undefined) {
      replyError(ctx, session, port, refused);
      return;
    }
  }
  try {
    send(ctx, session.sessionId!, m);
  } catch (err) {
    replyError(ctx, session, port, fromEngineError(err, m.reqId));
  }
}

function send(ctx: HandlerContext, sid: number, m: OrderSubmit | OrderCancel | OrderAmend): void {
  switch (m.type) {
    case 'order.submit':
      ctx.engine.orderSubmit(sid, m.reqId, submitInput(m));
      return;
    case 'order.cancel':
      ctx.engine.orderCancel(sid, m.reqId, m.clientOrderId);
      return;
    case 'order.amend':
      ctx.engine.orderAmend(sid, m.reqId, m.clientOrderId, m.quantity ?? null, m.price ?? null);
      return;
  }
}

/**
 * The engine's `order.submit` fast path (packages/engine `orderFrameInstrument` /
 * `orderSubmitFrame`). Optional on the port: an engine (or a test fake) without it leaves every
 * order on the decoder path.
 */
export interface OrderFramePort {
  /** The instrument of a well-formed `order.submit` frame the engine takes; null for any other frame. Pure. */
  orderFrameInstrument(frame: Uint8Array): string | null;
  /** Submits that frame's order (as orderSubmit); its reqId, or null when the frame is not taken (nothing submitted). */
  orderSubmitFrame(sessionId: number, frame: Uint8Array): number | null;
}

function framePort(engine: EnginePort): OrderFramePort | undefined {
  const e = engine as EnginePort & Partial<OrderFramePort>;
  return typeof e.orderFrameInstrument === 'function' && typeof e.orderSubmitFrame === 'function' ? (e as OrderFramePort) : undefined;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The decoded form of a frame the fast path took (it is a valid order.submit), for the rare replies that name its reqId. */
function decodedSubmit(bytes: Uint8Array): OrderSubmit {
  const m = decodeClientMessage(utf8.decode(bytes));
  if (isDecodeFailure(m) || m.type !== 'order.submit') throw new Error(`order fast path: a frame it took does not decode as order.submit: ${JSON.stringify(m)}`);
  return m;
}

/** The reqId of a frame the fast path took. */
export function frameReqId(bytes: Uint8Array): number {
  return decodedSubmit(bytes).reqId;
}

/**
 * The instrument of `bytes` when the fast path takes this frame: the engine has it, the
 * (logged-in) session's user may order and orders are enabled (else the decoder path answers
 * with the error), and the engine reads the bytes as a well-formed `order.submit`. Undefined:
 * decode the frame as usual. Takes nothing (no rate token), changes nothing.
 */
export function orderFrameInstrument(ctx: HandlerContext, session: Session, bytes: Uint8Array): string | undefined {
  const fast = framePort(ctx.engine);
  if (fast === undefined || !ORDER_ROLES.has(session.user!.role) || ctx.config.orders.journalDir === '') return undefined;
  return fast.orderFrameInstrument(bytes) ?? undefined;
}

/**
 * Handles an `order.submit` frame `orderFrameInstrument` took (dispatch checked the login and the
 * request rate): the entitlement and order-rate check, then the engine reads the order from the
 * bytes. Replies exactly as `handleOrder` would for the decoded message.
 */
export function submitFrame(ctx: HandlerContext, session: Session, port: ConnectionPort, bytes: Uint8Array, instrument: string): void {
  const refused = checkOrder(ctx.security, session.user!, instrument, 0, ctx.clock.now());
  if (refused !== undefined) {
    replyError(ctx, session, port, { ...refused, reqId: frameReqId(bytes) });
    return;
  }
  const sid = session.sessionId!;
  try {
    // null cannot happen (the engine just took these bytes); if it did, the decoded order is sent
    if (framePort(ctx.engine)!.orderSubmitFrame(sid, bytes) === null) send(ctx, sid, decodedSubmit(bytes));
  } catch (err) {
    replyError(ctx, session, port, fromEngineError(err, frameReqId(bytes)));
  }
}
