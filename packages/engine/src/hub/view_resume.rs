//! `view.resume`: views that outlive a dropped connection.
//!
//! When a logged-in session's socket drops (`Command::DetachSession`), its views are not closed:
//! each window is detached (`ViewSet::detach_window`: the view stays maintained, nothing is sent,
//! the field updates of the rows it last sent are gathered) and held here, under the session id
//! and viewId the client knew it by, for `ViewResumeConfig::grace`. A reconnecting client sends
//! `view.resume` naming them, the seq of the last view message it holds, and the view's
//! definition. The view continues (`view.resumed`, then the diff since the drop as ordinary
//! `view.size` / `view.rows` with the next seqs) only when it is held for the same user, the epoch
//! is this engine's, the definition opens the same view, and the client's seq is the last one the
//! server sent or one inside the window's history of sent messages (`view_history.rs`: then the
//! messages after it are replayed with their original seqs before the diff); otherwise the
//! definition is opened afresh and answered by a `view.created` flagged `reset`. Held views past
//! the grace, or pushed out by the bounds, are closed (their memory freed).

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use super::view_history::ViewHistoryConfig;
use super::views::{HubViews, ViewSub};
use super::Hub;
use crate::stats::EngineStats;
use crate::wire::view::view_resumed;

/// How long a dropped session's views are held for `view.resume`, ms. @default 30,000
pub const DEFAULT_VIEW_RESUME_GRACE_MS: u64 = 30_000;
/// Most views held for one user. @default 100 (one session's worth: `MAX_VIEWS_PER_SESSION`)
pub const DEFAULT_VIEW_RESUME_MAX_PER_USER: usize = 100;
/// Most views held in all. @default 10,000
pub const DEFAULT_VIEW_RESUME_MAX: usize = 10_000;

/// Settings of held (detached) views.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewResumeConfig {
    /// How long a dropped session's views are held; zero: none is (they close with the session).
    pub grace: Duration,
    /// Most views held for one user; past it that user's oldest held view is closed.
    pub max_per_user: usize,
    /// Most views held in all; past it the oldest held view is closed.
    pub max_total: usize,
    /// Bounds of each window's history of sent messages (kept only while `grace` is not zero).
    pub history: ViewHistoryConfig,
}

impl Default for ViewResumeConfig {
    fn default() -> Self {
        ViewResumeConfig {
            grace: Duration::from_millis(DEFAULT_VIEW_RESUME_GRACE_MS),
            max_per_user: DEFAULT_VIEW_RESUME_MAX_PER_USER,
            max_total: DEFAULT_VIEW_RESUME_MAX,
            history: ViewHistoryConfig::default(),
        }
    }
}

/// A `view.resume` request: the view as the client knew it, and its definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewResume {
    /// `epoch` of the `session.loggedIn` the view comes from.
    pub epoch: u64,
    /// The session id the view was opened in (that `session.loggedIn`'s `sessionId`).
    pub session_id: u32,
    /// The view's id in that session.
    pub view_id: u32,
    /// Seq of the last view message the client holds.
    pub seq: u64,
    /// Container subject, as in `view.create`.
    pub container: String,
    /// Filter text (empty: every member).
    pub filter: String,
    /// Sort text (`name asc, bid desc`; empty: natural order).
    pub sort: String,
    /// First row of the window the client wants now.
    pub offset: u32,
    /// Rows in that window (1..=10,000).
    pub size: u32,
}

/// One held view.
#[derive(Debug)]
struct Held {
    user: Box<str>,
    sub: ViewSub,
    /// Key in `DetachedViews::by_due`: when it expires, and a serial for ties.
    due: (Instant, u64),
}

/// Views of dropped sessions, by (session id, viewId), with their expiry order.
#[derive(Debug, Default)]
pub(super) struct DetachedViews {
    cfg: ViewResumeConfig,
    held: HashMap<(u32, u32), Held>,
    by_due: BTreeMap<(Instant, u64), (u32, u32)>,
    per_user: HashMap<Box<str>, usize>,
    serial: u64,
}

/// What a `view.resume` gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    /// Re-attach the held view: the diff since the drop follows.
    Continue,
    /// A fresh view flagged `reset`; `discard`: the held view was the caller's but cannot
    /// continue (its definition or seq differ), so it is closed now rather than at its expiry.
    Reset { discard: bool },
}

