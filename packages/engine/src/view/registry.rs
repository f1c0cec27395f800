//! View sharing: identical requests (container, canonical filter, canonical sort, tier) share one
//! view, reference-counted; a view whose last reference goes is kept for a grace period (a new
//! request in that time reuses it) and then reported as expired. Time is passed in (ms, any epoch).
//! Unreferenced views are also kept ordered by the time they went idle, so an expiry sweep and
//! the next expiry time cost O(log n) per view, not a pass over every view.

use std::collections::BTreeSet;

use rustc_hash::FxHashMap;

/// What makes two view requests identical.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ViewKey {
    /// Container subject id.
    pub container: u32,
    /// Canonical filter text (`Expr`'s `Display`).
    pub filter: String,
    /// Canonical sort text (`sort_text`).
    pub sort: String,
    /// Tier id (0 = none); views of different tiers never share.
    pub tier: u32,
}

#[derive(Debug)]
struct Shared {
    key: ViewKey,
    refs: u32,
    idle_since: Option<u64>,
}

/// Ref counts and grace periods of shared views, by view id.
#[derive(Debug, Default)]
pub struct Registry {
    by_key: FxHashMap<ViewKey, u32>,
    views: FxHashMap<u32, Shared>,
    /// `(idle_since, view)` of every unreferenced view, oldest first.
    idle: BTreeSet<(u64, u32)>,
    grace_ms: u64,
}

impl Registry {
    /// A registry keeping unreferenced views for `grace_ms` before they expire.
    pub fn new(grace_ms: u64) -> Registry {
        Registry {
            grace_ms,
            ..Registry::default()
        }
    }

    /// The view registered under `key`, taking a reference (and cancelling its expiry).
    pub fn acquire(&mut self, key: &ViewKey) -> Option<u32> {
        let view = *self.by_key.get(key)?;
        let s = self.views.get_mut(&view).expect("registered view");
        s.refs += 1;
        if let Some(t) = s.idle_since.take() {
            self.idle.remove(&(t, view));
        }
        Some(view)
    }

    /// Registers a new `view` under `key` with one reference.
    pub fn insert(&mut self, key: ViewKey, view: u32) {
        self.by_key.insert(key.clone(), view);
        self.views.insert(
            view,
            Shared {
                key,
                refs: 1,
                idle_since: None,
            },
        );
    }

    /// Drops one reference to `view` at time `now_ms`. Returns the references left, `None` if
    /// the view is unknown or already unreferenced.
    pub fn release(&mut self, view: u32, now_ms: u64) -> Option<u32> {
        let s = self.views.get_mut(&view)?;
        if s.refs == 0 {
            return None;
        }
        s.refs -= 1;
        if s.refs == 0 {
            s.idle_since = Some(now_ms);
            self.idle.insert((now_ms, view));
        }
        Some(s.refs)
    }

    /// References held on `view` (0 while in its grace period; `None` if unknown).
    pub fn refs(&self, view: u32) -> Option<u32> {
        self.views.get(&view).map(|s| s.refs)
    }

    /// The key of `view`.
    pub fn key(&self, view: u32) -> Option<&ViewKey> {
        self.views.get(&view).map(|s| &s.key)
    }

    /// Unregisters and returns every view unreferenced for at least the grace period at `now_ms`,
    /// longest idle first (ties by view id). O(log n) per view returned.
    pub fn expire(&mut self, now_ms: u64) -> Vec<u32> {
        let mut done = Vec::new();
        while let Some(&(t, v)) = self.idle.first() {
            if now_ms.saturating_sub(t) < self.grace_ms {
                break;
            }
            self.idle.pop_first();
            if let Some(s) = self.views.remove(&v) {
                self.by_key.remove(&s.key);
            }
            done.push(v);
        }
        done
    }

    /// When (ms, the caller's clock) the next unreferenced view's grace period ends; `None`
    /// when every view is referenced. O(log n).
    pub fn next_expiry(&self) -> Option<u64> {
        self.idle.first().map(|&(t, _)| t.saturating_add(self.grace_ms))
    }

    /// Number of registered views (referenced or in grace).
    pub fn len(&self) -> usize {
        self.views.len()
    }

    /// True when no view is registered.
    pub fn is_empty(&self) -> bool {
        self.views.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(f: &str) -> ViewKey {
        ViewKey {
            container: 1,
            filter: f.into(),
            sort: String::new(),
            tier: 0,
        }
    }

    #[test]
    fn shares_counts_and_expires_after_grace() {
        let mut r = Registry::new(1000);
        assert_eq!(r.acquire(&key("a = 1")), None);
        r.insert(key("a = 1"), 7);
        assert_eq!(r.acquire(&key("a = 1")), Some(7));
        assert_eq!(r.refs(7), Some(2));
        assert_eq!(r.release(7, 0), Some(1));
        assert_eq!(r.release(7, 100), Some(0));
        assert_eq!(r.release(7, 100), None);
        assert_eq!(r.next_expiry(), Some(1100));
        assert!(r.expire(1099).is_empty());
        // Reacquired inside the grace period: kept.
        assert_eq!(r.acquire(&key("a = 1")), Some(7));
        assert!(r.expire(5000).is_empty());
        assert_eq!(r.release(7, 5000), Some(0));
        assert_eq!(r.expire(6000), vec![7]);
        assert_eq!(r.next_expiry(), None);
        assert_eq!(r.acquire(&key("a = 1")), None);
        assert!(r.is_empty());
        assert_eq!(r.key(7), None);
    }

    #[test]
    fn expires_longest_idle_first_and_forgets_reacquired_views() {
        let mut r = Registry::new(100);
        for (v, f) in [(1, "a = 1"), (2, "a = 2"), (3, "a = 3"), (4, "a = 4")] {
            r.insert(key(f), v);
        }
        // Idle at 50, 10, 30, 10 (views 2 and 4 tie: by view id).
        assert_eq!(r.release(1, 50), Some(0));
        assert_eq!(r.release(2, 10), Some(0));
        assert_eq!(r.release(3, 30), Some(0));
        assert_eq!(r.release(4, 10), Some(0));
        assert_eq!(r.next_expiry(), Some(110));
        // View 2 is taken again: its idle time no longer counts.
        assert_eq!(r.acquire(&key("a = 2")), Some(2));
        assert_eq!(r.next_expiry(), Some(110));
        assert_eq!(r.expire(109), Vec::<u32>::new());
        assert_eq!(r.expire(130), vec![4, 3]);
        assert_eq!(r.next_expiry(), Some(150));
        // Released again later: a fresh grace period from then.
        assert_eq!(r.release(2, 140), Some(0));
        assert_eq!(r.expire(200), vec![1]);
        assert_eq!(r.next_expiry(), Some(240));
        assert_eq!(r.expire(u64::MAX), vec![2]);
        assert!(r.is_empty());
        assert_eq!(r.next_expiry(), None);
        // A clock that goes back never expires early.
        r.insert(key("b = 1"), 9);
        assert_eq!(r.release(9, 1_000), Some(0));
        assert!(r.expire(500).is_empty());
        assert_eq!(r.len(), 1);
    }
}
