//! The journal writer's side of an order's completion (`complete`): a durable request's
//! completion is posted with its `order.ack`; a failed append, or an event answering no request,
//! is posted without one.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::{complete, Ack, CompletionSink, OrderCmd, OrdersShared, PendingReply, Post};
use crate::journal::JournalError;
use crate::order_book::{OrderEvent, OrderStatus};
use crate::wire::order::OrderAction;

/// One post: the completion's result and its ack as (worker, sid, frame text).
type Posted = (Result<u64, String>, Option<(u32, u32, String)>);

#[derive(Default)]
struct Recorder(Mutex<Vec<Posted>>);

impl CompletionSink for Recorder {
    fn post(&self, cmd: OrderCmd, ack: Option<Ack<'_>>) {
        let OrderCmd::Journaled(j) = cmd else {
            panic!("not a completion: {cmd:?}")
        };
        let ack = ack.map(|a| (a.worker, a.sid, String::from_utf8(a.frame.to_vec()).unwrap()));
        self.0.lock().unwrap().push((j.result.map_err(|e| e.to_string()), ack));
    }
    fn group_done(&self, _durable: &dyn Fn(u64)) {}
}

fn recorder() -> (Arc<Recorder>, Post) {
    let r = Arc::new(Recorder::default());
    (Arc::clone(&r), r)
}

fn reply(action: OrderAction, status: OrderStatus) -> PendingReply {
    PendingReply {
        sid: 9,
        worker: 2,
        req_id: 7,
        action,
        client_order_id: "c-1".into(),
        status,
        accepted_at: Instant::now(),
        remote: None,
    }
}

#[test]
fn a_durable_request_is_posted_with_its_ack_frame() {
    let (seen, post) = recorder();
    let shared = OrdersShared::default();
    let ev = OrderEvent::Acknowledged { order_id: 42, ts: 1 };
    let r = reply(OrderAction::Cancel, OrderStatus::Cancelled);
    complete(&post, &shared, Ok(117), ev, Some(r), None);
    let frame = r#"[{"type":"order.ack","reqId":7,"action":"cancel","clientOrderId":"c-1","orderId":42,"seq":117,"status":"cancelled"}]"#;
    assert_eq!(*seen.0.lock().unwrap(), [(Ok(117), Some((2, 9, frame.to_owned())))]);
    assert_eq!(shared.take_ack_latencies().len(), 1, "the ack's latency is recorded");
    assert_eq!(
        shared.stats().journal_durable_seq,
        0,
        "the sink counts the durable seq at the group's end"
    );
}

#[test]
fn a_failed_append_or_an_event_answering_no_request_is_posted_without_an_ack() {
    let (seen, post) = recorder();
    let shared = OrdersShared::default();
    let failed = JournalError::Failed {
        message: "disk gone".into(),
    };
    let ev = || OrderEvent::Acknowledged { order_id: 42, ts: 1 };
    let r = reply(OrderAction::Submit, OrderStatus::Acknowledged);
    complete(&post, &shared, Err(failed.clone()), ev(), Some(r), None);
    complete(&post, &shared, Ok(5), ev(), None, None);
    assert_eq!(
        *seen.0.lock().unwrap(),
        [(Err(failed.to_string()), None), (Ok(5), None)]
    );
    assert!(shared.take_ack_latencies().is_empty());
}
