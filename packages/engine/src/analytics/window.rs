//! One key's window and its running aggregates, updated in O(1) per event (amortized for
//! min/max) without allocating once the window's buffers have reached their size.
//!
//! Numbers: running sums are Neumaier-compensated (Kahan-Babuska): adding a value and later
//! subtracting it leaves no drift worth the name, even when magnitudes mix (1e12 then 0.01).
//! `stddev` keeps Σ(x-r) and Σ(x-r)² with the reference r one of the values in the window, so
//! every |x-r| is at most the window's range and the sum of squares cannot cancel
//! catastrophically (a shift far from the data, e.g. the first price of a walk, loses all digits
//! of a small variance). When the reference's event leaves, the newest value becomes the
//! reference and the two sums are recomputed from the window: O(n) once per n evictions at
//! most, O(1) amortized. A window that becomes empty resets every sum to exactly zero; a sum
//! that overflowed (not finite) is recomputed from the window when a value leaves it.

use std::collections::VecDeque;

/// A Neumaier-compensated running sum.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Sum {
    s: f64,
    c: f64,
}

impl Sum {
    #[inline]
    pub fn add(&mut self, x: f64) {
        let t = self.s + x;
        if self.s.abs() >= x.abs() {
            self.c += (self.s - t) + x;
        } else {
            self.c += (x - t) + self.s;
        }
        self.s = t;
    }

    #[inline]
    pub fn value(&self) -> f64 {
        self.s + self.c
    }

    fn finite(&self) -> bool {
        self.s.is_finite() && self.c.is_finite()
    }
}

/// A monotonic deque of (event seq, value): the front is the window's minimum (`MIN`) or
/// maximum (`!MIN`). Each value is pushed and popped at most once: O(1) amortized per event.
#[derive(Debug, Clone, Default)]
pub(crate) struct Mono<const MIN: bool> {
    q: VecDeque<(u64, f64)>,
}

impl<const MIN: bool> Mono<MIN> {
    fn with_capacity(n: usize) -> Self {
        Self {
            q: VecDeque::with_capacity(n),
        }
    }

    #[inline]
    fn push(&mut self, seq: u64, x: f64) {
        // a later equal value replaces an earlier one: it stays in the window longer
        while let Some(&(_, b)) = self.q.back() {
            if (MIN && b >= x) || (!MIN && b <= x) {
                self.q.pop_back();
            } else {
                break;
            }
        }
        self.q.push_back((seq, x));
    }

    #[inline]
    fn evict(&mut self, seq: u64) {
        if self.q.front().is_some_and(|&(s, _)| s == seq) {
            self.q.pop_front();
        }
    }

    fn front(&self) -> Option<f64> {
        self.q.front().map(|&(_, x)| x)
    }
}

/// Running aggregates of one input column (a numeric field the statement reads).
#[derive(Debug, Clone, Default)]
pub(crate) struct Col {
    /// Σx over the window's events that have the field.
    sum: Sum,
    /// Events in the window that have the field.
    n: u64,
    /// Stddev only: the reference value r (the value of event `ref_seq`), Σ(x-r) and Σ(x-r)².
    shift: f64,
    ref_seq: u64,
    dsum: Sum,
    dsq: Sum,
    min: Option<Mono<true>>,
    max: Option<Mono<false>>,
    stddev: bool,
}

/// Running Σ(p·v), Σv over events having both (for `vwap(p, v)`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Prod {
    pv: Sum,
    v: Sum,
    n: u64,
}

/// What each column needs beyond its sum (set when the statement is compiled).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ColNeeds {
    pub min: bool,
    pub max: bool,
    pub stddev: bool,
}

/// How a key's events are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// No window: nothing is kept but the first and the last event's values.
    Cumulative,
    /// The last `n` events, in a ring allocated whole when the key first appears.
    Length(usize),
    /// A FIFO evicted by the statement's time queue (its growth is its only allocation).
    Time,
}

/// A key's window: its events' column values (NaN = the event lacks the field) and aggregates.
#[derive(Debug, Clone)]
pub(crate) struct Window {
    kind: Kind,
    /// Columns per event.
    width: usize,
    /// Length: ring of `n * width` values; Cumulative: the first event's values then the last
    /// event's (`2 * width`); Time: unused.
    ring: Box<[f64]>,
    /// Time: FIFO of `len * width` values; else unused.
    fifo: VecDeque<f64>,
    /// Length ring: index (in events) of the oldest event.
    head: usize,
    /// Events in the window (count(*)).
    len: u64,
    /// Seq of the next event (the oldest in the window is `next_seq - len`).
    next_seq: u64,
    cols: Box<[Col]>,
    /// (price column, volume column) per vwap, and its sums.
    pairs: Box<[(usize, usize)]>,
    prods: Box<[Prod]>,
}

