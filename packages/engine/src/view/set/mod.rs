//! `ViewSet`: every container and view the hub serves, on the engine thread. Source container
//! operations and record updates come in; per-window diffs come out at each flush.
//!
//! Fan-out: per container, views are indexed by the field ids their filter or sort reads, so a
//! record update only touches views reading a changed field. Each view over a container owns one
//! bit of a per-member bitset (flat array indexed by the container's member slot), so the hot
//! path per (update, view) is one compiled-filter evaluation and one bit test; the view's index
//! is touched only when the row enters, leaves or moves. Field updates for windows are conflated
//! per container (row -> changed fields) and routed at flush through a per-row index of the
//! windows showing each row (`shown.rs`, kept on window diffs), so a flush costs O(rows updated x
//! windows showing them), not O(views holding them).

mod flush;
mod windows;

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::fanout::{unlink, ContainerState, Fan, Reader};
use super::registry::{Registry, ViewKey};
use super::row_bytes::RowBytes;
use super::shown::{Marks, Pool, Shown};
use super::sort::{parse_sort, sort_text, Sort};
use super::window::{Window, WindowDiff, MAX_WINDOW_ROWS};
use super::{EmptyRow, Records, View};
use crate::container::{Container, IdMap};
use crate::error::{EngineError, Result};
use crate::filter::{parse, Filter, FilterLimits};

/// Settings of a [`ViewSet`].
#[derive(Debug, Clone, Copy)]
pub struct ViewsConfig {
    /// How long an unreferenced view is kept for reuse, ms. @default 5000
    pub grace_ms: u64,
    /// Filter text limits (also bounds sort text length).
    pub limits: FilterLimits,
    /// Most rows in one window. @default `MAX_WINDOW_ROWS` (10,000)
    pub max_window_rows: usize,
}

impl Default for ViewsConfig {
    fn default() -> Self {
        Self {
            grace_ms: 5000,
            limits: FilterLimits::default(),
            max_window_rows: MAX_WINDOW_ROWS,
        }
    }
}

#[derive(Debug)]
pub(super) struct ViewSlot {
    pub(super) view: View,
    container: u32,
    bit: u32,
    windows: Vec<u32>,
    /// Index of this view in its container's `views`, and, per field of `view.reads()` (same
    /// order), of its reader in the container's `by_field` list: an expiry unlinks the view
    /// in O(1) per list (swap-remove, the moved entry's index fixed up), not a pass over the
    /// container's views.
    at: u32,
    reader_at: Box<[u32]>,
    /// Wall time of the view's build (filter scan, sort, index load), us.
    build_us: u64,
    /// Listed in `ViewSet::touched` (its rows changed since the last flush).
    queued: bool,
}

impl ViewSlot {
    /// Lists view `id` (this slot) as changed since the last flush, once.
    pub(super) fn queue(&mut self, id: u32, touched: &mut Vec<u32>) {
        if !self.queued {
            self.queued = true;
            touched.push(id);
        }
    }
}

/// One materialised view, for diagnostics (the admin views table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewInfo {
    /// View id.
    pub view: u32,
    /// Container subject id the view is over (a tier mirror for tiered views).
    pub container: u32,
    /// Canonical filter text (empty = every member).
    pub filter: String,
    /// Canonical sort text (empty = natural order).
    pub sort: String,
    /// Rows now.
    pub rows: usize,
    /// Subscriber windows open on it.
    pub windows: usize,
    /// References held (0 while in its grace period).
    pub refs: u32,
    /// Cumulative updates to rows of the view: per flush, each row that is in the view and was
    /// updated (field change or entry) counts once (updates within one flush conflate).
    pub updates: u64,
    /// Wall time of the view's build (filter over the container, sort, index load), us.
    pub build_us: u64,
}

