/**
 * One blotter grid row, built from a trade record (`/TRADE/<user>/<orderId>`, fields per the
 * orders contract) as a view row delivers it, and the cell formatting the grid uses: status
 * labels and colour classes, side, price or MKT, quantities, fills. Pure: blotter-row.test.ts.
 * Fields are read defensively: a record missing a field (or holding another type) shows an empty
 * cell, never a crash.
 */

import { ORDER_STATUS_CODES, type OrderSide, type OrderStatus } from '@tidewire/protocol';
import { displayPair } from '../fx/fx-pairs.js';
import { DONE_STATUS_CODE } from './blotter-query.js';
import { tickDecimals, tickOf } from './ticket-form.js';

/** Colour family of a status: the grid's status cell and the row's left edge use it. */
export type StatusTone = 'working' | 'partial' | 'filled' | 'cancelled' | 'rejected' | 'unknown';

/** A blotter grid row. */
export interface BlotterRow {
  /** Server-wide record id (AG Grid row identity). */
  readonly rowId: number;
  /** Trade record subject, `/TRADE/<user>/<orderId>`. */
  readonly subject: string;
  /** Rank in the view (0 = newest). */
  readonly rank: number;
  readonly orderId: number | undefined;
  readonly clientOrderId: string;
  /** Instrument subject, e.g. `/FX/EURUSD`. */
  readonly instrument: string;
  /** `EUR/USD` for FX, the product code for products, else the subject. */
  readonly instrumentLabel: string;
  readonly side: OrderSide | '';
  readonly quantity: number | undefined;
  /** `market` or `limit`; from `orderType`, else a positive `price` means limit. */
  readonly orderType: 'market' | 'limit' | '';
  /** Limit price; undefined for market orders. */
  readonly price: number | undefined;
  readonly timeInForce: string;
  /** Status text; '' when missing. */
  readonly status: string;
  /** Status code (new 1 ... rejected 12); undefined when missing. */
  readonly statusCode: number | undefined;
  readonly filledQuantity: number | undefined;
  readonly averagePrice: number | undefined;
  readonly lastFillQuantity: number | undefined;
  readonly lastFillPrice: number | undefined;
  /** Why the order was rejected or cancelled; '' when none. */
  readonly reason: string;
  /** Creation time, epoch ms; undefined when missing. */
  readonly created: number | undefined;
  /** Last transition, epoch ms. */
  readonly updated: number | undefined;
  /** Journal seq of the last transition. */
  readonly seq: number | undefined;
  /**
   * Price decimals guessed from this row's own prices (see priceDecimalsOf): used only until the
   * instrument record says its decimals (see rowDecimals).
   */
  readonly decimals: number;
}

/** What the row mapping needs from a view row. */
export interface TradeViewRow {
  readonly id: number;
  readonly subject: string;
  readonly index: number;
  readonly fields: Readonly<Record<string, unknown>>;
}

const STATUS_LABELS: Readonly<Record<OrderStatus, string>> = {
  new: 'New',
  acknowledged: 'Working',
  partiallyFilled: 'Partially filled',
  filled: 'Filled',
  cancelled: 'Cancelled',
  rejected: 'Rejected',
};

const STATUS_TONES: Readonly<Record<OrderStatus, StatusTone>> = {
  new: 'working',
  acknowledged: 'working',
  partiallyFilled: 'partial',
  filled: 'filled',
  cancelled: 'cancelled',
  rejected: 'rejected',
};

/** Status per code, for records that carry only the code. */
const STATUS_BY_CODE: ReadonlyMap<number, OrderStatus> = new Map(Object.entries(ORDER_STATUS_CODES).map(([status, code]) => [code, status as OrderStatus]));

function isStatusText(value: string): value is OrderStatus {
  return Object.hasOwn(STATUS_LABELS, value);
}

/** A finite number field, else undefined. */
function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** A string field, else ''. */
function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The status text of a row: its `status` field, else the one its `statusCode` stands for. */
function statusOf(status: string, code: number | undefined): OrderStatus | undefined {
  if (isStatusText(status)) return status;
  return code === undefined ? undefined : STATUS_BY_CODE.get(code);
}

/** Display label of a status (`acknowledged` -> `Working`); an unknown status is shown as sent. */
export function statusLabel(status: string, statusCode?: number): string {
  const known = statusOf(status, statusCode);
  return known === undefined ? status : STATUS_LABELS[known];
}

