//! What group commit makes of the order flow (`batch.rs`), counted for `/metrics`: the order
//! stream messages the leader published, the events and bytes in them, how many events each held
//! (a histogram) and how many are on their way (published, not yet stored or refused). A quiet
//! desk shows one event per message; a busy one more, up to `batch::MAX_EVENTS`.

use std::sync::atomic::{AtomicU64, Ordering};

/// Upper bounds (events per message) of the histogram's buckets; a message of more events is
/// counted in the last, open bucket only (`+Inf`, at most `batch::MAX_EVENTS`).
pub const EVENT_BUCKETS: [u64; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/// The counters, shared between the publisher task (writes) and `Engine::stats` (reads).
#[derive(Debug, Default)]
pub struct BatchMeter {
    /// Messages per bucket, not cumulative; index `EVENT_BUCKETS.len()` is the open bucket.
    per_bucket: [AtomicU64; EVENT_BUCKETS.len() + 1],
    events: AtomicU64,
    bytes: AtomicU64,
    in_flight: AtomicU64,
}

/// A reading of the meter.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct BatchCounts {
    /// Messages published on the order stream (first sends; a resend of one is not counted).
    pub messages: u64,
    /// Order events in them.
    pub events: u64,
    /// Bytes of their bodies (the framed events, `batch.rs`; NATS headers not counted).
    pub bytes: u64,
    /// Messages published and not yet stored or refused, now.
    pub in_flight: u64,
    /// Cumulative: `le[i]` = messages of at most `EVENT_BUCKETS[i]` events.
    pub le: [u64; EVENT_BUCKETS.len()],
}

/// The bucket of a message of `events` events.
fn bucket_of(events: u64) -> usize {
    EVENT_BUCKETS
        .iter()
        .position(|&b| events <= b)
        .unwrap_or(EVENT_BUCKETS.len())
}

impl BatchMeter {
    /// A message of `events` events and `bytes` body bytes was published.
    pub fn published(&self, events: usize, bytes: usize) {
        let r = Ordering::Relaxed;
        self.per_bucket[bucket_of(events as u64)].fetch_add(1, r);
        self.events.fetch_add(events as u64, r);
        self.bytes.fetch_add(bytes as u64, r);
        self.in_flight.fetch_add(1, r);
    }

    /// A published message was stored or refused (its events' completions ran).
    pub fn settled(&self) {
        // never below 0, even if a settle were counted without its publish
        let _ = self
            .in_flight
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
    }

    /// The counters now. `messages` is the sum of the buckets, so the histogram's `+Inf` bucket
    /// and its count always agree; `events` and `bytes` may run a message ahead of it.
    pub fn counts(&self) -> BatchCounts {
        let r = Ordering::Relaxed;
        let mut le = [0u64; EVENT_BUCKETS.len()];
        let mut running = 0u64;
        for (i, slot) in le.iter_mut().enumerate() {
            running += self.per_bucket[i].load(r);
            *slot = running;
        }
        BatchCounts {
            messages: running + self.per_bucket[EVENT_BUCKETS.len()].load(r),
            events: self.events.load(r),
            bytes: self.bytes.load(r),
            in_flight: self.in_flight.load(r),
            le,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_cumulative_and_the_open_one_is_only_in_the_count() {
        let m = BatchMeter::default();
        for (events, bytes) in [(1, 100), (1, 90), (2, 180), (3, 250), (200, 20_000), (512, 50_000)] {
            m.published(events, bytes);
        }
        let c = m.counts();
        assert_eq!(c.messages, 6);
        assert_eq!(c.events, 1 + 1 + 2 + 3 + 200 + 512);
        assert_eq!(c.bytes, 100 + 90 + 180 + 250 + 20_000 + 50_000);
        // le 1, 2, 4, 8, 16, 32, 64, 128, 256
        assert_eq!(c.le, [2, 3, 4, 4, 4, 4, 4, 4, 5]);
        assert!(c.le.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn in_flight_counts_published_messages_until_they_settle() {
        let m = BatchMeter::default();
        m.published(4, 400);
        m.published(1, 100);
        assert_eq!(m.counts().in_flight, 2);
        m.settled();
        assert_eq!(m.counts().in_flight, 1);
        m.settled();
        m.settled();
        assert_eq!(m.counts().in_flight, 0);
        assert_eq!(m.counts().messages, 2);
    }

    #[test]
    fn bucket_bounds_are_inclusive() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(1), 0);
        assert_eq!(bucket_of(2), 1);
        assert_eq!(bucket_of(3), 2);
        assert_eq!(bucket_of(256), 8);
        assert_eq!(bucket_of(257), EVENT_BUCKETS.len());
    }
}
