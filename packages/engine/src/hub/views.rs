//! Containers and views in the hub: `container.publish` ops, `view.create` / `view.change` /
//! `view.close`, the `ViewSet` fed by every publish of a container member, and the per-window
//! diffs encoded once per window into its subscriber's outbox (as control messages: a view diff
//! is never dropped by slow-consumer conflation, it is state the client cannot rebuild).
//!
//! `container.publish` arrives decoded (the server's protocol decoder) as
//! `Command::ContainerPublish`. Views of a tiered session are opened over the container's tier
//! mirror (`tiers.rs`). A row updated several times between two view flushes gets one merged
//! update with `conflated: true` (its `seq` jumps by more than one).

use std::time::Instant;

use rustc_hash::FxHashMap;

use super::subscribe::ReqError;
use super::Hub;
use crate::error::{EngineError, ErrorCode};
use crate::view::window::MAX_WINDOW_ROWS;
use crate::view::WindowDiff;
use crate::wire::rules::{check_subject, show_str};
use crate::wire::view::{view_closed, view_size, ViewCreated, ViewRows};

/// Window tag flag (`ViewSet::set_window_tag`, word 3): a `view.create` or `view.change` awaits
/// its reply; the flush looks the subscription up.
const TAG_PENDING: u32 = 1;
/// Window tag flag: live; words 0-2 (session slot, viewId, reqId) are current.
const TAG_LIVE: u32 = 2;

/// Views one session may hold open. @default 100 (`VIEW_LIMITS.maxViewsPerSession` in packages/protocol)
pub const DEFAULT_MAX_VIEWS_PER_SESSION: usize = tidewire_protocol::limits::view_limits::MAX_VIEWS_PER_SESSION;

/// One operation of a `container.publish` (packages/protocol `ContainerOp`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContainerOp {
    /// Append subjects not yet members (members stay where they are).
    Add(Vec<String>),
    /// Insert subjects, in order, before position `index` (past the end: append); members
    /// already present are moved there.
    InsertAt(usize, Vec<String>),
    /// Remove members; non-members are ignored.
    Remove(Vec<String>),
    /// Remove every member.
    Clear,
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

impl Hub {
    /// Milliseconds on the views' clock (since the first instant the hub saw).
    pub(super) fn views_ms(&mut self, now: Instant) -> u64 {
        let epoch = *self.views_epoch.get_or_insert(now);
        now.saturating_duration_since(epoch).as_millis() as u64
    }

    /// Applies a source's container ops, in order, then flushes the views.
    pub(super) fn container_publish(&mut self, subject: &str, ops: &[ContainerOp], now: Instant) {
        if check_subject(subject).is_err() {
            return; // validated on ingest; the hub trusts no caller but has no one to tell
        }
        let c = self.store.subject_id(subject);
        if let Some(r) = self.records.as_deref_mut() {
            if !crate::order_desk::privacy::is_private(subject) {
                if !r.admit(c, subject) {
                    return;
                }
                r.capture_container(subject, ops);
            }
        }
        for op in ops {
            match op {
                ContainerOp::Clear => {
                    self.statement_members_cleared(c);
                    self.views.clear(c);
                    self.mirror_clear(c);
                }
                ContainerOp::Remove(subjects) => {
                    for s in subjects {
                        if let Some(id) = self.store.lookup(s) {
                            if self.views.remove(c, id).is_some() {
                                self.mirror_remove(c, id);
                                self.statement_member(c, id, false);
                            }
                        }
                    }
                }
                ContainerOp::Add(subjects) => {
                    for s in subjects.iter().filter(|s| check_subject(s).is_ok()) {
                        let id = self.store.subject_id(s);
                        let member = self.views.container(c).is_some_and(|k| k.contains(id));
                        if !member {
                            // Only the member limit can fail: the op is cut there.
                            match self.views.insert(c, None, id, &self.store) {
                                Ok(pos) => {
                                    self.mirror_insert(c, pos, id);
                                    self.statement_member(c, id, true);
                                }
                                Err(_) => break,
                            }
                        }
                    }
                }
                ContainerOp::InsertAt(index, subjects) => {
                    let mut at = *index;
                    for s in subjects.iter().filter(|s| check_subject(s).is_ok()) {
                        let id = self.store.subject_id(s);
                        if let Some(old) = self.views.remove(c, id) {
                            self.mirror_remove(c, id);
                            self.statement_member(c, id, false);
                            if old < at {
                                at -= 1;
                            }
                        }
                        let len = self.views.container(c).map_or(0, |k| k.len());
                        match self.views.insert(c, Some(at.min(len)), id, &self.store) {
                            Ok(pos) => {
                                self.mirror_insert(c, pos, id);
                                self.statement_member(c, id, true);
                                at = pos + 1;
                            }
                            Err(_) => break,
                        }
                    }
                }
            }
        }
        self.flush_views(now);
    }

