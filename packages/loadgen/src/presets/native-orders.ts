/**
 * `run orders` on the Rust simulator (`tidewire-loadgen-clients --mode orders`, native/src/orders.rs
 * documents its lines): this process publishes the instruments, fetches the login token and runs
 * the steps; the simulator holds the trader connections (client `c` on `urls[c mod n]` with several
 * servers, as the Node engine), sends order `k` (`orderOf(k)`, by client
 * `k mod clients`) at `start + k / rate` from a timerfd-paced socket thread and times each answer,
 * so neither this event loop nor its pacing is inside the measured latency. Same report as the Node
 * engine (orders.ts): create -> ack from the schedule, `sentToAckMs` from the actual send, send
 * lateness, acks, rejects (counted, never ignored), `lost` = measured orders unanswered after the
 * response timeout, `orderIdGaps` over every ack of the run, `outOfOrder` per client; the
 * simulator's CPU is added to `generatorCpuPct` (and reported alone as `usersCpuPct`).
 */

import { delay, epochNowMs } from '../util/clock.js';
import { LoadgenError } from '../util/errors.js';
import { FeedPublisher } from '../sources/feed-publisher.js';
import { waitSeconds } from './finder-latency.js';
import { mergeEncoded, newLatencyHistogram, summarizeMs, type LatencySummaryMs } from '../util/histogram.js';
import { assertNativeBuilt, NativeProcess, simulatorArgs, type NativeLine } from '../clients/native-process.js';
import type { StepResult, SweepReport } from './runner.js';
import { startWindow, stepRow } from '../report/step-meter.js';
import { NATIVE_ORDERS_DEFAULT_TICK_MS, publishInstrumentsAndLogin, type OrdersOptions } from './orders-setup.js';

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const round2 = (x: number): number => Math.round(x * 100) / 100;

/** What the simulator answers to `take` (native/src/orders.rs), numbers defaulted to 0. */
export interface OrdersTake {
  submitted: number;
  acked: number;
  rejected: number;
  lastReject?: string;
  outOfOrder: number;
  unanswered: number;
  sendLatenessSumMs: number;
  maxSendLatenessMs: number;
  /** HDR V2 base64, µs. */
  createToAck: string;
  sentToAck: string;
  orderIds: number;
  orderIdGaps: number;
  unmatchedErrors: number;
  lastError?: string;
  live: number;
  dropped: number;
  dropReason?: string;
  cpuMicros: number;
}

/** Options of the order simulator process. */
export interface OrderProcessOptions {
  /** The server the clients connect to, or several (a cluster's nodes): client `c` on `urls[c mod n]`. */
  url: string | readonly string[];
  token: string;
  clients: number;
  idPrefix: string;
  /** Socket threads (each paces its share of the clients). @default 1 */
  threads?: number;
  /** Shortest time between two sends of a thread, ms. @default 0 */
  tickMs?: number;
  /** Poll without sleeping when the next order is due within this long, ms. @default 0 */
  spinMs?: number;
  connectTimeoutMs: number;
  /** The process exits by itself after this long. */
  maxSeconds: number;
}

/** The simulator process in orders mode: one answer line per command, in order. */
export class OrderProcess {
  private constructor(private readonly proc: NativeProcess) {}

  /** Spawns the simulator and waits for its `ready` line. Throws NATIVE_FAILED when it is not built or does not start. */
  static async start(o: OrderProcessOptions): Promise<OrderProcess> {
    const urls = typeof o.url === 'string' ? [o.url] : o.url;
    const args = simulatorArgs(urls[0] ?? '', o.connectTimeoutMs, o.maxSeconds);
    // several servers: one comma-separated --url, each with its /stream path (native/src/args.rs)
    args[args.indexOf('--url') + 1] = urls.map((u) => `${u.replace(/\/+$/, '')}/stream`).join(',');
    return new OrderProcess(await NativeProcess.start({ name: 'order simulator', replies: 'order', args: [
      ...args,
      '--mode', 'orders',
      '--token', o.token,
      '--clients', String(o.clients),
      '--id-prefix', o.idPrefix,
      '--threads', String(o.threads ?? 1),
      '--tick-ms', String(o.tickMs ?? 0),
      '--spin-ms', String(o.spinMs ?? 0),
    ] }));
  }

