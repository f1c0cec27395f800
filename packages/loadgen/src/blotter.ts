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

import type { RecordPublish } from '@tidewire/protocol';
import { epochNowMs } from './clock.js';
import { FeedPublisher } from './feed-publisher.js';
import { bounded, waitSeconds } from './finder-latency.js';
import { fetchToken } from './login.js';
import { intervalTicks, Pacer, runPaced, type PacedLoop } from './pacer.js';
import type { Progress, StepResult, SweepReport } from './runner.js';
import { startWindow, stepRow } from './step-meter.js';
import { startViewUserGroup } from './view-user-group.js';

/** Seconds between two Status steps of a trade (and between two updates of any trade), as published. */
export const BLOTTER_STATUS_PERIOD_S = 3;
/** Seconds between two new trades of one user. */
export const BLOTTER_NEW_TRADE_PERIOD_S = 10;
/** Status of a done trade (the view shows Status < 10). */
export const BLOTTER_DONE = 10;
/** Published (Refiner) mean latency per users step, ms; p99 1,033 ms at 2,000. */
export const BLOTTER_PUBLISHED_MEAN_MS: Readonly<Record<number, number>> = { 100: 9, 2000: 44 };
/** Default user steps (published 100..2,000). */
export const BLOTTER_DEFAULT_STEPS: readonly number[] = [100, 500, 1_000, 2_000];

/** Container of user `u`'s blotter. */
export function blotterContainer(u: number): string {
  return `/BENCH/BLOTTER/${u}`;
}

/** Trade `n` (0 = oldest) of user `u`. */
export function tradeSubject(u: number, n: number): string {
  return `/BENCH/TRADE/${u}/${n}`;
}

/** Status of an initial trade created `ageS` seconds ago (Status 1 at creation, +1 per period, at most 10). */
export function statusAtAge(ageS: number): number {
  return Math.min(BLOTTER_DONE, 1 + Math.floor(ageS / BLOTTER_STATUS_PERIOD_S));
}

/** Static fields of trade `n` of user `u` with `status`. */
export function tradeFields(u: number, n: number, status: number, ts: number): RecordPublish['fields'] {
  return {
    tradeId: n, instrument: `I${(u * 7 + n) % 50}`, side: (u + n) % 2 === 0 ? 'buy' : 'sell',
    quantity: 1_000 * (1 + ((u + 3 * n) % 20)), price: 100 + ((u * 13 + n * 7) % 1000) / 100, Status: status, updated: Math.round(ts),
  };
}

/**
 * Slot `k` of the update cycle over `users` x `tradeCap` (trade-major, so each user's updates are
 * spread over the period): the user and trade it updates.
 */
export function updateSlot(k: number, users: number, tradeCap: number): { user: number; trade: number } {
  const j = k % (users * tradeCap);
  return { user: j % users, trade: Math.floor(j / users) };
}

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
  connectTimeoutMs: number;
  responseTimeoutMs: number;
  onProgress?: (p: Progress) => void;
}

