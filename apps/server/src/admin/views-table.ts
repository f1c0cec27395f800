/**
 * The admin views table (`GET /api/admin/views`): the engine's materialised views with an update
 * rate. The engine counts row updates per view (cumulative); the rate is the difference between
 * two listings divided by the time between them, so the first listing of a view has none.
 */

import type { ViewStat } from '@tidewire/engine';
import type { AdminViewInfo } from '@tidewire/protocol';
import type { Clock } from '../session/clock.js';

/** One view as the engine reports it (packages/engine `ViewStat`; `updates` is cumulative). */
export type EngineViewStat = ViewStat;

/** Where the views come from (the engine's `viewStats`). */
export interface ViewStatsSource {
  viewStats(): Promise<EngineViewStat[]>;
}

/** `GET /api/admin/views` body. */
export interface AdminViewsBody {
  /** When the listing was taken, epoch ms. */
  at: number;
  /** Views, busiest first (by subscribers, then rows). */
  views: AdminViewInfo[];
}

/** Listings older than this give no rate (the counts may have been reset by a rebuild). */
export const MAX_RATE_GAP_MS = 60_000;

const keyOf = (v: EngineViewStat): string => `${v.container}\u0000${v.tier}\u0000${v.filter}\u0000${v.sort}`;

/** Lists views with rates against the previous listing (one instance per transport worker). */
export class ViewsTable {
  private previous = new Map<string, number>();
  private previousAt: number | undefined;

  constructor(private readonly source: ViewStatsSource, private readonly clock: Clock) {}

  /** The engine's views now; rejects when the engine does not answer (the caller answers 503/500). */
  async list(): Promise<AdminViewsBody> {
    const stats = await this.source.viewStats();
    const at = this.clock.now();
    const dtMs = this.previousAt === undefined ? undefined : at - this.previousAt;
    const usable = dtMs !== undefined && dtMs > 0 && dtMs <= MAX_RATE_GAP_MS;
    const next = new Map<string, number>();
    const views = stats.map((v): AdminViewInfo => {
      const key = keyOf(v);
      next.set(key, v.updates);
      const before = this.previous.get(key);
      // A count that went down belongs to a rebuilt view (expired, then requested again): no rate.
      const updatesPerSec = usable && before !== undefined && v.updates >= before ? Math.round(((v.updates - before) * 1000 * 10) / dtMs) / 10 : null;
      return { container: v.container, tier: v.tier, filter: v.filter, sort: v.sort, rows: v.rows, subscribers: v.subscribers, updatesPerSec, updates: v.updates, lastRecomputeUs: v.lastRecomputeUs };
    });
    views.sort((a, b) => b.subscribers - a.subscribers || b.rows - a.rows || a.container.localeCompare(b.container) || a.filter.localeCompare(b.filter));
    this.previous = next;
    this.previousAt = at;
    return { at, views };
  }
}
