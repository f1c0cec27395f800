//! `ChunkedVec`: a vector indexed by dense ids whose items never move as it grows.
//!
//! Tables that grow by one entry per new subject or order (the store's records, the hub's
//! subscriber lists, the order book's orders): a plain `Vec` doubled on the engine thread and
//! copied every entry at once (~12 MB at 262,144 subjects: a 12 ms publish; ~13 MB of orders at
//! 65,536). Here a growth allocates whole chunks of `CHUNK` items; existing items are never
//! copied, and only the small table of chunk pointers grows.

use std::ops::{Index, IndexMut};

/// Items per chunk (a power of two).
pub const CHUNK: usize = 4096;

/// Items by index, in fixed-size chunks; see the module doc.
#[derive(Debug, Clone)]
pub struct ChunkedVec<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for ChunkedVec<T> {
    fn default() -> Self {
        ChunkedVec {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T> ChunkedVec<T> {
    /// Number of items.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there is no item.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The item at `i`; `None` past the end.
    pub fn get(&self, i: usize) -> Option<&T> {
        self.chunks.get(i / CHUNK)?.get(i % CHUNK)
    }

    /// The mutable item at `i`; `None` past the end.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.chunks.get_mut(i / CHUNK)?.get_mut(i % CHUNK)
    }

    /// Appends `item` (never moves the items already held) and returns it.
    pub fn push(&mut self, item: T) -> &T {
        if self.len.is_multiple_of(CHUNK) {
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        let chunk = self.chunks.last_mut().expect("a chunk with room was just ensured");
        chunk.push(item);
        self.len += 1;
        chunk.last().expect("just pushed")
    }

    /// Every item, first to last (reversible: `.rev()` is last first).
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + '_ {
        self.chunks.iter().flatten()
    }

    /// Grows to `n` items made by `f` (nothing when it already holds `n` or more).
    pub fn grow_with(&mut self, n: usize, mut f: impl FnMut() -> T) {
        while self.len < n {
            self.push(f());
        }
    }
}

impl<T: PartialEq> PartialEq for ChunkedVec<T> {
    /// Same items in the same order (chunk capacities do not matter).
    fn eq(&self, other: &ChunkedVec<T>) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl<T> Index<usize> for ChunkedVec<T> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        &self.chunks[i / CHUNK][i % CHUNK]
    }
}

impl<T> IndexMut<usize> for ChunkedVec<T> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.chunks[i / CHUNK][i % CHUNK]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_across_chunks_without_moving_items() {
        let mut v = ChunkedVec::<u64>::default();
        assert!(v.is_empty() && v.get(0).is_none());
        let first = v.push(7) as *const u64;
        let n = 2 * CHUNK + 5;
        v.grow_with(n, || 0);
        assert_eq!(v.len(), n);
        assert!(std::ptr::eq(first, v.get(0).unwrap()), "the first item stayed put");
        v.grow_with(3, || 9);
        assert_eq!(v.len(), n, "growing to less is a no-op");
        for i in [1, CHUNK - 1, CHUNK, 2 * CHUNK, n - 1] {
            v[i] = i as u64;
        }
        for i in [CHUNK - 1, CHUNK, 2 * CHUNK, n - 1] {
            assert_eq!((v[i], v.get(i).copied()), (i as u64, Some(i as u64)));
        }
        assert_eq!((v[0], v[2]), (7, 0));
        *v.get_mut(CHUNK + 1).unwrap() = 3;
        assert_eq!(v[CHUNK + 1], 3);
        assert!(v.get(n).is_none() && v.get_mut(n).is_none());
        let items: Vec<u64> = v.iter().copied().collect();
        assert_eq!(items.len(), n);
        assert_eq!(
            (items[0], items[CHUNK], items[n - 1]),
            (7, CHUNK as u64, (n - 1) as u64)
        );
        assert_eq!(v.iter().next_back(), Some(&((n - 1) as u64)));
    }

    #[test]
    fn equality_compares_items_not_capacity() {
        let (mut a, mut b) = (ChunkedVec::default(), ChunkedVec::default());
        for i in 0..=CHUNK as u64 {
            a.push(i);
            b.push(i);
        }
        assert_eq!(a, b);
        b[CHUNK] = 99;
        assert_ne!(a, b);
        b[CHUNK] = CHUNK as u64;
        b.push(1);
        assert_ne!(a, b);
    }

    #[test]
    #[should_panic]
    fn index_past_the_end_panics_like_a_vec() {
        let mut v = ChunkedVec::<u8>::default();
        v.push(1);
        let _ = v[CHUNK];
    }
}
