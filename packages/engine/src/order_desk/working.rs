//! The working orders of one instrument, indexed so an execution pass costs what can act, not what
//! rests.
//!
//! The simulator leaves a DAY/GTC limit order that is not marketable (buy: limit < ask; sell:
//! limit > bid; or no touch) unchanged: `Wait`, no random draw. Such an order *rests*: it sits in a
//! price-ordered index and is not visited again until the quote crosses its limit; every other
//! working order is *active* and visited by each pass (market orders, orders inside their fill
//! interval, orders just indexed or pulled back from resting). A pass first pulls the resting
//! orders the current quote crosses (a range of the index), then visits the active ones. With
//! 100,000 resting orders a pass therefore costs a range check instead of 100,000 simulator calls.
//!
//! An order leaves the index when a visit finds it closed, or explicitly (`remove`) when a cancel,
//! amend or expiry changes it while it rests: nothing closed stays indexed.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::order_book::{Order, Quote, Side, TimeInForce};

/// An active working order.
#[derive(Debug, Clone, Copy)]
pub(super) struct Working {
    /// The order.
    pub order_id: u64,
    /// Not executed again before this (fill interval).
    pub next_exec: Instant,
}

/// A limit price as an order-preserving integer (IEEE total order; prices are finite).
fn price_key(p: f64) -> u64 {
    let b = p.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | (1 << 63)
    }
}

/// Working orders of one instrument: active (visited every pass) and resting (by limit price).
#[derive(Debug, Default)]
pub(super) struct InstrumentOrders {
    /// Visited by every pass, in the order they became active.
    pub active: Vec<Working>,
    /// Resting limit buys by (price key, order id): marketable from the top down to the ask.
    buys: BTreeMap<(u64, u64), ()>,
    /// Resting limit sells by (price key, order id): marketable from the bottom up to the bid.
    sells: BTreeMap<(u64, u64), ()>,
}

impl InstrumentOrders {
    /// No order indexed.
    pub fn is_empty(&self) -> bool {
        self.active.is_empty() && self.buys.is_empty() && self.sells.is_empty()
    }

