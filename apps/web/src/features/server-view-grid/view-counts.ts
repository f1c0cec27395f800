/**
 * Live row counts of several filters over one container (the blotter's chip counts): one server
 * view per filter with a one-row window, whose `count` the server keeps current (`view.size`).
 * Identical requests share one materialised view on the server, so the view a grid shows and the
 * counter of the same filter cost one view between them. No React here (view-counts.test.ts).
 */

import type { ViewHandle, ViewRequest } from '@tidewire/client';
import type { OpenView } from './server-view-feed.js';

/** Counts per filter, in the order of the filters given; undefined until the server answered (or after a refusal). */
export type Counts = readonly (number | undefined)[];

/** Counts the rows of `filters` over `container`; see the module comment. */
export class ViewCounts {
  private readonly counts: (number | undefined)[];
  private readonly handles: (ViewHandle | undefined)[];
  private closed = false;

  /**
   * Opens the views at once (none while logged out: counts stay undefined). `onChange` gets every
   * new set of counts; `onError` the server's refusal of a filter's view (`CODE: message`).
   */
  constructor(
    open: OpenView,
    container: string,
    filters: readonly string[],
    private readonly onChange: (counts: Counts) => void,
    onError?: (message: string) => void,
  ) {
    this.counts = filters.map(() => undefined);
    this.handles = filters.map((filter, i) => {
      // one row: the server sends nothing for rows outside the window, only the count
      const request: ViewRequest = { container, window: { offset: 0, size: 1 } };
      if (filter !== '') request.filter = filter;
      return open(request, {
        onRows: (_rows, count) => this.set(i, count),
        onError: (e) => {
          this.set(i, undefined);
          onError?.(`${e.code}: ${e.message}`);
        },
      });
    });
  }

  /** The current counts (undefined: not known). */
  get current(): Counts {
    return this.counts.slice();
  }

  /** Closes every view; no callback follows. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const h of this.handles) h?.close();
  }

  private set(i: number, count: number | undefined): void {
    if (this.closed || this.counts[i] === count) return;
    this.counts[i] = count;
    this.onChange(this.counts.slice());
  }
}
