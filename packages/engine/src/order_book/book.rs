//! `OrderBook`: every order's state, changed only by applying [`OrderEvent`]s.
//!
//! Decisions (`submit`, `acknowledge`, `cancel`, `amend`, `execute`, `end_of_day`) validate, build
//! the event(s), apply them and return them; the caller journals the returned events and sends any
//! reply only after the journal acknowledged them. Replay feeds the journaled events to
//! [`OrderBook::apply`] (or [`OrderBook::rebuild`]) and reaches the same state.

use super::client_ids::ClientIds;
use super::event::{DecodeError, OrderEvent};
use super::model::{Amend, CancelReason, NewOrder, Order, OrderStatus, Quote, Side, TimeInForce};
use super::risk::{self, Exposure, Proposed, RiskRules};
use super::simulator::{Decision, ExecutionSimulator};
use super::validate::{self, reject, InstrumentCatalog, OrderLimits, OrderReject, RejectField, RejectRule};
use crate::chunked::ChunkedVec;
use crate::journal::{Entry, JournalError};
use rustc_hash::FxHashMap;

/// An event that does not fit the order's current state (replay of a foreign or damaged journal).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("order {order_id}: cannot apply {event} in state {state}")]
pub struct TransitionError {
    /// The order named by the event.
    pub order_id: u64,
    /// Event kind.
    pub event: &'static str,
    /// Current state (`"missing"` when the order does not exist, `"exists"` for a re-accept).
    pub state: &'static str,
}

/// Why [`OrderBook::rebuild`] stopped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RebuildError {
    /// Reading the journal failed.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// Entry `seq` is not an order event.
    #[error("journal seq {seq}: {error}")]
    Decode {
        /// Journal seq.
        seq: u64,
        /// What is wrong.
        error: DecodeError,
    },
    /// Entry `seq` does not fit the state built so far.
    #[error("journal seq {seq}: {error}")]
    Transition {
        /// Journal seq.
        seq: u64,
        /// What is wrong.
        error: TransitionError,
    },
}

/// A new order that passed [`OrderBook::check_submit`]: whole quantity and tick-checked price.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Checked {
    quantity: u64,
    price: Option<f64>,
    /// The price its notional counts at (risk.rs): the limit, or a market order's touch.
    reference: f64,
}

/// All orders, by id and by (user, client order id).
#[derive(Debug, Default, Clone)]
pub struct OrderBook {
    limits: OrderLimits,
    /// By id (index = id - 1), in chunks that never move as the book grows.
    orders: ChunkedVec<Order>,
    /// user -> client order id -> order id (nested so lookups need no allocation; per user in
    /// shards that grow one at a time, `client_ids.rs`).
    by_client: FxHashMap<String, ClientIds>,
    /// Pre-trade risk rules (empty: none checked; the durable book has none).
    risk: RiskRules,
    /// Open notional per user and rule, kept as events apply (`risk.rs`).
    exposure: Exposure,
    /// A book that only applies decided events (`applying`): no `by_client` index.
    applying: bool,
}

impl OrderBook {
    /// An empty book with `limits`.
    pub fn new(limits: OrderLimits) -> OrderBook {
        OrderBook {
            limits,
            orders: ChunkedVec::default(),
            by_client: FxHashMap::default(),
            risk: RiskRules::default(),
            exposure: Exposure::default(),
            applying: false,
        }
    }

    /// An empty book that only applies events another book decided (a single node's durable
    /// book: journaled events, in journal order). It keeps no (user, client order id) index:
    /// `find` answers `None` and an accept's client order id is not checked for reuse (the
    /// deciding book refused reuse before the event was journaled). The index is a hash insert
    /// and lookup per order and a copy of every client order id, on the engine thread. Never
    /// the source of a deciding book (cluster promotion clones its durable book: that one is
    /// `new`).
    pub fn applying(limits: OrderLimits) -> OrderBook {
        OrderBook {
            applying: true,
            ..OrderBook::new(limits)
        }
    }

    /// Checks new orders and amends against `rules` from now on; the open notional of the orders
    /// already in the book is counted again (limit orders at their limit, market orders at their
    /// average fill price).
    pub fn set_risk(&mut self, rules: RiskRules) {
        self.risk = rules;
        self.exposure = Exposure::default();
        for o in self.orders.iter().filter(|o| o.status.is_open()) {
            self.exposure.sync(&self.risk, o);
        }
    }

