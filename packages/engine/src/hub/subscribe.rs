//! `record.subscribe` / `record.unsubscribe`: validation, limits, acks, images; and what a
//! rule reload needs: listing sessions' open views and revoking one with a reason.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use super::Hub;
use crate::error::ErrorCode;
use crate::wire::encode::{self, SubscribedRef};
use crate::wire::rules::{check_subject, show_str, MAX_SUBJECTS_PER_REQUEST};

/// A request error to send back as an `error` frame.
pub(super) struct ReqError {
    pub(super) code: ErrorCode,
    pub(super) message: String,
    pub(super) field: Option<String>,
}

/// One subject a session was just subscribed to (`Hub::attach`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Attached {
    /// Record id (the tier's record where there is one).
    pub(super) id: u32,
    /// The session's index in the record's subscriber list.
    pub(super) idx: u32,
    /// No source has published it yet.
    pub(super) pending: bool,
}

/// One open view of a session (`Hub::session_views`), as a rule reload re-checks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionView {
    /// Session id.
    pub sid: u32,
    /// The session's view id (from `view.created`).
    pub view_id: u32,
    /// Container subject as the client requested it (a tiered session's view runs over the
    /// container's tier mirror; this is the container itself).
    pub container: String,
    /// Tier the view computes on (empty: the constituents themselves).
    pub tier: String,
}

fn check_subjects(subjects: &[String]) -> Result<(), ReqError> {
    if subjects.is_empty() || subjects.len() > MAX_SUBJECTS_PER_REQUEST {
        return Err(ReqError {
            code: ErrorCode::BadRequest,
            message: format!(
                "'subjects' must hold 1..{MAX_SUBJECTS_PER_REQUEST} subjects, got {}",
                subjects.len()
            ),
            field: Some("subjects".into()),
        });
    }
    for (i, s) in subjects.iter().enumerate() {
        if let Err(rule) = check_subject(s) {
            return Err(ReqError {
                code: ErrorCode::BadRequest,
                message: format!("'subjects.{i}' ({}) {rule}", show_str(s)),
                field: Some(format!("subjects.{i}")),
            });
        }
    }
    Ok(())
}

impl Hub {
    pub(super) fn send_error(&mut self, slot: u32, req_id: u32, e: ReqError, now: Instant) {
        self.scratch.clear();
        encode::error(
            &mut self.scratch,
            Some(req_id),
            e.code,
            &e.message,
            e.field.as_deref(),
            None,
        );
        self.send_reply(slot, now);
    }

    /// Queues `scratch` as the answer to a request of session `slot`, due now
    /// (`Sessions::push_reply`).
    pub(super) fn send_reply(&mut self, slot: u32, now: Instant) {
        self.sessions
            .push_reply(slot, &self.scratch, &self.cfg.batching, &mut self.stats, now);
    }

    /// Queues `scratch` as a control message of session `slot`.
    pub(super) fn send_control(&mut self, slot: u32, now: Instant) {
        self.sessions
            .push_control(slot, &self.scratch, &self.cfg.batching, &mut self.stats, now);
    }

    pub(super) fn subscribe(&mut self, sid: u32, req_id: u32, subjects: &[String], now: Instant) {
        let Some(slot) = self.sessions.slot(sid) else {
            return;
        };
        if let Err(e) = check_subjects(subjects) {
            return self.send_error(slot, req_id, e, now);
        }
        for (i, subject) in subjects.iter().enumerate() {
            if let Err(e) = self.check_private(slot, subject, || format!("subjects.{i}")) {
                return self.send_error(slot, req_id, e, now);
            }
        }
        let acks = match self.attach(slot, subjects, "subjects") {
            Ok(acks) => acks,
            Err(e) => return self.send_error(slot, req_id, e, now),
        };
        self.scratch.clear();
        let refs: Vec<SubscribedRef<'_>> = subjects
            .iter()
            .zip(&acks)
            .map(|(subject, a)| SubscribedRef {
                subject,
                id: a.id,
                pending: a.pending,
            })
            .collect();
        encode::subscribed(&mut self.scratch, req_id, &refs);
        self.send_reply(slot, now);
        let mut sent: Vec<u32> = Vec::new();
        for a in acks {
            if !a.pending && !sent.contains(&a.id) {
                sent.push(a.id);
                self.send_image(slot, a.id, a.idx, now);
            }
        }
    }

