/**
 * The order ticket's rules, without React: parsing what the trader typed (quantities such as
 * `1m` or `250k`, prices), the instrument's tick and price stepping, the price prefilled from the
 * market, validation hints, and the order the ticket submits. Pure: ticket-form.test.ts.
 *
 * Hints come in two kinds. A *blocking* hint means there is no order to send (no instrument, a
 * quantity or price that is not a number). Every other hint (quantity not positive or not whole,
 * price off tick) is advice: the order is still sent and the server's reject, naming the field
 * and rule, is the answer the trader sees; the server is the only judge of the order rules.
 */

import type { OrderRequest } from '@tidewire/client';
import type { OrderSide, TimeInForce } from '@tidewire/protocol';
import { priceDecimals } from '../watchlist/watchlist-row.js';

/** Market (no price) or limit (price required). */
export type TicketOrderType = 'market' | 'limit';

/** Time-in-force choices in display order. */
export const TIME_IN_FORCE_CHOICES: readonly { readonly id: TimeInForce; readonly label: string; readonly title: string }[] = [
  { id: 'day', label: 'DAY', title: 'Day: open until the end of the trading day' },
  { id: 'ioc', label: 'IOC', title: 'Immediate or cancel: one execution, the rest cancelled' },
  { id: 'gtc', label: 'GTC', title: 'Good till cancelled' },
];

/** The instrument a ticket trades. */
export interface TicketInstrument {
  /**
   * Subject the order names and the ticket's prices come from, e.g. `/FX/EURUSD` (never a tier
   * subject: the server maps a subscription of `X` to the user's tier record `X@T`, docs/views.md).
   */
  readonly subject: string;
  /** `EUR/USD`, a product code. */
  readonly label: string;
  /** Longer description (product name, `FX spot`). */
  readonly description: string;
}

/** The market of the chosen instrument. */
export interface TicketMarket {
  readonly bid: number | undefined;
  readonly ask: number | undefined;
  /** Price increment (see tickOf). */
  readonly tick: number;
}

/** What the trader has entered. */
export interface TicketState {
  readonly instrument: TicketInstrument | undefined;
  readonly side: OrderSide;
  /** As typed: `1000000`, `1,000,000`, `1m`, `250k`. */
  readonly quantityText: string;
  readonly orderType: TicketOrderType;
  /** As typed; ignored for market orders. */
  readonly priceText: string;
  readonly timeInForce: TimeInForce;
}

/** A ticket field a hint is about. */
export type TicketField = 'instrument' | 'quantity' | 'price';

/** A validation hint shown under a field. */
export interface TicketHint {
  readonly field: TicketField;
  readonly message: string;
  /** True: nothing can be sent until it is fixed. False: advice; the server decides. */
  readonly blocking: boolean;
  /** True when the field is simply not filled in yet (shown as a prompt, not as an error). */
  readonly missing?: true;
}

/** A new ticket: buy, quantity 1,000,000, market, DAY. */
export const INITIAL_TICKET: TicketState = {
  instrument: undefined,
  side: 'buy',
  quantityText: '1,000,000',
  orderType: 'market',
  priceText: '',
  timeInForce: 'day',
};

/** The server's default tick when an instrument record has no `tickSize` (orders contract). */
export const DEFAULT_TICK = 0.00001;

const MULTIPLIERS: Readonly<Record<string, number>> = { k: 1e3, m: 1e6, b: 1e9 };

/**
 * A quantity as typed: digits with optional `,`/`_`/space grouping and decimals, optionally
 * followed by `k` (thousand), `m` (million) or `b` (billion), any case: `1,000,000`, `1m`,
 * `2.5M`, `250k`. Returns NaN for anything else (including an empty text) and for non-finite results.
 * The result is not rounded: `1.5` stays 1.5 (the server rejects non-whole quantities).
 */
export function parseQuantity(text: string): number {
  const m = /^([+-]?)(\d[\d,_ ]*(?:\.\d*)?|\.\d+)\s*([kmb]?)$/i.exec(text.trim());
  if (m === null) return NaN;
  const digits = m[2]!.replace(/[,_ ]/g, '');
  const n = Number(digits) * (m[3] === '' ? 1 : MULTIPLIERS[m[3]!.toLowerCase()]!);
  if (!Number.isFinite(n)) return NaN;
  // fix binary noise of the multiplier (2.3 * 1e6 = 2299999.9999999995)
  const rounded = Number(n.toPrecision(15));
  return m[1] === '-' ? -rounded : rounded;
}