    /// The risk rules.
    pub fn risk(&self) -> &RiskRules {
        &self.risk
    }

    /// Open notional per user and rule.
    pub fn exposure(&self) -> &Exposure {
        &self.exposure
    }

    /// Rebuilds a book from journal entries holding encoded [`OrderEvent`]s (in seq order).
    pub fn rebuild(
        limits: OrderLimits,
        entries: impl IntoIterator<Item = Result<Entry, JournalError>>,
    ) -> Result<OrderBook, RebuildError> {
        let mut book = OrderBook::new(limits);
        for entry in entries {
            let entry = entry?;
            let mut ev =
                OrderEvent::decode(&entry.body).map_err(|error| RebuildError::Decode { seq: entry.seq, error })?;
            book.apply_taking(&mut ev)
                .map_err(|error| RebuildError::Transition { seq: entry.seq, error })?;
        }
        Ok(book)
    }

    /// The limits validation uses.
    pub fn limits(&self) -> &OrderLimits {
        &self.limits
    }

    /// Order by engine id.
    pub fn get(&self, order_id: u64) -> Option<&Order> {
        order_id.checked_sub(1).and_then(|i| self.orders.get(i as usize))
    }

    /// Order by owner and client order id.
    pub fn find(&self, user: &str, client_order_id: &str) -> Option<&Order> {
        let id = self.by_client.get(user)?.get(client_order_id)?;
        self.get(id)
    }

    /// Every order, oldest first (`.iter()`; equality compares the orders).
    pub fn orders(&self) -> &ChunkedVec<Order> {
        &self.orders
    }

    /// Orders still open (New, Acknowledged, PartiallyFilled), oldest first.
    pub fn open_orders(&self) -> impl Iterator<Item = &Order> {
        self.orders.iter().filter(|o| o.status.is_open())
    }

    /// Number of orders ever accepted (the last order id).
    pub fn len(&self) -> usize {
        self.orders.len()
    }

    /// True when no order was ever accepted.
    pub fn is_empty(&self) -> bool {
        self.orders.is_empty()
    }

    /// Validates `req` (catalog, entitlement, ids, quantity, tick, duplicate client order id) and
    /// accepts it as New. `ts`: ms since the Unix epoch. A reject changes nothing.
    pub fn submit(
        &mut self,
        req: &NewOrder,
        catalog: &dyn InstrumentCatalog,
        ts: u64,
    ) -> Result<OrderEvent, OrderReject> {
        let checked = self.check_submit(req, catalog)?;
        self.accept_checked(req.clone(), checked, ts, false)
    }

    /// The validation half of [`Self::submit`]: what [`Self::accept_checked`] needs, or the reject.
    /// Changes nothing.
    pub fn check_submit(&self, req: &NewOrder, catalog: &dyn InstrumentCatalog) -> Result<Checked, OrderReject> {
        let (quantity, price) = validate::check_new(req, catalog, &self.limits)?;
        if self.find(&req.user, &req.client_order_id).is_some() {
            let msg = format!("user {} already has an order {}", req.user, req.client_order_id);
            return Err(reject(RejectField::ClientOrderId, RejectRule::Duplicate, msg));
        }
        let reference = if self.risk.is_empty() {
            0.0
        } else {
            let proposed = Proposed {
                user: &req.user,
                instrument: &req.instrument,
                side: req.side,
                open_quantity: quantity,
                quantity,
                price,
                price_changed: true,
                held: 0.0,
            };
            risk::check(&self.risk, &self.exposure, &proposed, &catalog.market(&req.instrument))?
        };
        Ok(Checked {
            quantity,
            price,
            reference,
        })
    }