/// Containers by subject id, shared views, and subscriber windows.
#[derive(Debug)]
pub struct ViewSet {
    config: ViewsConfig,
    containers: FxHashMap<u32, ContainerState>,
    /// record id -> the first container holding it; further containers in `more_homes`.
    home: IdMap,
    more_homes: FxHashMap<u32, Vec<u32>>,
    views: Vec<Option<ViewSlot>>,
    free_views: Vec<u32>,
    windows: Vec<Option<(u32, Window)>>,
    free_windows: Vec<u32>,
    registry: Registry,
    stamps: Vec<u32>,
    stamp: u32,
    /// Views whose rows changed since the last flush: a flush visits these, not every view.
    touched: Vec<u32>,
    /// Windows opened or moved since the last flush (they diff their new slice).
    moved_windows: Vec<u32>,
    /// Containers with field updates (`dirty`) since the last flush.
    dirty_containers: Vec<u32>,
    /// Scratch: the changed fields of an update whose value really changed.
    differ: Vec<u32>,
    /// Row -> windows whose last sent rows hold it (routes field updates at flush).
    shown: Shown,
    /// Per-window state of the current flush.
    marks: Marks,
    /// Recycled diffs and field lists (see [`ViewSet::recycle`]).
    pool: Pool,
    /// Scratch of a flush: (view, only this window or `u32::MAX`) to visit; light diffs.
    visits: Vec<(u32, u32)>,
    light: Vec<WindowDiff>,
    /// Encoded updated rows of the current flush (see [`ViewSet::row_bytes`]).
    row_bytes: RowBytes,
    /// Window id -> the owner's tag (see [`ViewSet::set_window_tag`]).
    tags: Vec<WindowTag>,
    /// Window id -> seq of the last message sent for it (see [`ViewSet::window_seq`]).
    seqs: Vec<u64>,
}

/// Words a window's owner keeps with it (the hub: session slot, viewId, reqId, pending flags),
/// read back per diff from a dense array instead of the owner's own maps. `[0; 4]` until set.
pub type WindowTag = [u32; 4];

impl ViewSet {
    /// An empty set.
    pub fn new(config: ViewsConfig) -> ViewSet {
        ViewSet {
            config,
            containers: FxHashMap::default(),
            home: IdMap::new(),
            more_homes: FxHashMap::default(),
            views: Vec::new(),
            free_views: Vec::new(),
            windows: Vec::new(),
            free_windows: Vec::new(),
            registry: Registry::new(config.grace_ms),
            stamps: Vec::new(),
            stamp: 0,
            touched: Vec::new(),
            moved_windows: Vec::new(),
            dirty_containers: Vec::new(),
            differ: Vec::new(),
            shown: Shown::default(),
            marks: Marks::default(),
            pool: Pool::default(),
            visits: Vec::new(),
            light: Vec::new(),
            row_bytes: RowBytes::default(),
            tags: Vec::new(),
            seqs: Vec::new(),
        }
    }

    /// The container `id`, if it has ever been published to or viewed.
    pub fn container(&self, id: u32) -> Option<&Container> {
        self.containers.get(&id).map(|c| &c.container)
    }

    fn add_home(&mut self, record: u32, container: u32) {
        if let Some(first) = self.home.get(record) {
            if first != container {
                self.more_homes.entry(record).or_default().push(container);
            }
        } else {
            self.home.insert(record, container);
        }
    }

    fn drop_home(&mut self, record: u32, container: u32) {
        if self.home.get(record) == Some(container) {
            match self.more_homes.get_mut(&record).and_then(|v| v.pop()) {
                Some(next) => {
                    self.home.insert(record, next);
                }
                None => {
                    self.home.remove(record);
                }
            }
        } else if let Some(v) = self.more_homes.get_mut(&record) {
            v.retain(|&c| c != container);
        }
        if self.more_homes.get(&record).is_some_and(Vec::is_empty) {
            self.more_homes.remove(&record);
        }
    }

    /// Inserts record `id` into `container` at `pos` (`None` = append); views over it add the row
    /// if it passes. Returns the position. Errors as [`Container::insert_at`].
    pub fn insert<R: Records + ?Sized>(
        &mut self,
        container: u32,
        pos: Option<usize>,
        id: u32,
        records: &R,
    ) -> Result<usize> {
        let c = self.containers.entry(container).or_default();
        let at = c.container.insert_at(pos.unwrap_or(usize::MAX), id)?;
        c.ensure_slots();
        c.clear_row(id);
        if let Some(slot) = c.container.slot_of(id) {
            c.columns.inserted(id, slot, records);
        }
        for i in 0..c.views.len() {
            let v = c.views[i];
            if let Some(slot) = self.views[v as usize].as_mut() {
                if slot.view.inserted(id, &c.container, records) {
                    c.set_bit(id, slot.bit, true);
                    slot.queue(v, &mut self.touched);
                }
            }
        }
        self.add_home(id, container);
        Ok(at)
    }

