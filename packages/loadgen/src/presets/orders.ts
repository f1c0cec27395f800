/**
 * `run orders` (STAC durable order flow, SCENARIOS.md section 3): the source publishes
 * `/BENCH/ORD/<i>` instruments with bid/ask; `clients` trader connections submit `order.submit`
 * at a steady total rate (order `k` by client `k mod clients`, scheduled at `start + k / rate`);
 * latency = the order's scheduled creation time -> its `order.ack` received (open loop: a late
 * send is charged to the latency, as STAC's create-to-ack). Each step also reports `sentToAckMs`:
 * the same orders from their actual send to the ack, which leaves out the generator's own pacing
 * (`meanSendLatenessMs` says how late sends left: ~0.3-0.5 ms with the default worker ticks,
 * ~0.6-0.9 with `pacing: 'interval'`, a 1 ms timer that fires every 1-2 ms). Orders are limit buys below the bid
 * (they rest, acknowledged; fills are not part of this measurement). Zero loss: every submitted
 * order must be answered; the `orderId`s of every ack of the run are checked for gaps (they are
 * gap-free server-wide, so an accepted order never acked, or another trader submitting at the
 * same time, shows up as gaps) and each client's acks for order against its submissions. The server needs `--journal-dir` (orders on) and an orders-per-
 * second limit above the per-user rate (`--orders-per-sec 0` turns the limit off). With
 * `engine: 'native'` (or `auto` when built) the Rust simulator holds the clients and paces the
 * orders (native-orders.ts), with the same report.
 */

import { decodeServerFrame, encodeClientMessage, type ServerMessage } from '@tidewire/protocol';
import WebSocket from 'ws';
import { epochNowMs } from '../util/clock.js';
import { FeedPublisher } from '../sources/feed-publisher.js';
import { bounded, waitSeconds } from './finder-latency.js';
import { newLatencyHistogram, recordLatencyMs, encodeHistogram, summarizeMs, type LatencyHistogram } from '../util/histogram.js';
import { intervalTicks, Pacer, runPaced, workerTicks } from '../util/pacer.js';
import type { StepResult, SweepReport } from './runner.js';
import { startWindow, stepRow } from '../report/step-meter.js';
import { LoadgenError } from '../util/errors.js';
import { nativeAvailable } from '../clients/native-process.js';
import {
  NATIVE_ORDERS_DEFAULT_TICK_MS, ORDER_INSTRUMENTS, ORDERS_DEFAULT_TICK_MS, instrumentFields, orderInstrument, orderOf, publishInstrumentsAndLogin,
  type OrderEngine, type OrderPacing, type OrdersOptions,
} from './orders-setup.js';

// the shared part's names, where the commands, the failover run and the tests import them from
export {
  NATIVE_ORDERS_DEFAULT_TICK_MS, ORDER_INSTRUMENTS, ORDERS_DEFAULT_TICK_MS, instrumentFields, orderInstrument, orderOf, publishInstrumentsAndLogin,
  type OrderEngine, type OrderPacing, type OrdersOptions,
};

/** Default steps, orders/s. */
export const ORDERS_DEFAULT_STEPS: readonly number[] = [1_000, 5_000, 10_000, 20_000];
/** Published (STAC 2007, one server) mean create-to-ack, ms, per orders/s. */
export const ORDERS_PUBLISHED_MEAN_MS: Readonly<Record<number, number>> = { 6000: 0.519 };

/** Bits per chunk of an `IdSet`: 65,536 ids in 8 KiB. */
const ID_CHUNK_BITS = 16;

/**
 * A set of non-negative integer ids (the `orderId`s acked in a run) with the count of ids missing
 * between its smallest and largest: a sparse bitmap in 8 KiB chunks, so adding an id allocates
 * nothing but a new chunk every 65,536 ids (a growing array of every id, sorted at each step's end,
 * grew the old generation and cost a sort of every id of the run per step).
 */
export class IdSet {
  private readonly chunks = new Map<number, Int32Array>();
  private distinct = 0;
  private min = Number.POSITIVE_INFINITY;
  private max = Number.NEGATIVE_INFINITY;

