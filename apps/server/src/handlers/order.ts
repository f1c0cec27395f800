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
 */

import type { OrderAmend, OrderCancel, OrderClientMessage, OrderSubmit } from '@tidewire/protocol';
import { checkOrder } from '../entitlements/security.js';
import type { OrderSubmitInput } from '../engine-port.js';
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
