/**
 * `run finder-latency` (Refiner product finder, update latency with filters on dynamic fields):
 * a 30,000-record container whose records each update once per 5 s (6,000 updates/s); field `px`
 * moves up by one per update, so each view (a band of 300 `px` values: 1%) gains one row and loses
 * one every 5 s; `q` changes randomly (the sort key in `filter-sort` mode). Each step adds users
 * up to the step's count of unique views (one view each, window 50, light: updates are taken off
 * the socket, not decoded), and re-opens the probes: users with the same filter as a spread of
 * those views and a window covering the whole view (published probe: 300 rows; ours is 600 so a
 * view holding a few more than 300 rows still fits and no row enters by scrolling). Latency, on
 * the probes: the record's publish `ts` -> the row entering, updated in, or leaving the window
 * (leaving rows carry no `ts`: the source's send time of that record's latest update is used;
 * source and probes share this process and its clock).
 */

import type { RecordPublish } from '@tidewire/protocol';
import { epochNowMs } from '../util/clock.js';
import { FeedPublisher } from '../sources/feed-publisher.js';
import { LoadgenError } from '../util/errors.js';
import { fetchToken } from '../clients/login.js';
import type { Progress, StepResult, SweepReport } from './runner.js';
import { startWindow, stepRow, summarizeEncoded } from '../report/step-meter.js';
import {
  LATENCY_CONTAINER,
  LATENCY_CONTAINER_SIZE,
  LATENCY_UPDATE_PERIOD_S,
  LATENCY_VIEW_ROWS,
  latencyFields,
  latencyFilter,
  latencyRecord,
  probedViews,
} from './view-presets.js';
import { addGroupCpu, startViewUserGroup, type ViewEngine, type ViewUserGroup } from '../clients/view-user-group.js';

/** Options of `runFinderLatency`. */
export interface FinderLatencyOptions {
  url: string;
  source: { user: string; password: string };
  /** Trader account of every user. */
  account: { user: string; password: string };
  scenario: string;
  params: Record<string, unknown>;
  /** `filter`: natural order; `filter-sort`: sorted by the second dynamic field `q`. */
  mode: 'filter' | 'filter-sort';
  /** Unique views per step, increasing. */
  steps: number[];
  stepSeconds: number;
  warmupSeconds: number;
  /** Rows of each user's window (published 50). */
  windowRows: number;
  /** Probe users per step (spread over the views). */
  probes: number;
  /** Rows of a probe's window (covers the whole view). */
  probeRows: number;
  connectTimeoutMs: number;
  responseTimeoutMs: number;
  /** Simulator of the users (view-user-group.ts). @default 'auto' */
  engine?: ViewEngine;
  /** Socket threads of the native engine (per group). @default 2 */
  threads?: number;
  onProgress?: (p: Progress) => void;
}

/** Users opened with at most this many handshakes in flight. */
const OPEN_CONCURRENCY = 32;

