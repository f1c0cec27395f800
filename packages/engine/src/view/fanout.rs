//! The per-container state behind `ViewSet`'s fan-out: views indexed by the fields they read,
//! per-member membership bits (one bit per view), conflated field updates, and the hot loop that
//! checks one record update against every view reading a changed field.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::columns::Columns;
use super::set::ViewSlot;
use super::sort::Sort;
use super::{intersects, Records};
use crate::container::Container;
use crate::filter::{Filter, Row};

/// Words per member slot of a membership bit plane (512 views): one cache line per member.
pub(super) const PLANE_WORDS: usize = 8;

/// A view as seen from the fan-out loop: enough to decide without touching the view.
#[derive(Debug, Clone)]
pub(super) struct Reader {
    pub(super) view: u32,
    pub(super) bit: u32,
    pub(super) filter: Arc<Filter>,
    pub(super) sort: Arc<Sort>,
}

#[derive(Debug, Default)]
pub(super) struct ContainerState {
    pub(super) container: Container,
    /// Views over this container (view ids).
    pub(super) views: Vec<u32>,
    /// field id -> views reading it.
    pub(super) by_field: FxHashMap<u32, Vec<Reader>>,
    /// Updated rows shown by some window since the last flush -> changed field ids (sorted,
    /// conflated). Rows no window shows are only in `updated`.
    pub(super) dirty: FxHashMap<u32, Vec<u32>>,
    /// Member slots updated since the last flush, each once (`ViewInfo::updates` counts their
    /// membership bits at the flush); `updated_flag[slot]` says a slot is listed.
    pub(super) updated: Vec<u32>,
    pub(super) updated_flag: Vec<bool>,
    /// Rows of `dirty` updated more than once since the last flush (their update is conflated).
    pub(super) merged: rustc_hash::FxHashSet<u32>,
    /// Membership bits, bit k = "row of the view holding bit k", in planes of `words` u64 per
    /// member slot: plane p holds bits `p * 64 * words ..`. One plane widens by doubling up to
    /// `PLANE_WORDS`; past that each 512 more views add a plane, so no widening copies the bits
    /// already set (a copy of every member's bits on the engine thread stalled the `view.create`
    /// that hit it: ~25-100 ms at 64,000 members and 1,024 / 2,048 views).
    pub(super) bits: Vec<Vec<u64>>,
    pub(super) words: usize,
    /// bit -> view id (`u32::MAX` = free bit).
    pub(super) bit_views: Vec<u32>,
    /// bit -> cumulative row updates of the view holding the bit (`ViewInfo::updates`; reset
    /// when the bit is taken by a new view).
    pub(super) bit_updates: Vec<u64>,
    /// Column copies of the fields views read (what a new view's build scans).
    pub(super) columns: Columns,
}

impl ContainerState {
    pub(super) fn ensure_slots(&mut self) {
        let need = self.container.slot_bound() * self.words;
        for plane in &mut self.bits {
            if plane.len() < need {
                plane.resize(need.max(plane.len() * 3 / 2), 0);
            }
        }
    }

    /// The plane and the index in it of view bit `bit`'s word for member slot `slot`.
    #[inline]
    pub(super) fn at(&self, slot: usize, bit: u32) -> (usize, usize) {
        let per_plane = self.words.max(1) * 64;
        let b = bit as usize;
        (b / per_plane, slot * self.words + (b % per_plane) / 64)
    }

    /// Clears every membership bit (the container was cleared).
    pub(super) fn clear_bits(&mut self) {
        for plane in &mut self.bits {
            plane.clear();
        }
    }

    /// u64 words of membership bits per member slot, over all planes.
    pub(super) fn total_words(&self) -> usize {
        self.words * self.bits.len()
    }

    /// Lists member slot `slot` as updated since the last flush (once per flush).
    #[inline]
    pub(super) fn note_updated(&mut self, slot: u32) {
        let i = slot as usize;
        if self.updated_flag.len() <= i {
            self.updated_flag.resize(self.container.slot_bound().max(i + 1), false);
        }
        if !self.updated_flag[i] {
            self.updated_flag[i] = true;
            self.updated.push(slot);
        }
    }

    /// The member at `slot` left: its update (if any) is not counted at the flush.
    pub(super) fn forget_updated(&mut self, slot: u32) {
        if let Some(f) = self.updated_flag.get_mut(slot as usize) {
            *f = false;
        }
    }

    /// Every member left (a clear): no update is counted at the flush.
    pub(super) fn forget_all_updated(&mut self) {
        for &s in &self.updated {
            if let Some(f) = self.updated_flag.get_mut(s as usize) {
                *f = false;
            }
        }
        self.updated.clear();
    }

    pub(super) fn set_bit(&mut self, id: u32, bit: u32, on: bool) {
        if let Some(slot) = self.container.slot_of(id) {
            self.ensure_slots();
            let (p, i) = self.at(slot as usize, bit);
            if let Some(w) = self.bits.get_mut(p).and_then(|plane| plane.get_mut(i)) {
                let m = 1u64 << (bit % 64);
                if on {
                    *w |= m;
                } else {
                    *w &= !m;
                }
            }
        }
    }

