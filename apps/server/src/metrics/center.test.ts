import type { EngineStats, OrderStage } from '@tidewire/engine';
import { describe, expect, it } from 'vitest';
import { HISTORY_LENGTH, MetricsCenter, type CenterSources } from './center.js';
import { encodeHistogram, newHistogram, recordLatencyMs } from './histogram.js';
import { renderPrometheus } from './prometheus.js';
import type { TransportSnapshot } from './transport-metrics.js';

const ZERO: EngineStats = { publishesIn: 0, publishesApplied: 0, statusChanges: 0, failovers: 0, repliesAhead: 0, directDeliveries: 0, historyBytes: 0, historyEntries: 0,
  historyEvicted: 0, deliveries: 0, framesOut: 0, bytesOut: 0, conflatedUpdates: 0, droppedUpdates: 0, slowConsumerCloses: 0, sessions: 0,
  subscriptions: 0, records: 0, containers: 0, views: 0, viewWindows: 0, publishesRejected: 0, ordersAccepted: 0, ordersRejected: 0, ordersOpen: 0,
  journalDurableSeq: 0, ordersExpired: 0, clusterBatchesSent: 0, clusterRecordsSent: 0, clusterBytesSent: 0, clusterBatchesReceived: 0,
  clusterRecordsReceived: 0, clusterBytesReceived: 0, clusterImageRequestsSent: 0, clusterImageRequestsAnswered: 0, clusterGaps: 0, clusterBatchesDropped: 0,
  clusterPublishesRefused: 0, clusterDecodeErrors: 0, clusterConflicts: 0, clusterPeers: 0, orderLeader: 0, orderLeaseProvisional: 0, orderStreamSeq: 0, orderStreamDivergedAt: 0, ordersForwarded: 0,
  orderPublishFailures: 0, orderBatches: 0, orderBatchEvents: 0, orderBatchBytes: 0, orderBatchesInFlight: 0, orderBatchesLe1: 0, orderBatchesLe2: 0,
  orderBatchesLe4: 0, orderBatchesLe8: 0, orderBatchesLe16: 0, orderBatchesLe32: 0, orderBatchesLe64: 0, orderBatchesLe128: 0, orderBatchesLe256: 0,
  viewsDetached: 0, viewResumes: 0, viewResets: 0, viewsDetachedClosed: 0, viewReplays: 0, viewHistoryBytes: 0, viewHistoryEvicted: 0 };

function fixture(clusterMode = false, fixSessions?: CenterSources['fixSessions']) {
  const state = { now: 1_000_000, stats: { ...ZERO }, cpu: { user: 0, system: 0 }, orderAcksMicros: [] as number[], queue: { frames: 0, bytes: 0 }, heldTicks: 0,
    stages: [] as OrderStage[], nats: { version: '2.12.15', warning: null as string | null } };
  const center = new MetricsCenter({
    clock: { now: () => state.now },
    engineStats: () => ({ ...state.stats }),
    batching: () => ({ burstMinMs: 100, burstMaxMs: 0, burstIncrementMs: 50, throttleMs: 0 }),
    cpuUsage: () => ({ ...state.cpu }),
    rssBytes: () => 123,
    kicks: () => 0,
    otherHeapBytes: () => 0,
    takeOrderAckLatencies: () => state.orderAcksMicros.splice(0),
    ingestQueue: () => ({ ...state.queue }),
    demoHeldTicks: () => state.heldTicks,
    orderStages: () => state.stages,
    natsServer: () => state.nats,
    clusterMode,
    ...(fixSessions === undefined ? {} : { fixSessions }),
  });
  return { state, center };
}

function snapshot(worker: number, latenciesMs: number[], over: Partial<TransportSnapshot> = {}): TransportSnapshot {
  const h = newHistogram(3_600_000_000);
  for (const ms of latenciesMs) recordLatencyMs(h, ms);
  return {
    worker, latency: encodeHistogram(h), batch: '', viewLatency: '', bytesIn: 0, connections: 1, heapUsedBytes: 10,
    loopLagMs: { count: 0, mean: 0, p50: 0, p99: 0, max: 0 }, clientLatency: { samples: 0, weightedMeanSum: 0, p99Max: 0, max: 0, paintSamples: 0, paintWeightedSum: 0 }, sessions: [],
    sessionsWanted: false, sourceFlow: { pauses: 0, overruns: 0, paused: 0, pausedMs: 0 }, ...over,
  };
}

