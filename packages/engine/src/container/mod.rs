//! Containers: ordered sets of record subject ids. Natural order = position. Insert at a position,
//! remove, and position-of are O(log n) (an order-statistic treap plus an id -> node map).
//! Each member also carries an order label (`u64`, increasing in natural order), so views compare
//! natural order in O(1) without a rank walk; labels are spread evenly again (O(n)) only when an
//! insert finds no gap between its neighbours (after ~32 inserts at one interior spot; front inserts
//! and appends step by a fixed amount and relabel only after ~2^30 of them).

pub mod id_map;
pub mod ostree;

pub use id_map::IdMap;
pub use ostree::OsTree;

use crate::error::{EngineError, Result};

/// Most members one container may hold. @default 16,777,216 (well past the 1,000,000 required).
pub const MAX_CONTAINER_MEMBERS: usize = tidewire_protocol::limits::MAX_VIEW_OFFSET;

/// An ordered set of subject ids (each at most once).
#[derive(Debug, Default, Clone)]
pub struct Container {
    order: OsTree<u32>,
    /// id -> treap handle (the member's slot); sharded past 4,096 members (see [`IdMap`]).
    nodes: IdMap,
    /// Order label per slot (treap handle); meaningful for live members only.
    labels: Vec<u64>,
}

/// Label distance between consecutive appends.
const LABEL_STEP: u64 = 1 << 32;
/// Label of the first member of an empty container: the middle of the label space, leaving as
/// much room for front inserts as for appends.
const LABEL_ORIGIN: u64 = 1 << 63;

impl Container {
    /// An empty container.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// True when `id` is a member.
    pub fn contains(&self, id: u32) -> bool {
        self.nodes.contains_key(id)
    }

    /// Appends `id` at the end. Returns its position; an id already present stays where it is
    /// (`BAD_REQUEST`), as does one past `MAX_CONTAINER_MEMBERS` (`LIMIT_EXCEEDED`).
    pub fn push(&mut self, id: u32) -> Result<usize> {
        self.insert_at(self.len(), id)
    }

    /// Inserts `id` at `pos` (0 = first; `pos > len` appends). Returns the position it got.
    /// Errors: `id` already a member (`BAD_REQUEST`, nothing changes); container full (`LIMIT_EXCEEDED`).
    pub fn insert_at(&mut self, pos: usize, id: u32) -> Result<usize> {
        if self.nodes.contains_key(id) {
            return Err(EngineError::bad_request(
                format!(
                    "subject id {id} is already in the container (at {})",
                    self.position_of(id).unwrap_or(0)
                ),
                Some("subject"),
                None,
            ));
        }
        if self.len() >= MAX_CONTAINER_MEMBERS {
            return Err(EngineError::LimitExceeded {
                message: format!("a container holds at most {MAX_CONTAINER_MEMBERS} members"),
            });
        }
        let pos = pos.min(self.len());
        let h = self.order.insert_at(pos, id);
        self.nodes.insert(id, h);
        if self.labels.len() <= h as usize {
            self.labels.resize(h as usize + 1, 0);
        }
        let lo = match pos {
            0 => None,
            p => self.order.at(p - 1).map(|x| self.labels[x as usize]),
        };
        let hi = self.order.next(h).map(|x| self.labels[x as usize]);
        let label = match (lo, hi) {
            (None, None) => Some(LABEL_ORIGIN),
            (Some(lo), None) => lo.checked_add(LABEL_STEP),
            // At the front (blotters insert newest first): a fixed step down, like appends step up,
            // so a front-inserting container relabels once per ~2^30 inserts, not once per ~60.
            (None, Some(hi)) if hi > LABEL_STEP => Some(hi - LABEL_STEP),
            (lo, Some(hi)) => {
                let lo = lo.unwrap_or(0);
                (hi - lo >= 2).then(|| lo + (hi - lo) / 2)
            }
        };
        match label {
            Some(l) => self.labels[h as usize] = l,
            None => self.relabel(),
        }
        Ok(pos)
    }

