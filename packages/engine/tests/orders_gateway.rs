//! The desk's gateway interface (`orders::gateway`): requests on behalf of a user with a gateway
//! request id; refusals, durable events (with the request they answer) and the attach snapshot
//! go to the attached sink, for the gateway's users only.

#[path = "journal_util/mod.rs"]
mod journal_util;
#[path = "orders_util/mod.rs"]
mod orders_util;

use std::sync::Arc;

use journal_util::TempDir;
use orders_util::{order, orders_config, Recorder, Rig, Seen};
use tidewire_engine::order_book::{Side, TimeInForce};
use tidewire_engine::order_desk::{GatewayOp, OrderInput};

fn submit(cid: &str, price: f64) -> GatewayOp {
    GatewayOp::Submit {
        order: OrderInput {
            client_order_id: cid.into(),
            instrument: "/FX/EURUSD".into(),
            side: Side::Buy,
            quantity: 10.0,
            price: Some(price),
            time_in_force: TimeInForce::Day,
        },
        origin: None,
    }
}

#[test]
fn a_gateway_gets_its_users_orders_refusals_and_durable_events() {
    let dir = TempDir::new("orders-gateway");
    let mut rig = Rig::start(orders_config(dir.path()));
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    // an order of alice from the web before the gateway attaches, and one of carol
    let a = rig.session("alice");
    let c = rig.session("carol");
    rig.engine
        .order_submit(a, 1, order("web-1", "/FX/EURUSD", Side::Buy, 5.0, Some(1.0)))
        .unwrap();
    rig.engine
        .order_submit(c, 1, order("c-1", "/FX/EURUSD", Side::Buy, 5.0, Some(1.0)))
        .unwrap();
    rig.reply(a, 1);
    rig.reply(c, 1);
    rig.until("both acknowledged (seq 2)", |e| e.stats().journal_durable_seq >= 2);
    let seen = Arc::new(Seen::default());
    let appended = Arc::new(Seen::default());
    let recorder = Recorder(Arc::clone(&seen), Some(Arc::clone(&appended)));
    rig.engine
        .attach_gateway(vec!["alice".into()], Arc::new(recorder))
        .unwrap();
    assert_eq!(seen.wait(1)[0], "attached alice:web-1");

    rig.engine.gateway_request("alice", 7, submit("g-1", 1.0)).unwrap();
    let lines = seen.wait(3);
    // one journal entry accepts and acknowledges: reported as the two transitions, at its seq
    assert_eq!(lines[1], "durable g-1 accepted new Some(7) 3");
    assert_eq!(lines[2], "durable g-1 acknowledged acknowledged None 3");

    // refused at once, nothing journaled: a duplicate client id, a cancel of an unknown order
    rig.engine.gateway_request("alice", 8, submit("g-1", 1.0)).unwrap();
    let cancel = |id: &str| GatewayOp::Cancel {
        client_order_id: id.into(),
    };
    rig.engine.gateway_request("alice", 9, cancel("nope")).unwrap();
    let lines = seen.wait(5);
    assert_eq!(lines[3..], ["refused 8 duplicate", "refused 9 unknownOrder"]);

    // an amend and a cancel answer their requests once durable; carol's cancel is not reported
    let amend = GatewayOp::Amend {
        client_order_id: "g-1".into(),
        quantity: Some(8.0),
        price: None,
    };
    rig.engine.gateway_request("alice", 10, amend).unwrap();
    rig.engine.order_cancel(c, 2, "c-1".into()).unwrap();
    rig.reply(c, 2);
    rig.engine.gateway_request("alice", 11, cancel("g-1")).unwrap();
    let lines = seen.wait(7);
    assert_eq!(
        lines[5..],
        [
            "durable g-1 amended acknowledged Some(10) 4",
            "durable g-1 cancelled cancelled Some(11) 6"
        ]
    );
    // the same user's web orders are reported too (the gateway decides what it shows)
    rig.engine.order_cancel(a, 2, "web-1".into()).unwrap();
    rig.reply(a, 2);
    assert_eq!(seen.wait(8)[7], "durable web-1 cancelled cancelled None 7");
    // each event was announced with its seq when appended (an order accepted after the attach:
    // before it was durable; web-1, older than the attach: when durable); an acknowledged
    // accept as the plain accept, with the order as the accept left it
    assert_eq!(
        appended.wait(4),
        [
            "appended g-1 accepted new Some(7) 3",
            "appended g-1 amended acknowledged Some(10) 4",
            "appended g-1 cancelled cancelled Some(11) 6",
            "appended web-1 cancelled cancelled None 7"
        ]
    );
    rig.engine.shutdown().unwrap();
}