    /// Removes record `id` from `container`; returns its old position (`None` if not a member).
    pub fn remove(&mut self, container: u32, id: u32) -> Option<usize> {
        let c = self.containers.get_mut(&container)?;
        c.clear_row(id);
        if let Some(slot) = c.container.slot_of(id) {
            c.columns.removed(slot);
            c.forget_updated(slot);
        }
        let pos = c.container.remove(id)?;
        if let Some(f) = c.dirty.remove(&id) {
            self.pool.put_fields(f);
        }
        c.merged.remove(&id);
        for &v in &c.views {
            if let Some(slot) = self.views[v as usize].as_mut() {
                if slot.view.removed(id) {
                    slot.queue(v, &mut self.touched);
                }
            }
        }
        self.drop_home(id, container);
        Some(pos)
    }

    /// Removes every member of `container`.
    pub fn clear(&mut self, container: u32) {
        let Some(c) = self.containers.get_mut(&container) else {
            return;
        };
        let members: Vec<u32> = c.container.iter().collect();
        c.container.clear();
        for (_, f) in c.dirty.drain() {
            self.pool.put_fields(f);
        }
        c.merged.clear();
        c.forget_all_updated();
        c.clear_bits();
        c.columns.cleared();
        for &v in &c.views {
            if let Some(slot) = self.views[v as usize].as_mut() {
                slot.view.cleared();
                slot.queue(v, &mut self.touched);
            }
        }
        for id in members {
            self.drop_home(id, container);
        }
    }

    /// Opens (or shares) the view of `container` with `filter` and `sort` text for `tier`, at
    /// time `now_ms`. Field names resolve through `field_id`. Parse errors are `BAD_REQUEST`
    /// naming `filter` or `sort` with the column. Each successful call holds one reference:
    /// pair it with [`ViewSet::release`].
    pub fn open<R: Records + ?Sized>(
        &mut self,
        container: u32,
        filter: &str,
        sort: &str,
        tier: u32,
        records: &R,
        field_id: &mut dyn FnMut(&str) -> u32,
    ) -> Result<u32> {
        let expr = parse(filter, &self.config.limits).map_err(|e| e.into_engine_error("filter"))?;
        let keys = parse_sort(sort, self.config.limits.max_len).map_err(|e| e.into_engine_error("sort"))?;
        let key = ViewKey {
            container,
            filter: expr.to_string(),
            sort: sort_text(&keys),
            tier,
        };
        if let Some(v) = self.registry.acquire(&key) {
            return Ok(v);
        }
        let mut view = View::new(
            Arc::new(Filter::compile(&expr, field_id)),
            Arc::new(Sort::compile(&keys, field_id)),
        );
        let started = std::time::Instant::now(); // a cost measurement only, never a decision
        let c = self.containers.entry(container).or_default();
        // One sequential scan of the columns of the fields the view reads (filled when the
        // first view reading a field opened), not a walk over every member's record.
        c.columns.acquire(view.reads(), records);
        let sort_fields: Vec<u32> = view.sort().keys().iter().map(|k| k.0).collect();
        let rows = c.columns.scan(view.filter(), &sort_fields);
        let id = match self.free_views.pop() {
            Some(id) => id,
            None => {
                self.views.push(None);
                self.stamps.push(0);
                self.views.len() as u32 - 1
            }
        };
        let at = c.views.len() as u32;
        c.views.push(id);
        let bit = c.take_bit(id);
        c.ensure_slots();
        // The scan knows each row's slot: its membership bit is set straight, in slot order.
        c.set_slot_bits(rows.iter().map(|r| r.1), bit, true);
        view.load(rows, &c.container);
        let mut reader_at = Vec::with_capacity(view.reads().len());
        for &f in view.reads() {
            let list = c.by_field.entry(f).or_default();
            reader_at.push(list.len() as u32);
            list.push(Reader {
                view: id,
                bit,
                filter: view.filter().clone(),
                sort: view.sort().clone(),
            });
        }
        self.views[id as usize] = Some(ViewSlot {
            view,
            container,
            bit,
            windows: Vec::new(),
            at,
            reader_at: reader_at.into(),
            build_us: started.elapsed().as_micros() as u64,
            queued: true,
        });
        self.touched.push(id);
        self.registry.insert(key, id);
        Ok(id)
    }

