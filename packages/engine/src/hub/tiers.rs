//! Tier mapping for views. A user's tier maps each constituent subject `X` of a container to the
//! tier subject `X@<tier>` when that tiered record exists (else `X` itself). A view of container
//! `C` for tier `T` is opened over `C`'s tier mirror: an engine-internal container (named
//! `C#tier:T`, which no source can publish: `#` is not a subject character) holding the mapped
//! members in `C`'s order. Mirrors are created on the first view of (C, T), follow every op on
//! `C`, and swap `X` for `X@T` when the tiered record is first published, so views compute on
//! the user's tiered records and share only with users of the same tier.
//!
//! Plain record subscriptions map the same way: a session of tier `T` subscribing to `X` is
//! subscribed to `X@T` when that record exists (the ack carries the subject asked for and
//! `X@T`'s id; images to the session carry `X`). When `X@T` is first published later, the
//! tier's sessions subscribed to `X` move to it, each with a fresh image. A session that also
//! subscribes to `X@T` by name shares that one subscription (unsubscribing either ends it).

use std::collections::HashMap;
use std::time::Instant;

use super::Hub;

/// The tier mirrors of containers.
#[derive(Debug, Default)]
pub(super) struct TierMap {
    /// (container, tier) -> mirror container id.
    mirror: HashMap<(u32, Box<str>), u32>,
    /// container -> its mirrors (tier, mirror).
    of_container: HashMap<u32, Vec<(Box<str>, u32)>>,
    /// tier -> (container, mirror) pairs.
    of_tier: HashMap<Box<str>, Vec<(u32, u32)>>,
}

/// The subject an image of a record named `subject` shows a session of `tier`: `X` for the
/// session's own tier record `X@tier` (the subject it subscribed to), else `subject`.
pub(super) fn shown_subject<'a>(subject: &'a str, tier: &str) -> &'a str {
    match subject.strip_suffix(tier).and_then(|s| s.strip_suffix('@')) {
        Some(base) if !tier.is_empty() => base,
        _ => subject,
    }
}

impl TierMap {
    /// True when no container has a mirror (the publish path skips tier work).
    pub(super) fn is_empty(&self) -> bool {
        self.mirror.is_empty()
    }
}

impl Hub {
    /// The container a session of `tier` views for `container`: its tier mirror, created (from
    /// the container's current members) on first use. An empty tier views the container itself.
    pub(super) fn tier_container(&mut self, container: u32, tier: &str) -> u32 {
        if tier.is_empty() {
            return container;
        }
        if let Some(&m) = self.tiers.mirror.get(&(container, tier.into())) {
            return m;
        }
        let name = format!("{}#tier:{tier}", self.store.subject(container));
        let m = self.store.subject_id(&name);
        let members: Vec<u32> = self
            .views
            .set
            .container(container)
            .map(|c| c.iter().collect())
            .unwrap_or_default();
        for id in members {
            let t = self.tier_subject(id, tier);
            if self.views.set.insert(m, None, t, &self.store).is_err() {
                break; // a mirror holds no more than its container: cannot happen
            }
        }
        self.tiers.mirror.insert((container, tier.into()), m);
        self.tiers
            .of_container
            .entry(container)
            .or_default()
            .push((tier.into(), m));
        self.tiers.of_tier.entry(tier.into()).or_default().push((container, m));
        m
    }

    /// The record a session of `tier` subscribes to for `subject`: `subject@tier` when that
    /// record exists, else `subject` itself (interned).
    pub(super) fn tier_target(&mut self, subject: &str, tier: &str) -> u32 {
        match self.tier_lookup_mapped(subject, tier) {
            Some(t) => t,
            None => self.store.subject_id(subject),
        }
    }

    /// [`Hub::tier_target`] without interning: `None` when the subject was never seen.
    pub(super) fn tier_lookup(&self, subject: &str, tier: &str) -> Option<u32> {
        self.tier_lookup_mapped(subject, tier)
            .or_else(|| self.store.lookup(subject))
    }

