//! `OsTree<T>`: an order-statistic treap in an arena. Items sit in sequence order (by position or
//! by a caller's comparator); every operation is O(log n) expected: insert at a rank or by
//! comparison, remove by handle, rank of a handle (parent walk), item at a rank.
//!
//! A node is 16 bytes plus the item (left, right, parent, subtree size as `u32`); the heap
//! priority is a hash of the node's arena index, so it costs no memory.

use std::cmp::Ordering;

const NIL: u32 = u32::MAX;

#[derive(Debug, Clone)]
struct Node<T> {
    left: u32,
    right: u32,
    parent: u32,
    /// Nodes in this subtree; 0 marks a free arena slot.
    size: u32,
    item: Option<T>,
}

/// An order-statistic tree of `T`. Handles (`u32`) stay valid until their item is removed.
#[derive(Debug, Clone)]
pub struct OsTree<T> {
    nodes: Vec<Node<T>>,
    root: u32,
    free: Vec<u32>,
}

impl<T> Default for OsTree<T> {
    fn default() -> Self {
        Self {
            nodes: Vec::new(),
            root: NIL,
            free: Vec::new(),
        }
    }
}

/// Heap priority of arena slot `h` (a 32-bit mix: independent of the items' order).
#[inline]
fn prio(h: u32) -> u32 {
    let mut x = h.wrapping_add(0x9E37_79B9);
    x = (x ^ (x >> 16)).wrapping_mul(0x85EB_CA6B);
    x = (x ^ (x >> 13)).wrapping_mul(0xC2B2_AE35);
    x ^ (x >> 16)
}

