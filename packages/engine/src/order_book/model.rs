//! Order model: sides, time in force, statuses, the order record and the requests that create or
//! change one.

use tidewire_protocol::messages::order_status;

use super::OrderEvent;

/// Buy or sell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// Buy: fills against the ask.
    Buy,
    /// Sell: fills against the bid.
    Sell,
}

/// How long an order stays working.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeInForce {
    /// Until filled, cancelled, or [`super::OrderBook::end_of_day`].
    Day,
    /// Immediate or cancel: fills what it can at its first execution, the rest is cancelled.
    Ioc,
    /// Good till cancelled: survives end of day.
    Gtc,
}

/// Where an order is in its lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OrderStatus {
    /// Accepted and journaled, not yet acknowledged.
    New,
    /// Acknowledged: working, nothing filled.
    Acknowledged,
    /// Some quantity filled, the rest working.
    PartiallyFilled,
    /// Fully filled (terminal).
    Filled,
    /// Rejected after acceptance, e.g. a market order with no market (terminal).
    Rejected,
    /// Cancelled by the user, by IOC, or at end of day (terminal).
    Cancelled,
}

impl OrderStatus {
    /// True for New, Acknowledged and PartiallyFilled (cancel and amend allowed).
    pub fn is_open(self) -> bool {
        matches!(
            self,
            OrderStatus::New | OrderStatus::Acknowledged | OrderStatus::PartiallyFilled
        )
    }

    /// Wire-style name, e.g. `"partiallyFilled"`.
    pub fn as_str(self) -> &'static str {
        match self {
            OrderStatus::New => order_status::NEW,
            OrderStatus::Acknowledged => order_status::ACKNOWLEDGED,
            OrderStatus::PartiallyFilled => order_status::PARTIALLY_FILLED,
            OrderStatus::Filled => order_status::FILLED,
            OrderStatus::Rejected => order_status::REJECTED,
            OrderStatus::Cancelled => order_status::CANCELLED,
        }
    }
}

/// Why an order was cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CancelReason {
    /// The user asked.
    User,
    /// IOC remainder after its one execution.
    ImmediateOrCancel,
    /// A DAY order still open at end of day.
    EndOfDay,
}

impl CancelReason {
    /// Wire-style name.
    pub fn as_str(self) -> &'static str {
        match self {
            CancelReason::User => "user",
            CancelReason::ImmediateOrCancel => "ioc",
            CancelReason::EndOfDay => "endOfDay",
        }
    }
}

/// A new order as submitted (numbers as they came off the wire; validation checks them).
#[derive(Debug, Clone, PartialEq)]
pub struct NewOrder {
    /// Submitting user (authenticated by the caller).
    pub user: String,
    /// The client's id for the order; unique per user. 1-64 bytes.
    pub client_order_id: String,
    /// Instrument subject, e.g. `/FX/EURUSD`.
    pub instrument: String,
    /// Buy or sell.
    pub side: Side,
    /// Quantity: a whole number > 0 and <= `OrderLimits::max_quantity`.
    pub quantity: f64,
    /// Limit price: a whole number of the instrument's ticks within its range (`PriceGrid`), or
    /// `None` for a market order.
    pub price: Option<f64>,
    /// Time in force.
    pub time_in_force: TimeInForce,
}

/// Changes to an open order; `None` leaves a field as is. At least one must be set.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Amend {
    /// New total quantity: whole, > filled quantity, <= max quantity.
    pub quantity: Option<f64>,
    /// New limit price (limit orders only), checked like a new order's.
    pub price: Option<f64>,
}

/// An order and its current state (what a blotter row shows).
#[derive(Debug, Clone, PartialEq)]
pub struct Order {
    /// Engine-assigned id, gap-free from 1 in acceptance order.
    pub order_id: u64,
    /// Owner.
    pub user: String,
    /// The client's id (unique per user).
    pub client_order_id: String,
    /// Instrument subject.
    pub instrument: String,
    /// Buy or sell.
    pub side: Side,
    /// Total quantity (after amends).
    pub quantity: u64,
    /// Limit price, `None` = market.
    pub price: Option<f64>,
    /// Time in force.
    pub time_in_force: TimeInForce,
    /// Current status.
    pub status: OrderStatus,
    /// Quantity filled so far.
    pub filled_quantity: u64,
    /// Volume-weighted average fill price; 0 before the first fill.
    pub average_price: f64,
    /// Number of fills so far.
    pub fills: u32,
    /// Last fill (quantity, price), if any.
    pub last_fill: Option<(u64, f64)>,
    /// Reason of the cancel or post-acceptance reject, if any.
    pub reason: Option<String>,
    /// Acceptance time, ms since the Unix epoch (from the caller's clock).
    pub created_ms: u64,
    /// Time of the last transition, ms since the Unix epoch.
    pub updated_ms: u64,
    /// Transitions applied (1 after acceptance); a blotter row's version.
    pub version: u32,
    /// The accept's origin (`OrderEvent::Accepted::origin`), if a gateway named one.
    pub origin: Option<String>,
}

