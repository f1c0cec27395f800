//! Order validation: typed rejects naming the field and the rule. A rejected request changes nothing.

use super::model::{Amend, NewOrder, Order};
use std::fmt;

/// Per-instrument facts the order book needs, answered by the caller's store.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Instrument {
    /// Price increment; `None` = use `OrderLimits::default_tick`.
    pub tick_size: Option<f64>,
}

/// The caller's view of its instrument catalog and entitlements (the store, the permission layer).
pub trait InstrumentCatalog {
    /// The instrument named by `subject`, or `None` if it does not exist.
    fn instrument(&self, subject: &str) -> Option<Instrument>;
    /// Whether `user` may trade `subject`. Default: everyone may.
    fn entitled(&self, _user: &str, _subject: &str) -> bool {
        true
    }
}

/// Limits applied by validation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OrderLimits {
    /// Largest quantity of one order. Default 1,000,000,000.
    pub max_quantity: u64,
    /// Tick for instruments without their own. Default 0.0001.
    pub default_tick: f64,
    /// Longest client order id, user or instrument, bytes. Default 64.
    pub max_id_bytes: usize,
}

impl Default for OrderLimits {
    fn default() -> Self {
        OrderLimits {
            max_quantity: 1_000_000_000,
            default_tick: 0.0001,
            max_id_bytes: 64,
        }
    }
}

/// The field a reject is about (wire names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RejectField {
    /// `clientOrderId`.
    ClientOrderId,
    /// `user`.
    User,
    /// `instrument`.
    Instrument,
    /// `quantity`.
    Quantity,
    /// `price`.
    Price,
    /// The order as a whole (its state).
    Order,
}

impl RejectField {
    /// Wire name, e.g. `"clientOrderId"`.
    pub fn as_str(self) -> &'static str {
        match self {
            RejectField::ClientOrderId => "clientOrderId",
            RejectField::User => "user",
            RejectField::Instrument => "instrument",
            RejectField::Quantity => "quantity",
            RejectField::Price => "price",
            RejectField::Order => "order",
        }
    }
}

/// The rule a request broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RejectRule {
    /// Empty, or longer than `max_id_bytes`.
    BadLength,
    /// The user already has an order with this client order id.
    Duplicate,
    /// No such instrument in the catalog.
    UnknownInstrument,
    /// The user may not trade the instrument.
    NotEntitled,
    /// Quantity <= 0 (or price <= 0).
    NotPositive,
    /// Not a whole number / not finite.
    NotWhole,
    /// Quantity above `max_quantity`.
    AboveLimit,
    /// Price not a multiple of the tick size.
    OffTick,
    /// Not a finite number.
    NotFinite,
    /// No order with this client order id for this user.
    UnknownOrder,
    /// The order is not open (filled, cancelled or rejected).
    NotOpen,
    /// Amend quantity not above the filled quantity.
    BelowFilled,
    /// A price on a market order amend.
    MarketOrder,
    /// An amend that changes nothing.
    NoChange,
}

impl RejectRule {
    /// Stable code, e.g. `"offTick"`.
    pub fn as_str(self) -> &'static str {
        match self {
            RejectRule::BadLength => "badLength",
            RejectRule::Duplicate => "duplicate",
            RejectRule::UnknownInstrument => "unknownInstrument",
            RejectRule::NotEntitled => "notEntitled",
            RejectRule::NotPositive => "notPositive",
            RejectRule::NotWhole => "notWhole",
            RejectRule::AboveLimit => "aboveLimit",
            RejectRule::OffTick => "offTick",
            RejectRule::NotFinite => "notFinite",
            RejectRule::UnknownOrder => "unknownOrder",
            RejectRule::NotOpen => "notOpen",
            RejectRule::BelowFilled => "belowFilled",
            RejectRule::MarketOrder => "marketOrder",
            RejectRule::NoChange => "noChange",
        }
    }
}

/// A refused request: the field, the rule and a human-readable message naming the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderReject {
    /// Offending field.
    pub field: RejectField,
    /// Rule broken.
    pub rule: RejectRule,
    /// E.g. `price 1.23456 is not a multiple of tick 0.0001`.
    pub message: String,
}

impl fmt::Display for OrderReject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.field.as_str(), self.rule.as_str(), self.message)
    }
}

impl std::error::Error for OrderReject {}

pub(crate) fn reject(field: RejectField, rule: RejectRule, message: impl Into<String>) -> OrderReject {
    OrderReject {
        field,
        rule,
        message: message.into(),
    }
}

fn check_id(field: RejectField, value: &str, limits: &OrderLimits) -> Result<(), OrderReject> {
    if value.is_empty() || value.len() > limits.max_id_bytes {
        let msg = format!(
            "{} must be 1..={} bytes, got {}",
            field.as_str(),
            limits.max_id_bytes,
            value.len()
        );
        return Err(reject(field, RejectRule::BadLength, msg));
    }
    Ok(())
}