    /// Spreads labels evenly over the middle half of the label space (a quarter stays free at each
    /// end, for front inserts and appends). O(n).
    fn relabel(&mut self) {
        let step = (u64::MAX / 2 / (self.len() as u64 + 1)).max(2);
        let mut h = self.order.at(0);
        let mut l = LABEL_ORIGIN - (u64::MAX / 4) + step;
        while let Some(x) = h {
            self.labels[x as usize] = l;
            l += step;
            h = self.order.next(x);
        }
    }

    /// Order label of the member in slot `slot` (see [`Container::slot_of`]): labels increase in
    /// natural order (`u64::MAX` for a slot never used). Valid until the next insert or remove (a relabel keeps their order).
    #[inline]
    pub fn label(&self, slot: u32) -> u64 {
        self.labels.get(slot as usize).copied().unwrap_or(u64::MAX)
    }

    /// Removes `id`; returns the position it had, `None` if it was not a member.
    pub fn remove(&mut self, id: u32) -> Option<usize> {
        let h = self.nodes.remove(id)?;
        let pos = self.order.rank(h);
        self.order.remove(h);
        Some(pos)
    }

    /// Removes every member.
    pub fn clear(&mut self) {
        self.order.clear();
        self.nodes.clear();
        self.labels = Vec::new();
    }

    /// Position of `id`, `None` if not a member. O(log n).
    pub fn position_of(&self, id: u32) -> Option<usize> {
        self.nodes.get(id).map(|h| self.order.rank(h))
    }

    /// The member at `pos`, `None` past the end. O(log n).
    pub fn at(&self, pos: usize) -> Option<u32> {
        self.order.at(pos).map(|h| *self.order.get(h))
    }