impl<T> OsTree<T> {
    /// An empty tree.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.size(self.root) as usize
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.root == NIL
    }

    /// Drops every item and the arena.
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Arena slots in use or free (handles are below this).
    pub fn arena_len(&self) -> usize {
        self.nodes.len()
    }

    /// Bytes held by the arena (capacity, not length), for memory accounting.
    pub fn heap_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node<T>>() + self.free.capacity() * 4
    }

    #[inline]
    fn size(&self, h: u32) -> u32 {
        if h == NIL {
            0
        } else {
            self.nodes[h as usize].size
        }
    }

    /// The item of handle `h` (panics on a removed handle: handles are the caller's bookkeeping).
    #[inline]
    pub fn get(&self, h: u32) -> &T {
        self.nodes[h as usize].item.as_ref().expect("live handle")
    }

    /// The item of handle `h`, mutably. Changing what orders the item breaks the tree: remove and re-insert instead.
    #[inline]
    pub fn get_mut(&mut self, h: u32) -> &mut T {
        self.nodes[h as usize].item.as_mut().expect("live handle")
    }

    fn alloc(&mut self, item: T) -> u32 {
        let node = Node {
            left: NIL,
            right: NIL,
            parent: NIL,
            size: 1,
            item: Some(item),
        };
        match self.free.pop() {
            Some(h) => {
                self.nodes[h as usize] = node;
                h
            }
            None => {
                assert!(self.nodes.len() < NIL as usize, "order-statistic tree full");
                self.nodes.push(node);
                self.nodes.len() as u32 - 1
            }
        }
    }

    /// Replaces the contents with `items` in the given order; returns their handles (in that
    /// order). O(n): the treap is built as a Cartesian tree over the arena priorities with one
    /// stack pass, instead of n O(log n) inserts.
    pub fn load(&mut self, items: impl IntoIterator<Item = T>) -> Vec<u32> {
        self.clear();
        self.nodes = items
            .into_iter()
            .map(|item| Node {
                left: NIL,
                right: NIL,
                parent: NIL,
                size: 1,
                item: Some(item),
            })
            .collect();
        assert!(self.nodes.len() < NIL as usize, "order-statistic tree full");
        let n = self.nodes.len() as u32;
        // Right spine of the tree built so far, priorities decreasing from the bottom up.
        let mut spine: Vec<u32> = Vec::new();
        for h in 0..n {
            let p = prio(h);
            let mut last = NIL;
            while let Some(&top) = spine.last() {
                if prio(top) >= p {
                    break;
                }
                last = top;
                spine.pop();
            }
            self.nodes[h as usize].left = last;
            if last != NIL {
                self.nodes[last as usize].parent = h;
            }
            if let Some(&top) = spine.last() {
                self.nodes[top as usize].right = h;
                self.nodes[h as usize].parent = top;
            }
            spine.push(h);
        }
        self.root = spine.first().copied().unwrap_or(NIL);
        // Subtree sizes, children before parents (iterative post-order).
        let mut stack: Vec<(u32, bool)> = Vec::with_capacity(64);
        if self.root != NIL {
            stack.push((self.root, false));
        }
        while let Some((h, done)) = stack.pop() {
            let (l, r) = (self.nodes[h as usize].left, self.nodes[h as usize].right);
            if done {
                self.nodes[h as usize].size = 1 + self.size(l) + self.size(r);
                continue;
            }
            stack.push((h, true));
            for c in [l, r] {
                if c != NIL {
                    stack.push((c, false));
                }
            }
        }
        (0..n).collect()
    }

    /// Inserts `item` so that it gets rank `rank` (0 = first; clamped to `len`). Returns its handle.
    pub fn insert_at(&mut self, rank: usize, item: T) -> u32 {
        let mut r = rank.min(self.len()) as u32;
        let h = self.alloc(item);
        if self.root == NIL {
            self.root = h;
            return h;
        }
        let mut x = self.root;
        loop {
            self.nodes[x as usize].size += 1;
            let ls = self.size(self.nodes[x as usize].left);
            let go_left = r <= ls;
            if !go_left {
                r -= ls + 1;
            }
            let next = if go_left {
                self.nodes[x as usize].left
            } else {
                self.nodes[x as usize].right
            };
            if next == NIL {
                if go_left {
                    self.nodes[x as usize].left = h;
                } else {
                    self.nodes[x as usize].right = h;
                }
                self.nodes[h as usize].parent = x;
                break;
            }
            x = next;
        }
        self.bubble_up(h);
        h
    }

    /// Inserts `item` after every item `cmp` does not order after it (equal items keep insertion
    /// order). `cmp(new, existing)`. Returns its handle.
    pub fn insert_by(&mut self, item: T, mut cmp: impl FnMut(&T, &T) -> Ordering) -> u32 {
        let h = self.alloc(item);
        if self.root == NIL {
            self.root = h;
            return h;
        }
        let mut x = self.root;
        loop {
            self.nodes[x as usize].size += 1;
            let go_left = {
                let (new, old) = (self.get(h), self.get(x));
                cmp(new, old) == Ordering::Less
            };
            let next = if go_left {
                self.nodes[x as usize].left
            } else {
                self.nodes[x as usize].right
            };
            if next == NIL {
                if go_left {
                    self.nodes[x as usize].left = h;
                } else {
                    self.nodes[x as usize].right = h;
                }
                self.nodes[h as usize].parent = x;
                break;
            }
            x = next;
        }
        self.bubble_up(h);
        h
    }

    /// How many items satisfy `before`, which must hold for a prefix of the sequence and fail
    /// after it (e.g. "sorts before some probe"): the rank where such a probe would go. O(log n).
    pub fn count_before(&self, mut before: impl FnMut(&T) -> bool) -> usize {
        let mut x = self.root;
        let mut r = 0;
        while x != NIL {
            let n = &self.nodes[x as usize];
            if before(n.item.as_ref().expect("live")) {
                r += self.size(n.left) as usize + 1;
                x = n.right;
            } else {
                x = n.left;
            }
        }
        r
    }

    fn bubble_up(&mut self, h: u32) {
        let p = prio(h);
        loop {
            let parent = self.nodes[h as usize].parent;
            if parent == NIL || prio(parent) >= p {
                break;
            }
            self.rotate_up(h);
        }
    }

    /// Rotates `x` above its parent, keeping in-order sequence and subtree sizes.
    fn rotate_up(&mut self, x: u32) {
        let p = self.nodes[x as usize].parent;
        let g = self.nodes[p as usize].parent;
        if self.nodes[p as usize].left == x {
            let b = self.nodes[x as usize].right;
            self.nodes[p as usize].left = b;
            if b != NIL {
                self.nodes[b as usize].parent = p;
            }
            self.nodes[x as usize].right = p;
        } else {
            let b = self.nodes[x as usize].left;
            self.nodes[p as usize].right = b;
            if b != NIL {
                self.nodes[b as usize].parent = p;
            }
            self.nodes[x as usize].left = p;
        }
        self.nodes[p as usize].parent = x;
        self.nodes[x as usize].parent = g;
        if g == NIL {
            self.root = x;
        } else if self.nodes[g as usize].left == p {
            self.nodes[g as usize].left = x;
        } else {
            self.nodes[g as usize].right = x;
        }
        let ps = 1 + self.size(self.nodes[p as usize].left) + self.size(self.nodes[p as usize].right);
        self.nodes[p as usize].size = ps;
        self.nodes[x as usize].size = 1 + ps + {
            let n = &self.nodes[x as usize];
            self.size(if n.left == p { n.right } else { n.left })
        };
    }

    /// Removes the item of handle `h` and returns it; the handle may be reused afterwards.
    pub fn remove(&mut self, h: u32) -> T {
        loop {
            let (l, r) = (self.nodes[h as usize].left, self.nodes[h as usize].right);
            if l == NIL || r == NIL {
                break;
            }
            let up = if prio(l) > prio(r) { l } else { r };
            self.rotate_up(up);
        }
        let n = &self.nodes[h as usize];
        let child = if n.left != NIL { n.left } else { n.right };
        let parent = n.parent;
        if child != NIL {
            self.nodes[child as usize].parent = parent;
        }
        if parent == NIL {
            self.root = child;
        } else if self.nodes[parent as usize].left == h {
            self.nodes[parent as usize].left = child;
        } else {
            self.nodes[parent as usize].right = child;
        }
        let mut x = parent;
        while x != NIL {
            self.nodes[x as usize].size -= 1;
            x = self.nodes[x as usize].parent;
        }
        let node = &mut self.nodes[h as usize];
        node.size = 0;
        node.parent = NIL;
        node.left = NIL;
        node.right = NIL;
        self.free.push(h);
        node.item.take().expect("live handle")
    }

    /// The rank (0-based position) of handle `h`. O(depth).
    pub fn rank(&self, mut h: u32) -> usize {
        let mut r = self.size(self.nodes[h as usize].left) as usize;
        loop {
            let p = self.nodes[h as usize].parent;
            if p == NIL {
                return r;
            }
            if self.nodes[p as usize].right == h {
                r += self.size(self.nodes[p as usize].left) as usize + 1;
            }
            h = p;
        }
    }

    /// The handle at `rank`, `None` past the end.
    pub fn at(&self, rank: usize) -> Option<u32> {
        if rank >= self.len() {
            return None;
        }
        let mut r = rank as u32;
        let mut x = self.root;
        loop {
            let n = &self.nodes[x as usize];
            let ls = self.size(n.left);
            match r.cmp(&ls) {
                Ordering::Less => x = n.left,
                Ordering::Equal => return Some(x),
                Ordering::Greater => {
                    r -= ls + 1;
                    x = n.right;
                }
            }
        }
    }

    /// The handle after `h` in sequence order, `None` at the end.
    pub fn next(&self, mut h: u32) -> Option<u32> {
        let r = self.nodes[h as usize].right;
        if r != NIL {
            let mut x = r;
            while self.nodes[x as usize].left != NIL {
                x = self.nodes[x as usize].left;
            }
            return Some(x);
        }
        loop {
            let p = self.nodes[h as usize].parent;
            if p == NIL {
                return None;
            }
            if self.nodes[p as usize].left == h {
                return Some(p);
            }
            h = p;
        }
    }

    /// The handle before `h` in sequence order, `None` at the start.
    pub fn prev(&self, mut h: u32) -> Option<u32> {
        let l = self.nodes[h as usize].left;
        if l != NIL {
            let mut x = l;
            while self.nodes[x as usize].right != NIL {
                x = self.nodes[x as usize].right;
            }
            return Some(x);
        }
        loop {
            let p = self.nodes[h as usize].parent;
            if p == NIL {
                return None;
            }
            if self.nodes[p as usize].right == h {
                return Some(p);
            }
            h = p;
        }
    }

    /// Items from rank `start` on, in order (O(log n) to start, O(1) amortised per item).
    pub fn iter_from(&self, start: usize) -> impl Iterator<Item = &T> + '_ {
        let mut cur = self.at(start);
        std::iter::from_fn(move || {
            let h = cur?;
            cur = self.next(h);
            Some(self.get(h))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_a_vec_under_random_edits() {
        let mut t = OsTree::new();
        let mut v: Vec<(u32, u32)> = Vec::new(); // (value, handle)
        let mut seed = 12345u64;
        let mut rnd = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n.max(1) as u64) as usize
        };
        for step in 0..20_000u32 {
            if v.is_empty() || rnd(3) > 0 {
                let at = rnd(v.len() + 1);
                let h = t.insert_at(at, step);
                v.insert(at, (step, h));
            } else {
                let at = rnd(v.len());
                let (val, h) = v.remove(at);
                assert_eq!(t.rank(h), at);
                assert_eq!(t.remove(h), val);
            }
            if step % 997 == 0 {
                let got: Vec<u32> = t.iter_from(0).copied().collect();
                let want: Vec<u32> = v.iter().map(|p| p.0).collect();
                assert_eq!(got, want);
                for (i, &(_, h)) in v.iter().enumerate() {
                    assert_eq!(t.rank(h), i);
                    assert_eq!(t.at(i), Some(h));
                    assert_eq!(t.prev(h), i.checked_sub(1).map(|j| v[j].1));
                    assert_eq!(t.next(h), v.get(i + 1).map(|p| p.1));
                }
            }
        }
        assert_eq!(t.len(), v.len());
        assert_eq!(t.at(v.len()), None);
    }

    #[test]
    fn load_builds_a_valid_tree_that_stays_editable() {
        for n in [0usize, 1, 2, 3, 100, 5_000] {
            let mut t = OsTree::new();
            t.insert_at(0, 999_999); // replaced by the load
            let hs = t.load(0..n as u32);
            assert_eq!(t.len(), n);
            assert_eq!(
                t.iter_from(0).copied().collect::<Vec<_>>(),
                (0..n as u32).collect::<Vec<_>>()
            );
            for (i, &h) in hs.iter().enumerate() {
                assert_eq!(t.rank(h), i);
                assert_eq!(t.at(i), Some(h));
                // Heap order: no child outranks its parent.
                let parent = t.nodes[h as usize].parent;
                assert!(parent == NIL || prio(parent) >= prio(h));
            }
            let h = t.insert_at(n / 2, 1_000_000);
            assert_eq!(t.rank(h), n / 2);
            if n > 0 {
                assert_eq!(t.remove(hs[0]), 0);
                assert_eq!(t.len(), n);
            }
        }
    }

    #[test]
    fn insert_by_is_stable_and_counts() {
        let mut t = OsTree::new();
        for (i, k) in [3, 1, 2, 1, 3, 0].into_iter().enumerate() {
            t.insert_by((k, i), |a: &(i32, usize), b| a.0.cmp(&b.0));
        }
        let got: Vec<(i32, usize)> = t.iter_from(0).copied().collect();
        assert_eq!(got, [(0, 5), (1, 1), (1, 3), (2, 2), (3, 0), (3, 4)]);
        assert_eq!(t.count_before(|x| x.0 < 2), 3);
        assert_eq!(t.count_before(|x| x.0 <= 3), 6);
        assert_eq!(t.iter_from(4).count(), 2);
    }
}