    /// The accepting half of [`Self::submit`]: `req` (checked by [`Self::check_submit`]) becomes
    /// the next order, New (`acknowledged`: Acknowledged at once, by the same event); its strings
    /// move into the returned event. Errors (changing nothing) when the client order id was taken
    /// since the check.
    pub fn accept_checked(
        &mut self,
        req: NewOrder,
        checked: Checked,
        ts: u64,
        acknowledged: bool,
    ) -> Result<OrderEvent, OrderReject> {
        let ev = OrderEvent::Accepted {
            order_id: self.orders.len() as u64 + 1,
            ts,
            user: req.user,
            client_order_id: req.client_order_id,
            instrument: req.instrument,
            side: req.side,
            quantity: checked.quantity,
            price: checked.price,
            time_in_force: req.time_in_force,
            acknowledged,
            origin: None,
        };
        let ev = self.apply_ok(ev)?;
        if checked.price.is_none() && checked.reference > 0.0 {
            if let Some(o) = self.orders.len().checked_sub(1).and_then(|i| self.orders.get(i)) {
                self.exposure.set_reference(&self.risk, o, checked.reference);
            }
        }
        Ok(ev)
    }

    /// New -> Acknowledged (after the acceptance is durable).
    pub fn acknowledge(&mut self, order_id: u64, ts: u64) -> Result<OrderEvent, OrderReject> {
        let o = self.open_by_id(order_id)?;
        if o.status != OrderStatus::New {
            let msg = format!("order {order_id} is {}, not new", o.status.as_str());
            return Err(reject(RejectField::Order, RejectRule::NotOpen, msg));
        }
        self.apply_ok(OrderEvent::Acknowledged { order_id, ts })
    }

    /// Cancels the user's open order `client_order_id`.
    pub fn cancel(&mut self, user: &str, client_order_id: &str, ts: u64) -> Result<OrderEvent, OrderReject> {
        let o = self.owned(user, client_order_id)?;
        if !o.status.is_open() {
            let msg = format!("order {client_order_id} is {}", o.status.as_str());
            return Err(reject(RejectField::Order, RejectRule::NotOpen, msg));
        }
        let order_id = o.order_id;
        self.apply_ok(OrderEvent::Cancelled {
            order_id,
            ts,
            reason: CancelReason::User,
        })
    }

    /// Amends the user's open order: quantity (> filled, <= max) and/or limit price (on tick).
    pub fn amend(
        &mut self,
        user: &str,
        client_order_id: &str,
        amend: &Amend,
        catalog: &dyn InstrumentCatalog,
        ts: u64,
    ) -> Result<OrderEvent, OrderReject> {
        let o = self.owned(user, client_order_id)?;
        let (quantity, price) = validate::check_amend(o, amend, catalog, &self.limits)?;
        if !self.risk.is_empty() {
            let proposed = Proposed {
                user,
                instrument: &o.instrument,
                side: o.side,
                open_quantity: quantity - o.filled_quantity,
                quantity,
                price,
                price_changed: price != o.price,
                held: self.exposure.held(o.order_id),
            };
            risk::check(&self.risk, &self.exposure, &proposed, &catalog.market(&o.instrument))?;
        }
        let order_id = o.order_id;
        self.apply_ok(OrderEvent::Amended {
            order_id,
            ts,
            quantity,
            price,
        })
    }

    /// Runs the simulator for one open, acknowledged order against `quote`; returns the events it
    /// caused (none when the order waits). Unknown or New/terminal orders cause nothing.
    pub fn execute(&mut self, order_id: u64, quote: &Quote, sim: &mut ExecutionSimulator, ts: u64) -> Vec<OrderEvent> {
        let Some(o) = self.get(order_id) else { return Vec::new() };
        if !matches!(o.status, OrderStatus::Acknowledged | OrderStatus::PartiallyFilled) {
            return Vec::new();
        }
        let mut out = Vec::new();
        let (fill, then) = match sim.decide(o, quote) {
            Decision::Wait => (None, None),
            Decision::Fill { quantity, price } => (Some((quantity, price)), None),
            Decision::FillAndCancelRest { quantity, price } => (
                Some((quantity, price)),
                Some(OrderEvent::Cancelled {
                    order_id,
                    ts,
                    reason: CancelReason::ImmediateOrCancel,
                }),
            ),
            Decision::CancelRest => (
                None,
                Some(OrderEvent::Cancelled {
                    order_id,
                    ts,
                    reason: CancelReason::ImmediateOrCancel,
                }),
            ),
            Decision::Reject(reason) => (None, Some(OrderEvent::Rejected { order_id, ts, reason })),
        };
        if let Some((quantity, price)) = fill {
            out.push(OrderEvent::Filled {
                order_id,
                ts,
                quantity,
                price,
            });
        }
        out.extend(then);
        for ev in &out {
            self.apply(ev).expect("simulator decisions fit the order's state");
        }
        out
    }