    /// Drops one reference to `view` at `now_ms`; the view lives on for the grace period.
    /// `NOT_FOUND` if the view holds no reference.
    pub fn release(&mut self, view: u32, now_ms: u64) -> Result<u32> {
        self.registry
            .release(view, now_ms)
            .ok_or_else(|| EngineError::NotFound {
                message: format!("view {view} is not open"),
            })
    }

    /// Frees views unreferenced for the grace period (and their windows). Returns how many.
    pub fn expire(&mut self, now_ms: u64) -> usize {
        let done = self.registry.expire(now_ms);
        for &v in &done {
            let Some(slot) = self.views[v as usize].take() else {
                continue;
            };
            for w in slot.windows {
                if let Some((_, win)) = self.windows[w as usize].take() {
                    for &r in win.sent() {
                        self.shown.remove(r, w);
                    }
                }
                self.free_windows.push(w);
            }
            if let Some(c) = self.containers.get_mut(&slot.container) {
                let views = &mut self.views;
                unlink(
                    &mut c.views,
                    slot.at,
                    v,
                    |x| *x,
                    |moved, at| {
                        if let Some(m) = views[moved as usize].as_mut() {
                            m.at = at;
                        }
                    },
                );
                c.columns.release(slot.view.reads());
                c.set_slot_bits(slot.view.slots(), slot.bit, false);
                c.bit_views[slot.bit as usize] = u32::MAX;
                for (&f, &at) in slot.view.reads().iter().zip(&slot.reader_at) {
                    let Some(list) = c.by_field.get_mut(&f) else { continue };
                    unlink(
                        list,
                        at,
                        v,
                        |r| r.view,
                        |moved, at| {
                            if let Some(m) = views[moved as usize].as_mut() {
                                if let Ok(i) = m.view.reads().binary_search(&f) {
                                    m.reader_at[i] = at;
                                }
                            }
                        },
                    );
                    if list.is_empty() {
                        c.by_field.remove(&f);
                    }
                }
            }
            self.free_views.push(v);
        }
        done.len()
    }

    /// u64 words of membership bits per member of `container` (0 when it has no state).
    #[cfg(test)]
    pub(super) fn bit_words(&self, container: u32) -> usize {
        self.containers.get(&container).map_or(0, |c| c.total_words())
    }

    /// Checks that every live view's indexes into its container's lists point at itself.
    #[cfg(test)]
    pub(super) fn assert_links(&self) {
        for (v, slot) in self.views.iter().enumerate() {
            let Some(slot) = slot else { continue };
            let c = &self.containers[&slot.container];
            assert_eq!(c.views[slot.at as usize], v as u32, "view {v} in the container's views");
            for (f, &at) in slot.view.reads().iter().zip(&slot.reader_at) {
                assert_eq!(c.by_field[f][at as usize].view, v as u32, "view {v} reading field {f}");
            }
        }
    }

    /// The view `id`.
    pub fn view(&self, id: u32) -> Option<&View> {
        self.views.get(id as usize).and_then(Option::as_ref).map(|s| &s.view)
    }

    /// References held on view `id` (0 in its grace period).
    pub fn refs(&self, id: u32) -> Option<u32> {
        self.registry.refs(id)
    }

    /// When (ms, the clock passed to `release`) the next unreferenced view expires; `None` when
    /// every view is referenced.
    pub fn next_expiry(&self) -> Option<u64> {
        self.registry.next_expiry()
    }