/** A price as typed (plain decimal number, `,` grouping allowed); NaN when it is not one. */
export function parsePrice(text: string): number {
  const t = text.trim().replace(/,/g, '');
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)$/.test(t)) return NaN;
  return Number(t);
}

/** Number of decimals a tick needs (0.00001 -> 5, 0.25 -> 2, 1 -> 0); at most 10. */
export function tickDecimals(tick: number): number {
  for (let d = 0; d <= 10; d++) {
    const scaled = tick * 10 ** d;
    if (Math.abs(Math.round(scaled) - scaled) < 1e-6) return d;
  }
  return 10;
}

/**
 * The price increment of an instrument record: its `tickSize` field when a positive finite
 * number (the server uses it too); else one unit of its price decimals (5 -> 0.00001, 2 -> 0.01)
 * when the record says them: a `decimals` field 0..10, or the demo catalog's asset classes (Bond 3,
 * Equity 2; see priceDecimals); else DEFAULT_TICK. Units down to 5 decimals are multiples of the
 * server's default tick, so a price stepped by them is on the server's tick.
 */
export function tickOf(fields: Readonly<Record<string, unknown>>): number {
  const size = fields.tickSize;
  if (typeof size === 'number' && Number.isFinite(size) && size > 0) return size;
  const d = fields.decimals;
  const known = (typeof d === 'number' && Number.isInteger(d) && d >= 0 && d <= 10) || fields.assetClass === 'Bond' || fields.assetClass === 'Equity';
  if (!known) return DEFAULT_TICK;
  const decimals = priceDecimals(fields);
  return decimals <= 5 ? Number((10 ** -decimals).toFixed(decimals)) : DEFAULT_TICK;
}

/** True when `price` is a whole number of `tick`s (within floating-point noise). */
export function isOnTick(price: number, tick: number): boolean {
  if (!Number.isFinite(price) || !(tick > 0)) return false;
  const ticks = price / tick;
  return Math.abs(ticks - Math.round(ticks)) < 1e-6;
}

/** `price` rounded to the nearest tick (binary noise removed: 1.08523, not 1.0852300000000001). */
export function roundToTick(price: number, tick: number): number {
  if (!Number.isFinite(price) || !(tick > 0)) return price;
  return Number((Math.round(price / tick) * tick).toFixed(tickDecimals(tick)));
}

/** Ticks moved by PageUp / PageDown in a price field (the ticket and the amend form). */
export const PAGE_TICKS = 10;
/** Price field keys and the ticks they move the price by (`stepPrice` steps). */
export const PRICE_KEYS: ReadonlyMap<string, number> = new Map([
  ['ArrowUp', 1],
  ['ArrowDown', -1],
  ['PageUp', PAGE_TICKS],
  ['PageDown', -PAGE_TICKS],
]);

/**
 * `price` moved by `steps` ticks (negative: down), snapped to the tick first, never below one
 * tick. A price that is not a number starts from `fallback` (the market) when given.
 */
export function stepPrice(price: number, tick: number, steps: number, fallback?: number): number {
  const start = Number.isFinite(price) ? price : fallback;
  if (start === undefined || !Number.isFinite(start) || !(tick > 0)) return price;
  return Math.max(roundToTick(tick, tick), roundToTick(roundToTick(start, tick) + steps * tick, tick));
}

/** A price as the ticket shows it: the tick's decimals (`1.08520`, not `1.0852`). */
export function formatTicketPrice(price: number, tick: number): string {
  return Number.isFinite(price) ? price.toFixed(tickDecimals(tick)) : '';
}

/** The price a limit order starts from: the ask for a buy, the bid for a sell (what it would pay now). */
export function marketPriceFor(side: OrderSide, market: Pick<TicketMarket, 'bid' | 'ask'>): number | undefined {
  const p = side === 'buy' ? market.ask : market.bid;
  return p !== undefined && Number.isFinite(p) ? p : undefined;
}