    /// Subscribes session `slot` to `subjects` (validated, entitled), each to its tier's record
    /// where there is one; nothing is subscribed when the session would pass
    /// `maxSubscriptionsPerSession` (LIMIT_EXCEEDED naming `field`). One `Attached` per subject.
    pub(super) fn attach(&mut self, slot: u32, subjects: &[String], field: &str) -> Result<Vec<Attached>, ReqError> {
        let Some(s) = self.sessions.get(slot) else {
            return Ok(Vec::new());
        };
        let tier = s.tier.clone();
        let mut fresh = HashSet::new();
        for subject in subjects {
            // A tiered session's `X` is `X@tier` when that record exists (tiers.rs).
            let known = self
                .tier_lookup(subject, &tier)
                .is_some_and(|id| s.subs.contains_key(&id));
            if !known {
                fresh.insert(subject.as_str());
            }
        }
        let total = s.subs.len() + fresh.len();
        let limit = self.cfg.max_subscriptions_per_session as usize;
        if total > limit {
            return Err(ReqError {
                code: ErrorCode::LimitExceeded,
                message: format!(
                    "'{field}' would raise this session's subscriptions to {total}; the limit (maxSubscriptionsPerSession) is {limit}"
                ),
                field: Some(field.into()),
            });
        }
        let mut acks = Vec::with_capacity(subjects.len());
        for subject in subjects {
            let id = self.tier_target(subject, &tier);
            self.subscriptions.ensure(id);
            let Some(s) = self.sessions.get_mut(slot) else {
                break;
            };
            let idx = match s.subs.get(&id) {
                Some(&idx) => idx,
                None => {
                    self.stats.subscriptions += 1;
                    self.subscriptions.add(id, slot, s)
                }
            };
            let pending = self.store.get(id).is_none();
            acks.push(Attached { id, idx, pending });
        }
        Ok(acks)
    }

    pub(super) fn unsubscribe(&mut self, sid: u32, req_id: u32, subjects: &[String], now: Instant) {
        let Some(slot) = self.sessions.slot(sid) else {
            return;
        };
        if let Err(e) = check_subjects(subjects) {
            return self.send_error(slot, req_id, e, now);
        }
        let tier = self.sessions.get(slot).map(|s| s.tier.clone()).unwrap_or_default();
        // `record.unsubscribed` follows the last message for its subjects, and a blocked session's
        // reply overtakes its held record messages: conflate those first (sent later as images,
        // only for records still subscribed).
        if self
            .sessions
            .get(slot)
            .is_some_and(|s| s.blocked_since.is_some() && s.outbox.messages() as usize > s.outbox.control_messages())
        {
            self.start_conflation(slot);
        }
        for subject in subjects {
            let Some(id) = self.tier_lookup(subject, &tier) else {
                continue;
            };
            let Some(s) = self.sessions.get_mut(slot) else {
                return;
            };
            if let Some(idx) = s.subs.remove(&id) {
                let (worker, sid) = (s.worker, s.sid);
                if self.subscriptions.remove(&mut self.sessions.slots, id, idx, worker) {
                    // before the ack: nothing of the record reaches the socket after it
                    self.subscriptions.direct.unsubscribe(worker, sid, id);
                    if let Some(s) = self.sessions.get_mut(slot) {
                        s.direct = s.direct.saturating_sub(1);
                    }
                }
                self.stats.subscriptions -= 1;
            }
        }
        self.scratch.clear();
        encode::unsubscribed(&mut self.scratch, req_id, subjects);
        self.send_reply(slot, now);
    }

    /// NOT_ENTITLED when session `slot`'s user may not read `subject` (another user's trade record
    /// or blotter, see `orders::privacy`); `field` names it in the error.
    pub(super) fn check_private(
        &self,
        slot: u32,
        subject: &str,
        field: impl FnOnce() -> String,
    ) -> Result<(), ReqError> {
        let user = self.sessions.get(slot).map_or("", |s| &s.user);
        crate::order_desk::privacy::check_read(user, subject).map_err(|message| ReqError {
            code: ErrorCode::NotEntitled,
            message,
            field: Some(field()),
        })
    }

