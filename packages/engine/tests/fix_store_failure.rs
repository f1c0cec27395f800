//! FIX session stores on a real full disk (a 1 MiB tmpfs filled up): a record the disk took
//! only in part is cut off, so the records after it (once there is room again) read back, also
//! after a restart; answers of the gateway the store could not take (a refusal, the New of an
//! accepted order) reach the counterparty after its next Logon once the disk has room, Logons
//! are refused until then, and the session's status says so. Needs root for the mount
//! (skipped otherwise).

#[path = "fix_client/mod.rs"]
mod fix_client;
#[path = "journal_util/mod.rs"]
mod journal_util;
#[path = "orders_util/mod.rs"]
mod orders_util;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fix_client::{FixClient, Msg};
use journal_util::TempDir;
use orders_util::{orders_config, Rig};
use tidewire_engine::fix::acceptor::{AcceptorConfig, SessionSettings, SessionState, SessionStatus};
use tidewire_engine::fix::dictionary::Dictionary;
use tidewire_engine::fix::gateway::{FixGateway, GatewayConfig, OrderPort};
use tidewire_engine::fix::session::{FileStore, SessionConfig, SessionStore};

/// A tmpfs of `size` mounted on a directory; unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).expect("create the mount point");
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(dir.to_path_buf()))
    }

    /// Writes a file until the tmpfs is full; returns its path.
    fn fill(&self) -> PathBuf {
        let path = self.0.join("filler");
        let mut f = std::fs::File::create(&path).expect("create the filler");
        let chunk = vec![0u8; 4096];
        while f.write_all(&chunk).is_ok() {}
        path
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_record_a_full_disk_took_in_part_is_cut_off_before_the_next() {
    let dir = TempDir::new("fixstore-torn");
    let path = dir.path().join("store");
    let Some(disk) = Tmpfs::mount(&path, "1m") else {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    };
    let mut store = FileStore::open(&path).expect("store");
    store.save_sent(1, b"first").expect("stored");
    store.sync().expect("synced");
    let filler = disk.fill();
    // larger than what is left of the file's last page: a part of it reaches the file
    let big = vec![b'x'; 64 * 1024];
    assert!(store.save_sent(2, &big).is_err(), "the disk is full");
    std::fs::remove_file(filler).expect("free the disk");
    store.save_sent(2, b"second").expect("stored");
    store.sync().expect("synced");
    let read = |s: &FileStore| {
        let mut got = Vec::new();
        s.sent(1, 10, &mut |seq, m| {
            got.push((seq, String::from_utf8_lossy(m).into_owned()))
        })
        .expect("read");
        got
    };
    let want = vec![(1, "first".to_owned()), (2, "second".to_owned())];
    assert_eq!(read(&store), want);
    drop(store);
    assert_eq!(read(&FileStore::open(&path).expect("reopens")), want, "after a restart");
}

/// The gateway with one FIX 4.2 session CLIENT -> TW as bob (Symbols under `/FX/`), its store
/// in `store`.
fn gateway(store: &Path, engine: &tidewire_engine::runtime::Engine) -> FixGateway {
    let sessions = vec![SessionSettings {
        config: SessionConfig::new(Dictionary::fix42(), "TW", "CLIENT"),
        user: "bob".into(),
    }];
    let mut acceptor = AcceptorConfig::new("127.0.0.1:0".parse().expect("addr"), sessions);
    acceptor.store_dir = Some(store.to_path_buf());
    let mut cfg = GatewayConfig::new(acceptor);
    cfg.symbol_prefixes = vec!["/FX/".into()];
    let port: Arc<dyn OrderPort> = Arc::new(engine.clone());
    FixGateway::start(cfg, port, None).expect("gateway starts")
}

fn status(gw: &FixGateway) -> SessionStatus {
    gw.sessions().remove(0)
}

fn wait_for(gw: &FixGateway, what: &str, cond: impl Fn(&SessionStatus) -> bool) -> SessionStatus {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let s = status(gw);
        if cond(&s) {
            return s;
        }
        assert!(Instant::now() < deadline, "{what}: {s:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A limit buy resting below the market (FIX 4.2 fields).
fn limit(cl: &str, px: &str) -> String {
    format!("11={cl}|21=1|55=EURUSD|54=1|60=<NOW>|38=10|40=2|44={px}|59=0")
}

/// Messages until the acceptor closes the connection.
fn until_closed(c: &mut FixClient) -> Vec<Msg> {
    let mut got = Vec::new();
    while let Some(m) = c.recv_or_closed() {
        got.push(m);
    }
    got
}

#[test]
fn answers_a_full_store_could_not_take_reach_the_counterparty_after_its_next_logon() {
    let dir = TempDir::new("fixstore-full-gw");
    let store = dir.path().join("fix");
    let Some(disk) = Tmpfs::mount(&store, "1m") else {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    };
    // the journal is on another disk: the desk trades while the session store is full
    let mut cfg = orders_config(&dir.path().join("journal"));
    cfg.simulator.max_partials = 0; // one fill per order
    let rig = Rig::start(cfg);
    rig.market("/FX/EURUSD", 1.0850, 1.0852);
    let gw = gateway(&store, &rig.engine);
    let addr = gw.local_addr().expect("listening");
    let mut c = FixClient::connect(addr, "FIX.4.2", "CLIENT", "TW", 1);
    c.logon();
    c.send("D", &limit("A1", "1.08"));
    let a1 = c.next_app();
    assert_eq!((a1.at(11), a1.at(150)), ("A1", "0"), "{a1:?}");
    let seen: u64 = a1.at(34).parse().expect("MsgSeqNum");
    assert_eq!(status(&gw).store_error, None);

    let filler = disk.fill();
    // B1's Symbol names no instrument and is long: its ExecutionReport Rejected repeats it, more
    // than a page of the full disk
    let long = "Q".repeat(5000);
    c.send("D", &format!("11=B1|21=1|55={long}|54=1|60=<NOW>|38=10|40=2|44=1|59=0"));
    let before = until_closed(&mut c);
    assert!(
        before.iter().all(|m| m.get(11) != Some("B1")),
        "B1's refusal was not stored, so never sent: {before:?}"
    );
    let failed = wait_for(&gw, "the session disconnected", |s| {
        s.state == SessionState::Disconnected && s.store_error.is_some()
    });
    assert!(failed.store_failed_since_ms.is_some(), "{failed:?}");
    assert!(failed.store_failures >= 1, "{failed:?}");
    assert_eq!(failed.unstored_messages, 1, "{failed:?}");

    // the market trades through A1's limit: its fill's report waits behind B1's refusal
    rig.market("/FX/EURUSD", 1.0750, 1.0790);
    wait_for(&gw, "A1's fill kept for the store", |s| s.unstored_messages == 2);

    // a Logon while the disk is full is refused (with a Logout when the disk takes that)
    let mut c = c.reconnect(addr);
    c.send("A", "98=0|108=30");
    let refused = until_closed(&mut c);
    assert!(refused.iter().all(|m| m.msg_type() == "5"), "{refused:?}");
    for m in &refused {
        assert!(
            m.at(58)
                .starts_with("Session store failed, messages cannot be stored: "),
            "{m:?}"
        );
    }
    assert!(status(&gw).store_error.is_some());

    // room again: the next Logon stores what was kept (our Logon is ahead of what the
    // counterparty saw) and its ResendRequest brings B1's refusal and A1's fill
    std::fs::remove_file(filler).expect("free the disk");
    let mut c = c.reconnect(addr);
    let logon = c.logon();
    assert!(logon.at(34).parse::<u64>().expect("MsgSeqNum") > seen + 2, "{logon:?}");
    c.send("2", &format!("7={}|16=0", seen + 1));
    let b1 = c.next_app();
    assert_eq!(
        (b1.at(11), b1.at(150), b1.at(39), b1.at(37), b1.at(43)),
        ("B1", "8", "8", "NONE", "Y"),
        "{b1:?}"
    );
    assert!(b1.at(58).contains("QQQQ"), "{b1:?}");
    let fill = c.next_app();
    assert_eq!(
        (fill.at(11), fill.at(150), fill.at(39), fill.at(32), fill.at(43)),
        ("A1", "2", "2", "10", "Y"),
        "{fill:?}"
    );
    let healthy = wait_for(&gw, "the store works again", |s| s.store_error.is_none());
    assert_eq!(healthy.unstored_messages, 0);
    assert_eq!(healthy.state, SessionState::LoggedOn);
    // and the session goes on
    c.send("D", &limit("A3", "1.06"));
    let a3 = c.next_app();
    assert_eq!((a3.at(11), a3.at(150)), ("A3", "0"), "{a3:?}");
    gw.stop();
    rig.engine.shutdown().expect("engine stops");
    drop(disk);
}
