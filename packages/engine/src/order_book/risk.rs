//! Pre-trade risk checks, per instrument type: a price collar around the live market, a maximum
//! notional per order, a per-user limit on open notional and a refusal on a stale quote. They run
//! in the order book's validation, so every order path (WebSocket, FIX, a cluster's leader) gets
//! them, and each refusal is a typed reject naming its rule (`collar`, `maxNotional`,
//! `openNotional`, `stale`).
//!
//! An instrument's type is the first rule whose subject pattern matches it (`/FX/*`, `/EQ/**`);
//! an instrument no rule matches is not risk-checked. Notional is quantity times price in the
//! instrument's price units: the limit price, or for a market order the touch it would trade at
//! (the ask for a buy, the bid for a sell).
//!
//! Open notional of a user: the remaining quantity of each of their open orders times its price
//! (a limit order's limit; a market order's touch when it was accepted), over every instrument a
//! rule with `max_open_notional` matches. With `NotionalBasis::Quantity` (FX, where limits are
//! amounts of the base currency) notional is the quantity itself. It is kept incrementally by
//! [`Exposure`] as the book
//! applies events. An open market order rebuilt from the journal has no recorded touch and counts
//! at its average fill price (0 before its first fill).

use rustc_hash::FxHashMap;

use super::model::{Order, Quote, Side};
use super::price::show_number;
use super::validate::{reject, OrderReject, RejectField, RejectRule};
use crate::analytics::pattern::Pattern;

/// What an order's notional is measured in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NotionalBasis {
    /// Quantity x price, in the instrument's price units (shares, bonds).
    #[default]
    Price,
    /// The quantity itself (FX: an amount of the base currency, whatever the pair's price).
    Quantity,
}

/// Limits of one instrument type (unset = not checked).
#[derive(Debug, Clone, PartialEq)]
pub struct RiskRule {
    /// Instruments of this type.
    pub pattern: Pattern,
    /// What `max_notional` and `max_open_notional` are measured in.
    pub basis: NotionalBasis,
    /// A buy limit more than this many percent above the ask (a sell limit below the bid) is
    /// refused: `collar`.
    pub collar_pct: Option<f64>,
    /// Largest notional of one order: `maxNotional`.
    pub max_notional: Option<f64>,
    /// Largest open notional of one user over the instruments of this type, this order
    /// included: `openNotional`.
    pub max_open_notional: Option<f64>,
    /// A quote whose last update is older than this is stale: orders are refused, `stale`.
    pub max_quote_age_ms: Option<u64>,
}

/// The risk rules, first match wins.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RiskRules {
    rules: Vec<RiskRule>,
}

/// What validation knows of an instrument's market when it checks an order.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Market {
    /// Live top of book.
    pub quote: Quote,
    /// Age of the instrument's last update, ms (`None`: unknown).
    pub age_ms: Option<u64>,
}

impl RiskRules {
    /// Rules in match order; a rule's numbers must be finite and > 0 (the error names the rule).
    pub fn new(rules: Vec<RiskRule>) -> Result<RiskRules, String> {
        for r in &rules {
            for (name, v) in [
                ("collarPct", r.collar_pct),
                ("maxNotional", r.max_notional),
                ("maxOpenNotional", r.max_open_notional),
            ] {
                if let Some(v) = v {
                    if !(v.is_finite() && v > 0.0) {
                        return Err(format!(
                            "risk rule {}: {name} must be a number above 0, got {}",
                            r.pattern.as_str(),
                            show_number(v)
                        ));
                    }
                }
            }
            if r.max_quote_age_ms == Some(0) {
                return Err(format!(
                    "risk rule {}: maxQuoteAgeMs must be above 0",
                    r.pattern.as_str()
                ));
            }
        }
        Ok(RiskRules { rules })
    }

    /// True when there are no rules (nothing is checked).
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The rule of `instrument`, if any.
    pub fn rule_of(&self, instrument: &str) -> Option<&RiskRule> {
        self.rules.iter().find(|r| r.pattern.matches(instrument))
    }

