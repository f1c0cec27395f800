//! Views in the hub: the part that owns the `ViewSet` (containers and their shared views), the
//! per-session view subscriptions and window owners, the views' clock and expiry, and the views
//! held for `view.resume` (`HubViews`, invariants on the type).
//!
//! Files: `containers.rs` (`container.publish` ops and the publishes that feed the views),
//! `requests.rs` (`view.create` / `view.change` / `view.close`), `flush.rs` (the per-window
//! diffs encoded once per window into its subscriber's outbox, as control messages: a view diff
//! is never dropped by slow-consumer conflation, it is state the client cannot rebuild); held
//! views: `../view_resume.rs`, each window's sent messages: `../view_history.rs`. Views of a tiered session are opened over the container's tier
//! mirror (`../tiers.rs`).

mod containers;
mod flush;
mod requests;

pub use containers::ContainerOp;

use std::collections::HashMap;
use std::time::Instant;

use rustc_hash::FxHashMap;

use super::subscribe::ReqError;
use super::view_history::ViewHistories;
use super::view_resume::DetachedViews;
use super::Hub;
use crate::error::{EngineError, ErrorCode};
use crate::stats::EngineStats;
use crate::view::{ViewSet, ViewsConfig, WindowDiff};

/// Window tag flag (`ViewSet::set_window_tag`, word 3): a `view.create` or `view.change` awaits
/// its reply; the flush looks the subscription up.
const TAG_PENDING: u32 = 1;

/// Window tag flag: live; words 0-2 (session slot, viewId, reqId) are current.
const TAG_LIVE: u32 = 2;

/// Views one session may hold open. @default 100 (`VIEW_LIMITS.maxViewsPerSession` in packages/protocol)
pub const DEFAULT_MAX_VIEWS_PER_SESSION: usize = tidewire_protocol::limits::view_limits::MAX_VIEWS_PER_SESSION;

/// The hub's views: the `ViewSet` (containers and their shared views), which session holds
/// which window, the views' clock and expiry, the views held for `view.resume` and the messages
/// each window sent last.
///
/// Invariants: every window listed in `window_owner` is held by exactly one open `ViewSub`
/// (`by_session[slot].open[view_id]`) and tagged in `set` with that owner; a held (detached)
/// view's window is in neither. `expire_at` is never later than the earliest grace-period end
/// of a released view. `changed_ids` and `diffs` are scratch and hold nothing between calls.
#[derive(Debug)]
pub(super) struct HubViews {
    /// Containers and views.
    pub(super) set: ViewSet,
    /// View subscriptions by session slot.
    pub(super) by_session: HashMap<u32, SessionViews>,
    /// (session slot, viewId) by window id.
    pub(super) window_owner: HashMap<u32, (u32, u32)>,
    /// The views' clock starts at the first instant the hub saw.
    pub(super) clock_start: Option<Instant>,
    /// When the next released view's grace period ends.
    pub(super) expire_at: Option<Instant>,
    /// Grace period of a released view, ms.
    pub(super) grace_ms: u64,
    /// Views one session may hold open.
    pub(super) max_per_session: usize,
    /// Field ids changed by the publish being reported (reused).
    pub(super) changed_ids: Vec<u32>,
    /// Window diffs of a flush (reused).
    pub(super) diffs: Vec<WindowDiff>,
    /// Views of dropped sessions, held for `view.resume`.
    pub(super) detached: DetachedViews,
    /// The view messages each window sent last, replayed by `view.resume`.
    pub(super) history: ViewHistories,
}

impl Default for HubViews {
    fn default() -> Self {
        HubViews {
            set: ViewSet::new(ViewsConfig::default()),
            by_session: HashMap::new(),
            window_owner: HashMap::new(),
            clock_start: None,
            expire_at: None,
            grace_ms: ViewsConfig::default().grace_ms,
            max_per_session: DEFAULT_MAX_VIEWS_PER_SESSION,
            changed_ids: Vec::new(),
            diffs: Vec::new(),
            detached: DetachedViews::default(),
            history: ViewHistories::default(),
        }
    }
}

