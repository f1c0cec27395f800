/**
 * How live window changes of a server view reach AG Grid's infinite row model, without React:
 * patching the loaded rows by rank (cells of updated rows flash) and re-reading the loaded blocks
 * after the row count changed. Pure enough to test with a fake grid (live-rows.test.ts).
 */

import type { ViewRow } from '@tidewire/client';

/** A grid row with the server-wide record id it shows (identity across rank changes). */
export interface IdentifiedRow {
  readonly rowId: number;
}

/** The part of AG Grid's row node the patching uses. */
export interface LiveRowNode<TRow> {
  readonly data: TRow | undefined;
  /** Replaces the row (another record took this rank): no flash. */
  setData(data: TRow): void;
  /** Updates the row in place: changed cells of flashing columns flash. */
  updateData(data: TRow): void;
}

/** The part of AG Grid's API the patching uses. */
export interface LiveRowsGrid<TRow> {
  getDisplayedRowAtIndex(index: number): LiveRowNode<TRow> | undefined;
}

/**
 * Applies a live window change to the grid's loaded rows by rank: a rank now held by another
 * record gets that record's row (`setData`), a rank whose record is in `updated` is updated in
 * place (`updateData`: its changed cells flash), other ranks are left alone. Ranks whose block is
 * not loaded (no node, or a node without data) are skipped: the block brings them when read.
 * Returns how many rows were touched.
 */
export function applyLiveRows<TRow extends IdentifiedRow>(grid: LiveRowsGrid<TRow>, rows: readonly ViewRow[], updated: ReadonlySet<number>, toRow: (row: ViewRow) => TRow): number {
  let touched = 0;
  for (const r of rows) {
    const node = grid.getDisplayedRowAtIndex(r.index);
    if (node?.data === undefined) continue;
    if (node.data.rowId !== r.id) node.setData(toRow(r));
    else if (updated.has(r.id)) node.updateData(toRow(r));
    else continue;
    touched += 1;
  }
  return touched;
}

/** Timer functions and a clock (injectable for tests). */
export interface RefreshTimers {
  set(callback: () => void, ms: number): unknown;
  clear(handle: unknown): void;
  /** Milliseconds on a monotonic clock. */
  now(): number;
}

const WINDOW_TIMERS: RefreshTimers = {
  set: (callback, ms) => setTimeout(callback, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  now: () => performance.now(),
};

/**
 * Re-reads the grid's loaded blocks once a burst of row-count changes is over: when rows enter or
 * leave a view, the ranks of every row after them shift, so blocks outside the live window hold
 * rows at stale ranks. `schedule()` (re)starts a `delayMs` timer; `refresh` runs when it fires,
 * but never later than `maxWaitMs` after the first change of a burst: under a steady stream of
 * fills (a change every 100 ms) a plain restart would never fire. `dispose()` cancels a pending
 * refresh.
 */
export class RecountRefresher {
  private handle: unknown;
  private pending = false;
  /** When the first change of the pending burst came (timers.now()). */
  private burstStart = 0;

  constructor(
    private readonly refresh: () => void,
    private readonly delayMs: number,
    private readonly maxWaitMs: number = delayMs * 8,
    private readonly timers: RefreshTimers = WINDOW_TIMERS,
  ) {}

  /** A count changed: refresh `delayMs` after the last change of the burst, at most `maxWaitMs` after its first. */
  schedule(): void {
    const now = this.timers.now();
    if (this.pending) this.timers.clear(this.handle);
    else this.burstStart = now;
    this.pending = true;
    const wait = Math.max(0, Math.min(this.delayMs, this.burstStart + this.maxWaitMs - now));
    this.handle = this.timers.set(() => {
      this.pending = false;
      this.refresh();
    }, wait);
  }

  /** Cancels a pending refresh. Idempotent. */
  dispose(): void {
    if (this.pending) this.timers.clear(this.handle);
    this.pending = false;
  }
}
