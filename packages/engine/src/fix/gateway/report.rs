//! ExecutionReport (35=8) and OrderCancelReject (35=9) as each FIX version wants them.
//!
//! | what happened | 4.2 ExecType / OrdStatus | 4.4 ExecType / OrdStatus |
//! | --- | --- | --- |
//! | order accepted (durable) | 0 / 0 | 0 / 0 |
//! | partial fill | 1 / 1 | F / 1 |
//! | fill | 2 / 2 | F / 2 |
//! | cancelled (request, IOC remainder) | 4 / 4 | 4 / 4 |
//! | expired at end of day | C / C | C / C |
//! | replaced | 5 / 5 (1 when partially filled) | 5 / 0 or 1 |
//! | rejected | 8 / 8 | 8 / 8 |
//!
//! FIX 4.2 reports also carry ExecTransType (20) = 0; FIX 4.4 has no ExecTransType and no
//! OrdStatus 5 (Replaced).

use crate::fix::session::Outbox;
use crate::order_book::{OrderStatus, Side, TimeInForce};

/// FIX version of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// FIX.4.2
    Fix42,
    /// FIX.4.4
    Fix44,
}

/// What an ExecutionReport reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ExecKind {
    /// The order is accepted (and durable).
    New,
    /// A fill of `quantity` at `price`.
    Trade {
        /// LastQty (32).
        quantity: u64,
        /// LastPx (31).
        price: f64,
    },
    /// Cancelled (on request, or an IOC remainder).
    Cancelled,
    /// Expired at end of day.
    Expired,
    /// Quantity and/or price replaced.
    Replaced,
    /// Rejected, with OrdRejReason (103).
    Rejected {
        /// OrdRejReason (103).
        reason: u32,
    },
}

/// The order as an ExecutionReport shows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OrderView<'a> {
    /// OrderID (37); `None` for an order the desk never accepted (`NONE`).
    pub order_id: Option<u64>,
    /// ClOrdID (11).
    pub cl_ord_id: &'a str,
    /// OrigClOrdID (41), for a cancel or replace.
    pub orig_cl_ord_id: Option<&'a str>,
    /// ExecID (17).
    pub exec_id: &'a str,
    /// Symbol (55).
    pub symbol: &'a str,
    /// Side (54): the character as sent (`1` buy, `2` sell).
    pub side: u8,
    /// OrderQty (38), as a decimal text.
    pub quantity: &'a str,
    /// Price (44), for a limit order, as text.
    pub price: Option<&'a str>,
    /// OrdType (40) character.
    pub ord_type: u8,
    /// TimeInForce (59) character.
    pub time_in_force: u8,
    /// The order's status after what is reported (`New` for a rejected request).
    pub status: OrderStatus,
    /// CumQty (14).
    pub cum_qty: u64,
    /// LeavesQty (151).
    pub leaves_qty: u64,
    /// AvgPx (6).
    pub avg_px: f64,
    /// TransactTime (60), ms since the Unix epoch.
    pub transact_ms: i64,
    /// Text (58).
    pub text: Option<&'a str>,
}

/// Side (54) character of a desk side.
pub fn side_char(s: Side) -> u8 {
    match s {
        Side::Buy => b'1',
        Side::Sell => b'2',
    }
}

/// TimeInForce (59) character of a desk time in force.
pub fn tif_char(t: TimeInForce) -> u8 {
    match t {
        TimeInForce::Day => b'0',
        TimeInForce::Gtc => b'1',
        TimeInForce::Ioc => b'3',
    }
}

/// OrdStatus (39) of a desk status (what a cancel reject reports; ExecutionReports use
/// `ord_status`, which also knows the replace and expiry cases).
pub fn status_char(s: OrderStatus) -> u8 {
    match s {
        OrderStatus::New | OrderStatus::Acknowledged => b'0',
        OrderStatus::PartiallyFilled => b'1',
        OrderStatus::Filled => b'2',
        OrderStatus::Cancelled => b'4',
        OrderStatus::Rejected => b'8',
    }
}

/// ExecType (150) for `kind` at `status`.
pub fn exec_type(v: Version, kind: ExecKind, status: OrderStatus) -> u8 {
    match kind {
        ExecKind::New => b'0',
        ExecKind::Trade { .. } => match (v, status) {
            (Version::Fix44, _) => b'F',
            (Version::Fix42, OrderStatus::Filled) => b'2',
            (Version::Fix42, _) => b'1',
        },
        ExecKind::Cancelled => b'4',
        ExecKind::Expired => b'C',
        ExecKind::Replaced => b'5',
        ExecKind::Rejected { .. } => b'8',
    }
}

/// OrdStatus (39) for `kind` at `status`.
pub fn ord_status(v: Version, kind: ExecKind, status: OrderStatus) -> u8 {
    match kind {
        ExecKind::Expired => b'C',
        ExecKind::Rejected { .. } => b'8',
        // 4.2's Replaced ranks below Partially Filled; 4.4 has no Replaced status
        ExecKind::Replaced if v == Version::Fix42 && status != OrderStatus::PartiallyFilled => b'5',
        _ => status_char(status),
    }
}