    /// Orders indexed (active + resting).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.active.len() + self.buys.len() + self.sells.len()
    }

    /// Indexes `order_id` as active (due at `now`).
    pub fn push_active(&mut self, order_id: u64, now: Instant) {
        self.active.push(Working {
            order_id,
            next_exec: now,
        });
    }

    /// True when `o` may rest: an open DAY/GTC limit order (the simulator waits on it until the
    /// quote crosses its limit).
    pub fn can_rest(o: &Order) -> bool {
        o.status.is_open() && o.price.is_some_and(f64::is_finite) && o.time_in_force != TimeInForce::Ioc
    }

    /// Puts `o` (see `can_rest`) in the resting index.
    pub fn rest(&mut self, o: &Order) {
        let Some(p) = o.price else { return };
        let key = (price_key(p), o.order_id);
        match o.side {
            Side::Buy => self.buys.insert(key, ()),
            Side::Sell => self.sells.insert(key, ()),
        };
    }

    /// Removes `order_id` from the resting index, given the side and limit it rested at; true when it
    /// was there. Active entries are not touched (a pass drops them once closed).
    pub fn remove_resting(&mut self, order_id: u64, side: Side, price: Option<f64>) -> bool {
        let Some(p) = price else { return false };
        let key = (price_key(p), order_id);
        match side {
            Side::Buy => self.buys.remove(&key).is_some(),
            Side::Sell => self.sells.remove(&key).is_some(),
        }
    }

    /// Moves every resting order `quote` makes marketable to the active list (due at `now`), best
    /// price first. Returns how many moved.
    pub fn pull_crossed(&mut self, quote: &Quote, now: Instant) -> usize {
        let touch = |p: Option<f64>| p.filter(|p| p.is_finite() && *p > 0.0).map(price_key);
        let mut moved = 0;
        if let Some(ask) = touch(quote.ask) {
            // Buys with limit >= ask.
            let crossed = self.buys.split_off(&(ask, 0));
            moved += crossed.len();
            self.active
                .extend(crossed.into_keys().rev().map(|(_, order_id)| Working {
                    order_id,
                    next_exec: now,
                }));
        }
        if let Some(bid) = touch(quote.bid) {
            // Sells with limit <= bid: everything below (bid + 1, 0) (finite bid: no overflow).
            let rest = self.sells.split_off(&(bid + 1, 0));
            let crossed = std::mem::replace(&mut self.sells, rest);
            moved += crossed.len();
            self.active.extend(crossed.into_keys().map(|(_, order_id)| Working {
                order_id,
                next_exec: now,
            }));
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::order_book::OrderStatus;

    fn order(id: u64, side: Side, price: Option<f64>, tif: TimeInForce) -> Order {
        Order {
            order_id: id,
            user: "u".into(),
            client_order_id: format!("c{id}"),
            instrument: "/FX/EURUSD".into(),
            side,
            quantity: 10,
            price,
            time_in_force: tif,
            status: OrderStatus::Acknowledged,
            filled_quantity: 0,
            average_price: 0.0,
            fills: 0,
            last_fill: None,
            reason: None,
            created_ms: 0,
            updated_ms: 0,
            version: 2,
            origin: None,
        }
    }

    fn ids(w: &InstrumentOrders) -> Vec<u64> {
        w.active.iter().map(|w| w.order_id).collect()
    }

    #[test]
    fn price_key_keeps_order() {
        let ps = [-2.5, -0.0, 0.0, 1e-9, 1.0, 1.0850, 1.0852, 1e9];
        for w in ps.windows(2) {
            assert!(price_key(w[0]) <= price_key(w[1]), "{} vs {}", w[0], w[1]);
        }
        assert!(price_key(1.0850) < price_key(1.0852));
    }

    #[test]
    fn only_crossed_orders_are_pulled_best_first() {
        let now = Instant::now();
        let mut w = InstrumentOrders::default();
        for (id, p) in [(1, 1.0848), (2, 1.0852), (3, 1.0853), (4, 1.0851)] {
            w.rest(&order(id, Side::Buy, Some(p), TimeInForce::Day));
        }
        for (id, p) in [(5, 1.0851), (6, 1.0849), (7, 1.0850), (8, 1.0855)] {
            w.rest(&order(id, Side::Sell, Some(p), TimeInForce::Gtc));
        }
        assert_eq!(w.len(), 8);
        let none = Quote { bid: None, ask: None };
        assert_eq!(w.pull_crossed(&none, now), 0);
        let q = Quote {
            bid: Some(1.0850),
            ask: Some(1.0852),
        };
        // Buys at >= 1.0852 (3, then 2); sells at <= 1.0850 (6, then 7, the limit equal to the bid).
        assert_eq!(w.pull_crossed(&q, now), 4);
        assert_eq!(ids(&w), vec![3, 2, 6, 7]);
        assert_eq!(w.len(), 8);
        assert_eq!(w.pull_crossed(&q, now), 0, "nothing crossed is left resting");
    }

    #[test]
    fn removal_needs_the_resting_price_and_empties_the_index() {
        let mut w = InstrumentOrders::default();
        let o = order(9, Side::Sell, Some(2.0), TimeInForce::Day);
        assert!(InstrumentOrders::can_rest(&o));
        w.rest(&o);
        assert!(!w.remove_resting(9, Side::Sell, Some(2.5)));
        assert!(!w.remove_resting(9, Side::Buy, Some(2.0)));
        assert!(w.remove_resting(9, Side::Sell, Some(2.0)));
        assert!(w.is_empty());
    }

    #[test]
    fn market_ioc_and_closed_orders_never_rest() {
        assert!(!InstrumentOrders::can_rest(&order(
            1,
            Side::Buy,
            None,
            TimeInForce::Day
        )));
        assert!(!InstrumentOrders::can_rest(&order(
            2,
            Side::Buy,
            Some(1.0),
            TimeInForce::Ioc
        )));
        let mut done = order(3, Side::Buy, Some(1.0), TimeInForce::Gtc);
        done.status = OrderStatus::Filled;
        assert!(!InstrumentOrders::can_rest(&done));
    }
}
