//! Subscriptions: per record, the sessions subscribed to it and each subscription's throttle /
//! conflation state; and the sessions that passed the conflation threshold during a fan-out.
//!
//! Invariants: `by_record[id - 1].slots[i]` and `.state[i]` describe one subscription, and the
//! subscribed session's `Session::subs` maps `id` to `i` (swap-removal fixes the moved entry's
//! index). Lists are chunked so they never move as subjects are added. `to_conflate` is emptied
//! at the end of every publish batch and timer pass.

use std::time::Instant;

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
}

/// Subscribers of one record.
#[derive(Debug, Default)]
pub(super) struct SubList {
    /// Session slots.
    pub(super) slots: Vec<u32>,
    /// Their subscriptions' state, parallel to `slots`.
    pub(super) state: Vec<SubState>,
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
        let (Some(s), Some(st)) = (
            sessions.get_mut(slot as usize).and_then(Option::as_mut),
            self.state_mut(id, idx),
        ) else {
            return Subscriber::Gone;
        };
        if s.conflating {
            mark_dirty(s, st, id);
            return Subscriber::Conflating;
        }
        Subscriber::Live(s, st)
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
        idx
    }

    /// Removes subscriber `idx` of record `rid` (swap-remove) and fixes the moved subscriber's
    /// index in its session (`slots`).
    pub(super) fn remove(&mut self, slots: &mut [Option<Session>], rid: u32, idx: u32) {
        let Some(list) = self.by_record.get_mut(rid as usize - 1) else {
            return;
        };
        let idx = idx as usize;
        if idx >= list.slots.len() {
            return;
        }
        list.slots.swap_remove(idx);
        list.state.swap_remove(idx);
        if let Some(&moved) = list.slots.get(idx) {
            if let Some(m) = slots.get_mut(moved as usize).and_then(Option::as_mut) {
                m.subs.insert(rid, idx as u32);
            }
        }
    }
}