/** Runs the sweep; stops the feed and every user whatever happens. */
export async function runFinderLatency(o: FinderLatencyOptions): Promise<SweepReport> {
  const progress = o.onProgress ?? (() => {});
  const maxViews = o.steps[o.steps.length - 1] as number;
  const feed = await FeedPublisher.connect({ url: o.url, user: o.source.user, password: o.source.password });
  // send time of each record's latest update (for rows leaving a probe's window)
  const sab = new SharedArrayBuffer(LATENCY_CONTAINER_SIZE * 8);
  const lastSent = new Float64Array(sab);
  const boundS = o.steps.length * (o.stepSeconds + o.warmupSeconds + 120) + 60;
  // opening users (32 at a time, each bounded by the connect and response timeouts) can take
  // longer than the steps on a busy server: the feed must outlive it, and the workers outlive that
  const runBoundS = boundS + (Math.ceil(maxViews / 32) + o.steps.length) * ((o.connectTimeoutMs + o.responseTimeoutMs) / 1000);
  const lifeS = runBoundS + 600;
  const engine = { engine: o.engine ?? 'auto', ...(o.threads ? { threads: o.threads } : {}) } as const;
  const load = startViewUserGroup({ url: o.url, light: true, connectTimeoutMs: o.connectTimeoutMs, responseTimeoutMs: o.responseTimeoutMs, ...engine }, lifeS);
  const probes = startViewUserGroup({ url: o.url, connectTimeoutMs: o.connectTimeoutMs, responseTimeoutMs: o.responseTimeoutMs, left: { kind: 'flat', sab, prefix: LATENCY_CONTAINER }, ...engine }, lifeS);
  const steps: StepResult[] = [];
  const sort = o.mode === 'filter-sort' ? [{ field: 'q', dir: 'asc' as const }] : undefined;
  try {
    progress({ phase: 'source', message: `publishing ${LATENCY_CONTAINER_SIZE} records and ${LATENCY_CONTAINER}` });
    const now = epochNowMs();
    const images: RecordPublish[] = [];
    for (let i = 0; i < LATENCY_CONTAINER_SIZE; i++) images.push({ type: 'record.publish', subject: latencyRecord(i), ts: now, image: true, fields: latencyFields(i, 0) });
    feed.publish(images);
    feed.containerClear(LATENCY_CONTAINER); // a rerun against the same server starts from the natural order again
    feed.containerAdd(LATENCY_CONTAINER, images.map((m) => m.subject));
    await feed.barrier();
    const rate = LATENCY_CONTAINER_SIZE / LATENCY_UPDATE_PERIOD_S;
    feed.startPaced({
      ratePerSec: rate,
      durationMs: runBoundS * 1000,
      next: (k, ts) => {
        const i = k % LATENCY_CONTAINER_SIZE;
        lastSent[i] = ts;
        return { type: 'record.publish', subject: latencyRecord(i), ts, fields: latencyFields(i, Math.floor(k / LATENCY_CONTAINER_SIZE) + 1) };
      },
    });
    progress({ phase: 'source', message: `source updating every record every ${LATENCY_UPDATE_PERIOD_S} s (${rate} updates/s)` });
    const token = await fetchToken(o.url, o.account.user, o.account.password);
    let opened = 0;
    let createFailures = 0;
    const failures: string[] = [];
    const openView = async (users: ViewUserGroup, index: number, view: number, windowRows: number): Promise<void> => {
      const r = await users.openView(index, token, { container: LATENCY_CONTAINER, filter: latencyFilter(view, maxViews), ...(sort ? { sort } : {}), window: { offset: 0, size: windowRows } });
      if (!r.ok) {
        createFailures++;
        if (failures.length < 5 && !failures.includes(r.error)) failures.push(r.error);
      }
    };
    for (let si = 0; si < o.steps.length; si++) {
      const views = o.steps[si] as number;
      progress({ phase: 'connect', stepIndex: si, steps: o.steps.length, target: views });
      createFailures = 0;
      failures.length = 0;
      await bounded(views - opened, OPEN_CONCURRENCY, (j) => openView(load, opened + j, opened + j, o.windowRows));
      opened = views;
      await probes.closeAll();
      const probed = probedViews(views, o.probes);
      await bounded(probed.length, OPEN_CONCURRENCY, (j) => openView(probes, 1_000_000 + j, probed[j] as number, o.probeRows));
      const creates = await load.take();
      await probes.take();
      await waitSeconds(o.warmupSeconds, (e) => progress({ phase: 'warmup', stepIndex: si, steps: o.steps.length, target: views, elapsedS: e, totalS: o.warmupSeconds }), () => feed.failure);
      const window = await startWindow(o.url);
      const probesAtStart = await probes.take();
      const loadAtStart = await load.take();
      feed.takeStats();
      await waitSeconds(o.stepSeconds, (e) => progress({ phase: 'measure', stepIndex: si, steps: o.steps.length, target: views, elapsedS: e, totalS: o.stepSeconds }), () => feed.failure);
      const p = await probes.take();
      const l = await load.take();
      const usage = await window.end();
      addGroupCpu(usage, probesAtStart, p);
      addGroupCpu(usage, loadAtStart, l);
      const feedStats = feed.takeStats();
      const changes = p.entered + p.left + p.updated;
      const notes: string[] = [];
      if (createFailures > 0) notes.push(`${createFailures} views could not be opened: ${failures.join('; ')}`);
      if (p.dropped + l.dropped > 0) notes.push(`${p.dropped + l.dropped} users lost their connection: ${p.dropReason ?? l.dropReason ?? ''}`);
      if (feedStats.lateOver1Ms > 0) notes.push(`source: ${feedStats.lateOver1Ms} of ${feedStats.updates} updates left > 1 ms late (worst ${feedStats.maxLatenessMs.toFixed(1)} ms)`);
      if (feedStats.serverErrors > 0) notes.push(`source: server reported ${feedStats.serverErrors} errors: ${feedStats.lastServerError}`);
      const row = stepRow({
        step: views,
        users: l.live + p.live,
        // per probe: every row of its ~300 updates once per period, plus one entering and one leaving
        expectedPerSec: Math.round((probed.length * (LATENCY_VIEW_ROWS + 2)) / LATENCY_UPDATE_PERIOD_S),
        deliveredPerSec: Math.round(changes / Math.max(usage.seconds, 1e-3)),
        // row sequence checks: the native engine's probes (the Node users do not check them)
        lost: createFailures + p.dropped + l.dropped + (p.lost ?? 0),
        outOfOrder: p.outOfOrder ?? 0,
        histograms: [p.rows],
        usage,
        extra: {
          views, probes: probed.length, mode: o.mode, entered: p.entered, left: p.left, updated: p.updated,
          sourceUpdatesPerSec: Math.round(feedStats.published / Math.max(usage.seconds, 1e-3)),
          filterEvaluationsPerSec: views * rate,
          viewCreateMs: summarizeEncoded(creates.response),
          loadFramesPerSec: Math.round(l.frames / Math.max(usage.seconds, 1e-3)),
        },
      });
      steps.push(row);
      progress({ phase: 'step', stepIndex: si, steps: o.steps.length, result: row, notes });
    }
  } finally {
    feed.stop();
    await probes.stop();
    await load.stop();
  }
  return { scenario: o.scenario, params: { ...o.params, engine: load.engine }, steps };
}

/** Runs `task(0..count-1)` with at most `concurrency` in flight; resolves when all settled. */
export async function bounded<T>(count: number, concurrency: number, task: (j: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(Math.max(0, count));
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const j = next++;
      out[j] = await task(j);
    }
  };
  await Promise.all(Array.from({ length: Math.max(0, Math.min(concurrency, count)) }, worker));
  return out;
}

/** Waits `seconds`, reporting progress every 250 ms; fails early when `failure()` returns a reason. */
export async function waitSeconds(seconds: number, tick: (elapsedS: number) => void, failure: () => string | undefined): Promise<void> {
  const start = epochNowMs();
  const end = start + seconds * 1000;
  for (let now = start; now < end; now = epochNowMs()) {
    const f = failure();
    if (f) throw new LoadgenError('SERVER_REFUSED', f);
    tick((now - start) / 1000);
    await new Promise((r) => setTimeout(r, Math.min(250, end - now)));
  }
  tick(seconds);
}
