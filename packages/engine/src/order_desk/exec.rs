//! Driving the execution simulator: working orders indexed by instrument; a publish touching an
//! instrument's `bid`/`ask` marks it ticked, and at the end of the engine pass its working orders are
//! executed against the live quote (no scan of all orders per tick). A periodic pass
//! (`OrdersConfig::pass_interval`) executes every instrument's working orders that can act, so orders
//! on quiet instruments still progress; limit orders the quote does not cross rest in a price index
//! and cost nothing per pass (`working.rs`). One order is executed at most once per `fill_interval`, so partial
//! fills stay visible. Every resulting event is journaled and published when durable.

use std::time::Instant;

use super::catalog::{StoreCatalog, ASK, BID};
use super::working::InstrumentOrders;
use super::OrderDesk;
use crate::hub::Hub;
use crate::order_book::Side;
use crate::wire::Publish;

impl OrderDesk {
    /// Indexes an acknowledged order under its instrument.
    pub(super) fn start_working(&mut self, order_id: u64, now: Instant) {
        let Some(o) = self.book.get(order_id) else { return };
        if !o.status.is_open() {
            return;
        }
        match self.working.get_mut(o.instrument.as_str()) {
            Some(set) => set.push_active(order_id, now),
            None => {
                let mut set = InstrumentOrders::default();
                set.push_active(order_id, now);
                self.working.insert(o.instrument.clone(), set);
            }
        }
        // The order may be marketable already: execute it (alone, not its instrument's whole
        // working set) at the end of this pass.
        self.fresh.push(order_id);
        if self.next_pass.is_none() {
            self.next_pass = Some(now + self.cfg.pass_interval);
        }
    }

    /// Notes which instruments with working orders a batch of publishes ticked (touched `bid` or
    /// `ask`). Call before the hub applies the batch; execution happens in `run_due`.
    pub fn note_publishes(&mut self, batch: &[Publish]) {
        if self.working.is_empty() {
            return;
        }
        for p in batch {
            if !self.working.contains_key(p.subject.as_str()) || self.ticked.contains(p.subject.as_str()) {
                continue;
            }
            if p.image || p.fields.iter().any(|f| f.name == BID || f.name == ASK) {
                self.ticked.insert(p.subject.clone());
            }
        }
    }

    /// When `run_due` next has periodic work: the execution pass while any order works, the end of
    /// day check while DAY expiry is on (None: nothing scheduled).
    pub fn next_deadline(&self) -> Option<Instant> {
        if !self.deciding() {
            return None; // a cluster follower runs no simulator and no expiry
        }
        // Ticked instruments are executed at the end of the pass that saw the tick.
        match (self.next_pass, self.end_of_day_deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Call once per engine pass, before the hub flushes: executes fresh orders, ticked
    /// instruments and (when due) the periodic pass.
    pub fn run_due(&mut self, hub: &mut Hub, now: Instant) {
        if self.failed.is_some() || !self.deciding() {
            return;
        }
        self.expire_due(hub, now);
        let fresh = std::mem::take(&mut self.fresh);
        for id in fresh {
            self.execute_one(hub, id, now);
        }
        let periodic = self.next_pass.is_some_and(|t| now >= t);
        let instruments: Vec<String> = if periodic {
            self.ticked.clear();
            self.working.keys().cloned().collect()
        } else {
            self.ticked.drain().collect()
        };
        for i in &instruments {
            self.execute_instrument(hub, i, now);
        }
        if periodic || self.next_pass.is_none() {
            self.next_pass = (!self.working.is_empty()).then(|| now + self.cfg.pass_interval);
        }
    }

    /// Runs the simulator once for a newly working order (its index entry's next execution is
    /// pushed back by the fill interval when it filled).
    fn execute_one(&mut self, hub: &mut Hub, order_id: u64, now: Instant) {
        let Some(o) = self.book.get(order_id).filter(|o| o.status.is_open()) else {
            return;
        };
        let quote = StoreCatalog::new(hub.store()).quote(&o.instrument);
        let instrument = o.instrument.clone();
        let ts = self.now_ms();
        let events = self.book.execute(order_id, &quote, &mut self.sim, ts);
        if events.is_empty() {
            return;
        }
        if let Some(w) = self
            .working
            .get_mut(instrument.as_str())
            .and_then(|set| set.active.iter_mut().rev().find(|w| w.order_id == order_id))
        {
            w.next_exec = now + self.cfg.fill_interval;
        }
        if !self.book.get(order_id).is_some_and(|o| o.status.is_open()) {
            self.shared.open.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        }
        for ev in events {
            self.append(hub, ev, None, now);
        }
    }

    /// Runs the simulator for `instrument`'s working orders that can act: the resting orders the
    /// quote now crosses join the active ones, and every due active order is executed. Drops orders
    /// no longer open; an active order the simulator leaves waiting on its limit rests again.
    fn execute_instrument(&mut self, hub: &mut Hub, instrument: &str, now: Instant) {
        let quote = StoreCatalog::new(hub.store()).quote(instrument);
        let ts = self.now_ms();
        let fill_interval = self.cfg.fill_interval;
        let OrderDesk { working, book, sim, .. } = self;
        let Some(set) = working.get_mut(instrument) else {
            return;
        };
        set.pull_crossed(&quote, now);
        let mut events = Vec::new();
        let mut closed = 0u64;
        let mut to_rest = Vec::new();
        set.active.retain_mut(|w| {
            if !book.get(w.order_id).is_some_and(|o| o.status.is_open()) {
                return false; // cancelled by the user meanwhile (counted then)
            }
            if w.next_exec > now {
                return true;
            }
            let evs = book.execute(w.order_id, &quote, sim, ts);
            if evs.is_empty() {
                // Waiting: a limit order waits until the quote crosses its limit, so it rests.
                if book.get(w.order_id).is_some_and(InstrumentOrders::can_rest) {
                    to_rest.push(w.order_id);
                    return false;
                }
                return true;
            }
            w.next_exec = now + fill_interval;
            events.extend(evs);
            let open = book.get(w.order_id).is_some_and(|o| o.status.is_open());
            closed += u64::from(!open);
            open
        });
        for id in to_rest {
            if let Some(o) = book.get(id) {
                set.rest(o);
            }
        }
        if set.is_empty() {
            working.remove(instrument);
        }
        self.shared.open.fetch_sub(closed, std::sync::atomic::Ordering::Relaxed);
        for ev in events {
            self.append(hub, ev, None, now);
        }
    }

    /// A cancel, amend or expiry of `order_id`, which had limit `price` on `side` before it: the
    /// order leaves the resting index, and when still open (an amend) becomes active so the next
    /// pass decides on its new terms. Call after the book applied the change.
    pub(super) fn unrest(&mut self, order_id: u64, side: Side, price: Option<f64>, now: Instant) {
        let Some(o) = self.book.get(order_id) else { return };
        let open = o.status.is_open();
        let Some(set) = self.working.get_mut(o.instrument.as_str()) else {
            return;
        };
        if set.remove_resting(order_id, side, price) && open {
            set.push_active(order_id, now);
            if self.next_pass.is_none() {
                self.next_pass = Some(now + self.cfg.pass_interval);
            }
        }
        if set.is_empty() {
            let instrument = o.instrument.clone();
            self.working.remove(instrument.as_str());
        }
    }
}