  /** Why the process ended, once it has. */
  get exited(): string | undefined {
    return this.proc.exited;
  }

  /** Sends `cmd` and resolves with its answer; rejects on an error line, the exit, or after `timeoutMs`. */
  call(cmd: Record<string, unknown>, timeoutMs: number): Promise<NativeLine> {
    return this.proc.call(cmd, timeoutMs);
  }

  /** The process's CPU so far (user + system), µs. */
  async cpuMicros(): Promise<number> {
    const l = await this.call({ cmd: 'cpu' }, 10_000);
    return num(l.cpuUserMicros) + num(l.cpuSystemMicros);
  }

  /** The step's counters once its orders are sent and answered (or `waitMs` after the last send). */
  async take(waitMs: number): Promise<OrdersTake> {
    const l = await this.call({ cmd: 'take', waitMs }, waitMs + 90_000);
    const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
    return {
      submitted: num(l.submitted), acked: num(l.acked), rejected: num(l.rejected), lastReject: text(l.lastReject),
      outOfOrder: num(l.outOfOrder), unanswered: num(l.unanswered), sendLatenessSumMs: num(l.sendLatenessSumMs),
      maxSendLatenessMs: num(l.maxSendLatenessMs), createToAck: String(l.createToAck ?? ''), sentToAck: String(l.sentToAck ?? ''),
      orderIds: num(l.orderIds), orderIdGaps: num(l.orderIdGaps), unmatchedErrors: num(l.unmatchedErrors), lastError: text(l.lastError),
      live: num(l.live), dropped: num(l.dropped), dropReason: text(l.dropReason), cpuMicros: num(l.cpuUserMicros) + num(l.cpuSystemMicros),
    };
  }

  /** Asks the process to stop; kills it after 10 s. Idempotent. */
  stop(): Promise<void> {
    return this.proc.stop();
  }
}

/** Summary of an encoded µs histogram, ms (all 0 when empty). */
function summaryOf(encoded: string): LatencySummaryMs {
  const h = newLatencyHistogram();
  try {
    mergeEncoded(h, encoded);
    return summarizeMs(h);
  } finally {
    h.destroy();
  }
}

