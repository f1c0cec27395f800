//! Execution simulator: a pure, seeded policy deciding fills from the live bid/ask.
//!
//! Rules, per call for one working order (Acknowledged or PartiallyFilled):
//! - The touch is the ask for a buy, the bid for a sell. A market order is always marketable; a
//!   limit order only when its limit reaches the touch (buy: limit >= ask; sell: limit <= bid).
//! - Not marketable (or no touch): a DAY/GTC order waits; an IOC order has its rest cancelled; a
//!   market order with no touch and nothing filled is rejected ("no market"), otherwise its rest waits
//!   (DAY/GTC) or is cancelled (IOC).
//! - Marketable: the fill is priced at the touch (never worse than the limit). While the order has had
//!   fewer than `max_partials` fills and its remaining quantity is at least `2 * min_partial`, the fill
//!   is a random fraction in [`min_fraction`, `max_fraction`] of the remaining quantity (whole, at
//!   least `min_partial`, less than the remaining); otherwise the whole remaining quantity. An IOC order
//!   gets one fill and its rest is cancelled.
//!
//! Same seed, same sequence of calls -> same decisions.

use super::model::{Order, Quote, Side, TimeInForce};

/// Simulator policy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimulatorConfig {
    /// RNG seed. Default 1.
    pub seed: u64,
    /// Partial fills before the order is completed. Default 2 (so: partial, partial, full).
    pub max_partials: u32,
    /// Smallest partial fill as a fraction of the remaining quantity. Default 0.25.
    pub min_fraction: f64,
    /// Largest partial fill fraction. Default 0.75.
    pub max_fraction: f64,
    /// Smallest partial fill quantity. Default 1.
    pub min_partial: u64,
}

impl Default for SimulatorConfig {
    fn default() -> Self {
        SimulatorConfig {
            seed: 1,
            max_partials: 2,
            min_fraction: 0.25,
            max_fraction: 0.75,
            min_partial: 1,
        }
    }
}

/// What to do with an order now.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Nothing now.
    Wait,
    /// Fill `quantity` at `price`.
    Fill {
        /// Quantity (> 0, <= remaining).
        quantity: u64,
        /// Price (the touch).
        price: f64,
    },
    /// IOC: fill `quantity` at `price`, cancel the rest (quantity < remaining).
    FillAndCancelRest {
        /// Quantity.
        quantity: u64,
        /// Price.
        price: f64,
    },
    /// IOC with nothing to fill: cancel the rest.
    CancelRest,
    /// Reject the order (reason text).
    Reject(String),
}

/// The simulator: config + seeded RNG (splitmix64).
#[derive(Debug, Clone)]
pub struct ExecutionSimulator {
    config: SimulatorConfig,
    state: u64,
}

impl ExecutionSimulator {
    /// A simulator with `config`. Fractions are clamped into (0, 1] and ordered; `min_partial` >= 1.
    pub fn new(config: SimulatorConfig) -> ExecutionSimulator {
        let mut c = config;
        let clamp = |f: f64| if f.is_finite() { f.clamp(0.01, 1.0) } else { 0.5 };
        c.min_fraction = clamp(c.min_fraction);
        c.max_fraction = clamp(c.max_fraction).max(c.min_fraction);
        c.min_partial = c.min_partial.max(1);
        ExecutionSimulator {
            config: c,
            state: config.seed,
        }
    }

    /// The effective config.
    pub fn config(&self) -> &SimulatorConfig {
        &self.config
    }

    fn next_f64(&mut self) -> f64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Decides what happens to `order` given the instrument's `quote` (see the module rules).
    pub fn decide(&mut self, order: &Order, quote: &Quote) -> Decision {
        let remaining = order.remaining();
        if remaining == 0 {
            return Decision::Wait;
        }
        let ioc = order.time_in_force == TimeInForce::Ioc;
        let touch = match order.side {
            Side::Buy => quote.ask,
            Side::Sell => quote.bid,
        }
        .filter(|p| p.is_finite() && *p > 0.0);
        let marketable = match (touch, order.price) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(t), Some(limit)) => match order.side {
                Side::Buy => limit >= t,
                Side::Sell => limit <= t,
            },
        };
        if !marketable {
            return if order.price.is_none() && touch.is_none() && order.filled_quantity == 0 {
                Decision::Reject("no market".into())
            } else if ioc {
                Decision::CancelRest
            } else {
                Decision::Wait
            };
        }
        let price = touch.expect("marketable has a touch");
        let c = self.config;
        let quantity = if order.fills < c.max_partials && remaining >= 2 * c.min_partial {
            let f = c.min_fraction + (c.max_fraction - c.min_fraction) * self.next_f64();
            ((remaining as f64 * f) as u64).clamp(c.min_partial, remaining - 1)
        } else {
            remaining
        };
        if ioc && quantity < remaining {
            Decision::FillAndCancelRest { quantity, price }
        } else {
            Decision::Fill { quantity, price }
        }
    }
}
