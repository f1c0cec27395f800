import type { ColDef, ICellRendererParams, IGetRowsParams, ValueFormatterParams } from 'ag-grid-community';
import { AgGridReact } from 'ag-grid-react';
import { useCallback, useEffect, useMemo, useState } from 'react';
import { useConnection } from '../../connection/ConnectionProvider.js';
import { useConnectionSnapshot } from '../../connection/hooks.js';
import { formatSigned, signOf } from '../fx/price-format.js';
import { gridTheme } from '../watchlist/grid-setup.js';
import { formatCellPrice, formatVolume } from '../watchlist/watchlist-row.js';
import { useDebounced } from '../server-view-grid/use-debounced.js';
import { useServerViewGrid, type ServerViewQuery } from '../server-view-grid/use-server-view-grid.js';
import { baseSubject } from '../blotter/instrument-search.js';
import { ticketHash } from '../blotter/ticket-link.js';
import { plural } from '../shell/plural.js';
import { useWatchlist } from '../watchlist/use-watchlist.js';
import { toFinderRow, type FinderRow } from './finder-row.js';
import { FinderQueryError, buildFilter, buildSort, type GridFilterModel, type GridSortEntry } from './finder-query.js';
import './finder.css';

/** The catalog the finder searches. */
const PRODUCTS = '/CONTAINER/PRODUCTS';
/** Rows per block the grid asks for (one `view.move` each). */
const BLOCK_ROWS = 100;
/** Blocks the grid keeps; older ones are dropped, so the browser never holds the catalog. */
const MAX_BLOCKS = 6;
/** Quiet time after typing before the query is sent, ms. */
const TYPING_DEBOUNCE_MS = 250;

const decimalsOf = (row: FinderRow | undefined) => (row?.assetClass === 'Bond' ? 3 : 2);
type Formatter = (p: ValueFormatterParams<FinderRow>) => string;
const price: Formatter = (p) => formatCellPrice(typeof p.value === 'number' ? p.value : undefined, decimalsOf(p.data));
const date: Formatter = (p) => (typeof p.value === 'number' ? new Date(p.value).toISOString().slice(0, 10) : '');
const NUM = ['cell-num', 'ag-right-aligned-cell'];
const TEXT_FILTER = { filter: 'agTextColumnFilter', filterParams: { filterOptions: ['contains', 'startsWith', 'equals', 'notEqual'], maxNumConditions: 2, debounceMs: 300 } };
const NUMBER_FILTER = {
  filter: 'agNumberColumnFilter',
  filterParams: { filterOptions: ['equals', 'notEqual', 'lessThan', 'lessThanOrEqual', 'greaterThan', 'greaterThanOrEqual', 'inRange'], maxNumConditions: 2, debounceMs: 300, inRangeInclusive: true },
};

// Column ids are the record's field names: the grid's filter and sort models map onto them.
const COLUMNS: ColDef<FinderRow>[] = [
  { colId: 'rank', headerName: '#', width: 76, sortable: false, filter: false, valueGetter: (p) => (p.data === undefined ? '' : p.data.rank + 1), cellClass: NUM },
  { field: 'code', headerName: 'Code', width: 126, pinned: 'left', cellClass: 'cell-subject', ...TEXT_FILTER },
  { field: 'description', headerName: 'Description', flex: 1, minWidth: 130, tooltipField: 'description', ...TEXT_FILTER },
  { field: 'sector', headerName: 'Sector', width: 104, ...TEXT_FILTER },
  { field: 'currency', headerName: 'Ccy', width: 56, ...TEXT_FILTER },
  { field: 'rating', headerName: 'Rating', width: 70, ...TEXT_FILTER },
  { field: 'coupon', headerName: 'Cpn', width: 66, type: 'rightAligned', cellClass: NUM, ...NUMBER_FILTER },
  { field: 'maturity', headerName: 'Maturity', width: 104, valueFormatter: date, cellClass: 'cell-num', filter: false },
  { field: 'bid', headerName: 'Bid', width: 92, type: 'rightAligned', valueFormatter: price, cellClass: NUM, enableCellChangeFlash: true, ...NUMBER_FILTER },
  { field: 'ask', headerName: 'Ask', width: 92, type: 'rightAligned', valueFormatter: price, cellClass: NUM, enableCellChangeFlash: true, ...NUMBER_FILTER },
  { field: 'last', headerName: 'Last', width: 92, type: 'rightAligned', valueFormatter: price, cellClass: NUM, enableCellChangeFlash: true, ...NUMBER_FILTER },
  {
    field: 'change',
    headerName: 'Change',
    width: 88,
    type: 'rightAligned',
    valueFormatter: (p) => formatSigned(p.value, decimalsOf(p.data)).replace('—', ''),
    cellClass: (p) => [...NUM, `tone-${signOf(p.value)}`],
    enableCellChangeFlash: true,
    ...NUMBER_FILTER,
  },
  { field: 'volume', headerName: 'Volume', width: 100, type: 'rightAligned', valueFormatter: (p) => formatVolume(typeof p.value === 'number' ? p.value : undefined), cellClass: NUM, ...NUMBER_FILTER },
];

