//! Where an order's time goes inside a node in cluster mode, per stage (docs/operations.md,
//! `tidewire_cluster_order_stage_seconds`): a histogram of durations per stage, written with
//! relaxed atomics by the threads that see each boundary. The clock is read once per engine pass,
//! stream message or forwarded request, never per stage boundary of every event: the engine
//! thread's pass time stands for "now" on that thread, and a stream message's events share its
//! send and PubAck times.
//!
//! Leader (orders of local sessions and forwarded ones alike): `decide` (the request taken: its
//! command queued for the engine thread, or a forwarded request received by the link thread ->
//! its event handed to the publisher by the engine pass that decided it), `queue` (handed to the
//! publisher -> its stream message handed to the NATS client), `store` (sent -> PubAck: stored on
//! a quorum), `complete` (PubAck -> the message's completions ran: the `order.ack`s handed to
//! the workers or to the reply task). Each is counted once per event. The client node of a
//! forwarded order: `forward_send` (the request taken: its command queued for the engine thread
//! -> the request handed to the NATS client by the link thread), `forward_round_trip` (sent -> the leader's answer received),
//! `forward_deliver` (received -> handed to the session by the engine thread).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The stages, in path order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Request taken -> event handed to the publisher (leader).
    Decide = 0,
    /// Handed to the publisher -> its stream message sent.
    Queue = 1,
    /// Sent -> PubAck.
    Store = 2,
    /// PubAck -> completions ran (acks handed on).
    Complete = 3,
    /// Request taken -> forwarded request sent (client node).
    ForwardSend = 4,
    /// Request sent -> answer received (client node).
    ForwardRoundTrip = 5,
    /// Answer received -> handed to the session (client node).
    ForwardDeliver = 6,
}

/// Every stage, in path order.
pub const STAGES: [Stage; 7] = [
    Stage::Decide,
    Stage::Queue,
    Stage::Store,
    Stage::Complete,
    Stage::ForwardSend,
    Stage::ForwardRoundTrip,
    Stage::ForwardDeliver,
];

impl Stage {
    /// The stage's name (a metric label).
    pub fn name(self) -> &'static str {
        match self {
            Stage::Decide => "decide",
            Stage::Queue => "queue",
            Stage::Store => "store",
            Stage::Complete => "complete",
            Stage::ForwardSend => "forward_send",
            Stage::ForwardRoundTrip => "forward_round_trip",
            Stage::ForwardDeliver => "forward_deliver",
        }
    }
}

/// Upper bounds (µs, inclusive) of the buckets; a longer duration is in the open bucket only.
pub const BOUNDS_US: [u64; 12] = [
    50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000,
];

const BUCKETS: usize = BOUNDS_US.len() + 1;

#[derive(Debug, Default)]
struct Hist {
    /// Per bucket, not cumulative; index `BOUNDS_US.len()` is the open bucket.
    per_bucket: [AtomicU64; BUCKETS],
    sum_us: AtomicU64,
}

/// The histograms of every stage.
#[derive(Debug, Default)]
pub struct StageMeter {
    stages: [Hist; STAGES.len()],
}

/// One stage's histogram as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageCounts {
    /// The stage.
    pub stage: Stage,
    /// Cumulative: `le[i]` = observations of at most `BOUNDS_US[i]` µs.
    pub le: [u64; BOUNDS_US.len()],
    /// Observations.
    pub count: u64,
    /// Their sum, µs.
    pub sum_us: u64,
}

impl StageCounts {
    /// Mean, µs (0 without observations).
    pub fn mean_us(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_us as f64 / self.count as f64
        }
    }
}

fn bucket_of(us: u64) -> usize {
    BOUNDS_US.iter().position(|&b| us <= b).unwrap_or(BOUNDS_US.len())
}

impl StageMeter {
    /// `n` observations of `d` in `stage` (the events of one message share one duration).
    pub fn record_n(&self, stage: Stage, d: Duration, n: u64) {
        if n == 0 {
            return;
        }
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        let h = &self.stages[stage as usize];
        h.per_bucket[bucket_of(us)].fetch_add(n, Ordering::Relaxed);
        h.sum_us.fetch_add(us.saturating_mul(n), Ordering::Relaxed);
    }

    /// One observation of `d` in `stage`.
    pub fn record(&self, stage: Stage, d: Duration) {
        self.record_n(stage, d, 1);
    }

    /// Every stage's histogram now, in path order. `count` is the sum of the buckets, so the
    /// `+Inf` bucket and the count agree; `sum_us` may run an observation ahead.
    pub fn counts(&self) -> Vec<StageCounts> {
        STAGES
            .iter()
            .map(|&stage| {
                let h = &self.stages[stage as usize];
                let mut le = [0u64; BOUNDS_US.len()];
                let mut running = 0u64;
                for (i, slot) in le.iter_mut().enumerate() {
                    running += h.per_bucket[i].load(Ordering::Relaxed);
                    *slot = running;
                }
                StageCounts {
                    stage,
                    le,
                    count: running + h.per_bucket[BOUNDS_US.len()].load(Ordering::Relaxed),
                    sum_us: h.sum_us.load(Ordering::Relaxed),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    #[test]
    fn observations_land_in_their_stage_and_bucket() {
        let m = StageMeter::default();
        m.record(Stage::Store, us(40));
        m.record(Stage::Store, us(50));
        m.record(Stage::Store, us(51));
        m.record_n(Stage::Store, us(3_000), 4);
        m.record(Stage::Store, us(400_000));
        m.record(Stage::Decide, us(700));
        let c = m.counts();
        assert_eq!(c.len(), STAGES.len());
        let store = &c[Stage::Store as usize];
        assert_eq!(store.stage, Stage::Store);
        assert_eq!(store.count, 8);
        assert_eq!(store.sum_us, 40 + 50 + 51 + 4 * 3_000 + 400_000);
        // 50, 100, 250, 500, 1 ms, 2.5 ms, 5 ms, ..., 250 ms; 400 ms only in the count
        assert_eq!(store.le, [2, 3, 3, 3, 3, 3, 7, 7, 7, 7, 7, 7]);
        let decide = &c[Stage::Decide as usize];
        assert_eq!(
            (decide.count, decide.sum_us, decide.le[3], decide.le[4]),
            (1, 700, 0, 1)
        );
        assert!(c.iter().filter(|s| s.count == 0).all(|s| s.mean_us() == 0.0));
        assert!((store.mean_us() - store.sum_us as f64 / 8.0).abs() < 1e-9);
    }

    #[test]
    fn no_observations_for_zero_events() {
        let m = StageMeter::default();
        m.record_n(Stage::Queue, us(10), 0);
        assert!(m.counts().iter().all(|s| s.count == 0 && s.sum_us == 0));
    }

    #[test]
    fn names_are_unique_and_in_path_order() {
        let names: Vec<&str> = STAGES.iter().map(|s| s.name()).collect();
        assert_eq!(
            names,
            [
                "decide",
                "queue",
                "store",
                "complete",
                "forward_send",
                "forward_round_trip",
                "forward_deliver"
            ]
        );
        for (i, s) in STAGES.iter().enumerate() {
            assert_eq!(*s as usize, i);
        }
    }
}