/** Every hint for the ticket as entered (empty: nothing to say). See the module comment. */
export function ticketHints(state: TicketState, market: TicketMarket | undefined): TicketHint[] {
  const hints: TicketHint[] = [];
  if (state.instrument === undefined) {
    hints.push({ field: 'instrument', message: 'Pick an instrument', blocking: true, missing: true });
  } else if (state.orderType === 'market' && market !== undefined && marketPriceFor(state.side, market) === undefined) {
    hints.push({ field: 'instrument', message: `No live ${state.side === 'buy' ? 'ask' : 'bid'}: a market order will be rejected`, blocking: false });
  }
  const quantity = parseQuantity(state.quantityText);
  if (state.quantityText.trim() === '') hints.push({ field: 'quantity', message: 'Enter a quantity', blocking: true, missing: true });
  else if (Number.isNaN(quantity)) hints.push({ field: 'quantity', message: `'${state.quantityText.trim()}' is not a quantity (e.g. 1000000, 1m, 250k)`, blocking: true });
  else if (quantity <= 0) hints.push({ field: 'quantity', message: 'Quantity must be positive', blocking: false });
  else if (!Number.isInteger(quantity)) hints.push({ field: 'quantity', message: 'Quantity must be a whole number', blocking: false });
  if (state.orderType === 'limit') {
    const price = parsePrice(state.priceText);
    if (state.priceText.trim() === '') hints.push({ field: 'price', message: 'Enter a limit price', blocking: true, missing: true });
    else if (Number.isNaN(price)) hints.push({ field: 'price', message: `'${state.priceText.trim()}' is not a price`, blocking: true });
    else if (price <= 0) hints.push({ field: 'price', message: 'Price must be positive', blocking: false });
    else if (market !== undefined && !isOnTick(price, market.tick)) {
      const tick = market.tick;
      hints.push({ field: 'price', message: `Off tick: prices move in steps of ${formatTicketPrice(tick, tick)}`, blocking: false });
    }
  }
  return hints;
}

/** True when some hint blocks sending. */
export function isBlocked(hints: readonly TicketHint[]): boolean {
  return hints.some((h) => h.blocking);
}

/**
 * The order to send, or undefined while a blocking hint stands (see ticketHints). Non-blocking
 * problems are sent as entered: the server's reject names them. No clientOrderId: the SDK makes
 * a unique one per order (read back from the ack).
 */
export function ticketOrder(state: TicketState): OrderRequest | undefined {
  if (state.instrument === undefined) return undefined;
  const quantity = parseQuantity(state.quantityText);
  if (Number.isNaN(quantity)) return undefined;
  if (state.orderType === 'market') return { instrument: state.instrument.subject, side: state.side, quantity, timeInForce: state.timeInForce };
  const price = parsePrice(state.priceText);
  if (Number.isNaN(price)) return undefined;
  return { instrument: state.instrument.subject, side: state.side, quantity, price, timeInForce: state.timeInForce };
}

/** The submit button's text: `Buy 1,000,000 EUR/USD @ MKT`, `Sell 250,000 X @ 12.50`. */
export function submitLabel(state: TicketState): string {
  const verb = state.side === 'buy' ? 'Buy' : 'Sell';
  const quantity = parseQuantity(state.quantityText);
  const qty = Number.isFinite(quantity) ? ` ${quantity.toLocaleString('en-US', { maximumFractionDigits: 6 })}` : '';
  const what = state.instrument === undefined ? '' : ` ${state.instrument.label}`;
  const price = state.orderType === 'market' ? ' @ MKT' : state.priceText.trim() === '' ? '' : ` @ ${state.priceText.trim()}`;
  return `${verb}${qty}${what}${price}`;
}

/**
 * A client order id for the ticket's next order: `t<epoch ms base 36>-<n>-<4 random base-36
 * chars>` (e.g. `tmhq2x1k0-3-0f9z`, at most 25 characters of `[a-z0-9-]`). The ticket picks it
 * (rather than letting the SDK) so that an order whose answer was lost can be found in the
 * blotter and sent again safely: the server refuses a second order with the same id as
 * `clientOrderId`/`duplicate`. Time plus randomness keeps ids of one user apart across tabs
 * and reloads. `n` is the ticket's own counter; `random` returns [0, 1).
 */
export function newClientOrderId(nowMs: number, n: number, random: () => number = Math.random): string {
  const suffix = Math.floor(Math.min(0.999999, Math.max(0, random())) * 36 ** 4).toString(36).padStart(4, '0');
  return `t${Math.max(0, Math.floor(nowMs)).toString(36)}-${Math.max(0, Math.floor(n))}-${suffix}`;
}
