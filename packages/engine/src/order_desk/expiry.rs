//! DAY order expiry: at the configured end of day (`OrdersConfig::end_of_day`, UTC by the
//! desk's injectable clock) every open DAY order created before it is cancelled with reason
//! `endOfDay`. Each expiry is an ordinary `Cancelled` journal entry (appended like a user's cancel,
//! published to its trade record when durable), so recovery replays it like any cancel.
//!
//! The first engine pass after start checks at once: DAY orders from before an end of day the
//! server was down across expire then. Afterwards the desk wakes at the next end of day (at least
//! once a minute, so a stepped wall clock is noticed).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::OrderDesk;
use crate::hub::Hub;

/// Longest the engine sleeps before re-reading the wall clock for the end of day.
const MAX_END_OF_DAY_SLEEP: Duration = Duration::from_secs(60);

impl OrderDesk {
    /// When the engine thread should next check the end of day (`None`: expiry off).
    pub(super) fn end_of_day_deadline(&self) -> Option<Instant> {
        self.cfg.end_of_day?;
        let Some(due_ms) = self.next_end_of_day else {
            return Some(Instant::now()); // not checked since start
        };
        let wait = Duration::from_millis(due_ms.saturating_sub(self.now_ms()));
        Some(Instant::now() + wait.min(MAX_END_OF_DAY_SLEEP))
    }

    /// Expires DAY orders when an end of day has passed since the last check; returns how many.
    pub(super) fn expire_due(&mut self, hub: &mut Hub, now: Instant) -> usize {
        let Some(eod) = self.cfg.end_of_day else { return 0 };
        let now_ms = self.now_ms();
        if self.next_end_of_day.is_some_and(|due| now_ms < due) {
            return 0;
        }
        self.next_end_of_day = Some(eod.next_after(now_ms));
        let events = self.book.expire_day_orders(now_ms, eod.last_at_or_before(now_ms));
        let n = events.len();
        self.shared.open.fetch_sub(n as u64, Ordering::Relaxed);
        self.shared.expired.fetch_add(n as u64, Ordering::Relaxed);
        for ev in events {
            if let Some(o) = self.book.get(ev.order_id()) {
                // A cancel keeps the limit: the order leaves the resting index at it.
                let (id, side, price) = (o.order_id, o.side, o.price);
                self.unrest(id, side, price, now);
            }
            self.append(hub, ev, None, now);
        }
        n
    }
}
