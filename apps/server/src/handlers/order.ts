/**
 * `order.submit` / `order.cancel` / `order.amend` (on `/stream`): already validated by the
 * protocol decoder (shapes); handed to the engine, which checks the order rules, journals the
 * request and answers through `drain` with `order.ack` (only once the journal entry is on disk)
 * or `order.reject` (nothing changed). The server keeps no order state.
 *
 * Checks, before the order reaches the desk: the role (traders and admins order; anything else
 * gets NOT_ENTITLED), orders enabled (`orders.journalDir` set; else UNAVAILABLE naming the
 * setting), and for a submit the user's entitlement to order the instrument (the engine's
 * compiled order grants, handlers/order-grants.ts: NOT_ENTITLED field `instrument`), then the
 * per-user order rate (`limits.ordersPerSecPerUser`: RATE_LIMITED).
 *
 * Fast path (`submitFrame`): a frame of a session that may order goes to the engine as its bytes
 * in one call (`orderSubmitFrame`: packages/engine reads the frame, checks the grants and the
 * order token, submits), with the same checks in the same order and the same replies; no
 * JSON.parse, no message object, no per-field napi conversion. Every frame it does not take goes
 * the decoder path.
 */

import { decodeClientMessage, isDecodeFailure, type OrderAmend, type OrderCancel, type OrderClientMessage, type OrderSubmit } from '@tidewire/protocol';
import { checkOrder, orderRateRefusal } from '../entitlements/security.js';
import { ORDER_FRAME_NO_TOKEN, ORDER_FRAME_NOT_TAKEN, type EngineError, type OrderGrants, type OrderSubmitInput } from '../engine-port.js';
import type { Session } from '../session/session.js';
import type { ConnectionPort, HandlerContext } from './context.js';
import { fromEngineError, replyError } from './errors.js';
import { ORDER_ROLES, orderGrantsFor, sessionOrderGrants } from './order-grants.js';

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
    let refused;
    try {
      refused = checkOrder(ctx.security, orderGrantsFor(ctx.engine, ctx.security.entitlements, user), user, m.instrument, m.reqId, ctx.clock.now());
    } catch (err) {
      refused = fromEngineError(err, m.reqId);
    }
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

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The reqId of a frame the fast path took (it is a valid order.submit), for the rare replies that name it. */
export function frameReqId(bytes: Uint8Array): number {
  const m = decodeClientMessage(utf8.decode(bytes));
  if (isDecodeFailure(m) || m.type !== 'order.submit') throw new Error(`order fast path: a frame it took does not decode as order.submit: ${JSON.stringify(m)}`);
  return m.reqId;
}

/**
 * The order grants of the fast path for the (logged-in) `session`: when the engine has the fast
 * path, the session's user may order and orders are enabled; else undefined (the decoder path
 * answers). A failure to compile them leaves the frame to the decoder path, which answers it.
 */
export function fastOrderGrants(ctx: HandlerContext, session: Session): OrderGrants | undefined {
  if (ctx.engine.orderSubmitFrame === undefined) return undefined;
  try {
    return sessionOrderGrants(ctx, session);
  } catch {
    return undefined;
  }
}

/**
 * Offers a frame of a logged-in session that may order (`grants`, fastOrderGrants) to the
 * engine's one-call submit at `nowMs`; false when the engine does not take it (not an
 * order.submit it reads as is: decode it; nothing was taken or answered). Taken: the engine
 * checked the grants (NOT_ENTITLED), then the order token this takes beforehand (given back
 * when the frame was not taken or not permitted: a refused order takes no token), then
 * submitted; the replies are exactly the decoder path's (`handleOrder`). The caller takes the
 * frame's request token (`takeRequest`) once the frame is taken.
 */
export function submitFrame(ctx: HandlerContext, session: Session, port: ConnectionPort, bytes: Uint8Array, grants: OrderGrants, nowMs: number, takeRequest: () => void): boolean {
  const user = session.user!;
  const limiter = ctx.security.orderLimiter;
  const token = limiter.take(user.user, nowMs);
  let r: number;
  try {
    r = ctx.engine.orderSubmitFrame!(session.sessionId!, bytes, grants, token);
  } catch (err) {
    if (token && (err as EngineError | undefined)?.code === 'NOT_ENTITLED') limiter.giveBack(user.user, nowMs);
    takeRequest();
    replyError(ctx, session, port, fromEngineError(err, frameReqId(bytes)));
    return true;
  }
  if (r === ORDER_FRAME_NOT_TAKEN) {
    if (token) limiter.giveBack(user.user, nowMs);
    return false;
  }
  takeRequest();
  if (r === ORDER_FRAME_NO_TOKEN) replyError(ctx, session, port, orderRateRefusal(ctx.security, user, frameReqId(bytes)));
  return true;
}
