//! What the simulated clients measure: end-to-end latency in an HDR histogram, update counts,
//! and lost / out-of-order updates found by each record's sequence number.

use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use std::collections::HashMap;

/// Highest latency the histogram tracks, µs (one hour); larger values are clamped to it.
pub const MAX_LATENCY_MICROS: u64 = 3_600_000_000;

/// Verdict of `SeqTracker::on_update` for one update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeqVerdict {
    /// The next sequence (or a conflated jump forward).
    InOrder,
    /// `seq` jumped forward by more than one without `conflated`: this many updates were lost.
    Lost(u64),
    /// `seq` was not above the last one seen: a duplicate or a reordering.
    OutOfOrder,
    /// No image was seen for this record yet: the update starts its sequence.
    First,
}

/// Last sequence seen per record id, for one session. Images reset a record's sequence.
#[derive(Debug, Default)]
pub struct SeqTracker {
    last: HashMap<u64, u64>,
}

impl SeqTracker {
    /// Records with a known sequence (an image or an update was seen).
    pub fn len(&self) -> usize {
        self.last.len()
    }

    /// True when no record has been seen.
    #[allow(dead_code)] // pairs with len() (clippy::len_without_is_empty)
    pub fn is_empty(&self) -> bool {
        self.last.is_empty()
    }

    /// The last seq seen of record `id`, if any.
    pub fn last(&self, id: u64) -> Option<u64> {
        self.last.get(&id).copied()
    }

    /// An image carries the record's current `seq`: later updates continue from it.
    pub fn on_image(&mut self, id: u64, seq: u64) {
        self.last.insert(id, seq);
    }

    /// Checks an update's `seq` against the record's last one; `conflated` updates may jump.
    pub fn on_update(&mut self, id: u64, seq: u64, conflated: bool) -> SeqVerdict {
        match self.last.get_mut(&id) {
            None => {
                self.last.insert(id, seq);
                SeqVerdict::First
            }
            Some(last) => {
                if seq <= *last {
                    return SeqVerdict::OutOfOrder;
                }
                let gap = seq - *last - 1;
                *last = seq;
                if gap == 0 || conflated {
                    SeqVerdict::InOrder
                } else {
                    SeqVerdict::Lost(gap)
                }
            }
        }
    }
}

/// Counters and the latency histogram of one interval (between two reports).
#[derive(Debug, Clone)]
pub struct Stats {
    /// End-to-end latency of updates, µs.
    pub latency: Histogram<u64>,
    /// `record.update` messages received.
    pub updates: u64,
    /// `record.image` messages received.
    pub images: u64,
    /// Updates lost (sum of sequence gaps of non-conflated updates).
    pub lost: u64,
    /// Updates whose seq was not above the previous one.
    pub out_of_order: u64,
    /// Updates that arrived conflated.
    pub conflated: u64,
    /// Updates whose origin timestamp was after their receipt (clock trouble); recorded as 0.
    pub negative_latency: u64,
    /// WebSocket frames received.
    pub frames: u64,
    /// Bytes of WebSocket payload received.
    pub bytes: u64,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            latency: new_histogram(),
            updates: 0,
            images: 0,
            lost: 0,
            out_of_order: 0,
            conflated: 0,
            negative_latency: 0,
            frames: 0,
            bytes: 0,
        }
    }
}

/// A histogram for latencies in µs, 1 µs .. 1 hour, 3 significant digits.
pub fn new_histogram() -> Histogram<u64> {
    // Bounds are constants that the crate accepts; failure would be a programming error.
    Histogram::new_with_bounds(1, MAX_LATENCY_MICROS, 3).expect("valid histogram bounds")
}

impl Stats {
    /// Records one update's latency: `recv_ms - ts_ms` (both epoch ms), stored in µs.
    pub fn record_latency(&mut self, recv_ms: f64, ts_ms: f64) {
        let micros = (recv_ms - ts_ms) * 1000.0;
        let v = if micros < 0.0 {
            self.negative_latency += 1;
            0
        } else {
            (micros.round() as u64).min(MAX_LATENCY_MICROS)
        };
        self.latency.saturating_record(v);
    }

    /// Adds `other` into `self` (histograms merge bucket by bucket).
    pub fn merge(&mut self, other: &Stats) {
        // Same bounds on both sides, so `add` cannot fail; saturate rather than panic regardless.
        if self.latency.add(&other.latency).is_err() {
            for v in other.latency.iter_recorded() {
                self.latency.saturating_record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
        self.updates += other.updates;
        self.images += other.images;
        self.lost += other.lost;
        self.out_of_order += other.out_of_order;
        self.conflated += other.conflated;
        self.negative_latency += other.negative_latency;
        self.frames += other.frames;
        self.bytes += other.bytes;
    }

    /// The histogram in the HdrHistogram V2 compressed format, base64 (what hdr-histogram-js
    /// `decodeFromCompressedBase64` reads).
    pub fn histogram_base64(&self) -> String {
        use base64::Engine as _;
        let mut buf = Vec::new();
        if V2DeflateSerializer::new().serialize(&self.latency, &mut buf).is_err() {
            return String::new();
        }
        base64::engine::general_purpose::STANDARD.encode(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_gaps_and_reordering() {
        let mut t = SeqTracker::default();
        assert_eq!(t.on_update(1, 5, false), SeqVerdict::First);
        assert_eq!(t.on_update(1, 6, false), SeqVerdict::InOrder);
        assert_eq!(t.on_update(1, 9, false), SeqVerdict::Lost(2));
        assert_eq!(t.on_update(1, 9, false), SeqVerdict::OutOfOrder);
        assert_eq!(t.on_update(1, 20, true), SeqVerdict::InOrder);
        t.on_image(1, 3);
        assert_eq!(t.on_update(1, 4, false), SeqVerdict::InOrder);
        t.on_image(2, 10);
        assert_eq!(t.on_update(2, 10, false), SeqVerdict::OutOfOrder);
    }

    #[test]
    fn merging_adds_counts_and_buckets() {
        let mut a = Stats::default();
        let mut b = Stats::default();
        a.record_latency(1000.5, 1000.0);
        b.record_latency(1002.0, 1000.0);
        b.record_latency(999.0, 1000.0);
        b.updates = 2;
        a.updates = 1;
        a.merge(&b);
        assert_eq!(a.updates, 3);
        assert_eq!(a.latency.len(), 3);
        assert_eq!(a.negative_latency, 1);
        assert_eq!(a.latency.min(), 0);
        assert!(a.latency.max() >= 1999 && a.latency.max() <= 2001);
        assert!(!a.histogram_base64().is_empty());
    }
}