/// A session's subscription to one view.
#[derive(Debug, Clone, Copy)]
pub(super) struct ViewSub {
    /// `ViewSet` view id (one reference held).
    pub(super) view: u32,
    /// `ViewSet` window id (this subscriber's own).
    pub(super) window: u32,
    /// reqId of the latest `view.create` / `view.change`: tags `view.rows`.
    req_id: u32,
    /// reqId of the `view.create` until `view.created` is sent, else `None`.
    creating: Option<u32>,
    /// A `view.change` not yet answered: its `view.rows` is sent even when the move changed
    /// nothing (every request gets a reply; the client waits on this reqId).
    change_pending: bool,
    /// The `view.created` answers a `view.resume` that could not continue the view: flagged
    /// `reset`.
    reset: bool,
}

impl ViewSub {
    /// A subscription whose window `window` of view `view` awaits its `view.created` (`reset`:
    /// flagged so) for request `req_id`.
    pub(super) fn creating(view: u32, window: u32, req_id: u32, reset: bool) -> ViewSub {
        ViewSub {
            view,
            window,
            req_id,
            creating: Some(req_id),
            change_pending: false,
            reset,
        }
    }

    /// A subscription re-attached by `view.resume` `req_id`: no `view.created`, its diffs follow.
    pub(super) fn resumed(view: u32, window: u32, req_id: u32) -> ViewSub {
        ViewSub {
            view,
            window,
            req_id,
            creating: None,
            change_pending: false,
            reset: false,
        }
    }

    /// True while its `view.created` is not sent yet (the client does not hold the view).
    pub(super) fn is_creating(&self) -> bool {
        self.creating.is_some()
    }
}

/// Per-session view subscriptions, by the session's `viewId`.
#[derive(Debug, Default)]
pub(super) struct SessionViews {
    pub(super) next_id: u32,
    pub(super) open: FxHashMap<u32, ViewSub>,
}

pub(super) fn engine_error(e: &EngineError) -> ReqError {
    ReqError {
        code: e.code(),
        message: e.to_string(),
        field: e.field().map(str::to_owned),
    }
}

/// Session slot `slot`'s open subscription `view_id` (a free function over `by_session`, so
/// the caller keeps the other `HubViews` parts, e.g. `set`, while it holds the subscription).
fn open_sub(by_session: &mut HashMap<u32, SessionViews>, slot: u32, view_id: u32) -> Option<&mut ViewSub> {
    by_session.get_mut(&slot)?.open.get_mut(&view_id)
}

fn not_open(view_id: u32) -> ReqError {
    ReqError {
        code: ErrorCode::NotFound,
        message: format!("view {view_id} is not open in this session"),
        field: Some("viewId".into()),
    }
}

impl HubViews {
    /// Milliseconds on the views' clock (since the first instant the hub saw).
    pub(super) fn clock_ms(&mut self, now: Instant) -> u64 {
        let epoch = *self.clock_start.get_or_insert(now);
        now.saturating_duration_since(epoch).as_millis() as u64
    }

    /// Lists `sub` as a new view of session slot `slot` (its window owned by it); the next flush
    /// sends a creating subscription its `view.created`, a resumed one its diff. Returns its viewId.
    pub(super) fn add_subscription(&mut self, slot: u32, sub: ViewSub) -> u32 {
        let sv = self.by_session.entry(slot).or_default();
        sv.next_id += 1;
        let view_id = sv.next_id;
        sv.open.insert(view_id, sub);
        self.window_owner.insert(sub.window, (slot, view_id));
        let _ = self
            .set
            .set_window_tag(sub.window, [slot, view_id, sub.req_id, TAG_PENDING]);
        view_id
    }

