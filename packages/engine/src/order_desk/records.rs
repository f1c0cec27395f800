//! Trade records: each order is the record `/TRADE/<user>/<orderId>` (fields in the orders
//! contract), published by the engine when a transition is durable. `statusCode` orders the
//! statuses so a blotter filter can say "in progress" (`statusCode < 10`) or "done" (`>= 10`).

use super::privacy::trade_subject;
use crate::order_book::{Order, OrderEvent, OrderStatus, Side, TimeInForce};
use crate::value::Value;
use crate::wire::{FieldName, PubField, Publish};

/// `statusCode` of a status: new 1, acknowledged 2, partiallyFilled 3, filled 10, cancelled 11,
/// rejected 12 (`< 10`: in progress, `>= 10`: done).
pub fn status_code(s: OrderStatus) -> u32 {
    match s {
        OrderStatus::New => 1,
        OrderStatus::Acknowledged => 2,
        OrderStatus::PartiallyFilled => 3,
        OrderStatus::Filled => 10,
        OrderStatus::Cancelled => 11,
        OrderStatus::Rejected => 12,
    }
}

/// Wire name of a side.
pub fn side_str(s: Side) -> &'static str {
    match s {
        Side::Buy => "buy",
        Side::Sell => "sell",
    }
}

/// Wire name of a time in force.
pub fn tif_str(t: TimeInForce) -> &'static str {
    match t {
        TimeInForce::Day => "day",
        TimeInForce::Ioc => "ioc",
        TimeInForce::Gtc => "gtc",
    }
}

/// A field of a trade record: its name is a literal, so building it allocates nothing.
fn field(name: &'static str, value: Value) -> PubField {
    PubField {
        name: FieldName::from_static(name),
        typed: matches!(value, Value::Timestamp(_)),
        value: Some(value),
    }
}

fn num(n: impl Into<f64>) -> Value {
    Value::Number(n.into())
}

fn text(s: &str) -> Value {
    Value::Str(s.into())
}

/// The fields any transition can change (quantity and price by an amend, the rest by fills,
/// cancels and rejects).
fn changing(o: &Order, seq: u64, out: &mut Vec<PubField>) {
    out.push(field("quantity", num(o.quantity as f64)));
    if let Some(p) = o.price {
        out.push(field("price", num(p)));
    }
    out.push(field("status", text(o.status.as_str())));
    out.push(field("statusCode", num(status_code(o.status))));
    out.push(field("filledQuantity", num(o.filled_quantity as f64)));
    out.push(field("averagePrice", num(o.average_price)));
    let (lq, lp) = o.last_fill.unwrap_or((0, 0.0));
    out.push(field("lastFillQuantity", num(lq as f64)));
    out.push(field("lastFillPrice", num(lp)));
    out.push(field("reason", text(o.reason.as_deref().unwrap_or(""))));
    out.push(field("updated", Value::Timestamp(o.updated_ms as i64)));
    out.push(field("version", num(o.version)));
    out.push(field("seq", num(seq as f64)));
}

/// The whole trade record of `o` as an image (`seq`: journal seq of its last durable transition).
/// A market order has no `price` field (`orderType` says `market`).
pub fn image(o: &Order, seq: u64) -> Publish {
    let mut f = Vec::with_capacity(20);
    f.push(field("orderId", num(o.order_id as f64)));
    f.push(field("clientOrderId", text(&o.client_order_id)));
    f.push(field("instrument", text(&o.instrument)));
    f.push(field("side", text(side_str(o.side))));
    f.push(field(
        "orderType",
        text(if o.price.is_some() { "limit" } else { "market" }),
    ));
    f.push(field("timeInForce", text(tif_str(o.time_in_force))));
    f.push(field("created", Value::Timestamp(o.created_ms as i64)));
    changing(o, seq, &mut f);
    Publish {
        subject: trade_subject(&o.user, o.order_id),
        ts: Some(o.updated_ms as f64),
        image: true,
        fields: f,
    }
}

