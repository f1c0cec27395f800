//! Record replication between engines on a real 3-server NATS cluster on 127.0.0.1: seqs equal
//! on every node, late subscribers and late nodes get current images, views on a node equal a
//! single node's, a NATS outage is healed without a seq gap, and local sources keep flowing
//! while NATS is down.

#[path = "nats_util/mod.rs"]
mod nats_util;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value as J};
use tidewire_engine::cluster::records::RecordsConfig;
use tidewire_engine::cluster::{ClusterConfig, Link};
use tidewire_engine::config::{BatchingConfig, EngineConfig};
use tidewire_engine::hub::ContainerOp;
use tidewire_engine::runtime::{ClusterStart, Engine, Waker};
use tidewire_engine::ErrorCode;

const WAIT: Duration = Duration::from_secs(60);

struct NoWake;
impl Waker for NoWake {
    fn wake(&self) {}
}

fn config() -> EngineConfig {
    EngineConfig {
        // Flush at once: the tests read every message.
        batching: BatchingConfig {
            burst_min: Duration::ZERO,
            burst_max: Duration::ZERO,
            burst_increment: Duration::ZERO,
            throttle: Duration::ZERO,
        },
        ..EngineConfig::default()
    }
}

fn records_config() -> RecordsConfig {
    RecordsConfig {
        heartbeat: Duration::from_millis(200),
        owner_timeout: Duration::from_secs(1),
        ..RecordsConfig::default()
    }
}

/// One engine in cluster mode, with one worker whose frames the test reads.
struct Node {
    engine: Engine,
    worker: u32,
    /// Messages received, by session.
    got: HashMap<u32, Vec<J>>,
}

impl Node {
    fn start(urls: &[String], cluster: &str, node: &str, records: RecordsConfig) -> Node {
        let mut cc = ClusterConfig::new(urls.to_vec(), node);
        cc.name = cluster.into();
        let link = Arc::new(Link::connect(cc).expect("connect to NATS"));
        let engine = Engine::start_with_cluster(config(), None, Some(ClusterStart { link, records })).expect("start");
        let worker = engine.register_worker(Box::new(NoWake)).expect("worker");
        Node {
            engine,
            worker,
            got: HashMap::new(),
        }
    }

    fn single() -> Node {
        let engine = Engine::start(config()).expect("start");
        let worker = engine.register_worker(Box::new(NoWake)).expect("worker");
        Node {
            engine,
            worker,
            got: HashMap::new(),
        }
    }

    fn session(&mut self) -> u32 {
        let sid = self.engine.open_session(self.worker, "u", "").expect("session");
        self.got.insert(sid, Vec::new());
        sid
    }

    fn pump(&mut self) -> bool {
        let Some(d) = self.engine.drain(self.worker).expect("drain") else {
            return false;
        };
        for e in d.index.chunks(4) {
            let (sid, off, len) = (e[0], e[1] as usize, e[2] as usize);
            let frame: J = serde_json::from_slice(&d.data[off..off + len]).expect("a JSON frame");
            let list = self.got.entry(sid).or_default();
            match frame {
                J::Array(items) => list.extend(items),
                other => list.push(other),
            }
        }
        true
    }

