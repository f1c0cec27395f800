//! Latency samples: the origin timestamp (`ts`, ms since the Unix epoch) of one in every N record
//! messages (`record.update` / `record.image`) and updated view rows queued to a session. They
//! travel with the flushed frame to the worker's drain, so the server measures origin -> socket
//! write without reading the frame. N is the server's (`Hub::set_latency_sampling`), per worker.

/// Kind of a sample: the `ts` of a `record.update` / `record.image`.
pub const SAMPLE_RECORD: u32 = 0;
/// Kind of a sample: the `ts` of a row in the `updated` list of a `view.rows`.
pub const SAMPLE_VIEW_ROW: u32 = 1;

/// One session's sampling counter and the samples of the messages its outbox holds.
#[derive(Debug)]
pub struct Sampler {
    /// Keep one sample in `every` (at least 1).
    every: u32,
    /// Items still to skip before the next sample.
    left: u32,
    /// `ts` of sampled record messages queued (dropped with them by conflation).
    records: Vec<f64>,
    /// `ts` of sampled updated view rows queued (in control messages: they leave with them).
    rows: Vec<f64>,
}

impl Default for Sampler {
    fn default() -> Self {
        Sampler {
            every: 1,
            left: 0,
            records: Vec::new(),
            rows: Vec::new(),
        }
    }
}

impl Sampler {
    /// Keeps one item in `every` from now on (0 counts as 1: every item).
    pub fn set_every(&mut self, every: u32) {
        self.every = every.max(1);
        self.left = self.left.min(self.every - 1);
    }

    /// The period set by `set_every`.
    pub fn every(&self) -> u32 {
        self.every
    }

    /// Counts one item; true when it is sampled.
    #[inline]
    fn take(&mut self) -> bool {
        if self.left > 0 {
            self.left -= 1;
            return false;
        }
        self.left = self.every - 1;
        true
    }

    /// A record message with origin `ts` was queued.
    #[inline]
    pub fn record(&mut self, ts: f64) {
        if self.take() {
            self.records.push(ts);
        }
    }

    /// Counts `n` items at once (one message delivered to `n` sessions by a topic publish);
    /// returns how many of them are sampled.
    pub fn take_n(&mut self, n: u32) -> u32 {
        if n <= self.left {
            self.left -= n;
            return 0;
        }
        // the first item past `left` is sampled, then one in every `every`
        let rest = n - self.left - 1;
        self.left = self.every - 1 - rest % self.every;
        1 + rest / self.every
    }

    /// An updated view row with origin `ts` was queued.
    pub fn view_row(&mut self, ts: f64) {
        if self.take() {
            self.rows.push(ts);
        }
    }

    /// Samples of the queued record messages.
    pub fn records(&self) -> &[f64] {
        &self.records
    }

    /// Samples of the queued updated view rows.
    pub fn rows(&self) -> &[f64] {
        &self.rows
    }

    /// The queued record messages were dropped (conflation).
    pub fn clear_records(&mut self) {
        self.records.clear();
    }

    /// The queued control messages left (a blocked session's replies).
    pub fn clear_rows(&mut self) {
        self.rows.clear();
    }

    /// Everything queued left (a flush); the counter goes on.
    pub fn clear(&mut self) {
        self.records.clear();
        self.rows.clear();
    }
}

/// What a flushed frame carries besides its bytes: its message count and latency samples.
#[derive(Debug, Clone, Copy, Default)]
pub struct FrameMeta<'a> {
    /// Messages in the frame.
    pub messages: u32,
    /// `ts` of its sampled record messages.
    pub records: &'a [f64],
    /// `ts` of its sampled updated view rows.
    pub rows: &'a [f64],
}

impl FrameMeta<'_> {
    /// Appends the samples as `(entry * 2 + kind, ts)` pairs: `entry` is the frame's position in
    /// the drain, `kind` SAMPLE_RECORD or SAMPLE_VIEW_ROW.
    pub fn write_samples(&self, entry: u32, out: &mut Vec<f64>) {
        let tag = |kind: u32| f64::from(entry) * 2.0 + f64::from(kind);
        for &ts in self.records {
            out.extend_from_slice(&[tag(SAMPLE_RECORD), ts]);
        }
        for &ts in self.rows {
            out.extend_from_slice(&[tag(SAMPLE_VIEW_ROW), ts]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_one_item_in_every_across_records_and_rows() {
        let mut s = Sampler::default();
        assert_eq!(s.every(), 1);
        s.record(1.0);
        s.view_row(2.0);
        assert_eq!(
            (s.records(), s.rows()),
            (&[1.0][..], &[2.0][..]),
            "every item by default"
        );
        s.clear();
        s.set_every(3);
        for i in 0..7 {
            s.record(f64::from(i));
        }
        assert_eq!(s.records(), [0.0, 3.0, 6.0]);
        // the counter runs across kinds
        s.view_row(7.0);
        s.view_row(8.0);
        s.view_row(9.0);
        assert_eq!(s.rows(), [9.0]);
        s.clear_records();
        assert!(s.records().is_empty());
        assert_eq!(s.rows(), [9.0]);
        s.clear_rows();
        assert!(s.rows().is_empty());
    }

    #[test]
    fn a_shorter_period_takes_effect_at_once() {
        let mut s = Sampler::default();
        s.set_every(1000);
        s.record(0.0); // sampled, 999 to skip
        s.set_every(2);
        s.record(1.0); // skipped (1 left)
        s.record(2.0);
        assert_eq!(s.records(), [0.0, 2.0]);
        s.set_every(0);
        assert_eq!(s.every(), 1);
    }

    #[test]
    fn take_n_counts_like_n_single_items() {
        for every in [1, 2, 3, 7] {
            for start in 0..every {
                for n in 0..20 {
                    let (mut one, mut many) = (Sampler::default(), Sampler::default());
                    one.set_every(every);
                    many.set_every(every);
                    for _ in 0..start {
                        one.take();
                        many.take();
                    }
                    let singles = (0..n).filter(|_| one.take()).count() as u32;
                    assert_eq!(many.take_n(n), singles, "every {every} start {start} n {n}");
                    assert_eq!(many.left, one.left, "every {every} start {start} n {n}");
                }
            }
        }
    }

    #[test]
    fn writes_tagged_pairs() {
        let meta = FrameMeta {
            messages: 3,
            records: &[10.5, 11.0],
            rows: &[12.25],
        };
        let mut out = vec![];
        meta.write_samples(4, &mut out);
        assert_eq!(out, [8.0, 10.5, 8.0, 11.0, 9.0, 12.25]);
    }
}
