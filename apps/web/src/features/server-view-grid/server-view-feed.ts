/**
 * One page's server view, driven by a grid (the product finder, the blotter): block requests from
 * AG Grid's infinite row model become `view.move(offset, size)` (one at a time), each resolved
 * from the view's rows; between requests the window follows the visible rows plus a margin, so
 * only they stream and their live updates reach the page. A new filter or sort closes the view and
 * opens another. No grid code here (server-view-feed.test.ts drives it with a scripted view;
 * use-server-view-grid.ts wires it to AG Grid).
 */

import type { ViewSortKey } from '@tidewire/protocol';
import type { ViewHandle, ViewHandler, ViewRequest, ViewRow } from '@tidewire/client';

/** A block of grid rows: `rows` from view rank `start`, `count` rows in the whole view. */
export interface ViewBlock<TRow> {
  readonly rows: TRow[];
  readonly count: number;
}

/** Canonical key of a query (filter, sort), to tell whether the open view still answers it. */
export function queryKey(filter: string, sort: readonly ViewSortKey[]): string {
  return `${filter}\u0000${sort.map((k) => `${k.field} ${k.dir}`).join(',')}`;
}

/** Opens a server view (the connection's `view()`); undefined while logged out. */
export type OpenView = (request: ViewRequest, handler: ViewHandler) => ViewHandle | undefined;

/** Options of a ServerViewFeed. */
export interface ServerViewFeedOptions<TRow> {
  /** Container subject the view is over, e.g. `/CONTAINER/PRODUCTS`, `/BLOTTER/alice`. */
  container: string;
  /**
   * A grid row of an SDK view row. Must copy what it keeps: the SDK updates its rows in place.
   * Called for the rows of each block when the block is answered.
   */
  toRow(row: ViewRow): TRow;
  /** Rows streamed beyond each side of the visible ones; default 10. */
  margin?: number;
  /** A block request fails after this many ms without an answer; default 15,000. */
  timeoutMs?: number;
  /** Live window changes outside block requests (rows in view order, count, updated ids). */
  onLive?(rows: readonly ViewRow[], count: number, updated: ReadonlySet<number>): void;
  /** The server refused the view (e.g. a bad filter: message with the position). */
  onError?(error: { code: string; message: string }): void;
}

/** Most rows one window may hold on the server (ViewsConfig::max_window_rows). */
export const MAX_WINDOW_ROWS = 10_000;

interface Pending<TRow> {
  filter: string;
  sort: ViewSortKey[];
  start: number;
  size: number;
  /** False when the request opens a new view (its first answer is the block). */
  moves: boolean;
  /** The move for this block was sent and its answer is awaited. */
  sent: boolean;
  resolve(block: ViewBlock<TRow>): void;
  reject(error: Error): void;
}

/** One page's server view: see the module comment. */
export class ServerViewFeed<TRow> {
  private handle: ViewHandle | undefined;
  private key: string | undefined;
  /** The window the server was last asked for, and whether its answer has arrived. */
  private window = { offset: -1, size: 0 };
  private ready = false;
  private readonly queue: Pending<TRow>[] = [];
  private current: Pending<TRow> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private viewport: { first: number; last: number } | undefined;
  private closed = false;
  private readonly container: string;
  private readonly margin: number;
  private readonly timeoutMs: number;

  constructor(
    private readonly open: OpenView,
    private readonly options: ServerViewFeedOptions<TRow>,
  ) {
    this.container = options.container;
    this.margin = Math.max(0, options.margin ?? 10);
    this.timeoutMs = options.timeoutMs ?? 15_000;
  }

  /** Rows in the current view (0 before the first answer). */
  get count(): number {
    return this.handle?.count ?? 0;
  }

  /**
   * Rows [start, end) of the view of (`filter`, `sort`); requests run one at a time, in order.
   * Rejects with the server's error (bad filter) or on timeout / close.
   */
  fetch(filter: string, sort: ViewSortKey[], start: number, end: number): Promise<ViewBlock<TRow>> {
    return new Promise<ViewBlock<TRow>>((resolve, reject) => {
      if (this.closed) return reject(new Error(`the view of ${this.container} is closed`));
      const size = Math.max(1, Math.min(MAX_WINDOW_ROWS, Math.floor(end) - Math.floor(start)));
      this.queue.push({ filter, sort, start: Math.max(0, Math.floor(start)), size, moves: true, sent: false, resolve, reject });
      this.next();
    });
  }