    /// Sends NOT_ENTITLED and returns true when session `sid` may not read `subject` (a view of
    /// another user's blotter); false (nothing sent) when it may, or the session is unknown.
    pub(super) fn refuse_private(&mut self, sid: u32, req_id: u32, subject: &str, field: &str, now: Instant) -> bool {
        let Some(slot) = self.sessions.slot(sid) else {
            return false;
        };
        match self.check_private(slot, subject, || field.to_owned()) {
            Ok(()) => false,
            Err(e) => {
                self.send_error(slot, req_id, e, now);
                true
            }
        }
    }

    /// The open views of the sessions `sids` (unknown ids have none), by session then view id.
    /// O(views + listed views).
    pub fn session_views(&self, sids: &[u32]) -> Vec<SessionView> {
        let mut out = Vec::new();
        let mut containers: Option<HashMap<u32, u32>> = None;
        for &sid in sids {
            let Some(slot) = self.sessions.slot(sid) else {
                continue;
            };
            let mut ids = self.views.open_view_ids(slot);
            if ids.is_empty() {
                continue;
            }
            ids.sort_unstable();
            // ViewSet view id -> container subject id, built once per call (views are few).
            let by_view = containers.get_or_insert_with(|| {
                self.views
                    .set
                    .infos()
                    .into_iter()
                    .map(|i| (i.view, i.container))
                    .collect()
            });
            for (view_id, view) in ids {
                let Some(&c) = by_view.get(&view) else { continue };
                let name = self.store.subject(c);
                let (container, tier) = name.split_once("#tier:").unwrap_or((name, ""));
                out.push(SessionView {
                    sid,
                    view_id,
                    container: container.to_owned(),
                    tier: tier.to_owned(),
                });
            }
        }
        out
    }

    /// Closes view `view_id` of session `sid` because its user may no longer read the view's
    /// container: an `error` (NOT_ENTITLED, `field: "viewId"`, `reason` as the message, no reqId)
    /// then `view.closed` with reqId 0, both flushed at the end of this pass; nothing of the view
    /// follows. An unknown session or a view no longer open (closed meanwhile): nothing is sent.
    pub(super) fn revoke_view(&mut self, sid: u32, view_id: u32, reason: &str, now: Instant) {
        let Some(slot) = self.sessions.slot(sid) else {
            return;
        };
        if !self.views.close_view(slot, view_id, now) {
            return;
        }
        self.scratch.clear();
        encode::error(
            &mut self.scratch,
            None,
            ErrorCode::NotEntitled,
            reason,
            Some("viewId"),
            None,
        );
        self.send_reply(slot, now);
        self.scratch.clear();
        crate::wire::view::view_closed(&mut self.scratch, 0, view_id);
        self.send_reply(slot, now);
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Command, ContainerOp};
    use super::*;
    use crate::config::EngineConfig;

    fn publish(hub: &mut Hub, subject: &str, bid: f64, now: Instant) {
        // the first publish creates the record, later ones update it
        super::super::test_support::publish_number(hub, subject, "bid", bid, bid == 1.0, now);
    }

    /// Messages queued to session `sid` since the last call; every session's queue is then
    /// flushed into a sink that drops them.
    fn take(hub: &mut Hub, sid: u32, now: Instant) -> Vec<serde_json::Value> {
        super::super::test_support::take_queued(hub, sid, now + std::time::Duration::from_secs(1))
    }

    fn parse(queued: &[u8]) -> Vec<serde_json::Value> {
        serde_json::from_str(&format!("[{}]", std::str::from_utf8(queued).unwrap())).unwrap()
    }

    fn view(hub: &mut Hub, sid: u32, req_id: u32, container: &str, now: Instant) {
        let create = Command::ViewCreate {
            sid,
            req_id,
            container: container.into(),
            filter: String::new(),
            sort: String::new(),
            offset: 0,
            size: 10,
        };
        hub.handle(create, now);
    }

