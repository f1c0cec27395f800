//! The FIX gateway against the real order desk (engine with a journal on disk): D / F / G in,
//! ExecutionReports and OrderCancelRejects out, per FIX version; the ER of an accepted order only
//! after its journal entry is synced; FIX orders in the user's web blotter; fills while the
//! counterparty is away arrive by resend; the chain of ClOrdIDs survives a restart; a gateway that
//! was down while the desk traded reports what it missed.

#[path = "fix_client/mod.rs"]
mod fix_client;
#[path = "journal_util/mod.rs"]
mod journal_util;
#[path = "orders_util/mod.rs"]
mod orders_util;

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use fix_client::{FixClient, Msg};
use journal_util::TempDir;
use orders_util::{orders_config, Rig};
use tidewire_engine::config::OrdersConfig;
use tidewire_engine::fix::acceptor::{AcceptorConfig, SessionSettings, SessionState};
use tidewire_engine::fix::dictionary::Dictionary;
use tidewire_engine::fix::gateway::{FixGateway, GatewayConfig, OrderPort, PreTradeCheck};
use tidewire_engine::fix::session::SessionConfig;

/// FIX 4.4 session CLIENT44 -> TW as alice, FIX 4.2 session CLIENT42 -> TW as bob; symbols
/// without a `/` are under `/FX/`.
fn gateway(
    store: &Path,
    engine: &tidewire_engine::runtime::Engine,
    check: Option<Arc<dyn PreTradeCheck>>,
) -> FixGateway {
    let sessions = vec![
        SessionSettings {
            config: SessionConfig::new(Dictionary::fix44(), "TW", "CLIENT44"),
            user: "alice".into(),
        },
        SessionSettings {
            config: SessionConfig::new(Dictionary::fix42(), "TW", "CLIENT42"),
            user: "bob".into(),
        },
    ];
    let mut acceptor = AcceptorConfig::new("127.0.0.1:0".parse().expect("addr"), sessions);
    acceptor.store_dir = Some(store.to_path_buf());
    let mut cfg = GatewayConfig::new(acceptor);
    cfg.symbol_prefixes = vec!["/FX/".into(), "/FX/".into()];
    let port: Arc<dyn OrderPort> = Arc::new(engine.clone());
    FixGateway::start(cfg, port, check).expect("gateway starts")
}

fn connect44(gw: &FixGateway, seq: u64) -> FixClient {
    FixClient::connect(gw.local_addr().expect("listening"), "FIX.4.4", "CLIENT44", "TW", seq)
}

fn connect42(gw: &FixGateway, seq: u64) -> FixClient {
    FixClient::connect(gw.local_addr().expect("listening"), "FIX.4.2", "CLIENT42", "TW", seq)
}

/// A DAY limit buy (4.4 fields).
fn buy44(cl: &str, qty: u32, px: &str) -> String {
    format!("11={cl}|55=EURUSD|54=1|60=<NOW>|38={qty}|40=2|44={px}|59=0")
}

/// Reads application messages until one of type 8 with `cl` arrives.
fn er(c: &mut FixClient, cl: &str) -> Msg {
    loop {
        let m = c.next_app();
        if m.msg_type() == "8" && m.get(11) == Some(cl) {
            return m;
        }
        assert!(m.msg_type() == "8", "unexpected {m:?}");
    }
}

/// Reads ExecutionReports of `cl` until OrdStatus 2; returns them all.
fn until_filled(c: &mut FixClient, cl: &str) -> Vec<Msg> {
    let mut got = Vec::new();
    loop {
        let m = er(c, cl);
        let done = m.at(39) == "2";
        got.push(m);
        if done {
            return got;
        }
    }
}

fn tags(m: &Msg, want: &[(u32, &str)]) {
    for (t, v) in want {
        assert_eq!(m.get(*t), Some(*v), "tag {t} in {m:?}");
    }
}

/// Journal seqs whose fdatasync has returned (the desk's sync hook).
fn synced_log(cfg: &mut OrdersConfig) -> Arc<Mutex<Vec<u64>>> {
    let log = Arc::new(Mutex::new(Vec::new()));
    let l = Arc::clone(&log);
    cfg.sync_hook = Some(Arc::new(move |seq| l.lock().unwrap().push(seq)));
    log
}

