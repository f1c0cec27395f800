//! View sharing: identical requests (container, canonical filter, canonical sort, tier) share one
//! view, reference-counted; a view whose last reference goes is kept for a grace period (a new
//! request in that time reuses it) and then reported as expired. Time is passed in (ms, any epoch).

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
        s.idle_since = None;
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

    /// Unregisters and returns every view unreferenced for at least the grace period at `now_ms`.
    pub fn expire(&mut self, now_ms: u64) -> Vec<u32> {
        let grace = self.grace_ms;
        let done: Vec<u32> = self
            .views
            .iter()
            .filter(|(_, s)| s.idle_since.is_some_and(|t| now_ms.saturating_sub(t) >= grace))
            .map(|(&v, _)| v)
            .collect();
        for v in &done {
            if let Some(s) = self.views.remove(v) {
                self.by_key.remove(&s.key);
            }
        }
        done
    }

    /// When (ms, the caller's clock) the next unreferenced view's grace period ends; `None`
    /// when every view is referenced. O(views).
    pub fn next_expiry(&self) -> Option<u64> {
        self.views
            .values()
            .filter_map(|s| s.idle_since)
            .min()
            .map(|t| t.saturating_add(self.grace_ms))
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
}