    /// Index of the rule of `instrument` (the exposure bucket), if any.
    fn index_of(&self, instrument: &str) -> Option<usize> {
        self.rules.iter().position(|r| r.pattern.matches(instrument))
    }
}

/// The price a new order's notional is taken at: its limit, else the touch on its side.
pub fn reference_price(side: Side, price: Option<f64>, quote: &Quote) -> Option<f64> {
    price.or(match side {
        Side::Buy => quote.ask,
        Side::Sell => quote.bid,
    })
}

/// An order to check: what it would be after the request.
#[derive(Debug, Clone, Copy)]
pub struct Proposed<'a> {
    /// Owner.
    pub user: &'a str,
    /// Instrument subject.
    pub instrument: &'a str,
    /// Side.
    pub side: Side,
    /// Quantity that would remain open.
    pub open_quantity: u64,
    /// Total quantity of the order (for the per-order notional).
    pub quantity: u64,
    /// Limit price (`None`: market).
    pub price: Option<f64>,
    /// Whether the limit price is new (a submit, or an amend that moves it): only then is the
    /// collar checked, so an amend of the quantity alone is not refused because the market moved.
    pub price_changed: bool,
    /// Open notional this order holds now (0 for a new order), replaced by the proposed one.
    pub held: f64,
}

/// Checks `p` against its instrument's rule. `Ok(reference)`: the price its notional counts at
/// (0 when no rule applies or no price is known).
pub fn check(rules: &RiskRules, exposure: &Exposure, p: &Proposed<'_>, market: &Market) -> Result<f64, OrderReject> {
    let Some(index) = rules.index_of(p.instrument) else {
        return Ok(reference_price(p.side, p.price, &market.quote).unwrap_or(0.0));
    };
    let rule = &rules.rules[index];
    if let (Some(limit), Some(age)) = (rule.max_quote_age_ms, market.age_ms) {
        if age > limit {
            let msg = format!(
                "the quote of {} is stale: last updated {} ms ago (limit {limit} ms)",
                p.instrument, age
            );
            return Err(reject(RejectField::Instrument, RejectRule::Stale, msg));
        }
    }
    if let (Some(pct), Some(limit), true) = (rule.collar_pct, p.price, p.price_changed) {
        let band = pct / 100.0;
        let through = match p.side {
            Side::Buy => market
                .quote
                .ask
                .filter(|ask| limit > ask * (1.0 + band))
                .map(|ask| ("buy", "above the ask", ask, (limit / ask - 1.0) * 100.0)),
            Side::Sell => market
                .quote
                .bid
                .filter(|bid| limit < bid * (1.0 - band))
                .map(|bid| ("sell", "below the bid", bid, (1.0 - limit / bid) * 100.0)),
        };
        if let Some((side, where_, touch, off)) = through {
            let msg = format!(
                "{side} limit {} is {off:.2}% {where_} {} (collar {}%)",
                show_number(limit),
                show_number(touch),
                show_number(pct)
            );
            return Err(reject(RejectField::Price, RejectRule::Collar, msg));
        }
    }
    let needs_price = rule.max_notional.is_some() || rule.max_open_notional.is_some();
    let Some(reference) = reference_price(p.side, p.price, &market.quote) else {
        if needs_price {
            let msg = format!(
                "no market on the {} side of {} to value a market order against its notional limits",
                if p.side == Side::Buy { "ask" } else { "bid" },
                p.instrument
            );
            return Err(reject(RejectField::Price, RejectRule::MaxNotional, msg));
        }
        return Ok(0.0);
    };
    // With a quantity basis an order counts 1 per unit (the reference its exposure keeps).
    let reference = match rule.basis {
        NotionalBasis::Price => reference,
        NotionalBasis::Quantity => 1.0,
    };
    if let Some(max) = rule.max_notional {
        let notional = p.quantity as f64 * reference;
        if notional > max {
            let msg = match rule.basis {
                NotionalBasis::Price => format!(
                    "notional {} ({} x {}) is above the limit {} for {}",
                    show_number(notional),
                    p.quantity,
                    show_number(reference),
                    show_number(max),
                    p.instrument
                ),
                NotionalBasis::Quantity => format!(
                    "amount {} is above the limit {} for {}",
                    p.quantity,
                    show_number(max),
                    p.instrument
                ),
            };
            return Err(reject(RejectField::Quantity, RejectRule::MaxNotional, msg));
        }
    }
    if let Some(max) = rule.max_open_notional {
        let now = exposure.open(p.user, index);
        let after = now - p.held + p.open_quantity as f64 * reference;
        if after > max {
            let msg = format!(
                "open notional of {} would be {} (now {}), above the limit {} for {}",
                p.user,
                show_number(after),
                show_number(now),
                show_number(max),
                rule.pattern.as_str()
            );
            return Err(reject(RejectField::Quantity, RejectRule::OpenNotional, msg));
        }
    }
    Ok(reference)
}

