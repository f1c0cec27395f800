/**
 * `run blotter` (Refiner trade blotter; source-driven, independent of the order flow): each user
 * `u` has a container `/BENCH/BLOTTER/<u>` of trade records `/BENCH/TRADE/<u>/<n>`, newest first.
 * It starts with `initialTrades` trades (their Status as if one had been created every 10 s: all
 * done but the newest two or three), then gets a new trade (Status 1, inserted at the top) every
 * 10 s up to `maxTrades`; every 3 s every trade gets an update: Status + 1 while below 10, else
 * only its `updated` stamp (the published load: users x trades / 3 s, spread evenly). Each user
 * views its blotter filtered `Status < 10`, window 20 (2-3 rows visible). Latency: the trade's
 * publish `ts` -> the row entering, updated in, or leaving the window (leaving rows carry no `ts`:
 * the source's send time of that trade's latest update; source and users share this process).
 * Steps add users (and their blotters); the feed restarts at each step with the new user count.
 */

import { BLOTTER_DONE, BLOTTER_NEW_TRADE_PERIOD_S, blotterContainer, blotterShard, type BlotterAdd, type BlotterShardInit, type BlotterShardTake, type BlotterStart } from './blotter-feed.js';
import { epochNowMs } from '../util/clock.js';
import { startFeedShards } from '../sources/feed-shards.js';
import { bounded, waitSeconds } from './finder-latency.js';
import { fetchToken } from '../clients/login.js';
import type { Progress, StepResult, SweepReport } from './runner.js';
import { startWindow, stepRow } from '../report/step-meter.js';
import { addGroupCpu, startViewUserGroup, type ViewEngine, type ViewUserGroup } from '../clients/view-user-group.js';

export {
  BLOTTER_DEFAULT_STEPS, BLOTTER_DONE, BLOTTER_NEW_TRADE_PERIOD_S, BLOTTER_PUBLISHED_MEAN_MS, BLOTTER_STATUS_PERIOD_S,
  blotterContainer, statusAtAge, tradeFields, tradeSubject,
} from './blotter-feed.js';

/** Options of `runBlotter`. */
export interface BlotterOptions {
  url: string;
  source: { user: string; password: string };
  account: { user: string; password: string };
  scenario: string;
  params: Record<string, unknown>;
  steps: number[];
  stepSeconds: number;
  warmupSeconds: number;
  windowRows: number;
  initialTrades: number;
  maxTrades: number;
  /** Seconds between two updates of a trade (published 3; longer only to hold more records than the source can update). */
  statusPeriodS: number;
  /**
   * Run the feed while a step's new users open their views (as published). False starts it after
   * they opened them (a starved server opens views far faster without the feed); it still runs
   * through warm-up and measurement. @default true
   */
  feedDuringConnect?: boolean;
  /** Source worker threads (feed-shards.ts), 1..16. @default `blotterSourceThreads`: 1..4, one per 50,000 update slots/s */
  sourceThreads?: number;
  connectTimeoutMs: number;
  responseTimeoutMs: number;
  /** Simulator of the users and its socket threads (view-user-group.ts). @default 'auto', 2 */
  engine?: ViewEngine;
  threads?: number;
  onProgress?: (p: Progress) => void;
}

/** Update slots per second one source thread is given by default (`blotterSourceThreads`). */
export const SLOTS_PER_SOURCE_THREAD = 50_000;

/**
 * Source shards for a blotter sweep: `requested` when given (1..16), else one per 50,000 update
 * slots per second at the largest step (`maxUsers x tradeCap / statusPeriodS`), at most 4. Why not
 * more: every shard sends a frame per 0.5 ms tick, so more shards mean smaller frames and more
 * wake-ups (measured 2.9-3.6 µs per update with 1 thread, 4.8 with 2, 7-8 with 4 at 81,000/s), CPU
 * the server on the same cores then lacks; one thread kept 81,000/s at load 12-15 but not at 22.
 */
export function blotterSourceThreads(requested: number | undefined, maxUsers: number, tradeCap: number, statusPeriodS: number): number {
  if (requested !== undefined) return requested;
  return Math.min(4, Math.max(1, Math.ceil((maxUsers * tradeCap) / statusPeriodS / SLOTS_PER_SOURCE_THREAD)));
}

