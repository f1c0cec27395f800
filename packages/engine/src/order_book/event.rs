//! Order transitions as journal entries, and their binary encoding.
//!
//! Body layout (little endian): version u8 (= [`EVENT_VERSION`]) | kind u8 | order id u64 | ts ms u64 |
//! kind-specific fields. Strings: u16 length + UTF-8. Optional price: u8 (0 none, 1 some) + f64 bits.
//!
//! Kinds: 1 accepted, 2 acknowledged, 3 filled, 4 amended, 5 cancelled, 6 rejected, 7 accepted and
//! acknowledged (kind 1's fields; one entry for what kinds 1 and 2 journal as two); 8 and 9: kinds 1
//! and 7 with the accept's origin (a string) after kind 1's fields.

use super::model::{CancelReason, Side, TimeInForce};

/// Encoding version of order events.
pub const EVENT_VERSION: u8 = 1;

/// One order transition. Applied by [`super::OrderBook::apply`]; produced by the book's decisions.
#[derive(Debug, Clone, PartialEq)]
pub enum OrderEvent {
    /// A validated new order (status New). `order_id` is the book's next id.
    Accepted {
        /// Engine-assigned id.
        order_id: u64,
        /// ms since the Unix epoch.
        ts: u64,
        /// Owner.
        user: String,
        /// The client's id.
        client_order_id: String,
        /// Instrument subject.
        instrument: String,
        /// Buy or sell.
        side: Side,
        /// Validated quantity.
        quantity: u64,
        /// Limit price, `None` = market.
        price: Option<f64>,
        /// Time in force.
        time_in_force: TimeInForce,
        /// True: the accept is acknowledged in the same entry (applying it is the accept followed
        /// by `Acknowledged` at `ts`); false: it stays New until an `Acknowledged` entry.
        acknowledged: bool,
        /// Where the order came from, when a gateway names it (a FIX session): journaled with the
        /// accept so that a restart can tell the gateway's orders from the user's web orders.
        origin: Option<String>,
    },
    /// New -> Acknowledged.
    Acknowledged {
        /// Order id.
        order_id: u64,
        /// ms since the Unix epoch.
        ts: u64,
    },
    /// A fill (-> PartiallyFilled or Filled).
    Filled {
        /// Order id.
        order_id: u64,
        /// ms since the Unix epoch.
        ts: u64,
        /// Filled quantity (> 0, <= remaining).
        quantity: u64,
        /// Fill price.
        price: f64,
    },
    /// Quantity and/or price changed on an open order.
    Amended {
        /// Order id.
        order_id: u64,
        /// ms since the Unix epoch.
        ts: u64,
        /// New total quantity.
        quantity: u64,
        /// New limit price (`None` for market orders).
        price: Option<f64>,
    },
    /// Open -> Cancelled.
    Cancelled {
        /// Order id.
        order_id: u64,
        /// ms since the Unix epoch.
        ts: u64,
        /// Why.
        reason: CancelReason,
    },
    /// New/Acknowledged -> Rejected after acceptance (e.g. market order with no market).
    Rejected {
        /// Order id.
        order_id: u64,
        /// ms since the Unix epoch.
        ts: u64,
        /// Why (human-readable).
        reason: String,
    },
}

/// A journal body that is not a valid order event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("order event: {0}")]
pub struct DecodeError(pub String);

impl OrderEvent {
    /// The order the event is about.
    pub fn order_id(&self) -> u64 {
        match self {
            OrderEvent::Accepted { order_id, .. }
            | OrderEvent::Acknowledged { order_id, .. }
            | OrderEvent::Filled { order_id, .. }
            | OrderEvent::Amended { order_id, .. }
            | OrderEvent::Cancelled { order_id, .. }
            | OrderEvent::Rejected { order_id, .. } => *order_id,
        }
    }

