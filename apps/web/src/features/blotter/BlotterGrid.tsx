import type { ColDef, ICellRendererParams, RowClassParams, RowClassRules, ValueGetterParams } from 'ag-grid-community';
import { AgGridReact } from 'ag-grid-react';
import { useCallback, useEffect, useRef, useState } from 'react';
import type { ViewRow } from '@tidewire/client';
import { useServerViewGrid, type ServerViewQuery } from '../server-view-grid/use-server-view-grid.js';
import { gridTheme } from '../watchlist/grid-setup.js';
import { COLUMN_WIDTHS, columnsToHide, hiddenColumns } from './blotter-columns.js';
import { blotterFilter, type BlotterChip, type BlotterFilters } from './blotter-query.js';
import {
  fillRatio,
  formatAveragePrice,
  formatDateTime,
  formatLastFill,
  formatNotional,
  formatOrderPrice,
  formatOrderTime,
  formatQuantity,
  formatSide,
  formatTimeInForce,
  isOpenOrder,
  notionalOf,
  rowDecimals,
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
  /** Price decimals per instrument subject (from the instrument records); rows of others use their own guess. */
  readonly decimals: ReadonlyMap<string, number>;
}

type Getter = ValueGetterParams<BlotterRow, unknown, BlotterGridContext>;
const NUM = ['cell-num', 'ag-right-aligned-cell'];
const qty = (p: { value: unknown }) => formatQuantity(typeof p.value === 'number' ? p.value : undefined);
/** The row with its instrument's price decimals (a price cell's input); undefined for a row not loaded yet. */
const priced = (p: Getter): BlotterRow | undefined => (p.data === undefined ? undefined : { ...p.data, decimals: rowDecimals(p.data, p.context.decimals) });

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
        title="Amend (double-click or Enter on the row)"
        data-testid="blotter-amend"
        data-client-order-id={row.clientOrderId}
      >
        <span aria-hidden="true">✎</span>
      </button>
      <button
        type="button"
        className="grid-cancel"
        disabled={busy}
        onClick={() => params.context.cancel(row)}
        aria-label={busy ? `Cancelling order ${row.clientOrderId}` : `Cancel order ${row.clientOrderId}`}
        title={busy ? 'Cancelling…' : 'Cancel order'}
        aria-busy={busy}
        data-testid="blotter-cancel"
        data-client-order-id={row.clientOrderId}
      >
        <span aria-hidden="true">{busy ? '…' : '✕'}</span>
      </button>
    </span>
  );
}

// Column ids are trade record field names (plus derived ones); widths and which columns give way
// on a narrow grid are in blotter-columns.ts.
const W = COLUMN_WIDTHS;
const COLUMNS: ColDef<BlotterRow>[] = [
  {
    field: 'created', headerName: 'Time', width: W.created, pinned: 'left', cellClass: 'cell-num',
    headerTooltip: 'Time of day today, the date for earlier days; hover a cell for both',
    valueFormatter: (p) => formatOrderTime(typeof p.value === 'number' ? p.value : undefined, Date.now()),
    tooltipValueGetter: (p) => formatDateTime(typeof p.value === 'number' ? p.value : undefined),
  },
  { field: 'instrumentLabel', headerName: 'Instrument', width: W.instrumentLabel, cellClass: 'cell-subject', tooltipField: 'instrument' },
  { field: 'side', headerName: 'Side', width: W.side, valueFormatter: (p) => formatSide(p.value as BlotterRow['side']), cellClass: (p) => `side-cell side-cell-${String(p.value)}` },
  { field: 'quantity', headerName: 'Qty', width: W.quantity, type: 'rightAligned', valueFormatter: qty, cellClass: NUM, enableCellChangeFlash: true },
  { colId: 'price', headerName: 'Price', width: W.price, type: 'rightAligned', valueGetter: (p: Getter) => { const r = priced(p); return r === undefined ? '' : formatOrderPrice(r); }, cellClass: NUM, enableCellChangeFlash: true },
  {
    colId: 'notional', headerName: 'Notional', width: W.notional, type: 'rightAligned', cellClass: NUM, enableCellChangeFlash: true,
    headerTooltip: 'Quantity x limit price; for a market order, filled x average price',
    valueGetter: (p: Getter) => (p.data === undefined ? '' : formatNotional(notionalOf(p.data))),
  },
  { field: 'status', headerName: 'Status', width: W.status, cellRenderer: StatusCell, enableCellChangeFlash: true },
  { field: 'filledQuantity', headerName: 'Filled', width: W.filledQuantity, type: 'rightAligned', cellRenderer: FilledCell, cellClass: NUM, enableCellChangeFlash: true },
  { colId: 'averagePrice', headerName: 'Avg px', width: W.averagePrice, type: 'rightAligned', valueGetter: (p: Getter) => { const r = priced(p); return r === undefined ? '' : formatAveragePrice(r); }, cellClass: NUM, enableCellChangeFlash: true },
  { colId: 'lastFill', headerName: 'Last fill', flex: 1, minWidth: W.lastFill, type: 'rightAligned', valueGetter: (p: Getter) => { const r = priced(p); return r === undefined ? '' : formatLastFill(r); }, cellClass: NUM, enableCellChangeFlash: true },
  { field: 'timeInForce', headerName: 'TIF', width: W.timeInForce, valueFormatter: (p) => formatTimeInForce(String(p.value ?? '')) },
  { field: 'orderId', headerName: 'Order', width: W.orderId, cellClass: NUM, type: 'rightAligned' },
  { field: 'clientOrderId', headerName: 'Client id', width: W.clientOrderId, cellClass: 'cell-mono', tooltipField: 'clientOrderId' },
  { field: 'reason', headerName: 'Reason', flex: 1, minWidth: W.reason, tooltipField: 'reason', cellClass: 'cell-reason' },
  { colId: 'actions', headerName: '', headerTooltip: 'Amend / Cancel', width: W.actions, cellRenderer: ActionsCell, pinned: 'right', resizable: false },
];

