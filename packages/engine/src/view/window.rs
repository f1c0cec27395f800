//! Windows: a subscriber's (offset, size) slice of a view, and the diff sent at each flush.
//!
//! A client applies a [`WindowDiff`] to its row list like this: if `snapshot`, start from an empty
//! list; remove every id in `left` and every id in `moved`; then insert the rows of `entered` and
//! `moved` together in ascending index order at their index. The result is the window's rows in
//! view order. `moved` is minimal: rows whose order relative to other staying rows changed (the
//! complement of a longest increasing subsequence), so a row shifted by an insertion above it is
//! not "moved". Field updates of rows that stayed are in `updated` (entered rows come as images).

use rustc_hash::FxHashMap;

use super::View;

/// Most rows in one window. @default 10,000
pub const MAX_WINDOW_ROWS: usize = tidewire_protocol::limits::MAX_VIEW_WINDOW_ROWS;

/// What changed in one window since the previous flush.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WindowDiff {
    /// The window's id (`ViewSet` window id).
    pub window: u32,
    /// The view's row count, when it changed (always set on a snapshot).
    pub count: Option<usize>,
    /// The window's offset (rank of its first row).
    pub offset: usize,
    /// First diff of the window: `entered` holds all its rows.
    pub snapshot: bool,
    /// `(index in window, subject id)` of rows that entered the window, ascending index.
    pub entered: Vec<(u32, u32)>,
    /// Subject ids of rows that left the window.
    pub left: Vec<u32>,
    /// `(index in window, subject id)` of rows that stayed but must be repositioned, ascending index.
    pub moved: Vec<(u32, u32)>,
    /// `(subject id, changed field ids sorted)` of rows that stayed and were updated (conflated).
    pub updated: Vec<(u32, Vec<u32>)>,
    /// Ids (ascending) of `updated` rows whose update merges several record updates since the
    /// previous flush (sent with `conflated: true`; the row's `seq` jumps by more than one).
    pub conflated: Vec<u32>,
}

impl WindowDiff {
    /// True when there is nothing to send.
    pub fn is_empty(&self) -> bool {
        !self.snapshot
            && self.count.is_none()
            && self.entered.is_empty()
            && self.left.is_empty()
            && self.moved.is_empty()
            && self.updated.is_empty()
    }

    /// Applies the diff to `rows` (the window as last known), per the module doc.
    pub fn apply_to(&self, rows: &mut Vec<u32>) {
        if self.snapshot {
            rows.clear();
        }
        rows.retain(|id| !self.left.contains(id) && !self.moved.iter().any(|m| m.1 == *id));
        let mut ins: Vec<(u32, u32)> = self.entered.iter().chain(&self.moved).copied().collect();
        ins.sort_unstable();
        for (i, id) in ins {
            rows.insert((i as usize).min(rows.len()), id);
        }
    }
}

/// Field updates a detached window's rows took while nothing was sent (see [`Window::detach`]).
#[derive(Debug, Clone, Default)]
struct Pending {
    /// Row (record id) -> changed field ids, sorted, merged over every update since the detach.
    fields: FxHashMap<u32, Vec<u32>>,
    /// Rows of `fields` whose changes merge more than one record update (sent `conflated`).
    merged: rustc_hash::FxHashSet<u32>,
}

/// A window's position and what its subscriber last received.
#[derive(Debug, Clone)]
pub struct Window {
    offset: usize,
    size: usize,
    sent: Vec<u32>,
    sent_count: Option<usize>,
    moved: bool,
    /// Detached (its subscriber's connection dropped): flushes skip it.
    detached: bool,
    /// Field updates of the sent rows gathered while detached, so the first diff after a
    /// re-attach sends exactly what was missed; taken by that diff.
    pending: Option<Box<Pending>>,
}

impl Window {
    /// A window of `size` rows from `offset` (nothing sent yet: the next flush is a snapshot).
    pub fn new(offset: usize, size: usize) -> Window {
        Window {
            offset,
            size,
            sent: Vec::new(),
            sent_count: None,
            moved: true,
            detached: false,
            pending: None,
        }
    }

    /// Detaches the window: flushes send nothing for it (its `sent` rows stay what the
    /// subscriber holds) and field updates of those rows are gathered until [`Window::attach`].
    pub fn detach(&mut self) {
        self.detached = true;
        if self.pending.is_none() {
            self.pending = Some(Box::default());
        }
    }

    /// True while detached.
    pub fn is_detached(&self) -> bool {
        self.detached
    }

    /// Notes, for a detached window, that its sent row `row` changed `fields` (sorted); `merged`:
    /// the change already merges several record updates. Ignored when attached.
    pub fn gather(&mut self, row: u32, fields: &[u32], merged: bool) {
        let Some(p) = self.pending.as_deref_mut().filter(|_| self.detached) else {
            return;
        };
        match p.fields.get_mut(&row) {
            Some(f) => {
                f.extend_from_slice(fields);
                f.sort_unstable();
                f.dedup();
                p.merged.insert(row);
            }
            None => {
                p.fields.insert(row, fields.to_vec());
                if merged {
                    p.merged.insert(row);
                }
            }
        }
    }

    /// Re-attaches a detached window at (`offset`, `size`): its next flush diffs the view's slice
    /// against the rows last sent and carries the gathered field updates of the rows that stay
    /// (the diff since the detach, as one message).
    pub fn attach(&mut self, offset: usize, size: usize) {
        self.offset = offset;
        self.size = size;
        self.moved = true;
        self.detached = false;
    }

    /// Current offset.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Current size.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The rows as of the last flush, in order.
    pub fn sent(&self) -> &[u32] {
        &self.sent
    }

