/**
 * Which blotter columns fit a grid of a given width. Every column has a fixed width (the reason
 * takes what is left, at least its minimum); when they do not all fit, the least needed go first
 * (ids, TIF, reason, then the fill detail), so at any width the trader sees instrument, side,
 * size, price, status and the actions without scrolling sideways. Pure: blotter-columns.test.ts.
 */

/** Width of each column in px (the reason: its minimum); the grid's column defs use these. */
export const COLUMN_WIDTHS: Readonly<Record<string, number>> = {
  created: 92,
  instrumentLabel: 92,
  side: 48,
  quantity: 92,
  price: 80,
  notional: 104,
  status: 112,
  filledQuantity: 92,
  averagePrice: 80,
  lastFill: 150,
  timeInForce: 50,
  orderId: 64,
  clientOrderId: 128,
  reason: 120,
  actions: 80,
};

/** Columns that hide when space runs out, first hidden first. The others always show. */
export const HIDE_ORDER: readonly string[] = ['clientOrderId', 'orderId', 'timeInForce', 'reason', 'averagePrice', 'lastFill', 'notional', 'created'];

/** Room the grid's borders and a vertical scrollbar take, px. */
const CHROME = 20;

/**
 * Column ids to hide in a grid `width` px wide: as few as possible, in HIDE_ORDER, until the rest
 * fit; none when the width is not known yet (0).
 */
export function hiddenColumns(width: number): string[] {
  if (!(width > 0)) return [];
  let total = Object.values(COLUMN_WIDTHS).reduce((a, b) => a + b, 0);
  const hidden: string[] = [];
  for (const id of HIDE_ORDER) {
    if (total + CHROME <= width) break;
    hidden.push(id);
    total -= COLUMN_WIDTHS[id] ?? 0;
  }
  return hidden;
}

/** Header names of the columns a trader may show or hide (HIDE_ORDER's), for the column chooser. */
export const CHOOSABLE_COLUMNS: readonly { readonly id: string; readonly label: string }[] = [
  { id: 'created', label: 'Time' },
  { id: 'notional', label: 'Notional' },
  { id: 'lastFill', label: 'Last fill' },
  { id: 'averagePrice', label: 'Avg px' },
  { id: 'reason', label: 'Reason' },
  { id: 'timeInForce', label: 'TIF' },
  { id: 'orderId', label: 'Order' },
  { id: 'clientOrderId', label: 'Client id' },
];

/**
 * Column ids to hide: those that do not fit (`auto`, from hiddenColumns), except the ones the
 * trader chose to show (`chosen` id -> true), plus the ones the trader chose to hide (-> false).
 */
export function columnsToHide(auto: readonly string[], chosen: ReadonlyMap<string, boolean>): string[] {
  const hide = new Set(auto.filter((id) => chosen.get(id) !== true));
  for (const [id, show] of chosen) if (!show) hide.add(id);
  return HIDE_ORDER.filter((id) => hide.has(id));
}
