//! A node whose applied order history is not the stream's, on a real 3-server NATS cluster.
//!
//! The history is made to differ without a NATS desync: the NATS servers are replaced by empty
//! ones under a running node and the order stream is written again with other messages up to the
//! seq the node applied. The node's next term would begin on
//! a message the stream does not hold; it must find that out itself, stop, and leave the lease
//! to a node that applied the stream as it is.

#[path = "cluster_util/mod.rs"]
mod cluster_util;
#[path = "nats_util/mod.rs"]
mod nats_util;
#[path = "orders_util/mod.rs"]
mod orders_util;

use std::collections::BTreeMap;
use std::time::Duration;

use async_nats::jetstream::{self, stream};
use bytes::Bytes;
use tidewire_engine::cluster::{ClusterConfig, Link};

#[allow(clippy::wildcard_imports)]
use cluster_util::*;

/// Writes, on a NATS system replaced by an empty one, an order stream holding `last` messages of
/// another history (the genesis marker, then messages with ids `forged:<seq>` and no events),
/// then the lease bucket, as a node creates them (`cluster/orders.rs`, `ensure`), with the lease
/// held by a node named `forger`.
fn write_another_history(nats: &nats_util::NatsCluster, last: u64) {
    let link = Link::connect(ClusterConfig::new(nats.urls(), "forger")).expect("connect");
    let js = {
        let _in_runtime = link.handle().enter();
        // one create, given time: a create retried on a meta leader still settling can leave the
        // stream without a working leader
        jetstream::ContextBuilder::new()
            .timeout(Duration::from_secs(20))
            .build(link.client().clone())
    };
    link.handle().block_on(async {
        let orders = stream::Config {
            name: "tidewire_ORDERS".into(),
            subjects: vec!["tidewire.orders.>".into()],
            num_replicas: 3,
            storage: stream::StorageType::File,
            duplicate_window: Duration::from_secs(5),
            ..Default::default()
        };
        js.create_stream(orders).await.expect("create the order stream");
    });
    // a publish before the new stream has a leader is answered "stream not found"
    let monitor = nats.monitor();
    eventually(CLUSTER_WAIT, "a leader of the order stream", || {
        monitor.stream_led("tidewire_ORDERS")
    });
    link.handle().block_on(async {
        let genesis = js
            .publish("tidewire.orders.genesis", Bytes::from_static(b"tidewire orders"))
            .await
            .expect("publish")
            .await
            .expect("stored");
        assert_eq!(genesis.sequence, 1);
        for seq in 2..=last {
            let msg = jetstream::message::PublishMessage::build()
                .payload(Bytes::from_static(b"another history"))
                .message_id(format!("forged:{seq}"))
                .expected_last_sequence(seq - 1);
            let ack = js
                .send_publish("tidewire.orders.forged", msg)
                .await
                .expect("publish")
                .await
                .expect("stored");
            assert_eq!(ack.sequence, seq);
        }
        let bucket = stream::Config {
            name: "KV_tidewire_desk".into(),
            subjects: vec!["$KV.tidewire_desk.>".into()],
            max_messages_per_subject: 1,
            max_age: Duration::from_secs(1),
            storage: stream::StorageType::File,
            num_replicas: 3,
            allow_rollup: true,
            deny_delete: true,
            allow_direct: true,
            discard: stream::DiscardPolicy::New,
            ..Default::default()
        };
        js.create_stream(bucket).await.expect("create the lease bucket");
    });
    eventually(CLUSTER_WAIT, "a leader of the lease bucket", || {
        monitor.stream_led("KV_tidewire_desk")
    });
    link.handle().block_on(async {
        // the lease held by another node for one lease time: a node that kept its term through
        // the replacement steps down, and takes the lease again (in a new term) once it expired
        js.publish("$KV.tidewire_desk.leader", Bytes::from_static(b"forger"))
            .await
            .expect("publish")
            .await
            .expect("stored");
    });
    eventually(CLUSTER_WAIT, "one leader of the order stream", || {
        monitor.stream_led("tidewire_ORDERS")
    });
}

#[test]
fn a_writer_whose_history_is_not_the_stream_s_stops_and_a_healthy_node_takes_the_orders() {
    if nats_util::skipped() {
        return;
    }
    let mut nats = nats_util::NatsCluster::start("cdiverge");
    let mut a = node(&nats, "a", Duration::from_secs(2));
    leader(&[&a]);
    let on_a = a.session("erin");
    let mut req = 0u32;
    for _ in 0..3 {
        submit_until_acked(&mut a, on_a, &mut req, "a");
    }
    // each resting order is two events (accept, acknowledgement); the second follows the ack
    eventually(CLUSTER_WAIT, "a stored both events of each order", || {
        a.engine.stats().journal_durable_seq == 6
    });
    // the blotter (the stream applied) may trail the acks
    let applied = {
        let link = a.engine.cluster().expect("cluster mode");
        let js = link.jetstream();
        link.handle().block_on(async {
            let s = js.get_stream("tidewire_ORDERS").await.expect("the order stream");
            s.cached_info().state.last_sequence
        })
    };
    eventually(CLUSTER_WAIT, "a applied the stream", || {
        a.engine.stats().order_stream_seq == applied
    });
    assert!(applied >= 2, "{}", cluster_counters(&a));

    // the NATS system is replaced under a: the stream holds another history up to `applied`
    nats.wipe();
    write_another_history(&nats, applied);
    // a steps down (the lease is another's), then, the only node, takes the lease again: it would
    // begin a term on its own message at `applied`, which the stream does not hold. (No order is
    // sent to a before: its term's next message, fenced on the seq the stream has reached and on
    // an id the stream does not hold, makes nats-server 2.14.0 and later stop the stream:
    // "critical write error: last msgid mismatch".)
    eventually(CLUSTER_WAIT, "a not leading", || a.engine.stats().order_leader == 0);
    eventually(CLUSTER_WAIT, "a leading or stopped", || {
        let s = a.engine.stats();
        s.order_leader == 1 || s.order_stream_diverged_at != 0
    });
    let mut c = node(&nats, "c", Duration::from_secs(2));
    eventually(CLUSTER_WAIT, "c applied the stream as it is", || {
        c.engine.stats().order_stream_seq == applied
    });
    let monitor = nats.monitor();
    let on_c = c.session("erin");
    let mut acked = BTreeMap::new();
    let (cid, id) = submit_until_acked_or_report(&mut c, on_c, &mut req, "c", || {
        format!("a: {}\n{}", cluster_counters(&a), monitor.streams())
    });
    acked.insert(cid, id);
    eventually(CLUSTER_WAIT, "c applied the acknowledged order or stopped", || {
        let s = c.engine.stats();
        s.order_stream_seq > applied || s.order_stream_diverged_at != 0
    });
    assert_eq!(
        c.engine.stats().order_stream_diverged_at,
        0,
        "the healthy node stopped on a message of the diverged writer: c {} / a {}",
        cluster_counters(&c),
        cluster_counters(&a)
    );
    assert!(is_leader(&c), "c {} / a {}", cluster_counters(&c), cluster_counters(&a));
    let s = a.engine.stats();
    assert_eq!(s.order_stream_diverged_at, applied, "{}", cluster_counters(&a));
    assert_eq!(s.order_leader, 0);
    // a's traders still trade: a forwards to the leader
    let (cid, id) = submit_until_acked(&mut a, on_a, &mut req, "a-after");
    acked.insert(cid, id);
    assert!(is_leader(&c) && !is_leader(&a));
    check_complete(&c, "erin", &acked);
}