    /// Reads frames until `done` holds for session `sid`'s messages (at most `WAIT`).
    fn wait(&mut self, sid: u32, what: &str, done: impl Fn(&[J]) -> bool) {
        let deadline = Instant::now() + WAIT;
        loop {
            if done(&self.got[&sid]) {
                return;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            if !self.pump() {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }

    fn publish(&self, subject: &str, image: bool, fields: J, ts: u64) {
        let f = json!([{"type": "record.publish", "subject": subject, "image": image, "ts": ts, "fields": fields}]);
        self.engine.ingest(f.to_string().as_bytes()).expect("ingest");
    }

    fn barrier(&self) {
        self.engine.ingest_barrier(WAIT).expect("barrier");
    }
}

/// Waits until every node hears every other one: each one's messages reach the others (NATS
/// spreads a subscription's interest to the other servers asynchronously).
fn wait_peers(nodes: &[&Node]) {
    let deadline = Instant::now() + WAIT;
    let want = nodes.len() as u64 - 1;
    while nodes.iter().any(|n| n.engine.stats().cluster_peers < want) {
        assert!(Instant::now() < deadline, "the nodes never heard each other");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Record messages of `subject` (by subject on images, then by id on updates), checked to have
/// no seq gap: every update is the previous seq + 1; an image may jump. Returns (last seq, last
/// fields merged, images seen).
fn follow(msgs: &[J], subject: &str) -> (u64, serde_json::Map<String, J>, usize) {
    let mut id = None;
    let mut seq = 0u64;
    let mut fields = serde_json::Map::new();
    let mut images = 0;
    for m in msgs {
        match m["type"].as_str() {
            Some("record.image") if m["subject"] == subject => {
                id = m["id"].as_u64();
                seq = m["seq"].as_u64().expect("seq");
                fields = m["fields"].as_object().expect("fields").clone();
                images += 1;
            }
            Some("record.update") if id.is_some() && m["id"].as_u64() == id => {
                let s = m["seq"].as_u64().expect("seq");
                assert_eq!(s, seq + 1, "seq gap on {subject}: {seq} then {s}");
                seq = s;
                for (k, v) in m["fields"].as_object().expect("fields") {
                    fields.insert(k.clone(), v.clone());
                }
            }
            _ => {}
        }
    }
    (seq, fields, images)
}

fn last_seq(msgs: &[J], subject: &str) -> u64 {
    follow(msgs, subject).0
}

#[test]
fn a_publish_on_a_reaches_a_subscriber_on_b_with_the_same_seqs() {
    if nats_util::skipped() {
        return;
    }
    let nats = nats_util::NatsCluster::start("rec-flow");
    let mut a = Node::start(&nats.urls(), "flow", "a", records_config());
    let mut b = Node::start(&nats.urls(), "flow", "b", records_config());
    wait_peers(&[&a, &b]);
    let sa = a.session();
    let sb = b.session();
    a.engine.subscribe(sa, 1, vec!["/FX/EURUSD".into()]).unwrap();
    b.engine.subscribe(sb, 1, vec!["/FX/EURUSD".into()]).unwrap();
    b.wait(sb, "the pending ack", |m| {
        m.iter().any(|x| x["type"] == "record.subscribed")
    });
    a.publish(
        "/FX/EURUSD",
        true,
        json!({"bid": 1.0, "ask": 1.1, "name": "EUR/USD"}),
        1_000,
    );
    for i in 1..300u64 {
        a.publish("/FX/EURUSD", false, json!({"bid": 1.0 + i as f64 / 1e4}), 1_000 + i);
        if i % 7 == 0 {
            a.barrier(); // several passes, so several batches
        }
    }
    a.wait(sa, "300 updates on A", |m| last_seq(m, "/FX/EURUSD") == 300);
    b.wait(sb, "300 updates on B", |m| last_seq(m, "/FX/EURUSD") == 300);
    let (_, fa, images_a) = follow(&a.got[&sa], "/FX/EURUSD");
    let (_, fb, images_b) = follow(&b.got[&sb], "/FX/EURUSD");
    assert_eq!(fa, fb);
    assert_eq!((images_a, images_b), (1, 1), "one image, then every update");
    // Same seqs and ts, message by message.
    let seqs = |msgs: &[J]| -> Vec<(u64, f64)> {
        msgs.iter()
            .filter(|m| m["type"] == "record.image" || m["type"] == "record.update")
            .map(|m| (m["seq"].as_u64().unwrap(), m["ts"].as_f64().unwrap()))
            .collect()
    };
    assert_eq!(seqs(&a.got[&sa]), seqs(&b.got[&sb]));
    let ca = a.engine.stats();
    let cb = b.engine.stats();
    assert!(ca.cluster_batches_sent >= 2 && ca.cluster_records_sent == 300, "{ca:?}");
    assert_eq!(cb.cluster_records_received, 300, "{cb:?}");
    assert!(cb.cluster_bytes_received > 0 && ca.cluster_bytes_sent > 0);
    assert_eq!(cb.cluster_gaps, 0, "{cb:?}");

    // A subject A owns is refused to B's sources while A is alive.
    let frame = json!([{"type": "record.publish", "subject": "/FX/EURUSD", "fields": {"bid": 9}}]).to_string();
    let e = b.engine.ingest(frame.as_bytes()).expect_err("A owns /FX/EURUSD");
    assert_eq!(e.code(), ErrorCode::NotEntitled);
    assert!(e.to_string().contains("cluster node 'a'"), "{e}");
}

#[test]
fn late_subscribers_and_late_nodes_get_the_current_image() {
    if nats_util::skipped() {
        return;
    }
    let nats = nats_util::NatsCluster::start("rec-late");
    let a = Node::start(&nats.urls(), "late", "a", records_config());
    let mut b = Node::start(&nats.urls(), "late", "b", records_config());
    wait_peers(&[&a, &b]);
    a.publish("/EQ/VOD", true, json!({"last": 0, "venue": "LSE"}), 1);
    for i in 1..1000u64 {
        a.publish("/EQ/VOD", false, json!({"last": i}), 1 + i);
    }
    a.barrier();
    let deadline = Instant::now() + WAIT;
    while b.engine.stats().cluster_records_received < 1000 {
        assert!(Instant::now() < deadline, "B never received the 1,000 updates");
        std::thread::sleep(Duration::from_millis(5));
    }
    let sb = b.session();
    b.engine.subscribe(sb, 1, vec!["/EQ/VOD".into()]).unwrap();
    b.wait(sb, "the image on B", |m| m.iter().any(|x| x["type"] == "record.image"));
    let image = b.got[&sb].iter().find(|x| x["type"] == "record.image").unwrap().clone();
    assert_eq!(image["seq"], 1000);
    assert_eq!(image["fields"], json!({"last": 999, "venue": "LSE"}));

    // A node started after all of it gets A's records from a snapshot.
    let mut c = Node::start(&nats.urls(), "late", "c", records_config());
    let sc = c.session();
    c.engine.subscribe(sc, 1, vec!["/EQ/VOD".into()]).unwrap();
    c.wait(sc, "the image on C", |m| last_seq(m, "/EQ/VOD") == 1000);
    let (_, fields, _) = follow(&c.got[&sc], "/EQ/VOD");
    assert_eq!(J::Object(fields), json!({"last": 999, "venue": "LSE"}));
    // And then every update.
    a.publish("/EQ/VOD", false, json!({"last": 1000}), 2000);
    c.wait(sc, "seq 1001 on C", |m| last_seq(m, "/EQ/VOD") == 1001);
    assert!(c.engine.stats().cluster_image_requests_sent >= 1);
    assert!(a.engine.stats().cluster_image_requests_answered >= 1);
    drop(b);
}

/// Feeds a container and its records: adds, inserts, removes, updates.
fn feed(n: &Node) {
    let c = "/LIST/ALL".to_string();
    for i in 0..40u64 {
        n.publish(
            &format!("/I/{i}"),
            true,
            json!({"px": (i * 37) % 100, "name": format!("i{i}")}),
            10 + i,
        );
    }
    let subs = |r: std::ops::Range<u64>| r.map(|i| format!("/I/{i}")).collect::<Vec<_>>();
    n.engine
        .container_publish(c.clone(), vec![ContainerOp::Add(subs(0..30))])
        .unwrap();
    n.engine
        .container_publish(c.clone(), vec![ContainerOp::InsertAt(3, subs(30..40))])
        .unwrap();
    n.engine
        .container_publish(c.clone(), vec![ContainerOp::Remove(subs(5..9))])
        .unwrap();
    for i in 0..40u64 {
        n.publish(&format!("/I/{i}"), false, json!({"px": (i * 53) % 100}), 100 + i);
    }
    n.barrier();
}

/// A view's `view.created` rows without the node-local record ids.
fn view_rows(n: &mut Node, sid: u32, req: u32) -> (u64, Vec<J>) {
    n.engine
        .view_create(
            sid,
            req,
            "/LIST/ALL".into(),
            "px >= 20".into(),
            "px desc, name asc".into(),
            0,
            50,
        )
        .unwrap();
    n.wait(sid, "view.created", |m| {
        m.iter().any(|x| x["type"] == "view.created" && x["reqId"] == req)
    });
    let created = n.got[&sid]
        .iter()
        .find(|x| x["type"] == "view.created" && x["reqId"] == req)
        .unwrap()
        .clone();
    let rows = created["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.as_object_mut().unwrap().remove("id");
            r
        })
        .collect();
    (created["count"].as_u64().unwrap(), rows)
}

#[test]
fn a_view_on_b_over_a_container_fed_on_a_equals_a_single_nodes() {
    if nats_util::skipped() {
        return;
    }
    let nats = nats_util::NatsCluster::start("rec-view");
    let a = Node::start(&nats.urls(), "view", "a", records_config());
    let mut b = Node::start(&nats.urls(), "view", "b", records_config());
    wait_peers(&[&a, &b]);
    let mut single = Node::single();
    feed(&a);
    feed(&single);
    // A later barrier: the pass that applied the feed has ended and sent its batch.
    a.barrier();
    let total = a.engine.stats().cluster_records_sent;
    let deadline = Instant::now() + WAIT;
    while b.engine.stats().cluster_records_received < total {
        assert!(Instant::now() < deadline, "B never caught up");
        std::thread::sleep(Duration::from_millis(5));
    }
    let sb = b.session();
    let ss = single.session();
    let (count_b, rows_b) = view_rows(&mut b, sb, 7);
    let (count_s, rows_s) = view_rows(&mut single, ss, 7);
    assert!(count_s > 10, "the filter keeps most rows: {count_s}");
    assert_eq!(count_b, count_s);
    assert_eq!(rows_b, rows_s);
    let members = |n: &Node| n.engine.container_members(vec!["/LIST/ALL".into()], WAIT).unwrap();
    assert_eq!(members(&b), members(&single));
}

#[test]
fn a_nats_outage_heals_with_an_image_and_local_sources_keep_flowing() {
    if nats_util::skipped() {
        return;
    }
    let mut nats = nats_util::NatsCluster::start("rec-outage");
    let small_queue = RecordsConfig {
        // Batches beyond this while NATS is away are dropped: the outage leaves a gap to heal.
        max_queued_bytes: 4096,
        ..records_config()
    };
    let mut a = Node::start(&nats.urls(), "outage", "a", small_queue);
    let mut b = Node::start(&nats.urls(), "outage", "b", small_queue);
    wait_peers(&[&a, &b]);
    let sa = a.session();
    let sb = b.session();
    a.engine.subscribe(sa, 1, vec!["/A/X".into(), "/B/Y".into()]).unwrap();
    b.engine.subscribe(sb, 1, vec!["/A/X".into(), "/B/Y".into()]).unwrap();
    a.publish("/A/X", true, json!({"n": 0}), 1);
    b.publish("/B/Y", true, json!({"n": 0}), 1);
    a.wait(sa, "/B/Y on A", |m| last_seq(m, "/B/Y") == 1);
    b.wait(sb, "/A/X on B", |m| last_seq(m, "/A/X") == 1);

    for i in 0..3 {
        nats.kill(i);
    }
    // NATS is down: each node's own sources still reach its own subscribers, in order. One
    // pass per publish (the barrier), so far more batches than the client buffers.
    for i in 1..=3000u64 {
        a.publish("/A/X", false, json!({"n": i}), 1 + i);
        b.publish("/B/Y", false, json!({"n": i}), 1 + i);
        a.barrier();
        b.barrier();
    }
    a.wait(sa, "local /A/X during the outage", |m| last_seq(m, "/A/X") == 3001);
    b.wait(sb, "local /B/Y during the outage", |m| last_seq(m, "/B/Y") == 3001);
    assert!(a.engine.stats().cluster_batches_dropped > 0);

    for i in 0..3 {
        nats.restart(i);
    }
    nats.wait_ready(WAIT);
    // Flow resumes; the gap is healed with an image, never seen as a gap by subscribers
    // (`follow` asserts every update continues the previous seq).
    a.publish("/A/X", false, json!({"n": "after"}), 5000);
    b.publish("/B/Y", false, json!({"n": "after"}), 5000);
    b.wait(sb, "/A/X healed on B", |m| last_seq(m, "/A/X") == 3002);
    a.wait(sa, "/B/Y healed on A", |m| last_seq(m, "/B/Y") == 3002);
    let (_, fx, images_x) = follow(&b.got[&sb], "/A/X");
    let (_, fy, images_y) = follow(&a.got[&sa], "/B/Y");
    assert_eq!(J::Object(fx), json!({"n": "after"}));
    assert_eq!(J::Object(fy), json!({"n": "after"}));
    assert!(images_x >= 2 && images_y >= 2, "a fresh image healed the gap");
    assert!(b.engine.stats().cluster_gaps >= 1);
    assert!(a.engine.stats().cluster_gaps >= 1);
}