/** Colour family of a status; `unknown` for a status this page does not know. */
export function statusTone(status: string, statusCode?: number): StatusTone {
  const known = statusOf(status, statusCode);
  return known === undefined ? 'unknown' : STATUS_TONES[known];
}

/** CSS class of a status cell: `order-status order-status-<tone>`. */
export function statusClass(status: string, statusCode?: number): string {
  return `order-status order-status-${statusTone(status, statusCode)}`;
}

/**
 * True while an order can still be cancelled: statusCode below 10 (new, acknowledged, partially
 * filled). Without a code, the status text decides; unknown states are not open.
 */
export function isOpenOrder(row: Pick<BlotterRow, 'status' | 'statusCode'>): boolean {
  if (row.statusCode !== undefined) return row.statusCode < DONE_STATUS_CODE;
  const known = statusOf(row.status, undefined);
  return known === 'new' || known === 'acknowledged' || known === 'partiallyFilled';
}

/** Display name of an instrument subject: `/FX/EURUSD` -> `EUR/USD`, `/PRODUCT/X` -> `X`. */
export function instrumentLabel(subject: string): string {
  const fx = /^\/FX\/([^/@]+)$/.exec(subject);
  if (fx !== null) return displayPair(fx[1]!);
  const product = /^\/PRODUCT\/([^/@]+)$/.exec(subject);
  if (product !== null) return product[1]!;
  return subject;
}

/** Digits after the decimal point of `value` as printed (float noise past 10 digits ignored). */
export function decimalPlaces(value: number): number {
  if (!Number.isFinite(value)) return 0;
  const printed = String(Number(value.toFixed(10)));
  if (printed.includes('e')) return 0; // 1e21 and up have no fraction; tiny values print as 1e-7
  const dot = printed.indexOf('.');
  return dot < 0 ? 0 : printed.length - dot - 1;
}

/** Fewest and most price decimals a row shows. */
const MIN_DECIMALS = 2;
const MAX_DECIMALS = 6;

/**
 * Decimals for a row's prices: enough for its limit and last fill price, at least 2, at most 6
 * (trade records carry no `decimals` field: EUR/USD fills at 1.08523 need 5, an equity at 12.5 needs 2).
 */
export function priceDecimalsOf(...prices: readonly (number | undefined)[]): number {
  let d = MIN_DECIMALS;
  for (const p of prices) if (p !== undefined) d = Math.max(d, decimalPlaces(p));
  return Math.min(MAX_DECIMALS, d);
}

/** A blotter row from a view row of trade records. */
export function toBlotterRow(r: TradeViewRow): BlotterRow {
  const f = r.fields;
  const rawPrice = num(f.price);
  const declaredType = text(f.orderType);
  const orderType = declaredType === 'market' || declaredType === 'limit' ? declaredType : rawPrice !== undefined && rawPrice > 0 ? 'limit' : rawPrice === undefined ? '' : 'market';
  const price = orderType === 'limit' ? rawPrice : undefined;
  const side = text(f.side);
  const statusCode = num(f.statusCode);
  const lastFillPrice = num(f.lastFillPrice);
  const instrument = text(f.instrument);
  return {
    rowId: r.id,
    subject: r.subject,
    rank: r.index,
    orderId: num(f.orderId),
    clientOrderId: text(f.clientOrderId),
    instrument,
    instrumentLabel: instrumentLabel(instrument),
    side: side === 'buy' || side === 'sell' ? side : '',
    quantity: num(f.quantity),
    orderType,
    price,
    timeInForce: text(f.timeInForce),
    status: text(f.status),
    statusCode,
    filledQuantity: num(f.filledQuantity),
    averagePrice: num(f.averagePrice),
    lastFillQuantity: num(f.lastFillQuantity),
    lastFillPrice,
    reason: text(f.reason),
    created: num(f.created),
    updated: num(f.updated),
    seq: num(f.seq),
    decimals: priceDecimalsOf(price, lastFillPrice),
  };
}

/** Grouped whole quantity (`1,000,000`), or an empty cell. */
export function formatQuantity(value: number | undefined): string {
  return value === undefined ? '' : value.toLocaleString('en-US', { maximumFractionDigits: 0 });
}

/** A price with `decimals` digits, or an empty cell. */
export function formatPrice(value: number | undefined, decimals: number): string {
  return value === undefined ? '' : value.toFixed(Math.min(10, Math.max(0, decimals)));
}

/** The price/market cell: `MKT` for market orders, the limit price otherwise. */
export function formatOrderPrice(row: Pick<BlotterRow, 'orderType' | 'price' | 'decimals'>): string {
  if (row.orderType === 'market') return 'MKT';
  return formatPrice(row.price, row.decimals);
}

