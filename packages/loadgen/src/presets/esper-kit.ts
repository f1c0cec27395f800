/**
 * `run esper-kit`: the Esper performance kit's workload (SCENARIOS.md section 5) end to end
 * through a Tidewire server. 1,000 symbols `S0AA` ... `S999` (the index padded with `A` to 4
 * characters); events {ticker, price (random walk: unchanged or +-1..9 %), volume 1..9, time}
 * published whole to `/BENCH/ESPER/<ticker>` over `/source`, round-robin across the symbols, at
 * each step's rate; one statement per symbol (1,000) of each kit mode in turn, created over
 * `statement.create` by one trader session (closing the session ends them):
 *
 * | mode | statement (per symbol X) |
 * |---|---|
 * | STP | `select * from /BENCH/ESPER/* where ticker = 'X'` (every event of the symbol) |
 * | L1000 | `select vwap(price, volume) as vwap ... window length 1000` |
 * | T2s | `select vwap(price, volume) as vwap ... window time 2 s` |
 * | simpleL1000 | `select avg(price) as avg, count(*) as n, sum(price) as sum ... window length 1000` |
 * | simpleT2s | the same over `window time 2 s` |
 *
 * Measured per mode and step: events/s sent and ingested by the server (`/api/health`), result
 * records/s received by a subscriber of `--sample` symbols' results, and end-to-end latency:
 * publish `ts` (the source's send time) -> the result update at the subscriber (a result carries
 * its event's `ts`; one written by a time window's expiry carries the engine's clock then). The
 * engine's own latency per event, in the kit's buckets, is the Rust bench
 * (`cargo bench --bench analytics`, docs/analytics.md).
 */

import os from 'node:os';
import { TidewireClient, TidewireError, type ClientOptions } from '@tidewire/client';
import WebSocket from 'ws';
import { epochNowMs } from '../util/clock.js';
import { LoadgenError } from '../util/errors.js';
import { newLatencyHistogram, recordLatencyMs, summarizeMs, type LatencySummaryMs } from '../util/histogram.js';
import { Pacer, runPaced, workerTicks } from '../util/pacer.js';
import { cpuPercent, ingestPerSec, sampleServer } from '../server/server-metrics.js';
import { SourceConnection } from '../sources/source-connection.js';

/** The kit's statement modes, in the order the kit runs them. */
export const KIT_MODES = ['STP', 'L1000', 'T2s', 'simpleL1000', 'simpleT2s'] as const;
/** One kit mode. */
export type KitMode = (typeof KIT_MODES)[number];

/** Where the kit's events are published. */
export const KIT_PREFIX = '/BENCH/ESPER/';
/** Symbols of the kit. */
export const KIT_SYMBOLS = 1000;
/** Published (Esper, 2 dual-core 2 GHz CPUs, limited by a 100 Mbit/s network): events/s, engine latency. */
export const KIT_PUBLISHED = { eventsPerSec: [400_000, 520_000], meanUs: [2.5, 5], p99Us: [10, 15] } as const;

/** Symbol `i` (0-based): `S` + the index padded with `A` to 4 characters (`S0AA`, `S12A`, `S999`). */
export function kitSymbol(i: number): string {
  return `S${String(i).padEnd(3, 'A')}`;
}

/** The statement mode `mode` runs for symbol `symbol`. */
export function kitStatement(mode: KitMode, symbol: string): string {
  const from = `from ${KIT_PREFIX}* where ticker = '${symbol}'`;
  switch (mode) {
    case 'STP':
      return `select * ${from}`;
    case 'L1000':
      return `select vwap(price, volume) as vwap ${from} window length 1000`;
    case 'T2s':
      return `select vwap(price, volume) as vwap ${from} window time 2 s`;
    case 'simpleL1000':
      return `select avg(price) as avg, count(*) as n, sum(price) as sum ${from} window length 1000`;
    case 'simpleT2s':
      return `select avg(price) as avg, count(*) as n, sum(price) as sum ${from} window time 2 s`;
  }
}

/** The statement name of `mode` for `symbol` (its results: `/STAT/<name>/BENCH/ESPER/<symbol>`). */
export function kitName(mode: KitMode, symbol: string): string {
  return `esper-${mode}-${symbol}`;
}

/** Parses `--modes` (comma-separated kit modes). */
export function parseModes(text: string): KitMode[] {
  const modes = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  for (const m of modes) {
    if (!(KIT_MODES as readonly string[]).includes(m)) throw new LoadgenError('BAD_ARGUMENT', `--modes: '${m}' is not a kit mode (${KIT_MODES.join(', ')})`);
  }
  if (modes.length === 0) throw new LoadgenError('BAD_ARGUMENT', `--modes must name at least one of ${KIT_MODES.join(', ')}`);
  return modes as KitMode[];
}