#[test]
fn fix44_new_replace_cancel_rejects_and_fills() {
    let dir = TempDir::new("fixgw-44");
    let mut cfg = orders_config(&dir.path().join("journal"));
    let synced = synced_log(&mut cfg);
    let mut rig = Rig::start(cfg);
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    let gw = gateway(&dir.path().join("fix"), &rig.engine, None);
    let mut c = connect44(&gw, 1);
    c.logon();

    // D resting below the market -> ER New, only once the accept is on disk
    c.send("D", &buy44("A1", 100, "1.08"));
    let new = er(&mut c, "A1");
    assert!(
        synced.lock().unwrap().contains(&1),
        "the accept (seq 1) was synced before its ER"
    );
    tags(
        &new,
        &[
            (150, "0"),
            (39, "0"),
            (37, "1"),
            (17, "1-1"),
            (55, "EURUSD"),
            (54, "1"),
            (38, "100"),
            (44, "1.08"),
            (151, "100"),
            (14, "0"),
            (6, "0"),
        ],
    );
    assert_eq!(new.get(20), None, "FIX 4.4 has no ExecTransType");

    // G with a new ClOrdID -> ER Replaced; the new ClOrdID names the order from now on
    c.send("G", "11=A2|41=A1|55=EURUSD|54=1|60=<NOW>|38=80|40=2|44=1.0801");
    let rep = er(&mut c, "A2");
    tags(
        &rep,
        &[
            (150, "5"),
            (39, "0"),
            (41, "A1"),
            (37, "1"),
            (38, "80"),
            (44, "1.0801"),
            (151, "80"),
        ],
    );

    // a G changing the side is refused
    c.send("G", "11=A2b|41=A2|55=EURUSD|54=2|60=<NOW>|38=80|40=2|44=1.0801");
    let cxl = c.next_app();
    tags(
        &cxl,
        &[
            (35, "9"),
            (434, "2"),
            (102, "99"),
            (37, "1"),
            (39, "0"),
            (11, "A2b"),
            (41, "A2"),
        ],
    );
    assert!(cxl.at(58).contains("field=54"), "{cxl:?}");

    // F by the replaced ClOrdID -> ER Cancelled
    c.send("F", "11=A3|41=A2|55=EURUSD|54=1|60=<NOW>|38=80");
    let cancelled = er(&mut c, "A3");
    tags(&cancelled, &[(150, "4"), (39, "4"), (41, "A2"), (37, "1"), (151, "0")]);

    // cancelling it again: too late; an unknown order: unknown
    c.send("F", "11=A4|41=A3|55=EURUSD|54=1|60=<NOW>");
    tags(
        &c.next_app(),
        &[(35, "9"), (434, "1"), (102, "0"), (39, "4"), (37, "1")],
    );
    c.send("F", "11=A5|41=NOPE|55=EURUSD|54=1|60=<NOW>");
    tags(
        &c.next_app(),
        &[(35, "9"), (434, "1"), (102, "1"), (39, "8"), (37, "NONE")],
    );

    // unknown symbol -> ER Rejected with the desk's reason
    c.send("D", "11=B1|55=XXXYYY|54=1|60=<NOW>|38=10|40=2|44=1|59=0");
    let rej = er(&mut c, "B1");
    tags(&rej, &[(150, "8"), (39, "8"), (103, "1"), (37, "NONE"), (55, "XXXYYY")]);
    assert!(rej.at(58).contains("/FX/XXXYYY"), "{rej:?}");

    // a duplicate ClOrdID (also one only a replace used) -> rejected, 103=6
    c.send("D", &buy44("A2", 5, "1.08"));
    tags(&er(&mut c, "A2"), &[(150, "8"), (103, "6")]);

    // a marketable order: New, then fills (ExecType F) until filled at the ask
    c.send("D", "11=M1|55=EURUSD|54=1|60=<NOW>|38=10|40=1|59=0");
    tags(&er(&mut c, "M1"), &[(150, "0"), (39, "0"), (40, "1")]);
    let fills = until_filled(&mut c, "M1");
    let mut cum = 0;
    for f in &fills {
        tags(f, &[(150, "F"), (31, "1.0852"), (6, "1.0852")]);
        cum += f.at(32).parse::<u64>().unwrap();
        assert_eq!(f.at(14).parse::<u64>().unwrap(), cum, "{f:?}");
        assert_eq!(f.at(151).parse::<u64>().unwrap(), 10 - cum, "{f:?}");
    }
    assert_eq!(cum, 10);
    assert!(fills[..fills.len() - 1].iter().all(|f| f.at(39) == "1"));

    // an unsupported message type -> BusinessMessageReject
    c.send("H", "11=M1|55=EURUSD|54=1");
    tags(&c.next_app(), &[(35, "j"), (380, "3"), (372, "H")]);

    // the FIX orders are desk orders: alice's web blotter lists them (A1 and M1)
    let sid = rig.session("alice");
    rig.engine
        .view_create(sid, 1, "/BLOTTER/alice".into(), String::new(), String::new(), 0, 10)
        .unwrap();
    let v = rig.reply(sid, 1);
    let cids: Vec<&str> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["fields"]["clientOrderId"].as_str().unwrap())
        .collect();
    assert_eq!(cids, ["M1", "A1"], "{v}");

    let st = &gw.sessions()[0];
    assert_eq!(st.state, SessionState::LoggedOn);
    assert_eq!(st.next_target_seq, c.seq);
    assert!(st.messages_in >= c.seq - 1 && st.messages_out >= 1, "{st:?}");
    gw.stop();
    rig.engine.shutdown().unwrap();
}