  /** Adds `id` (a repeat is counted once). Ids that are not non-negative safe integers are ignored. */
  add(id: number): void {
    if (!Number.isSafeInteger(id) || id < 0) return;
    const key = Math.floor(id / 2 ** ID_CHUNK_BITS);
    let chunk = this.chunks.get(key);
    if (!chunk) {
      chunk = new Int32Array(2 ** ID_CHUNK_BITS / 32);
      this.chunks.set(key, chunk);
    }
    const bit = id - key * 2 ** ID_CHUNK_BITS;
    const word = bit >>> 5;
    const mask = 1 << (bit & 31);
    if (((chunk[word] as number) & mask) !== 0) return;
    chunk[word] = (chunk[word] as number) | mask;
    this.distinct++;
    if (id < this.min) this.min = id;
    if (id > this.max) this.max = id;
  }

  /** Ids in the set. */
  get size(): number {
    return this.distinct;
  }

  /** How many integers between the smallest and the largest id are missing. */
  get gaps(): number {
    return this.distinct === 0 ? 0 : this.max - this.min + 1 - this.distinct;
  }
}

/** Gaps in a list of ids: how many integers between the smallest and the largest are missing. */
export function idGaps(ids: readonly number[]): number {
  const set = new IdSet();
  for (const id of ids) set.add(id);
  return set.gaps;
}

interface Client {
  ws: WebSocket;
  /** reqId -> (scheduled create time, actual send time, measured?) of orders in flight. */
  pending: Map<number, { scheduledMs: number; sentMs: number; measured: boolean }>;
  lastAckedReq: number;
  nextReqId: number;
}


/** Counters of one window. */
interface OrderCounters {
  submitted: number;
  acked: number;
  rejected: number;
  outOfOrder: number;
  lastReject?: string;
  maxSendLatenessMs: number;
  /** Sum of (send - schedule) over the measured sends, ms. */
  sendLatenessSumMs: number;
}

const zero = (): OrderCounters => ({ submitted: 0, acked: 0, rejected: 0, outOfOrder: 0, maxSendLatenessMs: 0, sendLatenessSumMs: 0 });

const round2 = (x: number): number => Math.round(x * 100) / 100;



/**
 * Runs the sweep on the engine `o.engine` picks (`params.engine` says which ran); closes the feed
 * and every client whatever happens. Throws NATIVE_FAILED for `native` when the Rust simulator is
 * not built.
 */
export async function runOrders(o: OrdersOptions): Promise<SweepReport> {
  const engine = o.engine ?? 'auto';
  if (engine === 'native' || (engine === 'auto' && nativeAvailable())) {
    const { runNativeOrders } = await import('./native-orders.js'); // loaded only when used
    return runNativeOrders(o);
  }
  const report = await runNodeOrders(o);
  return { ...report, params: { ...report.params, engine: 'node' } };
}


