/**
 * `run finder-response` (Refiner product finder, response time): the source publishes a finder
 * container (`/BENCH/FINDER/<size>`: a static number, a static text, a text sort key and a price
 * that updates), then users arrive evenly at the step's request rate; each logs in and sends one
 * unique `view.create` (number band + category, about the step's result size, sorted by name,
 * window 50). Measured: `view.create` sent -> `view.created` received. Each step starts with no
 * users and ends by closing them; arrivals during the warm-up are not measured.
 */

import { FeedPublisher } from '../sources/feed-publisher.js';
import { LoadgenError } from '../util/errors.js';
import { newLatencyHistogram, recordLatencyMs, encodeHistogram } from '../util/histogram.js';
import { fetchToken } from '../clients/login.js';
import { intervalTicks, Pacer, runPaced } from '../util/pacer.js';
import type { Progress, StepResult, SweepReport } from './runner.js';
import { startWindow, stepRow } from '../report/step-meter.js';
import { FINDER_SORT, arrivals, finderContainer, finderFields, finderFilter, finderRecord, tierOfUser, type FinderStep } from './view-presets.js';
import { addGroupCpu, startViewUserGroup, type ViewEngine } from '../clients/view-user-group.js';
import type { ViewUsersReport } from '../clients/view-users.js';
import { epochNowMs } from '../util/clock.js';
import type { RecordPublish } from '@tidewire/protocol';

/** Credentials of the trader account users of tier `T<n>` log in as. */
export type TierAccount = (tier: string) => { user: string; password: string };

/** Options of `runFinderResponse`. */
export interface FinderResponseOptions {
  url: string;
  source: { user: string; password: string };
  /** Account per tier (T1 for a single tier). */
  account: TierAccount;
  scenario: string;
  params: Record<string, unknown>;
  steps: FinderStep[];
  stepSeconds: number;
  warmupSeconds: number;
  /** Updates per record per second (published: 1). */
  updatesPerRecordPerSec: number;
  /** Cap on the source's total updates per second (big containers); the row says what ran. */
  maxUpdatesPerSec: number;
  /** Rows of each user's window. @default 50 */
  windowRows: number;
  /** Users keep their view until the step ends (published); false: close right after `view.created`. */
  holdViews: boolean;
  connectTimeoutMs: number;
  responseTimeoutMs: number;
  /** Simulator of the users (view-user-group.ts). @default 'auto' */
  engine?: ViewEngine;
  /** Socket threads of the native engine. @default 2 */
  threads?: number;
  onProgress?: (p: Progress) => void;
}

/** Publishes finder containers and their tier copies once, and runs the update feed of one of them. */
export class FinderData {
  private readonly published = new Map<number, number>(); // size -> tiers published

  constructor(private readonly feed: FeedPublisher) {}

  /** Publishes the container of `size` records with tier copies up to `tiers` (idempotent). */
  async ensure(size: number, tiers: number): Promise<void> {
    const have = this.published.get(size) ?? 0;
    if (have >= tiers) return;
    const now = epochNowMs();
    for (let t = Math.max(1, have + 1); t <= tiers; t++) {
      const suffix = t === 1 ? '' : `@T${t}`;
      for (let first = 0; first < size; first += 10_000) {
        const batch: RecordPublish[] = [];
        for (let i = first; i < Math.min(size, first + 10_000); i++) {
          batch.push({ type: 'record.publish', subject: `${finderRecord(size, i)}${suffix}`, ts: now, image: true, fields: finderFields(i, 100 + t) });
        }
        this.feed.publish(batch);
        if (first % 100_000 === 0) await this.feed.barrier(); // bounded memory in flight for 1,000,000 records
      }
      if (t === 1) {
        const subjects = Array.from({ length: size }, (_, i) => finderRecord(size, i));
        this.feed.containerAdd(finderContainer(size), subjects);
      }
      await this.feed.barrier();
    }
    this.published.set(size, Math.max(have, tiers));
  }

