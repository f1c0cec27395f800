//! Orders in cluster mode: two engines (separate links) on a real 3-server NATS cluster. The
//! leader decides through the replicated order stream; every node applies it (same ids, same
//! blotters); a stopped leader, a killed stream leader and a lost quorum never lose or invent
//! an acknowledged order; a gateway on a node that does not lead has its orders decided by the
//! leader and reported to it through the stream.

#[path = "cluster_util/mod.rs"]
mod cluster_util;
#[path = "nats_util/mod.rs"]
mod nats_util;
#[path = "orders_util/mod.rs"]
mod orders_util;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use orders_util::{order, orders_config, Recorder, Rig, Seen};
use tidewire_engine::order_book::{Side, TimeInForce};
use tidewire_engine::order_desk::{GatewayOp, OrderInput};

#[allow(clippy::wildcard_imports)]
use cluster_util::*;

#[test]
fn orders_on_either_node_are_acked_once_and_every_node_shows_them() {
    if nats_util::skipped() {
        return;
    }
    let nats = nats_util::NatsCluster::start("corders");
    let mut a = node(&nats, "a", Duration::from_secs(5));
    let mut b = node(&nats, "b", Duration::from_secs(5));
    let l = leader(&[&a, &b]);
    let (leader_rig, follower) = if l == 0 { (&mut a, &mut b) } else { (&mut b, &mut a) };
    let on_follower = follower.session("alice");
    let on_leader = leader_rig.session("alice");
    let mut acked = BTreeMap::new();
    for i in 0..5u32 {
        follower
            .engine
            .order_submit(on_follower, i + 1, resting(&format!("f{i}")))
            .unwrap();
        let id = ack_id(&follower.reply(on_follower, i + 1));
        acked.insert(format!("f{i}"), id);
        leader_rig
            .engine
            .order_submit(on_leader, i + 1, resting(&format!("l{i}")))
            .unwrap();
        let id = ack_id(&leader_rig.reply(on_leader, i + 1));
        acked.insert(format!("l{i}"), id);
    }
    let ids: BTreeSet<u64> = acked.values().copied().collect();
    assert_eq!(ids, (1..=10).collect(), "ids are the leader's counter: {acked:?}");

    // A client order id is unique per user across nodes: the leader's book holds them all.
    follower.engine.order_submit(on_follower, 20, resting("l3")).unwrap();
    let dup = follower.reply(on_follower, 20);
    assert_eq!(dup["type"], "order.reject", "{dup}");
    leader_rig.engine.order_submit(on_leader, 20, resting("f3")).unwrap();
    assert_eq!(leader_rig.reply(on_leader, 20)["type"], "order.reject");

    // A cancel forwarded by the follower gets the same ack a single node sends.
    follower.engine.order_cancel(on_follower, 21, "l0".into()).unwrap();
    let cancel = follower.reply(on_follower, 21);
    assert_eq!(
        (
            cancel["type"].as_str(),
            cancel["status"].as_str(),
            cancel["orderId"].as_u64()
        ),
        (Some("order.ack"), Some("cancelled"), Some(acked["l0"])),
        "{cancel}"
    );

    // Both nodes serve the same blotter (the trade records of every acknowledged order).
    let want: BTreeSet<String> = ids.iter().map(|id| format!("/TRADE/alice/{id}")).collect();
    for r in [&*follower, &*leader_rig] {
        eventually(CLUSTER_WAIT, "the blotter on both nodes", || {
            blotter(r, "alice").into_iter().collect::<BTreeSet<_>>() == want
        });
    }
    assert_eq!(
        blotter(follower, "alice"),
        blotter(leader_rig, "alice"),
        "same rows, same order"
    );
    let seq = leader_rig.engine.stats().order_stream_seq;
    eventually(CLUSTER_WAIT, "the follower applied the whole stream", || {
        follower.engine.stats().order_stream_seq >= seq
    });
    assert!(follower.engine.stats().orders_forwarded >= 7);
    assert_eq!(follower.engine.stats().order_leader, 0);

    // Group commit's counters: only the leader publishes; 10 submits and a cancel are at least
    // 11 events, each message holds one or more, and none is left on its way once all answered.
    let f = follower.engine.stats();
    assert_eq!((f.order_batches, f.order_batch_events), (0, 0));
    let s = leader_rig.engine.stats();
    assert!(s.order_batch_events >= 11, "{s:?}");
    assert!(s.order_batches >= 1 && s.order_batches <= s.order_batch_events, "{s:?}");
    assert!(
        s.order_batch_bytes > s.order_batch_events * 6,
        "each event framed in 6 bytes and more: {s:?}"
    );
    assert!(
        s.order_batches_le_1 <= s.order_batches_le_256 && s.order_batches_le_256 <= s.order_batches,
        "{s:?}"
    );
    eventually(CLUSTER_WAIT, "no order stream message in flight", || {
        leader_rig.engine.stats().order_batches_in_flight == 0
    });
}