#[test]
fn fix42_reports_carry_exec_trans_type_and_4_2_exec_types() {
    let dir = TempDir::new("fixgw-42");
    let rig = Rig::start(orders_config(&dir.path().join("journal")));
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    let gw = gateway(&dir.path().join("fix"), &rig.engine, None);
    let mut c = connect42(&gw, 1);
    c.logon();
    c.send("D", "11=S1|21=1|55=EURUSD|54=2|60=<NOW>|38=6|40=1|59=0");
    tags(&er(&mut c, "S1"), &[(20, "0"), (150, "0"), (39, "0"), (59, "0")]);
    let fills = until_filled(&mut c, "S1");
    let (last, partials) = fills.split_last().unwrap();
    assert!(!partials.is_empty(), "the simulator fills in parts: {fills:?}");
    for p in partials {
        tags(p, &[(20, "0"), (150, "1"), (39, "1"), (31, "1.085")]);
    }
    tags(
        last,
        &[(20, "0"), (150, "2"), (39, "2"), (31, "1.085"), (14, "6"), (151, "0")],
    );
    // an IOC that cannot fill is cancelled at once: ExecType 4
    c.send("D", "11=I1|21=1|55=EURUSD|54=2|60=<NOW>|38=6|40=2|44=1.2|59=3");
    er(&mut c, "I1");
    let ioc = er(&mut c, "I1");
    tags(
        &ioc,
        &[(150, "4"), (39, "4"), (151, "0"), (58, "IOC remainder cancelled")],
    );
    // G of a 4.2 order: Replaced is OrdStatus 5
    c.send("D", "11=S2|21=1|55=EURUSD|54=2|60=<NOW>|38=6|40=2|44=1.2|59=0");
    er(&mut c, "S2");
    c.send("G", "11=S3|41=S2|21=1|55=EURUSD|54=2|60=<NOW>|38=7|40=2|44=1.2");
    tags(&er(&mut c, "S3"), &[(20, "0"), (150, "5"), (39, "5"), (38, "7")]);
    gw.stop();
    rig.engine.shutdown().unwrap();
}

/// Refuses every instrument but `/FX/EURUSD`.
struct OnlyEurUsd;

impl PreTradeCheck for OnlyEurUsd {
    fn check(&self, user: &str, instrument: &str) -> Result<(), String> {
        if instrument == "/FX/EURUSD" {
            Ok(())
        } else {
            Err(format!("user '{user}' may not order '{instrument}'"))
        }
    }
}

#[test]
fn the_servers_pre_trade_check_refuses_before_the_desk() {
    let dir = TempDir::new("fixgw-check");
    let rig = Rig::start(orders_config(&dir.path().join("journal")));
    rig.market("/FX/GBPUSD", 1.25, 1.2502);
    let gw = gateway(&dir.path().join("fix"), &rig.engine, Some(Arc::new(OnlyEurUsd)));
    let mut c = connect44(&gw, 1);
    c.logon();
    c.send("D", "11=G1|55=GBPUSD|54=1|60=<NOW>|38=1|40=2|44=1.2|59=0");
    let rej = er(&mut c, "G1");
    tags(
        &rej,
        &[
            (150, "8"),
            (39, "8"),
            (103, "99"),
            (58, "user 'alice' may not order '/FX/GBPUSD'"),
        ],
    );
    assert_eq!(rig.engine.stats().orders_accepted, 0, "nothing reached the desk");
    gw.stop();
    rig.engine.shutdown().unwrap();
}

/// `OnlyEurUsd` whose calls all wait until the test opens the gate; records each call's orders.
#[derive(Default)]
struct GatedCheck {
    open: Mutex<bool>,
    opened: Condvar,
    calls: Mutex<Vec<Vec<String>>>,
}

impl GatedCheck {
    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.opened.notify_all();
    }
}

impl PreTradeCheck for GatedCheck {
    fn check(&self, user: &str, instrument: &str) -> Result<(), String> {
        OnlyEurUsd.check(user, instrument)
    }

    fn check_many(&self, orders: &[(&str, &str)]) -> Vec<Result<(), String>> {
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.opened.wait(open).unwrap();
        }
        drop(open);
        self.calls
            .lock()
            .unwrap()
            .push(orders.iter().map(|(_, i)| (*i).to_owned()).collect());
        orders.iter().map(|(u, i)| self.check(u, i)).collect()
    }
}

#[test]
fn orders_queued_behind_a_slow_check_are_checked_together_and_kept_in_order() {
    let dir = TempDir::new("fixgw-batch");
    let rig = Rig::start(orders_config(&dir.path().join("journal")));
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    rig.market("/FX/GBPUSD", 1.25, 1.2502);
    let check = Arc::new(GatedCheck::default());
    let gw = gateway(
        &dir.path().join("fix"),
        &rig.engine,
        Some(Arc::clone(&check) as Arc<dyn PreTradeCheck>),
    );
    let mut c = connect44(&gw, 1);
    c.logon();
    // the first check waits: the rest queue behind it, the cancel behind the order it names
    for cl in ["B1", "B2"] {
        c.send("D", &buy44(cl, 10, "1.08"));
    }
    c.send("D", "11=B3|55=GBPUSD|54=1|60=<NOW>|38=1|40=2|44=1.2|59=0");
    c.send("D", &buy44("B4", 10, "1.08"));
    c.send("F", "11=B5|41=B4|55=EURUSD|54=1|60=<NOW>");
    // every message taken by the session (Logon 1, then 2..=6) before the check answers
    let deadline = Instant::now() + Duration::from_secs(10);
    while gw.sessions()[0].next_target_seq < 7 {
        assert!(Instant::now() < deadline, "the session did not take the burst");
        std::thread::sleep(Duration::from_millis(5));
    }
    check.open();
    let mut answers = std::collections::HashMap::new();
    while answers.len() < 5 {
        let m = c.next_app();
        assert_eq!(m.msg_type(), "8", "{m:?}");
        answers.insert(m.at(11).to_owned(), m);
    }
    for cl in ["B1", "B2"] {
        tags(&answers[cl], &[(150, "0"), (39, "0")]);
    }
    tags(
        &answers["B3"],
        &[(150, "8"), (103, "99"), (58, "user 'alice' may not order '/FX/GBPUSD'")],
    );
    // B4 reached the desk before its cancel (an F overtaking it would find no order)
    tags(&answers["B4"], &[(150, "0"), (39, "0")]);
    tags(&answers["B5"], &[(41, "B4"), (150, "4"), (39, "4")]);
    let calls = check.calls.lock().unwrap().clone();
    assert!(calls.len() <= 2, "one call for the waiting batch: {calls:?}");
    assert_eq!(
        calls.concat(),
        ["/FX/EURUSD", "/FX/EURUSD", "/FX/GBPUSD", "/FX/EURUSD"],
        "each new order checked once, in order"
    );
    gw.stop();
    rig.engine.shutdown().unwrap();
}