    fn tier_lookup_mapped(&self, subject: &str, tier: &str) -> Option<u32> {
        if tier.is_empty() {
            return None;
        }
        let t = self.store.lookup(&format!("{subject}@{tier}"))?;
        self.store.get(t).is_some().then_some(t)
    }

    /// Record `id` was just created (and fanned out to its own subscribers): when it is a tier
    /// subject `X@T`, sessions of tier `T` subscribed to `X` move to it, each with an image.
    pub(super) fn retarget_tier_subscribers(&mut self, id: u32, now: Instant) {
        let subject = self.store.subject(id);
        let Some(at) = subject.rfind('@') else { return };
        let tier: Box<str> = subject[at + 1..].into();
        let Some(base) = self.store.lookup(&subject[..at]) else {
            return;
        };
        let movers: Vec<u32> = match self.subscriptions.list(base) {
            Some(list) => list
                .slots
                .iter()
                .copied()
                .filter(|&slot| self.sessions.get(slot).is_some_and(|s| *s.tier == *tier))
                .collect(),
            None => return,
        };
        for slot in movers {
            let Some(s) = self.sessions.get_mut(slot) else {
                continue;
            };
            let Some(old) = s.subs.remove(&base) else { continue };
            let (worker, sid) = (s.worker, s.sid);
            if self.subscriptions.remove(&mut self.sessions.slots, base, old, worker) {
                self.subscriptions.direct.unsubscribe(worker, sid, base);
                if let Some(s) = self.sessions.get_mut(slot) {
                    s.direct = s.direct.saturating_sub(1);
                }
            }
            self.subscriptions.ensure(id);
            let Some(s) = self.sessions.get_mut(slot) else {
                continue;
            };
            let idx = match s.subs.get(&id) {
                Some(&idx) => {
                    self.stats.subscriptions -= 1; // already subscribed by name: one left
                    idx
                }
                None => self.subscriptions.add(id, slot, s),
            };
            self.send_image(slot, id, idx, now);
        }
    }

    /// `X@tier` when that record exists, else `X`.
    fn tier_subject(&self, id: u32, tier: &str) -> u32 {
        let name = format!("{}@{tier}", self.store.subject(id));
        match self.store.lookup(&name) {
            Some(t) if self.store.get(t).is_some() => t,
            _ => id,
        }
    }

    fn mirrors_of(&self, container: u32) -> Vec<(Box<str>, u32)> {
        self.tiers.of_container.get(&container).cloned().unwrap_or_default()
    }

    /// Member `id` was inserted into `container` at `pos`: the same in its mirrors.
    pub(super) fn mirror_insert(&mut self, container: u32, pos: usize, id: u32) {
        for (tier, m) in self.mirrors_of(container) {
            let t = self.tier_subject(id, &tier);
            let _ = self.views.set.insert(m, Some(pos), t, &self.store);
        }
    }

    /// Member `id` left `container`: the same in its mirrors.
    pub(super) fn mirror_remove(&mut self, container: u32, id: u32) {
        for (tier, m) in self.mirrors_of(container) {
            let t = self.tier_subject(id, &tier);
            self.views.set.remove(m, t);
        }
    }

    /// `container` was cleared: so are its mirrors.
    pub(super) fn mirror_clear(&mut self, container: u32) {
        for (_, m) in self.mirrors_of(container) {
            self.views.set.clear(m);
        }
    }

    /// Record `id` was just created: when it is a tier subject `X@T`, it replaces `X` in T's
    /// mirrors of containers holding `X`, at the same position.
    pub(super) fn tier_record_created(&mut self, id: u32) {
        let subject = self.store.subject(id);
        let Some(at) = subject.rfind('@') else { return };
        let tier: Box<str> = subject[at + 1..].into();
        let Some(base) = self.store.lookup(&subject[..at]) else {
            return;
        };
        let Some(pairs) = self.tiers.of_tier.get(&tier).cloned() else {
            return;
        };
        for (c, m) in pairs {
            let Some(pos) = self.views.set.container(c).and_then(|k| k.position_of(base)) else {
                continue;
            };
            if self.views.set.remove(m, base).is_some() {
                let _ = self.views.set.insert(m, Some(pos), id, &self.store);
            }
        }
    }
}
