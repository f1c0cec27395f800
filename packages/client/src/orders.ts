/**
 * The order API of the client SDK: `submitOrder`, `cancelOrder`, `amendOrder` over
 * `order.submit` / `order.cancel` / `order.amend` (docs/protocol.md, "Orders").
 *
 * An order request resolves with its `order.ack` (sent by the server only once the order's
 * journal entry is on disk) or rejects with:
 * - `OrderRejectedError` (code ORDER_REJECTED): the engine refused it (`field`, `rule`, `message`);
 *   nothing changed on the server;
 * - a `TidewireError` from an `error` frame: BAD_REQUEST (shape), NOT_ENTITLED (a source),
 *   UNAVAILABLE (the server runs without a journal);
 * - `DISCONNECTED` / `TIMEOUT` / `CLOSED`: the connection dropped, no reply came in time, or the
 *   client was closed while the request was in flight. The order's fate is then unknown to the
 *   promise: it is visible in the user's blotter (`/BLOTTER/<user>`, matched by `clientOrderId`).
 *   Re-sending the same submit (same `clientOrderId`) is safe: an order that became durable is
 *   refused as `clientOrderId`/`duplicate`, one that did not is accepted again.
 * Orders are never queued while the client is not logged in (a late order is a surprise): they
 * reject at once with DISCONNECTED.
 */

import {
  decodeOrderRequest,
  encodeOrderRequest,
  isDecodeFailure,
  type OrderAck,
  type OrderAction,
  type OrderClientMessage,
  type OrderReject,
  type OrderRejectField,
  type OrderRejectRule,
  type OrderSide,
  type ServerMessage,
  type TimeInForce,
} from '@tidewire/protocol';
import { TidewireError } from './errors.js';

/** What `submitOrder` takes. */
export interface OrderRequest {
  /** 1..64 characters of `[A-Za-z0-9._:-]`, unique per user. @default `${clientStart}-${n}`, unique per client */
  clientOrderId?: string;
  /** Instrument subject, e.g. `/FX/EURUSD`. */
  instrument: string;
  side: OrderSide;
  /** Whole number 1..the server's `orders.maxQuantity` (the server checks; a reject names the rule). */
  quantity: number;
  /** Limit price on the instrument's tick; omitted: a market order. */
  price?: number;
  /** @default 'day' */
  timeInForce?: TimeInForce;
}

/** What `amendOrder` changes: the total quantity and/or the limit price (at least one). */
export interface OrderAmendment {
  quantity?: number;
  price?: number;
}

/** The server refused an order request (`order.reject`): nothing changed and nothing was journaled. */
export class OrderRejectedError extends TidewireError {
  /** What was refused. */
  readonly action: OrderAction;
  readonly clientOrderId: string;
  /** The offending field (`quantity`, `price`, `instrument`, `clientOrderId`, `order`, `user`). */
  override readonly field: OrderRejectField;
  /** The rule it broke (`aboveLimit`, `offTick`, `duplicate`, ...). */
  readonly rule: OrderRejectRule;

  constructor(m: OrderReject) {
    super('ORDER_REJECTED', m.message, { reqId: m.reqId, field: m.field });
    this.action = m.action;
    this.clientOrderId = m.clientOrderId;
    this.field = m.field;
    this.rule = m.rule;
  }
}

/** What the order API needs from its client. */
export interface OrdersPort {
  /** True while logged in. */
  loggedIn(): boolean;
  /** A fresh reqId. */
  takeReqId(): number;
  /** Sends a request and resolves with its reply (an `error` reply rejects with a TidewireError). */
  request(m: OrderClientMessage): Promise<ServerMessage>;
}

function checkNumber(field: 'quantity' | 'price', value: unknown): void {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new TidewireError('BAD_REQUEST', `'${field}' (${String(value)}) must be a finite number`, { field });
  }
}

/** Sends order requests for one client and turns replies into results. */
export class Orders {
  private nextOrder = 1;
  private readonly prefix: string;

  /** `startMs`: the client's creation time, epoch ms (prefix of generated client order ids). */
  constructor(
    private readonly port: OrdersPort,
    startMs: number,
  ) {
    this.prefix = String(Math.floor(startMs));
  }

  /** A client order id unique per client: `${startMs}-${n}`. */
  nextClientOrderId(): string {
    return `${this.prefix}-${this.nextOrder++}`;
  }

  /** See TidewireClient.submitOrder. */
  submit(order: OrderRequest): Promise<OrderAck> {
    return this.run(() => {
      checkNumber('quantity', order.quantity);
      if (order.price !== undefined) checkNumber('price', order.price);
      const m: OrderClientMessage = {
        type: 'order.submit',
        reqId: this.port.takeReqId(),
        clientOrderId: order.clientOrderId ?? this.nextClientOrderId(),
        instrument: order.instrument,
        side: order.side,
        quantity: order.quantity,
        timeInForce: order.timeInForce ?? 'day',
      };
      if (order.price !== undefined) m.price = order.price;
      return m;
    });
  }

  /** See TidewireClient.cancelOrder. */
  cancel(clientOrderId: string): Promise<OrderAck> {
    return this.run(() => ({ type: 'order.cancel', reqId: this.port.takeReqId(), clientOrderId }));
  }

  /** See TidewireClient.amendOrder. */
  amend(clientOrderId: string, change: OrderAmendment): Promise<OrderAck> {
    return this.run(() => {
      if (change.quantity !== undefined) checkNumber('quantity', change.quantity);
      if (change.price !== undefined) checkNumber('price', change.price);
      const m: OrderClientMessage = { type: 'order.amend', reqId: this.port.takeReqId(), clientOrderId };
      if (change.quantity !== undefined) m.quantity = change.quantity;
      if (change.price !== undefined) m.price = change.price;
      return m;
    });
  }

  private async run(build: () => OrderClientMessage): Promise<OrderAck> {
    const m = build();
    // the protocol's own decoder checks the request: one definition of the rules
    const checked = decodeOrderRequest(encodeOrderRequest(m));
    if (isDecodeFailure(checked)) {
      const detail = checked.error.field === undefined ? {} : { field: checked.error.field };
      throw new TidewireError(checked.error.code, checked.error.message, detail);
    }
    if (!this.port.loggedIn()) {
      throw new TidewireError('DISCONNECTED', `${m.type} '${m.clientOrderId}' was not sent: the client is not logged in`, { reqId: m.reqId });
    }
    const reply = await this.port.request(m);
    if (reply.type === 'order.ack') return reply;
    if (reply.type === 'order.reject') throw new OrderRejectedError(reply);
    throw new TidewireError('INTERNAL', `${m.type} #${m.reqId} was answered with ${reply.type}`, { reqId: m.reqId });
  }
}