    /// Cancels every open DAY order (end of the trading day).
    pub fn end_of_day(&mut self, ts: u64) -> Vec<OrderEvent> {
        self.expire_day_orders(ts, u64::MAX)
    }

    /// Cancels (reason `endOfDay`, at `ts`) every open DAY order created before `created_before`
    /// (ms since the epoch: the end of day that passed; orders placed after it live to the next).
    pub fn expire_day_orders(&mut self, ts: u64, created_before: u64) -> Vec<OrderEvent> {
        let ids: Vec<u64> = self
            .open_orders()
            .filter(|o| o.time_in_force == TimeInForce::Day && o.created_ms < created_before)
            .map(|o| o.order_id)
            .collect();
        ids.into_iter()
            .map(|order_id| {
                self.apply_ok(OrderEvent::Cancelled {
                    order_id,
                    ts,
                    reason: CancelReason::EndOfDay,
                })
            })
            .collect::<Result<_, _>>()
            .expect("open orders can be cancelled")
    }

    /// Applies one event (live or replayed). Errors when it does not fit the order's state; the book
    /// is unchanged then.
    pub fn apply(&mut self, ev: &OrderEvent) -> Result<&Order, TransitionError> {
        if matches!(ev, OrderEvent::Accepted { .. }) {
            // the new order owns copies of the accept's strings: the same copies as taking them
            // from a clone, and one accept path (apply_taking's)
            return self.apply_taking(&mut ev.clone());
        }
        self.transition(ev)
    }

    /// [`Self::apply`] that moves an accept's strings (user, client order id, instrument) into the
    /// new order instead of copying them; they are left empty in `ev` when it was applied (any other
    /// event, and an accept that does not fit, is left as it was).
    pub fn apply_taking(&mut self, ev: &mut OrderEvent) -> Result<&Order, TransitionError> {
        let kind = ev.kind();
        let OrderEvent::Accepted {
            order_id,
            ts,
            user,
            client_order_id,
            instrument,
            side,
            quantity,
            price,
            time_in_force,
            acknowledged,
            origin,
        } = ev
        else {
            return self.transition(ev);
        };
        if !self.accept_fits(*order_id, user, client_order_id, *quantity) {
            return Err(TransitionError {
                order_id: *order_id,
                event: kind,
                state: "exists",
            });
        }
        let strings = [
            std::mem::take(user),
            std::mem::take(client_order_id),
            std::mem::take(instrument),
        ];
        let (order_id, ts, origin) = (*order_id, *ts, origin.take());
        if !*acknowledged {
            return Ok(self.push_accepted(order_id, ts, strings, *side, *quantity, *price, *time_in_force, origin));
        }
        self.push_accepted(order_id, ts, strings, *side, *quantity, *price, *time_in_force, origin);
        // the new order is New: its acknowledgement fits
        self.transition(&OrderEvent::Acknowledged { order_id, ts })
    }

