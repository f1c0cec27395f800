//! `IdMap`: a `u32 -> u32` map (subject id -> slot or handle) whose growth never rehashes
//! every entry at once.
//!
//! A container's member index (id -> treap slot), the view set's record -> container map and a
//! view's row index (id -> index handle) grow by one entry per row: a user's blotter grows by
//! every order. One `FxHashMap` doubled and rehashed all of them at once on the engine thread:
//! 6 ms at 229,376 rows and 12 ms at 458,752 for the two maps a blotter insert touches (more with a
//! view open). Here a map past `SPLIT_AT` entries is split in `SHARDS` maps by hash bits the maps
//! do not use themselves; a shard holds 1/64 of the ids and the shards fill at slightly different
//! counts, so their rehashes come one at a time, each 1/64 of the work. Maps below `SPLIT_AT`
//! (most containers and views) stay one map: same memory and speed as before.

use std::hash::BuildHasher;

use rustc_hash::{FxBuildHasher, FxHashMap};

/// Maps once split (a power of two).
pub const SHARDS: usize = 64;

/// Entries at which one map is split in `SHARDS` (a one-time move of this many entries, ~0.1 ms).
pub const SPLIT_AT: usize = 4096;

/// The shard of `id`: FxHash bits 40.. (a map indexes buckets with the low bits and tags them with
/// the top 7, so these leave both as random as before).
#[inline]
fn shard(id: u32) -> usize {
    (FxBuildHasher.hash_one(id) >> 40) as usize & (SHARDS - 1)
}

/// Room for one shard's share of `total` entries plus the spread of the shard sizes (~4
/// standard deviations), so no shard grows while they are filled.
fn shard_room(total: usize) -> usize {
    let share = total / SHARDS;
    share + 4 * share.isqrt() + 8
}

/// A `u32 -> u32` map; see the module doc.
#[derive(Debug, Default, Clone)]
pub struct IdMap {
    /// Empty, one map (below `SPLIT_AT` entries), or `SHARDS` maps.
    shards: Vec<FxHashMap<u32, u32>>,
    len: usize,
}

impl IdMap {
    /// An empty map (allocates nothing).
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of entries.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there is no entry.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn map_of(&self, id: u32) -> Option<&FxHashMap<u32, u32>> {
        match self.shards.len() {
            0 => None,
            1 => self.shards.first(),
            _ => self.shards.get(shard(id)),
        }
    }

    #[inline]
    fn map_of_mut(&mut self, id: u32) -> Option<&mut FxHashMap<u32, u32>> {
        match self.shards.len() {
            0 => None,
            1 => self.shards.first_mut(),
            _ => self.shards.get_mut(shard(id)),
        }
    }

    /// The value of `id`.
    #[inline]
    pub fn get(&self, id: u32) -> Option<u32> {
        self.map_of(id)?.get(&id).copied()
    }

    /// True when `id` has a value.
    #[inline]
    pub fn contains_key(&self, id: u32) -> bool {
        self.get(id).is_some()
    }

    /// Sets the value of `id`; returns the value it replaced.
    pub fn insert(&mut self, id: u32, value: u32) -> Option<u32> {
        if self.shards.is_empty() {
            self.shards.push(FxHashMap::default());
        } else if self.shards.len() == 1 && self.len >= SPLIT_AT {
            self.split();
        }
        let old = self.map_of_mut(id).expect("a map was just ensured").insert(id, value);
        if old.is_none() {
            self.len += 1;
        }
        old
    }

    /// Removes `id`; returns its value.
    pub fn remove(&mut self, id: u32) -> Option<u32> {
        let old = self.map_of_mut(id)?.remove(&id);
        if old.is_some() {
            self.len -= 1;
        }
        old
    }

    /// Makes room for `additional` more entries (spread over the shards when the total passes
    /// `SPLIT_AT`), so a bulk load grows no map while it inserts.
    pub fn reserve(&mut self, additional: usize) {
        let total = self.len + additional;
        if self.shards.is_empty() {
            self.shards.push(FxHashMap::default());
        }
        if self.shards.len() == 1 && total > SPLIT_AT {
            self.split();
        }
        let per = if self.shards.len() > 1 {
            shard_room(total)
        } else {
            total
        };
        for m in &mut self.shards {
            m.reserve(per.saturating_sub(m.len()));
        }
    }