    /// Reports the publish just applied (`self.applied`) to the views of containers holding it.
    pub(super) fn views_record_updated(&mut self) {
        if self.views.view_count() == 0 {
            return; // a view built later reads the records as they are then
        }
        let id = self.applied.id;
        let Some(rec) = self.store.get(id) else { return };
        self.changed_ids.clear();
        if self.applied.created || self.applied.layout_changed {
            self.changed_ids.extend(rec.slots.iter().map(|s| s.name));
        } else {
            self.changed_ids.extend(
                self.applied
                    .changed
                    .iter()
                    .filter_map(|&i| rec.slots.get(i as usize))
                    .map(|s| s.name),
            );
        }
        self.changed_ids.sort_unstable();
        self.changed_ids.dedup();
        self.views.record_updated(id, &self.changed_ids, &self.store);
    }

    /// `view.create`: opens (or shares) the view and this subscriber's window; `view.created`
    /// goes out with the window's first rows.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn view_create(
        &mut self,
        sid: u32,
        req_id: u32,
        container: &str,
        filter: &str,
        sort: &str,
        offset: usize,
        size: usize,
        now: Instant,
    ) {
        let Some(&slot) = self.by_sid.get(&sid) else { return };
        let Some(view) = self.open_session_view(slot, req_id, container, filter, sort, size, now) else {
            return;
        };
        self.open_subscription(slot, req_id, view, offset, size, false, now);
    }

    /// Checks a `view.create` (or `view.resume`) for session slot `slot` and opens (or shares)
    /// its view, holding one reference; on a refusal the error is sent and `None` returned.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn open_session_view(
        &mut self,
        slot: u32,
        req_id: u32,
        container: &str,
        filter: &str,
        sort: &str,
        size: usize,
        now: Instant,
    ) -> Option<u32> {
        if let Err(rule) = check_subject(container) {
            let e = ReqError {
                code: ErrorCode::BadRequest,
                message: format!("'container' ({}) {rule}", show_str(container)),
                field: Some("container".into()),
            };
            self.send_error(slot, req_id, e, now);
            return None;
        }
        if size == 0 || size > MAX_WINDOW_ROWS {
            let e = ReqError {
                code: ErrorCode::BadRequest,
                message: format!("window size {size} must be 1 to {MAX_WINDOW_ROWS}"),
                field: Some("window.size".into()),
            };
            self.send_error(slot, req_id, e, now);
            return None;
        }
        let open = self.session_views.get(&slot).map_or(0, |v| v.open.len());
        if open >= self.max_views_per_session {
            let e = ReqError {
                code: ErrorCode::LimitExceeded,
                message: format!("a session may hold at most {} views", self.max_views_per_session),
                field: None,
            };
            self.send_error(slot, req_id, e, now);
            return None;
        }
        let base = self.store.subject_id(container);
        let tier = self.sessions[slot as usize]
            .as_ref()
            .map(|s| s.tier.clone())
            .unwrap_or_default();
        let c = self.tier_container(base, &tier);
        self.intern_view_fields(filter, sort);
        let Hub { views, store, .. } = self;
        let opened = views.open(c, filter, sort, 0, &*store, &mut |name| {
            store.field_lookup(name).unwrap_or(u32::MAX)
        });
        match opened {
            Ok(v) => Some(v),
            Err(e) => {
                self.send_error(slot, req_id, engine_error(&e), now);
                None
            }
        }
    }

    /// Opens this subscriber's window on `view` (whose reference it takes over) and sends its
    /// `view.created` (flagged `reset` when `reset`) with the window's rows.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn open_subscription(
        &mut self,
        slot: u32,
        req_id: u32,
        view: u32,
        offset: usize,
        size: usize,
        reset: bool,
        now: Instant,
    ) {
        let window = match self.views.open_window(view, offset, size) {
            Ok(w) => w,
            Err(e) => {
                let ms = self.views_ms(now);
                let _ = self.views.release(view, ms);
                return self.send_error(slot, req_id, engine_error(&e), now);
            }
        };
        self.add_subscription(slot, ViewSub::creating(view, window, req_id, reset));
        self.flush_views(now);
    }

    /// Lists `sub` as a new view of session slot `slot` (its window owned by it); the next flush
    /// sends a creating subscription its `view.created`, a resumed one its diff. Returns its viewId.
    pub(super) fn add_subscription(&mut self, slot: u32, sub: ViewSub) -> u32 {
        let sv = self.session_views.entry(slot).or_default();
        sv.next_id += 1;
        let view_id = sv.next_id;
        sv.open.insert(view_id, sub);
        self.window_owner.insert(sub.window, (slot, view_id));
        let _ = self
            .views
            .set_window_tag(sub.window, [slot, view_id, sub.req_id, TAG_PENDING]);
        view_id
    }

    /// `view.change`: moves the window; the next `view.rows` carries `req_id`.
    pub(super) fn view_change(
        &mut self,
        sid: u32,
        req_id: u32,
        view_id: u32,
        offset: usize,
        size: usize,
        now: Instant,
    ) {
        let Some(&slot) = self.by_sid.get(&sid) else { return };
        let Some(sub) = self.session_views.get_mut(&slot).and_then(|v| v.open.get_mut(&view_id)) else {
            return self.send_error(slot, req_id, not_open(view_id), now);
        };
        let window = sub.window;
        if let Err(e) = self.views.move_window(window, offset, size) {
            return self.send_error(slot, req_id, engine_error(&e), now);
        }
        sub.req_id = req_id;
        sub.change_pending = true;
        let _ = self.views.set_window_tag(window, [slot, view_id, req_id, TAG_PENDING]);
        self.flush_views(now);
        self.answer_change(slot, view_id, now);
    }

    /// Sends an empty `view.rows` for a `view.change` that the flush did not answer (the window
    /// showed the same rows after the move).
    fn answer_change(&mut self, slot: u32, view_id: u32, now: Instant) {
        let Some(sub) = self.session_views.get_mut(&slot).and_then(|v| v.open.get_mut(&view_id)) else {
            return;
        };
        if !std::mem::take(&mut sub.change_pending) {
            return;
        }
        let (req_id, window) = (sub.req_id, sub.window);
        let seq = self.views.window_seq(window).unwrap_or(0) + 1;
        let _ = self.views.set_window_seq(window, seq);
        self.scratch.clear();
        let w = ViewRows::begin(&mut self.scratch, req_id, view_id, Some(seq));
        let body = w.written();
        w.finish();
        self.view_history
            .sent_rows(window, seq, req_id, &self.scratch[body..], now);
        self.send_reply(slot, now);
    }

    /// `view.close`: `view.closed`, then nothing more for the view; the view is released.
    pub(super) fn view_close(&mut self, sid: u32, req_id: u32, view_id: u32, now: Instant) {
        let Some(&slot) = self.by_sid.get(&sid) else { return };
        let Some(sub) = self.session_views.get_mut(&slot).and_then(|v| v.open.remove(&view_id)) else {
            return self.send_error(slot, req_id, not_open(view_id), now);
        };
        self.drop_view_sub(sub, now);
        self.scratch.clear();
        view_closed(&mut self.scratch, req_id, view_id);
        self.send_reply(slot, now);
    }

    /// Closes every view of a session that is going away.
    pub(super) fn drop_session_views(&mut self, slot: u32, now: Instant) {
        if let Some(sv) = self.session_views.remove(&slot) {
            for sub in sv.open.into_values() {
                self.drop_view_sub(sub, now);
            }
        }
    }

    pub(super) fn drop_view_sub(&mut self, sub: ViewSub, now: Instant) {
        self.window_owner.remove(&sub.window);
        self.view_history.remove(sub.window);
        let _ = self.views.close_window(sub.window);
        let ms = self.views_ms(now);
        let _ = self.views.release(sub.view, ms);
        // Keep the earliest deadline: a later release must not postpone an earlier expiry (under
        // steady churn that would keep every released view alive forever).
        let at = now + std::time::Duration::from_millis(self.views_grace_ms);
        self.views_expire_at = Some(self.views_expire_at.map_or(at, |t| t.min(at)));
    }

    /// Frees views unreferenced for the grace period (driven by the engine thread's timer), then
    /// arms the timer for the next view whose grace period ends.
    pub(super) fn expire_views(&mut self, now: Instant) {
        self.expire_detached_views(now);
        if self.views_expire_at.is_some_and(|t| now >= t) {
            let ms = self.views_ms(now);
            self.views.expire(ms);
            self.views_expire_at = self.views.next_expiry().map(|due| {
                let epoch = self.views_epoch.unwrap_or(now);
                epoch + std::time::Duration::from_millis(due)
            });
        }
    }

    /// Encodes every window's diff once and queues it to the window's subscriber.
    pub(super) fn flush_views(&mut self, now: Instant) {
        self.diffs.clear();
        let mut diffs = std::mem::take(&mut self.diffs);
        self.views.flush(&mut diffs);
        for d in &diffs {
            // The usual case, a held window's live changes: owner and reqId from the window's
            // tag (a dense array), not from three per-session maps.
            if let Some([slot, view_id, req_id, TAG_LIVE]) = self.views.window_tag(d.window) {
                self.scratch.clear();
                if self.encode_rows(d, req_id, view_id, false, now) {
                    self.send_control(slot, now);
                    self.sample_view_rows(slot);
                }
                continue;
            }
            let Some(&(slot, view_id)) = self.window_owner.get(&d.window) else {
                continue;
            };
            let Some(sub) = self.session_views.get_mut(&slot).and_then(|v| v.open.get_mut(&view_id)) else {
                continue;
            };
            let creating = sub.creating.take();
            let reset = std::mem::take(&mut sub.reset);
            let req_id = sub.req_id;
            let answers_change = std::mem::take(&mut sub.change_pending);
            let _ = self.views.set_window_tag(d.window, [slot, view_id, req_id, TAG_LIVE]);
            let reply = creating.is_some() || answers_change;
            self.scratch.clear();
            match creating {
                Some(create_req) => self.encode_created(d, create_req, view_id, reset),
                None => {
                    if !self.encode_rows(d, req_id, view_id, answers_change, now) {
                        continue;
                    }
                }
            }
            if reply {
                self.send_reply(slot, now);
            } else {
                self.send_control(slot, now);
            }
            self.sample_view_rows(slot);
        }
        self.views.recycle(&mut diffs);
        self.diffs = diffs;
    }

    /// `view.created` (seq 1 of the window) from its first diff, a snapshot.
    fn encode_created(&mut self, d: &WindowDiff, req_id: u32, view_id: u32, reset: bool) {
        let count = d.count.unwrap_or(0) as u64;
        let _ = self.views.set_window_seq(d.window, 1);
        self.view_history.start(d.window, 1);
        let Hub { scratch, store, .. } = self;
        let mut w = ViewCreated::begin(scratch, req_id, view_id, Some(1), count);
        for &(i, id) in &d.entered {
            let index = (d.offset + i as usize) as u64;
            match store.get(id) {
                Some(rec) => w.row(index, id, store.subject(id), rec.seq, rec.ts, store.image_fields(rec)),
                None => w.row(index, id, store.subject(id), 0, 0.0, std::iter::empty()),
            }
        }
        w.finish_flagged(reset);
    }

    /// `view.size` (count changed) then `view.rows`; false when there is nothing to send.
    /// `always`: a `view.change` waits for this reply, so an empty `view.rows` is sent too.
    /// Each updated row is encoded once per flush (`ViewSet::row_bytes`) and copied into every
    /// window's message that carries it. Each message sent takes the window's next seq and is
    /// kept in the window's history (`view_history.rs`) as sent at `now`.
    fn encode_rows(&mut self, d: &WindowDiff, req_id: u32, view_id: u32, always: bool, now: Instant) -> bool {
        let mut seq = self.views.window_seq(d.window).unwrap_or(0);
        let sent = self.encode_rows_at(d, req_id, view_id, always, &mut seq, now);
        let _ = self.views.set_window_seq(d.window, seq);
        sent
    }

    /// `encode_rows` after the message numbered `seq`; `seq` ends as the last one written.
    #[allow(clippy::too_many_arguments)]
    fn encode_rows_at(
        &mut self,
        d: &WindowDiff,
        req_id: u32,
        view_id: u32,
        always: bool,
        seq: &mut u64,
        now: Instant,
    ) -> bool {
        let Hub {
            scratch,
            store,
            views,
            view_history,
            sampling,
            ..
        } = self;
        sampling.rows.clear();
        if let Some(count) = d.count {
            *seq += 1;
            view_size(scratch, view_id, Some(*seq), count as u64);
            view_history.sent_size(d.window, *seq, count as u64, now);
        }
        let mark = scratch.len();
        if mark > 0 {
            scratch.push(b',');
        }
        let mut w = ViewRows::begin(scratch, req_id, view_id, Some(*seq + 1));
        let body = w.written();
        for &id in &d.left {
            w.left(id);
        }
        for &(i, id) in &d.moved {
            w.moved((d.offset + i as usize) as u64, id);
        }
        for &(i, id) in &d.entered {
            let index = (d.offset + i as usize) as u64;
            match store.get(id) {
                Some(rec) => w.entered(index, id, store.subject(id), rec.seq, rec.ts, store.image_fields(rec)),
                None => w.entered(index, id, store.subject(id), 0, 0.0, std::iter::empty()),
            }
        }
        let empty = w.is_empty();
        // `updated` is the last list of a `view.rows`: close the message, reopen it after the
        // lists written so far, and append the cached items.
        w.finish();
        scratch.pop(); // the closing '}'
        let before = scratch.len();
        scratch.extend_from_slice(UPDATED_KEY);
        let cache = views.row_bytes();
        let mut items = 0;
        for (id, fields) in &d.updated {
            let Some(rec) = store.get(*id) else { continue };
            let conflated = d.conflated.binary_search(id).is_ok();
            let bytes = cache.get_or_encode(*id, fields, conflated, |out| {
                let it = fields.iter().map(|&f| store.field_by_id(rec, f));
                updated_item(out, *id, rec.seq, rec.ts, it, conflated);
            });
            if items > 0 {
                scratch.push(b',');
            }
            scratch.extend_from_slice(bytes);
            sampling.rows.push(rec.ts);
            items += 1;
        }
        if items == 0 {
            scratch.truncate(before);
            if empty && !always {
                scratch.truncate(if mark > 0 { mark } else { 0 });
                return mark > 0;
            }
            scratch.push(b'}');
        } else {
            scratch.extend_from_slice(b"]}");
        }
        *seq += 1;
        view_history.sent_rows(d.window, *seq, req_id, &scratch[body..], now);
        true
    }
}

