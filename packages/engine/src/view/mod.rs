//! Server-side views: a container filtered and sorted, kept as an order-statistic index keyed by
//! (sort key tuple, natural order). A `View` owns its index, never a copy of the records: index
//! entries cache only the sort field values (refreshed whenever an update touches a sort field,
//! see [`View::update`]). `set` runs many views over many containers for the hub; `window`
//! computes per-window diffs; `registry` shares identical views.

mod columns;
#[cfg(test)]
mod detach_tests;
#[cfg(test)]
mod expiry_tests;
mod fanout;
#[cfg(test)]
mod growth_tests;
mod key;
pub mod records;
pub mod registry;
pub mod row_bytes;
pub mod set;
mod shown;
pub mod sort;
#[cfg(test)]
mod test_rows;
pub mod window;

use std::sync::Arc;

use crate::container::{Container, IdMap, OsTree};
use crate::filter::{Filter, Row};
use crate::value::Value;
use key::KeyBuf;
pub use records::{EmptyRow, Records};
pub use registry::{Registry, ViewKey};
pub use row_bytes::RowBytes;
pub use set::{ViewInfo, ViewSet, ViewsConfig, WindowTag};
pub use sort::{parse_sort, sort_text, Sort, SortKey};
pub use window::{Window, WindowDiff};

/// A row found by a build scan: `(subject id, container slot, cached sort key)`.
pub(crate) type ScanRow = (u32, u32, KeyBuf);

/// One row of the index: subject id and its cached sort key (one value per sort key, `None` = missing).
#[derive(Debug, Clone)]
struct Entry {
    id: u32,
    /// The row's container slot: its order label breaks sort ties (natural order).
    slot: u32,
    key: KeyBuf,
}

/// A filtered, sorted view of one container. Rank = position in the view (0-based).
#[derive(Debug)]
pub struct View {
    filter: Arc<Filter>,
    sort: Arc<Sort>,
    reads: Box<[u32]>,
    index: OsTree<Entry>,
    /// id -> index handle; sharded past 4,096 rows (see [`IdMap`]).
    rows: IdMap,
    /// Rank range `[lo, hi]` whose rows may differ since the last flush (`None` = unchanged).
    touched: Option<(usize, usize)>,
}

/// True when the sorted slices `a` and `b` share an element.
#[inline]
pub fn intersects(a: &[u32], b: &[u32]) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => return true,
        }
    }
    false
}

fn passes<R: Records + ?Sized>(filter: &Filter, records: &R, id: u32) -> bool {
    match records.row(id) {
        Some(row) => filter.matches(row),
        None => filter.matches(&EmptyRow),
    }
}

impl View {
    /// An empty view; call [`View::build`] to fill it from its container.
    pub fn new(filter: Arc<Filter>, sort: Arc<Sort>) -> View {
        let mut reads: Vec<u32> = filter.fields().iter().chain(sort.fields()).copied().collect();
        reads.sort_unstable();
        reads.dedup();
        View {
            filter,
            sort,
            reads: reads.into(),
            index: OsTree::new(),
            rows: IdMap::new(),
            touched: Some((0, usize::MAX)),
        }
    }

    /// The compiled filter.
    pub fn filter(&self) -> &Arc<Filter> {
        &self.filter
    }

    /// The compiled sort.
    pub fn sort(&self) -> &Arc<Sort> {
        &self.sort
    }

    /// Field ids the filter or the sort reads (sorted): updates touching none of them are ignored.
    pub fn reads(&self) -> &[u32] {
        &self.reads
    }

    fn key_of<R: Records + ?Sized>(&self, records: &R, id: u32) -> KeyBuf {
        if self.sort.is_natural() {
            return KeyBuf::Empty;
        }
        let row = records.row(id);
        self.sort
            .keys()
            .iter()
            .map(|&(f, _)| row.and_then(|r| r.get(f)).cloned())
            .collect()
    }