/** The kit's event stream: round-robin over the symbols, each price a seeded random walk. */
export class KitEvents {
  private readonly prices: Float64Array;
  private next = 0;
  private seed: number;

  constructor(readonly symbols = KIT_SYMBOLS, seed = 1) {
    this.prices = new Float64Array(symbols).fill(100);
    this.seed = seed >>> 0;
  }

  /** mulberry32: the same events for the same seed. */
  private random(): number {
    this.seed = (this.seed + 0x6d2b79f5) >>> 0;
    let t = this.seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** The next event's record.publish as JSON, published at `tsMs`. */
  nextEvent(tsMs: number): string {
    const i = this.next;
    this.next = (i + 1) % this.symbols;
    // the kit's walk: a third unchanged, else up or down 1..9 %
    const r = this.random();
    if (r >= 1 / 3) {
      const pct = 1 + Math.floor(this.random() * 9);
      this.prices[i] = Math.round(this.prices[i]! * (r < 2 / 3 ? 1 + pct / 100 : 1 - pct / 100) * 100) / 100 || 0.01;
    }
    const volume = 1 + Math.floor(this.random() * 9);
    const ticker = kitSymbol(i);
    const ts = Math.round(tsMs * 1000) / 1000;
    return `{"type":"record.publish","subject":"${KIT_PREFIX}${ticker}","ts":${ts},"image":true,"fields":{"ticker":"${ticker}","price":${this.prices[i]},"volume":${volume},"time":${Math.floor(tsMs)}}}`;
  }

  /** `count` events as one `/source` frame (a JSON array), published at `tsMs`. */
  frame(count: number, tsMs: number): string {
    const parts: string[] = new Array(count);
    for (let k = 0; k < count; k++) parts[k] = this.nextEvent(tsMs);
    return `[${parts.join(',')}]`;
  }
}

/** One measured (mode, rate) step. */
export interface KitStepResult {
  mode: KitMode;
  /** Events/s asked for. */
  targetPerSec: number;
  /** Events/s the source sent in the window. */
  sentPerSec: number;
  /** Events/s the server ingested in the window (`/api/health`); null when not exposed. */
  ingestPerSec: number | null;
  /** Result updates/s the subscriber received (its `--sample` symbols). */
  resultsPerSec: number;
  /** Publish ts -> result at the subscriber, ms. */
  latencyMs: LatencySummaryMs;
  /** Results measured. */
  samples: number;
  serverCpuPct: number | null;
  generatorCpuPct: number;
  /** Times the server paused the source in the step (flow control). */
  sourcePauses: number;
  /**
   * Events due in the window but not sent: the server had paused the source or had not read
   * `MAX_IN_FLIGHT_BYTES` yet (it cannot take the rate; `sentPerSec` is then what it took).
   */
  skipped: number;
}

/**
 * Bytes the source may have sent that the engine has not applied yet (known from pongs of pings
 * sent every `ACK_EVERY_BYTES`: on `/source` a pong follows every frame before it); past it due
 * events are skipped (counted). An open loop that queued them would only measure its own queue,
 * and a source that outran `source.pause` would be closed with 4013. Below the server's default
 * source high-water mark (8 MiB).
 */
export const MAX_IN_FLIGHT_BYTES = 6 * 1024 * 1024;
/** A ping (an ingest barrier) after every this many bytes sent. */
export const ACK_EVERY_BYTES = 512 * 1024;

/** The report of `run esper-kit`. */
export interface KitReport {
  scenario: 'esper-kit';
  params: Record<string, unknown>;
  steps: KitStepResult[];
}

/** Options of `runEsperKit`. */
export interface KitOptions {
  url: string;
  source: { user: string; password: string };
  account: { user: string; password: string };
  modes: KitMode[];
  /** Events/s per step. */
  rates: number[];
  stepSeconds: number;
  warmupSeconds: number;
  /** Symbols whose results the subscriber takes (the first n). */
  sample: number;
  connectTimeoutMs: number;
  params: Record<string, unknown>;
  onProgress(line: string): void;
}

/**
 * A logged-in `/stream` connection (the client SDK, no reconnects) that creates the statements and
 * receives their results; its errors become the loadgen's: UNREACHABLE, TIMEOUT, SERVER_REFUSED
 * naming the request and the server's code.
 */
class KitTrader {
  /** Latencies of results received while `measuring`. */
  readonly hist = newLatencyHistogram();
  measuring = false;
  results = 0;
  closedReason: string | undefined;
  private closing = false;

  private constructor(private readonly client: TidewireClient) {
    client.on('state', (state, detail) => {
      if (state === 'closed' && !this.closing && this.closedReason === undefined) {
        this.closedReason = `server closed the trader connection: ${detail?.code ?? 'no code'} ${detail?.reason ?? ''}`.trimEnd();
      }
    });
  }

