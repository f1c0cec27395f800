//! Engine counters: `EngineStats`, and the atomics the engine thread publishes them through.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::hub::HubStats;

/// Engine counters, readable from any thread (updated by the engine thread once per pass).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct EngineStats {
    /// Publishes accepted by `ingest`.
    pub publishes_in: u64,
    /// Publishes the store refused (field limit).
    pub publishes_rejected: u64,
    /// Messages appended to outboxes.
    pub deliveries: u64,
    /// Frames flushed to workers.
    pub frames_out: u64,
    /// Bytes of those frames.
    pub bytes_out: u64,
    /// Record updates merged into throttled deltas instead of sent alone.
    pub conflated_updates: u64,
    /// Record updates slow consumers never got as deltas (replaced by an image when they drain).
    pub dropped_updates: u64,
    /// Sessions closed with 4008.
    pub slow_consumer_closes: u64,
    /// Open sessions.
    pub sessions: u64,
    /// Current record subscriptions.
    pub subscriptions: u64,
    /// Published records.
    pub records: u64,
    /// Containers (published to or viewed; per-tier copies included).
    pub containers: u64,
    /// Materialised views (unique requests), in grace included.
    pub views: u64,
    /// Open view windows (view subscribers).
    pub view_windows: u64,
    /// Orders accepted since start (0 when orders are disabled).
    pub orders_accepted: u64,
    /// Order requests rejected since start.
    pub orders_rejected: u64,
    /// Orders open now (recovered ones included).
    pub orders_open: u64,
    /// Last durable journal seq (0 = none / orders disabled).
    pub journal_durable_seq: u64,
    /// DAY orders expired at an end of day since start.
    pub orders_expired: u64,
    /// Cluster mode: what this node sent to and received from the other nodes (all zero on a
    /// single node).
    pub cluster_records: crate::cluster::records::RecordsCounters,
    /// Cluster mode: 1 while this node is the order leader (decides), else 0.
    pub order_leader: u64,
    /// Cluster mode: last order stream seq applied to this node's order book.
    pub order_stream_seq: u64,
    /// Cluster mode: order requests forwarded to the leader since start.
    pub orders_forwarded: u64,
    /// Cluster mode: order stream publishes that failed since start (timed out, fenced, no quorum).
    pub order_publish_failures: u64,
}

#[derive(Default)]
pub(super) struct AtomicStats {
    pub(super) publishes_in: AtomicU64,
    publishes_rejected: AtomicU64,
    deliveries: AtomicU64,
    frames_out: AtomicU64,
    bytes_out: AtomicU64,
    conflated_updates: AtomicU64,
    dropped_updates: AtomicU64,
    slow_consumer_closes: AtomicU64,
    sessions: AtomicU64,
    subscriptions: AtomicU64,
    records: AtomicU64,
    containers: AtomicU64,
    views: AtomicU64,
    view_windows: AtomicU64,
}

impl AtomicStats {
    pub(super) fn publish(&self, h: &HubStats) {
        let r = Ordering::Relaxed;
        self.publishes_rejected.store(h.publishes_rejected, r);
        self.deliveries.store(h.deliveries, r);
        self.frames_out.store(h.frames_out, r);
        self.bytes_out.store(h.bytes_out, r);
        self.conflated_updates.store(h.conflated_updates, r);
        self.dropped_updates.store(h.dropped_updates, r);
        self.slow_consumer_closes.store(h.slow_consumer_closes, r);
        self.sessions.store(h.sessions, r);
        self.subscriptions.store(h.subscriptions, r);
        self.records.store(h.records, r);
        self.containers.store(h.containers, r);
        self.views.store(h.views, r);
        self.view_windows.store(h.view_windows, r);
    }

    pub(super) fn snapshot(&self) -> EngineStats {
        let r = Ordering::Relaxed;
        EngineStats {
            publishes_in: self.publishes_in.load(r),
            publishes_rejected: self.publishes_rejected.load(r),
            deliveries: self.deliveries.load(r),
            frames_out: self.frames_out.load(r),
            bytes_out: self.bytes_out.load(r),
            conflated_updates: self.conflated_updates.load(r),
            dropped_updates: self.dropped_updates.load(r),
            slow_consumer_closes: self.slow_consumer_closes.load(r),
            sessions: self.sessions.load(r),
            subscriptions: self.subscriptions.load(r),
            records: self.records.load(r),
            containers: self.containers.load(r),
            views: self.views.load(r),
            view_windows: self.view_windows.load(r),
            ..EngineStats::default()
        }
    }
}
