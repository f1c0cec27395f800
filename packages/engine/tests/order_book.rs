//! Orders: every reject, every transition (valid and invalid), amend, cancel, simulator policy,
//! event encoding, and rebuild from a real journal.

#[path = "journal_util/mod.rs"]
mod util;

use std::collections::HashMap;
use tidewire_engine::journal::Journal;
use tidewire_engine::order_book::*;
use util::{options, TempDir};

struct Catalog(HashMap<&'static str, Instrument>);

impl InstrumentCatalog for Catalog {
    fn instrument(&self, subject: &str) -> Option<Instrument> {
        self.0.get(subject).copied()
    }
    fn entitled(&self, user: &str, subject: &str) -> bool {
        !(user == "bob" && subject == "/EQ/SECRET")
    }
}

fn catalog() -> Catalog {
    Catalog(HashMap::from([
        (
            "/FX/EURUSD",
            Instrument {
                tick_size: Some(0.0001),
                ..Instrument::default()
            },
        ),
        (
            "/EQ/VOD",
            Instrument {
                tick_size: Some(0.25),
                ..Instrument::default()
            },
        ),
        ("/EQ/SECRET", Instrument::default()),
    ]))
}

fn limits() -> OrderLimits {
    OrderLimits {
        max_quantity: 1_000_000,
        ..OrderLimits::default()
    }
}

fn req(clid: &str, quantity: f64, price: Option<f64>) -> NewOrder {
    NewOrder {
        user: "alice".into(),
        client_order_id: clid.into(),
        instrument: "/FX/EURUSD".into(),
        side: Side::Buy,
        quantity,
        price,
        time_in_force: TimeInForce::Day,
    }
}

fn rejected(book: &mut OrderBook, r: NewOrder) -> (RejectField, RejectRule) {
    let before = book.len();
    let e = book.submit(&r, &catalog(), 1).unwrap_err();
    assert_eq!(book.len(), before, "a reject changes nothing");
    assert!(!e.message.is_empty());
    (e.field, e.rule)
}

#[test]
fn every_submit_reject_names_field_and_rule() {
    let mut b = OrderBook::new(limits());
    use RejectField as F;
    use RejectRule as R;
    assert_eq!(rejected(&mut b, req("a", 0.0, None)), (F::Quantity, R::NotPositive));
    assert_eq!(rejected(&mut b, req("a", -5.0, None)), (F::Quantity, R::NotPositive));
    assert_eq!(rejected(&mut b, req("a", 1.5, None)), (F::Quantity, R::NotWhole));
    assert_eq!(rejected(&mut b, req("a", f64::NAN, None)), (F::Quantity, R::NotFinite));
    assert_eq!(
        rejected(&mut b, req("a", 1_000_001.0, None)),
        (F::Quantity, R::AboveLimit)
    );
    assert_eq!(rejected(&mut b, req("a", 10.0, Some(1.23456))), (F::Price, R::OffTick));
    assert_eq!(rejected(&mut b, req("a", 10.0, Some(0.0))), (F::Price, R::NotPositive));
    assert_eq!(
        rejected(&mut b, req("a", 10.0, Some(f64::INFINITY))),
        (F::Price, R::NotFinite)
    );
    assert_eq!(rejected(&mut b, req("", 10.0, None)), (F::ClientOrderId, R::BadLength));
    assert_eq!(
        rejected(&mut b, req(&"x".repeat(65), 10.0, None)),
        (F::ClientOrderId, R::BadLength)
    );
    assert_eq!(
        rejected(
            &mut b,
            NewOrder {
                user: String::new(),
                ..req("a", 1.0, None)
            }
        ),
        (F::User, R::BadLength)
    );
    let unknown = NewOrder {
        instrument: "/FX/NOPE".into(),
        ..req("a", 1.0, None)
    };
    assert_eq!(rejected(&mut b, unknown), (F::Instrument, R::UnknownInstrument));
    let secret = NewOrder {
        user: "bob".into(),
        instrument: "/EQ/SECRET".into(),
        ..req("a", 1.0, None)
    };
    assert_eq!(rejected(&mut b, secret), (F::Instrument, R::NotEntitled));
    // Per-instrument tick and the configured default tick.
    let vod = NewOrder {
        instrument: "/EQ/VOD".into(),
        ..req("v", 1.0, Some(100.1))
    };
    assert_eq!(rejected(&mut b, vod.clone()), (F::Price, R::OffTick));
    b.submit(
        &NewOrder {
            price: Some(100.25),
            ..vod
        },
        &catalog(),
        1,
    )
    .unwrap();
    let secret_ok = NewOrder {
        instrument: "/EQ/SECRET".into(),
        ..req("s", 1.0, Some(1.2345))
    };
    b.submit(&secret_ok, &catalog(), 1).unwrap();
    // Duplicate client order id is per user.
    b.submit(&req("dup", 1.0, Some(1.1)), &catalog(), 1).unwrap();
    assert_eq!(
        rejected(&mut b, req("dup", 1.0, Some(1.1))),
        (F::ClientOrderId, R::Duplicate)
    );
    b.submit(
        &NewOrder {
            user: "carol".into(),
            ..req("dup", 1.0, Some(1.1))
        },
        &catalog(),
        1,
    )
    .unwrap();
    assert_eq!(b.len(), 4);
    let e = b.submit(&req("a", 10.0, Some(1.23456)), &catalog(), 1).unwrap_err();
    assert_eq!(
        e.to_string(),
        "price (offTick): price 1.23456 is not a multiple of tick 0.0001 for /FX/EURUSD (nearest: 1.2345, 1.2346)"
    );
}

#[test]
fn lifecycle_new_ack_partial_filled() {
    let mut b = OrderBook::new(limits());
    let ev = b.submit(&req("o1", 100.0, Some(1.1)), &catalog(), 10).unwrap();
    assert_eq!(ev.order_id(), 1);
    assert_eq!(b.get(1).unwrap().status, OrderStatus::New);
    b.acknowledge(1, 11).unwrap();
    assert_eq!(b.get(1).unwrap().status, OrderStatus::Acknowledged);
    assert_eq!(
        b.acknowledge(1, 11).unwrap_err().rule,
        RejectRule::NotOpen,
        "second ack refused"
    );
    b.apply(&OrderEvent::Filled {
        order_id: 1,
        ts: 12,
        quantity: 40,
        price: 1.1,
    })
    .unwrap();
    let o = b.get(1).unwrap();
    assert_eq!(
        (o.status, o.filled_quantity, o.remaining()),
        (OrderStatus::PartiallyFilled, 40, 60)
    );
    b.apply(&OrderEvent::Filled {
        order_id: 1,
        ts: 13,
        quantity: 60,
        price: 1.0,
    })
    .unwrap();
    let o = b.get(1).unwrap();
    assert_eq!(
        (o.status, o.filled_quantity, o.remaining(), o.fills),
        (OrderStatus::Filled, 100, 0, 2)
    );
    assert!((o.average_price - 1.04).abs() < 1e-12);
    assert_eq!((o.version, o.created_ms, o.updated_ms), (4, 10, 13));
}

#[test]
fn invalid_transitions_are_refused_and_change_nothing() {
    let mut b = OrderBook::new(limits());
    b.submit(&req("o1", 10.0, Some(1.1)), &catalog(), 1).unwrap();
    let fill = |q| OrderEvent::Filled {
        order_id: 1,
        ts: 2,
        quantity: q,
        price: 1.1,
    };
    assert_eq!(b.apply(&fill(1)).unwrap_err().state, "new", "no fill before the ack");
    b.acknowledge(1, 2).unwrap();
    assert!(b.apply(&fill(0)).is_err(), "zero fill");
    assert!(b.apply(&fill(11)).is_err(), "overfill");
    b.apply(&fill(10)).unwrap();
    let snapshot = b.get(1).unwrap().clone();
    for ev in [
        fill(1),
        OrderEvent::Cancelled {
            order_id: 1,
            ts: 3,
            reason: CancelReason::User,
        },
        OrderEvent::Amended {
            order_id: 1,
            ts: 3,
            quantity: 20,
            price: Some(1.1),
        },
        OrderEvent::Rejected {
            order_id: 1,
            ts: 3,
            reason: "x".into(),
        },
        OrderEvent::Acknowledged { order_id: 1, ts: 3 },
    ] {
        assert_eq!(b.apply(&ev).unwrap_err().state, "filled", "{ev:?}");
    }
    assert_eq!(b.get(1).unwrap(), &snapshot);
    assert_eq!(
        b.apply(&OrderEvent::Acknowledged { order_id: 9, ts: 1 })
            .unwrap_err()
            .state,
        "missing"
    );
    assert_eq!(
        b.apply(&OrderEvent::Acknowledged { order_id: 0, ts: 1 })
            .unwrap_err()
            .state,
        "missing"
    );
    let again = OrderEvent::Accepted {
        order_id: 1,
        ts: 1,
        user: "alice".into(),
        client_order_id: "zz".into(),
        instrument: "/FX/EURUSD".into(),
        side: Side::Buy,
        quantity: 1,
        price: None,
        time_in_force: TimeInForce::Gtc,
        acknowledged: false,
        origin: None,
    };
    assert_eq!(b.apply(&again).unwrap_err().state, "exists", "order ids are gap-free");
    // Rejected only from New/Acknowledged.
    b.submit(&req("o2", 10.0, Some(1.1)), &catalog(), 1).unwrap();
    b.apply(&OrderEvent::Rejected {
        order_id: 2,
        ts: 5,
        reason: "no market".into(),
    })
    .unwrap();
    let o = b.get(2).unwrap();
    assert_eq!(
        (o.status, o.reason.as_deref()),
        (OrderStatus::Rejected, Some("no market"))
    );
}

#[test]
fn cancel_and_amend_of_open_orders() {
    let mut b = OrderBook::new(limits());
    let cat = catalog();
    b.submit(&req("o1", 100.0, Some(1.1)), &cat, 1).unwrap();
    b.acknowledge(1, 2).unwrap();
    b.apply(&OrderEvent::Filled {
        order_id: 1,
        ts: 3,
        quantity: 30,
        price: 1.1,
    })
    .unwrap();
    let am = |q: Option<f64>, p: Option<f64>| Amend { quantity: q, price: p };
    assert_eq!(
        b.amend("alice", "o1", &am(Some(30.0), None), &cat, 4).unwrap_err().rule,
        RejectRule::BelowFilled
    );
    assert_eq!(
        b.amend("alice", "o1", &am(Some(0.0), None), &cat, 4).unwrap_err().rule,
        RejectRule::NotPositive
    );
    assert_eq!(
        b.amend("alice", "o1", &am(None, Some(1.10001)), &cat, 4)
            .unwrap_err()
            .rule,
        RejectRule::OffTick
    );
    assert_eq!(
        b.amend("alice", "o1", &am(Some(100.0), Some(1.1)), &cat, 4)
            .unwrap_err()
            .rule,
        RejectRule::NoChange
    );
    assert_eq!(
        b.amend("bob", "o1", &am(Some(50.0), None), &cat, 4).unwrap_err().rule,
        RejectRule::UnknownOrder
    );
    b.amend("alice", "o1", &am(Some(50.0), Some(1.2)), &cat, 4).unwrap();
    let o = b.get(1).unwrap();
    assert_eq!(
        (o.quantity, o.price, o.status),
        (50, Some(1.2), OrderStatus::PartiallyFilled)
    );
    assert_eq!(
        b.cancel("bob", "o1", 5).unwrap_err().rule,
        RejectRule::UnknownOrder,
        "only the owner"
    );
    b.cancel("alice", "o1", 5).unwrap();
    assert_eq!(b.get(1).unwrap().status, OrderStatus::Cancelled);
    assert_eq!(b.cancel("alice", "o1", 6).unwrap_err().rule, RejectRule::NotOpen);
    assert_eq!(
        b.amend("alice", "o1", &am(Some(60.0), None), &cat, 6).unwrap_err().rule,
        RejectRule::NotOpen
    );
    // Market orders have no price to amend; New orders can be cancelled.
    b.submit(&req("m", 10.0, None), &cat, 7).unwrap();
    assert_eq!(
        b.amend("alice", "m", &am(None, Some(1.1)), &cat, 8).unwrap_err().rule,
        RejectRule::MarketOrder
    );
    b.cancel("alice", "m", 8).unwrap();
    assert_eq!(b.get(2).unwrap().reason.as_deref(), Some("user"));
}

#[test]
fn end_of_day_cancels_open_day_orders_only() {
    let mut b = OrderBook::new(limits());
    let cat = catalog();
    b.submit(&req("d", 10.0, Some(1.1)), &cat, 1).unwrap();
    b.submit(
        &NewOrder {
            time_in_force: TimeInForce::Gtc,
            ..req("g", 10.0, Some(1.1))
        },
        &cat,
        1,
    )
    .unwrap();
    b.submit(&req("done", 10.0, Some(1.1)), &cat, 1).unwrap();
    b.cancel("alice", "done", 2).unwrap();
    let evs = b.end_of_day(3);
    assert_eq!(
        evs,
        vec![OrderEvent::Cancelled {
            order_id: 1,
            ts: 3,
            reason: CancelReason::EndOfDay
        }]
    );
    assert_eq!(
        b.open_orders().map(|o| o.client_order_id.as_str()).collect::<Vec<_>>(),
        vec!["g"]
    );
}

fn acked(b: &mut OrderBook, r: NewOrder) -> u64 {
    let id = b.submit(&r, &catalog(), 1).unwrap().order_id();
    b.acknowledge(id, 1).unwrap();
    id
}

#[test]
fn simulator_fills_partial_then_full_at_the_touch() {
    let mut b = OrderBook::new(limits());
    let mut sim = ExecutionSimulator::new(SimulatorConfig {
        seed: 42,
        ..SimulatorConfig::default()
    });
    let id = acked(&mut b, req("o", 1000.0, Some(1.1)));
    let q = Quote {
        bid: Some(1.0999),
        ask: Some(1.1001),
    };
    assert!(
        b.execute(id, &q, &mut sim, 2).is_empty(),
        "limit 1.1 below ask 1.1001: waits"
    );
    let q = Quote {
        bid: Some(1.0998),
        ask: Some(1.1),
    };
    let mut kinds = Vec::new();
    for t in 0..10 {
        for ev in b.execute(id, &q, &mut sim, 3 + t) {
            if let OrderEvent::Filled { quantity, price, .. } = ev {
                assert_eq!(price, 1.1, "priced at the ask");
                kinds.push(quantity);
            }
        }
    }
    let o = b.get(id).unwrap();
    assert_eq!(o.status, OrderStatus::Filled);
    assert_eq!(kinds.len(), 3, "two partials then the rest: {kinds:?}");
    assert!(kinds[0] >= 250 && kinds[0] <= 750, "{kinds:?}");
    assert_eq!(kinds.iter().sum::<u64>(), 1000);
    // Same seed, same decisions.
    let mut b2 = OrderBook::new(limits());
    let mut sim2 = ExecutionSimulator::new(SimulatorConfig {
        seed: 42,
        ..SimulatorConfig::default()
    });
    let id2 = acked(&mut b2, req("o", 1000.0, Some(1.1)));
    let q0 = Quote {
        bid: Some(1.0999),
        ask: Some(1.1001),
    };
    assert!(b2.execute(id2, &q0, &mut sim2, 2).is_empty());
    let first = b2.execute(id2, &q, &mut sim2, 3);
    assert_eq!(
        first[0],
        OrderEvent::Filled {
            order_id: id2,
            ts: 3,
            quantity: kinds[0],
            price: 1.1
        }
    );
}

#[test]
fn simulator_sell_side_market_ioc_and_no_market() {
    let mut b = OrderBook::new(limits());
    let mut sim = ExecutionSimulator::new(SimulatorConfig::default());
    let q = Quote {
        bid: Some(1.2),
        ask: Some(1.3),
    };
    // Sell limit 1.25 above the bid waits; at 1.2 it fills at the bid.
    let s = acked(
        &mut b,
        NewOrder {
            side: Side::Sell,
            ..req("s", 10.0, Some(1.25))
        },
    );
    assert!(b.execute(s, &q, &mut sim, 2).is_empty());
    let s2 = acked(
        &mut b,
        NewOrder {
            side: Side::Sell,
            ..req("s2", 10.0, Some(1.2))
        },
    );
    assert!(matches!(b.execute(s2, &q, &mut sim, 2)[0], OrderEvent::Filled { price, .. } if price == 1.2));
    // IOC not marketable: cancelled. IOC marketable: one fill, rest cancelled.
    let i1 = acked(
        &mut b,
        NewOrder {
            time_in_force: TimeInForce::Ioc,
            ..req("i1", 10.0, Some(1.1))
        },
    );
    let evs = b.execute(i1, &q, &mut sim, 3);
    assert_eq!(
        evs,
        vec![OrderEvent::Cancelled {
            order_id: i1,
            ts: 3,
            reason: CancelReason::ImmediateOrCancel
        }]
    );
    let i2 = acked(
        &mut b,
        NewOrder {
            time_in_force: TimeInForce::Ioc,
            ..req("i2", 10.0, Some(1.3))
        },
    );
    let evs = b.execute(i2, &q, &mut sim, 3);
    assert_eq!(evs.len(), 2, "{evs:?}");
    let o = b.get(i2).unwrap();
    assert_eq!(o.status, OrderStatus::Cancelled);
    assert!(o.filled_quantity > 0 && o.filled_quantity < 10);
    // Market order with no ask: rejected; with one: fills at the ask.
    let m = acked(&mut b, req("m", 10.0, None));
    let evs = b.execute(
        m,
        &Quote {
            bid: Some(1.2),
            ask: None,
        },
        &mut sim,
        4,
    );
    assert!(matches!(&evs[0], OrderEvent::Rejected { reason, .. } if reason == "no market"));
    let m2 = acked(&mut b, req("m2", 1.0, None));
    let evs = b.execute(m2, &q, &mut sim, 4);
    assert_eq!(
        evs,
        vec![OrderEvent::Filled {
            order_id: m2,
            ts: 4,
            quantity: 1,
            price: 1.3
        }]
    );
    // New (unacknowledged) and unknown orders do not execute.
    let n = b.submit(&req("n", 10.0, None), &catalog(), 5).unwrap().order_id();
    assert!(b.execute(n, &q, &mut sim, 5).is_empty());
    assert!(b.execute(999, &q, &mut sim, 5).is_empty());
}

#[test]
fn events_round_trip_and_bad_bodies_are_typed_errors() {
    let mut evs = vec![
        OrderEvent::Accepted {
            order_id: 7,
            ts: 1_700_000_000_000,
            user: "ålice".into(),
            client_order_id: "c-1".into(),
            instrument: "/FX/EURUSD".into(),
            side: Side::Sell,
            quantity: 5,
            price: Some(1.2345),
            time_in_force: TimeInForce::Gtc,
            acknowledged: false,
            origin: None,
        },
        OrderEvent::Acknowledged { order_id: 7, ts: 2 },
        OrderEvent::Filled {
            order_id: 7,
            ts: 3,
            quantity: 2,
            price: 1.5,
        },
        OrderEvent::Amended {
            order_id: 7,
            ts: 4,
            quantity: 9,
            price: None,
        },
        OrderEvent::Cancelled {
            order_id: 7,
            ts: 5,
            reason: CancelReason::EndOfDay,
        },
        OrderEvent::Rejected {
            order_id: 7,
            ts: 6,
            reason: "no market".into(),
        },
    ];
    // The accept acknowledged by the same entry: kind 7, else the bytes of a plain accept.
    let mut both = evs[0].clone();
    if let OrderEvent::Accepted { acknowledged, .. } = &mut both {
        *acknowledged = true;
    }
    let (plain, one) = (evs[0].encode(), both.encode());
    assert_eq!((plain[1], one[1]), (1, 7));
    assert_eq!((&plain[..1], &plain[2..]), (&one[..1], &one[2..]));
    let mut split = both.clone();
    assert_eq!(
        split.split_acknowledgement(),
        Some(OrderEvent::Acknowledged {
            order_id: 7,
            ts: 1_700_000_000_000
        })
    );
    assert_eq!(split, evs[0], "left a plain accept");
    assert_eq!(split.clone().split_acknowledgement(), None);
    // With the gateway's origin: kinds 8 (plain) and 9 (acknowledged), the origin after the rest.
    for (ack, kind) in [(false, 8u8), (true, 9)] {
        let mut with = evs[0].clone();
        if let OrderEvent::Accepted {
            acknowledged, origin, ..
        } = &mut with
        {
            *acknowledged = ack;
            *origin = Some("FIX.4.4-TW-CLIENT".into());
        }
        let bytes = with.encode();
        assert_eq!(bytes[1], kind);
        assert_eq!(&bytes[2..plain.len()], &plain[2..], "kind 1's fields first");
        evs.push(with);
    }
    evs.push(both);
    for ev in &evs {
        let bytes = ev.encode();
        assert_eq!(&OrderEvent::decode(&bytes).unwrap(), ev);
        for cut in 0..bytes.len() {
            assert!(OrderEvent::decode(&bytes[..cut]).is_err(), "{ev:?} cut at {cut}");
        }
        let mut long = bytes.clone();
        long.push(0);
        assert!(OrderEvent::decode(&long).is_err());
    }
    assert!(OrderEvent::decode(&[2, 1]).unwrap_err().0.contains("version"));
    assert!(OrderEvent::decode(&[1, 99, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).is_err());
}

/// A stream message's framed events (`cluster::batch`): per event u32 length, u16 tag length,
/// tag, event; here the tag is empty and the event an accept written byte by byte (version 1,
/// `kind`, order 7, ts 1000, alice, c1, /FX/EURUSD, buy, 10, limit 1.08, DAY, then `origin` if
/// any).
fn golden_accept(kind: u8, origin: Option<&str>) -> Vec<u8> {
    let mut ev = vec![1u8, kind];
    ev.extend_from_slice(&7u64.to_le_bytes());
    ev.extend_from_slice(&1000u64.to_le_bytes());
    for s in ["alice", "c1", "/FX/EURUSD"] {
        ev.extend_from_slice(&(s.len() as u16).to_le_bytes());
        ev.extend_from_slice(s.as_bytes());
    }
    ev.push(0);
    ev.extend_from_slice(&10u64.to_le_bytes());
    ev.push(1);
    ev.extend_from_slice(&1.08f64.to_bits().to_le_bytes());
    ev.push(0);
    if let Some(o) = origin {
        ev.extend_from_slice(&(o.len() as u16).to_le_bytes());
        ev.extend_from_slice(o.as_bytes());
    }
    let mut framed = (ev.len() as u32).to_le_bytes().to_vec();
    framed.extend_from_slice(&0u16.to_le_bytes());
    framed.extend_from_slice(&ev);
    framed
}

#[test]
fn stream_accepts_with_and_without_their_gateway_origin_decode() {
    use tidewire_engine::cluster::batch::split;
    // a message of a node that journals no origin (kind 7), then one accept carrying it (kind 9)
    let origin = "b/FIX.4.4-TW-CLIENT44";
    let mut body = golden_accept(7, None);
    body.extend_from_slice(&golden_accept(9, Some(origin)));
    let events = split(&body, 2).expect("two framed events");
    let accept = |origin: Option<&str>| OrderEvent::Accepted {
        order_id: 7,
        ts: 1000,
        user: "alice".into(),
        client_order_id: "c1".into(),
        instrument: "/FX/EURUSD".into(),
        side: Side::Buy,
        quantity: 10,
        price: Some(1.08),
        time_in_force: TimeInForce::Day,
        acknowledged: true,
        origin: origin.map(str::to_owned),
    };
    for (f, o) in events.iter().zip([None, Some(origin)]) {
        assert!(f.tag.is_empty());
        let want = accept(o);
        assert_eq!(OrderEvent::decode(&f.body).expect("decodes"), want);
        assert_eq!(want.encode(), f.body, "written as the golden bytes");
        let order = Order::from_accept(&want).expect("an accept");
        assert_eq!(order.origin.as_deref(), o, "the order keeps its origin");
    }
}

#[test]
fn rebuild_from_the_journal_reaches_the_same_state() {
    let dir = TempDir::new("orders");
    let (j, _) = Journal::open(options(dir.path())).unwrap();
    let mut live = OrderBook::new(limits());
    let mut sim = ExecutionSimulator::new(SimulatorConfig {
        seed: 7,
        ..SimulatorConfig::default()
    });
    let cat = catalog();
    let q = Quote {
        bid: Some(1.0999),
        ask: Some(1.1001),
    };
    for i in 0..200u32 {
        let r = NewOrder {
            side: if i % 2 == 0 { Side::Buy } else { Side::Sell },
            time_in_force: [TimeInForce::Day, TimeInForce::Ioc, TimeInForce::Gtc][i as usize % 3],
            ..req(
                &format!("o{i}"),
                100.0 + i as f64,
                if i % 5 == 0 { None } else { Some(1.1001) },
            )
        };
        // Both journal forms, mixed: an accept and its acknowledgement as two entries, or as one.
        let mut evs = if i % 3 == 0 {
            let ev = live.submit(&r, &cat, i as u64).unwrap();
            let ack = live.acknowledge(ev.order_id(), i as u64).unwrap();
            vec![ev, ack]
        } else {
            let checked = live.check_submit(&r, &cat).unwrap();
            vec![live.accept_checked(r, checked, i as u64, true).unwrap()]
        };
        let id = evs[0].order_id();
        assert_eq!(
            live.get(id).map(|o| (o.status, o.version)),
            Some((OrderStatus::Acknowledged, 2))
        );
        for _ in 0..i % 4 {
            evs.extend(live.execute(id, &q, &mut sim, i as u64));
        }
        if i % 7 == 0 {
            evs.extend(live.cancel("alice", &format!("o{i}"), i as u64).ok());
        }
        for ev in evs {
            j.append_wait(ev.encode()).unwrap();
        }
    }
    let rebuilt = OrderBook::rebuild(limits(), j.replay_from(1).unwrap()).unwrap();
    assert_eq!(rebuilt.orders(), live.orders());
    assert!(rebuilt.orders().iter().any(|o| o.status == OrderStatus::Filled));
    assert!(rebuilt
        .orders()
        .iter()
        .any(|o| o.status == OrderStatus::PartiallyFilled));
    assert!(rebuilt.orders().iter().any(|o| o.status == OrderStatus::Cancelled));
    // A duplicate client id after rebuild is still refused.
    let mut rebuilt = rebuilt;
    assert_eq!(
        rebuilt.submit(&req("o3", 1.0, None), &cat, 9).unwrap_err().rule,
        RejectRule::Duplicate
    );
    // A non-order body in the journal is a typed rebuild error.
    j.append_wait(b"junk".to_vec()).unwrap();
    assert!(matches!(
        OrderBook::rebuild(limits(), j.replay_from(1).unwrap()),
        Err(RebuildError::Decode { .. })
    ));
    j.close().unwrap();
}