    /// Members from `start` in natural order.
    pub fn iter_from(&self, start: usize) -> impl Iterator<Item = u32> + '_ {
        self.order.iter_from(start).copied()
    }

    /// Members in natural order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.iter_from(0)
    }

    /// A dense slot number of member `id` (stable while it is a member; reused after it leaves),
    /// below [`Container::slot_bound`]: lets callers keep per-member data in flat arrays.
    pub fn slot_of(&self, id: u32) -> Option<u32> {
        self.nodes.get(id)
    }

    /// One past the highest slot number handed out so far.
    pub fn slot_bound(&self) -> usize {
        self.order.arena_len()
    }

    /// Approximate heap bytes held (tree arena + id map capacity), for memory accounting.
    pub fn heap_bytes(&self) -> usize {
        self.order.heap_bytes() + self.nodes.heap_bytes() + self.labels.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_set_operations() {
        let mut c = Container::new();
        assert_eq!(c.push(10).unwrap(), 0);
        assert_eq!(c.push(20).unwrap(), 1);
        assert_eq!(c.insert_at(1, 15).unwrap(), 1);
        assert_eq!(c.insert_at(0, 5).unwrap(), 0);
        assert_eq!(c.insert_at(99, 30).unwrap(), 4);
        assert_eq!(c.iter().collect::<Vec<_>>(), [5, 10, 15, 20, 30]);
        let e = c.push(15).unwrap_err();
        assert_eq!(e.code(), crate::ErrorCode::BadRequest);
        assert_eq!(e.to_string(), "subject id 15 is already in the container (at 2)");
        assert_eq!(c.position_of(20), Some(3));
        assert_eq!(c.at(3), Some(20));
        assert_eq!(c.remove(10), Some(1));
        assert_eq!(c.remove(10), None);
        assert_eq!(c.position_of(20), Some(2));
        assert!(c.contains(30) && !c.contains(10));
        assert_eq!(c.iter_from(2).collect::<Vec<_>>(), [20, 30]);
        c.clear();
        assert!(c.is_empty());
        assert_eq!(c.at(0), None);
        c.push(1).unwrap();
        assert_eq!(c.iter().collect::<Vec<_>>(), [1]);
    }

    #[test]
    fn labels_follow_natural_order_through_relabels() {
        let mut c = Container::new();
        for id in 0..100u32 {
            c.push(id).unwrap();
        }
        // 200 inserts at one spot exhaust the gap there several times.
        for id in 100..300u32 {
            c.insert_at(50, id).unwrap();
            if id % 3 == 0 {
                c.remove(id - 1);
            }
        }
        let labels: Vec<u64> = c.iter().map(|id| c.label(c.slot_of(id).unwrap())).collect();
        assert!(labels.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn front_inserts_step_down_without_respreading_labels() {
        let mut c = Container::new();
        c.push(0).unwrap();
        let first = c.label(c.slot_of(0).unwrap());
        // A blotter: newest first. Each insert at 0 must not respread the others' labels.
        for id in 1..=10_000u32 {
            c.insert_at(0, id).unwrap();
        }
        assert_eq!(c.label(c.slot_of(0).unwrap()), first, "no relabel happened");
        assert_eq!(c.at(0), Some(10_000));
        assert_eq!(c.position_of(0), Some(10_000));
        let labels: Vec<u64> = c.iter().map(|id| c.label(c.slot_of(id).unwrap())).collect();
        assert!(labels.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn member_index_stays_right_across_its_split_and_shard_growths() {
        // Ids spread like subject ids; a blotter inserts at the front, others anywhere.
        let mut c = Container::new();
        let mut v: Vec<u32> = Vec::new();
        let mut seed = 99u64;
        let mut rnd = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n.max(1) as u64) as usize
        };
        let n = 6 * id_map::SPLIT_AT as u32;
        for step in 0..n {
            let id = step * 7 + 3;
            if v.is_empty() || rnd(5) > 0 {
                let at = if rnd(2) == 0 { 0 } else { rnd(v.len() + 1) };
                assert_eq!(c.insert_at(at, id).unwrap(), at);
                v.insert(at, id);
            } else {
                let at = rnd(v.len());
                let gone = v.remove(at);
                assert_eq!(c.remove(gone), Some(at));
                assert!(!c.contains(gone) && c.slot_of(gone).is_none());
            }
            // Check around the split and at a few later points (shards grow past these).
            if (step as usize).abs_diff(id_map::SPLIT_AT) < 3 || step % 4_093 == 0 || step == n - 1 {
                assert_eq!(c.len(), v.len());
                assert_eq!(c.iter().collect::<Vec<_>>(), v);
                let mut slots = std::collections::HashSet::new();
                for (i, &id) in v.iter().enumerate() {
                    assert_eq!(c.position_of(id), Some(i), "step {step} id {id}");
                    let slot = c.slot_of(id).unwrap();
                    assert!((slot as usize) < c.slot_bound() && slots.insert(slot), "slots unique");
                }
                let labels: Vec<u64> = v.iter().map(|&id| c.label(c.slot_of(id).unwrap())).collect();
                assert!(labels.windows(2).all(|w| w[0] < w[1]));
            }
        }
        assert!(c.len() > id_map::SPLIT_AT, "the index was split");
        assert_eq!(c.push(v[0]).unwrap_err().code(), crate::ErrorCode::BadRequest);
        c.clear();
        assert!(c.is_empty() && !c.contains(v[0]) && c.position_of(v[0]).is_none());
    }

    #[test]
    fn holds_a_million_members() {
        let mut c = Container::new();
        for id in 1..=1_000_000u32 {
            c.push(id).unwrap();
        }
        c.insert_at(500_000, 2_000_000).unwrap();
        assert_eq!(c.len(), 1_000_001);
        assert_eq!(c.position_of(2_000_000), Some(500_000));
        assert_eq!(c.position_of(1_000_000), Some(1_000_000));
        assert_eq!(c.at(500_001), Some(500_001));
        assert_eq!(c.remove(1), Some(0));
        assert_eq!(c.position_of(2_000_000), Some(499_999));
    }
}
