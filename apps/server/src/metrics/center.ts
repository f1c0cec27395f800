/**
 * The server-wide metrics of the main thread: once per interval it collects every transport's
 * snapshot, reads the engine's counters and the process's CPU and memory, and builds one
 * AdminMetricsSample (rates from counter deltas), kept in a 5-minute history and handed to
 * listeners (the transports: admin API, admin stream, /metrics).
 */

import type { AdminFixSessionInfo, AdminMetricsSample, AdminSessionInfo, BatchingSettings, LatencyStatsMs, SourceFlowSample } from '@tidewire/protocol';
import type { EngineStats, OrderStage } from '@tidewire/engine';
import type { Clock } from '../session/clock.js';
import { meanOf, mergeEncoded, MAX_BATCH_MESSAGES, MAX_LATENCY_MICROS, newHistogram, summarize } from './histogram.js';
import { busiest, MAX_SNAPSHOT_SESSIONS, type TransportSnapshot } from './transport-metrics.js';

/** One FIX session at the end of an interval (the admin console's FIX table, /metrics). */
export type FixSessionMetrics = AdminFixSessionInfo;
/** Metrics interval, ms: one sample (and one `admin.metrics` push) per interval. */
export const METRICS_INTERVAL_MS = 1000;
/** Samples kept: 5 minutes at one per second. */
export const HISTORY_LENGTH = 300;

/** What a sample is built from besides the transports (injectable for tests). */
export interface CenterSources {
  clock: Clock;
  engineStats(): EngineStats;
  /** Batching settings in force. */
  batching(): BatchingSettings;
  /** Cumulative process CPU, µs (process.cpuUsage). */
  cpuUsage(): { user: number; system: number };
  /** Process RSS, bytes. */
  rssBytes(): number;
  /** Sessions kicked by admins since start (all workers). */
  kicks(): number;
  /** V8 heap in use of threads that send no snapshot (the main thread when transports run in workers), bytes. */
  otherHeapBytes(): number;
  /** Order accept -> durable ack latencies, µs, since the last call (engine `takeOrderAckLatencies`). */
  takeOrderAckLatencies(): ArrayLike<number>;
  /** The engine's ingest queue now (`engine.ingestQueue()`); absent: reported as 0 frames, 0 bytes. */
  ingestQueue?(): { frames: number; bytes: number };
  /** Demo feed ticks held back while the ingest queue was backlogged, since start (DemoFeedStats.heldTicks); absent: 0. */
  demoHeldTicks?(): number;
  /** The FIX gateway's sessions now (counters since start); absent or empty: no FIX gateway. */
  fixSessions?(): ReadonlyArray<Omit<FixSessionMetrics, 'messagesInPerSec' | 'messagesOutPerSec'>>;
  /** Cluster mode: where an order's time goes in this node, per stage (engine `orderStages`); absent: none reported. */
  orderStages?(): ReadonlyArray<OrderStage>;
  /** Cluster mode: the NATS server's version and, for a known-bad one, the warning (engine `clusterNatsServer`); absent: none reported. */
  natsServer?(): { version: string; warning?: string | null } | null;
  /** Whether the engine runs in cluster mode (`cluster.urls` set): updates then carry `cluster`. @default false */
  clusterMode?: boolean;
}

/** The engine's cluster counters (EngineStats), read at the end of an interval. */
export type ClusterMetrics = Pick<EngineStats,
  | 'clusterBatchesSent' | 'clusterRecordsSent' | 'clusterBytesSent' | 'clusterBatchesReceived' | 'clusterRecordsReceived' | 'clusterBytesReceived'
  | 'clusterImageRequestsSent' | 'clusterImageRequestsAnswered' | 'clusterGaps' | 'clusterBatchesDropped' | 'clusterPublishesRefused'
  | 'clusterDecodeErrors' | 'clusterConflicts' | 'clusterPeers' | 'orderLeader' | 'orderLeaseProvisional' | 'orderStreamSeq' | 'orderStreamDivergedAt' | 'ordersForwarded' | 'orderPublishFailures'
  | 'orderBatches' | 'orderBatchEvents' | 'orderBatchBytes' | 'orderBatchesInFlight' | 'orderBatchesLe1' | 'orderBatchesLe2' | 'orderBatchesLe4'
  | 'orderBatchesLe8' | 'orderBatchesLe16' | 'orderBatchesLe32' | 'orderBatchesLe64' | 'orderBatchesLe128' | 'orderBatchesLe256'>;