    /// (Re)fills the index from `container`: one filter pass in natural order, a stable sort of
    /// the matches, then an in-order load. O(n + m log m) for n members and m matches.
    pub fn build<R: Records + ?Sized>(&mut self, container: &Container, records: &R) {
        self.index.clear();
        self.rows.clear();
        let mut entries: Vec<Entry> = container
            .iter()
            .filter(|&id| passes(&self.filter, records, id))
            .map(|id| Entry {
                id,
                slot: container.slot_of(id).unwrap_or(u32::MAX),
                key: self.key_of(records, id),
            })
            .collect();
        if !self.sort.is_natural() {
            entries.sort_by(|a, b| self.sort.compare(&a.key, &b.key));
        }
        self.rows.reserve(entries.len());
        for e in entries {
            let id = e.id;
            let h = self.index.insert_at(self.index.len(), e);
            self.rows.insert(id, h);
        }
        self.touch(0, usize::MAX);
    }

    /// (Re)fills the index from rows already known to pass the filter: `(id, container slot,
    /// cached sort key)` in any order. One unstable sort by (key, natural order), comparing
    /// each key's integer prefix ([`Sort::prefix`]) first and whole keys only on ties, then an
    /// O(m) bulk load of the index.
    pub(crate) fn load(&mut self, rows: Vec<ScanRow>, container: &Container) {
        let sort = &self.sort;
        let mut entries: Vec<(u128, u64, Entry)> = rows
            .into_iter()
            .map(|(id, slot, key)| (sort.prefix(&key), container.label(slot), Entry { id, slot, key }))
            .collect();
        entries.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| sort.compare(&a.2.key, &b.2.key))
                .then(a.1.cmp(&b.1))
        });
        let ids: Vec<u32> = entries.iter().map(|e| e.2.id).collect();
        let handles = self.index.load(entries.into_iter().map(|e| e.2));
        self.rows.clear();
        self.rows.reserve(ids.len());
        for (id, h) in ids.into_iter().zip(handles) {
            self.rows.insert(id, h);
        }
        self.touch(0, usize::MAX);
    }

    /// Widens the touched rank range to include `[lo, hi]`.
    fn touch(&mut self, lo: usize, hi: usize) {
        self.touched = Some(match self.touched {
            Some((a, b)) => (a.min(lo), b.max(hi)),
            None => (lo, hi),
        });
    }

    /// Inserts `entry` in sort order; returns its rank.
    fn place(&mut self, entry: Entry, container: &Container) -> usize {
        let id = entry.id;
        let label = container.label(entry.slot);
        let sort = &self.sort;
        let h = self.index.insert_by(entry, |new, old| {
            sort.compare(&new.key, &old.key)
                .then_with(|| label.cmp(&container.label(old.slot)))
        });
        self.rows.insert(id, h);
        self.index.rank(h)
    }

    /// Applies an update of member `id` of `container` that changed fields `changed` (sorted
    /// field ids). Does nothing unless the filter or sort reads one of them; then re-evaluates
    /// the filter (enter/leave) and, if a sort field changed, refreshes the cached key and moves
    /// the row. Returns true when membership or order changed. O(log n) (+ tie-breaks).
    pub fn update<R: Records + ?Sized>(
        &mut self,
        id: u32,
        changed: &[u32],
        container: &Container,
        records: &R,
    ) -> bool {
        if !intersects(changed, &self.reads) {
            return false;
        }
        let now = passes(&self.filter, records, id);
        self.settle(id, now, intersects(changed, self.sort.fields()), container, records)
    }

    /// Brings row `id` in line with a known filter result `now`: adds, removes, or (when
    /// `sort_changed`) refreshes its cached key and moves it. Returns true when membership or
    /// order changed.
    pub fn settle<R: Records + ?Sized>(
        &mut self,
        id: u32,
        now: bool,
        sort_changed: bool,
        container: &Container,
        records: &R,
    ) -> bool {
        match (self.rows.get(id), now) {
            (None, false) => false,
            (None, true) => {
                let key = self.key_of(records, id);
                let r = self.place(
                    Entry {
                        id,
                        slot: container.slot_of(id).unwrap_or(u32::MAX),
                        key,
                    },
                    container,
                );
                self.touch(r, usize::MAX);
                true
            }
            (Some(h), false) => {
                let r = self.index.rank(h);
                self.index.remove(h);
                self.rows.remove(id);
                self.touch(r, usize::MAX);
                true
            }
            (Some(h), true) => {
                if !sort_changed {
                    return false;
                }
                let key = self.key_of(records, id);
                if *self.index.get(h).key == *key {
                    return false;
                }
                // Still between its neighbours (the usual small tick): update the cached key in
                // place; the order, and so every window, is unchanged.
                let slot = self.index.get(h).slot;
                let label = container.label(slot);
                let order = |e: &Entry| {
                    self.sort
                        .compare(&e.key, &key)
                        .then(container.label(e.slot).cmp(&label))
                };
                let after_prev = self.index.prev(h).is_none_or(|p| order(self.index.get(p)).is_lt());
                let before_next = self.index.next(h).is_none_or(|n| order(self.index.get(n)).is_gt());
                if after_prev && before_next {
                    self.index.get_mut(h).key = key;
                    return false;
                }
                let from = self.index.rank(h);
                self.index.remove(h);
                let to = self.place(
                    Entry {
                        id,
                        slot: container.slot_of(id).unwrap_or(u32::MAX),
                        key,
                    },
                    container,
                );
                self.touch(from.min(to), from.max(to));
                true
            }
        }
    }

    /// Ids of every row, in view order.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.rows(0, usize::MAX)
    }

    /// Container slots of every row, in view order (a slot is stable while its member stays).
    pub(crate) fn slots(&self) -> impl Iterator<Item = u32> + '_ {
        self.index.iter_from(0).map(|e| e.slot)
    }

    /// `id` was just inserted into `container`: adds it if it passes the filter. Returns true if added.
    pub fn inserted<R: Records + ?Sized>(&mut self, id: u32, container: &Container, records: &R) -> bool {
        if self.rows.contains_key(id) || !passes(&self.filter, records, id) {
            return false;
        }
        let key = self.key_of(records, id);
        let r = self.place(
            Entry {
                id,
                slot: container.slot_of(id).unwrap_or(u32::MAX),
                key,
            },
            container,
        );
        self.touch(r, usize::MAX);
        true
    }

    /// `id` left the container: drops its row. Returns true if it was a row.
    pub fn removed(&mut self, id: u32) -> bool {
        match self.rows.remove(id) {
            Some(h) => {
                let r = self.index.rank(h);
                self.index.remove(h);
                self.touch(r, usize::MAX);
                true
            }
            None => false,
        }
    }

    /// The container was cleared: drops every row.
    pub fn cleared(&mut self) {
        self.index.clear();
        self.rows.clear();
        self.touch(0, usize::MAX);
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// True when no row passes.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// True when `id` is a row.
    pub fn contains(&self, id: u32) -> bool {
        self.rows.contains_key(id)
    }

    /// The rank of row `id`, `None` if not a row. O(log n).
    pub fn rank_of(&self, id: u32) -> Option<usize> {
        self.rows.get(id).map(|h| self.index.rank(h))
    }

    /// The row at `rank`, `None` past the end. O(log n).
    pub fn row_at(&self, rank: usize) -> Option<u32> {
        self.index.at(rank).map(|h| self.index.get(h).id)
    }

    /// Up to `size` rows from rank `offset`, in view order. O(log n + size).
    pub fn rows(&self, offset: usize, size: usize) -> impl Iterator<Item = u32> + '_ {
        self.index.iter_from(offset).take(size).map(|e| e.id)
    }

    /// Approximate heap bytes of the index (arena, row map, cached keys' boxes), for accounting.
    /// A single sort key's value lives inline in the arena; two or more take a boxed slice.
    pub fn heap_bytes(&self) -> usize {
        let n = self.sort.keys().len();
        let keys = if n > 1 {
            self.rows.len() * n * std::mem::size_of::<Option<Value>>()
        } else {
            0
        };
        self.index.heap_bytes() + self.rows.heap_bytes() + keys
    }

    /// The rank range `[lo, hi]` that may hold different rows than at the previous call (every
    /// insert, remove or move since then widens it; `None` = no change); resets it. A window
    /// entirely outside the range shows the same rows as before.
    pub fn take_touched(&mut self) -> Option<(usize, usize)> {
        self.touched.take()
    }
}