/** Runs the orders sweep on the Rust simulator; closes the feed and the process whatever happens. */
export async function runNativeOrders(o: OrdersOptions): Promise<SweepReport> {
  assertNativeBuilt();
  const progress = o.onProgress ?? (() => {});
  const threads = o.threads ?? 1;
  const tickMs = o.nativeTickMs ?? NATIVE_ORDERS_DEFAULT_TICK_MS;
  const spinMs = o.spinMs ?? 0;
  const feed = await FeedPublisher.connect({ url: o.url, user: o.source.user, password: o.source.password });
  const steps: StepResult[] = [];
  const idPrefix = `N${Date.now().toString(36)}`; // client order ids unique across runs on one journal
  const runSeconds = o.steps.length * (o.warmupSeconds + o.stepSeconds + o.responseTimeoutMs / 1000 + 30) + o.connectTimeoutMs / 1000 + 60;
  let proc: OrderProcess | undefined;
  try {
    const token = await publishInstrumentsAndLogin(o, feed);
    proc = await OrderProcess.start({
      url: o.urls ?? [o.url], token, clients: o.clients, idPrefix, threads, tickMs, spinMs,
      connectTimeoutMs: o.connectTimeoutMs, maxSeconds: runSeconds,
    });
    const p = proc;
    const connected = await p.call({ cmd: 'connect' }, o.connectTimeoutMs + 20_000);
    if (num(connected.ready) < o.clients) {
      const errors = Array.isArray(connected.errors) ? connected.errors.map(String) : [];
      throw new LoadgenError('SERVER_REFUSED', `order client could not connect: ${num(connected.ready)} of ${o.clients} logged in${errors.length ? `: ${errors.join('; ')}` : ''}`);
    }
    let k = 0;
    for (let si = 0; si < o.steps.length; si++) {
      const rate = o.steps[si] as number;
      const totalS = o.warmupSeconds + o.stepSeconds;
      const startMs = epochNowMs() + 20;
      const count = Math.floor(rate * totalS);
      await p.call({ cmd: 'step', firstK: k, count, startMs, ratePerSec: rate, warmEndMs: startMs + o.warmupSeconds * 1000 }, 10_000);
      k += count;
      const failure = (): string | undefined => feed.failure ?? p.exited;
      await waitSeconds(o.warmupSeconds, (e) => progress({ phase: 'warmup', stepIndex: si, steps: o.steps.length, target: rate, elapsedS: e, totalS: o.warmupSeconds }), failure);
      const window = await startWindow(o.url);
      const cpuStart = await p.cpuMicros();
      await waitSeconds(o.stepSeconds, (e) => progress({ phase: 'measure', stepIndex: si, steps: o.steps.length, target: rate, elapsedS: e, totalS: o.stepSeconds }), failure);
      // the window ends with the schedule (as the Node engine's ends when its pacer is done)
      await delay(startMs + (count / rate) * 1000 - epochNowMs());
      const cpuEnd = await p.cpuMicros();
      const usage = await window.end();
      const usersCpuPct = Math.round(((cpuEnd - cpuStart) / 1e4 / Math.max(usage.seconds, 1e-3)) * 10) / 10;
      usage.generatorCpuPct = Math.round((usage.generatorCpuPct + usersCpuPct) * 10) / 10;
      const t = await p.take(o.responseTimeoutMs);
      let stepFailure: string | undefined = feed.failure;
      if (t.unmatchedErrors > 0) stepFailure = stepFailure ?? t.lastError ?? 'server error';
      if (t.dropped > 0) stepFailure = stepFailure ?? `server closed an order client: ${t.dropReason ?? 'no reason'}`;
      const notes: string[] = [];
      if (t.unanswered > 0) notes.push(`${t.unanswered} orders unanswered after ${o.responseTimeoutMs} ms`);
      if (t.rejected > 0) notes.push(`${t.rejected} orders rejected: ${t.lastReject}`);
      if (t.orderIdGaps > 0) notes.push(`${t.orderIdGaps} orderIds missing between the acked ones of the run (unanswered orders, or another trader submitting)`);
      if (stepFailure) notes.push(stepFailure);
      const row = stepRow({
        step: rate,
        users: t.live,
        expectedPerSec: rate,
        deliveredPerSec: Math.round(t.acked / Math.max(o.stepSeconds, 1e-3)),
        lost: t.unanswered,
        outOfOrder: t.outOfOrder,
        histograms: [t.createToAck],
        usage,
        extra: {
          submitted: t.submitted, acked: t.acked, rejected: t.rejected, orderIdGaps: t.orderIdGaps,
          maxSendLatenessMs: round2(t.maxSendLatenessMs),
          meanSendLatenessMs: round2(t.submitted > 0 ? t.sendLatenessSumMs / t.submitted : 0),
          sentToAckMs: summaryOf(t.sentToAck),
          usersCpuPct,
        },
      });
      steps.push(row);
      progress({ phase: 'step', stepIndex: si, steps: o.steps.length, result: row, notes });
      if (stepFailure) throw new LoadgenError('SERVER_REFUSED', stepFailure);
    }
  } finally {
    feed.stop();
    await proc?.stop();
  }
  // the simulator's own pacing replaces the Node engine's pacing / tickMs
  return { scenario: o.scenario, params: { ...o.params, engine: 'native', pacing: 'timerfd', tickMs, spinMs, threads }, steps };
}
