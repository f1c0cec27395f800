/**
 * CSV export of the blotter: every order of the shown filter as the server has it (read in
 * windows of at most MAX_VIEW_WINDOW_ROWS through one-shot views), not only the rows the grid
 * has loaded. Cells print as the grid shows them, with the full date and time. The CSV text is
 * pure (blotterCsv, tested in blotter-export.test.ts); readAllRows does the reading.
 */

import type { ViewHandle, ViewHandler, ViewRequest, ViewRow } from '@tidewire/client';
import { MAX_VIEW_WINDOW_ROWS } from '@tidewire/protocol';
import {
  formatAveragePrice,
  formatDateTime,
  formatLastFill,
  formatNotional,
  formatOrderPrice,
  formatSide,
  formatTimeInForce,
  notionalOf,
  rowDecimals,
  statusLabel,
  type BlotterRow,
} from './blotter-row.js';

/** Header and cell of each exported column, in order. */
const CSV_COLUMNS: readonly { readonly header: string; cell(row: BlotterRow, decimals: number): string }[] = [
  { header: 'Time', cell: (r) => formatDateTime(r.created) },
  { header: 'Instrument', cell: (r) => r.instrumentLabel },
  { header: 'Side', cell: (r) => formatSide(r.side) },
  { header: 'Qty', cell: (r) => (r.quantity === undefined ? '' : String(r.quantity)) },
  { header: 'Price', cell: (r, d) => formatOrderPrice({ ...r, decimals: d }) },
  { header: 'Notional', cell: (r) => formatNotional(notionalOf(r)).replace(/,/g, '') },
  { header: 'Status', cell: (r) => statusLabel(r.status, r.statusCode) },
  { header: 'Filled', cell: (r) => (r.filledQuantity === undefined ? '' : String(r.filledQuantity)) },
  { header: 'Avg px', cell: (r, d) => formatAveragePrice({ ...r, decimals: d }) },
  { header: 'Last fill', cell: (r, d) => formatLastFill({ ...r, decimals: d }).replace(/,/g, '') },
  { header: 'TIF', cell: (r) => formatTimeInForce(r.timeInForce) },
  { header: 'Order', cell: (r) => (r.orderId === undefined ? '' : String(r.orderId)) },
  { header: 'Client id', cell: (r) => r.clientOrderId },
  { header: 'Reason', cell: (r) => r.reason },
];

/** One CSV field: quoted (inner quotes doubled) when it holds a comma, quote or line break. */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** The CSV text of `rows` (header line first, CRLF line ends), prices with the instruments' decimals. */
export function blotterCsv(rows: readonly BlotterRow[], known: ReadonlyMap<string, number>): string {
  const lines = [CSV_COLUMNS.map((c) => csvField(c.header)).join(',')];
  for (const row of rows) {
    const d = rowDecimals(row, known);
    lines.push(CSV_COLUMNS.map((c) => csvField(c.cell(row, d))).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** Opens a view (the app's Connection.view); undefined when logged out. */
export type OpenView = (request: ViewRequest, handler: ViewHandler) => ViewHandle | undefined;

/** One window of a view, read once: its rows (copied) and the view's row count. */
function readWindow(open: OpenView, container: string, filter: string, offset: number, size: number): Promise<{ rows: ViewRow[]; count: number }> {
  return new Promise((resolve, reject) => {
    let handle: ViewHandle | undefined;
    let done = false;
    const window = { offset, size };
    handle = open(filter === '' ? { container, window } : { container, filter, window }, {
      onRows: (rows, count) => {
        if (done) return;
        done = true;
        handle?.close();
        resolve({ rows: rows.map((r) => ({ ...r, fields: { ...r.fields } })), count });
      },
      onError: (e) => {
        if (done) return;
        done = true;
        handle?.close();
        reject(new Error(`${e.code}: ${e.message}`));
      },
    });
    if (handle === undefined && !done) reject(new Error('not logged in'));
  });
}

/** Every row of the view of `container` with `filter`, in view order (newest first for the blotter). */
export async function readAllRows(open: OpenView, container: string, filter: string): Promise<ViewRow[]> {
  const all: ViewRow[] = [];
  for (;;) {
    const { rows, count } = await readWindow(open, container, filter, all.length, MAX_VIEW_WINDOW_ROWS);
    all.push(...rows);
    if (rows.length === 0 || all.length >= count) return all;
  }
}