    /// Applies an event to an existing order; the book is unchanged on an error. Accepts go through
    /// `apply_taking` (one here names an order that exists, or is missing, and errors so).
    fn transition(&mut self, ev: &OrderEvent) -> Result<&Order, TransitionError> {
        let order_id = ev.order_id();
        let fail = |state: &'static str| TransitionError {
            order_id,
            event: ev.kind(),
            state,
        };
        let o = order_id
            .checked_sub(1)
            .and_then(|i| self.orders.get_mut(i as usize))
            .ok_or(fail("missing"))?;
        o.step(ev).map_err(fail)?;
        self.exposure.sync(&self.risk, o);
        Ok(o)
    }

    /// True when an accept of `order_id` fits: the next id, a client order id the user has not
    /// used, a quantity above 0.
    fn accept_fits(&self, order_id: u64, user: &str, client_order_id: &str, quantity: u64) -> bool {
        let taken = !self.applying && self.by_client.get(user).is_some_and(|m| m.contains(client_order_id));
        order_id == self.orders.len() as u64 + 1 && !taken && quantity != 0
    }

    /// Adds a New order (checked by `accept_fits`); `strings`: user, client order id, instrument.
    #[allow(clippy::too_many_arguments)]
    fn push_accepted(
        &mut self,
        order_id: u64,
        ts: u64,
        strings: [String; 3],
        side: Side,
        quantity: u64,
        price: Option<f64>,
        time_in_force: TimeInForce,
        origin: Option<String>,
    ) -> &Order {
        // The user's map usually exists: look it up before cloning the name for a new entry.
        let [user, client_order_id, _] = &strings;
        if !self.applying {
            match self.by_client.get_mut(user.as_str()) {
                Some(m) => m.insert(client_order_id.clone(), order_id),
                None => self
                    .by_client
                    .entry(user.clone())
                    .or_default()
                    .insert(client_order_id.clone(), order_id),
            };
        }
        let o = self.orders.push(Order::new_accepted(
            order_id,
            ts,
            strings,
            side,
            quantity,
            price,
            time_in_force,
            origin,
        ));
        self.exposure.sync(&self.risk, o);
        o
    }

    fn apply_ok(&mut self, ev: OrderEvent) -> Result<OrderEvent, OrderReject> {
        self.apply(&ev)
            .map_err(|e| reject(RejectField::Order, RejectRule::NotOpen, e.to_string()))?;
        Ok(ev)
    }

    fn open_by_id(&self, order_id: u64) -> Result<&Order, OrderReject> {
        self.get(order_id).ok_or_else(|| {
            reject(
                RejectField::Order,
                RejectRule::UnknownOrder,
                format!("no order with id {order_id}"),
            )
        })
    }

    fn owned(&self, user: &str, client_order_id: &str) -> Result<&Order, OrderReject> {
        self.find(user, client_order_id).ok_or_else(|| {
            let msg = format!("user {user} has no order {client_order_id}");
            reject(RejectField::ClientOrderId, RejectRule::UnknownOrder, msg)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepted(order_id: u64, cid: &str) -> OrderEvent {
        OrderEvent::Accepted {
            order_id,
            ts: 7,
            user: "alice".into(),
            client_order_id: cid.into(),
            instrument: "/FX/EURUSD".into(),
            side: Side::Sell,
            quantity: 5,
            price: Some(1.25),
            time_in_force: TimeInForce::Day,
            acknowledged: false,
            origin: None,
        }
    }

    #[test]
    fn apply_taking_moves_an_accepts_strings_and_matches_apply() {
        let mut copied = OrderBook::new(OrderLimits::default());
        let mut taken = OrderBook::new(OrderLimits::default());
        let events = [
            accepted(1, "c1"),
            OrderEvent::Acknowledged { order_id: 1, ts: 8 },
            accepted(2, "c2"),
            OrderEvent::Filled {
                order_id: 1,
                ts: 9,
                quantity: 2,
                price: 1.25,
            },
        ];
        for ev in events {
            let want = copied.apply(&ev).unwrap().clone();
            let mut ev = ev;
            assert_eq!(taken.apply_taking(&mut ev).unwrap(), &want);
            if let OrderEvent::Accepted {
                user,
                client_order_id,
                instrument,
                ..
            } = &ev
            {
                assert!(user.is_empty() && client_order_id.is_empty() && instrument.is_empty());
            }
        }
        assert_eq!(taken.find("alice", "c2").map(|o| o.order_id), Some(2));
        assert_eq!(taken.orders(), copied.orders());
        // An accept that does not fit (duplicate client id, id out of sequence, zero quantity) is
        // refused and keeps its strings.
        let mut dup = accepted(3, "c1");
        assert_eq!(taken.apply_taking(&mut dup).unwrap_err().state, "exists");
        assert_eq!(dup, accepted(3, "c1"));
        assert_eq!(
            copied.apply(&dup).unwrap_err().state,
            "exists",
            "apply refuses it the same way"
        );
        assert_eq!(
            copied.apply(&accepted(1, "c9")).unwrap_err().state,
            "exists",
            "a replayed accept"
        );
        assert_eq!(copied.len(), 2);
        let mut gap = accepted(5, "c5");
        assert_eq!(taken.apply_taking(&mut gap).unwrap_err().state, "exists");
        let mut zero = accepted(3, "c3");
        if let OrderEvent::Accepted { quantity, .. } = &mut zero {
            *quantity = 0;
        }
        assert!(taken.apply_taking(&mut zero).is_err());
        assert_eq!(taken.len(), 2);
        // A second user gets their own client id index entry.
        let mut bob = accepted(3, "c1");
        if let OrderEvent::Accepted { user, .. } = &mut bob {
            *user = "bob".into();
        }
        assert_eq!(taken.apply_taking(&mut bob).unwrap().user, "bob");
        assert_eq!(taken.find("bob", "c1").map(|o| o.order_id), Some(3));
        assert_eq!(taken.find("alice", "c1").map(|o| o.order_id), Some(1));
    }

    #[test]
    fn an_applying_book_holds_the_same_orders_without_the_client_id_index() {
        let mut deciding = OrderBook::new(OrderLimits::default());
        let mut applying = OrderBook::applying(OrderLimits::default());
        let events = [
            accepted(1, "c1"),
            OrderEvent::Acknowledged { order_id: 1, ts: 8 },
            accepted(2, "c2"),
            OrderEvent::Filled {
                order_id: 1,
                ts: 9,
                quantity: 2,
                price: 1.25,
            },
            OrderEvent::Cancelled {
                order_id: 2,
                ts: 10,
                reason: crate::order_book::CancelReason::EndOfDay,
            },
        ];
        for ev in events {
            let want = deciding.apply(&ev).unwrap().clone();
            let mut ev = ev;
            assert_eq!(applying.apply_taking(&mut ev).unwrap(), &want);
        }
        assert_eq!(applying.orders(), deciding.orders());
        assert_eq!(deciding.find("alice", "c2").map(|o| o.order_id), Some(2));
        assert!(applying.find("alice", "c2").is_none(), "no index kept");
        assert!(applying.by_client.is_empty());
        // The order id sequence and the quantity are still checked; the client id is the
        // deciding book's to check.
        assert_eq!(
            applying.apply_taking(&mut accepted(5, "c5")).unwrap_err().state,
            "exists"
        );
        let mut zero = accepted(3, "c3");
        if let OrderEvent::Accepted { quantity, .. } = &mut zero {
            *quantity = 0;
        }
        assert!(applying.apply_taking(&mut zero).is_err());
        assert_eq!(applying.apply_taking(&mut accepted(3, "c1")).unwrap().order_id, 3);
        assert_eq!(deciding.apply(&accepted(3, "c1")).unwrap_err().state, "exists");
    }

    struct OneInstrument;

    impl InstrumentCatalog for OneInstrument {
        fn instrument(&self, subject: &str) -> Option<validate::Instrument> {
            (subject == "/FX/EURUSD").then_some(validate::Instrument {
                tick_size: Some(0.0001),
                ..Default::default()
            })
        }
    }

    fn new_order(cid: &str, instrument: &str) -> NewOrder {
        NewOrder {
            user: "alice".into(),
            client_order_id: cid.into(),
            instrument: instrument.into(),
            side: Side::Buy,
            quantity: 3.0,
            price: Some(1.085),
            time_in_force: TimeInForce::Gtc,
        }
    }

    #[test]
    fn check_then_accept_is_submit_and_a_check_goes_stale_on_a_duplicate() {
        let mut split = OrderBook::new(OrderLimits::default());
        let mut whole = OrderBook::new(OrderLimits::default());
        let req = new_order("c1", "/FX/EURUSD");
        let checked = split.check_submit(&req, &OneInstrument).unwrap();
        assert!(split.is_empty(), "a check changes nothing");
        let ev = split.accept_checked(req.clone(), checked, 4, false).unwrap();
        assert_eq!(ev, whole.submit(&req, &OneInstrument, 4).unwrap());
        assert_eq!(split.orders(), whole.orders());
        // Rejects come from the check: unknown instrument, duplicate client id.
        let bad = split
            .check_submit(&new_order("c2", "/FX/NOPE"), &OneInstrument)
            .unwrap_err();
        assert_eq!(bad.field, RejectField::Instrument);
        assert_eq!(
            split.check_submit(&req, &OneInstrument).unwrap_err().rule,
            RejectRule::Duplicate
        );
        // Two checks of one client id before either accept: the second accept is refused.
        let req2 = new_order("c2", "/FX/EURUSD");
        let first = split.check_submit(&req2, &OneInstrument).unwrap();
        let second = split.check_submit(&req2, &OneInstrument).unwrap();
        split.accept_checked(req2.clone(), first, 5, false).unwrap();
        assert!(split.accept_checked(req2, second, 6, false).is_err());
        assert_eq!(split.len(), 2);
    }
}
