//! What the order clients measure between two `take` commands (the counters of the TS orders
//! runner, packages/loadgen/src/presets/orders.ts): create -> ack from each order's schedule (open loop),
//! send -> ack from its actual send, send lateness, acks, rejects, acks out of order per client;
//! and, over the whole run, the `orderId`s acked (an `IdSet`: gaps between them are orders never
//! answered, or another trader submitting).

use crate::stats::{new_histogram, MAX_LATENCY_MICROS};
use hdrhistogram::Histogram;
use std::collections::HashMap;

/// Counters and histograms of one interval (measured orders only, as the TS runner counts).
#[derive(Debug, Clone)]
pub struct OrderStats {
    /// Scheduled creation -> `order.ack` received, µs.
    pub create_to_ack: Histogram<u64>,
    /// Actual send -> `order.ack` received, µs.
    pub sent_to_ack: Histogram<u64>,
    pub submitted: u64,
    pub acked: u64,
    /// Answered with `order.reject` or `error`; the last one's text.
    pub rejected: u64,
    pub last_reject: Option<String>,
    /// Answers whose reqId was below one already answered on the same client.
    pub out_of_order: u64,
    /// Sum and max of (send - schedule), ms.
    pub send_lateness_sum_ms: f64,
    pub max_send_lateness_ms: f64,
}

impl Default for OrderStats {
    fn default() -> Self {
        OrderStats {
            create_to_ack: new_histogram(),
            sent_to_ack: new_histogram(),
            submitted: 0,
            acked: 0,
            rejected: 0,
            last_reject: None,
            out_of_order: 0,
            send_lateness_sum_ms: 0.0,
            max_send_lateness_ms: 0.0,
        }
    }
}

fn record(h: &mut Histogram<u64>, ms: f64) {
    let v = if ms <= 0.0 {
        0
    } else {
        ((ms * 1000.0).round() as u64).min(MAX_LATENCY_MICROS)
    };
    h.saturating_record(v);
}

fn add(into: &mut Histogram<u64>, from: &Histogram<u64>) {
    // same bounds on both sides, so `add` cannot fail; saturate rather than panic regardless
    if into.add(from).is_err() {
        for v in from.iter_recorded() {
            into.saturating_record_n(v.value_iterated_to(), v.count_at_value());
        }
    }
}

impl OrderStats {
    /// A measured order left `lateness_ms` after its schedule.
    pub fn on_sent(&mut self, lateness_ms: f64) {
        self.submitted += 1;
        self.send_lateness_sum_ms += lateness_ms;
        self.max_send_lateness_ms = self.max_send_lateness_ms.max(lateness_ms);
    }

    /// A measured order was acked at `recv_ms`.
    pub fn on_ack(&mut self, recv_ms: f64, scheduled_ms: f64, sent_ms: f64) {
        self.acked += 1;
        record(&mut self.create_to_ack, recv_ms - scheduled_ms);
        record(&mut self.sent_to_ack, recv_ms - sent_ms);
    }

    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &OrderStats) {
        add(&mut self.create_to_ack, &other.create_to_ack);
        add(&mut self.sent_to_ack, &other.sent_to_ack);
        self.submitted += other.submitted;
        self.acked += other.acked;
        self.rejected += other.rejected;
        if other.last_reject.is_some() {
            self.last_reject.clone_from(&other.last_reject);
        }
        self.out_of_order += other.out_of_order;
        self.send_lateness_sum_ms += other.send_lateness_sum_ms;
        self.max_send_lateness_ms = self.max_send_lateness_ms.max(other.max_send_lateness_ms);
    }
}

/// Ids per chunk of an `IdSet` (65,536 ids in 8 KiB; the TS `IdSet` has the same shape).
const CHUNK_IDS: u64 = 1 << 16;

/// A set of ids (the `orderId`s acked in a run) with the count missing between its smallest and
/// largest: a sparse bitmap in 8 KiB chunks (adding allocates only a new chunk every 65,536 ids).
#[derive(Debug, Default)]
pub struct IdSet {
    chunks: HashMap<u64, Box<[u64; (CHUNK_IDS / 64) as usize]>>,
    distinct: u64,
    min: u64,
    max: u64,
}

impl IdSet {
    /// Adds `id`; a repeat is counted once.
    pub fn add(&mut self, id: u64) {
        let chunk = self
            .chunks
            .entry(id / CHUNK_IDS)
            .or_insert_with(|| Box::new([0u64; (CHUNK_IDS / 64) as usize]));
        let bit = id % CHUNK_IDS;
        let (word, mask) = ((bit / 64) as usize, 1u64 << (bit % 64));
        if chunk[word] & mask != 0 {
            return;
        }
        chunk[word] |= mask;
        if self.distinct == 0 {
            (self.min, self.max) = (id, id);
        } else {
            self.min = self.min.min(id);
            self.max = self.max.max(id);
        }
        self.distinct += 1;
    }

    /// Ids in the set.
    pub fn len(&self) -> u64 {
        self.distinct
    }

    /// How many integers between the smallest and the largest id are missing.
    pub fn gaps(&self) -> u64 {
        if self.distinct == 0 {
            0
        } else {
            self.max - self.min + 1 - self.distinct
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_gaps_across_chunks_once_per_id() {
        let mut s = IdSet::default();
        assert_eq!(s.gaps(), 0);
        for id in [70_000u64, 3, 65_535, 65_536, 3, 131_072, 4, 65_537] {
            s.add(id);
        }
        assert_eq!(s.len(), 7);
        assert_eq!(s.gaps(), 131_072 - 3 + 1 - 7); // as orders.test.ts for the TS IdSet
        let mut full = IdSet::default();
        for id in (1..=200_000u64).rev() {
            full.add(id);
        }
        assert_eq!((full.len(), full.gaps()), (200_000, 0));
        full.add(200_002);
        assert_eq!(full.gaps(), 1);
    }

    #[test]
    fn records_lateness_and_latency_and_merges() {
        let mut a = OrderStats::default();
        a.on_sent(0.2);
        a.on_sent(0.6);
        a.on_ack(10.0, 8.0, 8.5);
        let mut b = OrderStats::default();
        b.on_sent(1.0);
        b.on_ack(5.0, 5.5, 5.5); // an ack before its schedule cannot happen; recorded as 0
        b.rejected = 1;
        b.last_reject = Some("quantity/aboveLimit: x".into());
        a.merge(&b);
        assert_eq!((a.submitted, a.acked, a.rejected), (3, 2, 1));
        assert!((a.send_lateness_sum_ms - 1.8).abs() < 1e-9);
        assert_eq!(a.max_send_lateness_ms, 1.0);
        assert_eq!(a.create_to_ack.max(), a.create_to_ack.highest_equivalent(2000));
        assert_eq!(a.sent_to_ack.max(), a.sent_to_ack.highest_equivalent(1500));
        assert_eq!(a.create_to_ack.min(), 0);
        assert_eq!(a.last_reject.as_deref(), Some("quantity/aboveLimit: x"));
    }
}