describe('MetricsCenter', () => {
  it('turns counter deltas into per-second rates and CPU µs into % of a core', () => {
    const { state, center } = fixture();
    state.now += 2000;
    state.stats = { ...ZERO, publishesIn: 1000, deliveries: 3000, bytesOut: 8000, framesOut: 40, sessions: 3 };
    state.cpu = { user: 300_000, system: 100_000 }; // 0.4 s of CPU in 2 s: 20 %
    const { sample } = center.build([snapshot(0, [], { bytesIn: 500 }), snapshot(1, [], { bytesIn: 1500, heapUsedBytes: 5 })]);
    expect(sample).toMatchObject({
      intervalMs: 2000, messagesInPerSec: 500, messagesOutPerSec: 1500, bytesOutPerSec: 4000, framesOutPerSec: 20, bytesInPerSec: 1000,
      cpuPercent: 20, rssBytes: 123, heapUsedBytes: 15, connections: 2, sessions: 3,
    });
    expect(sample.totals).toMatchObject({ messagesIn: 1000, bytesIn: 2000 });
  });

  it('merges the workers\' latency histograms', () => {
    const { state, center } = fixture();
    state.now += 1000;
    const { sample, cumulative } = center.build([snapshot(0, [1, 1, 1]), snapshot(1, [100])]);
    expect(sample.latencyMs.count).toBe(4);
    expect(sample.latencyMs.p50).toBeCloseTo(1, 2);
    expect(sample.latencyMs.max).toBeCloseTo(100, 0);
    expect(sample.latencyMs.mean).toBeCloseTo(25.75, 1);
    expect(cumulative.latencyCount).toBe(4);
    expect(cumulative.latencySumMs).toBeCloseTo(103, 0);
  });

  it('summarises the engine\'s order-ack latencies and the workers\' view-row latencies; counts views and orders', () => {
    const { state, center } = fixture();
    state.now += 1000;
    state.orderAcksMicros = [500, 700, 900, 4000];
    state.stats = { ...ZERO, containers: 4, views: 2, viewWindows: 5, ordersAccepted: 4, ordersRejected: 1, ordersOpen: 3 };
    const views = newHistogram(3_600_000_000);
    for (const ms of [2, 2, 8]) recordLatencyMs(views, ms);
    const { sample } = center.build([snapshot(0, [], { viewLatency: encodeHistogram(views) })]);
    expect(sample.orderAckMs.count).toBe(4);
    expect(sample.orderAckMs.mean).toBeCloseTo(1.525, 2);
    expect(sample.orderAckMs.max).toBeCloseTo(4, 1);
    expect(sample.viewUpdateMs.count).toBe(3);
    expect(sample.viewUpdateMs.max).toBeCloseTo(8, 1);
    expect(sample).toMatchObject({ containers: 4, views: 2, viewWindows: 5, ordersOpen: 3 });
    expect(sample.totals).toMatchObject({ ordersAccepted: 4, ordersRejected: 1 });
    state.now += 1000;
    expect(center.build([]).sample.orderAckMs.count).toBe(0); // taken once, not counted again
  });

  it('sums the workers\' source flow counters and reads the ingest queue and the demo feed\'s held ticks', () => {
    const { state, center } = fixture();
    state.now += 1000;
    expect(center.build([snapshot(0, [])]).sample.sourceFlow).toEqual({
      ingestQueueFrames: 0, ingestQueueBytes: 0, sourcesPaused: 0, pausesTotal: 0, pausedMsTotal: 0, overrunClosesTotal: 0, demoHeldTicks: 0,
    });
    state.now += 1000;
    state.queue = { frames: 3, bytes: 70_000 };
    state.heldTicks = 12;
    const { sample } = center.build([
      snapshot(0, [], { sourceFlow: { pauses: 5, overruns: 1, paused: 2, pausedMs: 1500 } }),
      snapshot(1, [], { sourceFlow: { pauses: 2, overruns: 0, paused: 1, pausedMs: 250 } }),
    ]);
    expect(sample.sourceFlow).toEqual({
      ingestQueueFrames: 3, ingestQueueBytes: 70_000, sourcesPaused: 3, pausesTotal: 7, pausedMsTotal: 1750, overrunClosesTotal: 1, demoHeldTicks: 12,
    });
    const text = renderPrometheus(center.last());
    for (const line of ['tidewire_ingest_queue_frames 3', 'tidewire_ingest_queue_bytes 70000', 'tidewire_sources_paused 3', 'tidewire_source_pauses_total 7',
      'tidewire_source_paused_seconds_total 1.75', 'tidewire_source_overrun_closes_total 1', 'tidewire_demo_feed_held_ticks_total 12', '# TYPE tidewire_source_pauses_total counter']) {
      expect(text.split('\n')).toContain(line);
    }
  });

  it('FIX sessions: a failing session store per session on /metrics, the label escaped', () => {
    const session = { beginString: 'FIX.4.4', senderCompId: 'TIDEWIRE', user: 'alice', state: 'loggedOn', nextSenderSeq: 5, nextTargetSeq: 4, messagesIn: 3, messagesOut: 4 };
    const { state, center } = fixture(false, () => [
      { ...session, targetCompId: 'DEMO44', unstoredMessages: 0, storeFailures: 0 },
      { ...session, targetCompId: 'A"B', state: 'disconnected', storeError: 'No space left on device (os error 28)', storeFailedSinceMs: 1_000, unstoredMessages: 2, storeFailures: 3 },
    ]);
    state.now += 1000;
    center.build([]);
    const lines = renderPrometheus(center.last()).split('\n');
    for (const line of ['tidewire_fix_session_store_failed{session="FIX.4.4:TIDEWIRE->DEMO44"} 0', 'tidewire_fix_session_store_failed{session="FIX.4.4:TIDEWIRE->A\\"B"} 1',
      'tidewire_fix_session_unstored_messages{session="FIX.4.4:TIDEWIRE->A\\"B"} 2', 'tidewire_fix_session_store_failures_total{session="FIX.4.4:TIDEWIRE->A\\"B"} 3',
      'tidewire_fix_session_store_failures_total{session="FIX.4.4:TIDEWIRE->DEMO44"} 0', '# TYPE tidewire_fix_session_store_failed gauge', '# TYPE tidewire_fix_session_store_failures_total counter']) {
      expect(lines).toContain(line);
    }
    expect(center.last()?.fix.map((f) => f.storeError)).toEqual([undefined, 'No space left on device (os error 28)']);
  });

  it('in cluster mode: what the node sent to and received from the cluster, on /metrics', () => {
    const { state, center } = fixture(true);
    state.now += 1000;
    state.stats = { ...ZERO, clusterBatchesSent: 4, clusterRecordsSent: 40, clusterBytesSent: 2_000, clusterBatchesReceived: 5, clusterRecordsReceived: 50,
      clusterBytesReceived: 3_000, clusterGaps: 1, clusterPeers: 2, orderLeader: 1, orderLeaseProvisional: 1, orderStreamSeq: 77, orderStreamDivergedAt: 78, ordersForwarded: 6,
      orderPublishFailures: 2 };
    expect(center.build([]).cluster).toMatchObject({ clusterBatchesSent: 4, clusterRecordsReceived: 50, orderStreamSeq: 77 });
    const lines = renderPrometheus(center.last()).split('\n');
    for (const line of ['tidewire_cluster_batches_sent_total 4', 'tidewire_cluster_records_sent_total 40', 'tidewire_cluster_bytes_sent_total 2000',
      'tidewire_cluster_batches_received_total 5', 'tidewire_cluster_records_received_total 50', 'tidewire_cluster_bytes_received_total 3000',
      'tidewire_cluster_gaps_total 1', 'tidewire_cluster_peers 2', 'tidewire_cluster_order_leader 1', 'tidewire_cluster_order_lease_provisional 1', 'tidewire_cluster_order_stream_seq 77',
      'tidewire_cluster_order_stream_diverged_at 78',
      'tidewire_cluster_orders_forwarded_total 6', 'tidewire_cluster_order_publish_failures_total 2', '# TYPE tidewire_cluster_peers gauge']) {
      expect(lines).toContain(line);
    }
  });

  it('in cluster mode: the NATS server\'s version, labelled known_bad for a version Tidewire is known not to run safely on', () => {
    const { state, center } = fixture(true);
    state.now += 1000;
    center.build([]);
    expect(renderPrometheus(center.last()).split('\n')).toContain('tidewire_cluster_nats_server{version="2.12.15",known_bad="0"} 1');
    state.nats = { version: '2.15.2', warning: 'nats-server v2.15.2 ... stops a stream for good ...' };
    state.now += 1000;
    expect(center.build([]).natsServer).toEqual({ version: '2.15.2', knownBad: true });
    expect(renderPrometheus(center.last()).split('\n')).toContain('tidewire_cluster_nats_server{version="2.15.2",known_bad="1"} 1');
    const single = fixture(false);
    single.state.now += 1000;
    expect(single.center.build([]).natsServer).toBeUndefined();
    expect(renderPrometheus(single.center.last())).not.toContain('tidewire_cluster_nats_server');
  });

  it('in cluster mode: group commit\'s events per order stream message as a histogram, bytes and messages in flight', () => {
    const { state, center } = fixture(true);
    state.now += 1000;
    // 10 messages: 4 of 1 event, 3 of 2, 2 of 3-4, 1 of 300 (above the last bound)
    state.stats = { ...ZERO, orderBatches: 10, orderBatchEvents: 4 + 6 + 7 + 300, orderBatchBytes: 52_000, orderBatchesInFlight: 2, orderBatchesLe1: 4,
      orderBatchesLe2: 7, orderBatchesLe4: 9, orderBatchesLe8: 9, orderBatchesLe16: 9, orderBatchesLe32: 9, orderBatchesLe64: 9, orderBatchesLe128: 9, orderBatchesLe256: 9 };
    expect(center.build([]).cluster).toMatchObject({ orderBatches: 10, orderBatchesLe2: 7, orderBatchesInFlight: 2 });
    const lines = renderPrometheus(center.last()).split('\n');
    const at = lines.indexOf('# TYPE tidewire_cluster_order_batch_events histogram');
    expect(at).toBeGreaterThan(0);
    expect(lines.slice(at + 1, at + 13)).toEqual([
      'tidewire_cluster_order_batch_events_bucket{le="1"} 4', 'tidewire_cluster_order_batch_events_bucket{le="2"} 7',
      'tidewire_cluster_order_batch_events_bucket{le="4"} 9', 'tidewire_cluster_order_batch_events_bucket{le="8"} 9',
      'tidewire_cluster_order_batch_events_bucket{le="16"} 9', 'tidewire_cluster_order_batch_events_bucket{le="32"} 9',
      'tidewire_cluster_order_batch_events_bucket{le="64"} 9', 'tidewire_cluster_order_batch_events_bucket{le="128"} 9',
      'tidewire_cluster_order_batch_events_bucket{le="256"} 9', 'tidewire_cluster_order_batch_events_bucket{le="+Inf"} 10',
      'tidewire_cluster_order_batch_events_sum 317', 'tidewire_cluster_order_batch_events_count 10',
    ]);
    for (const line of ['tidewire_cluster_order_batch_bytes_sum 52000', 'tidewire_cluster_order_batch_bytes_count 10', 'tidewire_cluster_order_batches_in_flight 2']) {
      expect(lines).toContain(line);
    }
  });

  it('in cluster mode: the order path\'s stage timing as one histogram labelled by stage, in seconds; none on a single node', () => {
    const { state, center } = fixture(true);
    state.now += 1000;
    state.stages = [
      { stage: 'decide', leUs: [500, 1000], buckets: [2, 3], count: 4, sumUs: 6_000 },
      { stage: 'store', leUs: [500, 1000], buckets: [0, 0], count: 0, sumUs: 0 },
    ];
    center.build([]);
    const lines = renderPrometheus(center.last()).split('\n');
    const at = lines.indexOf('# TYPE tidewire_cluster_order_stage_seconds histogram');
    expect(at).toBeGreaterThan(0);
    expect(lines.slice(at + 1, at + 11)).toEqual([
      'tidewire_cluster_order_stage_seconds_bucket{stage="decide",le="0.0005"} 2', 'tidewire_cluster_order_stage_seconds_bucket{stage="decide",le="0.001"} 3',
      'tidewire_cluster_order_stage_seconds_bucket{stage="decide",le="+Inf"} 4', 'tidewire_cluster_order_stage_seconds_sum{stage="decide"} 0.006',
      'tidewire_cluster_order_stage_seconds_count{stage="decide"} 4',
      'tidewire_cluster_order_stage_seconds_bucket{stage="store",le="0.0005"} 0', 'tidewire_cluster_order_stage_seconds_bucket{stage="store",le="0.001"} 0',
      'tidewire_cluster_order_stage_seconds_bucket{stage="store",le="+Inf"} 0', 'tidewire_cluster_order_stage_seconds_sum{stage="store"} 0',
      'tidewire_cluster_order_stage_seconds_count{stage="store"} 0',
    ]);
    const single = fixture(false);
    single.state.now += 1000;
    single.state.stages = state.stages;
    single.center.build([]);
    expect(renderPrometheus(single.center.last())).not.toContain('tidewire_cluster_order_stage_seconds');
  });

  it('views held for view.resume and what became of resumes, on /metrics', () => {
    const { state, center } = fixture();
    state.now += 1000;
    state.stats = { ...ZERO, viewsDetached: 3, viewResumes: 7, viewResets: 2, viewsDetachedClosed: 1, viewReplays: 4, viewHistoryBytes: 9000, viewHistoryEvicted: 6 };
    expect(center.build([]).viewResume).toEqual({ viewsDetached: 3, viewResumes: 7, viewResets: 2, viewsDetachedClosed: 1, viewReplays: 4, viewHistoryBytes: 9000, viewHistoryEvicted: 6 });
    const lines = renderPrometheus(center.last()).split('\n');
    for (const line of ['tidewire_views_detached 3', 'tidewire_view_resumes_total 7', 'tidewire_view_resets_total 2', 'tidewire_views_detached_closed_total 1',
      'tidewire_view_replays_total 4', 'tidewire_view_history_bytes 9000', '# TYPE tidewire_view_history_bytes gauge', 'tidewire_view_history_evicted_total 6',
      '# TYPE tidewire_views_detached gauge', '# TYPE tidewire_view_resumes_total counter']) {
      expect(lines).toContain(line);
    }
  });

  it('the record history memory, on /metrics', () => {
    const { state, center } = fixture();
    state.now += 1000;
    state.stats = { ...ZERO, historyBytes: 4_096, historyEntries: 32, historyEvicted: 5 };
    expect(center.build([]).history).toEqual({ historyBytes: 4_096, historyEntries: 32, historyEvicted: 5 });
    const lines = renderPrometheus(center.last()).split('\n');
    for (const line of ['tidewire_history_bytes 4096', 'tidewire_history_entries 32', 'tidewire_history_evicted_total 5',
      '# TYPE tidewire_history_bytes gauge', '# TYPE tidewire_history_evicted_total counter']) {
      expect(lines).toContain(line);
    }
  });

  it('on a single node: no cluster families', () => {
    const { state, center } = fixture();
    state.now += 1000;
    expect(center.build([]).cluster).toBeUndefined();
    expect(renderPrometheus(center.last())).not.toContain('tidewire_cluster_');
  });

  it('keeps five minutes of samples', () => {
    const { state, center } = fixture();
    for (let i = 0; i < HISTORY_LENGTH + 5; i++) {
      state.now += 1000;
      center.build([]);
    }
    expect(center.samples()).toHaveLength(HISTORY_LENGTH);
    expect(center.samples().at(-1)).toBe(center.last()!.sample);
  });
});

describe('renderPrometheus', () => {
  it('before the first interval: every family declared, no values', () => {
    const text = renderPrometheus(undefined);
    expect(text).toContain('# TYPE tidewire_messages_in_total counter');
    expect(text.split('\n').filter((l) => l !== '' && !l.startsWith('#'))).toEqual([]);
  });
});
