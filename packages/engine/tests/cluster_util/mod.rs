//! Helpers of the cluster order tests (included with `#[path]` beside `nats_util` and
//! `orders_util`, not a test target of its own): engines on a real NATS cluster, waits, and the
//! checks that every acknowledged order is in a blotter.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use serde_json::Value;
use tidewire_engine::cluster::ClusterConfig;
use tidewire_engine::config::EngineConfig;
use tidewire_engine::order_book::Side;
use tidewire_engine::runtime::Engine;

use crate::nats_util;
use crate::orders_util::{order, orders_config, Rig};

/// Longest wait for anything cluster-wide (an election, a NATS server restart, a catch-up).
pub const CLUSTER_WAIT: Duration = Duration::from_secs(30);

pub const EURUSD: &str = "/FX/EURUSD";

pub fn node(nats: &nats_util::NatsCluster, name: &str, request_timeout: Duration) -> Rig {
    node_with(nats, name, request_timeout, orders_config("".as_ref()))
}

pub fn node_with(
    nats: &nats_util::NatsCluster,
    name: &str,
    request_timeout: Duration,
    orders: tidewire_engine::config::OrdersConfig,
) -> Rig {
    let mut cc = ClusterConfig::new(nats.urls(), name);
    cc.request_timeout = request_timeout;
    let engine = Engine::start_node(EngineConfig::default(), Some(orders), Some(cc)).expect("start a cluster node");
    let rig = Rig::on(engine);
    // Instruments are records of each node's own store (record replication is not this test's).
    rig.market(EURUSD, 1.1000, 1.1002);
    rig
}

/// Waits until `cond` holds, polling every few ms, at most `within`.
pub fn eventually(within: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out ({within:?}) waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

pub fn is_leader(r: &Rig) -> bool {
    r.engine.stats().order_leader == 1
}

/// Index of the leading rig, once one leads.
pub fn leader(rigs: &[&Rig]) -> usize {
    let mut found = None;
    eventually(CLUSTER_WAIT, "an order leader", || {
        found = rigs.iter().position(|r| is_leader(r));
        found.is_some()
    });
    found.unwrap_or_default()
}

pub fn blotter(r: &Rig, user: &str) -> Vec<String> {
    r.engine
        .container_members(vec![format!("/BLOTTER/{user}")], Duration::from_secs(5))
        .expect("container members")
        .pop()
        .map(|c| c.members)
        .unwrap_or_default()
}

/// A resting buy (never crosses the 1.1002 ask), so every order stays acknowledged.
pub fn resting(cid: &str) -> tidewire_engine::runtime::OrderSubmit {
    order(cid, EURUSD, Side::Buy, 10.0, Some(1.0))
}

pub fn ack_id(m: &Value) -> u64 {
    assert_eq!(m["type"], "order.ack", "{m}");
    m["orderId"].as_u64().expect("orderId")
}

/// Submits on `rig` until one is answered `order.ack` (a new client id per try: a refused try
/// may still have been stored); returns the acked (cid, id) and every try's cid.
pub fn submit_until_acked(rig: &mut Rig, sid: u32, req: &mut u32, tag: &str) -> (String, u64) {
    submit_until_acked_or_report(rig, sid, req, tag, String::new)
}

/// `submit_until_acked`; when nothing is acked in time the failure says what `rig` last got, its
/// cluster counters (leader, provisional lease, applied seq, publish failures) and `report()`
/// (the other nodes' counters, the NATS servers' view of the streams).
pub fn submit_until_acked_or_report(
    rig: &mut Rig,
    sid: u32,
    req: &mut u32,
    tag: &str,
    report: impl Fn() -> String,
) -> (String, u64) {
    let deadline = Instant::now() + CLUSTER_WAIT;
    loop {
        *req += 1;
        let cid = format!("{tag}-{req}");
        rig.engine.order_submit(sid, *req, resting(&cid)).unwrap();
        let m = rig.wait_within(CLUSTER_WAIT, sid, "a reply", |m| m["reqId"] == *req);
        if m["type"] == "order.ack" {
            return (cid, ack_id(&m));
        }
        assert_eq!(
            m["code"], "UNAVAILABLE",
            "only UNAVAILABLE while the cluster recovers: {m}"
        );
        assert!(
            Instant::now() < deadline,
            "no order acked within {CLUSTER_WAIT:?}; the last reply: {m}\nthis node: {}\n{}",
            cluster_counters(rig),
            report()
        );
    }
}

/// A node's cluster order counters, for a failure message.
pub fn cluster_counters(r: &Rig) -> String {
    let s = r.engine.stats();
    format!(
        "leader {} lease_provisional {} stream_seq {} diverged_at {} forwarded {} publish_failures {} batches_in_flight {}",
        s.order_leader,
        s.order_lease_provisional,
        s.order_stream_seq,
        s.order_stream_diverged_at,
        s.orders_forwarded,
        s.order_publish_failures,
        s.order_batches_in_flight
    )
}

/// Every acked order is in `r`'s blotter of `user`, and the blotter holds ids 1..=n without a gap
/// or a duplicate.
pub fn check_complete(r: &Rig, user: &str, acked: &BTreeMap<String, u64>) {
    assert!(check_complete_or_diverged(r, user, acked), "{}", cluster_counters(r));
}

/// `check_complete`, unless `r` stops applying the order stream first because a NATS replica
/// delivered it another history (`cluster/chain.rs`): then false.
pub fn check_complete_or_diverged(r: &Rig, user: &str, acked: &BTreeMap<String, u64>) -> bool {
    let ids: BTreeSet<u64> = acked.values().copied().collect();
    assert_eq!(ids.len(), acked.len(), "an id acked twice: {acked:?}");
    let max = *ids.iter().max().unwrap_or(&0);
    let deadline = Instant::now() + CLUSTER_WAIT;
    eventually(CLUSTER_WAIT, "every order in the blotter", || {
        if Instant::now() + Duration::from_millis(10) > deadline {
            // The last poll: say what is missing.
            eprintln!(
                "acked {acked:?}, blotter {:?}, {:?}",
                blotter(r, user),
                r.engine.stats()
            );
        }
        if r.engine.stats().order_stream_diverged_at != 0 {
            return true;
        }
        let rows = blotter(r, user);
        let got: BTreeSet<u64> = rows.iter().filter_map(|s| s.rsplit('/').next()?.parse().ok()).collect();
        rows.len() == got.len()
            && ids.is_subset(&got)
            && got.iter().copied().eq(1..=got.len() as u64)
            && got.len() as u64 >= max
    });
    r.engine.stats().order_stream_diverged_at == 0
}