/** What the watch buttons need from the page. */
interface WatchContext {
  /** Subjects in the watchlist; undefined while it loads. */
  watched: ReadonlySet<string> | undefined;
  watch(row: FinderRow): void;
}

/** A row's "Watch" button: adds the product to the watchlist; says so when it is in it already. */
function WatchCell(params: ICellRendererParams<FinderRow, unknown, WatchContext>) {
  const row = params.data;
  if (row === undefined) return null;
  // the view's record is the user's price tier (`/PRODUCT/X@T2`); the watchlist holds the product
  const subject = baseSubject(row.subject);
  const inList = params.context.watched?.has(subject) === true;
  const code = typeof row.code === 'string' && row.code !== '' ? row.code : row.subject;
  return (
    <button
      type="button"
      className="grid-watch"
      disabled={inList || params.context.watched === undefined}
      aria-label={inList ? `${code} is in the watchlist` : `Add ${code} to the watchlist`}
      title={inList ? 'In your watchlist' : 'Add to the watchlist (or press W on the row)'}
      onClick={() => params.context.watch(row)}
      data-testid="finder-watch"
      data-subject={subject}
    >
      {inList ? '✓' : '+ Watch'}
    </button>
  );
}

COLUMNS.push({ colId: 'watch', headerName: '', width: 82, pinned: 'right', sortable: false, filter: false, resizable: false, cellRenderer: WatchCell });

const DEFAULT_COLUMN: ColDef<FinderRow> = { sortable: true, resizable: true, floatingFilter: true, suppressHeaderMenuButton: true };

/** Trades a product: the blotter opens with it in the order ticket. Nothing for an unloaded row. */
function trade(row: FinderRow | undefined): void {
  if (row === undefined) return;
  const code = typeof row.code === 'string' ? row.code : '';
  window.location.hash = ticketHash({ subject: row.subject, label: code || row.subject, description: typeof row.description === 'string' ? row.description : '' });
}

/**
 * The expression in force: `typed` once the server accepted it as a filter (a one-row probe view
 * of the catalog), else the last accepted one, so a bad expression never empties the grid. Also
 * why `typed` is not in force (the server's `CODE: message`, or the finder's own complaint);
 * undefined when it is.
 */
function useAcceptedExpression(typed: string): { applied: string; problem: string | undefined } {
  const connection = useConnection();
  const { session } = useConnectionSnapshot();
  const [applied, setApplied] = useState('');
  const [problem, setProblem] = useState<string | undefined>(undefined);
  useEffect(() => {
    if (typed.trim() === '' || typed === applied) {
      if (typed.trim() === '') setApplied('');
      setProblem(undefined);
      return undefined;
    }
    let filter: string;
    try {
      filter = buildFilter({ quickSearch: '', columns: {}, expression: typed });
    } catch (e) {
      setProblem(e instanceof Error ? e.message : String(e));
      return undefined;
    }
    let done = false;
    const handle = connection.view(
      { container: PRODUCTS, filter, window: { offset: 0, size: 1 } },
      {
        onRows: () => {
          if (done) return;
          done = true;
          setApplied(typed);
          setProblem(undefined);
        },
        onError: (e) => {
          if (done) return;
          done = true;
          setProblem(`${e.code}: ${e.message}`);
        },
      },
    );
    return () => handle?.close();
    // `session`: a new login brings a new client
  }, [connection, session, typed, applied]);
  return { applied, problem };
}

/**
 * Product finder: a server view of `/CONTAINER/PRODUCTS` in AG Grid's infinite row model. The
 * quick search, the column filters and a free-form expression become the server filter; header
 * clicks (shift for more keys) the server sort; scrolling moves the server window. Only the
 * blocks around the visible rows are in the browser; the visible rows stream live. Double-clicking
 * a product (or Enter on its focused row) opens the blotter with it in the order ticket. An
 * expression the server refuses is marked and not applied: the grid and its count keep the last result.
 */
