import type { ColDef, ICellRendererParams, RowClassParams, RowClassRules, ValueFormatterParams } from 'ag-grid-community';
import { AgGridReact } from 'ag-grid-react';
import { useCallback, useEffect } from 'react';
import { useServerViewGrid, type ServerViewQuery } from '../server-view-grid/use-server-view-grid.js';
import { gridTheme } from '../watchlist/grid-setup.js';
import { formatTime } from '../watchlist/watchlist-row.js';
import { chipFilter, type BlotterChip } from './blotter-query.js';
import {
  fillRatio,
  formatAveragePrice,
  formatLastFill,
  formatOrderPrice,
  formatQuantity,
  formatSide,
  formatTimeInForce,
  isOpenOrder,
  statusClass,
  statusLabel,
  statusTone,
  toBlotterRow,
  type BlotterRow,
  type StatusTone,
} from './blotter-row.js';

/** Rows per block the grid asks for (one `view.change` each). */
const BLOCK_ROWS = 50;
/** Blocks the grid keeps. */
const MAX_BLOCKS = 10;
/** After the row count changed (an order arrived or left the chip), loaded blocks are re-read this much later, ms. */
const RECOUNT_REFRESH_MS = 150;

/** What the grid's cells reach through AG Grid's context. */
export interface BlotterGridContext {
  /** Cancels the order; the page shows the outcome. */
  cancel(row: BlotterRow): void;
  /** clientOrderIds with a cancel in flight. */
  readonly cancelling: ReadonlySet<string>;
  /** Opens the amend form for the order (the page shows it above the grid). */
  amend(row: BlotterRow): void;
  /** clientOrderId of the order whose amend form is open; undefined when none. */
  readonly amending: string | undefined;
}

type Formatter = (p: ValueFormatterParams<BlotterRow>) => string;
const NUM = ['cell-num', 'ag-right-aligned-cell'];
const qty: Formatter = (p) => formatQuantity(typeof p.value === 'number' ? p.value : undefined);

/** Status pill coloured per status. */
function StatusCell(params: ICellRendererParams<BlotterRow>) {
  const row = params.data;
  if (row === undefined) return null;
  return (
    <span className={statusClass(row.status, row.statusCode)} data-testid="blotter-status" data-status={row.status}>
      {statusLabel(row.status, row.statusCode)}
    </span>
  );
}

/** Filled quantity with a bar of the filled share. */
function FilledCell(params: ICellRendererParams<BlotterRow>) {
  const row = params.data;
  if (row === undefined) return null;
  return (
    <span className="filled-cell">
      <span className="filled-bar" style={{ width: `${Math.round(fillRatio(row) * 100)}%` }} aria-hidden="true" />
      <span className="filled-figure">{formatQuantity(row.filledQuantity)}</span>
    </span>
  );
}

/** Amend and Cancel buttons on open orders. */
function ActionsCell(params: ICellRendererParams<BlotterRow, unknown, BlotterGridContext>) {
  const row = params.data;
  if (row === undefined || !isOpenOrder(row) || row.clientOrderId === '') return null;
  const busy = params.context.cancelling.has(row.clientOrderId);
  const amending = params.context.amending === row.clientOrderId;
  return (
    <span className="grid-actions">
      <button
        type="button"
        className="grid-amend"
        aria-pressed={amending}
        disabled={busy}
        onClick={() => params.context.amend(row)}
        aria-label={`Amend order ${row.clientOrderId}`}
        data-testid="blotter-amend"
        data-client-order-id={row.clientOrderId}
      >
        Amend
      </button>
      <button
        type="button"
        className="grid-cancel"
        disabled={busy}
        onClick={() => params.context.cancel(row)}
        aria-label={`Cancel order ${row.clientOrderId}`}
        data-testid="blotter-cancel"
        data-client-order-id={row.clientOrderId}
      >
        {busy ? 'Cancelling…' : 'Cancel'}
      </button>
    </span>
  );
}