/** Runs the sweep; stops the feed and every user whatever happens. */
export async function runBlotter(o: BlotterOptions): Promise<SweepReport> {
  const progress = o.onProgress ?? (() => {});
  const maxUsers = o.steps[o.steps.length - 1] as number;
  const boundS = o.steps.length * (o.stepSeconds + o.warmupSeconds + 120) + 60;
  // trades a user can reach in this run: the update cycle's size
  const tradeCap = Math.min(o.maxTrades, o.initialTrades + Math.ceil(boundS / BLOTTER_NEW_TRADE_PERIOD_S) + 1);
  const trades = new Uint16Array(maxUsers);
  const status = new Uint8Array(maxUsers * tradeCap);
  const sab = new SharedArrayBuffer(maxUsers * tradeCap * 8);
  const lastSent = new Float64Array(sab);
  const feed = await FeedPublisher.connect({ url: o.url, user: o.source.user, password: o.source.password });
  // opening users (32 at a time, each bounded by the connect and response timeouts) can take
  // longer than the steps on a busy server: the feed must outlive it, and the workers outlive that
  const runBoundS = boundS + (Math.ceil(maxUsers / 32) + o.steps.length) * ((o.connectTimeoutMs + o.responseTimeoutMs) / 1000);
  const lifeS = runBoundS + 600;
  const users = startViewUserGroup({ url: o.url, connectTimeoutMs: o.connectTimeoutMs, responseTimeoutMs: o.responseTimeoutMs, left: { kind: 'blotter', sab, tradeCap } }, lifeS);
  let creator: PacedLoop | undefined;
  let created = 0;
  const steps: StepResult[] = [];
  try {
    const token = await fetchToken(o.url, o.account.user, o.account.password);
    let have = 0;
    for (let si = 0; si < o.steps.length; si++) {
      const target = o.steps[si] as number;
      progress({ phase: 'source', message: `step ${si + 1}: blotters for users ${have}..${target - 1} (${o.initialTrades} trades each)` });
      feed.stopPaced();
      creator?.stop();
      const now = epochNowMs();
      for (let u = have; u < target; u++) {
        const batch: RecordPublish[] = [];
        for (let n = 0; n < o.initialTrades; n++) {
          const s = statusAtAge((o.initialTrades - n) * BLOTTER_NEW_TRADE_PERIOD_S);
          status[u * tradeCap + n] = s;
          batch.push({ type: 'record.publish', subject: tradeSubject(u, n), ts: now, image: true, fields: tradeFields(u, n, s, now) });
        }
        trades[u] = o.initialTrades;
        feed.publish(batch);
        feed.containerClear(blotterContainer(u));
        feed.containerAdd(blotterContainer(u), batch.map((m) => m.subject).reverse()); // newest first
        if (u % 200 === 199) await feed.barrier();
      }
      await feed.barrier();
      const u0 = target;
      // every trade once per period: users x tradeCap slots, empty ones (trades not created yet) skipped
      feed.startPaced({
        ratePerSec: (u0 * tradeCap) / o.statusPeriodS,
        durationMs: runBoundS * 1000,
        next: (k, ts): RecordPublish | null => {
          const { user, trade } = updateSlot(k, u0, tradeCap);
          if (trade >= (trades[user] as number)) return null;
          const at = user * tradeCap + trade;
          lastSent[at] = ts;
          const s = status[at] as number;
          if (s >= BLOTTER_DONE) return { type: 'record.publish', subject: tradeSubject(user, trade), ts, fields: { updated: Math.round(ts) } };
          status[at] = s + 1;
          return { type: 'record.publish', subject: tradeSubject(user, trade), ts, fields: { Status: s + 1, updated: Math.round(ts) } };
        },
      });
      const pacer = new Pacer(u0 / BLOTTER_NEW_TRADE_PERIOD_S, epochNowMs() + 10);
      creator = runPaced({
        pacer,
        clock: epochNowMs,
        untilMs: epochNowMs() + runBoundS * 1000,
        ticks: intervalTicks,
        tickMs: 5,
        send: (due, ts) => {
          for (let g = due.first; g < due.first + due.count; g++) {
            const u = g % u0;
            const n = trades[u] as number;
            if (n >= tradeCap) continue;
            trades[u] = n + 1;
            status[u * tradeCap + n] = 1;
            lastSent[u * tradeCap + n] = ts;
            feed.publish([{ type: 'record.publish', subject: tradeSubject(u, n), ts, image: true, fields: tradeFields(u, n, 1, ts) }]);
            feed.containerInsertAt(blotterContainer(u), 0, [tradeSubject(u, n)]);
            created++;
          }
        },
      });
      progress({ phase: 'connect', stepIndex: si, steps: o.steps.length, target });
      let failed = 0;
      const failures: string[] = [];
      await bounded(target - have, 32, async (j) => {
        const r = await users.openView(have + j, token, { container: blotterContainer(have + j), filter: `Status < ${BLOTTER_DONE}`, window: { offset: 0, size: o.windowRows } });
        if (!r.ok) {
          failed++;
          if (failures.length < 5 && !failures.includes(r.error)) failures.push(r.error);
        }
      });
      have = target;
      await waitSeconds(o.warmupSeconds, (e) => progress({ phase: 'warmup', stepIndex: si, steps: o.steps.length, target, elapsedS: e, totalS: o.warmupSeconds }), () => feed.failure);
      const window = await startWindow(o.url);
      await users.take();
      feed.takeStats();
      created = 0;
      await waitSeconds(o.stepSeconds, (e) => progress({ phase: 'measure', stepIndex: si, steps: o.steps.length, target, elapsedS: e, totalS: o.stepSeconds }), () => feed.failure);
      const r = await users.take();
      const usage = await window.end();
      const feedStats = feed.takeStats();
      const seconds = Math.max(usage.seconds, 1e-3);
      let totalTrades = 0;
      for (let u = 0; u < target; u++) totalTrades += trades[u] as number;
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
          sourceUpdatesPerSec: Math.round(feedStats.published / seconds), newTradesPerSec: Math.round(created / seconds),
          sourceWorstLatenessMs: Math.round(feedStats.maxLatenessMs * 10) / 10,
          serverRssMiB: usage.serverRssBytes === null ? null : Math.round(usage.serverRssBytes / 1048576),
        },
      });
      steps.push(row);
      progress({ phase: 'step', stepIndex: si, steps: o.steps.length, result: row, notes });
    }
  } finally {
    creator?.stop();
    feed.stop();
    await users.stop();
  }
  return { scenario: o.scenario, params: { ...o.params, tradeCap }, steps };
}