/// Open notional per (user, rule), kept as the book applies events.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Exposure {
    /// user -> open notional per rule index.
    by_user: FxHashMap<String, Vec<f64>>,
    /// open order id -> (rule index or `UNCOVERED`, price it counts at, notional it holds now).
    held: FxHashMap<u64, (usize, f64, f64)>,
}

/// The rule index `held` keeps for an open order no rule covers, so that its later events skip
/// the pattern scan.
const UNCOVERED: usize = usize::MAX;

impl Exposure {
    /// Open notional of `user` over the instruments of rule `index`.
    pub fn open(&self, user: &str, index: usize) -> f64 {
        self.by_user
            .get(user)
            .and_then(|v| v.get(index).copied())
            .unwrap_or(0.0)
            .max(0.0)
    }

    /// Notional order `order_id` holds now (0 when none).
    pub fn held(&self, order_id: u64) -> f64 {
        self.held.get(&order_id).map_or(0.0, |h| h.2)
    }

    /// Records the price order `order_id` counts at (a market order's touch when accepted).
    pub fn set_reference(&mut self, rules: &RiskRules, order: &Order, reference: f64) {
        if let Some(index) = rules.index_of(&order.instrument) {
            let held = self.held(order.order_id);
            self.held.insert(order.order_id, (index, reference, held));
            self.sync(rules, order);
        }
    }