/// Key of the `updated` list of a `view.rows` (`wire::view::ViewRows::updated`).
const UPDATED_KEY: &[u8] = b",\"updated\":[";

/// One item of a `view.rows` `updated` list: `{"id","seq","ts","fields"[,"conflated":true]}`,
/// byte-identical to `wire::view::ViewRows::updated` (pinned by the test below).
fn updated_item<'a, I>(out: &mut Vec<u8>, id: u32, seq: u64, ts: f64, fields: I, conflated: bool)
where
    I: Iterator<Item = crate::wire::encode::FieldRef<'a>> + Clone,
{
    out.push(b'{');
    crate::wire::encode::write_update_body(out, id, seq, ts, fields, conflated);
    out.push(b'}');
}

impl Hub {
    /// Interns the field names `filter` and `sort` read (when they parse: otherwise `open`
    /// reports the error), so the view compiles with ids the store shares.
    fn intern_view_fields(&mut self, filter: &str, sort: &str) {
        let limits = crate::filter::FilterLimits::default();
        let mut names: Vec<String> = Vec::new();
        if let Ok(expr) = crate::filter::parse(filter, &limits) {
            crate::filter::Filter::compile(&expr, &mut |n| {
                names.push(n.to_owned());
                0
            });
        }
        if let Ok(keys) = crate::view::parse_sort(sort, limits.max_len) {
            names.extend(keys.into_iter().map(|k| k.field));
        }
        for n in &names {
            self.store.field_id(n);
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

impl Hub {
    /// `(viewId, ViewSet view id)` of every view session slot `slot` holds open, in no order
    /// (the reload re-check, `subscribe.rs`).
    pub(super) fn open_view_ids(&self, slot: u32) -> Vec<(u32, u32)> {
        self.session_views
            .get(&slot)
            .map(|v| v.open.iter().map(|(&id, sub)| (id, sub.view)).collect())
            .unwrap_or_default()
    }

    /// Closes view `view_id` of session slot `slot` without a reply (the caller sends one);
    /// false when it is not open.
    pub(super) fn detach_view(&mut self, slot: u32, view_id: u32, now: Instant) -> bool {
        let Some(sub) = self.session_views.get_mut(&slot).and_then(|v| v.open.remove(&view_id)) else {
            return false;
        };
        self.drop_view_sub(sub, now);
        true
    }
}

fn not_open(view_id: u32) -> ReqError {
    ReqError {
        code: ErrorCode::NotFound,
        message: format!("view {view_id} is not open in this session"),
        field: Some("viewId".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    /// The cached path (`UPDATED_KEY` + `updated_item`s) writes what `ViewRows::updated` writes.
    #[test]
    fn updated_items_match_the_view_rows_writer() {
        let (bid, name) = (Value::Number(1.25), Value::Str("a\"b".into()));
        let fields = || {
            [
                ("bid", Some(&bid), None),
                ("name", Some(&name), None),
                ("gone", None, None),
            ]
            .into_iter()
        };
        let mut want = Vec::new();
        let mut w = ViewRows::begin(&mut want, 3, 1, None);
        w.left(4);
        w.updated(7, 2, 10.5, fields(), false);
        w.updated(8, 9, 11.0, fields(), true);
        w.finish();
        let mut got = Vec::new();
        let mut w = ViewRows::begin(&mut got, 3, 1, None);
        w.left(4);
        w.finish();
        got.pop();
        got.extend_from_slice(UPDATED_KEY);
        updated_item(&mut got, 7, 2, 10.5, fields(), false);
        got.push(b',');
        updated_item(&mut got, 8, 9, 11.0, fields(), true);
        got.extend_from_slice(b"]}");
        assert_eq!(String::from_utf8(got).unwrap(), String::from_utf8(want).unwrap());
    }

    fn publish(hub: &mut Hub, i: u32, field: &str, v: f64, image: bool, now: Instant) {
        let p = crate::wire::Publish {
            subject: format!("/P/{i}"),
            ts: Some(1.0),
            image,
            fields: vec![crate::wire::PubField {
                name: field.into(),
                value: Some(Value::Number(v)),
                typed: false,
            }],
        };
        hub.handle(
            super::super::Command::Publish {
                batch: vec![p],
                received_ms: 1.0,
            },
            now,
        );
    }

    /// The messages queued to session 1 since the last call (the outbox is read, then cleared
    /// through a delivery into a sink that drops them).
    fn take(hub: &mut Hub, now: Instant) -> Vec<serde_json::Value> {
        super::super::test_support::take_queued(hub, 1, now + std::time::Duration::from_secs(1))
    }

    /// Live updates of a held window carry the reqId of the latest view.change (the window tag
    /// fast path), before and after the change.
    #[test]
    fn live_rows_carry_the_latest_change_req_id() {
        use super::super::Command;
        let now = Instant::now();
        let mut hub = Hub::new(crate::config::EngineConfig::default());
        for i in 0..3 {
            publish(&mut hub, i, "bid", f64::from(i), true, now);
        }
        let members = (0..3).map(|i| format!("/P/{i}")).collect();
        hub.handle(
            Command::ContainerPublish {
                subject: "/C".into(),
                ops: vec![ContainerOp::Add(members)],
            },
            now,
        );
        let open = Command::OpenSession {
            sid: 1,
            worker: 0,
            user: "u".into(),
            tier: String::new(),
        };
        hub.handle(open, now);
        let create = Command::ViewCreate {
            sid: 1,
            req_id: 1,
            container: "/C".into(),
            filter: String::new(),
            sort: "bid".into(),
            offset: 0,
            size: 2,
        };
        hub.handle(create, now);
        assert_eq!(take(&mut hub, now)[0]["type"], "view.created");
        publish(&mut hub, 0, "qty", 5.0, false, now);
        let m = take(&mut hub, now);
        assert_eq!(
            (m.len(), &m[0]["reqId"], &m[0]["updated"][0]["id"]),
            (1, &1.into(), &1.into())
        );
        hub.handle(
            Command::ViewChange {
                sid: 1,
                req_id: 5,
                view_id: 1,
                offset: 1,
                size: 2,
            },
            now,
        );
        let m = take(&mut hub, now);
        assert_eq!((m.len(), &m[0]["reqId"], &m[0]["left"][0]), (1, &5.into(), &1.into()));
        publish(&mut hub, 2, "qty", 6.0, false, now);
        publish(&mut hub, 0, "qty", 7.0, false, now); // no longer shown
        let m = take(&mut hub, now);
        assert_eq!(m.len(), 1);
        assert_eq!((&m[0]["reqId"], &m[0]["updated"][0]["id"]), (&5.into(), &3.into()));
        assert_eq!(m[0]["updated"].as_array().map(Vec::len), Some(1));
    }
}