  /** Connects to `url`'s `/stream` and logs `account` in; each request is bounded by `timeoutMs`. */
  static async connect(url: string, account: { user: string; password: string }, timeoutMs: number): Promise<KitTrader> {
    const client = new TidewireClient({ url: `${url.replace(/\/+$/, '')}/stream`, WebSocket: WebSocket as unknown as ClientOptions['WebSocket'], reconnect: false, requestTimeoutMs: timeoutMs });
    const trader = new KitTrader(client);
    try {
      await client.login(account.user, account.password);
    } catch (err) {
      trader.close();
      if (err instanceof TidewireError && err.code === 'CONNECTION_FAILED') throw new LoadgenError('UNREACHABLE', `/stream: ${err.message}`);
      throw trader.refused('session.login', err);
    }
    return trader;
  }

  /** Creates statement `name`. */
  async createStatement(name: string, statement: string): Promise<void> {
    await this.client.createStatement(name, statement).catch((err: unknown) => Promise.reject(this.refused('statement.create', err)));
  }

  /**
   * Subscribes to `subjects`, counting every image and update as a result (timed from its `ts`
   * while `measuring`); resolves once the server accepted every subject (subscribed, or pending
   * until its statement writes it), within `timeoutMs`.
   */
  subscribe(subjects: readonly string[], timeoutMs: number): Promise<void> {
    const waiting = new Set(subjects);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new LoadgenError('TIMEOUT', `record.subscribe: ${waiting.size} of ${subjects.length} subjects unanswered within ${timeoutMs} ms`)), timeoutMs);
      const result = (ts: number): void => {
        this.results++;
        if (this.measuring) recordLatencyMs(this.hist, epochNowMs() - ts);
      };
      this.client.subscribe([...subjects], {
        onImage: (record) => result(record.ts),
        onUpdate: (_record, _changed, update) => result(update.ts),
        onStatus: (subject, status, error) => {
          if (status === 'error') {
            clearTimeout(timer);
            reject(this.refused('record.subscribe', error ?? new Error(`${subject} refused`)));
            return;
          }
          waiting.delete(subject);
          if (waiting.size === 0) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
  }

  /** TIMEOUT, or SERVER_REFUSED naming the request and the server's code. */
  private refused(request: string, err: unknown): LoadgenError {
    if (err instanceof TidewireError && err.code === 'TIMEOUT') return new LoadgenError('TIMEOUT', `${request}: ${err.message}`);
    const why = err instanceof TidewireError ? `${err.code}: ${err.message}` : String(err);
    return new LoadgenError('SERVER_REFUSED', `${request} refused: ${why}`);
  }

  close(): void {
    this.closing = true;
    this.client.close();
  }
}

const cpuHere = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** Runs the kit: for each mode, its 1,000 statements, then each rate for warm-up + measurement. */
export async function runEsperKit(o: KitOptions): Promise<KitReport> {
  const steps: KitStepResult[] = [];
  const events = new KitEvents();
  const source = await SourceConnection.open({ url: o.url, user: o.source.user, password: o.source.password, clock: epochNowMs, timeoutMs: o.connectTimeoutMs });
  try {
    for (const mode of o.modes) {
      const trader = await KitTrader.connect(o.url, o.account, o.connectTimeoutMs);
      try {
        o.onProgress(`${mode}: creating ${KIT_SYMBOLS} statements`);
        // in batches: every request is answered before the next batch (no unbounded queue)
        for (let i = 0; i < KIT_SYMBOLS; i += 100) {
          const batch = [];
          for (let k = i; k < Math.min(KIT_SYMBOLS, i + 100); k++) {
            const s = kitSymbol(k);
            batch.push(trader.createStatement(kitName(mode, s), kitStatement(mode, s)));
          }
          await Promise.all(batch);
        }
        const subjects = Array.from({ length: Math.min(o.sample, KIT_SYMBOLS) }, (_, k) => `/STAT/${kitName(mode, kitSymbol(k))}${KIT_PREFIX}${kitSymbol(k)}`);
        if (subjects.length > 0) await trader.subscribe(subjects, o.connectTimeoutMs);
        for (const rate of o.rates) steps.push(await runStep(o, mode, rate, events, source, trader));
      } finally {
        trader.close();
      }
      // closing the session released its statements: wait until the server has seen it
      await source.barrier(`${mode} done`);
    }
  } finally {
    source.close('esper-kit done');
  }
  return { scenario: 'esper-kit', params: { ...o.params, modes: o.modes, rates: o.rates, symbols: KIT_SYMBOLS, sample: o.sample, cpus: os.cpus().length }, steps };
}

async function runStep(o: KitOptions, mode: KitMode, rate: number, events: KitEvents, source: SourceConnection, trader: KitTrader): Promise<KitStepResult> {
  const start = epochNowMs() + 50;
  const measureFrom = start + o.warmupSeconds * 1000;
  const until = measureFrom + o.stepSeconds * 1000;
  let sent = 0;
  let sentInWindow = 0;
  let skipped = 0;
  // bytes sent, bytes the engine has applied (from pongs), and where the next ping goes
  let sentBytes = 0;
  let appliedBytes = 0;
  let nextAck = ACK_EVERY_BYTES;
  let failure: unknown;
  let before: Awaited<ReturnType<typeof sampleServer>> | undefined;
  let cpuBefore = 0;
  let resultsBefore = 0;
  source.takeFlow();
  o.onProgress(`${mode} @ ${rate.toLocaleString('en-US')} events/s: warm-up ${o.warmupSeconds} s, then ${o.stepSeconds} s`);
  const loop = runPaced({
    pacer: new Pacer(rate, start),
    clock: epochNowMs,
    untilMs: until,
    tickMs: 0.5,
    ticks: workerTicks,
    send: (due, now) => {
      if (source.isPaused || sentBytes - appliedBytes > MAX_IN_FLIGHT_BYTES) {
        if (now >= measureFrom) skipped += due.count;
      } else {
        // at most 2,000 events per frame: a late tick is caught up in several frames
        for (let left = due.count; left > 0; left -= 2000) {
          const frame = events.frame(Math.min(2000, left), now);
          source.send(frame);
          sentBytes += frame.length;
        }
        sent += due.count;
        if (now >= measureFrom) sentInWindow += due.count;
        if (sentBytes >= nextAck) {
          const mark = sentBytes;
          nextAck = sentBytes + ACK_EVERY_BYTES;
          source.barrier('esper-kit flow window').then(
            () => { appliedBytes = Math.max(appliedBytes, mark); },
            (e: unknown) => { failure ??= e; },
          );
        }
      }
      if (now >= measureFrom && !trader.measuring) {
        trader.measuring = true;
        trader.hist.reset();
        resultsBefore = trader.results;
        cpuBefore = cpuHere();
        void sampleServer(o.url).then((s) => { before = s; });
      }
    },
  });
  await loop.done;
  if (failure !== undefined) throw failure;
  const after = await sampleServer(o.url);
  const cpuAfter = cpuHere();
  trader.measuring = false;
  await source.barrier(`${mode} @ ${rate}`);
  if (trader.closedReason) throw new LoadgenError('SERVER_REFUSED', trader.closedReason);
  const windowS = o.stepSeconds;
  const flow = source.takeFlow();
  const result: KitStepResult = {
    mode, targetPerSec: rate,
    sentPerSec: Math.round(sentInWindow / windowS),
    ingestPerSec: before ? ingestPerSec(before, after) : null,
    resultsPerSec: Math.round((trader.results - resultsBefore) / windowS),
    latencyMs: summarizeMs(trader.hist),
    samples: trader.hist.totalCount,
    serverCpuPct: before ? cpuPercent(before, after) : null,
    generatorCpuPct: Math.round(((cpuAfter - cpuBefore) / 1000 / (windowS * 1000)) * 1000) / 10,
    sourcePauses: flow.sourcePauses,
    skipped,
  };
  o.onProgress(`${mode} @ ${rate}: sent ${result.sentPerSec}/s, server ${result.ingestPerSec ?? '-'}/s, latency mean ${result.latencyMs.mean} ms p99 ${result.latencyMs.p99} ms (${sent} events)`);
  return result;
}

/** The report as a text table. */
export function renderKitTable(r: KitReport): string {
  const head = ['mode', 'target ev/s', 'sent ev/s', 'server ev/s', 'results/s', 'mean ms', 'p50 ms', 'p99 ms', 'max ms', 'server CPU %', 'gen CPU %', 'pauses', 'skipped'];
  const rows = r.steps.map((s) => [
    s.mode, s.targetPerSec, s.sentPerSec, s.ingestPerSec ?? '-', s.resultsPerSec, s.latencyMs.mean, s.latencyMs.p50, s.latencyMs.p99, s.latencyMs.max, s.serverCpuPct ?? '-', s.generatorCpuPct, s.sourcePauses, s.skipped,
  ].map((v) => (typeof v === 'number' && Number.isInteger(v) && v >= 1000 ? v.toLocaleString('en-US') : String(v))));
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i]!)).join('  ');
  const published = `published (Esper, 4 cores at 2 GHz): ${KIT_PUBLISHED.eventsPerSec.map((n) => n.toLocaleString('en-US')).join('-')} events/s, engine mean ${KIT_PUBLISHED.meanUs.join('-')} us, p99 ${KIT_PUBLISHED.p99Us.join('-')} us (engine only; these are end to end)`;
  return [line(head), ...rows.map(line), published].join('\n');
}
