/**
 * AG Grid's infinite row model over one server view (the product finder, the blotter): the
 * datasource asks the page for the query (filter, sort) of each block and reads the block through
 * a ServerViewFeed (`view.move`); the window follows the visible rows; live window changes patch
 * the loaded rows by rank (updated cells flash); count changes resize the grid and, when asked
 * for, re-read the loaded blocks once the burst is over. The page keeps its columns and controls
 * and spreads `gridProps` onto `<AgGridReact>`.
 */

import type { GridApi, GridReadyEvent, IDatasource, IGetRowsParams } from 'ag-grid-community';
import type { ViewSortKey } from '@tidewire/protocol';
import type { ViewRow } from '@tidewire/client';
import { useCallback, useEffect, useMemo, useRef, useState, type RefObject } from 'react';
import { useConnection } from '../../connection/ConnectionProvider.js';
import { RecountRefresher, applyLiveRows, type IdentifiedRow } from './live-rows.js';
import { ServerViewFeed } from './server-view-feed.js';

/** The server query of a block: filter expression ('' = every row) and sort keys ([] = natural order). */
export interface ServerViewQuery {
  readonly filter: string;
  readonly sort: ViewSortKey[];
}

/** What a page tells useServerViewGrid. */
export interface ServerViewGridOptions<TRow extends IdentifiedRow> {
  /** Container subject of the view; a new one opens a new view. */
  container: string;
  /** A grid row of an SDK view row (copy what you keep: the SDK updates rows in place). Read at call time. */
  toRow(row: ViewRow): TRow;
  /**
   * The query for a block request (the grid's filter and sort models are in `params`). A string
   * instead: why there is no query (a column filter the server cannot express); it is reported
   * through `onError` and the grid shows no rows. A new function (page inputs changed) makes a new
   * datasource: the grid re-reads from the top.
   */
  query(params: IGetRowsParams): ServerViewQuery | string;
  /** Rows in the view: from every block answer and every live change; 0 after a refusal. */
  onCount(count: number): void;
  /**
   * Problems to show: the server's refusal (`CODE: message`), a query string from `query`, a
   * failed block (timeout, logged out); undefined once a block was answered.
   */
  onError(message: string | undefined): void;
  /** Rows per block the grid asks for (one `view.move` each). */
  blockRows: number;
  /** Blocks the grid keeps; older ones are dropped. */
  maxBlocks: number;
  /** Quiet time after scrolling before blocks are asked for, ms. */
  blockLoadDebounceMs: number;
  /**
   * After the row count changed, re-read the loaded blocks this much later (ms; restarted by each
   * change of a burst, but at most 8 times this after its first change, so a steady stream of
   * fills still refreshes); undefined: never (live rows are still patched by rank).
   */
  recountRefreshMs?: number;
}

/** The grid props of an infinite-row-model grid over the view (spread onto `<AgGridReact>`). */
export interface ServerViewGridProps<TRow> {
  readonly rowModelType: 'infinite';
  /** Undefined until the view's feed exists (the first effect after mount). */
  readonly datasource: IDatasource | undefined;
  readonly cacheBlockSize: number;
  readonly maxBlocksInCache: number;
  readonly maxConcurrentDatasourceRequests: number;
  readonly infiniteInitialRowCount: number;
  readonly blockLoadDebounceMillis: number;
  readonly onGridReady: (event: GridReadyEvent<TRow>) => void;
  readonly onViewportChanged: () => void;
  readonly onModelUpdated: () => void;
}

/** What useServerViewGrid returns. */
export interface ServerViewGrid<TRow> {
  /** Spread onto `<AgGridReact>`. */
  readonly gridProps: ServerViewGridProps<TRow>;
  /** The grid's API once ready (undefined before). */
  readonly apiRef: RefObject<GridApi<TRow> | undefined>;
}

/** True for an error the server sent (it carries a string `code`), not a timeout or close. */
const isServerRefusal = (e: unknown): boolean => typeof (e as { code?: unknown } | null)?.code === 'string';