/** Runs the sweep; stops the feed and every user whatever happens. */
export async function runBlotter(o: BlotterOptions): Promise<SweepReport> {
  const progress = o.onProgress ?? (() => {});
  const maxUsers = o.steps[o.steps.length - 1] as number;
  const boundS = o.steps.length * (o.stepSeconds + o.warmupSeconds + 120) + 60;
  // trades a user can reach in this run: the update cycle's size
  const tradeCap = Math.min(o.maxTrades, o.initialTrades + Math.ceil(boundS / BLOTTER_NEW_TRADE_PERIOD_S) + 1);
  const sab = new SharedArrayBuffer(maxUsers * tradeCap * 8);
  // opening users (32 at a time, each bounded by the connect and response timeouts) can take
  // longer than the steps on a busy server: the feed must outlive it, and the workers outlive that
  const runBoundS = boundS + (Math.ceil(maxUsers / 32) + o.steps.length) * ((o.connectTimeoutMs + o.responseTimeoutMs) / 1000);
  const lifeS = runBoundS + 600;
  const shards = blotterSourceThreads(o.sourceThreads, maxUsers, tradeCap, o.statusPeriodS);
  const init: BlotterShardInit = { maxUsers, tradeCap, lastSent: sab };
  const feed = await startFeedShards({
    url: o.url, user: o.source.user, password: o.source.password, shards, script: 'blotter', factory: blotterShard, init, maxSeconds: lifeS,
  });
  let users: ViewUserGroup | undefined;
  const steps: StepResult[] = [];
  try {
    users = startViewUserGroup({ url: o.url, connectTimeoutMs: o.connectTimeoutMs, responseTimeoutMs: o.responseTimeoutMs, left: { kind: 'blotter', sab, tradeCap }, engine: o.engine ?? 'auto', ...(o.threads ? { threads: o.threads } : {}) }, lifeS);
    const token = await fetchToken(o.url, o.account.user, o.account.password);
    let have = 0;
    for (let si = 0; si < o.steps.length; si++) {
      const target = o.steps[si] as number;
      progress({ phase: 'source', message: `step ${si + 1}: blotters for users ${have}..${target - 1} (${o.initialTrades} trades each, ${shards} source thread${shards > 1 ? 's' : ''})` });
      await feed.all('start', () => ({ users: 0, startMs: 0, durationMs: 0, statusPeriodS: o.statusPeriodS } satisfies BlotterStart)); // stops the previous step's feed
      await feed.all('add', () => ({ from: have, to: target, initialTrades: o.initialTrades } satisfies BlotterAdd));
      // every trade once per period: users x tradeCap slots (empty ones, trades not created yet, skipped), split by user over the shards
      const startFeed = async (): Promise<void> => {
        const start: BlotterStart = { users: target, startMs: epochNowMs() + 20, durationMs: runBoundS * 1000, statusPeriodS: o.statusPeriodS };
        await feed.all('start', () => start);
      };
      const feedDuringConnect = o.feedDuringConnect ?? true;
      if (feedDuringConnect) await startFeed();
      progress({ phase: 'connect', stepIndex: si, steps: o.steps.length, target });
      let failed = 0;
      const failures: string[] = [];
      const group = users;
      await bounded(target - have, 32, async (j) => {
        const r = await group.openView(have + j, token, { container: blotterContainer(have + j), filter: `Status < ${BLOTTER_DONE}`, window: { offset: 0, size: o.windowRows } });
        if (!r.ok) {
          failed++;
          if (failures.length < 5 && !failures.includes(r.error)) failures.push(r.error);
        }
      });
      have = target;
      if (!feedDuringConnect) await startFeed();
      await waitSeconds(o.warmupSeconds, (e) => progress({ phase: 'warmup', stepIndex: si, steps: o.steps.length, target, elapsedS: e, totalS: o.warmupSeconds }), () => feed.failure);
      const window = await startWindow(o.url);
      const atStart = await users.take();
      await feed.take();
      await waitSeconds(o.stepSeconds, (e) => progress({ phase: 'measure', stepIndex: si, steps: o.steps.length, target, elapsedS: e, totalS: o.stepSeconds }), () => feed.failure);
      const r = await users.take();
      const usage = await window.end();
      addGroupCpu(usage, atStart, r); // the native engine's own process
      const { stats: feedStats, extras } = await feed.take<BlotterShardTake>();
      const seconds = Math.max(usage.seconds, 1e-3);
      const totalTrades = extras.reduce((a, x) => a + x.trades, 0);
      const created = extras.reduce((a, x) => a + x.created, 0);
      const expectedSourcePerSec = (totalTrades - created / 2) / o.statusPeriodS; // trades grew linearly over the window
      const notes: string[] = [];
      if (failed > 0) notes.push(`${failed} users could not open their blotter view: ${failures.join('; ')}`);
      if (r.dropped > 0) notes.push(`${r.dropped} users lost their connection: ${r.dropReason ?? ''}`);
      if (feedStats.lateOver1Ms > 0) notes.push(`source: ${feedStats.lateOver1Ms} of ${feedStats.updates} update slots left > 1 ms late (worst ${feedStats.maxLatenessMs.toFixed(1)} ms)${feedStats.maxLatenessMs > 100 ? ': the source is a limit' : ''}`);
      if (feedStats.serverErrors > 0) notes.push(`source: server reported ${feedStats.serverErrors} errors: ${feedStats.lastServerError}`);
      const row = stepRow({
        step: target,
        users: r.live,
        // per user one trade per 10 s, each seen entering, 8 times updated and leaving: 1 change/s
        expectedPerSec: Math.round((r.live * 10) / BLOTTER_NEW_TRADE_PERIOD_S),
        deliveredPerSec: Math.round((r.entered + r.left + r.updated) / seconds),
        lost: failed + r.dropped,
        outOfOrder: 0,
        histograms: [r.rows],
        usage,
        extra: {
          entered: r.entered, left: r.left, updated: r.updated, tradesPerUser: Math.round(totalTrades / Math.max(1, target)), records: totalTrades,
          sourceUpdatesPerSec: Math.round(feedStats.published / seconds), sourceExpectedPerSec: Math.round(expectedSourcePerSec),
          sourceThreads: shards, newTradesPerSec: Math.round(created / seconds),
          sourceWorstLatenessMs: Math.round(feedStats.maxLatenessMs * 10) / 10,
          // bytes the source had sent that the server had not read yet (worst connection), and what the server ingested
          sourceMaxBufferedKiB: Math.round(feedStats.maxBufferedBytes / 1024), serverIngestPerSec: usage.serverIngestPerSec,
          // flow control: pauses the server sent the feed, and the longest time one connection was held
          sourcePauses: feedStats.sourcePauses, sourcePausedMs: Math.round(feedStats.sourcePausedMs),
          serverRssMiB: usage.serverRssBytes === null ? null : Math.round(usage.serverRssBytes / 1048576),
        },
      });
      steps.push(row);
      progress({ phase: 'step', stepIndex: si, steps: o.steps.length, result: row, notes });
    }
  } finally {
    await feed.stop();
    await users?.stop();
  }
  return { scenario: o.scenario, params: { ...o.params, tradeCap, sourceThreads: shards, engine: users?.engine }, steps };
}