/// What the server holds under the requested (session id, viewId): its user, its view, the seq
/// of the last message sent for it, and the lowest seq its history replays from (`seq` when it
/// keeps nothing).
#[derive(Debug, Clone, Copy)]
pub(super) struct HeldView<'a> {
    pub(super) user: &'a str,
    pub(super) view: u32,
    pub(super) seq: u64,
    pub(super) oldest: u64,
}

/// The resume decision. `held`: what is held under the requested ids; `user`: the resuming
/// user; `same_epoch`: the request's epoch is this engine's; `view`: the view the request's
/// definition opens now (for the resuming session's tier); `seq`: the client's last seq.
pub(super) fn decide(held: Option<HeldView<'_>>, user: &str, same_epoch: bool, view: u32, seq: u64) -> Outcome {
    let Some(h) = held else {
        return Outcome::Reset { discard: false };
    };
    if h.user != user || !same_epoch {
        // another user's (or another run's numbers): not the caller's to continue or close
        return Outcome::Reset { discard: false };
    }
    if h.view != view || seq < h.oldest || seq > h.seq {
        return Outcome::Reset { discard: true };
    }
    Outcome::Continue
}

impl DetachedViews {
    fn remove(&mut self, key: (u32, u32)) -> Option<Held> {
        let h = self.held.remove(&key)?;
        self.by_due.remove(&h.due);
        if let Some(n) = self.per_user.get_mut(&h.user) {
            *n -= 1;
            if *n == 0 {
                self.per_user.remove(&h.user);
            }
        }
        Some(h)
    }

    /// Holds `sub` of `user` under `key` until `now` + the grace. Returns what must be closed:
    /// `sub` itself when nothing is held (grace 0, a bound of 0), else the held views the bounds
    /// push out (that user's oldest, then the oldest of all).
    fn hold(&mut self, key: (u32, u32), user: &str, sub: ViewSub, now: Instant) -> Vec<ViewSub> {
        if self.cfg.grace.is_zero() || self.cfg.max_per_user == 0 || self.cfg.max_total == 0 {
            return vec![sub];
        }
        let mut out: Vec<ViewSub> = self.remove(key).map(|h| h.sub).into_iter().collect();
        while self.per_user.get(user).is_some_and(|&n| n >= self.cfg.max_per_user) {
            let oldest = self
                .by_due
                .values()
                .copied()
                .find(|k| self.held.get(k).is_some_and(|h| &*h.user == user));
            match oldest.and_then(|k| self.remove(k)) {
                Some(h) => out.push(h.sub),
                None => break,
            }
        }
        while self.held.len() >= self.cfg.max_total {
            let Some(k) = self.by_due.values().next().copied() else {
                break;
            };
            match self.remove(k) {
                Some(h) => out.push(h.sub),
                None => break,
            }
        }
        self.serial += 1;
        let due = (now + self.cfg.grace, self.serial);
        self.by_due.insert(due, key);
        *self.per_user.entry(user.into()).or_default() += 1;
        self.held.insert(
            key,
            Held {
                user: user.into(),
                sub,
                due,
            },
        );
        out
    }

    /// Removes and returns the held views whose grace ended by `now`.
    fn expired(&mut self, now: Instant) -> Vec<ViewSub> {
        let mut out = Vec::new();
        while let Some((&due, &key)) = self.by_due.iter().next() {
            if due.0 > now {
                break;
            }
            match self.remove(key) {
                Some(h) => out.push(h.sub),
                None => {
                    self.by_due.remove(&due); // listed but not held: nothing to close
                }
            }
        }
        out
    }

    /// When the next held view expires.
    pub(super) fn next_due(&self) -> Option<Instant> {
        self.by_due.keys().next().map(|&(at, _)| at)
    }

    /// Views held now.
    pub(super) fn len(&self) -> usize {
        self.held.len()
    }
}

impl HubViews {
    /// Closes held views whose grace ended (the engine thread's timer).
    pub(super) fn expire_detached(&mut self, now: Instant, stats: &mut EngineStats) {
        if self.detached.next_due().is_none_or(|t| t > now) {
            return;
        }
        for sub in self.detached.expired(now) {
            stats.views_detached_closed += 1;
            self.release_sub(sub, now);
        }
    }
}