#[test]
fn a_bench_echo_session_echoes_orders_and_takes_none() {
    let dir = TempDir::new("fixgw-echo");
    let rig = Rig::start(orders_config(&dir.path().join("journal")));
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    let sessions = vec![SessionSettings {
        config: SessionConfig::new(Dictionary::fix42(), "TW", "ECHO"),
        user: "bob".into(),
    }];
    let mut acceptor = AcceptorConfig::new("127.0.0.1:0".parse().expect("addr"), sessions);
    acceptor.store_dir = Some(dir.path().join("fix"));
    let mut cfg = GatewayConfig::new(acceptor);
    cfg.bench_echo = vec![true];
    let port: Arc<dyn OrderPort> = Arc::new(rig.engine.clone());
    let gw = FixGateway::start(cfg, port, None).expect("gateway starts");
    let mut c = FixClient::connect(gw.local_addr().expect("listening"), "FIX.4.2", "ECHO", "TW", 1);
    c.logon();
    for cl in ["E1", "E2"] {
        c.send(
            "D",
            &format!("11={cl}|21=1|55=EURUSD|54=1|60=<NOW>|38=5|40=2|44=1.08|59=0"),
        );
        let m = c.next_app();
        assert_eq!(m.msg_type(), "D", "echoed as a NewOrderSingle: {m:?}");
        tags(
            &m,
            &[
                (11, cl),
                (55, "EURUSD"),
                (38, "5"),
                (44, "1.08"),
                (49, "TW"),
                (56, "ECHO"),
            ],
        );
    }
    assert_eq!(rig.engine.stats().orders_accepted, 0, "nothing reached the desk");
    gw.stop();
    rig.engine.shutdown().unwrap();
}