impl Order {
    /// Applies a transition (any event but an accept) to this order, counting its version; the
    /// order is unchanged on `Err` (the state the event does not fit, `"exists"` for an accept).
    pub fn step(&mut self, ev: &OrderEvent) -> Result<(), &'static str> {
        let state = self.status.as_str();
        match ev {
            OrderEvent::Accepted { .. } => return Err("exists"),
            OrderEvent::Acknowledged { ts, .. } => {
                if self.status != OrderStatus::New {
                    return Err(state);
                }
                self.status = OrderStatus::Acknowledged;
                self.updated_ms = *ts;
            }
            OrderEvent::Filled {
                ts, quantity, price, ..
            } => {
                let open = matches!(self.status, OrderStatus::Acknowledged | OrderStatus::PartiallyFilled);
                if !open || *quantity == 0 || *quantity > self.quantity - self.filled_quantity || !price.is_finite() {
                    return Err(state);
                }
                let filled = self.filled_quantity + quantity;
                self.average_price =
                    (self.average_price * self.filled_quantity as f64 + price * *quantity as f64) / filled as f64;
                self.filled_quantity = filled;
                self.fills += 1;
                self.last_fill = Some((*quantity, *price));
                self.status = if filled == self.quantity {
                    OrderStatus::Filled
                } else {
                    OrderStatus::PartiallyFilled
                };
                self.updated_ms = *ts;
            }
            OrderEvent::Amended {
                ts, quantity, price, ..
            } => {
                if !self.status.is_open()
                    || *quantity <= self.filled_quantity
                    || price.is_some() != self.price.is_some()
                {
                    return Err(state);
                }
                self.quantity = *quantity;
                self.price = *price;
                self.updated_ms = *ts;
            }
            OrderEvent::Cancelled { ts, reason, .. } => {
                if !self.status.is_open() {
                    return Err(state);
                }
                self.status = OrderStatus::Cancelled;
                self.reason = Some(reason.as_str().to_owned());
                self.updated_ms = *ts;
            }
            OrderEvent::Rejected { ts, reason, .. } => {
                if !matches!(self.status, OrderStatus::New | OrderStatus::Acknowledged) {
                    return Err(state);
                }
                self.status = OrderStatus::Rejected;
                self.reason = Some(reason.clone());
                self.updated_ms = *ts;
            }
        }
        self.version += 1;
        Ok(())
    }

    /// The New order an accept makes (version 1); `None` for any other event. An accept
    /// acknowledged in the same entry gives the order before its acknowledgement.
    pub fn from_accept(ev: &OrderEvent) -> Option<Order> {
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
            origin,
            ..
        } = ev
        else {
            return None;
        };
        Some(Order::new_accepted(
            *order_id,
            *ts,
            [user.clone(), client_order_id.clone(), instrument.clone()],
            *side,
            *quantity,
            *price,
            *time_in_force,
            origin.clone(),
        ))
    }

    /// The New order (version 1) an accept of `order_id` at `ts` makes, owning its strings
    /// (user, client order id, instrument).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new_accepted(
        order_id: u64,
        ts: u64,
        strings: [String; 3],
        side: Side,
        quantity: u64,
        price: Option<f64>,
        time_in_force: TimeInForce,
        origin: Option<String>,
    ) -> Order {
        let [user, client_order_id, instrument] = strings;
        Order {
            order_id,
            user,
            client_order_id,
            instrument,
            side,
            quantity,
            price,
            time_in_force,
            status: OrderStatus::New,
            filled_quantity: 0,
            average_price: 0.0,
            fills: 0,
            last_fill: None,
            reason: None,
            created_ms: ts,
            updated_ms: ts,
            version: 1,
            origin,
        }
    }

    /// Quantity still working (0 once terminal).
    pub fn remaining(&self) -> u64 {
        if self.status.is_open() {
            self.quantity - self.filled_quantity
        } else {
            0
        }
    }
}

/// The live top of book of an instrument (prices in the instrument's units); `None` = no side.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Quote {
    /// Best bid.
    pub bid: Option<f64>,
    /// Best ask.
    pub ask: Option<f64>,
}