impl Hub {
    /// New settings of held views (the views held so far keep their expiry).
    pub fn set_view_resume(&mut self, cfg: ViewResumeConfig) {
        self.views.detached.cfg = cfg;
        self.views.history.configure(cfg.history, !cfg.grace.is_zero());
    }

    /// Session slot `slot`'s connection dropped: its views are held for `view.resume` (a view
    /// whose `view.created` was not sent yet is closed: the client never held it). Call before
    /// the session is dropped.
    pub(super) fn detach_session_views(&mut self, slot: u32, now: Instant) {
        if self.views.detached.cfg.grace.is_zero() {
            return; // the session's drop closes them
        }
        let Some((sid, user)) = self.sessions.get(slot).map(|s| (s.sid, s.user.clone())) else {
            return;
        };
        let Some(sv) = self.views.by_session.remove(&slot) else {
            return;
        };
        let mut open: Vec<(u32, ViewSub)> = sv.open.into_iter().collect();
        open.sort_unstable_by_key(|(id, _)| *id); // bounds push out the oldest: hold in id order
        for (view_id, sub) in open {
            if sub.is_creating() {
                self.views.release_sub(sub, now);
                continue;
            }
            self.views.window_owner.remove(&sub.window);
            let _ = self.views.set.set_window_tag(sub.window, [0; 4]);
            let _ = self.views.set.detach_window(sub.window);
            self.views.history.age(sub.window, now);
            for gone in self.views.detached.hold((sid, view_id), &user, sub, now) {
                if gone.window != sub.window {
                    self.stats.views_detached_closed += 1;
                }
                self.views.release_sub(gone, now);
            }
        }
    }

    /// Views held for `view.resume` now.
    pub fn detached_view_count(&self) -> usize {
        self.views.detached.len()
    }

    /// `view.resume` from session `sid` (see the module doc).
    pub(super) fn view_resume(&mut self, sid: u32, req_id: u32, r: &ViewResume, now: Instant) {
        let Some(slot) = self.sessions.slot(sid) else {
            return;
        };
        let (offset, size) = (r.offset as usize, r.size as usize);
        let Some(view) = self.open_session_view(slot, req_id, &r.container, &r.filter, &r.sort, size, now) else {
            return;
        };
        let user = self.sessions.get(slot).map(|s| s.user.clone()).unwrap_or_default();
        let key = (r.session_id, r.view_id);
        let held = self.views.detached.held.get(&key).map(|h| {
            let seq = self.views.set.window_seq(h.sub.window).unwrap_or(0);
            HeldView {
                user: &h.user,
                view: h.sub.view,
                seq,
                oldest: self.views.history.oldest(h.sub.window, seq),
            }
        });
        let same_epoch = self.epoch != 0 && r.epoch == self.epoch;
        match decide(held, &user, same_epoch, view, r.seq) {
            Outcome::Continue => {
                let Some(h) = self.views.detached.remove(key) else {
                    return;
                };
                // the held subscription keeps its own reference to the view
                let ms = self.views.clock_ms(now);
                let _ = self.views.set.release(view, ms);
                if let Err(e) = self.views.set.attach_window(h.sub.window, offset, size) {
                    self.views.release_sub(h.sub, now);
                    return self.send_error(slot, req_id, super::views::engine_error(&e), now);
                }
                let view_id = self
                    .views
                    .add_subscription(slot, ViewSub::resumed(h.sub.view, h.sub.window, req_id));
                // `view.resumed` names the last seq sent; the messages after the client's follow
                // as sent (lost in flight), then the diff since the drop
                let last = self.views.set.window_seq(h.sub.window).unwrap_or(0);
                self.scratch.clear();
                view_resumed(&mut self.scratch, req_id, view_id, last);
                if self
                    .views
                    .history
                    .replay(h.sub.window, r.seq, view_id, &mut self.scratch)
                    > 0
                {
                    self.stats.view_replays += 1;
                }
                self.send_reply(slot, now);
                self.stats.view_resumes += 1;
                self.flush_views(now);
            }
            Outcome::Reset { discard } => {
                if discard {
                    if let Some(h) = self.views.detached.remove(key) {
                        self.views.release_sub(h.sub, now);
                    }
                }
                self.stats.view_resets += 1;
                self.open_subscription(slot, req_id, view, offset, size, true, now);
            }
        }
    }
}

#[cfg(test)]
#[path = "view_resume_tests.rs"]
mod tests;
