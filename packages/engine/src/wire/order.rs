//! Order replies: `order.ack` and `order.reject`, byte-identical to packages/protocol's canonical
//! encoder (key order of `OrderAck` / `OrderReject` in messages.ts; pinned by the `order.*` golden
//! frames in packages/protocol/vectors/frames.json).

use super::encode::{write_str, write_u64};
use tidewire_protocol::messages::order_action;

/// What an `order.ack` / `order.reject` answers (`OrderAction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OrderAction {
    /// `order.submit`.
    Submit,
    /// `order.cancel`.
    Cancel,
    /// `order.amend`.
    Amend,
}

impl OrderAction {
    /// Wire name: `submit`, `cancel`, `amend`.
    pub fn as_str(self) -> &'static str {
        match self {
            OrderAction::Submit => order_action::SUBMIT,
            OrderAction::Cancel => order_action::CANCEL,
            OrderAction::Amend => order_action::AMEND,
        }
    }
}

/// `order.ack`: `{"type","reqId","action","clientOrderId","orderId","seq","status"}`. `seq` is the
/// journal seq of the entry that made the action durable; `status` the order's status after it.
pub fn order_ack(
    out: &mut Vec<u8>,
    req_id: u32,
    action: OrderAction,
    client_order_id: &str,
    order_id: u64,
    seq: u64,
    status: &str,
) {
    out.extend_from_slice(b"{\"type\":\"order.ack\",\"reqId\":");
    write_u64(out, req_id.into());
    out.extend_from_slice(b",\"action\":");
    write_str(out, action.as_str());
    out.extend_from_slice(b",\"clientOrderId\":");
    write_str(out, client_order_id);
    out.extend_from_slice(b",\"orderId\":");
    write_u64(out, order_id);
    out.extend_from_slice(b",\"seq\":");
    write_u64(out, seq);
    out.extend_from_slice(b",\"status\":");
    write_str(out, status);
    out.push(b'}');
}

/// `order.reject`: `{"type","reqId","action","clientOrderId","field","rule","message"}` (field and
/// rule are the engine's `RejectField::as_str` / `RejectRule::as_str`).
pub fn order_reject(
    out: &mut Vec<u8>,
    req_id: u32,
    action: OrderAction,
    client_order_id: &str,
    field: &str,
    rule: &str,
    message: &str,
) {
    out.extend_from_slice(b"{\"type\":\"order.reject\",\"reqId\":");
    write_u64(out, req_id.into());
    out.extend_from_slice(b",\"action\":");
    write_str(out, action.as_str());
    out.extend_from_slice(b",\"clientOrderId\":");
    write_str(out, client_order_id);
    out.extend_from_slice(b",\"field\":");
    write_str(out, field);
    out.extend_from_slice(b",\"rule\":");
    write_str(out, rule);
    out.extend_from_slice(b",\"message\":");
    write_str(out, message);
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::order_book::{OrderStatus, RejectField, RejectRule};
    use tidewire_protocol::messages::{order_reject_field, order_reject_rule, order_status};

    /// Every variant; the `match` makes a new variant a compile error here until it is listed (and
    /// added to packages/protocol/schema/protocol.json, which the assertions below check).
    fn every<T: Copy>(all: &[T], exhaustive: fn(T)) -> Vec<T> {
        all.iter().for_each(|&v| exhaustive(v));
        all.to_vec()
    }

    #[test]
    fn wire_names_are_the_protocol_schema_values() {
        let rules = every(&RejectRule::ALL, |r| match r {
            RejectRule::BadLength
            | RejectRule::Duplicate
            | RejectRule::UnknownInstrument
            | RejectRule::NotEntitled
            | RejectRule::NotPositive
            | RejectRule::NotWhole
            | RejectRule::AboveLimit
            | RejectRule::BelowLimit
            | RejectRule::OffTick
            | RejectRule::NotFinite
            | RejectRule::UnknownOrder
            | RejectRule::NotOpen
            | RejectRule::BelowFilled
            | RejectRule::MarketOrder
            | RejectRule::NoChange
            | RejectRule::Collar
            | RejectRule::MaxNotional
            | RejectRule::OpenNotional
            | RejectRule::Stale => {}
        });
        let names: Vec<&str> = rules.iter().map(|r| r.as_str()).collect();
        assert_eq!(names, order_reject_rule::ALL, "order reject rules: engine vs schema");

        let fields = every(&RejectField::ALL, |f| match f {
            RejectField::ClientOrderId
            | RejectField::User
            | RejectField::Instrument
            | RejectField::Quantity
            | RejectField::Price
            | RejectField::Order => {}
        });
        let names: Vec<&str> = fields.iter().map(|f| f.as_str()).collect();
        assert_eq!(names, order_reject_field::ALL, "order reject fields: engine vs schema");

        let statuses = every(
            &[
                OrderStatus::New,
                OrderStatus::Acknowledged,
                OrderStatus::PartiallyFilled,
                OrderStatus::Filled,
                OrderStatus::Cancelled,
                OrderStatus::Rejected,
            ],
            |s| match s {
                OrderStatus::New
                | OrderStatus::Acknowledged
                | OrderStatus::PartiallyFilled
                | OrderStatus::Filled
                | OrderStatus::Cancelled
                | OrderStatus::Rejected => {}
            },
        );
        let names: Vec<&str> = statuses.iter().map(|s| s.as_str()).collect();
        assert_eq!(names, order_status::ALL, "order statuses: engine vs schema");

        let actions = [OrderAction::Submit, OrderAction::Cancel, OrderAction::Amend].map(OrderAction::as_str);
        assert_eq!(actions.as_slice(), tidewire_protocol::messages::order_action::ALL);
    }

    #[test]
    fn ack_and_reject_follow_the_contract_key_order() {
        let mut v = Vec::new();
        order_ack(&mut v, 7, OrderAction::Submit, "c-1", 42, 117, "acknowledged");
        assert_eq!(
            String::from_utf8(v).unwrap(),
            r#"{"type":"order.ack","reqId":7,"action":"submit","clientOrderId":"c-1","orderId":42,"seq":117,"status":"acknowledged"}"#
        );
        let mut v = Vec::new();
        let msg = "quantity 5e9 is \"above\" the limit";
        order_reject(&mut v, 7, OrderAction::Amend, "c-1", "quantity", "aboveLimit", msg);
        assert_eq!(
            String::from_utf8(v).unwrap(),
            r#"{"type":"order.reject","reqId":7,"action":"amend","clientOrderId":"c-1","field":"quantity","rule":"aboveLimit","message":"quantity 5e9 is \"above\" the limit"}"#
        );
    }
}