    /// True when the next flush must read the view's slice (first flush, or the window moved).
    pub fn needs_slice(&self) -> bool {
        self.moved || self.sent_count.is_none()
    }

    /// True when rank `rank` of the view is inside the window.
    pub fn shows(&self, rank: usize) -> bool {
        rank >= self.offset && rank - self.offset < self.size
    }

    /// Moves/resizes the window; the next flush diffs the new slice against what was sent.
    pub fn set(&mut self, offset: usize, size: usize) {
        if (offset, size) != (self.offset, self.size) {
            self.offset = offset;
            self.size = size;
            self.moved = true;
        }
    }

    /// A diff holding only the count, if the view's row count differs from the last one sent
    /// (for windows whose rows did not change; the slice is not read).
    pub fn count_diff(&mut self, id: u32, view: &View) -> Option<WindowDiff> {
        if self.sent_count == Some(view.len()) {
            return None;
        }
        self.sent_count = Some(view.len());
        Some(WindowDiff {
            window: id,
            count: Some(view.len()),
            offset: self.offset,
            ..WindowDiff::default()
        })
    }

    /// The diff since the last flush, given whether the view's rows changed and the conflated
    /// field updates of the container (`dirty`: id -> changed field ids). `None` if nothing to send.
    pub fn diff(
        &mut self,
        id: u32,
        view: &View,
        view_changed: bool,
        dirty: &FxHashMap<u32, Vec<u32>>,
    ) -> Option<WindowDiff> {
        let snapshot = self.sent_count.is_none();
        let mut d = WindowDiff {
            window: id,
            offset: self.offset,
            snapshot,
            ..WindowDiff::default()
        };
        if view.len() != self.sent_count.unwrap_or(usize::MAX) {
            d.count = Some(view.len());
            self.sent_count = Some(view.len());
        }
        if !(view_changed || self.moved || snapshot) {
            if !dirty.is_empty() {
                for &r in &self.sent {
                    if let Some(f) = dirty.get(&r) {
                        d.updated.push((r, f.clone()));
                    }
                }
            }
            return (!d.is_empty()).then_some(d);
        }
        self.moved = false;
        let pending = self.pending.take().unwrap_or_default();
        let new: Vec<u32> = view.rows(self.offset, self.size).collect();
        if snapshot {
            d.entered = new.iter().enumerate().map(|(i, &r)| (i as u32, r)).collect();
            self.sent = new;
            return Some(d);
        }
        let old_pos: FxHashMap<u32, usize> = self.sent.iter().enumerate().map(|(i, &r)| (r, i)).collect();
        let new_set: FxHashMap<u32, ()> = new.iter().map(|&r| (r, ())).collect();
        d.left = self.sent.iter().copied().filter(|r| !new_set.contains_key(r)).collect();
        // Staying rows in new order, with their old index; keep a longest increasing run.
        let stay: Vec<(usize, u32, usize)> = new
            .iter()
            .enumerate()
            .filter_map(|(j, &r)| old_pos.get(&r).map(|&i| (j, r, i)))
            .collect();
        let keep = lis_mask(&stay.iter().map(|s| s.2).collect::<Vec<_>>());
        for (k, &(j, r, _)) in stay.iter().enumerate() {
            if !keep[k] {
                d.moved.push((j as u32, r));
            }
            match (dirty.get(&r), pending.fields.get(&r)) {
                (Some(f), None) => d.updated.push((r, f.clone())),
                (None, Some(p)) => {
                    d.updated.push((r, p.clone()));
                    if pending.merged.contains(&r) {
                        d.conflated.push(r);
                    }
                }
                (Some(f), Some(p)) => {
                    let mut both: Vec<u32> = f.iter().chain(p).copied().collect();
                    both.sort_unstable();
                    both.dedup();
                    d.updated.push((r, both));
                    d.conflated.push(r);
                }
                (None, None) => {}
            }
        }
        d.entered = new
            .iter()
            .enumerate()
            .filter(|(_, r)| !old_pos.contains_key(r))
            .map(|(j, &r)| (j as u32, r))
            .collect();
        self.sent = new;
        (!d.is_empty()).then_some(d)
    }
}

/// Marks the members of one longest strictly increasing subsequence of `xs`. O(k log k).
fn lis_mask(xs: &[usize]) -> Vec<bool> {
    let mut tails: Vec<usize> = Vec::new(); // index into xs of the smallest tail per length
    let mut prev = vec![usize::MAX; xs.len()];
    for (i, &x) in xs.iter().enumerate() {
        let l = tails.partition_point(|&t| xs[t] < x);
        if l > 0 {
            prev[i] = tails[l - 1];
        }
        if l == tails.len() {
            tails.push(i);
        } else {
            tails[l] = i;
        }
    }
    let mut keep = vec![false; xs.len()];
    let mut cur = tails.last().copied().unwrap_or(usize::MAX);
    while cur != usize::MAX {
        keep[cur] = true;
        cur = prev[cur];
    }
    keep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lis_keeps_the_longest_run() {
        assert_eq!(lis_mask(&[0, 1, 2]), [true, true, true]);
        assert_eq!(lis_mask(&[2, 0, 1]), [false, true, true]);
        assert_eq!(lis_mask(&[]), Vec::<bool>::new());
        assert_eq!(lis_mask(&[1, 0]).iter().filter(|k| **k).count(), 1);
    }

    #[test]
    fn diff_applies_to_the_old_rows() {
        let d = WindowDiff {
            entered: vec![(0, 9)],
            left: vec![2],
            moved: vec![(1, 4)],
            ..WindowDiff::default()
        };
        let mut rows = vec![1, 2, 3, 4];
        d.apply_to(&mut rows);
        assert_eq!(rows, [9, 4, 1, 3]);
    }
}