#[test]
fn a_stopped_leader_is_replaced_and_no_acked_order_is_lost() {
    if nats_util::skipped() {
        return;
    }
    let nats = nats_util::NatsCluster::start("cfail");
    let a = node(&nats, "a", Duration::from_secs(2));
    let b = node(&nats, "b", Duration::from_secs(2));
    let l = leader(&[&a, &b]);
    let (old, mut survivor) = if l == 0 { (a, b) } else { (b, a) };
    let mut old = old;
    let s_old = old.session("bob");
    let s_new = survivor.session("bob");
    let mut acked = BTreeMap::new();
    let mut req = 0u32;
    // Orders on both nodes, the leader's submitted without waiting (in flight when it stops).
    for i in 0..20u32 {
        let (cid, id) = submit_until_acked(&mut survivor, s_new, &mut req, "s");
        acked.insert(cid, id);
        old.engine
            .order_submit(s_old, 1000 + i, resting(&format!("o{i}")))
            .unwrap();
    }
    old.engine.shutdown().unwrap();
    old.pump();
    for (_, m) in &old.msgs {
        if m["type"] == "order.ack" {
            acked.insert(m["clientOrderId"].as_str().unwrap().to_owned(), ack_id(m));
        }
    }
    // The survivor takes over (lease expiry) and keeps accepting.
    for _ in 0..10 {
        let (cid, id) = submit_until_acked(&mut survivor, s_new, &mut req, "t");
        acked.insert(cid, id);
    }
    assert!(is_leader(&survivor));
    check_complete(&survivor, "bob", &acked);
}

/// Name of the NATS server leading the order stream.
fn stream_leader(r: &Rig) -> String {
    let link = r.engine.cluster().expect("cluster mode");
    let js = link.jetstream();
    link.handle().block_on(async {
        let s = js.get_stream("tidewire_ORDERS").await.expect("the order stream");
        let info = s.get_info().await.expect("stream info");
        info.cluster.and_then(|c| c.leader).expect("a stream leader")
    })
}

#[test]
fn the_stream_leader_killed_mid_flow_loses_no_acked_order() {
    if nats_util::skipped() {
        return;
    }
    let mut nats = nats_util::NatsCluster::start("cstream");
    let mut a = node(&nats, "a", Duration::from_secs(3));
    let mut b = node(&nats, "b", Duration::from_secs(3));
    leader(&[&a, &b]);
    let sa = a.session("carol");
    let sb = b.session("carol");
    let mut acked = BTreeMap::new();
    let (mut ra, mut rb) = (0u32, 10_000u32);
    for i in 0..40 {
        if i == 15 {
            let name = stream_leader(&a);
            nats.kill(nats.index_of(&name).expect("one of ours"));
        }
        let (cid, id) = submit_until_acked(&mut a, sa, &mut ra, "a");
        acked.insert(cid, id);
        let (cid, id) = submit_until_acked(&mut b, sb, &mut rb, "b");
        acked.insert(cid, id);
    }
    check_complete(&a, "carol", &acked);
    check_complete(&b, "carol", &acked);
    assert_eq!(blotter(&a, "carol"), blotter(&b, "carol"));
}

