/**
 * Amending an open order from the blotter, without React: the form's starting values (the order's
 * quantity and limit price), validation hints with the ticket's rules, and the amendment sent
 * (only what changed). Pure: amend-form.test.ts.
 *
 * As in the ticket (ticket-form.ts), a *blocking* hint means there is nothing to send (a field that
 * is not a number, no change at all, the order is no longer open); every other hint (quantity not
 * positive, not whole or below the filled quantity, price off tick) is advice: the amend is sent
 * and the server's reject, naming field and rule, is the answer the trader sees.
 */

import type { OrderAmendment } from '@tidewire/client';
import type { BlotterRow } from './blotter-row.js';
import { isOpenOrder, statusLabel } from './blotter-row.js';
import { formatTicketPrice, isOnTick, parsePrice, parseQuantity } from './ticket-form.js';

/** What the trader has typed in the amend form. */
export interface AmendState {
  /** New total quantity as typed (`1m`, `250k`, `1,500,000`). */
  readonly quantityText: string;
  /** New limit price as typed; ignored for market orders. */
  readonly priceText: string;
}

/** What an amend hint is about: a field, or the order as a whole. */
export type AmendField = 'quantity' | 'price' | 'order';

/** A validation hint of the amend form. */
export interface AmendHint {
  readonly field: AmendField;
  readonly message: string;
  /** True: nothing can be sent until it is fixed. False: advice; the server decides. */
  readonly blocking: boolean;
  /** True for the "nothing changed yet" prompt (shown quietly: it is not an error). */
  readonly quiet?: true;
}

/** The order an amend is about: the blotter row's fields the form reads. */
export type AmendOrder = Pick<BlotterRow, 'clientOrderId' | 'orderType' | 'quantity' | 'price' | 'filledQuantity' | 'status' | 'statusCode'>;

/**
 * The form's starting values: the order's quantity (grouped, `1,000,000`) and limit price (in the
 * tick's decimals when the tick is known and the price is on it, else as stored, never rounded;
 * '' for a market order).
 */
export function initialAmend(order: AmendOrder, tick: number | undefined): AmendState {
  const quantityText = order.quantity === undefined ? '' : order.quantity.toLocaleString('en-US', { maximumFractionDigits: 6 });
  const price = order.orderType === 'limit' ? order.price : undefined;
  const priceText = price === undefined ? '' : tick === undefined || !isOnTick(price, tick) ? String(price) : formatTicketPrice(price, tick);
  return { quantityText, priceText };
}

/** True when two prices are the same number (binary noise of a parsed text ignored). */
function samePrice(a: number, b: number | undefined): boolean {
  return b !== undefined && Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));
}

/** True when the order takes a price (a limit order). */
const takesPrice = (order: AmendOrder) => order.orderType === 'limit';

/**
 * Every hint for the form as entered against the order as it is now (`order` should be the live
 * record: a fill or a previous amend changes what is allowed). `tick` is the instrument's price
 * increment; undefined (no market yet) skips the off-tick advice. Empty: nothing to say.
 */
export function amendHints(state: AmendState, order: AmendOrder, tick: number | undefined): AmendHint[] {
  const hints: AmendHint[] = [];
  if (!isOpenOrder(order)) {
    const status = statusLabel(order.status, order.statusCode) || 'not open';
    hints.push({ field: 'order', message: `${status}: the order is no longer open`, blocking: true });
    return hints;
  }
  const quantity = parseQuantity(state.quantityText);
  if (state.quantityText.trim() === '') hints.push({ field: 'quantity', message: 'Enter a quantity', blocking: true });
  else if (Number.isNaN(quantity)) hints.push({ field: 'quantity', message: `'${state.quantityText.trim()}' is not a quantity (e.g. 1000000, 1m, 250k)`, blocking: true });
  else if (quantity <= 0) hints.push({ field: 'quantity', message: 'Quantity must be positive', blocking: false });
  else if (!Number.isInteger(quantity)) hints.push({ field: 'quantity', message: 'Quantity must be a whole number', blocking: false });
  else if (order.filledQuantity !== undefined && quantity < order.filledQuantity) {
    hints.push({ field: 'quantity', message: `Below the ${order.filledQuantity.toLocaleString('en-US')} already filled`, blocking: false });
  }
  if (takesPrice(order)) {
    const price = parsePrice(state.priceText);
    if (state.priceText.trim() === '') hints.push({ field: 'price', message: 'Enter a limit price', blocking: true });
    else if (Number.isNaN(price)) hints.push({ field: 'price', message: `'${state.priceText.trim()}' is not a price`, blocking: true });
    else if (price <= 0) hints.push({ field: 'price', message: 'Price must be positive', blocking: false });
    else if (tick !== undefined && !isOnTick(price, tick)) hints.push({ field: 'price', message: `Off tick: prices move in steps of ${formatTicketPrice(tick, tick)}`, blocking: false });
  }
  if (!hints.some((h) => h.blocking) && amendment(state, order) === undefined) {
    hints.push({ field: 'order', message: takesPrice(order) ? 'Change the quantity or the price' : 'Change the quantity', blocking: true, quiet: true });
  }
  return hints;
}

/**
 * The amendment to send: the fields that differ from the order (quantity and/or limit price), or
 * undefined when a field is not a number or nothing changed. A price is never sent for a market
 * order. Advice-level problems are sent as entered (see the module comment).
 */
export function amendment(state: AmendState, order: AmendOrder): OrderAmendment | undefined {
  const change: OrderAmendment = {};
  const quantity = parseQuantity(state.quantityText);
  if (Number.isNaN(quantity)) return undefined;
  if (quantity !== order.quantity) change.quantity = quantity;
  if (takesPrice(order)) {
    const price = parsePrice(state.priceText);
    if (Number.isNaN(price)) return undefined;
    if (!samePrice(price, order.price)) change.price = price;
  }
  return change.quantity === undefined && change.price === undefined ? undefined : change;
}

/** The amend button's text: `Amend to 1,500,000 @ 1.08500`, `Amend price to 1.08500`, `Amend`. */
export function amendLabel(state: AmendState, order: AmendOrder): string {
  const change = amendment(state, order);
  if (change === undefined) return 'Amend';
  const qty = change.quantity === undefined ? undefined : change.quantity.toLocaleString('en-US', { maximumFractionDigits: 6 });
  if (change.price === undefined) return `Amend quantity to ${qty ?? ''}`;
  if (qty === undefined) return `Amend price to ${state.priceText.trim()}`;
  return `Amend to ${qty} @ ${state.priceText.trim()}`;
}