export function FinderPage() {
  const { session } = useConnectionSnapshot();
  const [search, setSearch] = useState('');
  const [expression, setExpression] = useState('');
  const quick = useDebounced(search, TYPING_DEBOUNCE_MS);
  const typedExpr = useDebounced(expression, TYPING_DEBOUNCE_MS);
  const { applied: expr, problem: exprProblem } = useAcceptedExpression(typedExpr);
  const [count, setCount] = useState<number | undefined>(undefined);
  const [sent, setSent] = useState<{ filter: string; sort: string } | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);

  // the grid's filter and sort models plus the search boxes become the server query
  const query = useCallback(
    (params: IGetRowsParams): ServerViewQuery | string => {
      let filter: string;
      try {
        filter = buildFilter({ quickSearch: quick, columns: params.filterModel as GridFilterModel, expression: expr });
      } catch (e) {
        return e instanceof FinderQueryError ? e.message : String(e);
      }
      const sort = buildSort(params.sortModel as GridSortEntry[]);
      setSent({ filter, sort: sort.map((k) => `${k.field} ${k.dir}`).join(', ') });
      return { filter, sort };
    },
    [quick, expr],
  );
  const { gridProps, apiRef } = useServerViewGrid<FinderRow>({
    container: PRODUCTS,
    toRow: toFinderRow,
    query,
    onCount: setCount,
    onError: setError,
    blockRows: BLOCK_ROWS,
    maxBlocks: MAX_BLOCKS,
    blockLoadDebounceMs: 60,
  });

  const watchlist = useWatchlist();
  const [watchNote, setWatchNote] = useState<string | undefined>(undefined);
  const { add: addToWatchlist } = watchlist;
  const watched = useMemo(() => (watchlist.subjects === undefined ? undefined : new Set(watchlist.subjects)), [watchlist.subjects]);
  const watch = useCallback(
    (row: FinderRow) => {
      const result = addToWatchlist(baseSubject(row.subject));
      setWatchNote(result.ok ? `${typeof row.code === 'string' ? row.code : row.subject} added to the watchlist` : result.message);
    },
    [addToWatchlist],
  );
  const context = useMemo<WatchContext>(() => ({ watched, watch }), [watched, watch]);
  // the watch buttons read the list from the context: redraw them when it changes
  useEffect(() => apiRef.current?.refreshCells({ columns: ['watch'], force: true }), [apiRef, watched]);

  const tier = session?.tier ?? '';
  return (
    <section className="finder-page" aria-labelledby="finder-title" data-testid="finder-page">
      <div className="page-header">
        <h1 id="finder-title">Product finder</h1>
        <div className="finder-controls">
          <label htmlFor="finder-search" className="visually-hidden">
            Quick search
          </label>
          <input
            id="finder-search"
            className="finder-search"
            type="search"
            value={search}
            placeholder="Search code, issuer, description"
            onChange={(e) => setSearch(e.target.value)}
            data-testid="finder-search"
          />
          <label htmlFor="finder-expression" className="visually-hidden">
            Filter expression
          </label>
          <input
            id="finder-expression"
            className="finder-expression"
            value={expression}
            placeholder={`Expression, e.g. rating in ("AAA", "AA") and coupon > 4`}
            onChange={(e) => setExpression(e.target.value)}
            onKeyDown={(e) => {
              // as the search box (a native search field) does: Escape clears
              if (e.key === 'Escape' && expression !== '') {
                e.preventDefault();
                setExpression('');
              }
            }}
            title="Escape clears"
            aria-invalid={exprProblem !== undefined || error !== undefined}
            aria-describedby={exprProblem === undefined ? undefined : 'finder-expression-error'}
            data-testid="finder-expression"
          />
          <span className="finder-count" data-testid="finder-count" data-count={count ?? ''}>
            {count === undefined ? '…' : plural(count, 'product')}
          </span>
          <span className="finder-tier" data-testid="finder-tier" title="Prices are computed on your tier's records">
            Prices: tier {tier === '' ? 'base' : tier}
          </span>
          <span className="page-hint">Double-click or Enter on a product to trade it, W to watch it</span>
          {watchNote !== undefined && (
            <span className="page-hint finder-watch-note" role="status" data-testid="finder-watch-note">
              {watchNote}
            </span>
          )}
        </div>
      </div>
      {exprProblem !== undefined && (
        <p id="finder-expression-error" className="inline-error finder-error" role="alert" data-testid="finder-error">
          {exprProblem}
          <span className="finder-error-note">{expr === '' ? '  (not applied: showing the products without it)' : `  (not applied: showing the results of ${expr})`}</span>
        </p>
      )}
      {exprProblem === undefined && error !== undefined && (
        <p className="inline-error finder-error" role="alert" data-testid="finder-error">
          {error}
        </p>
      )}
      <code className="finder-filter" data-testid="finder-filter" data-filter={sent?.filter ?? ''} data-sort={sent?.sort ?? ''}>
        {sent === undefined ? '' : `filter: ${sent.filter === '' ? '(every product)' : sent.filter}${sent.sort === '' ? '' : `   sort: ${sent.sort}`}`}
      </code>
      <div className="finder-grid" data-testid="finder-grid">
        <AgGridReact<FinderRow>
          theme={gridTheme}
          columnDefs={COLUMNS}
          defaultColDef={DEFAULT_COLUMN}
          {...gridProps}
          onRowDoubleClicked={(e) => trade(e.data)}
          context={context}
          onCellKeyDown={(e) => {
            // Enter on a focused row trades it too (Shift+Enter is left to the grid); W watches it
            const key = e.event instanceof KeyboardEvent ? e.event : undefined;
            if (key?.key === 'Enter' && !key.shiftKey && !key.isComposing) trade(e.data);
            if ((key?.key === 'w' || key?.key === 'W') && !key.ctrlKey && !key.metaKey && !key.altKey && e.data !== undefined) watch(e.data);
          }}
          cellFlashDuration={400}
          cellFadeDuration={600}
          animateRows={false}
          tooltipShowDelay={300}
        />
      </div>
    </section>
  );
}