/** Average fill price with the row's decimals (the instrument's); empty until something filled. */
export function formatAveragePrice(row: Pick<BlotterRow, 'averagePrice' | 'filledQuantity' | 'decimals'>): string {
  if (row.filledQuantity === undefined || row.filledQuantity <= 0) return '';
  return formatPrice(row.averagePrice, row.decimals);
}

/**
 * Price decimals of an instrument record: those of its tick (`tickSize`, else its `decimals`
 * field or asset class: the ticket's tickOf), so every price of the instrument prints alike.
 */
export function instrumentDecimals(fields: Readonly<Record<string, unknown>>): number {
  return tickDecimals(tickOf(fields));
}

/** Decimals for a row's prices: its instrument's when known (`known`, by subject), else the row's guess. */
export function rowDecimals(row: Pick<BlotterRow, 'instrument' | 'decimals'>, known: ReadonlyMap<string, number>): number {
  return known.get(row.instrument) ?? row.decimals;
}

/**
 * Notional of an order in the price's currency: quantity x limit price for a limit order; for a
 * market order (no price) filled quantity x average fill price once something filled; else undefined.
 */
export function notionalOf(row: Pick<BlotterRow, 'orderType' | 'quantity' | 'price' | 'filledQuantity' | 'averagePrice'>): number | undefined {
  if (row.orderType === 'limit' && row.quantity !== undefined && row.price !== undefined) return row.quantity * row.price;
  if (row.filledQuantity !== undefined && row.filledQuantity > 0 && row.averagePrice !== undefined) return row.filledQuantity * row.averagePrice;
  return undefined;
}

/** Notional as a grouped whole amount (`1,085,200`); amounts under 1,000 keep 2 decimals (`6.00`). */
export function formatNotional(value: number | undefined): string {
  if (value === undefined) return '';
  const digits = Math.abs(value) < 1000 ? 2 : 0;
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * An order's time in local time, short enough for a narrow column: `HH:MM:SS` when it is on the
 * same day as `now`, else its date, `27 Nov` (`31 Dec 25` in another year); '' when missing.
 * The full date and time is formatDateTime's (the cell's tooltip).
 */
export function formatOrderTime(epochMs: number | undefined, now: number): string {
  if (epochMs === undefined || !Number.isFinite(epochMs) || epochMs <= 0) return '';
  const d = new Date(epochMs);
  const today = new Date(now);
  const pad = (n: number) => String(n).padStart(2, '0');
  const sameDay = d.getFullYear() === today.getFullYear() && d.getMonth() === today.getMonth() && d.getDate() === today.getDate();
  if (sameDay) return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  const day = `${d.getDate()} ${MONTHS[d.getMonth()]!}`;
  return d.getFullYear() === today.getFullYear() ? day : `${day} ${pad(d.getFullYear() % 100)}`;
}

/** The full local date and time (`2026-11-27 14:05:09.123`) for a tooltip or an export; '' when missing. */
export function formatDateTime(epochMs: number | undefined): string {
  if (epochMs === undefined || !Number.isFinite(epochMs) || epochMs <= 0) return '';
  const d = new Date(epochMs);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** The last fill: `250,000 @ 1.08523`, or an empty cell when nothing filled yet. */
export function formatLastFill(row: Pick<BlotterRow, 'lastFillQuantity' | 'lastFillPrice' | 'decimals'>): string {
  if (row.lastFillQuantity === undefined || row.lastFillQuantity <= 0 || row.lastFillPrice === undefined) return '';
  return `${formatQuantity(row.lastFillQuantity)} @ ${formatPrice(row.lastFillPrice, row.decimals)}`;
}

/** `Buy` / `Sell`, or an empty cell. */
export function formatSide(side: BlotterRow['side']): string {
  return side === 'buy' ? 'Buy' : side === 'sell' ? 'Sell' : '';
}

/** Time in force as traders write it: `DAY`, `IOC`, `GTC`. */
export function formatTimeInForce(tif: string): string {
  return tif.toUpperCase();
}

/** Filled share of the order, 0..1 (for the fill bar); 0 when unknown. */
export function fillRatio(row: Pick<BlotterRow, 'filledQuantity' | 'quantity'>): number {
  if (row.filledQuantity === undefined || row.quantity === undefined || row.quantity <= 0) return 0;
  return Math.max(0, Math.min(1, row.filledQuantity / row.quantity));
}
