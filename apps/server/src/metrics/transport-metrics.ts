/**
 * Metrics one transport (one thread) collects: latency histograms from the samples the engine
 * hands back with the frames it drains, messages per frame, bytes received, its sessions
 * (frames/messages/bytes per second, subscriptions, the latency the client reports), event-loop
 * delay and heap. `snapshot()` hands one interval to the MetricsCenter (main thread) and starts
 * the next.
 */

import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import type { AdminSessionInfo, ClientLatencyReport, LatencyStatsMs } from '@tidewire/protocol';
import { encodeHistogram, MAX_BATCH_MESSAGES, newHistogram, recordLatencyMs, type Histogram } from './histogram.js';
import type { SourceFlowCounts } from '../handlers/source.js';

/**
 * Latency samples per second a transport records at most (a sample: the origin `ts` of one record
 * message or updated view row, ~0.3 µs to record): the engine keeps one item in N
 * (`samplingPeriod`), N set each interval so that about this many come back.
 */
export const SAMPLE_BUDGET_PER_SEC = 20_000;

/** Frames per second whose message count goes into the batch-size histogram at most (1 in N above). */
export const BATCH_BUDGET_FRAMES_PER_SEC = 20_000;

/** Kind of a drained latency sample (engine `session::SAMPLE_RECORD` / `SAMPLE_VIEW_ROW`). */
export const SAMPLE_RECORD = 0;
export const SAMPLE_VIEW_ROW = 1;

/** Sampling period of the event-loop delay monitor, ms. */
export const LOOP_RESOLUTION_MS = 10;

/** Client-reported latency summed over an interval (weighted by samples). */
export interface ClientLatencyTotals {
  samples: number;
  /** Sum of meanMs × samples. */
  weightedMeanSum: number;
  /** Largest p99Ms reported. */
  p99Max: number;
  /** Largest maxMs reported. */
  max: number;
  /** Samples of reports that carried paintMeanMs, and the sum of paintMeanMs × samples over them. */
  paintSamples: number;
  paintWeightedSum: number;
}

/** One interval of one transport, sent to the main thread (structured-clone safe). */
export interface TransportSnapshot {
  worker: number;
  /** Latency histogram (µs), V2 compressed base64 ('' when empty). */
  latency: string;
  /** Batch-size histogram (messages per frame), base64 ('' when empty). */
  batch: string;
  /** View update latency histogram (µs; updated view rows), base64 ('' when empty). */
  viewLatency: string;
  /** WebSocket bytes received in the interval. */
  bytesIn: number;
  /** Open WebSockets now. */
  connections: number;
  /** This thread's V8 heap in use, bytes. */
  heapUsedBytes: number;
  /** Event-loop delay of this thread over the interval, ms. */
  loopLagMs: LatencyStatsMs;
  clientLatency: ClientLatencyTotals;
  /** Logged-in sessions (clients and sources) of this transport; only when the main thread asked for them. */
  sessions?: AdminSessionInfo[];
  /**
   * Whether something on this transport reads the sessions list (an admin stream, or an HTTP read
   * of it within SESSIONS_READ_LINGER_MS): the main thread then asks for the lists next interval.
   */
  sessionsWanted: boolean;
  /** This transport's source flow control counters at the end of the interval (totals since start, paused now). */
  sourceFlow: SourceFlowCounts;
}

/** Source flow counters of a transport without /source flow control. */
export const NO_SOURCE_FLOW: SourceFlowCounts = Object.freeze({ pauses: 0, overruns: 0, paused: 0, pausedMs: 0 });

/**
 * Per-session bookkeeping; `opened` returns it so that the send path counts a frame without a
 * lookup (`sent(meter, bytes, messages)`). Opaque to callers.
 */
export interface SessionMeter {
  info: AdminSessionInfo;
  frames: number;
  bytes: number;
  messages: number;
  /** Reads the socket's send-buffer size (uWS getBufferedAmount), bytes. */
  queuedBytes: () => number;
}

/** Metrics of one transport. Not thread-safe: used on the transport's own thread only. */
export class TransportMetrics {
  private latency: Histogram = newHistogram(3_600_000_000);
  private batch: Histogram = newHistogram(MAX_BATCH_MESSAGES);
  private viewLatency: Histogram = newHistogram(3_600_000_000);
  private bytesIn = 0;
  private client: ClientLatencyTotals = { samples: 0, weightedMeanSum: 0, p99Max: 0, max: 0, paintSamples: 0, paintWeightedSum: 0 };
  private readonly sessions = new Map<number, SessionMeter>();
  private readonly loop: IntervalHistogram;
  private framesThisInterval = 0;
  /** Latency samples recorded this interval. */
  private samples = 0;
  /** The engine keeps one item in `period` (the value `samplingPeriod` last returned). */
  private period = 1;
  /** Record one frame's size in the batch histogram in `batchEvery` (1: all). */
  private batchEvery = 1;
  /** Frames still to count before the next one recorded (0: record the next). */
  private untilBatch = 0;
  private lastSnapshotAt: number;