    /// Sets (`on`) or clears view bit `bit` of the members in `slots` (slots below
    /// [`Container::slot_bound`]; others are skipped). No id lookups: what a view's build (its
    /// scan knows each row's slot) and its expiry (its index entries keep their slot) use.
    pub(super) fn set_slot_bits(&mut self, slots: impl Iterator<Item = u32>, bit: u32, on: bool) {
        self.ensure_slots();
        let (words, m) = (self.words, 1u64 << (bit % 64));
        let (p, word) = self.at(0, bit);
        let Some(plane) = self.bits.get_mut(p) else { return };
        for s in slots {
            if let Some(w) = plane.get_mut(s as usize * words + word) {
                if on {
                    *w |= m;
                } else {
                    *w &= !m;
                }
            }
        }
    }

    pub(super) fn clear_row(&mut self, id: u32) {
        if let Some(slot) = self.container.slot_of(id) {
            let base = slot as usize * self.words;
            for plane in &mut self.bits {
                if let Some(ws) = plane.get_mut(base..base + self.words) {
                    ws.fill(0);
                }
            }
        }
    }

    /// A free bit for a new view. When all are taken: a single plane narrower than
    /// `PLANE_WORDS` words per member widens to twice its words (a copy of O(members x words),
    /// at most `PLANE_WORDS / 2` words per member; widening by one word each 64 views cost the
    /// view.create that hit it ~10 ms at 64,000 members and ~1,800 views); a full-width plane
    /// gets a new zeroed plane beside it instead, copying nothing.
    pub(super) fn take_bit(&mut self, view: u32) -> u32 {
        if let Some(b) = self.bit_views.iter().position(|&v| v == u32::MAX) {
            self.bit_views[b] = view;
            self.bit_updates[b] = 0;
            return b as u32;
        }
        let b = self.bit_views.len();
        self.bit_views.push(view);
        self.bit_updates.push(0);
        if b >= self.total_words() * 64 {
            let slots = self.container.slot_bound();
            if self.words >= PLANE_WORDS {
                self.bits.push(vec![0u64; slots * self.words]);
            } else {
                let (old, new) = (self.words, (self.words * 2).max(1));
                let mut bits = vec![0u64; slots * new];
                if let Some(plane) = self.bits.first() {
                    for s in 0..slots.min(plane.len() / old.max(1)) {
                        bits[s * new..s * new + old].copy_from_slice(&plane[s * old..s * old + old]);
                    }
                }
                self.bits = vec![bits];
                self.words = new;
            }
        }
        b as u32
    }
}

/// Removes view `v`'s entry from `list`, where it sits at index `at`, by swapping the last entry
/// into its place; `moved(view, at)` tells the owner of the moved entry its new index. An entry
/// not at `at` (an index out of step, which the bookkeeping rules out) is found by a search
/// instead, so the list stays right either way.
pub(super) fn unlink<T>(
    list: &mut Vec<T>,
    at: u32,
    v: u32,
    view_of: impl Fn(&T) -> u32,
    mut moved: impl FnMut(u32, u32),
) {
    let at = match list.get(at as usize) {
        Some(x) if view_of(x) == v => at as usize,
        _ => match list.iter().position(|x| view_of(x) == v) {
            Some(i) => i,
            None => return,
        },
    };
    list.swap_remove(at);
    if let Some(x) = list.get(at) {
        moved(view_of(x), at as u32);
    }
}

/// One record update fanned out over one container's views.
pub(super) struct Fan<'a, R: Records + ?Sized> {
    pub(super) c: &'a mut ContainerState,
    pub(super) views: &'a mut [Option<ViewSlot>],
    pub(super) stamps: &'a mut [u32],
    /// 0 = no dedupe needed (one changed field).
    pub(super) stamp: u32,
    pub(super) id: u32,
    pub(super) base: usize,
    pub(super) changed: &'a [u32],
    pub(super) records: &'a R,
    /// Views whose rows changed since the last flush (each listed once: `ViewSlot::queued`).
    pub(super) touched: &'a mut Vec<u32>,
}

impl<R: Records + ?Sized> Fan<'_, R> {
    /// The hot loop: per view reading a changed field, evaluate the compiled filter against the
    /// row and test the member bit; only a change reaches the view's index.
    pub(super) fn run<Rw: Row + ?Sized>(&mut self, row: &Rw) -> usize {
        let ContainerState {
            container,
            by_field,
            bits,
            words,
            ..
        } = &mut *self.c;
        let base = self.base * *words;
        let per_plane = (*words).max(1) * 64;
        let mut n = 0;
        for f in self.changed {
            let Some(list) = by_field.get(f) else {
                continue;
            };
            for r in list {
                if self.stamp != 0 {
                    let seen = &mut self.stamps[r.view as usize];
                    if *seen == self.stamp {
                        continue;
                    }
                    *seen = self.stamp;
                }
                n += 1;
                let b = r.bit as usize;
                let Some(word) = bits
                    .get_mut(b / per_plane)
                    .and_then(|plane| plane.get_mut(base + (b % per_plane) / 64))
                else {
                    continue; // a bit is always within the planes (`take_bit`, `ensure_slots`)
                };
                let mask = 1u64 << (r.bit % 64);
                let was = *word & mask != 0;
                let now = r.filter.matches(row);
                if was == now && !(now && intersects(self.changed, r.sort.fields())) {
                    continue;
                }
                if now != was {
                    *word ^= mask;
                }
                if let Some(slot) = self.views[r.view as usize].as_mut() {
                    let sort_changed = intersects(self.changed, r.sort.fields());
                    if slot.view.settle(self.id, now, sort_changed, container, self.records) {
                        slot.queue(r.view, self.touched);
                    }
                }
            }
        }
        n
    }
}
