/**
 * Click-to-trade on an FX tile, without React: the order one click sends (buy at the ask or sell
 * at the bid shown, as a limit IOC so it never fills worse than the quote the trader clicked),
 * whether it needs a confirm, and the line the tile shows while the order lives (sending, its
 * ack, then the fill or cancel the trade record reports). Pure: tile-trade.test.ts.
 */

import type { OrderRequest } from '@tidewire/client';
import type { OrderSide } from '@tidewire/protocol';
import { parseQuantity } from '../blotter/ticket-form.js';
import { defaultsFor, needsConfirm } from '../trading/trading-defaults.js';
import { displayPair, fxSubject } from './fx-pairs.js';

/** What one click would send, or why it cannot. */
export type TileClick =
  | { readonly kind: 'order'; readonly order: OrderRequest; readonly confirm: boolean; readonly summary: string }
  | { readonly kind: 'invalid'; readonly message: string };

/** The quantity a tile starts with. */
export function tileDefaultQuantity(pair: string): number {
  return defaultsFor(fxSubject(pair)).quantity;
}

/**
 * The order for a click on `side` of `pair`'s tile: buy at `ask`, sell at `bid`, limit IOC, with
 * the typed quantity (`1m`, `250k`, `1,000,000`). Invalid when the quantity is not a positive whole
 * number or the side has no price.
 */
export function tileClick(pair: string, side: OrderSide, quantityText: string, fields: Readonly<Record<string, unknown>>, decimals: number): TileClick {
  const quantity = parseQuantity(quantityText);
  if (!Number.isFinite(quantity) || quantity <= 0 || !Number.isInteger(quantity)) {
    return { kind: 'invalid', message: `'${quantityText.trim()}' is not a quantity (a positive whole amount: 1000000, 1m, 250k)` };
  }
  const price = side === 'buy' ? fields.ask : fields.bid;
  if (typeof price !== 'number' || !Number.isFinite(price) || price <= 0) {
    return { kind: 'invalid', message: `no ${side === 'buy' ? 'ask' : 'bid'} price to ${side} at` };
  }
  const subject = fxSubject(pair);
  const summary = `${side === 'buy' ? 'Buy' : 'Sell'} ${quantity.toLocaleString('en-US')} ${displayPair(pair)} at ${price.toFixed(decimals)}`;
  return { kind: 'order', order: { instrument: subject, side, quantity, price, timeInForce: 'ioc' }, confirm: needsConfirm(subject, quantity, price), summary };
}

/** The tile's outcome line: tone for its colour, text for the trader. */
export interface TileOutcome {
  readonly tone: 'working' | 'done' | 'failed';
  readonly text: string;
}

/**
 * The outcome line from what the tile knows of its last order: the trade record's fields once it
 * has them (`status`, `filledQuantity`, `averagePrice`, `reason`), else the ack. An IOC ends
 * filled, partially filled then cancelled, or cancelled (no liquidity at the clicked price).
 */
export function tileOutcome(side: OrderSide, quantity: number, trade: Readonly<Record<string, unknown>> | undefined, decimals: number): TileOutcome {
  const verb = side === 'buy' ? 'Bought' : 'Sold';
  const status = typeof trade?.status === 'string' ? trade.status : 'acknowledged';
  const filled = typeof trade?.filledQuantity === 'number' ? trade.filledQuantity : 0;
  const avg = typeof trade?.averagePrice === 'number' && trade.averagePrice > 0 ? ` at ${trade.averagePrice.toFixed(decimals)}` : '';
  const amount = (n: number) => n.toLocaleString('en-US');
  if (status === 'filled') return { tone: 'done', text: `${verb} ${amount(filled)}${avg}` };
  if (status === 'cancelled' && filled > 0) return { tone: 'done', text: `${verb} ${amount(filled)} of ${amount(quantity)}${avg}; rest cancelled` };
  if (status === 'cancelled') {
    const reason = typeof trade?.reason === 'string' && trade.reason !== '' ? ` (${trade.reason})` : '';
    return { tone: 'failed', text: `Not filled at the clicked price${reason}` };
  }
  if (status === 'rejected') return { tone: 'failed', text: `Rejected${typeof trade?.reason === 'string' && trade.reason !== '' ? `: ${trade.reason}` : ''}` };
  if (status === 'partiallyFilled') return { tone: 'working', text: `${verb} ${amount(filled)} of ${amount(quantity)}${avg}…` };
  return { tone: 'working', text: `${side === 'buy' ? 'Buying' : 'Selling'} ${amount(quantity)}…` };
}
