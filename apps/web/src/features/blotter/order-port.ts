/**
 * What the blotter needs to trade: submit, cancel and amend through the app's one connection (the
 * client SDK's `submitOrder` / `cancelOrder` / `amendOrder`). An interface, so the ticket and the grid never see the
 * client and tests can script the answers.
 */

import type { OrderAmendment, OrderRequest } from '@tidewire/client';
import type { OrderAck } from '@tidewire/protocol';
import { useMemo } from 'react';
import { useConnection } from '../../connection/ConnectionProvider.js';

/** Order requests of the logged-in session. */
export interface OrderPort {
  /**
   * Sends an order (the SDK adds a unique clientOrderId). Resolves with the server's `order.ack`
   * once the order is durable; rejects with the SDK's `OrderRejectedError` (`field`, `rule`,
   * `message`) or another coded error (UNAVAILABLE: orders disabled; DISCONNECTED; TIMEOUT; CLOSED).
   */
  submitOrder(order: OrderRequest): Promise<OrderAck>;
  /** Cancels an open order by its clientOrderId; resolves with the ack, rejects like submitOrder. */
  cancelOrder(clientOrderId: string): Promise<OrderAck>;
  /**
   * Changes an open order's total quantity and/or limit price (at least one) by its
   * clientOrderId; resolves with the ack, rejects like submitOrder (e.g. `price`/`offTick`,
   * `quantity`/`belowFilled`, `order`/`notOpen`).
   */
  amendOrder(clientOrderId: string, change: OrderAmendment): Promise<OrderAck>;
}

/** The order requests of the app's connection (stable for the connection's lifetime). */
export function useOrderPort(): OrderPort {
  const connection = useConnection();
  return useMemo(
    () => ({
      submitOrder: (order) => connection.submitOrder(order),
      cancelOrder: (clientOrderId) => connection.cancelOrder(clientOrderId),
      amendOrder: (clientOrderId, change) => connection.amendOrder(clientOrderId, change),
    }),
    [connection],
  );
}
