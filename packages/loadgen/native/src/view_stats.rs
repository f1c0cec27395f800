//! What the simulated view users measure between two `take` commands: response time
//! (`view.create` sent -> `view.created`), row latency (record publish `ts` -> the row's change
//! received) and the counters of `ViewUsersReport` (packages/loadgen/src/clients/view-users.ts).

use crate::stats::{new_histogram, MAX_LATENCY_MICROS};
use hdrhistogram::Histogram;

/// Counters and histograms of one interval.
#[derive(Debug, Clone)]
pub struct ViewStats {
    /// `view.create` -> `view.created`, µs.
    pub response: Histogram<u64>,
    /// Row publish -> receipt (entered and updated rows), µs.
    pub rows: Histogram<u64>,
    pub created: u64,
    /// `view.create` answered with an error, and the last error text.
    pub create_errors: u64,
    pub last_error: Option<String>,
    /// `view.create` unanswered within the response timeout.
    pub timeouts: u64,
    pub entered: u64,
    pub left: u64,
    pub updated: u64,
    /// Row updates whose seq jumped by more than one without `conflated` (sum of the gaps).
    pub lost: u64,
    /// Row updates whose seq was not above the row's previous one.
    pub out_of_order: u64,
    /// Rows stamped after their receipt (clock trouble); recorded as 0.
    pub negative_latency: u64,
    pub frames: u64,
    pub bytes: u64,
}

impl Default for ViewStats {
    fn default() -> Self {
        ViewStats {
            response: new_histogram(),
            rows: new_histogram(),
            created: 0,
            create_errors: 0,
            last_error: None,
            timeouts: 0,
            entered: 0,
            left: 0,
            updated: 0,
            lost: 0,
            out_of_order: 0,
            negative_latency: 0,
            frames: 0,
            bytes: 0,
        }
    }
}

fn record(h: &mut Histogram<u64>, ms: f64) -> bool {
    let micros = ms * 1000.0;
    let negative = micros < 0.0;
    let v = if negative {
        0
    } else {
        (micros.round() as u64).min(MAX_LATENCY_MICROS)
    };
    h.saturating_record(v);
    negative
}

fn add(into: &mut Histogram<u64>, from: &Histogram<u64>) {
    // same bounds on both sides, so `add` cannot fail; saturate rather than panic regardless
    if into.add(from).is_err() {
        for v in from.iter_recorded() {
            into.saturating_record_n(v.value_iterated_to(), v.count_at_value());
        }
    }
}

impl ViewStats {
    /// Records a response time, ms.
    pub fn record_response(&mut self, ms: f64) {
        record(&mut self.response, ms);
    }

    /// Records a row's latency: `recv_ms - ts_ms` (both epoch ms).
    pub fn record_row(&mut self, recv_ms: f64, ts_ms: f64) {
        if record(&mut self.rows, recv_ms - ts_ms) {
            self.negative_latency += 1;
        }
    }

    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &ViewStats) {
        add(&mut self.response, &other.response);
        add(&mut self.rows, &other.rows);
        self.created += other.created;
        self.create_errors += other.create_errors;
        if other.last_error.is_some() {
            self.last_error.clone_from(&other.last_error);
        }
        self.timeouts += other.timeouts;
        self.entered += other.entered;
        self.left += other.left;
        self.updated += other.updated;
        self.lost += other.lost;
        self.out_of_order += other.out_of_order;
        self.negative_latency += other.negative_latency;
        self.frames += other.frames;
        self.bytes += other.bytes;
    }
}

/// A histogram in the HdrHistogram V2 compressed format, base64 (hdr-histogram-js reads it).
pub fn histogram_base64(h: &Histogram<u64>) -> String {
    use base64::Engine as _;
    use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
    let mut buf = Vec::new();
    if V2DeflateSerializer::new().serialize(h, &mut buf).is_err() {
        return String::new();
    }
    base64::engine::general_purpose::STANDARD.encode(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_counters_histograms_and_the_last_error() {
        let mut a = ViewStats::default();
        let mut b = ViewStats::default();
        a.record_response(2.5);
        b.record_row(1005.0, 1000.0);
        b.record_row(999.0, 1000.0);
        b.updated = 2;
        b.last_error = Some("BAD_FILTER: x".into());
        a.merge(&b);
        assert_eq!((a.response.len(), a.rows.len(), a.updated, a.negative_latency), (1, 2, 2, 1));
        assert_eq!(a.last_error.as_deref(), Some("BAD_FILTER: x"));
        assert!(a.rows.max() >= 4990 && a.rows.max() <= 5010);
        assert!(!histogram_base64(&a.rows).is_empty());
    }
}