    /// Brings the notional of `order` up to date after an event changed it (terminal: released).
    pub fn sync(&mut self, rules: &RiskRules, order: &Order) {
        if rules.is_empty() {
            return;
        }
        let entry = self.held.get(&order.order_id).copied();
        let index = match entry {
            Some(e) => e.0,
            None => rules.index_of(&order.instrument).unwrap_or(UNCOVERED),
        };
        if index == UNCOVERED {
            if !order.status.is_open() {
                self.held.remove(&order.order_id);
            } else if entry.is_none() {
                self.held.insert(order.order_id, (UNCOVERED, 0.0, 0.0));
            }
            return;
        }
        let stored = entry.map_or(0.0, |e| e.1);
        let price = match rules.rules.get(index).map(|r| r.basis) {
            Some(NotionalBasis::Quantity) => 1.0,
            _ => order
                .price
                .unwrap_or(if stored > 0.0 { stored } else { order.average_price }),
        };
        let old = entry.map_or(0.0, |e| e.2);
        let new = order.remaining() as f64 * price;
        if !self.by_user.contains_key(&order.user) {
            self.by_user.insert(order.user.clone(), Vec::new());
        }
        let Some(per_rule) = self.by_user.get_mut(&order.user) else {
            return;
        };
        if per_rule.len() <= index {
            per_rule.resize(index + 1, 0.0);
        }
        per_rule[index] += new - old;
        if order.status.is_open() {
            let reference = if order.price.is_some() { 0.0 } else { stored };
            self.held.insert(order.order_id, (index, reference, new));
        } else {
            self.held.remove(&order.order_id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::order_book::{OrderStatus, TimeInForce};

    fn rules() -> RiskRules {
        RiskRules::new(vec![RiskRule {
            pattern: Pattern::parse("/FX/*").unwrap(),
            basis: NotionalBasis::Price,
            collar_pct: Some(2.0),
            max_notional: Some(1_000_000.0),
            max_open_notional: Some(1_500_000.0),
            max_quote_age_ms: Some(5_000),
        }])
        .unwrap()
    }

    fn market(bid: f64, ask: f64, age: u64) -> Market {
        Market {
            quote: Quote {
                bid: Some(bid),
                ask: Some(ask),
            },
            age_ms: Some(age),
        }
    }

    fn proposed<'a>(side: Side, quantity: u64, price: Option<f64>) -> Proposed<'a> {
        Proposed {
            user: "alice",
            instrument: "/FX/EURUSD",
            side,
            open_quantity: quantity,
            quantity,
            price,
            price_changed: true,
            held: 0.0,
        }
    }

    fn order(id: u64, quantity: u64, price: Option<f64>) -> Order {
        Order {
            order_id: id,
            user: "alice".into(),
            client_order_id: format!("c{id}"),
            instrument: "/FX/EURUSD".into(),
            side: Side::Buy,
            quantity,
            price,
            time_in_force: TimeInForce::Day,
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

    #[test]
    fn each_rule_refuses_with_its_own_code() {
        let r = rules();
        let e = Exposure::default();
        let m = market(1.0, 1.01, 10);
        assert_eq!(check(&r, &e, &proposed(Side::Buy, 100, Some(1.02)), &m), Ok(1.02));
        let collar = check(&r, &e, &proposed(Side::Buy, 100, Some(1.04)), &m).unwrap_err();
        assert_eq!((collar.field, collar.rule), (RejectField::Price, RejectRule::Collar));
        assert_eq!(collar.message, "buy limit 1.04 is 2.97% above the ask 1.01 (collar 2%)");
        let sell = check(&r, &e, &proposed(Side::Sell, 100, Some(0.97)), &m).unwrap_err();
        assert_eq!(sell.rule, RejectRule::Collar);
        // A limit on the passive side is never through the collar.
        assert!(check(&r, &e, &proposed(Side::Buy, 100, Some(0.5)), &m).is_ok());
        let big = check(&r, &e, &proposed(Side::Buy, 2_000_000, None), &m).unwrap_err();
        assert_eq!((big.field, big.rule), (RejectField::Quantity, RejectRule::MaxNotional));
        let stale = check(&r, &e, &proposed(Side::Buy, 1, None), &market(1.0, 1.01, 5_001)).unwrap_err();
        assert_eq!((stale.field, stale.rule), (RejectField::Instrument, RejectRule::Stale));
        // No rule for this instrument: nothing checked.
        let mut other = proposed(Side::Buy, 10_000_000, Some(99.0));
        other.instrument = "/EQ/X";
        assert!(check(&r, &e, &other, &m).is_ok());
    }

    #[test]
    fn open_notional_follows_fills_amends_and_cancels() {
        let r = rules();
        let mut e = Exposure::default();
        let mut o = order(1, 900_000, Some(1.0));
        e.sync(&r, &o);
        assert_eq!(e.open("alice", 0), 900_000.0);
        // A second order of 700,000 would make 1.6 M: refused; 600,000 fits.
        let m = market(1.0, 1.0, 0);
        let too_much = check(&r, &e, &proposed(Side::Buy, 700_000, Some(1.0)), &m).unwrap_err();
        assert_eq!(too_much.rule, RejectRule::OpenNotional);
        assert!(check(&r, &e, &proposed(Side::Buy, 600_000, Some(1.0)), &m).is_ok());
        // A partial fill releases what filled.
        o.filled_quantity = 400_000;
        o.status = OrderStatus::PartiallyFilled;
        e.sync(&r, &o);
        assert_eq!(e.open("alice", 0), 500_000.0);
        // An amend of the order itself counts its new size, not both.
        let mut amend = proposed(Side::Buy, 1_000_000, Some(1.0));
        amend.open_quantity = 1_000_000 - 400_000;
        amend.held = e.held(1);
        assert!(check(&r, &e, &amend, &m).is_ok());
        o.status = OrderStatus::Cancelled;
        e.sync(&r, &o);
        assert_eq!(e.open("alice", 0), 0.0);
        assert_eq!(e.held(1), 0.0);
    }

    #[test]
    fn an_order_no_rule_covers_holds_nothing_and_is_forgotten_when_done() {
        let r = rules();
        let mut e = Exposure::default();
        let mut o = order(3, 1_000, Some(10.0));
        o.instrument = "/EQ/VOD.L".into();
        e.sync(&r, &o);
        assert_eq!((e.held(3), e.open("alice", 0)), (0.0, 0.0));
        assert_eq!(e.held.get(&3).map(|h| h.0), Some(UNCOVERED));
        o.filled_quantity = 400;
        o.status = OrderStatus::PartiallyFilled;
        e.sync(&r, &o);
        assert_eq!((e.held(3), e.open("alice", 0)), (0.0, 0.0));
        o.status = OrderStatus::Cancelled;
        e.sync(&r, &o);
        assert!(e.held.is_empty());
        assert!(e.by_user.is_empty());
    }

    #[test]
    fn a_market_order_counts_at_its_touch() {
        let r = rules();
        let mut e = Exposure::default();
        let o = order(7, 1_000, None);
        e.set_reference(&r, &o, 1.25);
        assert_eq!(e.open("alice", 0), 1_250.0);
        let mut done = o.clone();
        done.status = OrderStatus::Filled;
        done.filled_quantity = 1_000;
        e.sync(&r, &done);
        assert_eq!(e.open("alice", 0), 0.0);
    }

    #[test]
    fn a_quantity_basis_counts_amounts_whatever_the_price() {
        let r = RiskRules::new(vec![RiskRule {
            pattern: Pattern::parse("/FX/*").unwrap(),
            basis: NotionalBasis::Quantity,
            collar_pct: None,
            max_notional: Some(5_000_000.0),
            max_open_notional: Some(8_000_000.0),
            max_quote_age_ms: None,
        }])
        .unwrap();
        let mut e = Exposure::default();
        let jpy = market(150.0, 150.02, 0);
        // 2 M USD/JPY at 150 is 300 M yen but 2 M dollars: within 5 M.
        let mut p = proposed(Side::Buy, 2_000_000, Some(150.0));
        p.instrument = "/FX/USDJPY";
        assert_eq!(check(&r, &e, &p, &jpy), Ok(1.0));
        p.quantity = 6_000_000;
        p.open_quantity = 6_000_000;
        let big = check(&r, &e, &p, &jpy).unwrap_err();
        assert_eq!(big.message, "amount 6000000 is above the limit 5000000 for /FX/USDJPY");
        let mut o = order(3, 4_000_000, Some(150.0));
        o.instrument = "/FX/USDJPY".into();
        e.sync(&r, &o);
        assert_eq!(e.open("alice", 0), 4_000_000.0);
        p.quantity = 4_500_000;
        p.open_quantity = 4_500_000;
        assert_eq!(check(&r, &e, &p, &jpy).unwrap_err().rule, RejectRule::OpenNotional);
    }

    #[test]
    fn bad_rules_are_refused_by_name() {
        let bad = RiskRules::new(vec![RiskRule {
            pattern: Pattern::parse("/FX/*").unwrap(),
            basis: NotionalBasis::Price,
            collar_pct: Some(-1.0),
            max_notional: None,
            max_open_notional: None,
            max_quote_age_ms: None,
        }]);
        assert_eq!(
            bad.unwrap_err(),
            "risk rule /FX/*: collarPct must be a number above 0, got -1"
        );
    }
}