/// Appends an ExecutionReport for `o` reporting `kind` to `out`.
pub fn execution_report(out: &mut Outbox, v: Version, kind: ExecKind, o: &OrderView<'_>) {
    let mut w = out.message(b"8");
    match o.order_id {
        Some(n) => w.field_i64(37, n as i64),
        None => w.field(37, b"NONE"),
    };
    w.field(11, o.cl_ord_id.as_bytes());
    if let Some(orig) = o.orig_cl_ord_id {
        w.field(41, orig.as_bytes());
    }
    w.field(17, o.exec_id.as_bytes());
    if v == Version::Fix42 {
        w.field(20, b"0");
    }
    w.field(150, &[exec_type(v, kind, o.status)])
        .field(39, &[ord_status(v, kind, o.status)]);
    if let ExecKind::Rejected { reason } = kind {
        w.field_i64(103, i64::from(reason));
    }
    w.field(55, o.symbol.as_bytes())
        .field(54, &[o.side])
        .field(38, o.quantity.as_bytes())
        .field(40, &[o.ord_type]);
    if let Some(p) = o.price {
        w.field(44, p.as_bytes());
    }
    w.field(59, &[o.time_in_force]);
    if let ExecKind::Trade { quantity, price } = kind {
        w.field_i64(32, quantity as i64).field_f64(31, price);
    }
    w.field_i64(151, o.leaves_qty as i64)
        .field_i64(14, o.cum_qty as i64)
        .field_f64(6, o.avg_px);
    w.field_timestamp(60, o.transact_ms);
    if let Some(text) = o.text {
        w.field(58, text.as_bytes());
    }
}

/// An OrderCancelReject (35=9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CancelReject<'a> {
    /// OrderID (37); `None`: `NONE` (unknown order).
    pub order_id: Option<u64>,
    /// ClOrdID (11) of the refused request.
    pub cl_ord_id: &'a str,
    /// OrigClOrdID (41) it named.
    pub orig_cl_ord_id: &'a str,
    /// OrdStatus (39) of the order as last reported (`8` when unknown).
    pub ord_status: u8,
    /// CxlRejResponseTo (434): `1` cancel, `2` cancel/replace.
    pub response_to: u8,
    /// CxlRejReason (102).
    pub reason: u32,
    /// Text (58).
    pub text: &'a str,
}

