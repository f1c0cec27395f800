//! FIX order requests as desk requests: ClOrdID, Symbol, Side, OrderQty, OrdType, Price and
//! TimeInForce read and mapped, and the reasons a request is refused before it reaches the desk.

use super::report::Version;
use crate::fix::acceptor::{NewOrderSingle, OrdType, OrderCancelReplaceRequest, Side as FixSide};
use crate::order_book::{RejectRule, Side, TimeInForce};
use crate::order_desk::frame::{is_client_order_id, is_subject, MAX_CLIENT_ORDER_ID_CHARS};

/// Why an order request was refused, as OrdRejReason (103) / CxlRejReason (102) know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Unknown symbol (103=1).
    UnknownSymbol,
    /// Duplicate ClOrdID (103=6).
    Duplicate,
    /// Order exceeds a limit (103=3).
    ExceedsLimit,
    /// An order characteristic we do not support (4.4: 103=11; 4.2: 0).
    Unsupported,
    /// Incorrect quantity (4.4: 103=13; 4.2: 0).
    Quantity,
    /// Unknown order (102=1, 103=5).
    UnknownOrder,
    /// The order is no longer open (102=0 too late to cancel).
    TooLate,
    /// Anything else (4.4: 99; 4.2: 0 broker option for 103, 2 for 102).
    Other,
}

impl Reason {
    /// OrdRejReason (103) of a rejected new order.
    pub fn ord_rej_reason(self, v: Version) -> u32 {
        let v44 = v == Version::Fix44;
        match self {
            Reason::UnknownSymbol => 1,
            Reason::Duplicate => 6,
            Reason::ExceedsLimit => 3,
            Reason::UnknownOrder => 5,
            Reason::TooLate => 4,
            Reason::Unsupported if v44 => 11,
            Reason::Quantity if v44 => 13,
            Reason::Other if v44 => 99,
            _ => 0,
        }
    }

    /// CxlRejReason (102) of a refused cancel or replace.
    pub fn cxl_rej_reason(self, v: Version) -> u32 {
        match self {
            Reason::TooLate => 0,
            Reason::UnknownOrder => 1,
            Reason::Duplicate if v == Version::Fix44 => 6,
            _ if v == Version::Fix44 => 99,
            _ => 2,
        }
    }

    /// The reason of a desk rule.
    pub fn of_rule(rule: RejectRule) -> Reason {
        match rule {
            RejectRule::UnknownInstrument => Reason::UnknownSymbol,
            RejectRule::Duplicate => Reason::Duplicate,
            RejectRule::AboveLimit => Reason::ExceedsLimit,
            RejectRule::NotPositive | RejectRule::NotWhole | RejectRule::BelowLimit | RejectRule::BelowFilled => {
                Reason::Quantity
            }
            RejectRule::UnknownOrder => Reason::UnknownOrder,
            RejectRule::NotOpen => Reason::TooLate,
            RejectRule::MarketOrder => Reason::Unsupported,
            _ => Reason::Other,
        }
    }
}

/// A refusal: why, and the Text (58) naming the tag or rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Why.
    pub reason: Reason,
    /// Text (58).
    pub text: String,
}

fn refuse(reason: Reason, text: impl Into<String>) -> Refusal {
    Refusal {
        reason,
        text: text.into(),
    }
}

/// A NewOrderSingle mapped to the desk.
#[derive(Debug, Clone, PartialEq)]
pub struct NewOrder<'a> {
    /// ClOrdID (11): the desk's client order id.
    pub cl_ord_id: &'a str,
    /// The instrument subject Symbol (55) names.
    pub instrument: String,
    /// Side.
    pub side: Side,
    /// OrderQty (38).
    pub quantity: f64,
    /// Price (44) of a limit order.
    pub price: Option<f64>,
    /// TimeInForce (59).
    pub time_in_force: TimeInForce,
}

/// A ClOrdID the desk can hold (1..64 of `[A-Za-z0-9._:-]`), else the refusal naming `tag`.
pub fn check_cl_ord_id(tag: u32, id: &str) -> Result<(), Refusal> {
    if is_client_order_id(id) {
        return Ok(());
    }
    Err(refuse(
        Reason::Other,
        format!("ClOrdID must be 1..{MAX_CLIENT_ORDER_ID_CHARS} of [A-Za-z0-9._:-], field={tag}"),
    ))
}

/// The instrument subject of `symbol`: a symbol starting with `/` is a subject already; any
/// other is appended to the session's `prefix` (e.g. `/FX/` + `EURUSD`).
pub fn instrument(symbol: &str, prefix: &str) -> Result<String, Refusal> {
    let subject = if symbol.starts_with('/') {
        symbol.to_owned()
    } else {
        format!("{prefix}{symbol}")
    };
    if is_subject(&subject) {
        Ok(subject)
    } else {
        Err(refuse(
            Reason::UnknownSymbol,
            format!("Unknown symbol '{symbol}' (no instrument '{subject}'), field=55"),
        ))
    }
}

/// The Symbol (55) an ExecutionReport shows for `instrument`: without the session's prefix.
pub fn symbol<'a>(instrument: &'a str, prefix: &str) -> &'a str {
    match instrument.strip_prefix(prefix) {
        Some(s) if !prefix.is_empty() && !s.is_empty() => s,
        _ => instrument,
    }
}

