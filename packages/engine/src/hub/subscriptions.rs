//! Subscriptions: per record, the sessions subscribed to it and each subscription's throttle /
//! conflation state; and the sessions that passed the conflation threshold during a fan-out.
//!
//! Invariants: `by_record[id - 1].slots[i]` and `.state[i]` describe one subscription, and the
//! subscribed session's `Session::subs` maps `id` to `i` (swap-removal fixes the moved entry's
//! index). Lists are chunked so they never move as subjects are added. `to_conflate` is emptied
//! at the end of every publish batch and timer pass. `SubList::direct` counts, per worker, the
//! subscriptions with `SubState::direct` set (`direct.rs`); `direct` holds the topic entries not
//! yet emitted.

use std::time::Instant;

use super::direct::DirectOps;
use super::fan_out::mark_dirty;
use crate::chunked::ChunkedVec;
use crate::session::Session;

/// Subscribers of every record (see the module doc).
#[derive(Debug, Default)]
pub(super) struct Subscriptions {
    /// Subscribers by subject id - 1, in chunks that never move as subjects are added.
    pub(super) by_record: ChunkedVec<SubList>,
    /// Blocked sessions whose outbox passed `outbox_conflate_bytes` during a fan-out.
    pub(super) to_conflate: Vec<u32>,
    /// Topic entries (subscribe, unsubscribe, publish) waiting for the next flush pass.
    pub(super) direct: DirectOps,
}

/// Throttle / conflation state of one (session, record) subscription.
#[derive(Debug, Default, Clone)]
pub(super) struct SubState {
    /// When the last message for this record went into the session's outbox.
    pub(super) last_sent: Option<Instant>,
    /// Changed slots held back by throttling.
    pub(super) mask: u128,
    /// Updates merged into `mask`.
    pub(super) merged: u32,
    /// Record layout `mask` refers to (a different one: send an image).
    pub(super) layout: u32,
    /// An update is held back (listed in `Session::throttled`).
    pub(super) held: bool,
    /// Changes not sent because the session is conflating (listed in `Session::dirty`).
    pub(super) dirty: bool,
    /// The record's messages reach this session through its worker's topic publish, not its
    /// outbox (`direct.rs`).
    pub(super) direct: bool,
}

/// Subscribers of one record.
#[derive(Debug, Default)]
pub(super) struct SubList {
    /// Session slots.
    pub(super) slots: Vec<u32>,
    /// Their subscriptions' state, parallel to `slots`.
    pub(super) state: Vec<SubState>,
    /// `(worker, n)`: direct subscriptions per worker (workers with none may be listed with 0).
    pub(super) direct: Vec<(u32, u32)>,
    /// Direct subscriptions in all (the sum of `direct`).
    pub(super) direct_total: u32,
}

impl SubList {
    fn add_direct(&mut self, worker: u32) {
        self.direct_total += 1;
        match self.direct.iter_mut().find(|(w, _)| *w == worker) {
            Some((_, n)) => *n += 1,
            None => self.direct.push((worker, 1)),
        }
    }

    fn remove_direct(&mut self, worker: u32) {
        remove_direct(&mut self.direct, &mut self.direct_total, worker);
    }
}

/// One direct subscription of `worker` fewer in a list's `direct` / `direct_total`.
fn remove_direct(direct: &mut [(u32, u32)], total: &mut u32, worker: u32) {
    *total = total.saturating_sub(1);
    if let Some((_, n)) = direct.iter_mut().find(|(w, _)| *w == worker) {
        *n = n.saturating_sub(1);
    }
}

/// What `Subscriptions::subscriber` found for one subscription.
pub(super) enum Subscriber<'a> {
    /// Its session is not conflating: messages for the record may be queued to it.
    Live(&'a mut Session, &'a mut SubState),
    /// Its session is conflating: the record is now marked dirty (its image follows on the drain).
    Conflating,
    /// No session in the slot, or no such subscription.
    Gone,
}

impl Subscriptions {
    /// Makes sure record `id` has a (possibly empty) subscriber list.
    #[inline]
    pub(super) fn ensure(&mut self, id: u32) {
        self.by_record.grow_with(id as usize, SubList::default);
    }

    /// Subscribers of record `id`.
    #[inline]
    pub(super) fn list(&self, id: u32) -> Option<&SubList> {
        self.by_record.get(id as usize - 1)
    }

    /// True when record `id` has at least one subscriber.
    #[inline]
    pub(super) fn has_subscribers(&self, id: u32) -> bool {
        self.list(id).is_some_and(|l| !l.slots.is_empty())
    }

