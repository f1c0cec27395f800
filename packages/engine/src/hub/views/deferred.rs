//! Held windows' live changes deferred to their session's flush: one `view.rows` per window per
//! burst.
//!
//! Views flush after every publish batch, so a held window whose rows tick twice within its
//! session's burst window used to queue two `view.size` / `view.rows` pairs into the same frame.
//! A window's *light* diff (no row entered, left or moved: field updates of the rows it shows
//! and a new row count) is instead kept here, merged with the window's later light diffs (latest
//! count; per row the union of changed fields, marked conflated when it merges updates of two
//! flushes), and encoded when the session's burst window ends (`Hub::flush_deferred_views`, from
//! the session's flush). Encoding reads the records then, when every update is applied and the
//! views are flushed, so the values are the latest, as with a conflated update within one flush.
//!
//! A window's other diffs (entered, left, moved rows, the answer to a request) are sent at once,
//! carrying what the window had deferred; so is everything of a blocked session (deferred diffs
//! go into its outbox when it blocks) and everything while batching is off. A window closed or
//! released drops its deferred diff; a window detached for `view.resume` gathers it
//! (`ViewSet::gather_unsent`), so the diff after a resume still carries it.
//!
//! Invariants: a window is listed in `by_slot[slot]` for every entry `by_window[window] = (slot,
//! _)`; `by_slot` may list windows that are no longer (or no longer that slot's) in `by_window`,
//! which `take_slot` skips.

use rustc_hash::FxHashMap;

use crate::view::WindowDiff;

/// Light diffs of held windows waiting for their session's flush.
#[derive(Debug, Default)]
pub(in crate::hub) struct DeferredRows {
    /// Window id -> (session slot, merged diff).
    by_window: FxHashMap<u32, (u32, WindowDiff)>,
    /// Session slot -> windows with a deferred diff (may hold stale ids, see the module doc).
    by_slot: FxHashMap<u32, Vec<u32>>,
}

impl DeferredRows {
    /// True when `d` may wait for its session's flush: it only updates fields of rows the window
    /// shows and / or the row count.
    pub(in crate::hub) fn is_light(d: &WindowDiff) -> bool {
        !d.snapshot && d.entered.is_empty() && d.left.is_empty() && d.moved.is_empty()
    }

    /// True when session slot `slot` has deferred diffs.
    pub(in crate::hub) fn has_slot(&self, slot: u32) -> bool {
        self.by_slot.contains_key(&slot)
    }

    /// Defers light diff `d` of a window of session slot `slot`, merged into what the window
    /// already deferred. Returns the diff to recycle (`d` after a merge, or nothing).
    pub(in crate::hub) fn defer(&mut self, slot: u32, d: WindowDiff) -> Option<WindowDiff> {
        match self.by_window.get_mut(&d.window) {
            Some((s, kept)) if *s == slot => {
                merge_light(kept, &d);
                Some(d)
            }
            _ => {
                let window = d.window;
                self.by_window.insert(window, (slot, d));
                self.by_slot.entry(slot).or_default().push(window);
                None
            }
        }
    }

    /// Takes the deferred diff of `window`, if any.
    pub(in crate::hub) fn take(&mut self, window: u32) -> Option<WindowDiff> {
        self.by_window.remove(&window).map(|(_, d)| d)
    }

    /// Takes every deferred diff of session slot `slot` into `out`, in the order deferred.
    pub(in crate::hub) fn take_slot(&mut self, slot: u32, out: &mut Vec<WindowDiff>) {
        let Some(windows) = self.by_slot.remove(&slot) else {
            return;
        };
        for w in windows {
            match self.by_window.get(&w) {
                Some((s, _)) if *s == slot => {
                    if let Some((_, d)) = self.by_window.remove(&w) {
                        out.push(d);
                    }
                }
                _ => {}
            }
        }
    }

    /// Forgets session slot `slot`'s list (its windows' entries are taken or dropped by then).
    pub(in crate::hub) fn forget_slot(&mut self, slot: u32) {
        if let Some(windows) = self.by_slot.remove(&slot) {
            for w in windows {
                if self.by_window.get(&w).is_some_and(|(s, _)| *s == slot) {
                    self.by_window.remove(&w);
                }
            }
        }
    }
}