  /** `worker`: transport index; `nowMs`: current time (the clock's). */
  constructor(readonly worker: number, nowMs: number) {
    this.loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
    this.loop.enable();
    this.lastSnapshotAt = nowMs;
  }

  /** Counts bytes received on any endpoint. */
  received(bytes: number): void {
    this.bytesIn += bytes;
  }

  /**
   * A frame of `bytes` holding `messages` messages was handed to `ws.send` for the session of
   * `meter` (undefined: a session not opened here, counted for the transport only). Constant
   * time, no allocation: this runs for every frame sent.
   */
  sent(meter: SessionMeter | undefined, bytes: number, messages: number): void {
    if (meter !== undefined) {
      meter.frames++;
      meter.bytes += bytes;
      meter.messages += messages;
    }
    this.framesThisInterval++;
    if (this.untilBatch > 0) {
      this.untilBatch--;
      return;
    }
    this.untilBatch = this.batchEvery - 1;
    if (messages > 0) this.batch.recordValue(Math.min(MAX_BATCH_MESSAGES, messages));
  }

  /**
   * A frame of one message was published to `frames` sockets through a topic (their session
   * meters are settled by the transport's topics). Constant time, no allocation.
   */
  published(frames: number): void {
    this.framesThisInterval += frames;
    if (frames <= this.untilBatch) {
      this.untilBatch -= frames;
      return;
    }
    // as `frames` calls of `sent` with one message each: one in batchEvery is recorded
    const rest = frames - this.untilBatch - 1;
    this.untilBatch = this.batchEvery - 1 - (rest % this.batchEvery);
    this.batch.recordValueWithCount(1, 1 + Math.floor(rest / this.batchEvery));
  }

  /**
   * One latency sample of a frame sent: `kind` SAMPLE_RECORD (a record message) or
   * SAMPLE_VIEW_ROW (an updated view row), origin `ts` -> `sentAtMs` (the frame's socket write).
   */
  sample(kind: number, ts: number, sentAtMs: number): void {
    this.samples++;
    recordLatencyMs(kind === SAMPLE_VIEW_ROW ? this.viewLatency : this.latency, sentAtMs - ts);
  }

  /** The sampling period the engine is to use for this transport's sessions (see SAMPLE_BUDGET_PER_SEC). */
  samplingPeriod(): number {
    return this.period;
  }

  /**
   * A session logged in (either endpoint). Returns its meter for `sent`; a second call
   * for the same id replaces the first (the old meter then counts for nothing).
   */
  opened(info: Omit<AdminSessionInfo, 'subscriptions' | 'messagesPerSec' | 'framesPerSec' | 'bytesPerSec' | 'queuedBytes' | 'clientLatencyMs'>, queuedBytes: () => number): SessionMeter {
    const meter: SessionMeter = {
      info: { ...info, subscriptions: 0, messagesPerSec: 0, framesPerSec: 0, bytesPerSec: 0, queuedBytes: 0, clientLatencyMs: null },
      frames: 0, bytes: 0, messages: 0, queuedBytes,
    };
    this.sessions.set(info.sessionId, meter);
    return meter;
  }

  /** The session's subscription count changed (subjects requested and not unsubscribed). */
  subscriptions(sessionId: number, count: number): void {
    const s = this.sessions.get(sessionId);
    if (s) s.info.subscriptions = count;
  }

  /** A session closed. Unknown ids are ignored. */
  closed(sessionId: number): void {
    this.sessions.delete(sessionId);
  }

  /** A client's `session.ping` latency report (reports with 0 samples only update nothing). */
  clientReport(sessionId: number, r: ClientLatencyReport): void {
    if (r.samples <= 0) return;
    const s = this.sessions.get(sessionId);
    if (s) {
      s.info.clientLatencyMs = r.paintMeanMs === undefined ? { meanMs: r.meanMs, p99Ms: r.p99Ms, maxMs: r.maxMs }
        : { meanMs: r.meanMs, p99Ms: r.p99Ms, maxMs: r.maxMs, paintMeanMs: r.paintMeanMs };
    }
    if (r.paintMeanMs !== undefined) {
      this.client.paintSamples += r.samples;
      this.client.paintWeightedSum += r.paintMeanMs * r.samples;
    }
    this.client.samples += r.samples;
    this.client.weightedMeanSum += r.meanMs * r.samples;
    this.client.p99Max = Math.max(this.client.p99Max, r.p99Ms);
    this.client.max = Math.max(this.client.max, r.maxMs);
  }