// Column ids are trade record field names (plus derived ones); the server decides the order.
// What a trader scans first (instrument, side, size, price, status, fills) fits beside the ticket
// at 1280 px; ids and the reason follow.
const COLUMNS: ColDef<BlotterRow>[] = [
  { field: 'created', headerName: 'Time', width: 128, valueFormatter: (p) => (typeof p.value === 'number' ? formatTime(p.value) : ''), cellClass: 'cell-num', pinned: 'left' },
  { field: 'instrumentLabel', headerName: 'Instrument', width: 124, cellClass: 'cell-subject', tooltipField: 'instrument' },
  { field: 'side', headerName: 'Side', width: 58, valueFormatter: (p) => formatSide(p.value as BlotterRow['side']), cellClass: (p) => `side-cell side-cell-${String(p.value)}` },
  { field: 'quantity', headerName: 'Qty', width: 104, type: 'rightAligned', valueFormatter: qty, cellClass: NUM, enableCellChangeFlash: true },
  { colId: 'price', headerName: 'Price', width: 90, type: 'rightAligned', valueGetter: (p) => (p.data === undefined ? '' : formatOrderPrice(p.data)), cellClass: NUM, enableCellChangeFlash: true },
  { field: 'status', headerName: 'Status', width: 124, cellRenderer: StatusCell, enableCellChangeFlash: true },
  { field: 'filledQuantity', headerName: 'Filled', width: 104, type: 'rightAligned', cellRenderer: FilledCell, cellClass: NUM, enableCellChangeFlash: true },
  { colId: 'averagePrice', headerName: 'Avg px', width: 96, type: 'rightAligned', valueGetter: (p) => (p.data === undefined ? '' : formatAveragePrice(p.data)), cellClass: NUM, enableCellChangeFlash: true },
  { colId: 'lastFill', headerName: 'Last fill', width: 160, type: 'rightAligned', valueGetter: (p) => (p.data === undefined ? '' : formatLastFill(p.data)), cellClass: NUM, enableCellChangeFlash: true },
  { field: 'timeInForce', headerName: 'TIF', width: 56, valueFormatter: (p) => formatTimeInForce(String(p.value ?? '')) },
  { field: 'orderId', headerName: 'Order', width: 70, cellClass: NUM, type: 'rightAligned' },
  { field: 'clientOrderId', headerName: 'Client id', width: 140, cellClass: 'cell-mono', tooltipField: 'clientOrderId' },
  { field: 'reason', headerName: 'Reason', flex: 1, minWidth: 140, tooltipField: 'reason', cellClass: 'cell-reason' },
  { colId: 'actions', headerName: '', width: 150, cellRenderer: ActionsCell, pinned: 'right', resizable: false },
];

const DEFAULT_COLUMN: ColDef<BlotterRow> = { sortable: false, resizable: true, suppressHeaderMenuButton: true, suppressMovable: false };

const toneIs = (tone: StatusTone) => (p: RowClassParams<BlotterRow>) => p.data !== undefined && statusTone(p.data.status, p.data.statusCode) === tone;
/** Row classes: the status colour on the row's left edge (rules, unlike getRowClass, follow data updates). */
const ROW_CLASS_RULES: RowClassRules<BlotterRow> = {
  'blotter-row-working': toneIs('working'),
  'blotter-row-partial': toneIs('partial'),
  'blotter-row-filled': toneIs('filled'),
  'blotter-row-cancelled': toneIs('cancelled'),
  'blotter-row-rejected': toneIs('rejected'),
};

/**
 * The blotter grid: AG Grid's infinite row model over a server view of `container` (the user's
 * `/BLOTTER/<user>`, newest first), filtered by `chip`. Only the blocks around the visible rows
 * are in the browser; the visible rows stream live and flash on change. `onCount` gets the row
 * count of the chip's view; `onError` the server's refusal (e.g. NOT_ENTITLED).
 */
export function BlotterGrid({
  container,
  chip,
  context,
  onCount,
  onError,
}: {
  container: string;
  chip: BlotterChip;
  context: BlotterGridContext;
  onCount(count: number | undefined): void;
  onError(message: string | undefined): void;
}) {
  const query = useCallback((): ServerViewQuery => ({ filter: chipFilter(chip), sort: [] }), [chip]);
  const { gridProps, apiRef } = useServerViewGrid<BlotterRow>({
    container,
    toRow: toBlotterRow,
    query,
    onCount,
    onError,
    blockRows: BLOCK_ROWS,
    maxBlocks: MAX_BLOCKS,
    blockLoadDebounceMs: 40,
    recountRefreshMs: RECOUNT_REFRESH_MS,
  });
  /** Opens the amend form for an open order; nothing for other rows. */
  const amendable = (row: BlotterRow | undefined) => {
    if (row !== undefined && isOpenOrder(row) && row.clientOrderId !== '') context.amend(row);
  };
  // a cancel starting or ending, or the amend form opening or closing, changes only the action cells
  useEffect(() => apiRef.current?.refreshCells({ columns: ['actions'], force: true }), [apiRef, context]);

  return (
    <div className="blotter-grid" data-testid="blotter-grid">
      <AgGridReact<BlotterRow>
        theme={gridTheme}
        columnDefs={COLUMNS}
        defaultColDef={DEFAULT_COLUMN}
        {...gridProps}
        context={context}
        rowClassRules={ROW_CLASS_RULES}
        onCellDoubleClicked={(e) => {
          // not on the action buttons: a quick double click on Cancel must not also open the amend form
          if (e.column.getColId() !== 'actions') amendable(e.data);
        }}
        onCellKeyDown={(e) => {
          // Enter on a focused open order amends it (on the action cell, Enter is the buttons')
          const key = e.event instanceof KeyboardEvent ? e.event : undefined;
          if (key?.key === 'Enter' && !key.shiftKey && 'column' in e && e.column.getColId() !== 'actions') amendable(e.data);
        }}
        cellFlashDuration={500}
        cellFadeDuration={700}
        animateRows={false}
        // 14 columns: render them all, so every cell of a visible row is in the DOM (find-in-page, tests)
        suppressColumnVirtualisation
        tooltipShowDelay={300}
        overlayNoRowsTemplate="<span class='blotter-empty'>No orders here yet</span>"
      />
    </div>
  );
}