fn side(s: Option<FixSide>) -> Result<Side, Refusal> {
    match s {
        Some(FixSide::Buy) => Ok(Side::Buy),
        Some(FixSide::Sell) => Ok(Side::Sell),
        _ => Err(refuse(
            Reason::Unsupported,
            "Unsupported Side: only 1 (buy) and 2 (sell), field=54",
        )),
    }
}

fn decimal(tag: u32, v: Option<&str>) -> Result<f64, Refusal> {
    let text = v.ok_or_else(|| refuse(Reason::Other, format!("Required tag missing, field={tag}")))?;
    text.parse::<f64>()
        .ok()
        .filter(|f| f.is_finite())
        .ok_or_else(|| refuse(Reason::Other, format!("Incorrect data format for value, field={tag}")))
}

/// Price of a limit order (44 required), `None` for a market order; other OrdTypes refused.
fn price(ord_type: Option<OrdType>, p: Option<&str>) -> Result<Option<f64>, Refusal> {
    match ord_type {
        Some(OrdType::Market) if p.is_some() => Err(refuse(
            Reason::Unsupported,
            "Price must not be set on a market order, field=44",
        )),
        Some(OrdType::Market) => Ok(None),
        Some(OrdType::Limit) => decimal(44, p).map(Some),
        _ => Err(refuse(
            Reason::Unsupported,
            "Unsupported OrdType: only 1 (market) and 2 (limit), field=40",
        )),
    }
}

/// Reads a NewOrderSingle; `prefix` maps Symbol to an instrument.
pub fn new_order<'a>(m: &NewOrderSingle<'a>, prefix: &str) -> Result<NewOrder<'a>, Refusal> {
    let cl_ord_id = m.cl_ord_id().unwrap_or_default();
    check_cl_ord_id(11, cl_ord_id)?;
    let time_in_force = match m.time_in_force() {
        b'0' => TimeInForce::Day,
        b'1' => TimeInForce::Gtc,
        b'3' => TimeInForce::Ioc,
        _ => {
            return Err(refuse(
                Reason::Unsupported,
                "Unsupported TimeInForce: only 0 (day), 1 (GTC) and 3 (IOC), field=59",
            ))
        }
    };
    Ok(NewOrder {
        cl_ord_id,
        instrument: instrument(m.symbol().unwrap_or_default(), prefix)?,
        side: side(m.side())?,
        quantity: decimal(38, m.order_qty())?,
        price: price(m.ord_type(), m.price())?,
        time_in_force,
    })
}

/// An OrderCancelReplaceRequest's new terms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Replace {
    /// New total OrderQty (38).
    pub quantity: f64,
    /// New Price (44) of a limit order.
    pub price: Option<f64>,
    /// Side (54) as sent.
    pub side: Side,
    /// True for OrdType 2 (limit).
    pub limit: bool,
}

/// Reads an OrderCancelReplaceRequest's terms.
pub fn replace(m: &OrderCancelReplaceRequest<'_>) -> Result<Replace, Refusal> {
    let limit = matches!(m.ord_type(), Some(OrdType::Limit));
    Ok(Replace {
        quantity: decimal(38, m.order_qty())?,
        price: price(m.ord_type(), m.price())?,
        side: side(m.side())?,
        limit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_map_to_instruments_and_back() {
        assert_eq!(instrument("EURUSD", "/FX/").unwrap(), "/FX/EURUSD");
        assert_eq!(instrument("/PRODUCT/XS1", "/FX/").unwrap(), "/PRODUCT/XS1");
        let r = instrument("EUR/USD WK", "/FX/").unwrap_err();
        assert_eq!(r.reason, Reason::UnknownSymbol);
        assert!(r.text.ends_with("field=55"), "{}", r.text);
        assert_eq!(symbol("/FX/EURUSD", "/FX/"), "EURUSD");
        assert_eq!(symbol("/PRODUCT/XS1", "/FX/"), "/PRODUCT/XS1");
        assert_eq!(symbol("/FX/EURUSD", ""), "/FX/EURUSD");
    }

    #[test]
    fn reasons_use_the_codes_each_version_defines() {
        use Version::*;
        assert_eq!(Reason::UnknownSymbol.ord_rej_reason(Fix42), 1);
        assert_eq!(Reason::Unsupported.ord_rej_reason(Fix42), 0);
        assert_eq!(Reason::Unsupported.ord_rej_reason(Fix44), 11);
        assert_eq!(Reason::Quantity.ord_rej_reason(Fix44), 13);
        assert_eq!(Reason::Other.ord_rej_reason(Fix44), 99);
        assert_eq!(Reason::UnknownOrder.cxl_rej_reason(Fix42), 1);
        assert_eq!(Reason::TooLate.cxl_rej_reason(Fix44), 0);
        assert_eq!(Reason::Other.cxl_rej_reason(Fix42), 2);
        assert_eq!(Reason::Duplicate.cxl_rej_reason(Fix44), 6);
        assert_eq!(Reason::Duplicate.cxl_rej_reason(Fix42), 2);
        assert_eq!(Reason::of_rule(RejectRule::NotOpen), Reason::TooLate);
        assert_eq!(Reason::of_rule(RejectRule::Duplicate), Reason::Duplicate);
    }

    #[test]
    fn cl_ord_ids_the_desk_cannot_hold_are_refused_naming_the_tag() {
        assert!(check_cl_ord_id(11, "ORD-1.a:b_c").is_ok());
        for bad in ["", "has space", "é", &"x".repeat(65)] {
            let r = check_cl_ord_id(11, bad).unwrap_err();
            assert!(r.text.ends_with("field=11"), "{bad:?}: {}", r.text);
        }
    }
}
