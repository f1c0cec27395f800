//! The FIX gateway in cluster mode: two engines (separate links) on a real 3-server NATS
//! cluster, each with a gateway of its own whose one session has the same name on both nodes. A
//! New that a node's session store lost (a crash before the store's fdatasync, after the order
//! stream held the accept) is reported on that node's session after the node restarts, and only
//! there: the accept carries its session, qualified by the node, through the order stream, also
//! when the node that took the D does not lead the orders and forwards it.

#[path = "fix_client/mod.rs"]
mod fix_client;
#[path = "journal_util/mod.rs"]
mod journal_util;
#[path = "nats_util/mod.rs"]
mod nats_util;
#[path = "orders_util/mod.rs"]
mod orders_util;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fix_client::{FixClient, Msg};
use journal_util::TempDir;
use orders_util::{orders_config, Rig};
use tidewire_engine::cluster::ClusterConfig;
use tidewire_engine::config::EngineConfig;
use tidewire_engine::fix::acceptor::{AcceptorConfig, SessionSettings};
use tidewire_engine::fix::dictionary::Dictionary;
use tidewire_engine::fix::gateway::{FixGateway, GatewayConfig, OrderPort};
use tidewire_engine::fix::session::SessionConfig;
use tidewire_engine::runtime::Engine;

/// Longest wait for anything cluster-wide (an election, a catch-up after a restart).
const CLUSTER_WAIT: Duration = Duration::from_secs(30);

fn node(nats: &nats_util::NatsCluster, name: &str) -> Rig {
    let mut cc = ClusterConfig::new(nats.urls(), name);
    cc.request_timeout = Duration::from_secs(5);
    let orders = orders_config("".as_ref());
    let engine = Engine::start_node(EngineConfig::default(), Some(orders), Some(cc)).expect("start a cluster node");
    let rig = Rig::on(engine);
    // Instruments are records of each node's own store; a bid far below the limits: orders rest.
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    rig
}

/// FIX 4.4 session CLIENT44 -> TW as alice (the same on every node), symbols under `/FX/`.
fn gateway(store: &Path, engine: &Engine) -> FixGateway {
    let sessions = vec![SessionSettings {
        config: SessionConfig::new(Dictionary::fix44(), "TW", "CLIENT44"),
        user: "alice".into(),
    }];
    let mut acceptor = AcceptorConfig::new("127.0.0.1:0".parse().expect("addr"), sessions);
    acceptor.store_dir = Some(store.to_path_buf());
    let mut cfg = GatewayConfig::new(acceptor);
    cfg.symbol_prefixes = vec!["/FX/".into()];
    cfg.attach_timeout = CLUSTER_WAIT;
    let port: Arc<dyn OrderPort> = Arc::new(engine.clone());
    FixGateway::start(cfg, port, None).expect("gateway starts")
}

fn connect(gw: &FixGateway, seq: u64) -> FixClient {
    FixClient::connect(gw.local_addr().expect("listening"), "FIX.4.4", "CLIENT44", "TW", seq)
}

/// A DAY limit buy below the market (it rests).
fn buy(cl: &str) -> String {
    format!("11={cl}|55=EURUSD|54=1|60=<NOW>|38=10|40=2|44=1.08|59=0")
}

/// Reads application messages until the ExecutionReport of `cl` arrives.
fn er(c: &mut FixClient, cl: &str) -> Msg {
    loop {
        let m = c.next_app();
        assert_eq!(m.msg_type(), "8", "unexpected {m:?}");
        if m.get(11) == Some(cl) {
            return m;
        }
    }
}

fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + CLUSTER_WAIT;
    while !cond() {
        assert!(
            Instant::now() < deadline,
            "timed out ({CLUSTER_WAIT:?}) waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Cuts the store of session FIX.4.4 TW -> CLIENT44 in `store` back to just before the record
/// of sent message `seq`, as a crash before the store's fdatasync covered it leaves it.
fn cut_store_before(store: &Path, seq: u64) {
    let file: PathBuf = store.join("FIX.4.4-TW-CLIENT44").join("messages");
    let bytes = std::fs::read(&file).expect("read the store");
    let mut at = 0;
    while at + 12 <= bytes.len() {
        let rec = u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        let len = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().expect("4 bytes")) as usize;
        if rec == seq {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(&file)
                .expect("open the store");
            f.set_len(at as u64).expect("cut the store");
            return;
        }
        at += 12 + len;
    }
    panic!("no record of MsgSeqNum {seq} in {}", file.display());
}

#[test]
fn a_new_the_nodes_store_lost_is_reported_on_that_nodes_session_after_a_restart() {
    if nats_util::skipped() {
        return;
    }
    let nats = nats_util::NatsCluster::start("fixcl");
    let dir = TempDir::new("fix-cluster-lostnew");
    let names = ["a", "b"];
    let stores: Vec<PathBuf> = names.iter().map(|n| dir.path().join(format!("fix-{n}"))).collect();
    let mut rigs: Vec<Rig> = names.iter().map(|n| node(&nats, n)).collect();
    eventually("an order leader", || {
        rigs.iter().any(|r| r.engine.stats().order_leader == 1)
    });
    let gws: Vec<FixGateway> = rigs.iter().zip(&stores).map(|(r, s)| gateway(s, &r.engine)).collect();

    // Each node's session enters one order and gets its New.
    let mut clients: Vec<FixClient> = gws.iter().map(|gw| connect(gw, 1)).collect();
    for (c, n) in clients.iter_mut().zip(names) {
        c.logon();
        c.send("D", &buy(&format!("{n}1")));
        tags(&er(c, &format!("{n}1")), &[(150, "0"), (39, "0")]);
    }
    // Then a second D each, the line dropped at once: the order stream holds the accept and the
    // session stores its New as the report of MsgSeqNum `lost[i]` (one node after the other, so
    // that each node's lost order is newer than every report the other node's store keeps).
    let mut lost = Vec::new();
    let mut next_in = Vec::new();
    for ((c, gw), n) in clients.drain(..).zip(&gws).zip(names) {
        let seq = gw.sessions()[0].next_sender_seq;
        let mut c = c;
        c.send("D", &buy(&format!("{n}2")));
        next_in.push(c.seq);
        c.drop_line();
        eventually("the second New stored", || gw.sessions()[0].next_sender_seq > seq);
        lost.push(seq);
    }
    for gw in gws {
        gw.stop();
    }
    for r in rigs.drain(..) {
        r.engine.shutdown().expect("node stops");
    }
    // The crash: each store lost its newest records, the second New among them.
    for (store, seq) in stores.iter().zip(&lost) {
        cut_store_before(store, *seq);
    }

    let rigs: Vec<Rig> = names.iter().map(|n| node(&nats, n)).collect();
    let gws: Vec<FixGateway> = rigs.iter().zip(&stores).map(|(r, s)| gateway(s, &r.engine)).collect();
    for (i, (gw, n)) in gws.iter().zip(names).enumerate() {
        // the store lost the D's MsgSeqNum too: the counterparty goes on from what it expects
        let expected = gw.sessions()[0].next_target_seq;
        assert!(expected <= next_in[i], "{expected} {}", next_in[i]);
        let mut c = connect(gw, expected);
        let logon = c.logon();
        // one report was added at start, the lost New of this node's session; the other node's
        // (a session of the same name) is not this session's
        assert_eq!(
            logon.at(34),
            (lost[i] + 1).to_string(),
            "node {n}: one report added at start: {logon:?}"
        );
        c.send("2", &format!("7={}|16=0", lost[i]));
        let new = er(&mut c, &format!("{n}2"));
        tags(
            &new,
            &[
                (43, "Y"),
                (34, &lost[i].to_string()),
                (150, "0"),
                (39, "0"),
                (38, "10"),
                (151, "10"),
            ],
        );
        assert_eq!(new.at(17), format!("{}-1", new.at(37)), "{new:?}");
        // it is the session's order from now on: a cancel naming it is answered
        c.send("F", &format!("11={n}2c|41={n}2|55=EURUSD|54=1|60=<NOW>|38=10"));
        tags(
            &er(&mut c, &format!("{n}2c")),
            &[(150, "4"), (41, &format!("{n}2")), (37, new.at(37))],
        );
    }
    for gw in gws {
        gw.stop();
    }
    for r in rigs {
        r.engine.shutdown().expect("node stops");
    }
}

fn tags(m: &Msg, want: &[(u32, &str)]) {
    for (t, v) in want {
        assert_eq!(m.get(*t), Some(*v), "tag {t} in {m:?}");
    }
}