/** The app's grid theme with tighter cell padding: the trading columns fit a 1024 px window. */
const blotterTheme = gridTheme.withParams({ cellHorizontalPadding: 10 });

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
  filters,
  chosenColumns,
  onHiddenColumns,
  context,
  pinned,
  onInstrument,
  onCount,
  onError,
}: {
  container: string;
  chip: BlotterChip;
  /** Instrument and side filters, added to the chip's. */
  filters: BlotterFilters;
  /** Columns the trader chose to show (true) or hide (false) whatever the width. */
  chosenColumns: ReadonlyMap<string, boolean>;
  /** The hidden column ids, comma-separated, whenever they change. */
  onHiddenColumns(ids: string): void;
  context: BlotterGridContext;
  /** Rows pinned above the server's: the orders refused at submit (reject-rows.ts). */
  pinned: BlotterRow[];
  /** Called with the instrument subject of each row read (to learn its decimals). */
  onInstrument(subject: string): void;
  onCount(count: number | undefined): void;
  onError(message: string | undefined): void;
}) {
  const query = useCallback((): ServerViewQuery => ({ filter: blotterFilter(chip, filters), sort: [] }), [chip, filters]);
  const latestOnInstrument = useRef(onInstrument);
  latestOnInstrument.current = onInstrument;
  const toRow = useCallback((r: ViewRow) => {
    const row = toBlotterRow(r);
    latestOnInstrument.current(row.instrument);
    return row;
  }, []);
  const { gridProps, apiRef } = useServerViewGrid<BlotterRow>({
    container,
    toRow,
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
  useEffect(() => apiRef.current?.refreshCells({ columns: ['actions'], force: true }), [apiRef, context.cancelling, context.amending]);
  // an instrument's decimals arrived: its prices print again
  useEffect(() => apiRef.current?.refreshCells({ columns: ['price', 'averagePrice', 'lastFill'], force: true }), [apiRef, context.decimals]);

  // columns that do not fit the grid's width give way (blotter-columns.ts)
  const box = useRef<HTMLDivElement>(null);
  const [autoHidden, setAutoHidden] = useState<string>('');
  const hidden = columnsToHide(autoHidden === '' ? [] : autoHidden.split(','), chosenColumns).join(',');
  const hiddenNow = useRef(hidden);
  hiddenNow.current = hidden;
  useEffect(() => {
    const el = box.current;
    if (el === null) return undefined;
    const observer = new ResizeObserver(() => setAutoHidden(hiddenColumns(el.clientWidth).join(',')));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  // reads the ref, not `hidden`: also called from onGridReady, whose handler may be an older render's
  const applyHidden = useCallback(() => {
    const api = apiRef.current;
    if (api === undefined) return;
    const gone = new Set(hiddenNow.current === '' ? [] : hiddenNow.current.split(','));
    const ids = COLUMNS.map((c) => c.colId ?? String(c.field));
    api.setColumnsVisible(ids.filter((id) => !gone.has(id)), true);
    api.setColumnsVisible([...gone], false);
  }, [apiRef]);
  useEffect(applyHidden, [applyHidden, hidden]);
  useEffect(() => onHiddenColumns(hidden), [onHiddenColumns, hidden]);

  return (
    <div className="blotter-grid" data-testid="blotter-grid" data-hidden-columns={hidden} ref={box}>
      <AgGridReact<BlotterRow>
        theme={blotterTheme}
        columnDefs={COLUMNS}
        defaultColDef={DEFAULT_COLUMN}
        {...gridProps}
        onGridReady={(e) => {
          gridProps.onGridReady(e);
          applyHidden();
        }}
        context={context}
        pinnedTopRowData={pinned}
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
        // 15 columns: render them all, so every cell of a visible row is in the DOM (find-in-page, tests)
        suppressColumnVirtualisation
        tooltipShowDelay={300}
        overlayNoRowsTemplate="<span class='blotter-empty'>No orders here yet</span>"
      />
    </div>
  );
}
