//! `record.subscribe` / `record.unsubscribe`: validation, limits, acks, images.

use std::collections::HashSet;
use std::time::Instant;

use super::{ensure_list, remove_sub_at, schedule, Hub, SubState};
use crate::error::ErrorCode;
use crate::wire::encode::{self, SubscribedRef};
use crate::wire::rules::{check_subject, show_str, MAX_SUBJECTS_PER_REQUEST};

/// A request error to send back as an `error` frame.
pub(super) struct ReqError {
    pub(super) code: ErrorCode,
    pub(super) message: String,
    pub(super) field: Option<String>,
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

    /// Queues `scratch` as the answer to a request of session `slot` and makes the session due
    /// now: a reply (`record.subscribed`, `view.created`, `error`, ...) is flushed at the end of
    /// this pass with whatever the outbox already holds, never held for the burst window (a
    /// client is waiting on it; live updates keep their batching).
    pub(super) fn send_reply(&mut self, slot: u32, now: Instant) {
        let Some(s) = self.sessions.get_mut(slot as usize).and_then(Option::as_mut) else {
            return;
        };
        s.outbox.push_control(&self.scratch);
        self.stats.deliveries += 1;
        s.burst.on_message(&self.cfg.batching, now);
        if s.due.is_none_or(|d| d > now) {
            s.due = Some(now);
            if s.blocked_since.is_none() {
                schedule(&mut self.timers, s, slot, now);
            }
        }
    }

    /// Queues `scratch` as a control message of session `slot`.
    pub(super) fn send_control(&mut self, slot: u32, now: Instant) {
        let Some(s) = self.sessions.get_mut(slot as usize).and_then(Option::as_mut) else {
            return;
        };
        s.outbox.push_control(&self.scratch);
        self.stats.deliveries += 1;
        let due = s.burst.on_message(&self.cfg.batching, now);
        if s.due.is_none() {
            s.due = Some(due);
            if s.blocked_since.is_none() {
                schedule(&mut self.timers, s, slot, due);
            }
        }
    }

    pub(super) fn subscribe(&mut self, sid: u32, req_id: u32, subjects: &[String], now: Instant) {
        let Some(&slot) = self.by_sid.get(&sid) else { return };
        if let Err(e) = check_subjects(subjects) {
            return self.send_error(slot, req_id, e, now);
        }
        for (i, subject) in subjects.iter().enumerate() {
            if let Err(e) = self.check_private(slot, subject, || format!("subjects.{i}")) {
                return self.send_error(slot, req_id, e, now);
            }
        }
        let Some(s) = self.sessions.get(slot as usize).and_then(Option::as_ref) else {
            return;
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
            let e = ReqError {
                code: ErrorCode::LimitExceeded,
                message: format!(
                    "'subjects' would raise this session's subscriptions to {total}; the limit (maxSubscriptionsPerSession) is {limit}"
                ),
                field: Some("subjects".into()),
            };
            return self.send_error(slot, req_id, e, now);
        }

        let mut acks = Vec::with_capacity(subjects.len());
        let mut images: Vec<(u32, u32)> = Vec::new();
        for subject in subjects {
            let id = self.tier_target(subject, &tier);
            ensure_list(&mut self.subs, id);
            let Some(s) = self.sessions.get_mut(slot as usize).and_then(Option::as_mut) else {
                return;
            };
            let idx = match s.subs.get(&id) {
                Some(&idx) => idx,
                None => {
                    let list = &mut self.subs[id as usize - 1];
                    list.slots.push(slot);
                    list.state.push(SubState::default());
                    let idx = (list.slots.len() - 1) as u32;
                    s.subs.insert(id, idx);
                    self.stats.subscriptions += 1;
                    idx
                }
            };
            let pending = self.store.get(id).is_none();
            acks.push((id, pending));
            if !pending && !images.iter().any(|&(i, _)| i == id) {
                images.push((id, idx));
            }
        }
        self.scratch.clear();
        let refs: Vec<SubscribedRef<'_>> = subjects
            .iter()
            .zip(&acks)
            .map(|(subject, &(id, pending))| SubscribedRef { subject, id, pending })
            .collect();
        encode::subscribed(&mut self.scratch, req_id, &refs);
        self.send_reply(slot, now);
        for (id, idx) in images {
            self.send_image(slot, id, idx, now);
        }
    }

    pub(super) fn unsubscribe(&mut self, sid: u32, req_id: u32, subjects: &[String], now: Instant) {
        let Some(&slot) = self.by_sid.get(&sid) else { return };
        if let Err(e) = check_subjects(subjects) {
            return self.send_error(slot, req_id, e, now);
        }
        let tier = self
            .sessions
            .get(slot as usize)
            .and_then(Option::as_ref)
            .map(|s| s.tier.clone())
            .unwrap_or_default();
        for subject in subjects {
            let Some(id) = self.tier_lookup(subject, &tier) else {
                continue;
            };
            let Some(s) = self.sessions.get_mut(slot as usize).and_then(Option::as_mut) else {
                return;
            };
            if let Some(idx) = s.subs.remove(&id) {
                remove_sub_at(&mut self.subs, &mut self.sessions, id, idx);
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
        let user = self
            .sessions
            .get(slot as usize)
            .and_then(Option::as_ref)
            .map_or("", |s| &s.user);
        crate::orders::privacy::check_read(user, subject).map_err(|message| ReqError {
            code: ErrorCode::NotEntitled,
            message,
            field: Some(field()),
        })
    }

    /// Sends NOT_ENTITLED and returns true when session `sid` may not read `subject` (a view of
    /// another user's blotter); false (nothing sent) when it may, or the session is unknown.
    pub(super) fn refuse_private(&mut self, sid: u32, req_id: u32, subject: &str, field: &str, now: Instant) -> bool {
        let Some(&slot) = self.by_sid.get(&sid) else {
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
}