/// Appends `r` to `out`.
pub fn cancel_reject(out: &mut Outbox, r: &CancelReject<'_>) {
    let mut w = out.message(b"9");
    match r.order_id {
        Some(n) => w.field_i64(37, n as i64),
        None => w.field(37, b"NONE"),
    };
    w.field(11, r.cl_ord_id.as_bytes())
        .field(41, r.orig_cl_ord_id.as_bytes())
        .field(39, &[r.ord_status])
        .field(434, &[r.response_to])
        .field_i64(102, i64::from(r.reason))
        .field(58, r.text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fix::codec::Parser;
    use crate::fix::session::{MemoryStore, Session, SessionConfig};

    fn view(status: OrderStatus) -> OrderView<'static> {
        OrderView {
            order_id: Some(42),
            cl_ord_id: "C2",
            orig_cl_ord_id: Some("C1"),
            exec_id: "42-3",
            symbol: "EURUSD",
            side: b'1',
            quantity: "100",
            price: Some("1.0852"),
            ord_type: b'2',
            time_in_force: b'0',
            status,
            cum_qty: 40,
            leaves_qty: 60,
            avg_px: 1.08515,
            transact_ms: 1_700_000_000_123,
            text: None,
        }
    }

    /// The fields of the one message in `out`, as (tag, value) text pairs.
    fn fields(out: &Outbox) -> Vec<(u32, String)> {
        let (_, _, body) = out.iter().next().unwrap();
        String::from_utf8(body.to_vec())
            .unwrap()
            .split('\x01')
            .filter(|f| !f.is_empty())
            .map(|f| {
                let (t, v) = f.split_once('=').unwrap();
                (t.parse().unwrap(), v.to_owned())
            })
            .collect()
    }

    fn get(f: &[(u32, String)], tag: u32) -> Option<&str> {
        f.iter().find(|(t, _)| *t == tag).map(|(_, v)| v.as_str())
    }

    #[test]
    fn exec_type_and_ord_status_follow_each_version() {
        use ExecKind as K;
        use OrderStatus as S;
        let trade = K::Trade {
            quantity: 1,
            price: 1.0,
        };
        let cases: &[(ExecKind, OrderStatus, &str, &str)] = &[
            // kind, status after, 4.2 150/39, 4.4 150/39
            (K::New, S::New, "00", "00"),
            (trade, S::PartiallyFilled, "11", "F1"),
            (trade, S::Filled, "22", "F2"),
            (K::Cancelled, S::Cancelled, "44", "44"),
            (K::Expired, S::Cancelled, "CC", "CC"),
            (K::Replaced, S::Acknowledged, "55", "50"),
            (K::Replaced, S::PartiallyFilled, "51", "51"),
            (K::Rejected { reason: 1 }, S::New, "88", "88"),
            (K::Rejected { reason: 0 }, S::Rejected, "88", "88"),
        ];
        for &(kind, status, v42, v44) in cases {
            for (v, want) in [(Version::Fix42, v42), (Version::Fix44, v44)] {
                let got = [exec_type(v, kind, status), ord_status(v, kind, status)];
                assert_eq!(std::str::from_utf8(&got).unwrap(), want, "{kind:?} {status:?} {v:?}");
            }
        }
    }

    #[test]
    fn a_fill_report_carries_quantities_prices_and_the_version_fields() {
        let trade = ExecKind::Trade {
            quantity: 40,
            price: 1.0851,
        };
        let mut out = Outbox::new();
        execution_report(&mut out, Version::Fix42, trade, &view(OrderStatus::PartiallyFilled));
        let f = fields(&out);
        for (tag, want) in [
            (37, "42"),
            (11, "C2"),
            (41, "C1"),
            (17, "42-3"),
            (20, "0"),
            (150, "1"),
            (39, "1"),
            (55, "EURUSD"),
            (54, "1"),
            (38, "100"),
            (40, "2"),
            (44, "1.0852"),
            (59, "0"),
            (32, "40"),
            (31, "1.0851"),
            (151, "60"),
            (14, "40"),
            (6, "1.08515"),
            (60, "20231114-22:13:20.123"),
        ] {
            assert_eq!(get(&f, tag), Some(want), "tag {tag} in {f:?}");
        }
        let mut out = Outbox::new();
        execution_report(&mut out, Version::Fix44, trade, &view(OrderStatus::PartiallyFilled));
        let f = fields(&out);
        assert_eq!(get(&f, 20), None, "no ExecTransType in 4.4");
        assert_eq!(get(&f, 150), Some("F"));
    }

    #[test]
    fn a_rejected_request_has_no_order_id_and_names_its_reason() {
        let mut v = view(OrderStatus::New);
        v.order_id = None;
        v.orig_cl_ord_id = None;
        v.text = Some("unknown instrument /FX/NOPE");
        let mut out = Outbox::new();
        execution_report(&mut out, Version::Fix44, ExecKind::Rejected { reason: 1 }, &v);
        let f = fields(&out);
        assert_eq!(get(&f, 37), Some("NONE"));
        assert_eq!(get(&f, 103), Some("1"));
        assert_eq!(get(&f, 58), Some("unknown instrument /FX/NOPE"));
        assert_eq!(get(&f, 41), None);
        assert_eq!(get(&f, 32), None, "no LastQty without a fill");
    }

    /// Every report and cancel reject passes our own data dictionary of its version (the
    /// counterparty validates them with the same specification).
    #[test]
    fn reports_validate_against_the_dictionary_of_their_version() {
        use crate::fix::dictionary::{Dictionary, Validator};
        for (v, dict) in [
            (Version::Fix42, Dictionary::fix42()),
            (Version::Fix44, Dictionary::fix44()),
        ] {
            let mut out = Outbox::new();
            let trade = ExecKind::Trade {
                quantity: 60,
                price: 1.0852,
            };
            let kinds = [
                (ExecKind::New, OrderStatus::Acknowledged),
                (trade, OrderStatus::Filled),
                (ExecKind::Cancelled, OrderStatus::Cancelled),
                (ExecKind::Expired, OrderStatus::Cancelled),
                (ExecKind::Replaced, OrderStatus::Acknowledged),
                (ExecKind::Rejected { reason: 1 }, OrderStatus::New),
            ];
            for (kind, status) in kinds {
                execution_report(&mut out, v, kind, &view(status));
            }
            cancel_reject(
                &mut out,
                &CancelReject {
                    order_id: None,
                    cl_ord_id: "X",
                    orig_cl_ord_id: "Y",
                    ord_status: b'8',
                    response_to: b'1',
                    reason: 1,
                    text: "unknown order",
                },
            );
            let mut session = Session::new(SessionConfig::new(dict, "TW", "CLIENT"), Box::new(MemoryStore::new()));
            let now = crate::fix::session::Now {
                utc_ms: 1_700_000_000_000,
                mono_ms: 0,
            };
            for (t, h, b) in out.iter() {
                session.send_app(t, h, b, now);
            }
            let mut validator = Validator::new();
            let mut parser = Parser::new();
            let mut n = 0;
            session
                .for_each_sent(&mut |_, bytes| {
                    let msg = parser.parse(bytes).unwrap();
                    if let Err(e) = validator.validate(&dict, &msg) {
                        panic!("{v:?}: {e:?} in {}", String::from_utf8_lossy(bytes));
                    }
                    n += 1;
                })
                .unwrap();
            assert_eq!(n, 7);
        }
    }
}