/** An infinite-row-model AG Grid over a server view: see the module comment. */
export function useServerViewGrid<TRow extends IdentifiedRow>(options: ServerViewGridOptions<TRow>): ServerViewGrid<TRow> {
  const connection = useConnection();
  const { container, query, blockRows, maxBlocks, blockLoadDebounceMs, recountRefreshMs } = options;
  const apiRef = useRef<GridApi<TRow> | undefined>(undefined);
  const knownCount = useRef(-1);
  // the latest callbacks, so neither the feed nor the datasource is rebuilt when they change
  const latest = useRef(options);
  latest.current = options;

  const refresher = useMemo(
    () => (recountRefreshMs === undefined ? undefined : new RecountRefresher(() => apiRef.current?.refreshInfiniteCache(), recountRefreshMs)),
    [recountRefreshMs],
  );
  useEffect(() => () => refresher?.dispose(), [refresher]);

  // made in an effect, not a memo: an effect's cleanup closes it, and StrictMode (dev) runs
  // cleanup and setup twice on one instance, which would leave a memoised feed closed
  const [feed, setFeed] = useState<ServerViewFeed<TRow> | undefined>(undefined);
  useEffect(() => {
    const made = new ServerViewFeed<TRow>((request, handler) => connection.view(request, handler), {
      container,
      toRow: (r) => latest.current.toRow(r),
      onLive: (rows, count, updated) => {
        latest.current.onCount(count);
        const api = apiRef.current;
        if (api === undefined) return;
        if (count !== knownCount.current) {
          knownCount.current = count;
          api.setRowCount(count, true);
          // ranks shifted (rows entered or left the view): re-read what is loaded once the
          // burst is over; the visible rows are patched at once below
          refresher?.schedule();
        }
        applyLiveRows(api, rows, updated, latest.current.toRow);
      },
      onError: (e) => latest.current.onError(`${e.code}: ${e.message}`),
    });
    knownCount.current = -1;
    setFeed(made);
    return () => made.close();
  }, [connection, container, refresher]);

  const datasource = useMemo<IDatasource | undefined>(() => {
    if (feed === undefined) return undefined;
    return {
      getRows(params: IGetRowsParams) {
        const q = query(params);
        if (typeof q === 'string') {
          latest.current.onError(q);
          params.successCallback([], 0);
          return;
        }
        feed.fetch(q.filter, q.sort, params.startRow, params.endRow).then(
          (block) => {
            latest.current.onError(undefined);
            latest.current.onCount(block.count);
            knownCount.current = block.count;
            params.successCallback(block.rows, block.count);
          },
          (e: unknown) => {
            if (isServerRefusal(e)) {
              // refused (the feed's onError showed the server's message, a bad filter's position
              // included): there are no rows to show
              latest.current.onCount(0);
              knownCount.current = 0;
              params.successCallback([], 0);
              return;
            }
            // timeout, logged out or page closed: the block failed, the grid may ask again
            latest.current.onError(e instanceof Error ? e.message : String(e));
            params.failCallback();
          },
        );
      },
    };
  }, [feed, query]);

  const onGridReady = useCallback((event: GridReadyEvent<TRow>) => {
    apiRef.current = event.api;
  }, []);
  const followViewport = useCallback(() => {
    const api = apiRef.current;
    if (api !== undefined) feed?.showViewport(api.getFirstDisplayedRowIndex(), api.getLastDisplayedRowIndex());
  }, [feed]);

  const gridProps = useMemo<ServerViewGridProps<TRow>>(
    () => ({
      rowModelType: 'infinite',
      datasource,
      cacheBlockSize: blockRows,
      maxBlocksInCache: maxBlocks,
      // one block at a time: each is a move of the one window
      maxConcurrentDatasourceRequests: 1,
      infiniteInitialRowCount: 1,
      blockLoadDebounceMillis: blockLoadDebounceMs,
      onGridReady,
      onViewportChanged: followViewport,
      onModelUpdated: followViewport,
    }),
    [datasource, blockRows, maxBlocks, blockLoadDebounceMs, onGridReady, followViewport],
  );
  return { gridProps, apiRef };
}