    /// Removes every entry and frees the maps.
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Moves the entries of the one map into `SHARDS` maps.
    fn split(&mut self) {
        let one = std::mem::take(&mut self.shards[0]);
        let per = shard_room(one.len());
        self.shards = (0..SHARDS)
            .map(|_| FxHashMap::with_capacity_and_hasher(per, FxBuildHasher))
            .collect();
        for (id, value) in one {
            self.shards[shard(id)].insert(id, value);
        }
    }

    /// Approximate heap bytes held (one `(u32, u32)` bucket plus one control byte per slot, and
    /// the maps' headers), for memory accounting.
    pub fn heap_bytes(&self) -> usize {
        self.shards.capacity() * std::mem::size_of::<FxHashMap<u32, u32>>()
            + self.shards.iter().map(|m| m.capacity() * 9).sum::<usize>()
    }

    /// Capacity of each map (for tests of the growth).
    #[cfg(test)]
    fn capacities(&self) -> Vec<usize> {
        self.shards.iter().map(FxHashMap::capacity).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_replaces_and_removes_across_the_split() {
        let mut m = IdMap::new();
        assert!(m.is_empty() && m.get(1).is_none() && m.remove(1).is_none());
        assert_eq!(m.heap_bytes(), 0, "an empty map allocates nothing");
        let n = 3 * SPLIT_AT as u32;
        for id in 0..n {
            assert_eq!(m.insert(id, id * 2), None);
            if id as usize + 1 == SPLIT_AT {
                assert_eq!(m.capacities().len(), 1, "one map up to SPLIT_AT entries");
            }
        }
        assert_eq!(m.capacities().len(), SHARDS, "split past SPLIT_AT");
        assert_eq!(m.len(), n as usize);
        for id in 0..n {
            assert_eq!(m.get(id), Some(id * 2), "id {id}");
        }
        assert_eq!(m.get(n), None);
        assert_eq!(m.insert(7, 1), Some(14));
        assert_eq!(m.len(), n as usize, "a replace adds nothing");
        for id in (0..n).step_by(2) {
            assert_eq!(m.remove(id), Some(if id == 7 { 1 } else { id * 2 }));
        }
        assert_eq!(m.remove(0), None);
        assert_eq!(m.len(), n as usize / 2);
        assert!(!m.contains_key(4) && m.contains_key(5) && m.get(7) == Some(1));
        m.clear();
        assert!(m.is_empty() && m.get(5).is_none() && m.heap_bytes() == 0);
        assert_eq!(m.insert(5, 9), None);
        assert_eq!((m.len(), m.get(5)), (1, Some(9)));
    }

    #[test]
    fn reserve_makes_room_in_every_shard() {
        let mut small = IdMap::new();
        small.reserve(100);
        assert_eq!(small.capacities().len(), 1, "a small load stays one map");
        assert!(small.capacities()[0] >= 100);
        let mut m = IdMap::new();
        m.insert(1, 1);
        let n = 100_000u32;
        m.reserve(n as usize);
        let before = m.capacities();
        assert_eq!(before.len(), SHARDS, "a large load splits first");
        for id in 2..=n {
            m.insert(id, id);
        }
        assert_eq!(m.capacities(), before, "no map grew during the load");
        assert_eq!((m.len(), m.get(1), m.get(n)), (n as usize, Some(1), Some(n)));
    }

    #[test]
    fn ids_spread_over_the_shards_and_each_grows_alone() {
        let mut m = IdMap::new();
        // Dense subject ids, as the interner hands them out.
        let n = 200_000u32;
        for id in 1..=n {
            m.insert(id, id);
        }
        let sizes: Vec<usize> = m.shards.iter().map(|s| s.len()).collect();
        let even = n as usize / SHARDS;
        let (min, max) = (*sizes.iter().min().unwrap(), *sizes.iter().max().unwrap());
        assert!(
            min > even * 3 / 4 && max < even * 5 / 4,
            "shard sizes {min}..{max}, even {even}"
        );
        // No shard is near the size of the whole: a growth rehashes about 1/64 of the ids.
        let biggest = *m.capacities().iter().max().unwrap();
        assert!(biggest < n as usize / 16, "biggest shard capacity {biggest}");
        assert!(m.heap_bytes() >= n as usize * 9);
    }
}