/** The cluster counters of `stats`. */
export function clusterMetricsOf(s: EngineStats): ClusterMetrics {
  return {
    clusterBatchesSent: s.clusterBatchesSent, clusterRecordsSent: s.clusterRecordsSent, clusterBytesSent: s.clusterBytesSent,
    clusterBatchesReceived: s.clusterBatchesReceived, clusterRecordsReceived: s.clusterRecordsReceived, clusterBytesReceived: s.clusterBytesReceived,
    clusterImageRequestsSent: s.clusterImageRequestsSent, clusterImageRequestsAnswered: s.clusterImageRequestsAnswered, clusterGaps: s.clusterGaps,
    clusterBatchesDropped: s.clusterBatchesDropped, clusterPublishesRefused: s.clusterPublishesRefused, clusterDecodeErrors: s.clusterDecodeErrors,
    clusterConflicts: s.clusterConflicts, clusterPeers: s.clusterPeers, orderLeader: s.orderLeader, orderLeaseProvisional: s.orderLeaseProvisional, orderStreamSeq: s.orderStreamSeq,
    orderStreamDivergedAt: s.orderStreamDivergedAt, ordersForwarded: s.ordersForwarded, orderPublishFailures: s.orderPublishFailures,
    orderBatches: s.orderBatches, orderBatchEvents: s.orderBatchEvents, orderBatchBytes: s.orderBatchBytes, orderBatchesInFlight: s.orderBatchesInFlight,
    orderBatchesLe1: s.orderBatchesLe1, orderBatchesLe2: s.orderBatchesLe2, orderBatchesLe4: s.orderBatchesLe4, orderBatchesLe8: s.orderBatchesLe8,
    orderBatchesLe16: s.orderBatchesLe16, orderBatchesLe32: s.orderBatchesLe32, orderBatchesLe64: s.orderBatchesLe64, orderBatchesLe128: s.orderBatchesLe128,
    orderBatchesLe256: s.orderBatchesLe256,
  };
}

function natsServerOf(n: { version: string; warning?: string | null } | null | undefined): { natsServer?: { version: string; knownBad: boolean } } {
  return n === null || n === undefined ? {} : { natsServer: { version: n.version, knownBad: Boolean(n.warning) } };
}

/** The engine's record history memory (EngineStats), read at the end of an interval. */
export type HistoryMetrics = Pick<EngineStats, 'historyBytes' | 'historyEntries' | 'historyEvicted'>;

/** A finished interval: the sample and the sessions list at its end. */
export interface MetricsUpdate {
  sample: AdminMetricsSample;
  /**
   * The sessions at the end of the interval (at most MAX_SNAPSHOT_SESSIONS, by session id);
   * undefined when nothing read the list, so the transports were not asked for it this interval.
   */
  sessions?: AdminSessionInfo[];
  /** The FIX sessions (empty without a FIX gateway). */
  fix: FixSessionMetrics[];
  /** Since start: latency and batch-size observations (for Prometheus summaries' _count and _sum). */
  cumulative: CumulativeObservations;
  /** Cluster mode only: what this node sent to and received from the other nodes. */
  cluster?: ClusterMetrics;
  /** Cluster mode: the order path's stage histograms (cumulative since start). */
  orderStages?: ReadonlyArray<OrderStage>;
  /** Cluster mode: the NATS server's version at connect and whether Tidewire is known not to run safely on it. */
  natsServer?: { version: string; knownBad: boolean };
  /** Views held for `view.resume` (gauge) and what became of resumes (totals since start). */
  viewResume?: ViewResumeMetrics;
  /** Record history (`record.resume`): what its rings hold now and what the byte cap evicted. */
  history: HistoryMetrics;
}