/** The Node engine: `ws` clients in this event loop, paced by `o.pacing`. */
async function runNodeOrders(o: OrdersOptions): Promise<SweepReport> {
  const progress = o.onProgress ?? (() => {});
  const feed = await FeedPublisher.connect({ url: o.url, user: o.source.user, password: o.source.password });
  const clients: Client[] = [];
  const steps: StepResult[] = [];
  const idPrefix = `L${Date.now().toString(36)}`; // client order ids unique across runs on one journal
  let counters = zero();
  const allOrderIds = new IdSet(); // every ack of the run, measured or not: gaps are checked over all of them
  let hist: LatencyHistogram = newLatencyHistogram();
  let histSent: LatencyHistogram = newLatencyHistogram();
  let failure: string | undefined;
  try {
    const token = await publishInstrumentsAndLogin(o, feed);
    const urls = o.urls ?? [o.url];
    // client j on urls[j mod n]; order k goes to client k mod clients: the rate splits over the servers
    const opened = await bounded(o.clients, 32, (j) => openClient(urls[j % urls.length]!, token, o.connectTimeoutMs));
    for (const c of opened) {
      if (typeof c === 'string') throw new LoadgenError('SERVER_REFUSED', `order client could not connect: ${c}`);
      clients.push(c);
      c.ws.on('message', (data: Buffer) => {
        const recvMs = epochNowMs();
        let messages: ServerMessage[];
        try {
          messages = decodeServerFrame(data.toString());
        } catch (err) {
          failure = `bad frame from server: ${(err as Error).message}`;
          return;
        }
        for (const m of messages) onReply(c, m, recvMs);
      });
      c.ws.on('close', (code, reason) => {
        failure = failure ?? `server closed an order client: ${code} ${reason.toString()}`;
      });
    }
    const onReply = (c: Client, m: ServerMessage, recvMs: number): void => {
      if (m.type !== 'order.ack' && m.type !== 'order.reject' && m.type !== 'error') return;
      const reqId = m.reqId;
      const p = reqId === undefined ? undefined : c.pending.get(reqId);
      if (!p || reqId === undefined) {
        if (m.type === 'error') failure = failure ?? `server error ${m.code}: ${m.message}`;
        return;
      }
      c.pending.delete(reqId);
      if (reqId < c.lastAckedReq) counters.outOfOrder += p.measured ? 1 : 0;
      c.lastAckedReq = Math.max(c.lastAckedReq, reqId);
      if (m.type === 'order.ack') allOrderIds.add(m.orderId);
      if (!p.measured) return;
      if (m.type === 'order.ack') {
        counters.acked++;
        recordLatencyMs(hist, recvMs - p.scheduledMs);
        recordLatencyMs(histSent, recvMs - p.sentMs);
      } else {
        counters.rejected++;
        counters.lastReject = m.type === 'error' ? `${m.code}: ${m.message}` : `${m.field}/${m.rule}: ${m.message}`;
      }
    };
    let k = 0;
    for (let si = 0; si < o.steps.length; si++) {
      const rate = o.steps[si] as number;
      const totalS = o.warmupSeconds + o.stepSeconds;
      const startMs = epochNowMs() + 20;
      const warmEnd = startMs + o.warmupSeconds * 1000;
      const count = Math.floor(rate * totalS);
      const pacer = new Pacer(rate, startMs, count);
      const firstK = k;
      let measuring = false;
      const loop = runPaced({
        pacer,
        clock: epochNowMs,
        untilMs: startMs + totalS * 1000 + 5_000,
        ticks: o.pacing === 'interval' ? intervalTicks : workerTicks,
        tickMs: o.pacing === 'interval' ? 1 : (o.tickMs ?? ORDERS_DEFAULT_TICK_MS),
        send: (due) => {
          for (let j = 0; j < due.count; j++) {
            const n = firstK + due.first + j;
            const scheduledMs = pacer.scheduledMs(due.first + j);
            const measured = scheduledMs >= warmEnd;
            if (measured && !measuring) measuring = true;
            const c = clients[n % clients.length] as Client;
            if (c.ws.readyState !== WebSocket.OPEN) continue;
            const reqId = c.nextReqId++;
            const ord = orderOf(n, idPrefix);
            const sentMs = epochNowMs();
            c.pending.set(reqId, { scheduledMs, sentMs, measured });
            c.ws.send(encodeClientMessage({ type: 'order.submit', reqId, clientOrderId: ord.clientOrderId, instrument: ord.instrument, side: 'buy', quantity: ord.quantity, price: ord.price, timeInForce: 'day' }));
            if (measured) {
              counters.submitted++;
              counters.maxSendLatenessMs = Math.max(counters.maxSendLatenessMs, sentMs - scheduledMs);
              counters.sendLatenessSumMs += sentMs - scheduledMs;
            }
          }
        },
      });
      k += count;
      await waitSeconds(o.warmupSeconds, (e) => progress({ phase: 'warmup', stepIndex: si, steps: o.steps.length, target: rate, elapsedS: e, totalS: o.warmupSeconds }), () => failure ?? feed.failure);
      const window = await startWindow(o.url);
      await waitSeconds(o.stepSeconds, (e) => progress({ phase: 'measure', stepIndex: si, steps: o.steps.length, target: rate, elapsedS: e, totalS: o.stepSeconds }), () => failure ?? feed.failure);
      await loop.done;
      const usage = await window.end();
      // every submitted order answered, or the response timeout: bounded wait
      const drainEnd = epochNowMs() + o.responseTimeoutMs;
      while (clients.some((c) => c.pending.size > 0) && epochNowMs() < drainEnd && !failure) await new Promise((r) => setTimeout(r, 20));
      const c = counters;
      counters = zero();
      const h = hist;
      hist = newLatencyHistogram();
      const hSent = histSent;
      histSent = newLatencyHistogram();
      let unanswered = 0;
      for (const cl of clients) {
        for (const p of cl.pending.values()) if (p.measured) unanswered++;
        cl.pending.clear();
      }
      const gaps = allOrderIds.gaps; // cumulative: every order of the run so far was answered or is counted
      const notes: string[] = [];
      if (unanswered > 0) notes.push(`${unanswered} orders unanswered after ${o.responseTimeoutMs} ms`);
      if (c.rejected > 0) notes.push(`${c.rejected} orders rejected: ${c.lastReject}`);
      if (gaps > 0) notes.push(`${gaps} orderIds missing between the acked ones of the run (unanswered orders, or another trader submitting)`);
      if (failure) notes.push(failure);
      const row = stepRow({
        step: rate,
        users: clients.filter((cl) => cl.ws.readyState === WebSocket.OPEN).length,
        expectedPerSec: rate,
        deliveredPerSec: Math.round(c.acked / Math.max(o.stepSeconds, 1e-3)),
        lost: unanswered,
        outOfOrder: c.outOfOrder,
        histograms: [encodeHistogram(h)],
        usage,
        extra: {
          submitted: c.submitted, acked: c.acked, rejected: c.rejected, orderIdGaps: gaps,
          maxSendLatenessMs: round2(c.maxSendLatenessMs),
          meanSendLatenessMs: round2(c.submitted > 0 ? c.sendLatenessSumMs / c.submitted : 0),
          sentToAckMs: summarizeMs(hSent),
        },
      });
      h.destroy();
      hSent.destroy();
      steps.push(row);
      progress({ phase: 'step', stepIndex: si, steps: o.steps.length, result: row, notes });
      if (failure) throw new LoadgenError('SERVER_REFUSED', failure);
    }
  } finally {
    feed.stop();
    for (const c of clients) c.ws.close(1000, 'load generator done');
    hist.destroy();
    histSent.destroy();
  }
  return { scenario: o.scenario, params: o.params, steps };
}

