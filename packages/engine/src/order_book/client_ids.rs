//! `ClientIds`: one user's client order id -> order id, in `SHARDS` hash maps.
//!
//! One map per user doubled and rehashed every client order id at once: in the orders bench (8
//! users) each user's map stalled the engine thread 2-6 ms at 28,672 and 57,344 orders, all eight
//! back to back, and the durable book's copy did it again; a single user with 458,752 orders stalls
//! for the whole table. Split by hash, a shard holds 1/16 of the ids and the shards fill at slightly
//! different counts, so their rehashes come one at a time, each 1/16 of the work.

use std::hash::BuildHasher;

use rustc_hash::{FxBuildHasher, FxHashMap};

/// Maps per user (a power of two): few enough that an idle user costs little (maps allocate
/// nothing until they hold an id).
pub const SHARDS: usize = 16;

/// A user's client order ids; see the module doc.
#[derive(Debug, Default, Clone)]
pub struct ClientIds {
    /// `SHARDS` maps once the first id is inserted.
    shards: Vec<FxHashMap<String, u64>>,
    len: usize,
}

/// The shard of `client_order_id`: hash bits 40.. (a map indexes buckets with the low bits and
/// tags them with the top 7, so these leave both as random as before).
fn shard(client_order_id: &str) -> usize {
    (FxBuildHasher.hash_one(client_order_id) >> 40) as usize & (SHARDS - 1)
}

impl ClientIds {
    /// Number of ids.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there is no id.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The order id of `client_order_id`.
    pub fn get(&self, client_order_id: &str) -> Option<u64> {
        self.shards.get(shard(client_order_id))?.get(client_order_id).copied()
    }

    /// True when `client_order_id` is taken.
    pub fn contains(&self, client_order_id: &str) -> bool {
        self.get(client_order_id).is_some()
    }

    /// Maps `client_order_id` to `order_id`; returns the id it replaced.
    pub fn insert(&mut self, client_order_id: String, order_id: u64) -> Option<u64> {
        if self.shards.is_empty() {
            self.shards.resize_with(SHARDS, FxHashMap::default);
        }
        let old = self.shards[shard(&client_order_id)].insert(client_order_id, order_id);
        if old.is_none() {
            self.len += 1;
        }
        old
    }

    /// Capacity of each shard (for tests of the growth).
    #[cfg(test)]
    fn capacities(&self) -> Vec<usize> {
        self.shards.iter().map(FxHashMap::capacity).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_ids_and_replaces() {
        let mut m = ClientIds::default();
        assert!(m.is_empty() && m.get("a").is_none() && !m.contains("a"));
        assert_eq!(m.insert("a".into(), 1), None);
        assert_eq!(m.insert("b".into(), 2), None);
        assert_eq!(m.insert("a".into(), 3), Some(1));
        assert_eq!(
            (m.len(), m.get("a"), m.get("b"), m.get("c")),
            (2, Some(3), Some(2), None)
        );
        assert!(m.contains("b"));
    }

    #[test]
    fn ids_spread_over_the_shards() {
        let mut m = ClientIds::default();
        let n = 50_000u64;
        for i in 0..n {
            assert_eq!(m.insert(format!("c{i}"), i + 1), None);
        }
        assert_eq!(m.len(), n as usize);
        let sizes: Vec<usize> = m.shards.iter().map(|s| s.len()).collect();
        let even = n as usize / SHARDS;
        assert!(
            sizes.iter().all(|&s| s > even / 2 && s < even * 2),
            "shard sizes {sizes:?}, even {even}"
        );
        // No shard is sized for the whole set: a growth rehashes one shard, not every id.
        assert!(
            m.capacities().iter().all(|&c| c < n as usize / 4),
            "{:?}",
            m.capacities()
        );
        for i in (0..n).step_by(97) {
            assert_eq!(m.get(&format!("c{i}")), Some(i + 1));
        }
        assert_eq!(m.get("c50000"), None);
    }
}
