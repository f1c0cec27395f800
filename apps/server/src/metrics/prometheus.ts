/**
 * `GET /metrics`: the latest metrics interval in the Prometheus text exposition format (0.0.4).
 * Counters are totals since start; gauges are read at the end of the last interval; the latency
 * and batch-size summaries give quantiles over the last interval and `_count`/`_sum` since start.
 */

import type { LatencyStatsMs } from '@tidewire/protocol';
import type { MetricsUpdate } from './center.js';

/** Content-Type of the exposition. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Formats a number the way Prometheus reads it (integers without exponent, NaN/Inf spelled out). */
function num(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

/** A label value with backslashes, double quotes and newlines escaped. */
function label(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** Renders `update` (undefined before the first interval: only the metric families, no samples). */
export function renderPrometheus(update: MetricsUpdate | undefined): string {
  const out: string[] = [];
  const family = (name: string, type: 'counter' | 'gauge' | 'summary' | 'histogram', help: string, lines: Array<[string, number]>): void => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [suffix, v] of lines) out.push(`${name}${suffix} ${num(v)}`);
  };
  const s = update?.sample;
  const c = update?.cumulative;
  const one = (v: number | undefined): Array<[string, number]> => (v === undefined ? [] : [['', v]]);
  const summary = (stats: LatencyStatsMs | undefined, scale: number, count: number | undefined, sum: number | undefined): Array<[string, number]> =>
    stats === undefined || count === undefined || sum === undefined ? [] : [
      ['{quantile="0.5"}', stats.p50 * scale], ['{quantile="0.99"}', stats.p99 * scale], ['{quantile="1"}', stats.max * scale],
      ['_sum', sum * scale], ['_count', count],
    ];
  family('tidewire_messages_in_total', 'counter', 'Publishes accepted from sources.', one(s?.totals.messagesIn));
  family('tidewire_messages_out_total', 'counter', 'Messages queued to client sessions.', one(s?.totals.messagesOut));
  family('tidewire_bytes_in_total', 'counter', 'WebSocket bytes received on all endpoints.', one(s?.totals.bytesIn));
  family('tidewire_bytes_out_total', 'counter', 'Frame bytes flushed to client sessions.', one(s?.totals.bytesOut));
  family('tidewire_frames_out_total', 'counter', 'Frames flushed to client sessions.', one(s?.totals.framesOut));
  family('tidewire_conflated_updates_total', 'counter', 'Record updates merged into throttled deltas instead of sent alone.', one(s?.totals.conflatedUpdates));
  family('tidewire_dropped_updates_total', 'counter', 'Record updates slow consumers never got as deltas (replaced by images when they drained).', one(s?.totals.droppedUpdates));
  family('tidewire_slow_consumer_closes_total', 'counter', 'Sessions closed as slow consumers (4008).', one(s?.totals.slowConsumerCloses));
  family('tidewire_publishes_rejected_total', 'counter', 'Publishes the store refused.', one(s?.totals.publishesRejected));
  family('tidewire_kicks_total', 'counter', 'Sessions closed by an admin (4010).', one(s?.totals.kicks));
  family('tidewire_orders_accepted_total', 'counter', 'Orders accepted (journaled).', one(s?.totals.ordersAccepted));
  family('tidewire_orders_rejected_total', 'counter', 'Order requests rejected.', one(s?.totals.ordersRejected));
  family('tidewire_sessions', 'gauge', 'Logged-in sessions.', one(s?.sessions));
  family('tidewire_connections', 'gauge', 'Open WebSockets (logged in or not).', one(s?.connections));
  family('tidewire_subscriptions', 'gauge', 'Record subscriptions.', one(s?.subscriptions));
  family('tidewire_records', 'gauge', 'Records in the store.', one(s?.records));
  family('tidewire_containers', 'gauge', 'Containers (per-tier copies included).', one(s?.containers));
  family('tidewire_views', 'gauge', 'Materialised views (unique container + filter + sort + tier).', one(s?.views));
  family('tidewire_view_windows', 'gauge', 'Subscribed view windows.', one(s?.viewWindows));
  const vr = update?.viewResume;
  family('tidewire_views_detached', 'gauge', 'Views of dropped sessions held for view.resume (views.resumeGraceMs).', one(vr?.viewsDetached));
  family('tidewire_view_resumes_total', 'counter', 'view.resume requests that continued a held view.', one(vr?.viewResumes));
  family('tidewire_view_resets_total', 'counter', 'view.resume requests answered by a fresh view flagged reset.', one(vr?.viewResets));
  family('tidewire_views_detached_closed_total', 'counter', 'Held views closed unresumed (grace ended, or pushed out by views.resumeMaxPerUser / views.resumeMax).', one(vr?.viewsDetachedClosed));
  family('tidewire_view_replays_total', 'counter', 'view.resume requests that replayed messages lost in flight from the view\'s history.', one(vr?.viewReplays));
  family('tidewire_view_history_bytes', 'gauge', 'Bytes held by the views\' histories of sent messages (views.resumeHistoryBytes per view, views.resumeHistoryTotalBytes in all).', one(vr?.viewHistoryBytes));
  family('tidewire_view_history_evicted_total', 'counter', 'View messages dropped from a view\'s history early, or not kept, to stay under views.resumeHistoryTotalBytes.', one(vr?.viewHistoryEvicted));
  family('tidewire_orders_open', 'gauge', 'Orders open (new, acknowledged, partially filled).', one(s?.ordersOpen));
  family('tidewire_process_cpu_percent', 'gauge', 'Process CPU (user+system) over the last interval, percent of one core.', one(s?.cpuPercent));
  family('tidewire_process_resident_memory_bytes', 'gauge', 'Resident set size.', one(s?.rssBytes));
  family('tidewire_heap_used_bytes', 'gauge', 'V8 heap in use, all threads.', one(s?.heapUsedBytes));
  family('tidewire_event_loop_lag_seconds', 'gauge', 'Event-loop delay of the worst thread over the last interval (p99).', one(s === undefined ? undefined : s.eventLoopLagMs.p99 / 1000));
  family('tidewire_delivery_latency_seconds', 'summary', 'Origin timestamp -> ws.send, per sampled record message (quantiles: last interval).',
    summary(s?.latencyMs, 1 / 1000, c?.latencyCount, c?.latencySumMs));
  family('tidewire_view_update_latency_seconds', 'summary', 'Record update ts -> view.rows with the updated row sent, per sampled row (quantiles: last interval).',
    summary(s?.viewUpdateMs, 1 / 1000, c?.viewUpdateCount, c?.viewUpdateSumMs));
  family('tidewire_order_ack_latency_seconds', 'summary', 'Order accepted -> durable order.ack queued (quantiles: last interval).',
    summary(s?.orderAckMs, 1 / 1000, c?.orderAckCount, c?.orderAckSumMs));
  family('tidewire_batch_size_messages', 'summary', 'Messages per frame sent, 1 frame in N above 20,000 frames/s per worker (quantiles: last interval).',
    summary(s?.batchSize, 1, c?.batchCount, c?.batchMessages));
  family('tidewire_client_latency_seconds', 'gauge', 'Client-reported update latency over the last interval (mean, weighted by samples).',
    one(s === undefined || s.clientLatencyMs.count === 0 ? undefined : s.clientLatencyMs.mean / 1000));
  family('tidewire_client_latency_max_seconds', 'gauge', 'Largest client-reported update latency over the last interval.',
    one(s === undefined || s.clientLatencyMs.count === 0 ? undefined : s.clientLatencyMs.max / 1000));
  family('tidewire_client_paint_latency_seconds', 'gauge', 'Client-reported origin -> paint latency over the last interval (mean, weighted by samples).',
    one(s === undefined || s.clientPaintMeanMs === 0 ? undefined : s.clientPaintMeanMs / 1000));
  const f = s?.sourceFlow;
  family('tidewire_ingest_queue_frames', 'gauge', 'Source frames queued for the engine thread and not applied yet (all sources and workers, demo feed).', one(f?.ingestQueueFrames));
  family('tidewire_ingest_queue_bytes', 'gauge', 'Bytes of the queued source frames (source.pause above limits.sourceHighWaterBytes).', one(f?.ingestQueueBytes));
  family('tidewire_sources_paused', 'gauge', 'Source connections paused by flow control now.', one(f?.sourcesPaused));
  family('tidewire_source_pauses_total', 'counter', 'source.pause messages sent to sources.', one(f?.pausesTotal));
  family('tidewire_source_paused_seconds_total', 'counter', 'Time sources spent paused, summed over sources.', one(f === undefined ? undefined : f.pausedMsTotal / 1000));
  family('tidewire_source_overrun_closes_total', 'counter', 'Sources closed with 4013 SOURCE_OVERRUN (kept sending while paused).', one(f?.overrunClosesTotal));
  family('tidewire_demo_feed_held_ticks_total', 'counter', 'Demo feed ticks held back while the ingest queue was above high water.', one(f?.demoHeldTicks));
  const h = update?.history;
  family('tidewire_history_bytes', 'gauge', 'Bytes of the record messages the history rings hold (record.resume; bounded by history.maxBytes).', one(h?.historyBytes));
  family('tidewire_history_entries', 'gauge', 'Record messages the history rings hold.', one(h?.historyEntries));
  family('tidewire_history_evicted_total', 'counter', 'Record messages dropped from the history rings, oldest first, to stay under history.maxBytes.', one(h?.historyEvicted));
  const fix = update?.fix ?? [];
  const states = ['disconnected', 'connected', 'loggedOn'];
  family('tidewire_fix_sessions', 'gauge', 'Configured FIX sessions by state (loggedOn, connected: logon pending, disconnected).',
    update === undefined ? [] : states.map((st): [string, number] => [`{state="${st}"}`, fix.filter((f) => f.state === st).length]));
  family('tidewire_fix_messages_in_total', 'counter', 'FIX messages received on all sessions (garbled ones excluded).',
    one(update === undefined ? undefined : fix.reduce((n, f) => n + f.messagesIn, 0)));
  family('tidewire_fix_messages_out_total', 'counter', 'FIX messages written on all sessions (resends included).',
    one(update === undefined ? undefined : fix.reduce((n, f) => n + f.messagesOut, 0)));
  const perSession = (v: (f: (typeof fix)[number]) => number): Array<[string, number]> =>
    fix.map((f): [string, number] => [`{session="${label(`${f.beginString}:${f.senderCompId}->${f.targetCompId}`)}"}`, v(f)]);
  family('tidewire_fix_session_store_failed', 'gauge', 'FIX sessions whose store fails now (1; a full disk: answers wait for it, Logons are refused), by session.',
    perSession((f) => (f.storeError === undefined ? 0 : 1)));
  family('tidewire_fix_session_unstored_messages', 'gauge', 'FIX messages waiting for their session store (stored and resent once it takes them), by session.',
    perSession((f) => f.unstoredMessages));
  family('tidewire_fix_session_store_failures_total', 'counter', 'Writes and syncs of the FIX session store that failed, by session.',
    perSession((f) => f.storeFailures));
  // cluster mode only: a single node has no such families (nothing to send or receive)
  const k = update?.cluster;
  if (k !== undefined) {
    family('tidewire_cluster_batches_sent_total', 'counter', 'Record batch messages this node sent to the other nodes (one per engine pass with local changes).', one(k.clusterBatchesSent));
    family('tidewire_cluster_records_sent_total', 'counter', 'Record changes and container ops in the batches sent.', one(k.clusterRecordsSent));
    family('tidewire_cluster_bytes_sent_total', 'counter', 'Bytes of every record message sent on NATS (batches, snapshots, heartbeats, requests).', one(k.clusterBytesSent));
    family('tidewire_cluster_batches_received_total', 'counter', 'Record batch messages received from other nodes.', one(k.clusterBatchesReceived));
    family('tidewire_cluster_records_received_total', 'counter', 'Record changes and container ops in the batches received.', one(k.clusterRecordsReceived));
    family('tidewire_cluster_bytes_received_total', 'counter', 'Bytes of every record message received from other nodes.', one(k.clusterBytesReceived));
    family('tidewire_cluster_image_requests_sent_total', 'counter', 'Snapshot and image requests sent to other nodes (a gap or a late join).', one(k.clusterImageRequestsSent));
    family('tidewire_cluster_image_requests_answered_total', 'counter', 'Snapshot and image requests of other nodes answered.', one(k.clusterImageRequestsAnswered));
    family('tidewire_cluster_gaps_total', 'counter', 'Gaps seen in other nodes\' batches (healed with a snapshot or an image).', one(k.clusterGaps));
    family('tidewire_cluster_batches_dropped_total', 'counter', 'Batches dropped while NATS did not take them (healed once it does).', one(k.clusterBatchesDropped));
    family('tidewire_cluster_publishes_refused_total', 'counter', 'Local publishes refused: the subject is owned by another live node.', one(k.clusterPublishesRefused));
    family('tidewire_cluster_decode_errors_total', 'counter', 'Messages from other nodes that could not be read.', one(k.clusterDecodeErrors));
    family('tidewire_cluster_conflicts_total', 'counter', 'Remote changes to subjects this node owns (two nodes publishing one subject).', one(k.clusterConflicts));
    family('tidewire_cluster_peers', 'gauge', 'Other nodes heard from within the owner timeout.', one(k.clusterPeers));
    family('tidewire_cluster_order_leader', 'gauge', '1 while this node is the order leader (decides orders), else 0.', one(k.orderLeader));
    family('tidewire_cluster_order_lease_provisional', 'gauge', '1 while this node decides orders on a provisional lease (the lease bucket has no NATS leader), else 0.', one(k.orderLeaseProvisional));
    family('tidewire_cluster_order_stream_seq', 'gauge', 'Last order stream seq applied to this node\'s order book and blotters.', one(k.orderStreamSeq));
    family('tidewire_cluster_order_stream_diverged_at', 'gauge', 'The order stream seq at which this node stopped applying the stream (its message follows another history than the one applied here, or, about to lead, the stream holds another message at the seq it applied last), else 0; the node then exits with code 3.', one(k.orderStreamDivergedAt));
    const nats = update?.natsServer;
    family('tidewire_cluster_nats_server', 'gauge', 'The NATS server this node connected to at start, by version; known_bad="1": a version Tidewire is known not to run safely on (docs/operations.md, "NATS"; the node logged cluster.natsVersionBad).',
      nats === undefined ? [] : [[`{version="${label(nats.version)}",known_bad="${nats.knownBad ? 1 : 0}"}`, 1]]);
    family('tidewire_cluster_orders_forwarded_total', 'counter', 'Order requests this node forwarded to the order leader.', one(k.ordersForwarded));
    family('tidewire_cluster_order_publish_failures_total', 'counter', 'Order stream publishes that failed (no quorum, timed out, fenced).', one(k.orderPublishFailures));
    // group commit (engine cluster/batch_meter.rs): what the leader put in each order stream message
    const le: Array<[number, number]> = [[1, k.orderBatchesLe1], [2, k.orderBatchesLe2], [4, k.orderBatchesLe4], [8, k.orderBatchesLe8], [16, k.orderBatchesLe16],
      [32, k.orderBatchesLe32], [64, k.orderBatchesLe64], [128, k.orderBatchesLe128], [256, k.orderBatchesLe256]];
    family('tidewire_cluster_order_batch_events', 'histogram', 'Order events per order stream message this node published as leader (group commit).', [
      ...le.map(([b, n]): [string, number] => [`_bucket{le="${b}"}`, n]), ['_bucket{le="+Inf"}', k.orderBatches],
      ['_sum', k.orderBatchEvents], ['_count', k.orderBatches],
    ]);
    family('tidewire_cluster_order_batch_bytes', 'summary', 'Body bytes (framed events) per order stream message this node published as leader.',
      [['_sum', k.orderBatchBytes], ['_count', k.orderBatches]]);
    family('tidewire_cluster_order_batches_in_flight', 'gauge', 'Order stream messages published and not yet stored on a quorum or refused.', one(k.orderBatchesInFlight));
    // engine cluster/stages.rs: where an order's time goes in this node, one histogram per stage
    const stages = update?.orderStages ?? [];
    family('tidewire_cluster_order_stage_seconds', 'histogram', 'Time of each stage of an order\'s path in this node (leader: decide, queue, store, complete; client node of a forwarded order: forward_send, forward_round_trip, forward_deliver), per event.',
      stages.flatMap((st): Array<[string, number]> => [
        ...st.leUs.map((b, i): [string, number] => [`_bucket{stage="${st.stage}",le="${b / 1e6}"}`, st.buckets[i] ?? 0]),
        [`_bucket{stage="${st.stage}",le="+Inf"}`, st.count], [`_sum{stage="${st.stage}"}`, st.sumUs / 1e6], [`_count{stage="${st.stage}"}`, st.count],
      ]));
  }
  family('tidewire_batching_burst_min_ms', 'gauge', 'batching.burstMinMs in force.', one(s?.batching.burstMinMs));
  family('tidewire_batching_burst_max_ms', 'gauge', 'batching.burstMaxMs in force (0: batching off).', one(s?.batching.burstMaxMs));
  family('tidewire_batching_burst_increment_ms', 'gauge', 'batching.burstIncrementMs in force.', one(s?.batching.burstIncrementMs));
  family('tidewire_batching_throttle_ms', 'gauge', 'batching.throttleMs in force (0: off).', one(s?.batching.throttleMs));
  return out.join('\n') + '\n';
}
