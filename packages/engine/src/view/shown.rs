//! Which windows show which rows, and the per-flush scratch of `ViewSet::flush`.
//!
//! A flush routes each updated row's field changes to the windows that show it. Looking that up
//! per view (membership bits, then a scan of each window's rows) costs O(views holding the row);
//! [`Shown`] keeps, per row, the windows whose last sent rows hold it, updated only when a window's
//! rows change (its diff's `left` and `entered`), so routing costs O(windows showing the row).

use rustc_hash::FxHashMap;

use super::window::WindowDiff;

/// Row (record id) -> `(window id, container id of the window's view)` of every window whose last
/// sent rows hold it. A record may be a member of several containers: the container tells the
/// flush which container's conflated updates the window takes.
#[derive(Debug, Default)]
pub(super) struct Shown {
    rows: FxHashMap<u32, Vec<(u32, u32)>>,
}

impl Shown {
    /// Notes that `window` (of a view over `container`) now shows `row`.
    pub(super) fn add(&mut self, row: u32, window: u32, container: u32) {
        self.rows.entry(row).or_default().push((window, container));
    }

    /// Notes that `window` no longer shows `row` (no-op if it did not).
    pub(super) fn remove(&mut self, row: u32, window: u32) {
        if let Some(list) = self.rows.get_mut(&row) {
            if let Some(i) = list.iter().position(|&(w, _)| w == window) {
                list.swap_remove(i);
            }
            if list.is_empty() {
                self.rows.remove(&row);
            }
        }
    }

    /// The windows showing `row` (empty if none).
    pub(super) fn windows(&self, row: u32) -> &[(u32, u32)] {
        self.rows.get(&row).map_or(&[], Vec::as_slice)
    }

    /// Approximate heap bytes (map buckets and lists), for accounting.
    pub(super) fn heap_bytes(&self) -> usize {
        let lists: usize = self.rows.values().map(|l| l.capacity() * 8).sum();
        self.rows.capacity() * 33 + lists
    }
}

/// A window's state in the current flush: `Marks::get` answers "already re-sliced" or "has a light
/// diff at index i" without a hash lookup (a stamp per window, reset by bumping the generation).
#[derive(Debug, Default)]
pub(super) struct Marks {
    generation: u32,
    marks: Vec<(u32, u32)>,
}

/// What a flush has done with a window so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mark {
    /// Not visited yet.
    None,
    /// Diffed against its slice (its diff is in the output; it takes nothing more).
    Full,
    /// Has a count-only / field-update diff at this index of the flush's light list.
    Light(usize),
}

const FULL: u32 = u32::MAX;

impl Marks {
    /// Starts a flush over window ids below `windows`: every window reads `Mark::None`.
    pub(super) fn begin(&mut self, windows: usize) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.marks.iter_mut().for_each(|m| *m = (0, 0));
            self.generation = 1;
        }
        if self.marks.len() < windows {
            self.marks.resize(windows, (0, 0));
        }
    }

    /// The mark of `window` in this flush.
    #[inline]
    pub(super) fn get(&self, window: u32) -> Mark {
        match self.marks.get(window as usize) {
            Some(&(g, i)) if g == self.generation => {
                if i == FULL {
                    Mark::Full
                } else {
                    Mark::Light(i as usize)
                }
            }
            _ => Mark::None,
        }
    }

    /// Sets the mark of `window` (an id below the `begin` bound).
    #[inline]
    pub(super) fn set(&mut self, window: u32, mark: Mark) {
        let i = match mark {
            Mark::None => {
                self.marks[window as usize] = (0, 0);
                return;
            }
            Mark::Full => FULL,
            Mark::Light(i) => i as u32,
        };
        self.marks[window as usize] = (self.generation, i);
    }
}

/// Recycled diffs and field lists: a flush of held windows emits thousands of small diffs, each
/// with a field list per updated row; reusing them keeps the allocator off the hot path.
#[derive(Debug, Default)]
pub(super) struct Pool {
    diffs: Vec<WindowDiff>,
    fields: Vec<Vec<u32>>,
}

/// Most spare diffs / field lists kept.
const POOL_MAX: usize = 16_384;
/// Spare vectors above this capacity are freed rather than kept (a big snapshot's row list).
const POOL_CAP: usize = 256;

impl Pool {
    /// An empty diff for `window` at `offset`.
    pub(super) fn diff(&mut self, window: u32, offset: usize) -> WindowDiff {
        let mut d = self.diffs.pop().unwrap_or_default();
        d.window = window;
        d.offset = offset;
        d
    }

    /// A copy of `fields` in a recycled list.
    pub(super) fn fields(&mut self, fields: &[u32]) -> Vec<u32> {
        let mut f = self.fields.pop().unwrap_or_default();
        f.extend_from_slice(fields);
        f
    }

    /// Takes back a field list (a conflated row update's) for reuse.
    pub(super) fn put_fields(&mut self, mut f: Vec<u32>) {
        if self.fields.len() < POOL_MAX && f.capacity() <= POOL_CAP {
            f.clear();
            self.fields.push(f);
        }
    }

    /// Takes back `d` (cleared) for reuse, keeping its vectors when they are small.
    pub(super) fn put(&mut self, mut d: WindowDiff) {
        for (_, mut f) in d.updated.drain(..) {
            if self.fields.len() < POOL_MAX && f.capacity() <= POOL_CAP {
                f.clear();
                self.fields.push(f);
            }
        }
        let small = d.entered.capacity() <= POOL_CAP
            && d.left.capacity() <= POOL_CAP
            && d.moved.capacity() <= POOL_CAP
            && d.updated.capacity() <= POOL_CAP
            && d.conflated.capacity() <= POOL_CAP;
        if small && self.diffs.len() < POOL_MAX {
            d.entered.clear();
            d.left.clear();
            d.moved.clear();
            d.conflated.clear();
            d.count = None;
            d.snapshot = false;
            self.diffs.push(d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_tracks_windows_per_row() {
        let mut s = Shown::default();
        s.add(7, 1, 100);
        s.add(7, 2, 200);
        assert_eq!(s.windows(7), [(1, 100), (2, 200)]);
        s.remove(7, 1);
        assert_eq!(s.windows(7), [(2, 200)]);
        s.remove(7, 9);
        s.remove(7, 2);
        assert!(s.windows(7).is_empty());
        assert!(s.rows.is_empty());
    }

    #[test]
    fn marks_reset_per_flush() {
        let mut m = Marks::default();
        m.begin(4);
        assert_eq!(m.get(3), Mark::None);
        m.set(3, Mark::Light(5));
        m.set(1, Mark::Full);
        assert_eq!((m.get(3), m.get(1), m.get(9)), (Mark::Light(5), Mark::Full, Mark::None));
        m.begin(4);
        assert_eq!((m.get(3), m.get(1)), (Mark::None, Mark::None));
    }

    #[test]
    fn pooled_diffs_come_back_empty() {
        let mut p = Pool::default();
        let mut d = p.diff(3, 10);
        d.count = Some(4);
        d.snapshot = true;
        d.entered.push((0, 1));
        d.updated.push((1, p.fields(&[2, 3])));
        d.conflated.push(1);
        p.put(d);
        let d = p.diff(4, 20);
        assert_eq!(
            d,
            WindowDiff {
                window: 4,
                offset: 20,
                ..WindowDiff::default()
            }
        );
        assert_eq!(p.fields(&[9]), [9]);
    }
}