/// Waits (bounded) until `cond` holds on the gateway.
fn wait_for(gw: &FixGateway, what: &str, cond: impl Fn(&FixGateway) -> bool) {
    let deadline = Instant::now() + fix_client::WAIT;
    while !cond(gw) {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn fills_while_away_arrive_by_resend_and_the_chain_survives_a_restart() {
    let dir = TempDir::new("fixgw-restart");
    let (journal, store) = (dir.path().join("journal"), dir.path().join("fix"));
    let mut cfg = orders_config(&journal);
    cfg.simulator.max_partials = 0; // one fill per order
    let rig = Rig::start(cfg);
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    let gw = gateway(&store, &rig.engine, None);
    let mut c = connect42(&gw, 1);
    c.logon();
    let limit = |cl: &str, px: &str| format!("11={cl}|21=1|55=EURUSD|54=1|60=<NOW>|38=30|40=2|44={px}|59=1");
    c.send("D", &limit("R1", "1.08"));
    er(&mut c, "R1");
    c.send("D", &limit("K1", "1.07"));
    er(&mut c, "K1");
    c.send("G", "11=K2|41=K1|21=1|55=EURUSD|54=1|60=<NOW>|38=20|40=2|44=1.07");
    er(&mut c, "K2");
    let seq_before = gw.sessions()[1].next_sender_seq;
    let our_seq = c.seq;
    c.drop_line();
    wait_for(&gw, "the disconnect", |g| {
        g.sessions()[1].state == SessionState::Disconnected
    });

    // the market trades through R1's limit (not K's) while the counterparty is away
    rig.market("/FX/EURUSD", 1.0750, 1.0790);
    wait_for(&gw, "R1's fill stored", |g| {
        g.sessions()[1].next_sender_seq > seq_before
    });

    // reconnect: our Logon is ahead of what the counterparty saw; its ResendRequest gets the fill
    let mut c = connect42(&gw, our_seq);
    let logon = c.logon();
    let expected = logon.at(34).parse::<u64>().unwrap();
    assert!(expected > seq_before, "{logon:?}");
    c.send("2", &format!("7={seq_before}|16=0"));
    let fill = er(&mut c, "R1");
    tags(
        &fill,
        &[
            (43, "Y"),
            (150, "2"),
            (39, "2"),
            (32, "30"),
            (31, "1.079"),
            (34, &seq_before.to_string()),
        ],
    );
    assert!(fill.get(122).is_some(), "a resend carries OrigSendingTime: {fill:?}");
    let next_in = c.seq;

    // restart: gateway and engine stop, start again on the same journal and stores
    gw.stop();
    rig.engine.shutdown().unwrap();
    let rig = Rig::start(orders_config(&journal));
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    let gw = gateway(&store, &rig.engine, None);
    assert_eq!(gw.sessions()[1].next_target_seq, next_in, "inbound sequence continues");
    let mut c = connect42(&gw, next_in);
    let logon = c.logon();
    assert!(
        logon.at(34).parse::<u64>().unwrap() > seq_before,
        "outbound sequence continues: {logon:?}"
    );
    // K2 (a ClOrdID only the replace gave) still names order K1 after the restart
    c.send("F", "11=K3|41=K2|55=EURUSD|54=1|60=<NOW>|38=20");
    let cancelled = er(&mut c, "K3");
    tags(&cancelled, &[(150, "4"), (39, "4"), (41, "K2"), (37, "2"), (38, "20")]);
    gw.stop();
    rig.engine.shutdown().unwrap();
}

#[test]
fn a_gateway_that_was_down_while_the_desk_traded_reports_what_it_missed() {
    let dir = TempDir::new("fixgw-catchup");
    let store = dir.path().join("fix");
    let mut cfg = orders_config(&dir.path().join("journal"));
    cfg.simulator.max_partials = 0;
    let rig = Rig::start(cfg);
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    let gw = gateway(&store, &rig.engine, None);
    let mut c = connect44(&gw, 1);
    c.logon();
    c.send("D", &buy44("C1", 40, "1.08"));
    er(&mut c, "C1");
    let next_in = c.seq;
    let seen = gw.sessions()[0].next_sender_seq;
    c.drop_line();
    gw.stop();

    // the desk keeps trading: C1 fills while no gateway reports
    rig.market("/FX/EURUSD", 1.0750, 1.0790);
    // accept and acknowledgement (1), fill (2) durable: the desk's attach shows the fill
    let deadline = Instant::now() + fix_client::WAIT;
    while rig.engine.stats().journal_durable_seq < 2 {
        assert!(Instant::now() < deadline, "C1 never filled");
        std::thread::sleep(Duration::from_millis(2));
    }
    let gw = gateway(&store, &rig.engine, None);
    let mut c = connect44(&gw, next_in);
    c.logon();
    c.send("2", &format!("7={seen}|16=0"));
    let fill = er(&mut c, "C1");
    // reported at attach, before the Logon: it comes by resend
    tags(
        &fill,
        &[
            (43, "Y"),
            (150, "F"),
            (39, "2"),
            (32, "40"),
            (14, "40"),
            (151, "0"),
            (31, "1.079"),
            (6, "1.079"),
        ],
    );
    gw.stop();
    rig.engine.shutdown().unwrap();
}

/// An ExecutionReport as the gateway stores it (header and body), for session CLIENT44 -> TW.
fn stored_er(seq: u64, body: &str) -> Vec<u8> {
    let mut b = tidewire_engine::fix::codec::Builder::new();
    b.begin(b"8")
        .field(49, b"TW")
        .field(56, b"CLIENT44")
        .field_u64(34, seq)
        .field_timestamp(52, fix_client::now_ms())
        .raw(format!("{}|", body).replace('|', "\u{1}").as_bytes());
    b.finish(b"FIX.4.4").to_vec()
}

#[test]
fn reports_stored_for_entries_the_journal_lost_are_gap_filled_after_a_restart() {
    let dir = TempDir::new("fixgw-lost");
    let (journal, store) = (dir.path().join("journal"), dir.path().join("fix"));
    let rig = Rig::start(orders_config(&journal));
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    let gw = gateway(&store, &rig.engine, None);
    let mut c = connect44(&gw, 1);
    c.logon();
    c.send("D", &buy44("V1", 10, "1.08"));
    tags(&er(&mut c, "V1"), &[(150, "0"), (37, "1"), (17, "1-1")]);
    let next_in = c.seq;
    let first_lost = gw.sessions()[0].next_sender_seq;
    c.drop_line();
    gw.stop();
    rig.engine.shutdown().unwrap();

    // A crash between the two fdatasyncs: the session store holds reports whose journal entries
    // never became durable (a New of order 2 and a fill of order 1 at a version the journal does
    // not have); nothing was sent of them.
    {
        use tidewire_engine::fix::session::{FileStore, SessionStore};
        let mut s = FileStore::open(&store.join("FIX.4.4-TW-CLIENT44")).expect("store");
        let lost_new = "37=2|11=LOST|17=2-1|150=0|39=0|55=EURUSD|54=1|38=5|40=2|44=1.08|59=0|151=5|14=0|6=0";
        let lost_fill =
            "37=1|11=V1|17=1-3|150=F|39=1|55=EURUSD|54=1|38=10|40=2|44=1.08|59=0|32=4|31=1.08|151=6|14=4|6=1.08";
        s.save_sent(first_lost, &stored_er(first_lost, lost_new)).unwrap();
        s.save_sent(first_lost + 1, &stored_er(first_lost + 1, lost_fill))
            .unwrap();
        s.sync().unwrap();
    }

    let rig = Rig::start(orders_config(&journal));
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    let gw = gateway(&store, &rig.engine, None);
    let mut c = connect44(&gw, next_in);
    let logon = c.logon();
    let logon_seq: u64 = logon.at(34).parse().unwrap();
    assert_eq!(logon_seq, first_lost + 2, "the sequence numbers stay: {logon:?}");
    // the counterparty asks for what it missed: one gap fill over the lost reports and the Logon
    c.send("2", &format!("7={first_lost}|16=0"));
    let gap = c.recv();
    tags(
        &gap,
        &[
            (35, "4"),
            (123, "Y"),
            (43, "Y"),
            (34, &first_lost.to_string()),
            (36, &(logon_seq + 1).to_string()),
        ],
    );
    // a resend from the start still has V1's New (the durable one), then the gap fill
    c.send("2", "7=1|16=0");
    let mut resent = Vec::new();
    loop {
        let m = c.recv();
        let done = m.msg_type() == "4" && m.at(36) == (logon_seq + 1).to_string();
        resent.push(m);
        if done {
            break;
        }
    }
    let ers: Vec<&str> = resent
        .iter()
        .filter(|m| m.msg_type() == "8")
        .map(|m| m.at(11))
        .collect();
    assert_eq!(ers, ["V1"], "only the durable report is resent: {resent:?}");
    assert!(resent.iter().all(|m| m.get(11) != Some("LOST")));
    // order id 2 goes to the next order; V1 is as the journal has it (nothing filled)
    c.send("D", &buy44("V2", 3, "1.08"));
    let new = er(&mut c, "V2");
    tags(
        &new,
        &[(150, "0"), (37, "2"), (17, "2-1"), (34, &(logon_seq + 1).to_string())],
    );
    c.send("F", "11=V1c|41=V1|55=EURUSD|54=1|60=<NOW>|38=10");
    tags(&er(&mut c, "V1c"), &[(150, "4"), (37, "1"), (14, "0"), (151, "0")]);
    let next_in = c.seq;
    gw.stop();
    rig.engine.shutdown().unwrap();

    // the voids are durable: a second restart resends the same
    let rig = Rig::start(orders_config(&journal));
    let gw = gateway(&store, &rig.engine, None);
    let mut c = connect44(&gw, next_in);
    c.logon();
    c.send("2", &format!("7={first_lost}|16={}", first_lost + 1));
    let gap = c.recv();
    tags(&gap, &[(35, "4"), (123, "Y"), (34, &first_lost.to_string())]);
    gw.stop();
    rig.engine.shutdown().unwrap();
}

#[test]
fn the_new_report_is_stored_before_the_journal_is_durable_and_sent_after() {
    let dir = TempDir::new("fixgw-overlap");
    let mut cfg = orders_config(&dir.path().join("journal"));
    // the journal's writer stops after the fdatasync of seq 1, before its completion, until
    // the test opens the gate
    let (gate_tx, gate_rx) = crossbeam_channel::unbounded::<()>();
    let (inside_tx, inside_rx) = crossbeam_channel::unbounded::<u64>();
    cfg.sync_hook = Some(Arc::new(move |seq| {
        let _ = inside_tx.send(seq);
        let _ = gate_rx.recv_timeout(fix_client::WAIT);
    }));
    let rig = Rig::start(cfg);
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    let gw = gateway(&dir.path().join("fix"), &rig.engine, None);
    let mut c = connect44(&gw, 1);
    c.logon();
    let before = gw.sessions()[0].clone();
    c.send("D", &buy44("O1", 10, "1.08"));
    assert_eq!(inside_rx.recv_timeout(fix_client::WAIT), Ok(1), "the accept's sync");
    // the report is built and stored (its MsgSeqNum taken) while the journal's completion waits
    wait_for(&gw, "the report stored", |g| {
        g.sessions()[0].next_sender_seq == before.next_sender_seq + 1
    });
    assert_eq!(
        gw.sessions()[0].messages_out,
        before.messages_out,
        "not written before the journal's completion"
    );
    gate_tx.send(()).unwrap();
    let new = er(&mut c, "O1");
    tags(
        &new,
        &[
            (150, "0"),
            (37, "1"),
            (17, "1-1"),
            (34, &before.next_sender_seq.to_string()),
        ],
    );
    // later entries run freely: a cancel's report follows
    drop(gate_tx);
    c.send("F", "11=O2|41=O1|55=EURUSD|54=1|60=<NOW>|38=10");
    tags(&er(&mut c, "O2"), &[(150, "4"), (41, "O1")]);
    gw.stop();
    rig.engine.shutdown().unwrap();
}

#[test]
fn a_durable_order_whose_new_report_the_store_lost_is_reported_at_start() {
    use tidewire_engine::order_book::{Side, TimeInForce};
    use tidewire_engine::order_desk::{GatewayOp, OrderInput};
    let dir = TempDir::new("fixgw-lostnew");
    let store = dir.path().join("fix");
    let mut rig = Rig::start(orders_config(&dir.path().join("journal")));
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    let gw = gateway(&store, &rig.engine, None);
    let mut c = connect44(&gw, 1);
    c.logon();
    c.send("D", &buy44("N1", 10, "1.08"));
    er(&mut c, "N1");
    let next_in = c.seq;
    let seen = gw.sessions()[0].next_sender_seq;
    c.drop_line();
    gw.stop();

    // The journal holds orders whose reports the store does not: as after a crash between the
    // journal's fdatasync and the store's. N2 came from this session (its origin is journaled),
    // W1 from alice's web session, B1 from the FIX 4.2 session's user.
    let submit = |cid: &str, origin: Option<&str>| GatewayOp::Submit {
        order: OrderInput {
            client_order_id: cid.into(),
            instrument: "/FX/EURUSD".into(),
            side: Side::Buy,
            quantity: 7.0,
            price: Some(1.08),
            time_in_force: TimeInForce::Day,
        },
        origin: origin.map(str::to_owned),
    };
    rig.engine
        .gateway_request("alice", 1, submit("N2", Some("FIX.4.4-TW-CLIENT44")))
        .unwrap();
    let web = rig.session("alice");
    rig.engine
        .order_submit(
            web,
            1,
            orders_util::order("W1", "/FX/EURUSD", Side::Buy, 5.0, Some(1.0)),
        )
        .unwrap();
    rig.reply(web, 1);
    rig.engine
        .gateway_request("bob", 2, submit("B1", Some("FIX.4.2-TW-CLIENT42")))
        .unwrap();
    let deadline = Instant::now() + fix_client::WAIT;
    while rig.engine.stats().journal_durable_seq < 4 {
        assert!(Instant::now() < deadline, "the three accepts never became durable");
        std::thread::sleep(Duration::from_millis(2));
    }

    let gw = gateway(&store, &rig.engine, None);
    let mut c = connect44(&gw, next_in);
    c.logon();
    c.send("2", &format!("7={seen}|16=0"));
    let new = er(&mut c, "N2");
    tags(
        &new,
        &[
            (43, "Y"),
            (34, &seen.to_string()),
            (150, "0"),
            (39, "0"),
            (37, "2"),
            (17, "2-1"),
            (38, "7"),
            (151, "7"),
            (14, "0"),
        ],
    );
    // N2 is the session's order from now on; W1 was never reported here
    c.send("F", "11=N2c|41=N2|55=EURUSD|54=1|60=<NOW>|38=7");
    let cancelled = c.next_app();
    tags(&cancelled, &[(35, "8"), (11, "N2c"), (150, "4"), (37, "2")]);
    // the 4.2 session's store reported nothing yet: it is given none (a new or reset store)
    let mut b = connect42(&gw, 1);
    let logon = b.logon();
    assert_eq!(logon.at(34), "1", "nothing was stored for CLIENT42: {logon:?}");
    gw.stop();
    rig.engine.shutdown().unwrap();
}

/// A journal write failure for `cfg`: once armed, the journal's next write stops (announcing
/// its last seq on `inside`) until `go` lets it go, then fails as on a full disk.
struct Fault {
    armed: Arc<std::sync::atomic::AtomicBool>,
    go: crossbeam_channel::Sender<()>,
    inside: crossbeam_channel::Receiver<u64>,
}

impl Fault {
    fn on(cfg: &mut OrdersConfig) -> Fault {
        use std::sync::atomic::{AtomicBool, Ordering};
        let armed = Arc::new(AtomicBool::new(false));
        let (go, go_rx) = crossbeam_channel::unbounded::<()>();
        let (inside_tx, inside) = crossbeam_channel::unbounded::<u64>();
        let arm = Arc::clone(&armed);
        cfg.journal_write_fault = Some(Arc::new(move |seq| {
            if !arm.load(Ordering::Acquire) {
                return None;
            }
            let _ = inside_tx.send(seq);
            let _ = go_rx.recv_timeout(fix_client::WAIT);
            Some(std::io::Error::from(std::io::ErrorKind::StorageFull))
        }));
        Fault { armed, go, inside }
    }

    fn arm(&self) {
        self.armed.store(true, std::sync::atomic::Ordering::Release);
    }
}

#[test]
fn a_journal_failure_voids_the_held_report_releases_what_waits_and_refuses_its_request() {
    let dir = TempDir::new("fixgw-jfail");
    let (journal, store) = (dir.path().join("journal"), dir.path().join("fix"));
    let mut cfg = orders_config(&journal);
    let fault = Fault::on(&mut cfg);
    let rig = Rig::start(cfg);
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    let gw = gateway(&store, &rig.engine, None);
    let mut c = connect44(&gw, 1);
    c.logon();
    c.send("D", &buy44("J1", 10, "1.08"));
    tags(&er(&mut c, "J1"), &[(150, "0"), (37, "1")]);

    fault.arm();
    let before = gw.sessions()[0].clone();
    let voided = before.next_sender_seq;
    c.send("D", &buy44("J2", 5, "1.08"));
    assert_eq!(
        fault.inside.recv_timeout(fix_client::WAIT),
        Ok(2),
        "J2's entry is being written"
    );
    wait_for(&gw, "J2's New stored", |g| {
        g.sessions()[0].next_sender_seq == voided + 1
    });
    // refused at once by the desk (nothing journaled): stored, and held behind J2's New
    c.send("D", "11=BAD|55=NOPE|54=1|60=<NOW>|38=1|40=2|44=1.08|59=0");
    wait_for(&gw, "BAD's rejection stored", |g| {
        g.sessions()[0].next_sender_seq == voided + 2
    });
    assert_eq!(
        gw.sessions()[0].messages_out,
        before.messages_out,
        "nothing passes the held New"
    );

    fault.go.send(()).unwrap();
    // the held rejection goes, one MsgSeqNum past the voided New; then J2's refusal
    let bad = c.next_app();
    tags(
        &bad,
        &[(35, "8"), (11, "BAD"), (150, "8"), (34, &(voided + 1).to_string())],
    );
    let j2 = c.next_app();
    tags(
        &j2,
        &[
            (35, "8"),
            (11, "J2"),
            (150, "8"),
            (39, "8"),
            (103, "99"),
            (34, &(voided + 2).to_string()),
        ],
    );
    assert!(
        j2.at(58)
            .starts_with("order journal failed, request not acknowledged: "),
        "{j2:?}"
    );
    assert!(j2.get(37).is_none_or(|id| id == "NONE"), "no order id: {j2:?}");
    // the counterparty asks for the gap: a gap fill, never the voided New
    c.send("2", &format!("7={voided}|16={voided}"));
    tags(
        &c.recv(),
        &[
            (35, "4"),
            (123, "Y"),
            (34, &voided.to_string()),
            (36, &(voided + 1).to_string()),
        ],
    );
    // the desk takes no order any more; FIX answers as it answers the web
    c.send("D", &buy44("J3", 1, "1.08"));
    let j3 = er(&mut c, "J3");
    tags(&j3, &[(150, "8"), (103, "99")]);
    assert!(j3.at(58).starts_with("orders are unavailable: "), "{j3:?}");
    c.send("F", "11=J1c|41=J1|55=EURUSD|54=1|60=<NOW>|38=10");
    let cxl = c.next_app();
    tags(
        &cxl,
        &[(35, "9"), (11, "J1c"), (41, "J1"), (37, "1"), (39, "0"), (434, "1")],
    );
    assert!(cxl.at(58).starts_with("orders are unavailable: "), "{cxl:?}");
    let next_in = c.seq;
    gw.stop();
    let _ = rig.engine.shutdown(); // reports the journal's failure

    // after a restart: J1 as the journal holds it, J2 never existed, the void stays
    let rig = Rig::start(orders_config(&journal));
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    let gw = gateway(&store, &rig.engine, None);
    let mut c = connect44(&gw, next_in);
    c.logon();
    c.send("2", &format!("7={voided}|16={voided}"));
    tags(&c.recv(), &[(35, "4"), (123, "Y"), (34, &voided.to_string())]);
    c.send("F", "11=J2c|41=J2|55=EURUSD|54=1|60=<NOW>|38=5");
    tags(&c.next_app(), &[(35, "9"), (11, "J2c"), (102, "1")]);
    c.send("F", "11=J1c2|41=J1|55=EURUSD|54=1|60=<NOW>|38=10");
    tags(&er(&mut c, "J1c2"), &[(150, "4"), (37, "1")]);
    gw.stop();
    rig.engine.shutdown().unwrap();
}

#[test]
fn a_journal_failure_while_the_line_is_down_is_a_gap_and_a_refusal_by_resend() {
    let dir = TempDir::new("fixgw-jfail-away");
    let mut cfg = orders_config(&dir.path().join("journal"));
    let fault = Fault::on(&mut cfg);
    let rig = Rig::start(cfg);
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    let gw = gateway(&dir.path().join("fix"), &rig.engine, None);
    let mut c = connect44(&gw, 1);
    c.logon();
    c.send("D", &buy44("K1", 10, "1.08"));
    er(&mut c, "K1");
    fault.arm();
    let voided = gw.sessions()[0].next_sender_seq;
    c.send("D", &buy44("K2", 5, "1.08"));
    assert_eq!(fault.inside.recv_timeout(fix_client::WAIT), Ok(2));
    wait_for(&gw, "K2's New stored", |g| {
        g.sessions()[0].next_sender_seq == voided + 1
    });
    // the line drops while the New waits for the journal
    let next_in = c.seq;
    c.drop_line();
    wait_for(&gw, "the session down", |g| {
        g.sessions()[0].state == SessionState::Disconnected
    });
    fault.go.send(()).unwrap();
    // K2's refusal is stored as sent for the counterparty (away)
    wait_for(&gw, "K2's refusal stored", |g| {
        g.sessions()[0].next_sender_seq == voided + 2
    });
    let mut c = connect44(&gw, next_in);
    let logon = c.logon();
    assert_eq!(logon.at(34), (voided + 2).to_string(), "{logon:?}");
    c.send("2", &format!("7={voided}|16=0"));
    tags(
        &c.recv(),
        &[
            (35, "4"),
            (123, "Y"),
            (34, &voided.to_string()),
            (36, &(voided + 1).to_string()),
        ],
    );
    let k2 = c.recv();
    tags(
        &k2,
        &[
            (35, "8"),
            (43, "Y"),
            (11, "K2"),
            (150, "8"),
            (34, &(voided + 1).to_string()),
        ],
    );
    assert!(
        k2.at(58)
            .starts_with("order journal failed, request not acknowledged: "),
        "{k2:?}"
    );
    gw.stop();
    let _ = rig.engine.shutdown(); // reports the journal's failure
}