    /// Closes `sub`'s window and releases its view reference (the view is freed after the grace
    /// period unless another window opens on it).
    pub(super) fn release_sub(&mut self, sub: ViewSub, now: Instant) {
        self.window_owner.remove(&sub.window);
        self.history.remove(sub.window);
        let _ = self.set.close_window(sub.window);
        let ms = self.clock_ms(now);
        let _ = self.set.release(sub.view, ms);
        // Keep the earliest deadline: a later release must not postpone an earlier expiry (under
        // steady churn that would keep every released view alive forever).
        let at = now + std::time::Duration::from_millis(self.grace_ms);
        self.expire_at = Some(self.expire_at.map_or(at, |t| t.min(at)));
    }

    /// Closes held views whose grace ended, then frees views unreferenced for the grace period
    /// (driven by the engine thread's timer) and arms the timer for the next view whose grace
    /// period ends.
    pub(super) fn expire(&mut self, now: Instant, stats: &mut EngineStats) {
        self.expire_detached(now, stats);
        if self.expire_at.is_some_and(|t| now >= t) {
            let ms = self.clock_ms(now);
            self.set.expire(ms);
            self.expire_at = self.set.next_expiry().map(|due| {
                let epoch = self.clock_start.unwrap_or(now);
                epoch + std::time::Duration::from_millis(due)
            });
        }
    }

    /// `(viewId, ViewSet view id)` of every view session slot `slot` holds open, in no order
    /// (the reload re-check, `subscribe.rs`).
    pub(super) fn open_view_ids(&self, slot: u32) -> Vec<(u32, u32)> {
        self.by_session
            .get(&slot)
            .map(|v| v.open.iter().map(|(&id, sub)| (id, sub.view)).collect())
            .unwrap_or_default()
    }

    /// Closes view `view_id` of session slot `slot` without a reply (the caller sends one);
    /// false when it is not open.
    pub(super) fn close_view(&mut self, slot: u32, view_id: u32, now: Instant) -> bool {
        let Some(sub) = self.by_session.get_mut(&slot).and_then(|v| v.open.remove(&view_id)) else {
            return false;
        };
        self.release_sub(sub, now);
        true
    }

    /// Closes every view of a session that is going away.
    pub(super) fn close_session(&mut self, slot: u32, now: Instant) {
        if let Some(sv) = self.by_session.remove(&slot) {
            for sub in sv.open.into_values() {
                self.release_sub(sub, now);
            }
        }
    }
}

/// One materialised view, as the admin views table shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewStat {
    /// Container subject (the one requested; tier mirrors are shown as their container + tier).
    pub container: String,
    /// Tier the view computes on (empty: the constituents themselves).
    pub tier: String,
    /// Canonical filter text (empty = every member).
    pub filter: String,
    /// Canonical sort text (empty = natural order).
    pub sort: String,
    /// Rows now.
    pub rows: u64,
    /// Subscriber windows open on it (0 while in its grace period).
    pub subscribers: u64,
    /// Cumulative updates to its rows (per flush, each updated or entered row once): a rate
    /// when sampled twice.
    pub updates: u64,
    /// Cost of its last full computation (filter over the container, sort, index load), us.
    pub last_recompute_us: u64,
}

impl Hub {
    /// Every materialised view (referenced or in its grace period). O(views).
    pub fn view_stats(&self) -> Vec<ViewStat> {
        self.views
            .set
            .infos()
            .into_iter()
            .map(|i| {
                let name = self.store.subject(i.container);
                let (container, tier) = name.split_once("#tier:").unwrap_or((name, ""));
                ViewStat {
                    container: container.to_owned(),
                    tier: tier.to_owned(),
                    filter: i.filter,
                    sort: i.sort,
                    rows: i.rows as u64,
                    subscribers: i.windows as u64,
                    updates: i.updates,
                    last_recompute_us: i.build_us,
                }
            })
            .collect()
    }
}