  /** The grid shows rows `first`..`last` (ranks): stream those plus the margin once idle. */
  showViewport(first: number, last: number): void {
    if (last < first || first < 0) return;
    this.viewport = { first, last };
    if (this.current === undefined) this.follow();
  }

  /** Closes the view and fails pending requests. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.clearTimer();
    const error = new Error(`the view of ${this.container} is closed`);
    this.current?.reject(error);
    this.current = undefined;
    for (const p of this.queue.splice(0)) p.reject(error);
    this.handle?.close();
    this.handle = undefined;
  }

  private next(): void {
    if (this.current !== undefined || this.closed) return;
    const p = this.queue.shift();
    if (p === undefined) return this.follow();
    this.current = p;
    const key = queryKey(p.filter, p.sort);
    this.timer = setTimeout(() => this.fail(new Error(`no answer from the server for rows ${p.start}..${p.start + p.size} within ${this.timeoutMs} ms`)), this.timeoutMs);
    if (this.handle === undefined || key !== this.key) {
      p.moves = false;
      this.handle?.close();
      this.key = key;
      this.window = { offset: p.start, size: p.size };
      this.ready = false;
      const request: ViewRequest = { container: this.container, window: { offset: p.start, size: p.size } };
      if (p.filter !== '') request.filter = p.filter;
      if (p.sort.length > 0) request.sort = p.sort;
      const handle = this.open(request, {
        onRows: (rows, count, updated) => {
          if (this.handle === handle) this.rows(rows, count, updated);
        },
        onError: (e) => {
          if (this.handle === handle) this.error(e);
        },
      });
      this.handle = handle;
      if (handle === undefined) this.fail(new Error('not logged in'));
      return;
    }
    if (this.ready) this.serve(p);
    // else: an answer to an earlier move is on its way; rows() serves `p` once it is in
  }

  /** Moves the window to `p`'s block; answers at once when the server will send nothing new. */
  private serve(p: Pending<TRow>): void {
    if (this.move(p.start, p.size)) p.sent = true;
    else this.done(this.handle?.rows ?? [], this.handle?.count ?? 0);
  }

  /**
   * Asks for the window (offset, size). The server sends a diff only when the window's rows
   * change, so when the rows held already are exactly those ranks no answer will come: returns
   * false (and stays ready); true when an answer is awaited.
   */
  private move(offset: number, size: number): boolean {
    const handle = this.handle;
    if (handle === undefined) return false;
    this.window = { offset, size };
    handle.move(offset, size);
    const held = handle.rows;
    const end = Math.min(offset + size, handle.count);
    const wanted = Math.max(0, end - offset);
    const same = held.length === wanted && (wanted === 0 || (held[0]!.index === offset && held[wanted - 1]!.index === end - 1));
    this.ready = same;
    return !same;
  }

  /** Idle: keep the visible rows (plus margin) streaming. */
  private follow(): void {
    if (this.viewport === undefined || this.handle === undefined || this.closed) return;
    const offset = Math.max(0, this.viewport.first - this.margin);
    const size = Math.min(MAX_WINDOW_ROWS, this.viewport.last + this.margin + 1 - offset);
    if (this.ready && (offset !== this.window.offset || size !== this.window.size)) this.move(offset, size);
  }

  private rows(rows: readonly ViewRow[], count: number, updated: ReadonlySet<number>): void {
    this.ready = true;
    const p = this.current;
    if (p !== undefined && (p.sent || !p.moves)) {
      this.done(rows, count);
      return;
    }
    this.options.onLive?.(rows, count, updated);
    if (p !== undefined) this.serve(p); // the awaited answer was to an earlier move
  }

  private done(rows: readonly ViewRow[], count: number): void {
    const p = this.current;
    if (p === undefined) return;
    this.clearTimer();
    this.current = undefined;
    p.resolve({ rows: rows.map((r) => this.options.toRow(r)), count });
    this.next();
  }

  private error(e: { code: string; message: string }): void {
    // a refused create holds no view on the server: the next request opens a new one
    this.handle?.close();
    this.handle = undefined;
    this.key = undefined;
    this.options.onError?.(e);
    const err = Object.assign(new Error(e.message), { code: e.code });
    this.fail(err);
  }

  private fail(error: Error): void {
    this.clearTimer();
    const p = this.current;
    this.current = undefined;
    p?.reject(error);
    this.next();
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