/** Opens one order client logged in with `token`; resolves with it or a failure text. */
function openClient(url: string, token: string, timeoutMs: number): Promise<Client | string> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${url.replace(/\/+$/, '')}/stream`, { perMessageDeflate: false });
    const timer = setTimeout(() => {
      ws.terminate();
      resolve(`not logged in after ${timeoutMs} ms`);
    }, timeoutMs);
    ws.once('open', () => ws.send(encodeClientMessage({ type: 'session.login', reqId: 1, token })));
    ws.once('error', (err) => {
      clearTimeout(timer);
      resolve(`connection failed: ${err.message}`);
    });
    const onLogin = (data: Buffer): void => {
      for (const m of decodeServerFrame(data.toString())) {
        if (m.type === 'session.loggedIn') {
          clearTimeout(timer);
          ws.off('message', onLogin);
          ws.on('error', () => {}); // reported through 'close'
          const c: Client = { ws, pending: new Map(), lastAckedReq: 0, nextReqId: 10 };
          const ping = setInterval(() => {
            if (ws.readyState === WebSocket.OPEN) ws.send(encodeClientMessage({ type: 'session.ping', reqId: c.nextReqId++, ts: epochNowMs() }));
          }, Math.max(100, m.heartbeatMs));
          ws.once('close', () => clearInterval(ping));
          resolve(c);
          return;
        }
        if (m.type === 'error') {
          clearTimeout(timer);
          ws.terminate();
          resolve(`login failed: ${m.code}: ${m.message}`);
          return;
        }
      }
    };
    ws.on('message', onLogin);
  });
}