  /**
   * Logged-in sessions of this transport now (rates over the last interval): all of them, or the
   * `limit` busiest (bytes/s, then frames/s, then lowest id) when there are more.
   */
  sessionList(limit = Number.POSITIVE_INFINITY): AdminSessionInfo[] {
    const all = [...this.sessions.values()];
    const picked = all.length <= limit ? all : all.sort((a, b) => busiest(a.info, b.info)).slice(0, limit);
    return picked.map((s) => ({ ...s.info, queuedBytes: s.queuedBytes() }));
  }

  /**
   * Ends the interval at `nowMs`: returns its data, resets the interval counters. `sourceFlow`:
   * the transport's SourceFlow counters now (all 0 when absent). `withSessions`: include the
   * sessions list (building and cloning it is most of a snapshot's cost; the per-session rates
   * are computed either way, so a list asked for later intervals covers exactly its interval).
   */
  snapshot(nowMs: number, connections: number, sourceFlow: SourceFlowCounts = NO_SOURCE_FLOW, withSessions = true, sessionsWanted = false): TransportSnapshot {
    const seconds = Math.max(0.001, (nowMs - this.lastSnapshotAt) / 1000);
    this.lastSnapshotAt = nowMs;
    for (const s of this.sessions.values()) {
      s.info.framesPerSec = Math.round(s.frames / seconds);
      s.info.bytesPerSec = Math.round(s.bytes / seconds);
      s.info.messagesPerSec = Math.round(s.messages / seconds);
      s.frames = 0;
      s.bytes = 0;
      s.messages = 0;
    }
    // next interval: about SAMPLE_BUDGET_PER_SEC samples whatever the traffic (items/s estimated
    // as samples/s x the period they were kept at), and about BATCH_BUDGET_FRAMES_PER_SEC frames
    this.period = Math.max(1, Math.ceil((this.samples * this.period) / seconds / SAMPLE_BUDGET_PER_SEC));
    this.batchEvery = Math.max(1, Math.ceil(this.framesThisInterval / seconds / BATCH_BUDGET_FRAMES_PER_SEC));
    this.untilBatch = Math.min(this.untilBatch, this.batchEvery - 1);
    this.framesThisInterval = 0;
    this.samples = 0;
    const loop = this.loop;
    // the histogram holds the time between the monitor's timer ticks (an idle loop shows
    // ~LOOP_RESOLUTION_MS): the lag is what exceeds the resolution
    const lag = (nanos: number): number => round3(Math.max(0, nanos / 1e6 - LOOP_RESOLUTION_MS));
    const loopLagMs: LatencyStatsMs = loop.count === 0
      ? { count: 0, mean: 0, p50: 0, p99: 0, max: 0 }
      : { count: loop.count, mean: lag(loop.mean), p50: lag(loop.percentile(50)), p99: lag(loop.percentile(99)), max: lag(loop.max) };
    loop.reset();
    const snap: TransportSnapshot = {
      worker: this.worker,
      latency: encodeHistogram(this.latency),
      batch: encodeHistogram(this.batch),
      viewLatency: encodeHistogram(this.viewLatency),
      bytesIn: this.bytesIn,
      connections,
      heapUsedBytes: getHeapStatistics().used_heap_size,
      loopLagMs,
      clientLatency: this.client,
      sourceFlow: { ...sourceFlow },
      sessionsWanted,
    };
    // the busiest only: the list is cloned to the main thread and back to the workers that read
    // it, and 10,000 sessions of it stalled a worker's loop for tens of ms per second
    if (withSessions) snap.sessions = this.sessionList(MAX_SNAPSHOT_SESSIONS);
    this.latency.reset();
    this.batch.reset();
    this.viewLatency.reset();
    this.bytesIn = 0;
    this.client = { samples: 0, weightedMeanSum: 0, p99Max: 0, max: 0, paintSamples: 0, paintWeightedSum: 0 };
    return snap;
  }

  /** Stops the event-loop monitor and frees the histograms. */
  dispose(): void {
    this.loop.disable();
    this.latency.destroy();
    this.batch.destroy();
    this.viewLatency.destroy();
  }
}

/** Most sessions one worker reports per interval (the admin sessions grid shows the busiest). */
export const MAX_SNAPSHOT_SESSIONS = 1000;

/** Busiest first: bytes/s, then frames/s, then the older (lower) session id. */
export function busiest(a: AdminSessionInfo, b: AdminSessionInfo): number {
  return b.bytesPerSec - a.bytesPerSec || b.framesPerSec - a.framesPerSec || a.sessionId - b.sessionId;
}

const round3 = (v: number): number => Math.round(v * 1000) / 1000;