/** The engine's held-view counters (EngineStats), read at the end of an interval. */
export type ViewResumeMetrics = Pick<EngineStats, 'viewsDetached' | 'viewResumes' | 'viewResets' | 'viewsDetachedClosed' | 'viewReplays' | 'viewHistoryBytes' | 'viewHistoryEvicted'>;

/** Counts and sums since start of the sampled observations. */
export interface CumulativeObservations {
  latencyCount: number;
  /** Sum of latencies, ms. */
  latencySumMs: number;
  batchCount: number;
  /** Sum of batch sizes, messages. */
  batchMessages: number;
  viewUpdateCount: number;
  /** Sum of view update latencies, ms. */
  viewUpdateSumMs: number;
  orderAckCount: number;
  /** Sum of order accept -> ack latencies, ms. */
  orderAckSumMs: number;
}

const EMPTY: LatencyStatsMs = { count: 0, mean: 0, p50: 0, p99: 0, max: 0 };

/** Builds samples from transport snapshots + engine + process. Main thread only. */
export class MetricsCenter {
  private readonly history: AdminMetricsSample[] = [];
  private prevStats: EngineStats;
  private prevCpu: { user: number; system: number };
  private prevAt: number;
  private bytesInTotal = 0;
  private latest: MetricsUpdate | undefined;
  private cumulative: CumulativeObservations = {
    latencyCount: 0, latencySumMs: 0, batchCount: 0, batchMessages: 0, viewUpdateCount: 0, viewUpdateSumMs: 0, orderAckCount: 0, orderAckSumMs: 0,
  };

  /** Each FIX session's counters at the end of the last interval (for its rates). */
  private readonly prevFix = new Map<string, { messagesIn: number; messagesOut: number }>();
  constructor(private readonly src: CenterSources) {
    this.prevStats = src.engineStats();
    this.prevCpu = src.cpuUsage();
    this.prevAt = src.clock.now();
  }