/// Merges light diff `d` (the later) into `kept`: the latest count; per row the union of the
/// changed fields, conflated when both carry the row or either already was.
pub(in crate::hub) fn merge_light(kept: &mut WindowDiff, d: &WindowDiff) {
    if d.count.is_some() {
        kept.count = d.count;
    }
    if d.updated.is_empty() {
        return;
    }
    // both lists are sorted by row id (light diffs)
    let old = std::mem::take(&mut kept.updated);
    let mut merged = Vec::with_capacity(old.len() + d.updated.len());
    let mut conflated = std::mem::take(&mut kept.conflated);
    let (mut a, mut b) = (old.into_iter().peekable(), d.updated.iter().peekable());
    loop {
        match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if x.0 == y.0 => {
                let (row, mut fields) = a.next().unwrap_or_default();
                let (_, more) = b.next().map(|(r, f)| (*r, f.as_slice())).unwrap_or((0, &[]));
                fields.extend_from_slice(more);
                fields.sort_unstable();
                fields.dedup();
                conflated.push(row);
                merged.push((row, fields));
            }
            (Some(x), Some(y)) if x.0 < y.0 => merged.extend(a.next()),
            (Some(_), Some(_)) | (None, Some(_)) => merged.extend(b.next().cloned()),
            (Some(_), None) => merged.extend(a.next()),
            (None, None) => break,
        }
    }
    conflated.extend_from_slice(&d.conflated);
    conflated.sort_unstable();
    conflated.dedup();
    kept.updated = merged;
    kept.conflated = conflated;
}

/// Adds deferred light diff `kept` to `d`, a later diff of the same window that is sent now: the
/// deferred count unless `d` has a newer one, and the deferred field updates of rows that stay
/// in the window (a row that left is gone; one that entered comes as an image). `d.conflated`
/// ends sorted.
pub(in crate::hub) fn merge_into(d: &mut WindowDiff, kept: WindowDiff) {
    if d.count.is_none() {
        d.count = kept.count;
    }
    if !kept.updated.is_empty() {
        let at: FxHashMap<u32, usize> = d.updated.iter().enumerate().map(|(i, u)| (u.0, i)).collect();
        let gone = |row: u32| d.left.contains(&row) || d.entered.iter().any(|e| e.1 == row);
        let mut add = Vec::new();
        for (row, fields) in kept.updated {
            match at.get(&row) {
                Some(&i) => {
                    let f = &mut d.updated[i].1;
                    f.extend_from_slice(&fields);
                    f.sort_unstable();
                    f.dedup();
                    d.conflated.push(row);
                }
                None if !gone(row) => {
                    if kept.conflated.binary_search(&row).is_ok() {
                        d.conflated.push(row);
                    }
                    add.push((row, fields));
                }
                None => {}
            }
        }
        d.updated.extend(add);
    }
    d.conflated.sort_unstable();
    d.conflated.dedup();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn light(window: u32, count: Option<usize>, updated: &[(u32, &[u32])], conflated: &[u32]) -> WindowDiff {
        WindowDiff {
            window,
            count,
            updated: updated.iter().map(|(r, f)| (*r, f.to_vec())).collect(),
            conflated: conflated.to_vec(),
            ..WindowDiff::default()
        }
    }

    #[test]
    fn light_diffs_merge_to_the_latest_count_and_the_union_of_fields() {
        let mut kept = light(3, Some(10), &[(1, &[2]), (5, &[1, 4])], &[]);
        merge_light(&mut kept, &light(3, None, &[(2, &[1]), (5, &[2])], &[2]));
        assert_eq!(kept.count, Some(10));
        assert_eq!(kept.updated, vec![(1, vec![2]), (2, vec![1]), (5, vec![1, 2, 4])]);
        assert_eq!(
            kept.conflated,
            vec![2, 5],
            "row 5 merges two flushes, row 2 was conflated"
        );
        merge_light(&mut kept, &light(3, Some(12), &[], &[]));
        assert_eq!(kept.count, Some(12));
    }

    #[test]
    fn a_diff_sent_now_carries_the_deferred_updates_of_rows_that_stay() {
        let kept = light(3, Some(10), &[(1, &[2]), (4, &[1]), (7, &[3]), (9, &[1])], &[9]);
        let mut d = WindowDiff {
            window: 3,
            left: vec![4],
            entered: vec![(0, 7)],
            moved: vec![(2, 1)],
            updated: vec![(1, vec![1])],
            ..WindowDiff::default()
        };
        merge_into(&mut d, kept);
        assert_eq!(d.count, Some(10), "the deferred count was never sent");
        assert_eq!(d.updated, vec![(1, vec![1, 2]), (9, vec![1])]);
        assert_eq!(d.conflated, vec![1, 9]);
    }

    #[test]
    fn a_slot_takes_its_own_windows_once() {
        let mut q = DeferredRows::default();
        assert!(q.defer(1, light(10, None, &[(1, &[1])], &[])).is_none());
        assert!(q.defer(1, light(10, None, &[(2, &[1])], &[])).is_some(), "merged");
        assert!(q.defer(2, light(11, Some(3), &[], &[])).is_none());
        assert!(q.take(10).is_some());
        assert!(q.defer(1, light(12, None, &[(1, &[1])], &[])).is_none());
        let mut out = Vec::new();
        q.take_slot(1, &mut out);
        assert_eq!(out.iter().map(|d| d.window).collect::<Vec<_>>(), vec![12]);
        assert!(!q.has_slot(1) && q.has_slot(2));
        q.forget_slot(2);
        assert!(q.take(11).is_none());
    }
}
