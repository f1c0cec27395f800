/**
 * Order notifications: which blotter rows changed in a way a trader wants to hear about (a fill,
 * a partial fill, a reject, a cancel that was not theirs, an expiry) and the line to show. The
 * first window a view answers is the baseline: nothing old is announced. Pure:
 * order-notices.test.ts.
 */

/** What a notice needs of a blotter row (trade record fields). */
export interface NoticeRow {
  readonly orderId: number;
  readonly status: string;
  readonly filledQuantity: number;
  readonly side: string;
  readonly quantity: number;
  readonly instrument: string;
  readonly lastFillQuantity?: number;
  readonly lastFillPrice?: number;
  readonly reason?: string;
}

/** One notice. */
export interface OrderNotice {
  readonly id: string;
  readonly tone: 'fill' | 'reject' | 'cancel';
  readonly text: string;
  readonly orderId: number;
}

/** Last seen (status, filled quantity) per order id. */
export type Seen = Map<number, { status: string; filled: number }>;

const label = (instrument: string): string => {
  const last = instrument.split('/').pop() ?? instrument;
  // FX pairs read as EUR/USD
  return instrument.startsWith('/FX/') && last.length === 6 ? `${last.slice(0, 3)}/${last.slice(3)}` : last;
};
const qty = (n: number): string => n.toLocaleString('en-US');
const side = (s: string): string => (s === 'sell' ? 'Sell' : 'Buy');

/**
 * Notices for `rows` against `seen` (updated in place). `baseline`: record the rows without
 * announcing anything (the view's first answer, or after a reconnect).
 */
export function orderNotices(rows: readonly NoticeRow[], seen: Seen, baseline: boolean): OrderNotice[] {
  const out: OrderNotice[] = [];
  for (const r of rows) {
    const before = seen.get(r.orderId);
    seen.set(r.orderId, { status: r.status, filled: r.filledQuantity });
    if (baseline) continue;
    const what = `${side(r.side)} ${qty(r.quantity)} ${label(r.instrument)} #${r.orderId}`;
    const filledMore = r.filledQuantity > (before?.filled ?? 0);
    if (filledMore && (r.status === 'filled' || r.status === 'partiallyFilled')) {
      const fill = r.lastFillQuantity !== undefined && r.lastFillPrice !== undefined ? ` ${qty(r.lastFillQuantity)} @ ${r.lastFillPrice}` : '';
      const head = r.status === 'filled' ? 'Filled' : `Partly filled (${qty(r.filledQuantity)} of ${qty(r.quantity)})`;
      out.push({ id: `${r.orderId}:${r.status}:${r.filledQuantity}`, tone: 'fill', text: `${head}: ${what}${fill}`, orderId: r.orderId });
    } else if (r.status === 'rejected' && before?.status !== 'rejected') {
      out.push({ id: `${r.orderId}:rejected`, tone: 'reject', text: `Rejected: ${what}${r.reason ? ` (${r.reason})` : ''}`, orderId: r.orderId });
    } else if (r.status === 'cancelled' && before?.status !== 'cancelled' && r.reason !== undefined && r.reason !== 'user') {
      // a cancel the trader asked for is answered in place; an IOC rest or an end-of-day expiry is news
      const why = r.reason === 'endOfDay' ? 'expired at end of day' : r.reason === 'ioc' ? 'rest cancelled (IOC)' : r.reason;
      out.push({ id: `${r.orderId}:cancelled`, tone: 'cancel', text: `Cancelled: ${what}, ${why}`, orderId: r.orderId });
    }
  }
  return out;
}

/** A blotter view row's fields as a NoticeRow, or undefined when a field is missing. */
export function noticeRow(fields: Readonly<Record<string, unknown>>): NoticeRow | undefined {
  const num = (k: string): number | undefined => (typeof fields[k] === 'number' ? (fields[k] as number) : undefined);
  const str = (k: string): string | undefined => (typeof fields[k] === 'string' ? (fields[k] as string) : undefined);
  const orderId = num('orderId');
  const status = str('status');
  const filledQuantity = num('filledQuantity');
  const quantity = num('quantity');
  const instrument = str('instrument');
  const s = str('side');
  if (orderId === undefined || status === undefined || filledQuantity === undefined || quantity === undefined || instrument === undefined || s === undefined) return undefined;
  const row: { -readonly [K in keyof NoticeRow]: NoticeRow[K] } = { orderId, status, filledQuantity, quantity, instrument, side: s };
  const lq = num('lastFillQuantity');
  const lp = num('lastFillPrice');
  const reason = str('reason');
  if (lq !== undefined) row.lastFillQuantity = lq;
  if (lp !== undefined) row.lastFillPrice = lp;
  if (reason !== undefined && reason !== '') row.reason = reason;
  return row;
}