    /// State of subscriber `idx` of record `id`.
    #[inline]
    pub(super) fn state(&self, id: u32, idx: u32) -> Option<&SubState> {
        self.list(id)?.state.get(idx as usize)
    }

    /// State of subscriber `idx` of record `id`.
    #[inline]
    pub(super) fn state_mut(&mut self, id: u32, idx: u32) -> Option<&mut SubState> {
        self.by_record.get_mut(id as usize - 1)?.state.get_mut(idx as usize)
    }

    /// Subscriber `idx` of record `id`, the session in `slot` of `sessions`, when it may be sent
    /// messages for the record; a conflating session gets the record marked dirty instead.
    #[inline]
    pub(super) fn subscriber<'a>(
        &'a mut self,
        sessions: &'a mut [Option<Session>],
        slot: u32,
        id: u32,
        idx: u32,
    ) -> Subscriber<'a> {
        let Subscriptions { by_record, direct, .. } = self;
        let Some(s) = sessions.get_mut(slot as usize).and_then(Option::as_mut) else {
            return Subscriber::Gone;
        };
        let Some(list) = by_record.get_mut(id as usize - 1) else {
            return Subscriber::Gone;
        };
        let SubList {
            state,
            direct: per_worker,
            direct_total,
            ..
        } = list;
        let Some(st) = state.get_mut(idx as usize) else {
            return Subscriber::Gone;
        };
        if s.conflating {
            mark_dirty(s, st, id);
            return Subscriber::Conflating;
        }
        if st.direct {
            // a message for this one session must not race the topic: the record goes back
            // through the outbox (and turns direct again after the flush that takes it)
            st.direct = false;
            remove_direct(per_worker, direct_total, s.worker);
            s.direct = s.direct.saturating_sub(1);
            s.promote = true;
            direct.unsubscribe(s.worker, s.sid, id);
        }
        Subscriber::Live(s, st)
    }

    /// Makes subscription `idx` of record `rid` of session `s` direct (no-op when it is): the
    /// subscribe entry is queued.
    pub(super) fn make_direct(&mut self, s: &mut Session, rid: u32, idx: u32) {
        let Some(list) = self.by_record.get_mut(rid as usize - 1) else {
            return;
        };
        let Some(st) = list.state.get_mut(idx as usize) else {
            return;
        };
        if st.direct {
            return;
        }
        st.direct = true;
        list.add_direct(s.worker);
        s.direct += 1;
        self.direct.subscribe(s.worker, s.sid, rid);
    }

    /// Ends every direct subscription of session `s` with one unsubscribe entry (none when it
    /// has none); they become direct again once it is eligible and flushed (`Hub::promote`).
    pub(super) fn end_all_direct(&mut self, s: &mut Session) {
        if s.direct == 0 {
            return;
        }
        for (&rid, &idx) in &s.subs {
            let Some(list) = self.by_record.get_mut(rid as usize - 1) else {
                continue;
            };
            if let Some(st) = list.state.get_mut(idx as usize).filter(|st| st.direct) {
                st.direct = false;
                list.remove_direct(s.worker);
            }
        }
        s.direct = 0;
        s.promote = true;
        self.direct.unsubscribe(s.worker, s.sid, 0);
    }

    /// Subscribes session `s` (in `slot`, not yet subscribed to `id`) to record `id`; returns
    /// its index in the record's list (also noted in `s.subs`).
    pub(super) fn add(&mut self, id: u32, slot: u32, s: &mut Session) -> u32 {
        self.ensure(id);
        let list = &mut self.by_record[id as usize - 1];
        list.slots.push(slot);
        list.state.push(SubState::default());
        let idx = (list.slots.len() - 1) as u32;
        s.subs.insert(id, idx);
        s.promote = true;
        idx
    }

    /// Removes subscriber `idx` of record `rid` (swap-remove) of a session of `worker` and fixes
    /// the moved subscriber's index in its session (`slots`). Returns true when the subscription
    /// was direct (the caller queues the unsubscribe entry).
    pub(super) fn remove(&mut self, slots: &mut [Option<Session>], rid: u32, idx: u32, worker: u32) -> bool {
        let Some(list) = self.by_record.get_mut(rid as usize - 1) else {
            return false;
        };
        let idx = idx as usize;
        if idx >= list.slots.len() {
            return false;
        }
        list.slots.swap_remove(idx);
        let was_direct = list.state.swap_remove(idx).direct;
        if was_direct {
            list.remove_direct(worker);
        }
        if let Some(&moved) = list.slots.get(idx) {
            if let Some(m) = slots.get_mut(moved as usize).and_then(Option::as_mut) {
                m.subs.insert(rid, idx as u32);
            }
        }
        was_direct
    }
}