    /// A hub with `/C/A` = [/P/1], `/C/B` = [/P/2] and sessions 1 (user u) and 2 (user v).
    fn hub_with_views(now: Instant) -> Hub {
        let mut hub = Hub::new(EngineConfig::default());
        for (c, p) in [("/C/A", "/P/1"), ("/C/B", "/P/2")] {
            publish(&mut hub, p, 1.0, now);
            let ops = vec![ContainerOp::Add(vec![p.into()])];
            hub.handle(Command::ContainerPublish { subject: c.into(), ops }, now);
        }
        for (sid, user) in [(1, "u"), (2, "v")] {
            let open = Command::OpenSession {
                sid,
                worker: 0,
                user: user.into(),
                tier: String::new(),
            };
            hub.handle(open, now);
        }
        hub
    }

    #[test]
    fn session_views_lists_open_views_by_session_then_view_id() {
        let now = Instant::now();
        let mut hub = hub_with_views(now);
        assert!(hub.session_views(&[1, 2, 99]).is_empty());
        view(&mut hub, 1, 1, "/C/A", now);
        view(&mut hub, 1, 2, "/C/B", now);
        view(&mut hub, 2, 1, "/C/A", now); // shares session 1's view
        view(&mut hub, 1, 3, "bad subject", now); // refused: not listed
        let got = hub.session_views(&[2, 1, 99]);
        let got: Vec<(u32, u32, &str)> = got.iter().map(|v| (v.sid, v.view_id, v.container.as_str())).collect();
        assert_eq!(got, [(2, 1, "/C/A"), (1, 1, "/C/A"), (1, 2, "/C/B")]);
        assert!(hub.session_views(&[1]).iter().all(|v| v.tier.is_empty()));
        hub.handle(
            Command::ViewClose {
                sid: 1,
                req_id: 4,
                view_id: 2,
            },
            now,
        );
        assert_eq!(hub.session_views(&[1]).len(), 1);
    }

    #[test]
    fn revoke_view_sends_the_error_then_view_closed_and_stops_the_rows() {
        let now = Instant::now();
        let mut hub = hub_with_views(now);
        view(&mut hub, 1, 1, "/C/A", now);
        view(&mut hub, 1, 2, "/C/B", now);
        view(&mut hub, 2, 1, "/C/A", now);
        take(&mut hub, 1, now);
        take(&mut hub, 2, now);
        let reason = "view 1 of '/C/A' closed: rules changed".to_owned();
        hub.handle(
            Command::ViewRevoke {
                sid: 1,
                view_id: 1,
                reason: reason.clone(),
            },
            now,
        );
        let m = take(&mut hub, 1, now);
        assert_eq!(m.len(), 2, "{m:?}");
        assert_eq!(
            (
                &m[0]["type"],
                &m[0]["code"],
                &m[0]["field"],
                &m[0]["message"],
                m[0].get("reqId")
            ),
            (
                &"error".into(),
                &"NOT_ENTITLED".into(),
                &"viewId".into(),
                &reason.into(),
                None
            )
        );
        assert_eq!(
            (&m[1]["type"], &m[1]["reqId"], &m[1]["viewId"]),
            (&"view.closed".into(), &0.into(), &1.into())
        );
        let left: Vec<u32> = hub
            .session_views(&[1, 2])
            .iter()
            .map(|v| v.sid * 10 + v.view_id)
            .collect();
        assert_eq!(left, [12, 21], "session 1's /C/B view and session 2's /C/A view stay");
        // A row change reaches session 2's view of /C/A, not session 1's revoked one.
        publish(&mut hub, "/P/1", 2.0, now);
        hub.handle(
            Command::ViewRevoke {
                sid: 1,
                view_id: 1,
                reason: "again".into(),
            },
            now,
        );
        hub.handle(
            Command::ViewRevoke {
                sid: 99,
                view_id: 1,
                reason: "unknown".into(),
            },
            now,
        );
        // (take flushes every session: read session 2's queue first)
        let m = parse(hub.queued(2).unwrap_or_default());
        assert!(take(&mut hub, 1, now).is_empty(), "nothing more for the revoked view");
        assert!(m.iter().any(|x| x["type"] == "view.rows" && x["viewId"] == 1), "{m:?}");
    }
}