    /// Short name of the event kind, e.g. `"filled"`.
    pub fn kind(&self) -> &'static str {
        match self {
            OrderEvent::Accepted { .. } => "accepted",
            OrderEvent::Acknowledged { .. } => "acknowledged",
            OrderEvent::Filled { .. } => "filled",
            OrderEvent::Amended { .. } => "amended",
            OrderEvent::Cancelled { .. } => "cancelled",
            OrderEvent::Rejected { .. } => "rejected",
        }
    }

    /// Splits an accept acknowledged in the same entry into the plain accept (left in `self`) and
    /// the acknowledgement it carries (returned); applying the two in turn is applying the whole.
    /// `None` (and `self` unchanged) for any other event.
    pub fn split_acknowledgement(&mut self) -> Option<OrderEvent> {
        let OrderEvent::Accepted {
            order_id,
            ts,
            acknowledged,
            ..
        } = self
        else {
            return None;
        };
        if !*acknowledged {
            return None;
        }
        *acknowledged = false;
        Some(OrderEvent::Acknowledged {
            order_id: *order_id,
            ts: *ts,
        })
    }

    /// Encodes into a journal body.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(64);
        b.push(EVENT_VERSION);
        let (kind, id, ts) = match self {
            OrderEvent::Accepted {
                order_id,
                ts,
                acknowledged,
                origin,
                ..
            } => (
                match (*acknowledged, origin.is_some()) {
                    (false, false) => 1u8,
                    (true, false) => 7,
                    (false, true) => 8,
                    (true, true) => 9,
                },
                order_id,
                ts,
            ),
            OrderEvent::Acknowledged { order_id, ts } => (2, order_id, ts),
            OrderEvent::Filled { order_id, ts, .. } => (3, order_id, ts),
            OrderEvent::Amended { order_id, ts, .. } => (4, order_id, ts),
            OrderEvent::Cancelled { order_id, ts, .. } => (5, order_id, ts),
            OrderEvent::Rejected { order_id, ts, .. } => (6, order_id, ts),
        };
        b.push(kind);
        b.extend_from_slice(&id.to_le_bytes());
        b.extend_from_slice(&ts.to_le_bytes());
        match self {
            OrderEvent::Accepted {
                user,
                client_order_id,
                instrument,
                side,
                quantity,
                price,
                time_in_force,
                origin,
                ..
            } => {
                put_str(&mut b, user);
                put_str(&mut b, client_order_id);
                put_str(&mut b, instrument);
                b.push(match side {
                    Side::Buy => 0,
                    Side::Sell => 1,
                });
                b.extend_from_slice(&quantity.to_le_bytes());
                put_price(&mut b, *price);
                b.push(match time_in_force {
                    TimeInForce::Day => 0,
                    TimeInForce::Ioc => 1,
                    TimeInForce::Gtc => 2,
                });
                if let Some(origin) = origin {
                    put_str(&mut b, origin);
                }
            }
            OrderEvent::Acknowledged { .. } => {}
            OrderEvent::Filled { quantity, price, .. } => {
                b.extend_from_slice(&quantity.to_le_bytes());
                b.extend_from_slice(&price.to_bits().to_le_bytes());
            }
            OrderEvent::Amended { quantity, price, .. } => {
                b.extend_from_slice(&quantity.to_le_bytes());
                put_price(&mut b, *price);
            }
            OrderEvent::Cancelled { reason, .. } => b.push(match reason {
                CancelReason::User => 0,
                CancelReason::ImmediateOrCancel => 1,
                CancelReason::EndOfDay => 2,
            }),
            OrderEvent::Rejected { reason, .. } => put_str(&mut b, reason),
        }
        b
    }

    /// Decodes a journal body written by [`OrderEvent::encode`]; typed error on anything else.
    pub fn decode(bytes: &[u8]) -> Result<OrderEvent, DecodeError> {
        let mut r = Reader { b: bytes, pos: 0 };
        let version = r.u8()?;
        if version != EVENT_VERSION {
            return Err(DecodeError(format!(
                "version {version}, this build reads {EVENT_VERSION}"
            )));
        }
        let kind = r.u8()?;
        let order_id = r.u64()?;
        let ts = r.u64()?;
        let ev = match kind {
            1 | 7 | 8 | 9 => OrderEvent::Accepted {
                order_id,
                ts,
                user: r.str()?,
                client_order_id: r.str()?,
                instrument: r.str()?,
                side: match r.u8()? {
                    0 => Side::Buy,
                    1 => Side::Sell,
                    s => return Err(DecodeError(format!("side {s}"))),
                },
                quantity: r.u64()?,
                price: r.price()?,
                time_in_force: match r.u8()? {
                    0 => TimeInForce::Day,
                    1 => TimeInForce::Ioc,
                    2 => TimeInForce::Gtc,
                    t => return Err(DecodeError(format!("time in force {t}"))),
                },
                acknowledged: kind == 7 || kind == 9,
                origin: if kind >= 8 { Some(r.str()?) } else { None },
            },
            2 => OrderEvent::Acknowledged { order_id, ts },
            3 => OrderEvent::Filled {
                order_id,
                ts,
                quantity: r.u64()?,
                price: f64::from_bits(r.u64()?),
            },
            4 => OrderEvent::Amended {
                order_id,
                ts,
                quantity: r.u64()?,
                price: r.price()?,
            },
            5 => OrderEvent::Cancelled {
                order_id,
                ts,
                reason: match r.u8()? {
                    0 => CancelReason::User,
                    1 => CancelReason::ImmediateOrCancel,
                    2 => CancelReason::EndOfDay,
                    c => return Err(DecodeError(format!("cancel reason {c}"))),
                },
            },
            6 => OrderEvent::Rejected {
                order_id,
                ts,
                reason: r.str()?,
            },
            k => return Err(DecodeError(format!("kind {k}"))),
        };
        if r.pos != bytes.len() {
            return Err(DecodeError(format!("{} trailing bytes", bytes.len() - r.pos)));
        }
        Ok(ev)
    }
}

fn put_str(b: &mut Vec<u8>, s: &str) {
    // Validation bounds every string far below 64 KiB; cut defensively at a char boundary.
    let mut end = s.len().min(u16::MAX as usize);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    b.extend_from_slice(&(end as u16).to_le_bytes());
    b.extend_from_slice(&s.as_bytes()[..end]);
}

fn put_price(b: &mut Vec<u8>, p: Option<f64>) {
    match p {
        None => b.push(0),
        Some(p) => {
            b.push(1);
            b.extend_from_slice(&p.to_bits().to_le_bytes());
        }
    }
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], DecodeError> {
        let end = self.pos.checked_add(n).filter(|e| *e <= self.b.len());
        let end = end.ok_or_else(|| DecodeError(format!("truncated at byte {}", self.pos)))?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    fn str(&mut self) -> Result<String, DecodeError> {
        let n = u16::from_le_bytes(self.take(2)?.try_into().expect("2 bytes")) as usize;
        let at = self.pos;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| DecodeError(format!("invalid UTF-8 at byte {at}")))
    }
    fn price(&mut self) -> Result<Option<f64>, DecodeError> {
        match self.u8()? {
            0 => Ok(None),
            1 => Ok(Some(f64::from_bits(self.u64()?))),
            t => Err(DecodeError(format!("price tag {t}"))),
        }
    }
}
