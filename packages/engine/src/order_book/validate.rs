//! Order validation: typed rejects naming the field and the rule. A rejected request changes nothing.

use super::model::{Amend, NewOrder, Order};
use super::price::{show_number, PriceGrid, MAX_PRICE_TICKS, MAX_TICK_SIZE, MIN_TICK_SIZE};
use std::fmt;

/// Per-instrument facts the order book needs, answered by the caller's store.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Instrument {
    /// Price increment; `None` (or one outside 1e-12..=1e6) = use `OrderLimits::default_tick`.
    pub tick_size: Option<f64>,
    /// Lowest limit price (rounded up to a whole tick); `None` = one tick.
    pub min_price: Option<f64>,
    /// Highest limit price (rounded down to a whole tick); `None` = `OrderLimits::max_price_ticks`
    /// ticks. Never above that either.
    pub max_price: Option<f64>,
}

/// The caller's view of its instrument catalog and entitlements (the store, the permission layer).
pub trait InstrumentCatalog {
    /// The instrument named by `subject`, or `None` if it does not exist.
    fn instrument(&self, subject: &str) -> Option<Instrument>;
    /// Whether `user` may trade `subject`. Default: everyone may.
    fn entitled(&self, _user: &str, _subject: &str) -> bool {
        true
    }
    /// The live market of `subject` for the risk checks. Default: none known.
    fn market(&self, _subject: &str) -> super::risk::Market {
        super::risk::Market::default()
    }
    /// Whether `subject`'s prices are stale (record status). Default: never.
    fn stale(&self, _subject: &str) -> bool {
        false
    }
}

/// Limits applied by validation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OrderLimits {
    /// Largest quantity of one order. Default 1,000,000,000.
    pub max_quantity: u64,
    /// Tick for instruments without their own. Default 0.0001.
    pub default_tick: f64,
    /// Highest limit price of any instrument, in its ticks (1..=[`MAX_PRICE_TICKS`]; an
    /// instrument's `max_price` can only lower it). Default [`MAX_PRICE_TICKS`] (10^9).
    pub max_price_ticks: u64,
    /// Longest client order id, user or instrument, bytes. Default 64.
    pub max_id_bytes: usize,
}