/// A delta of the fields transition `ev` (already applied to `o`) changed, plus `updated`,
/// `version` and `seq`: an acknowledgement writes the status, a fill the status and fill fields,
/// an amend quantity and price, a cancel or reject the status and reason. Fewer fields per update
/// is less store, view and wire work per order transition.
pub fn delta(o: &Order, seq: u64, ev: &OrderEvent) -> Publish {
    let mut f = Vec::with_capacity(9);
    let status = |f: &mut Vec<PubField>| {
        f.push(field("status", text(o.status.as_str())));
        f.push(field("statusCode", num(status_code(o.status))));
    };
    match ev {
        OrderEvent::Accepted { .. } => {
            changing(o, seq, &mut f);
            f.truncate(f.len() - 3); // updated, version, seq follow below
        }
        OrderEvent::Acknowledged { .. } => status(&mut f),
        OrderEvent::Filled { .. } => {
            status(&mut f);
            f.push(field("filledQuantity", num(o.filled_quantity as f64)));
            f.push(field("averagePrice", num(o.average_price)));
            let (lq, lp) = o.last_fill.unwrap_or((0, 0.0));
            f.push(field("lastFillQuantity", num(lq as f64)));
            f.push(field("lastFillPrice", num(lp)));
        }
        OrderEvent::Amended { .. } => {
            f.push(field("quantity", num(o.quantity as f64)));
            if let Some(p) = o.price {
                f.push(field("price", num(p)));
            }
        }
        OrderEvent::Cancelled { .. } | OrderEvent::Rejected { .. } => {
            status(&mut f);
            f.push(field("reason", text(o.reason.as_deref().unwrap_or(""))));
        }
    }
    f.push(field("updated", Value::Timestamp(o.updated_ms as i64)));
    f.push(field("version", num(o.version)));
    f.push(field("seq", num(seq as f64)));
    Publish {
        subject: trade_subject(&o.user, o.order_id),
        ts: Some(o.updated_ms as f64),
        image: false,
        fields: f,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_carry_the_contract_fields() {
        let o = Order {
            order_id: 3,
            user: "u".into(),
            client_order_id: "c".into(),
            instrument: "/FX/EURUSD".into(),
            side: Side::Sell,
            quantity: 10,
            price: None,
            time_in_force: TimeInForce::Ioc,
            status: OrderStatus::PartiallyFilled,
            filled_quantity: 4,
            average_price: 1.5,
            fills: 1,
            last_fill: Some((4, 1.5)),
            reason: None,
            created_ms: 1000,
            updated_ms: 2000,
            version: 3,
            origin: None,
        };
        let p = image(&o, 9);
        assert_eq!(p.subject, "/TRADE/u/3");
        assert!(p.image);
        let names: Vec<&str> = p.fields.iter().map(|f| f.name.as_str()).collect();
        assert!(!names.contains(&"price"), "market orders have no price");
        let get = |n: &str| p.fields.iter().find(|f| f.name == n).and_then(|f| f.value.clone());
        assert_eq!(get("orderType"), Some(Value::Str("market".into())));
        assert_eq!(get("statusCode"), Some(Value::Number(3.0)));
        assert_eq!(get("status"), Some(Value::Str("partiallyFilled".into())));
        assert_eq!(get("seq"), Some(Value::Number(9.0)));
        assert_eq!(get("created"), Some(Value::Timestamp(1000)));
        assert_eq!(get("reason"), Some(Value::Str("".into())));
        let names = |p: &Publish| p.fields.iter().map(|f| f.name.clone()).collect::<Vec<_>>();
        let fill = OrderEvent::Filled {
            order_id: 3,
            ts: 2000,
            quantity: 4,
            price: 1.5,
        };
        let d = delta(&o, 10, &fill);
        assert!(!d.image);
        assert_eq!(
            names(&d),
            [
                "status",
                "statusCode",
                "filledQuantity",
                "averagePrice",
                "lastFillQuantity",
                "lastFillPrice",
                "updated",
                "version",
                "seq"
            ]
        );
        let amend = OrderEvent::Amended {
            order_id: 3,
            ts: 2000,
            quantity: 10,
            price: None,
        };
        assert_eq!(names(&delta(&o, 11, &amend)), ["quantity", "updated", "version", "seq"]);
        let cancel = OrderEvent::Cancelled {
            order_id: 3,
            ts: 2000,
            reason: crate::order_book::CancelReason::EndOfDay,
        };
        assert_eq!(
            names(&delta(&o, 12, &cancel)),
            ["status", "statusCode", "reason", "updated", "version", "seq"]
        );
        // Every delta field is in the image with the same value.
        let img = image(&o, 12);
        for ev in [&fill, &amend, &cancel] {
            for f in delta(&o, 12, ev).fields {
                assert!(img.fields.contains(&f), "{} differs from the image", f.name);
            }
        }
        assert_eq!(status_code(OrderStatus::Filled), 10);
    }
}
