import type { CellClassParams, ColDef, GetRowIdParams, GridApi, GridReadyEvent, ICellRendererParams, ValueFormatterParams } from 'ag-grid-community';
import { AgGridReact } from 'ag-grid-react';
import { useCallback, useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { useRecordStream } from '../../connection/hooks.js';
import type { RecordSnapshot } from '../../connection/record-store.js';
import { formatSigned, signOf } from '../fx/price-format.js';
import { gridTheme } from './grid-setup.js';
import { formatCellPrice, formatTime, formatVolume, rowFromSnapshot, rowName, statusLabel, statusTooltip, subjectOfVwap, vwapOf, vwapSubject, withMoves, type MovingField, type WatchlistRow } from './watchlist-row.js';
import { plural } from '../shell/plural.js';
import { useWatchlist } from './use-watchlist.js';
import { InstrumentPicker } from '../blotter/InstrumentPicker.js';
// the instrument picker's list styles
import '../blotter/blotter.css';

type Formatter = (params: ValueFormatterParams<WatchlistRow>) => string;
const price: Formatter = (p) => formatCellPrice(p.value as number | undefined, p.data?.decimals ?? 4);
/** A colDef's own cellClass replaces its type's, so numeric cells restate the right alignment. */
const NUM_RIGHT = ['cell-num', 'ag-right-aligned-cell'];
const toneClass = (p: CellClassParams<WatchlistRow>) => `tone-${signOf(p.value)}`;
/** A price cell's classes: its last move's direction colours its change flash green (up) or red (down). */
const moving = (field: MovingField) => (p: CellClassParams<WatchlistRow>) => [...NUM_RIGHT, `move-${p.data?.moves[field] ?? 'none'}`];

/** The row's remove button; `context.remove` comes from the page. */
function RemoveCell(params: ICellRendererParams<WatchlistRow, unknown, { remove(subject: string): void }>) {
  const subject = params.data?.subject;
  if (subject === undefined) return null;
  return (
    <button
      type="button"
      className="grid-remove"
      aria-label={`Remove ${subject}`}
      title={`Remove ${subject}`}
      onClick={() => params.context.remove(subject)}
      data-testid="watchlist-remove"
    >
      ×
    </button>
  );
}

// Fits 1280 px without scrolling; high/low live on the FX tiles.
const COLUMNS: ColDef<WatchlistRow>[] = [
  { field: 'subject', headerName: 'Subject', pinned: 'left', width: 190, enableCellChangeFlash: false, cellClass: 'cell-subject' },
  {
    field: 'name',
    headerName: 'Name',
    flex: 1,
    minWidth: 140,
    enableCellChangeFlash: false,
    valueFormatter: (p) => (p.data === undefined ? '' : rowName(p.data)),
    tooltipValueGetter: (p) => (p.data === undefined ? undefined : rowName(p.data) || undefined),
    cellClass: (p) => (p.data?.status === 'pending' || p.data?.status === 'error' ? 'cell-no-data' : ''),
  },
  { field: 'bid', headerName: 'Bid', width: 100, type: 'rightAligned', valueFormatter: price, cellClass: moving('bid') },
  { field: 'ask', headerName: 'Ask', width: 100, type: 'rightAligned', valueFormatter: price, cellClass: moving('ask') },
  { field: 'last', headerName: 'Last / mid', width: 104, type: 'rightAligned', valueFormatter: price, cellClass: moving('last') },
  {
    field: 'change',
    headerName: 'Change',
    width: 96,
    type: 'rightAligned',
    valueFormatter: (p) => formatSigned(p.value, p.data?.decimals ?? 4).replace('—', ''),
    cellClass: (p) => [...NUM_RIGHT, toneClass(p)],
  },
  {
    field: 'changePct',
    headerName: 'Chg %',
    width: 80,
    type: 'rightAligned',
    valueFormatter: (p) => (p.value === undefined ? '' : formatSigned(p.value, 2, '%')),
    cellClass: (p) => [...NUM_RIGHT, toneClass(p)],
  },
  {
    field: 'vwap',
    headerName: 'VWAP',
    width: 96,
    type: 'rightAligned',
    valueFormatter: price,
    cellClass: NUM_RIGHT,
    headerTooltip: 'Volume-weighted average of last since the server started (the server statement vwap)',
  },
  { field: 'volume', headerName: 'Volume', width: 110, type: 'rightAligned', valueFormatter: (p) => formatVolume(p.value as number | undefined), cellClass: NUM_RIGHT },
  { field: 'ts', headerName: 'Updated', width: 118, valueFormatter: (p) => formatTime(p.value as number), cellClass: 'cell-num', enableCellChangeFlash: false },
  {
    field: 'status',
    headerName: 'Status',
    width: 96,
    enableCellChangeFlash: false,
    valueFormatter: (p) => statusLabel(p.value as WatchlistRow['status']),
    tooltipValueGetter: (p) => (p.data === undefined ? undefined : statusTooltip(p.data)),
    cellClass: (p) => `cell-status status-${String(p.value)}`,
  },
  { colId: 'remove', headerName: '', width: 48, sortable: false, resizable: false, cellRenderer: RemoveCell, enableCellChangeFlash: false, pinned: 'right' },
];

/** Greys the prices of stale records (their source is gone or they passed their maximum age). */
const STALE_ROW = { 'row-stale': (p: { data?: WatchlistRow }) => p.data?.status === 'stale' };

/** Stable empty initial row data: a new array per render would reset the grid. */
const NO_ROWS: WatchlistRow[] = [];

const DEFAULT_COLUMN: ColDef<WatchlistRow> = { sortable: true, resizable: true, enableCellChangeFlash: true, suppressMovable: false };

/**
 * Watchlist: FX pairs and products in AG Grid, updated in place with async transactions (row id =
 * subject), cells flash on change. Subjects are added by typing and removed per row; the list is
 * the user's `watchlist` preference, kept on the server (use-watchlist.ts). A subject no source
 * publishes is answered `pending` by the server: its row says "no data" instead of waiting silently.
 */
export function WatchlistPage() {
  const watchlist = useWatchlist();
  const subjects = useMemo(() => watchlist.subjects ?? [], [watchlist.subjects]);
  const [input, setInput] = useState('');
  const [inputError, setInputError] = useState<string | undefined>(undefined);
  const [api, setApi] = useState<GridApi<WatchlistRow> | undefined>(undefined);
  /** Subjects that have a row in the grid (including adds still queued in async transactions). */
  const inGrid = useRef(new Set<string>());
  /** The last row of each subject in the grid (the previous prices, for the up/down flash). */
  const lastRows = useRef(new Map<string, WatchlistRow>());
  /** The latest VWAP of each product (its result record may arrive before the product's own). */
  const vwaps = useRef(new Map<string, number | undefined>());

  // Rows of removed subjects leave the grid; their subscriptions end in useRecordStream.
  useEffect(() => {
    if (api === undefined) return;
    const wanted = new Set(subjects);
    const gone = [...inGrid.current].filter((subject) => !wanted.has(subject));
    if (gone.length === 0) return;
    for (const subject of gone) {
      inGrid.current.delete(subject);
      lastRows.current.delete(subject);
      vwaps.current.delete(subject);
    }
    api.applyTransactionAsync({ remove: gone.map((subject) => ({ subject }) as WatchlistRow) });
  }, [api, subjects]);

  const onChanged = useCallback(
    (changed: readonly RecordSnapshot[]) => {
      if (api === undefined) return;
      const add: WatchlistRow[] = [];
      const update: WatchlistRow[] = [];
      for (const snapshot of changed) {
        const product = subjectOfVwap(snapshot.subject);
        if (product !== undefined) {
          vwaps.current.set(product, vwapOf(snapshot));
          const last = lastRows.current.get(product);
          if (last !== undefined && inGrid.current.has(product)) {
            const row = { ...last, vwap: vwapOf(snapshot) };
            lastRows.current.set(product, row);
            update.push(row);
          }
          continue;
        }
        const row = withMoves(lastRows.current.get(snapshot.subject), { ...rowFromSnapshot(snapshot), vwap: vwaps.current.get(snapshot.subject) });
        lastRows.current.set(row.subject, row);
        if (inGrid.current.has(row.subject)) update.push(row);
        else {
          inGrid.current.add(row.subject);
          add.push(row);
        }
      }
      // One async transaction per frame: AG Grid batches them further (asyncTransactionWaitMillis).
      api.applyTransactionAsync({ add, update });
    },
    [api],
  );
  // each product's VWAP result record beside it (the server's vwap statement)
  const streamed = useMemo(() => [...subjects, ...subjects.flatMap((s) => vwapSubject(s) ?? [])], [subjects]);
  useRecordStream(api === undefined ? [] : streamed, onChanged);

  const { remove } = watchlist;
  const context = useMemo(() => ({ remove }), [remove]);

  /** Adds typed text (a subject or a code) or a picked subject; false with the reason shown when it cannot be added. */
  const add = (text: string): boolean => {
    const parsed = watchlist.add(text);
    setInputError(parsed.ok ? undefined : parsed.message);
    return parsed.ok;
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (add(input)) setInput('');
  };

  const onGridReady = useCallback((event: GridReadyEvent<WatchlistRow>) => {
    inGrid.current.clear();
    setApi(event.api);
  }, []);

  return (
    <section className="watchlist-page" aria-labelledby="watchlist-title">
      <div className="page-header">
        <h1 id="watchlist-title">Watchlist</h1>
        <form className="watchlist-add" onSubmit={submit}>
          <label htmlFor="watchlist-subject" className="visually-hidden">
            Add subject
          </label>
          <input
            id="watchlist-subject"
            value={input}
            placeholder="Add subject: EURUSD, /PRODUCT/XS…, ISIN"
            onChange={(e) => {
              setInput(e.target.value);
              setInputError(undefined);
            }}
            aria-invalid={inputError !== undefined}
            aria-describedby={inputError === undefined ? undefined : 'watchlist-subject-error'}
            data-testid="watchlist-input"
          />
          <button type="submit" className="button-primary" data-testid="watchlist-add">
            Add
          </button>
          <span className="page-hint" data-testid="watchlist-count">{watchlist.subjects === undefined ? 'loading your watchlist…' : plural(subjects.length, 'subject')}</span>
        </form>
        <div className="watchlist-search" data-testid="watchlist-search">
          <label htmlFor="watchlist-search-input" className="visually-hidden">
            Search by name
          </label>
          <InstrumentPicker value={undefined} onPick={(picked) => add(picked.subject)} inputId="watchlist-search-input" invalid={false} describedBy={undefined} />
        </div>
      </div>
      {inputError !== undefined && (
        <p id="watchlist-subject-error" className="inline-error" role="alert" data-testid="watchlist-error">
          {inputError}
        </p>
      )}
      <div className="watchlist-grid" data-testid="watchlist-grid">
        <AgGridReact<WatchlistRow>
          theme={gridTheme}
          columnDefs={COLUMNS}
          defaultColDef={DEFAULT_COLUMN}
          getRowId={(params: GetRowIdParams<WatchlistRow>) => params.data.subject}
          rowClassRules={STALE_ROW}
          onGridReady={onGridReady}
          context={context}
          rowData={NO_ROWS}
          cellFlashDuration={400}
          cellFadeDuration={600}
          asyncTransactionWaitMillis={50}
          animateRows={false}
          tooltipShowDelay={300}
          overlayNoRowsTemplate="No subjects: add one above"
        />
      </div>
    </section>
  );
}