#[test]
fn without_a_quorum_orders_are_refused_and_accepted_again_after() {
    if nats_util::skipped() {
        return;
    }
    let mut nats = nats_util::NatsCluster::start("cquorum");
    let mut a = node(&nats, "a", Duration::from_secs(1));
    let mut b = node(&nats, "b", Duration::from_secs(1));
    leader(&[&a, &b]);
    let sa = a.session("dave");
    let sb = b.session("dave");
    let mut acked = BTreeMap::new();
    let mut req = 0u32;
    let (cid, id) = submit_until_acked(&mut a, sa, &mut req, "before");
    acked.insert(cid, id);

    nats.kill(1);
    nats.kill(2);
    // Whatever was in flight settles; from now on nothing may be acknowledged.
    let refused_from = req + 1;
    for _ in 0..3 {
        for (r, s) in [(&mut a, sa), (&mut b, sb)] {
            req += 1;
            r.engine.order_submit(s, req, resting(&format!("q-{req}"))).unwrap();
            let m = r.wait_within(CLUSTER_WAIT, s, "a refusal", |m| m["reqId"] == req);
            assert_eq!(
                (m["type"].as_str(), m["code"].as_str()),
                (Some("error"), Some("UNAVAILABLE")),
                "{m}"
            );
            assert!(
                m["message"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with("orders are unavailable"),
                "{m}"
            );
        }
    }
    assert!(req >= refused_from);

    nats.restart(1);
    nats.restart(2);
    nats.wait_ready(CLUSTER_WAIT);
    let monitor = nats.monitor();
    let report = |other: &Rig| format!("other node: {}\n{}", cluster_counters(other), monitor.streams());
    let (cid, id) = submit_until_acked_or_report(&mut b, sb, &mut req, "after-b", || report(&a));
    acked.insert(cid, id);
    let (cid, id) = submit_until_acked_or_report(&mut a, sa, &mut req, "after-a", || report(&b));
    acked.insert(cid, id);
    // nats-server 2.9 can leave the servers' replicas of the stream holding different messages at
    // one seq after the quorum is back (`cluster/chain.rs`); a node whose consumer delivered from
    // the replica no quorum holds stops applying the stream there, says where, and does not lead.
    // Every other node applies it all.
    let mut complete = 0;
    for r in [&a, &b] {
        if check_complete_or_diverged(r, "dave", &acked) {
            complete += 1;
        } else {
            eprintln!("a node diverged: {}", cluster_counters(r));
            eventually(CLUSTER_WAIT, "the diverged node not leading", || !is_leader(r));
        }
    }
    assert!(
        complete >= 1,
        "every node diverged: {}; {}",
        cluster_counters(&a),
        cluster_counters(&b)
    );
}

#[test]
fn the_order_leader_applies_the_risk_rules() {
    use tidewire_engine::analytics::pattern::Pattern;
    use tidewire_engine::order_book::{NotionalBasis, RiskRule, RiskRules};
    if nats_util::skipped() {
        return;
    }
    let nats = nats_util::NatsCluster::start("crisk");
    let mut cfg = orders_config("".as_ref());
    cfg.risk = RiskRules::new(vec![RiskRule {
        pattern: Pattern::parse("/FX/*").unwrap(),
        basis: NotionalBasis::Quantity,
        collar_pct: Some(1.0),
        max_notional: None,
        max_open_notional: None,
        max_quote_age_ms: None,
    }])
    .unwrap();
    let mut a = node_with(&nats, "a", Duration::from_secs(5), cfg.clone());
    let mut b = node_with(&nats, "b", Duration::from_secs(5), cfg);
    let l = leader(&[&a, &b]);
    let follower = if l == 0 { &mut b } else { &mut a };
    let sid = follower.session("alice");
    // 5% above the 1.1002 ask: through the 1% collar, refused by the leader, answered on the follower
    follower
        .engine
        .order_submit(sid, 1, order("far", EURUSD, Side::Buy, 10.0, Some(1.1552)))
        .unwrap();
    let r = follower.reply(sid, 1);
    assert_eq!(
        (r["type"].as_str(), r["rule"].as_str()),
        (Some("order.reject"), Some("collar")),
        "{r}"
    );
    follower.engine.order_submit(sid, 2, resting("near")).unwrap();
    ack_id(&follower.reply(sid, 2));
}

#[test]
fn a_gateway_on_a_node_that_does_not_lead_has_its_orders_decided_by_the_leader() {
    if nats_util::skipped() {
        return;
    }
    let nats = nats_util::NatsCluster::start("gateway");
    let mut rigs = [node(&nats, "a", CLUSTER_WAIT), node(&nats, "b", CLUSTER_WAIT)];
    let l = leader(&[&rigs[0], &rigs[1]]);
    let f = 1 - l;
    // an order of alice from the web on the leader: event seqs 1 (accepted) and 2 (acknowledged)
    let web = rigs[l].session("alice");
    rigs[l].engine.order_submit(web, 1, resting("web-1")).expect("submit");
    ack_id(&rigs[l].reply(web, 1));

    // a node started now attaches its gateway once it applied the stream as far as it reached:
    // web-1 is in the attach, and none of its events is reported again after it
    let late = node(&nats, "c", CLUSTER_WAIT);
    let seen_late = Arc::new(Seen::default());
    late.engine
        .attach_gateway(vec!["alice".into()], Arc::new(Recorder(Arc::clone(&seen_late), None)))
        .expect("attach");
    assert_eq!(seen_late.wait(1), ["attached alice:web-1"]);

    let seen = Arc::new(Seen::default());
    rigs[f]
        .engine
        .attach_gateway(vec!["alice".into()], Arc::new(Recorder(Arc::clone(&seen), None)))
        .expect("attach");
    assert_eq!(seen.wait(1), ["attached alice:web-1"]);
    let submit = |cid: &str| GatewayOp::Submit {
        order: OrderInput {
            client_order_id: cid.into(),
            instrument: EURUSD.into(),
            side: Side::Buy,
            quantity: 10.0,
            price: Some(1.0),
            time_in_force: TimeInForce::Day,
        },
        origin: None,
    };
    // forwarded to the leader; reported with the request id when the stream brings it back
    rigs[f]
        .engine
        .gateway_request("alice", 7, submit("g-1"))
        .expect("request");
    assert_eq!(
        seen.wait(3)[1..],
        [
            "durable g-1 accepted new Some(7) 3",
            "durable g-1 acknowledged acknowledged None 4"
        ]
    );
    // refused by the leader's desk: the refusal comes back to the gateway
    rigs[f]
        .engine
        .gateway_request("alice", 8, submit("g-1"))
        .expect("request");
    let cancel = GatewayOp::Cancel {
        client_order_id: "g-1".into(),
    };
    rigs[f].engine.gateway_request("alice", 9, cancel).expect("request");
    // the refusal comes back in the leader's reply, the cancel through the stream: two paths, so
    // the two requests' answers may arrive in either order
    let mut answers = seen.wait(5)[3..].to_vec();
    answers.sort();
    assert_eq!(
        answers,
        ["durable g-1 cancelled cancelled Some(9) 5", "refused 8 duplicate"]
    );
    // the late node's gateway saw g-1 as an order entered elsewhere (no request of its own)
    assert_eq!(
        seen_late.wait(4)[1..],
        [
            "durable g-1 accepted new None 3",
            "durable g-1 acknowledged acknowledged None 4",
            "durable g-1 cancelled cancelled None 5"
        ]
    );
    // and the leader's blotter of alice lists both orders
    eventually(CLUSTER_WAIT, "both orders in alice's blotter on the leader", || {
        blotter(&rigs[l], "alice").len() == 2
    });
}