impl Default for OrderLimits {
    fn default() -> Self {
        OrderLimits {
            max_quantity: 1_000_000_000,
            default_tick: 0.0001,
            max_price_ticks: MAX_PRICE_TICKS,
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
    /// Every field, in the protocol schema's order (`order_reject_field::ALL` in
    /// packages/protocol).
    pub const ALL: [RejectField; 6] = [
        RejectField::ClientOrderId,
        RejectField::User,
        RejectField::Instrument,
        RejectField::Quantity,
        RejectField::Price,
        RejectField::Order,
    ];

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
    /// Quantity not a whole number.
    NotWhole,
    /// Quantity above `max_quantity`, or price above the instrument's maximum.
    AboveLimit,
    /// Price below the instrument's minimum (one tick unless its record says more).
    BelowLimit,
    /// Price not a whole number of ticks.
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
    /// A limit price further through the live market than the instrument type's collar.
    Collar,
    /// Notional (quantity x price) of the order above the instrument type's maximum.
    MaxNotional,
    /// The user's open notional over the instrument type would pass its maximum.
    OpenNotional,
    /// The instrument's record is stale (its source is gone or it passed its maximum age), or
    /// its quote was not updated within the instrument type's maximum age.
    Stale,
}

impl RejectRule {
    /// Every rule, in the protocol schema's order (`order_reject_rule::ALL` in packages/protocol):
    /// the one list the order stream codec and the schema test read.
    pub const ALL: [RejectRule; 19] = [
        RejectRule::BadLength,
        RejectRule::Duplicate,
        RejectRule::UnknownInstrument,
        RejectRule::NotEntitled,
        RejectRule::NotPositive,
        RejectRule::NotWhole,
        RejectRule::AboveLimit,
        RejectRule::BelowLimit,
        RejectRule::OffTick,
        RejectRule::NotFinite,
        RejectRule::UnknownOrder,
        RejectRule::NotOpen,
        RejectRule::BelowFilled,
        RejectRule::MarketOrder,
        RejectRule::NoChange,
        RejectRule::Collar,
        RejectRule::MaxNotional,
        RejectRule::OpenNotional,
        RejectRule::Stale,
    ];

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
            RejectRule::BelowLimit => "belowLimit",
            RejectRule::OffTick => "offTick",
            RejectRule::NotFinite => "notFinite",
            RejectRule::UnknownOrder => "unknownOrder",
            RejectRule::NotOpen => "notOpen",
            RejectRule::BelowFilled => "belowFilled",
            RejectRule::MarketOrder => "marketOrder",
            RejectRule::NoChange => "noChange",
            RejectRule::Collar => "collar",
            RejectRule::MaxNotional => "maxNotional",
            RejectRule::OpenNotional => "openNotional",
            RejectRule::Stale => "stale",
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
    /// E.g. `price 1e+308 is above the maximum 10000.00000 for /FX/EURUSD`.
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
/// Values show as the client sent them (`1e+308`, `5e-324`), not in Rust's 300-digit notation.
pub(crate) fn check_quantity(q: f64, floor: u64, limits: &OrderLimits) -> Result<u64, OrderReject> {
    use RejectField::Quantity;
    let shown = show_number(q);
    if !q.is_finite() {
        return Err(reject(
            Quantity,
            RejectRule::NotFinite,
            format!("quantity {shown} is not a finite number"),
        ));
    }
    if q <= 0.0 {
        return Err(reject(
            Quantity,
            RejectRule::NotPositive,
            format!("quantity {shown} must be > 0"),
        ));
    }
    if q.fract() != 0.0 {
        return Err(reject(
            Quantity,
            RejectRule::NotWhole,
            format!("quantity {shown} must be a whole number"),
        ));
    }
    if q > limits.max_quantity as f64 {
        let msg = format!("quantity {shown} is above the limit {}", limits.max_quantity);
        return Err(reject(Quantity, RejectRule::AboveLimit, msg));
    }
    // Whole and in 1..=max_quantity (<= 2^53): exact as u64.
    let q = q as u64;
    if q <= floor {
        let msg = format!("quantity {q} must be above the filled quantity {floor}");
        return Err(reject(Quantity, RejectRule::BelowFilled, msg));
    }
    Ok(q)
}

/// The price grid of `instrument` (`None`: gone from the catalog, so the default tick and band).
fn grid_of(instrument: Option<Instrument>, limits: &OrderLimits) -> PriceGrid {
    let i = instrument.unwrap_or_default();
    let tick = i
        .tick_size
        .filter(|t| (MIN_TICK_SIZE..=MAX_TICK_SIZE).contains(t))
        .unwrap_or(limits.default_tick);
    PriceGrid::new(tick, limits.max_price_ticks, i.min_price, i.max_price)
}

/// Validates a new order except the duplicate check (the book does that). Returns (quantity, price).
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
    if catalog.stale(&req.instrument) {
        let msg = format!(
            "{} is stale: its prices are not live (its source is gone or it passed its maximum age)",
            req.instrument
        );
        return Err(reject(RejectField::Instrument, RejectRule::Stale, msg));
    }
    let quantity = check_quantity(req.quantity, 0, limits)?;
    if let Some(p) = req.price {
        grid_of(Some(instrument), limits).ticks(p, &req.instrument)?;
    }
    // The price as sent (on tick within the tolerance): what the client asked for, unchanged.
    Ok((quantity, req.price))
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
            // The instrument may have gone from the catalog since: the default tick and band then.
            grid_of(catalog.instrument(&order.instrument), limits).ticks(p, &order.instrument)?;
            Some(p)
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