    /// Every live view (referenced or in grace), by view id. O(views).
    pub fn infos(&self) -> Vec<ViewInfo> {
        self.views
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let s = s.as_ref()?;
                let key = self.registry.key(i as u32)?;
                Some(ViewInfo {
                    view: i as u32,
                    container: s.container,
                    filter: key.filter.clone(),
                    sort: key.sort.clone(),
                    rows: s.view.len(),
                    windows: s.windows.len(),
                    refs: self.registry.refs(i as u32).unwrap_or(0),
                    updates: self
                        .containers
                        .get(&s.container)
                        .map_or(0, |c| c.bit_updates[s.bit as usize]),
                    build_us: s.build_us,
                })
            })
            .collect()
    }

    /// Number of live views (referenced or in grace).
    pub fn view_count(&self) -> usize {
        self.registry.len()
    }

    /// Number of containers ever published to or viewed.
    pub fn container_count(&self) -> usize {
        self.containers.len()
    }

    /// Number of open windows (one per subscriber of a view).
    pub fn window_count(&self) -> usize {
        self.windows.len() - self.free_windows.len()
    }

    /// Record `id` was updated; `changed` = changed field ids, sorted ascending. Re-evaluates
    /// only views (of containers holding `id`) whose filter or sort reads a changed field, and
    /// notes the field update for windows. Returns the number of views re-evaluated.
    pub fn record_updated<R: Records + ?Sized>(&mut self, id: u32, changed: &[u32], records: &R) -> usize {
        let Some(first) = self.home.get(id) else {
            return 0;
        };
        let mut n = self.update_in(first, id, changed, records);
        if let Some(more) = self.more_homes.get(&id) {
            for c in more.clone() {
                n += self.update_in(c, id, changed, records);
            }
        }
        n
    }

    fn update_in<R: Records + ?Sized>(&mut self, container: u32, id: u32, changed: &[u32], records: &R) -> usize {
        let Some(c) = self.containers.get_mut(&container) else {
            return 0;
        };
        if c.views.is_empty() {
            return 0;
        }
        let Some(slot) = c.container.slot_of(id) else {
            return 0;
        };
        if c.updated.is_empty() && c.dirty.is_empty() {
            self.dirty_containers.push(container);
        }
        // Counted once per flush for the views holding the row (`ViewInfo::updates`).
        c.note_updated(slot);
        // Field changes are kept only for rows some window shows: nothing else reads them (a
        // row not shown now is not shown at the flush either, since between flushes windows only
        // close; a row entering a window goes out as an image). Most rows of a large container
        // (a blotter's done trades, rows below every window) cost no map entry or list.
        if !self.shown.windows(id).is_empty() {
            match c.dirty.entry(id) {
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(self.pool.fields(changed));
                }
                std::collections::hash_map::Entry::Occupied(mut e) => {
                    // A second update of the row before the flush: one merged (conflated) update.
                    let d = e.get_mut();
                    d.extend_from_slice(changed);
                    d.sort_unstable();
                    d.dedup();
                    c.merged.insert(id);
                }
            }
        }
        if !changed.iter().any(|f| c.by_field.contains_key(f)) {
            return 0;
        }
        let mut differ = std::mem::take(&mut self.differ);
        differ.clear();
        c.columns.updated(slot, id, changed, records, &mut differ);
        if !differ.iter().any(|f| c.by_field.contains_key(f)) {
            self.differ = differ;
            return 0; // only values no view reads changed (e.g. an image republished as it was)
        }
        let changed: &[u32] = &differ;
        c.ensure_slots();
        // Several changed fields may lead to the same view: stamp views to visit each once.
        let dedupe = changed.len() > 1;
        if dedupe {
            self.stamp = self.stamp.wrapping_add(1);
            if self.stamp == 0 {
                self.stamps.iter_mut().for_each(|s| *s = 0);
                self.stamp = 1;
            }
        }
        let mut fan = Fan {
            c,
            views: &mut self.views,
            stamps: &mut self.stamps,
            stamp: if dedupe { self.stamp } else { 0 },
            id,
            base: slot as usize,
            changed,
            records,
            touched: &mut self.touched,
        };
        let n = match records.row(id) {
            Some(row) => fan.run(row),
            None => fan.run(&EmptyRow),
        };
        self.differ = differ;
        n
    }

    /// Approximate heap bytes held by containers and views (not records), for memory accounting.
    pub fn heap_bytes(&self) -> usize {
        let c: usize = self.containers.values().map(|c| c.container.heap_bytes()).sum();
        let v: usize = self.views.iter().flatten().map(|s| s.view.heap_bytes()).sum();
        c + v + self.home.heap_bytes() + self.shown.heap_bytes()
    }
}