/// Quantity: finite, whole, > 0, <= max (`floor` = filled quantity an amend must stay above).
pub(crate) fn check_quantity(q: f64, floor: u64, limits: &OrderLimits) -> Result<u64, OrderReject> {
    use RejectField::Quantity;
    if !q.is_finite() {
        return Err(reject(
            Quantity,
            RejectRule::NotFinite,
            format!("quantity {q} is not a finite number"),
        ));
    }
    if q <= 0.0 {
        return Err(reject(
            Quantity,
            RejectRule::NotPositive,
            format!("quantity {q} must be > 0"),
        ));
    }
    if q.fract() != 0.0 {
        return Err(reject(
            Quantity,
            RejectRule::NotWhole,
            format!("quantity {q} must be a whole number"),
        ));
    }
    if q > limits.max_quantity as f64 {
        let msg = format!("quantity {q} is above the limit {}", limits.max_quantity);
        return Err(reject(Quantity, RejectRule::AboveLimit, msg));
    }
    let q = q as u64;
    if q <= floor {
        let msg = format!("quantity {q} must be above the filled quantity {floor}");
        return Err(reject(Quantity, RejectRule::BelowFilled, msg));
    }
    Ok(q)
}

/// Price: finite, > 0, a multiple of `tick` (within 1e-9 of a tick, relative).
pub(crate) fn check_price(p: f64, tick: f64) -> Result<f64, OrderReject> {
    use RejectField::Price;
    if !p.is_finite() {
        return Err(reject(
            Price,
            RejectRule::NotFinite,
            format!("price {p} is not a finite number"),
        ));
    }
    if p <= 0.0 {
        return Err(reject(Price, RejectRule::NotPositive, format!("price {p} must be > 0")));
    }
    let ticks = p / tick;
    if (ticks - ticks.round()).abs() > 1e-9 * ticks.abs().max(1.0) {
        return Err(reject(
            Price,
            RejectRule::OffTick,
            format!("price {p} is not a multiple of tick {tick}"),
        ));
    }
    Ok(p)
}

/// Validates a new order except the duplicate check (the book does that). Returns (quantity, tick).
pub(crate) fn check_new(
    req: &NewOrder,
    catalog: &dyn InstrumentCatalog,
    limits: &OrderLimits,
) -> Result<(u64, Option<f64>), OrderReject> {
    check_id(RejectField::User, &req.user, limits)?;
    check_id(RejectField::ClientOrderId, &req.client_order_id, limits)?;
    if req.instrument.len() > 256 || req.instrument.is_empty() {
        let msg = format!("instrument must be 1..=256 bytes, got {}", req.instrument.len());
        return Err(reject(RejectField::Instrument, RejectRule::BadLength, msg));
    }
    let Some(instrument) = catalog.instrument(&req.instrument) else {
        let msg = format!("unknown instrument {}", req.instrument);
        return Err(reject(RejectField::Instrument, RejectRule::UnknownInstrument, msg));
    };
    if !catalog.entitled(&req.user, &req.instrument) {
        let msg = format!("user {} is not entitled to trade {}", req.user, req.instrument);
        return Err(reject(RejectField::Instrument, RejectRule::NotEntitled, msg));
    }
    let quantity = check_quantity(req.quantity, 0, limits)?;
    let tick = tick_of(instrument, limits);
    let price = req.price.map(|p| check_price(p, tick)).transpose()?;
    Ok((quantity, price))
}

/// Validates an amend of `order`; returns the new (quantity, price).
pub(crate) fn check_amend(
    order: &Order,
    amend: &Amend,
    catalog: &dyn InstrumentCatalog,
    limits: &OrderLimits,
) -> Result<(u64, Option<f64>), OrderReject> {
    if !order.status.is_open() {
        let msg = format!("order {} is {}", order.client_order_id, order.status.as_str());
        return Err(reject(RejectField::Order, RejectRule::NotOpen, msg));
    }
    let quantity = match amend.quantity {
        Some(q) => check_quantity(q, order.filled_quantity, limits)?,
        None => order.quantity,
    };
    let price = match (amend.price, order.price) {
        (None, p) => p,
        (Some(_), None) => {
            return Err(reject(
                RejectField::Price,
                RejectRule::MarketOrder,
                "a market order has no price to amend",
            ))
        }
        (Some(p), Some(_)) => {
            // The instrument may have gone from the catalog since: fall back to the default tick.
            let tick = catalog
                .instrument(&order.instrument)
                .map_or(limits.default_tick, |i| tick_of(i, limits));
            Some(check_price(p, tick)?)
        }
    };
    if quantity == order.quantity && price == order.price {
        return Err(reject(
            RejectField::Order,
            RejectRule::NoChange,
            "amend changes neither quantity nor price",
        ));
    }
    Ok((quantity, price))
}

fn tick_of(i: Instrument, limits: &OrderLimits) -> f64 {
    i.tick_size
        .filter(|t| t.is_finite() && *t > 0.0)
        .unwrap_or(limits.default_tick)
}
