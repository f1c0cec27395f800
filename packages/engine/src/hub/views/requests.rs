//! `view.create` / `view.change` / `view.close`: a session's requests on its views, checked
//! (subject, window size, per-session limit) and answered; the session's views are released
//! when it goes.

use std::time::Instant;

use super::{engine_error, not_open, open_sub, ViewSub, TAG_PENDING};
use crate::error::ErrorCode;
use crate::hub::subscribe::ReqError;
use crate::hub::Hub;
use crate::view::window::MAX_WINDOW_ROWS;
use crate::wire::rules::{check_subject, show_str};
use crate::wire::view::{view_closed, ViewRows};

impl Hub {
    /// `view.create`: opens (or shares) the view and this subscriber's window; `view.created`
    /// goes out with the window's first rows.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::hub) fn view_create(
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
        let Some(slot) = self.sessions.slot(sid) else {
            return;
        };
        let Some(view) = self.open_session_view(slot, req_id, container, filter, sort, size, now) else {
            return;
        };
        self.open_subscription(slot, req_id, view, offset, size, false, now);
    }

    /// Checks a `view.create` (or `view.resume`) for session slot `slot` and opens (or shares)
    /// its view, holding one reference; on a refusal the error is sent and `None` returned.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::hub) fn open_session_view(
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
        let open = self.views.by_session.get(&slot).map_or(0, |v| v.open.len());
        if open >= self.views.max_per_session {
            let e = ReqError {
                code: ErrorCode::LimitExceeded,
                message: format!("a session may hold at most {} views", self.views.max_per_session),
                field: None,
            };
            self.send_error(slot, req_id, e, now);
            return None;
        }
        let base = self.store.subject_id(container);
        let tier = self.sessions.get(slot).map(|s| s.tier.clone()).unwrap_or_default();
        let c = self.tier_container(base, &tier);
        self.intern_view_fields(filter, sort);
        let Hub { views, store, .. } = self;
        let opened = views.set.open(c, filter, sort, 0, &*store, &mut |name| {
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
    pub(in crate::hub) fn open_subscription(
        &mut self,
        slot: u32,
        req_id: u32,
        view: u32,
        offset: usize,
        size: usize,
        reset: bool,
        now: Instant,
    ) {
        let window = match self.views.set.open_window(view, offset, size) {
            Ok(w) => w,
            Err(e) => {
                let ms = self.views.clock_ms(now);
                let _ = self.views.set.release(view, ms);
                return self.send_error(slot, req_id, engine_error(&e), now);
            }
        };
        self.views
            .add_subscription(slot, ViewSub::creating(view, window, req_id, reset));
        self.flush_views(now);
    }

    /// `view.change`: moves the window; the next `view.rows` carries `req_id`.
    pub(in crate::hub) fn view_change(
        &mut self,
        sid: u32,
        req_id: u32,
        view_id: u32,
        offset: usize,
        size: usize,
        now: Instant,
    ) {
        let Some(slot) = self.sessions.slot(sid) else {
            return;
        };
        let Some(sub) = open_sub(&mut self.views.by_session, slot, view_id) else {
            return self.send_error(slot, req_id, not_open(view_id), now);
        };
        let window = sub.window;
        if let Err(e) = self.views.set.move_window(window, offset, size) {
            return self.send_error(slot, req_id, engine_error(&e), now);
        }
        sub.req_id = req_id;
        sub.change_pending = true;
        let _ = self
            .views
            .set
            .set_window_tag(window, [slot, view_id, req_id, TAG_PENDING]);
        self.flush_views(now);
        self.answer_change(slot, view_id, now);
    }

    /// Sends an empty `view.rows` for a `view.change` that the flush did not answer (the window
    /// showed the same rows after the move).
    pub(super) fn answer_change(&mut self, slot: u32, view_id: u32, now: Instant) {
        let Some(sub) = open_sub(&mut self.views.by_session, slot, view_id) else {
            return;
        };
        if !std::mem::take(&mut sub.change_pending) {
            return;
        }
        let (req_id, window) = (sub.req_id, sub.window);
        let seq = self.views.set.window_seq(window).unwrap_or(0) + 1;
        let _ = self.views.set.set_window_seq(window, seq);
        self.scratch.clear();
        let w = ViewRows::begin(&mut self.scratch, req_id, view_id, Some(seq));
        let body = w.written();
        w.finish();
        self.views
            .history
            .sent_rows(window, seq, req_id, &self.scratch[body..], now);
        self.send_reply(slot, now);
    }

    /// `view.close`: `view.closed`, then nothing more for the view; the view is released.
    pub(in crate::hub) fn view_close(&mut self, sid: u32, req_id: u32, view_id: u32, now: Instant) {
        let Some(slot) = self.sessions.slot(sid) else {
            return;
        };
        let Some(sub) = self
            .views
            .by_session
            .get_mut(&slot)
            .and_then(|v| v.open.remove(&view_id))
        else {
            return self.send_error(slot, req_id, not_open(view_id), now);
        };
        self.views.release_sub(sub, now);
        self.scratch.clear();
        view_closed(&mut self.scratch, req_id, view_id);
        self.send_reply(slot, now);
    }
}