  /** Ends the interval with these transport snapshots (one per transport that answered). */
  build(snapshots: readonly TransportSnapshot[]): MetricsUpdate {
    const now = this.src.clock.now();
    const seconds = Math.max(0.001, (now - this.prevAt) / 1000);
    const stats = this.src.engineStats();
    const cpu = this.src.cpuUsage();
    const prev = this.prevStats;
    const latency = newHistogram(MAX_LATENCY_MICROS);
    const batch = newHistogram(MAX_BATCH_MESSAGES);
    const viewLatency = newHistogram(MAX_LATENCY_MICROS);
    const orderAck = newHistogram(MAX_LATENCY_MICROS);
    const acks = this.src.takeOrderAckLatencies();
    for (let i = 0; i < acks.length; i++) orderAck.recordValue(Math.min(MAX_LATENCY_MICROS, Math.max(0, Math.round(acks[i]!))));
    let bytesIn = 0;
    let connections = 0;
    let heapUsedBytes = this.src.otherHeapBytes();
    let loopLagMs = EMPTY;
    const client = { samples: 0, weightedMeanSum: 0, p99Max: 0, max: 0, paintSamples: 0, paintWeightedSum: 0 };
    let sessions: AdminSessionInfo[] | undefined;
    const queue = this.src.ingestQueue?.() ?? { frames: 0, bytes: 0 };
    const sourceFlow: SourceFlowSample = {
      ingestQueueFrames: queue.frames, ingestQueueBytes: queue.bytes, sourcesPaused: 0, pausesTotal: 0, pausedMsTotal: 0, overrunClosesTotal: 0,
      demoHeldTicks: this.src.demoHeldTicks?.() ?? 0,
    };
    for (const s of snapshots) {
      // totals since start per transport: a worker that did not answer this interval is missing from them until it does
      sourceFlow.sourcesPaused += s.sourceFlow.paused;
      sourceFlow.pausesTotal += s.sourceFlow.pauses;
      sourceFlow.pausedMsTotal += s.sourceFlow.pausedMs;
      sourceFlow.overrunClosesTotal += s.sourceFlow.overruns;
      mergeEncoded(latency, s.latency);
      mergeEncoded(batch, s.batch);
      mergeEncoded(viewLatency, s.viewLatency);
      bytesIn += s.bytesIn;
      connections += s.connections;
      heapUsedBytes += s.heapUsedBytes;
      // the worst thread's loop is what delays its sessions
      if (s.loopLagMs.max >= loopLagMs.max) loopLagMs = s.loopLagMs;
      client.samples += s.clientLatency.samples;
      client.weightedMeanSum += s.clientLatency.weightedMeanSum;
      client.p99Max = Math.max(client.p99Max, s.clientLatency.p99Max);
      client.max = Math.max(client.max, s.clientLatency.max);
      client.paintSamples += s.clientLatency.paintSamples;
      client.paintWeightedSum += s.clientLatency.paintWeightedSum;
      if (s.sessions !== undefined) (sessions ??= []).push(...s.sessions);
    }
    // each worker sent its busiest MAX_SNAPSHOT_SESSIONS: keep that many over all workers
    const shown = sessions === undefined || sessions.length <= MAX_SNAPSHOT_SESSIONS ? sessions
      : sessions.sort(busiest).slice(0, MAX_SNAPSHOT_SESSIONS);
    shown?.sort((a, b) => a.sessionId - b.sessionId);
    this.bytesInTotal += bytesIn;
    // each mean walks its histogram: once per histogram per interval
    const latencyMean = meanOf(latency);
    const batchMean = meanOf(batch);
    const viewMean = meanOf(viewLatency);
    const orderAckMean = meanOf(orderAck);
    const rate = (now: number, before: number): number => Math.round(Math.max(0, now - before) / seconds);
    const sample: AdminMetricsSample = {
      // strictly increasing: samples are keyed by `at` (history, ?since=, the console's window)
      at: Math.max(Math.round(now), (this.history.at(-1)?.at ?? 0) + 1),
      intervalMs: Math.round(seconds * 1000),
      latencyMs: summarize(latency, 1000, latencyMean),
      batchSize: summarize(batch, 1, batchMean),
      viewUpdateMs: summarize(viewLatency, 1000, viewMean),
      orderAckMs: summarize(orderAck, 1000, orderAckMean),
      clientLatencyMs: client.samples === 0 ? EMPTY : {
        count: client.samples, mean: Math.round((client.weightedMeanSum / client.samples) * 1000) / 1000, p50: 0, p99: client.p99Max, max: client.max,
      },
      clientPaintMeanMs: client.paintSamples === 0 ? 0 : Math.round((client.paintWeightedSum / client.paintSamples) * 1000) / 1000,
      messagesInPerSec: rate(stats.publishesIn, prev.publishesIn),
      messagesOutPerSec: rate(stats.deliveries, prev.deliveries),
      bytesInPerSec: Math.round(bytesIn / seconds),
      bytesOutPerSec: rate(stats.bytesOut, prev.bytesOut),
      framesOutPerSec: rate(stats.framesOut, prev.framesOut),
      conflatedPerSec: rate(stats.conflatedUpdates, prev.conflatedUpdates),
      droppedPerSec: rate(stats.droppedUpdates, prev.droppedUpdates),
      totals: {
        messagesIn: stats.publishesIn, messagesOut: stats.deliveries, bytesIn: this.bytesInTotal, bytesOut: stats.bytesOut,
        framesOut: stats.framesOut, conflatedUpdates: stats.conflatedUpdates, droppedUpdates: stats.droppedUpdates, slowConsumerCloses: stats.slowConsumerCloses,
        publishesRejected: stats.publishesRejected, kicks: this.src.kicks(),
        ordersAccepted: stats.ordersAccepted, ordersRejected: stats.ordersRejected,
      },
      sessions: stats.sessions,
      connections,
      subscriptions: stats.subscriptions,
      records: stats.records,
      containers: stats.containers,
      views: stats.views,
      viewWindows: stats.viewWindows,
      ordersOpen: stats.ordersOpen,
      cpuPercent: Math.round(((cpu.user - this.prevCpu.user + cpu.system - this.prevCpu.system) / 1000 / (seconds * 1000)) * 1000) / 10,
      rssBytes: this.src.rssBytes(),
      heapUsedBytes,
      eventLoopLagMs: loopLagMs,
      batching: this.src.batching(),
      sourceFlow,
    };
    this.cumulative = {
      latencyCount: this.cumulative.latencyCount + latency.totalCount,
      latencySumMs: this.cumulative.latencySumMs + (latencyMean * latency.totalCount) / 1000,
      batchCount: this.cumulative.batchCount + batch.totalCount,
      batchMessages: this.cumulative.batchMessages + Math.round(batchMean * batch.totalCount),
      viewUpdateCount: this.cumulative.viewUpdateCount + viewLatency.totalCount,
      viewUpdateSumMs: this.cumulative.viewUpdateSumMs + (viewMean * viewLatency.totalCount) / 1000,
      orderAckCount: this.cumulative.orderAckCount + orderAck.totalCount,
      orderAckSumMs: this.cumulative.orderAckSumMs + (orderAckMean * orderAck.totalCount) / 1000,
    };
    latency.destroy();
    batch.destroy();
    viewLatency.destroy();
    orderAck.destroy();
    this.prevStats = stats;
    this.prevCpu = cpu;
    this.prevAt = now;
    this.history.push(sample);
    if (this.history.length > HISTORY_LENGTH) this.history.shift();
    const fix = (this.src.fixSessions?.() ?? []).map((f) => {
      const key = `${f.beginString} ${f.senderCompId} ${f.targetCompId}`;
      const before = this.prevFix.get(key) ?? { messagesIn: f.messagesIn, messagesOut: f.messagesOut };
      this.prevFix.set(key, { messagesIn: f.messagesIn, messagesOut: f.messagesOut });
      return { ...f, messagesInPerSec: rate(f.messagesIn, before.messagesIn), messagesOutPerSec: rate(f.messagesOut, before.messagesOut) };
    });
    const viewResume: ViewResumeMetrics = {
      viewsDetached: stats.viewsDetached, viewResumes: stats.viewResumes, viewResets: stats.viewResets, viewsDetachedClosed: stats.viewsDetachedClosed,
      viewReplays: stats.viewReplays, viewHistoryBytes: stats.viewHistoryBytes, viewHistoryEvicted: stats.viewHistoryEvicted,
    };
    const history = { historyBytes: stats.historyBytes, historyEntries: stats.historyEntries, historyEvicted: stats.historyEvicted };
    this.latest = { sample, ...(shown === undefined ? {} : { sessions: shown }), fix, cumulative: this.cumulative, viewResume, history, ...(this.src.clusterMode ? { cluster: clusterMetricsOf(stats), orderStages: this.src.orderStages?.() ?? [], ...natsServerOf(this.src.natsServer?.()) } : {}) };
    return this.latest;
  }

  /** The last finished interval, or undefined before the first. */
  last(): MetricsUpdate | undefined {
    return this.latest;
  }

  /** Up to HISTORY_LENGTH samples, oldest first. */
  samples(): readonly AdminMetricsSample[] {
    return this.history;
  }
}