impl Window {
    /// An empty window of `width` columns (`needs` per column), with `pairs` weighted sums.
    pub fn new(kind: Kind, needs: &[ColNeeds], pairs: &[(usize, usize)]) -> Window {
        let width = needs.len();
        let cap = match kind {
            Kind::Length(n) => n,
            Kind::Time | Kind::Cumulative => 0,
        };
        let cols = needs
            .iter()
            .map(|n| Col {
                min: n.min.then(|| Mono::with_capacity(cap)),
                max: n.max.then(|| Mono::with_capacity(cap)),
                stddev: n.stddev,
                ..Col::default()
            })
            .collect();
        let ring = match kind {
            Kind::Length(n) => vec![f64::NAN; n * width],
            Kind::Cumulative => vec![f64::NAN; 2 * width],
            Kind::Time => Vec::new(),
        };
        Window {
            kind,
            width,
            ring: ring.into(),
            fifo: VecDeque::new(),
            head: 0,
            len: 0,
            next_seq: 0,
            cols,
            pairs: pairs.into(),
            prods: vec![Prod::default(); pairs.len()].into(),
        }
    }

    /// Events in the window.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Adds an event (`x[c]` per column, NaN when missing). A full length window first drops
    /// its oldest event.
    #[inline]
    pub fn push(&mut self, x: &[f64]) {
        debug_assert_eq!(x.len(), self.width);
        if let Kind::Length(n) = self.kind {
            if self.len == n as u64 {
                self.evict();
            }
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        match self.kind {
            Kind::Length(n) => {
                let mut tail = self.head + self.len as usize;
                if tail >= n {
                    tail -= n;
                }
                let at = tail * self.width;
                self.ring[at..at + self.width].copy_from_slice(x);
            }
            Kind::Time => self.fifo.extend(x.iter().copied()),
            Kind::Cumulative => {
                let w = self.width;
                if self.len == 0 {
                    self.ring[..w].copy_from_slice(x);
                }
                self.ring[w..].copy_from_slice(x);
            }
        }
        self.len += 1;
        let cumulative = self.kind == Kind::Cumulative;
        for (col, &v) in self.cols.iter_mut().zip(x) {
            if v.is_nan() {
                continue;
            }
            if col.n == 0 && col.stddev {
                col.shift = v;
                col.ref_seq = seq;
            }
            col.n += 1;
            col.sum.add(v);
            if col.stddev {
                let d = v - col.shift;
                col.dsum.add(d);
                col.dsq.add(d * d);
            }
            if let Some(m) = &mut col.min {
                m.push(seq, v);
                if cumulative {
                    // nothing ever leaves: only the extreme is needed
                    m.q.truncate(1);
                }
            }
            if let Some(m) = &mut col.max {
                m.push(seq, v);
                if cumulative {
                    m.q.truncate(1);
                }
            }
        }
        for (p, &(a, b)) in self.prods.iter_mut().zip(self.pairs.iter()) {
            let (pa, vb) = (x[a], x[b]);
            if !pa.is_nan() && !vb.is_nan() {
                p.pv.add(pa * vb);
                p.v.add(vb);
                p.n += 1;
            }
        }
    }

    /// Drops the oldest event (no-op when empty). Time windows call this as their events expire.
    #[inline]
    pub fn evict(&mut self) {
        if self.len == 0 || self.kind == Kind::Cumulative {
            return;
        }
        let seq = self.next_seq - self.len;
        let w = self.width;
        let mut recompute = false;
        for (c, col) in self.cols.iter_mut().enumerate() {
            let v = value(self.kind, &self.ring, &self.fifo, self.head, 0, w, c);
            if v.is_nan() {
                continue;
            }
            col.n -= 1;
            col.sum.add(-v);
            recompute |= !col.sum.finite();
            if col.stddev {
                let d = v - col.shift;
                col.dsum.add(-d);
                col.dsq.add(-(d * d));
                recompute |= seq == col.ref_seq;
            }
            if let Some(m) = &mut col.min {
                m.evict(seq);
            }
            if let Some(m) = &mut col.max {
                m.evict(seq);
            }
        }
        for (p, &(a, b)) in self.prods.iter_mut().zip(self.pairs.iter()) {
            let pa = value(self.kind, &self.ring, &self.fifo, self.head, 0, w, a);
            let vb = value(self.kind, &self.ring, &self.fifo, self.head, 0, w, b);
            if !pa.is_nan() && !vb.is_nan() {
                p.pv.add(-(pa * vb));
                p.v.add(-vb);
                p.n -= 1;
                recompute |= !p.pv.finite() || !p.v.finite();
            }
        }
        match self.kind {
            Kind::Length(n) => {
                self.head += 1;
                if self.head == n {
                    self.head = 0;
                }
            }
            _ => {
                for _ in 0..w {
                    self.fifo.pop_front();
                }
            }
        }
        self.len -= 1;
        if self.len == 0 {
            self.reset_sums();
        } else if recompute {
            self.recompute();
        }
    }

    fn reset_sums(&mut self) {
        for col in self.cols.iter_mut() {
            col.sum = Sum::default();
            col.dsum = Sum::default();
            col.dsq = Sum::default();
        }
        for p in self.prods.iter_mut() {
            *p = Prod::default();
        }
    }

    /// Column `c` of the `k`-th oldest event in the window.
    #[inline]
    fn at(&self, k: usize, c: usize) -> f64 {
        value(self.kind, &self.ring, &self.fifo, self.head, k, self.width, c)
    }

    /// Recomputes every sum from the window's events; a stddev column's reference becomes its
    /// newest value.
    fn recompute(&mut self) {
        let len = self.len as usize;
        let first_seq = self.next_seq - self.len;
        for c in 0..self.width {
            let mut sum = Sum::default();
            let (mut shift, mut ref_seq) = (0.0, first_seq);
            for k in 0..len {
                let v = self.at(k, c);
                if !v.is_nan() {
                    sum.add(v);
                    (shift, ref_seq) = (v, first_seq + k as u64);
                }
            }
            let (mut dsum, mut dsq) = (Sum::default(), Sum::default());
            if self.cols[c].stddev {
                for k in 0..len {
                    let v = self.at(k, c);
                    if !v.is_nan() {
                        let d = v - shift;
                        dsum.add(d);
                        dsq.add(d * d);
                    }
                }
            }
            let col = &mut self.cols[c];
            col.sum = sum;
            if col.stddev {
                col.shift = shift;
                col.ref_seq = ref_seq;
                col.dsum = dsum;
                col.dsq = dsq;
            }
        }
        for i in 0..self.pairs.len() {
            let (a, b) = self.pairs[i];
            let (mut pv, mut v) = (Sum::default(), Sum::default());
            for k in 0..len {
                let (pa, vb) = (self.at(k, a), self.at(k, b));
                if !pa.is_nan() && !vb.is_nan() {
                    pv.add(pa * vb);
                    v.add(vb);
                }
            }
            self.prods[i].pv = pv;
            self.prods[i].v = v;
        }
    }

    /// Column `c` of the oldest event in the window (`None`: empty, or the event lacks it).
    pub fn first(&self, c: usize) -> Option<f64> {
        if self.len == 0 {
            return None;
        }
        present(self.at(0, c))
    }

    /// Column `c` of the newest event in the window.
    pub fn last(&self, c: usize) -> Option<f64> {
        if self.len == 0 {
            return None;
        }
        present(self.at(self.len as usize - 1, c))
    }

    /// Events in the window having column `c`.
    pub fn count(&self, c: usize) -> u64 {
        self.cols[c].n
    }

    /// Σ column `c` (`None` when no event has it).
    pub fn sum(&self, c: usize) -> Option<f64> {
        let col = &self.cols[c];
        (col.n > 0).then(|| col.sum.value())
    }

    /// Mean of column `c`.
    pub fn avg(&self, c: usize) -> Option<f64> {
        let col = &self.cols[c];
        (col.n > 0).then(|| col.sum.value() / col.n as f64)
    }

    /// Smallest value of column `c` (the column was compiled with `min`).
    pub fn min(&self, c: usize) -> Option<f64> {
        self.cols[c].min.as_ref().and_then(Mono::front)
    }

    /// Largest value of column `c` (the column was compiled with `max`).
    pub fn max(&self, c: usize) -> Option<f64> {
        self.cols[c].max.as_ref().and_then(Mono::front)
    }

    /// Sample standard deviation of column `c` (`None` below two values); the column was
    /// compiled with `stddev`.
    pub fn stddev(&self, c: usize) -> Option<f64> {
        let col = &self.cols[c];
        if col.n < 2 {
            return None;
        }
        let n = col.n as f64;
        let d = col.dsum.value();
        // rounding can leave a tiny negative where the true variance is 0
        let var = ((col.dsq.value() - d * d / n) / (n - 1.0)).max(0.0);
        Some(var.sqrt())
    }

    /// Σ(p·v) / Σv of pair `i` (`None` when no event has both, or Σv is 0).
    pub fn vwap(&self, i: usize) -> Option<f64> {
        let p = &self.prods[i];
        let v = p.v.value();
        (p.n > 0 && v != 0.0).then(|| p.pv.value() / v)
    }
}

/// Column `c` of the `k`-th oldest event (a free function so `evict` can read while it
/// updates the columns). Cumulative windows keep only the first (`k == 0`) and the last event.
#[inline]
fn value(kind: Kind, ring: &[f64], fifo: &VecDeque<f64>, head: usize, k: usize, w: usize, c: usize) -> f64 {
    match kind {
        Kind::Length(n) => {
            let mut i = head + k;
            if i >= n {
                i -= n;
            }
            ring[i * w + c]
        }
        Kind::Time => fifo[k * w + c],
        Kind::Cumulative => ring[if k == 0 { c } else { w + c }],
    }
}

fn present(v: f64) -> Option<f64> {
    (!v.is_nan()).then_some(v)
}