  /** Starts updating the `size` container's records and tier copies; returns the rate that runs. */
  startUpdates(size: number, tiers: number, perRecord: number, cap: number, durationMs: number): number {
    this.feed.stopPaced();
    const records = size * tiers;
    const rate = Math.min(records * perRecord, cap);
    this.feed.startPaced({
      ratePerSec: rate,
      durationMs,
      next: (k, ts) => {
        const r = k % records;
        const t = Math.floor(r / size) + 1;
        const i = r % size;
        return { type: 'record.publish', subject: `${finderRecord(size, i)}${t === 1 ? '' : `@T${t}`}`, ts, fields: { price: 100 + t + ((Math.floor(k / records) % 1000) / 100) } };
      },
    });
    return rate;
  }
}

/** Runs the sweep; stops the feed and every user whatever happens. */
export async function runFinderResponse(o: FinderResponseOptions): Promise<SweepReport> {
  const progress = o.onProgress ?? (() => {});
  const feed = await FeedPublisher.connect({ url: o.url, user: o.source.user, password: o.source.password });
  const data = new FinderData(feed);
  const tokens = new Map<string, string>();
  const tokenFor = async (tier: string): Promise<string> => {
    let t = tokens.get(tier);
    if (t === undefined) {
      const a = o.account(tier);
      t = await fetchToken(o.url, a.user, a.password);
      tokens.set(tier, t);
    }
    return t;
  };
  const boundS = o.steps.length * (o.warmupSeconds + o.stepSeconds + (o.connectTimeoutMs + o.responseTimeoutMs) / 1000 + 600) + 600;
  const users = startViewUserGroup({ url: o.url, light: true, connectTimeoutMs: o.connectTimeoutMs, responseTimeoutMs: o.responseTimeoutMs, engine: o.engine ?? 'auto', ...(o.threads ? { threads: o.threads } : {}) }, boundS);
  const steps: StepResult[] = [];
  let nextUser = 0; // global: every request of the run has its own filter
  try {
    for (let si = 0; si < o.steps.length; si++) {
      const s = o.steps[si] as FinderStep;
      progress({ phase: 'source', message: `step ${si + 1}: container ${s.containerSize} records x ${s.tiers} tier(s), result ~${s.resultSize}, ${s.requestsPerSec} requests/s` });
      await data.ensure(s.containerSize, s.tiers);
      for (let t = 1; t <= s.tiers; t++) await tokenFor(`T${t}`);
      const totalS = o.warmupSeconds + o.stepSeconds;
      const updateRate = data.startUpdates(s.containerSize, s.tiers, o.updatesPerRecordPerSec, o.maxUpdatesPerSec, (totalS + 120) * 1000);
      const count = arrivals(s.requestsPerSec, totalS);
      const hist = newLatencyHistogram();
      const failures: string[] = [];
      let measured = 0;
      let answered = 0;
      let failed = 0;
      let rowsSum = 0;
      const pending: Array<Promise<void>> = [];
      const fraction = s.resultSize / s.containerSize;
      const firstUser = nextUser;
      nextUser += count;
      const startMs = epochNowMs() + 20;
      const pacer = new Pacer(s.requestsPerSec, startMs, count);
      const arrive = async (k: number): Promise<void> => {
        const user = firstUser + k;
        const inWindow = k / s.requestsPerSec >= o.warmupSeconds;
        if (inWindow) measured++;
        const tier = tierOfUser(user, s.tiers);
        const r = await users.openView(user, tokens.get(tier) as string, { container: finderContainer(s.containerSize), filter: finderFilter(user, fraction), sort: FINDER_SORT, window: { offset: 0, size: o.windowRows } });
        if (!r.ok) {
          if (inWindow) failed++;
          if (failures.length < 5 && !failures.includes(r.error)) failures.push(r.error);
          return;
        }
        if (inWindow) {
          answered++;
          rowsSum += r.count;
          recordLatencyMs(hist, r.latencyMs);
        }
        if (!o.holdViews) await users.closeUser(user);
      };
      const loop = runPaced({
        pacer,
        clock: epochNowMs,
        untilMs: startMs + totalS * 1000 + 1000,
        ticks: intervalTicks,
        tickMs: 1,
        send: (due) => {
          for (let j = 0; j < due.count; j++) pending.push(arrive(due.first + j));
        },
      });
      const warmEnd = startMs + o.warmupSeconds * 1000;
      const tick = setInterval(() => {
        const now = epochNowMs();
        const phase = now < warmEnd ? 'warmup' : 'measure';
        const elapsedS = phase === 'warmup' ? (now - startMs) / 1000 : (now - warmEnd) / 1000;
        progress({ phase, stepIndex: si, steps: o.steps.length, target: s.step, elapsedS: Math.max(0, elapsedS), totalS: phase === 'warmup' ? o.warmupSeconds : o.stepSeconds });
      }, 500);
      let window: Awaited<ReturnType<typeof startWindow>> | undefined;
      let atStart: ViewUsersReport | undefined;
      try {
        await waitUntil(warmEnd, () => feed.failure);
        window = await startWindow(o.url);
        feed.takeStats();
        atStart = await users.take();
        await loop.done;
        await Promise.all(pending); // each bounded by the connect and response timeouts
      } finally {
        clearInterval(tick);
        loop.stop();
      }
      const usage = await window.end();
      const received = await users.take();
      addGroupCpu(usage, atStart, received);
      const feedStats = feed.takeStats();
      const notes: string[] = [];
      if (failed > 0) notes.push(`${failed} of ${measured} measured requests failed: ${failures.join('; ')}`);
      if (feedStats.lateOver1Ms > 0) notes.push(`source: ${feedStats.lateOver1Ms} of ${feedStats.updates} updates left > 1 ms late (worst ${feedStats.maxLatenessMs.toFixed(1)} ms)`);
      if (feedStats.serverErrors > 0) notes.push(`source: server reported ${feedStats.serverErrors} errors: ${feedStats.lastServerError}`);
      if (received.dropped > 0) notes.push(`${received.dropped} users lost their connection: ${received.dropReason ?? ''}`);
      const row = stepRow({
        step: s.step,
        users: received.live,
        expectedPerSec: s.requestsPerSec,
        deliveredPerSec: Math.round((answered / Math.max(usage.seconds, 1e-3)) * 100) / 100,
        lost: failed,
        outOfOrder: 0,
        histograms: [encodeHistogram(hist)],
        usage,
        overMs: 500,
        extra: {
          requests: measured, responses: answered, requestsPerSec: s.requestsPerSec, containerSize: s.containerSize, resultSize: s.resultSize, tiers: s.tiers,
          meanResultRows: answered === 0 ? 0 : Math.round(rowsSum / answered), sourceUpdatesPerSec: updateRate, framesReceivedPerSec: Math.round(received.frames / Math.max(usage.seconds, 1e-3)),
          bytesReceivedPerSec: Math.round(received.bytes / Math.max(usage.seconds, 1e-3)),
          // row changes of the held views (counted by the native engine; the Node light users do not decode them)
          ...(users.engine === 'native' ? { rowChangesPerSec: Math.round((received.entered + received.updated + received.left) / Math.max(usage.seconds, 1e-3)) } : {}),
          // the native engine's own process, % of one core (also inside generatorCpuPct); absent for Node users
          ...(atStart?.cpuMicros !== undefined && received.cpuMicros !== undefined ? { usersCpuPct: Math.round(((received.cpuMicros - atStart.cpuMicros) / 1e4 / Math.max(usage.seconds, 1e-3)) * 10) / 10 } : {}),
        },
      });
      hist.destroy();
      steps.push(row);
      progress({ phase: 'step', stepIndex: si, steps: o.steps.length, result: row, notes });
      await users.closeAll();
      feed.stopPaced();
    }
  } finally {
    feed.stop();
    await users.stop();
  }
  return { scenario: o.scenario, params: { ...o.params, engine: users.engine }, steps };
}

/** Waits until `atMs` (epoch ms), failing early if `failure()` says the source broke. Bounded by `atMs`. */
async function waitUntil(atMs: number, failure: () => string | undefined): Promise<void> {
  for (let now = epochNowMs(); now < atMs; now = epochNowMs()) {
    const f = failure();
    if (f) throw new LoadgenError('SERVER_REFUSED', f);
    await new Promise((r) => setTimeout(r, Math.min(250, atMs - now)));
  }
}
