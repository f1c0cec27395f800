//! Session logic driven directly: frames in, frames out, a hand-moved clock.

use super::*;
use crate::fix::codec::{Frame, Framer};

const T0: i64 = 1_700_000_000_000;

struct Echo {
    logons: u32,
}

impl SessionApp for Echo {
    fn on_logon(&mut self) {
        self.logons += 1;
    }
    fn on_message(&mut self, msg: &Message<'_>, out: &mut Outbox) -> Result<(), BusinessReject> {
        if msg.msg_type() != b"D" {
            return Err(BusinessReject::unsupported_message_type());
        }
        let mut w = out.message(b"8");
        w.field(37, b"1").field(11, msg.get(11).unwrap_or(b"?"));
        Ok(())
    }
}

struct Harness {
    s: Session,
    app: Echo,
    now: Now,
    seq: u64,
    begin: &'static str,
}

impl Harness {
    fn new(dict: Dictionary, store: Box<dyn SessionStore>) -> Harness {
        let cfg = SessionConfig::new(dict, "ISLD", "TW");
        let mut s = Session::new(cfg, store);
        let now = Now { utc_ms: T0, mono_ms: 0 };
        s.on_connect(now);
        Harness {
            s,
            app: Echo { logons: 0 },
            now,
            seq: 1,
            begin: dict.begin_string(),
        }
    }

    /// Sends `fields` ("|"-separated, after the standard header) with the next seq.
    fn send(&mut self, msg_type: &str, fields: &str) -> Vec<String> {
        let seq = self.seq;
        self.seq += 1;
        self.send_seq(msg_type, seq, fields)
    }

    fn send_seq(&mut self, msg_type: &str, seq: u64, fields: &str) -> Vec<String> {
        let mut b = crate::fix::codec::Builder::new();
        b.begin(msg_type.as_bytes())
            .field(49, b"TW")
            .field(56, b"ISLD")
            .field_u64(34, seq)
            .field_timestamp(52, self.now.utc_ms)
            .raw(fields.replace('|', "\u{1}").as_bytes());
        let frame = b.finish(self.begin.as_bytes()).to_vec();
        self.s.on_frame(&frame, self.now, &mut self.app);
        self.take()
    }

    fn advance(&mut self, ms: u64) -> Vec<String> {
        self.now.mono_ms += ms;
        self.now.utc_ms += ms as i64;
        self.s.on_timer(self.now);
        self.take()
    }

    /// Output as "35=..|34=..|<other fields>" strings without 8, 9, 49, 52, 56, 10, 122.
    fn take(&mut self) -> Vec<String> {
        let mut f = Framer::new(1 << 16);
        f.push(self.s.output());
        self.s.clear_output();
        let mut out = Vec::new();
        while let Some(Frame::Message(r)) = f.next_frame() {
            let mut p = crate::fix::codec::Parser::new();
            let m = p.parse(&f.bytes()[r]).expect("our output parses");
            let text: Vec<String> = m
                .fields()
                .filter(|(t, _)| ![8, 9, 49, 52, 56, 10, 122].contains(t))
                .map(|(t, v)| format!("{t}={}", String::from_utf8_lossy(v)))
                .collect();
            out.push(text.join("|"));
        }
        out
    }

    fn logon(&mut self) -> Vec<String> {
        self.send("A", "98=0|108=30|")
    }
}

fn h42() -> Harness {
    Harness::new(Dictionary::fix42(), Box::new(MemoryStore::new()))
}

#[test]
fn logon_heartbeat_test_request_logout() {
    let mut h = h42();
    assert_eq!(h.logon(), vec!["35=A|34=1|98=0|108=30"]);
    assert!(h.s.is_logged_on() && h.app.logons == 1);
    assert_eq!(h.send("1", "112=HELLO|"), vec!["35=0|34=2|112=HELLO"]);
    assert_eq!(h.send("5", ""), vec!["35=5|34=3"]);
    assert_eq!(h.s.disconnect_reason(), Some("Logout"));
}

#[test]
fn application_replies_and_business_rejects() {
    let mut h = h42();
    h.logon();
    let nos = "11=ID|21=1|40=1|54=1|55=INTC|60=20231114-22:13:20|";
    assert_eq!(h.send("D", nos), vec!["35=8|34=2|37=1|11=ID"]);
    let er = "37=id|17=id|20=0|150=0|39=0|55=WLRI|54=1|151=100|14=0|6=0.0|";
    assert_eq!(
        h.send("8", er),
        vec!["35=j|34=3|45=3|58=Unsupported Message Type|372=8|380=3"]
    );
    assert_eq!(h.s.next_target_seq(), 4);
}

#[test]
fn gap_is_requested_once_and_filled_from_the_queue() {
    let mut h = h42();
    h.logon();
    assert_eq!(h.send_seq("0", 5, ""), vec!["35=2|34=2|7=2|16=0"]);
    assert!(
        h.send_seq("1", 6, "112=Q|").is_empty(),
        "queued, no second ResendRequest"
    );
    assert!(h.send_seq("0", 2, "").is_empty());
    assert!(h.send_seq("0", 3, "").is_empty());
    // 4 arrives: 5 and 6 come off the queue, the TestRequest is answered
    assert_eq!(h.send_seq("0", 4, ""), vec!["35=0|34=3|112=Q"]);
    assert_eq!(h.s.next_target_seq(), 7);
}

#[test]
fn resend_request_resends_application_messages_and_gap_fills_admin() {
    let mut h = h42();
    h.logon();
    h.send("1", "112=A|");
    h.send("D", "11=X|21=1|40=1|54=1|55=INTC|60=20231114-22:13:20|");
    let out = h.send("2", "7=1|16=0|");
    assert_eq!(out, vec!["35=4|34=1|43=Y|36=3|123=Y", "35=8|34=3|43=Y|37=1|11=X"]);
}

#[test]
fn too_low_without_poss_dup_logs_out() {
    let mut h = h42();
    h.logon();
    h.send("0", "");
    assert_eq!(
        h.send_seq("0", 2, ""),
        vec!["35=5|34=2|58=MsgSeqNum too low, expecting 3 but received 2"]
    );
    assert!(h.s.disconnect_reason().is_some());
}

#[test]
fn poss_dup_duplicates_are_ignored_and_checked() {
    let mut h = h42();
    h.logon();
    h.send("0", "");
    let ts = "20231114-22:13:20.000";
    assert!(h.send_seq("0", 2, &format!("43=Y|122={ts}|")).is_empty());
    // OrigSendingTime after SendingTime: reject and logout
    let out = h.send_seq("0", 2, "43=Y|122=20991231-00:00:00|");
    assert_eq!(
        out[0],
        "35=3|34=2|45=2|58=SendingTime accuracy problem, field=122|371=122|372=0|373=10"
    );
    assert_eq!(out[1], "35=5|34=3|58=SendingTime accuracy problem, field=122");
}

#[test]
fn heartbeat_timers_follow_the_interval() {
    let mut h = h42();
    h.send("A", "98=0|108=6|");
    assert!(h.advance(5_999).is_empty());
    assert_eq!(h.advance(1), vec!["35=0|34=2"]);
    // nothing received for 1.2 intervals: TestRequest
    assert_eq!(h.advance(1_200), vec!["35=1|34=3|112=TEST"]);
    assert!(
        h.advance(6_000).is_empty(),
        "no heartbeat while a TestRequest is outstanding"
    );
    h.advance(1_200);
    assert_eq!(h.s.disconnect_reason(), Some("Timed out waiting for heartbeat"));
}

#[test]
fn fix44_logon_carries_next_expected_msg_seq_num() {
    let mut h = Harness::new(Dictionary::fix44(), Box::new(MemoryStore::new()));
    assert_eq!(h.logon(), vec!["35=A|34=1|98=0|108=30|789=2"]);
    // the counterparty says it expects our 1 again: resend what we sent before the Logon
    let mut h = Harness::new(Dictionary::fix44(), Box::new(MemoryStore::new()));
    h.logon();
    h.send("1", "112=X|");
    h.s.on_disconnect(&mut h.app);
    h.s.on_connect(h.now);
    let out = h.send("A", "98=0|108=30|789=2|");
    assert_eq!(out, vec!["35=A|34=3|98=0|108=30|789=4", "35=4|34=2|43=Y|36=3|123=Y"]);
    let too_high = {
        let mut h = Harness::new(Dictionary::fix44(), Box::new(MemoryStore::new()));
        h.send("A", "98=0|108=30|789=5|")
    };
    assert_eq!(
        too_high[0],
        "35=5|34=1|58=Tag 789 (NextExpectedMsgSeqNum) is higher than expected. Expected 1, Received 5"
    );
}

#[test]
fn file_store_keeps_sequence_numbers_across_restarts() {
    let dir = std::env::temp_dir().join(format!("tw-fix-session-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    {
        let mut h = Harness::new(Dictionary::fix42(), Box::new(FileStore::open(&dir).expect("open")));
        h.logon();
        h.send("D", "11=X|21=1|40=1|54=1|55=INTC|60=20231114-22:13:20|");
        h.s.sync_store().expect("sync");
    }
    let mut h = Harness::new(Dictionary::fix42(), Box::new(FileStore::open(&dir).expect("reopen")));
    assert_eq!((h.s.next_sender_seq(), h.s.next_target_seq()), (3, 3));
    h.seq = 3;
    assert_eq!(h.logon(), vec!["35=A|34=3|98=0|108=30"]);
    assert_eq!(h.send("2", "7=2|16=2|"), vec!["35=8|34=2|43=Y|37=1|11=X"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn invalid_messages_get_session_rejects_naming_the_tag() {
    let mut h = h42();
    h.logon();
    let out = h.send("D", "11=ID|21=4|40=1|54=1|55=INTC|60=20231114-22:13:20|");
    assert_eq!(
        out,
        vec!["35=3|34=2|45=2|58=Value is incorrect (out of range) for this tag, field=21|371=21|372=D|373=5"]
    );
    let out = h.send("D", "115=JCD|11=ID|21=1|40=w|54=1|55=INTC|60=20231114-22:13:20|");
    assert_eq!(
        out,
        vec!["35=3|34=3|128=JCD|45=3|58=Value is incorrect (out of range) for this tag, field=40|371=40|372=D|373=5"]
    );
    assert_eq!(h.s.next_target_seq(), 4);
}

#[test]
fn logon_with_reset_flag_resets_a_live_session() {
    let mut h = h42();
    h.logon();
    h.send("0", "");
    h.send("1", "112=1|");
    h.seq = 1;
    assert_eq!(h.send("A", "98=0|108=30|141=Y|"), vec!["35=A|34=1|98=0|108=30|141=Y"]);
    assert_eq!(h.send("1", "112=2|"), vec!["35=0|34=2|112=2"]);
    assert_eq!(h.app.logons, 1);
    // without the flag a second Logon ends the connection
    h.send("A", "98=0|108=30|");
    assert!(h.s.disconnect_reason().is_some());
}

#[test]
fn resend_of_messages_a_bounded_memory_store_dropped_is_gap_filled() {
    let mut h = Harness::new(Dictionary::fix42(), Box::new(MemoryStore::with_limit(1)));
    h.logon();
    // reports of 60 kB: about 17 fill the first 1 MiB chunk; the next one starts a new chunk
    // and the first (our Logon and the first reports) is dropped
    let text = format!("58={}\u{1}", "x".repeat(60_000));
    for n in 2..=21 {
        let body = format!("37={n}\u{1}11={n}\u{1}{text}");
        h.s.send_app(b"8", b"", body.as_bytes(), h.now);
    }
    h.take();
    let out = h.send("2", "7=1|16=0|");
    let first_kept: u64 = out[0]
        .strip_prefix("35=4|34=1|43=Y|36=")
        .and_then(|r| r.strip_suffix("|123=Y"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a gap fill from 1: {}", &out[0]));
    assert!(first_kept > 2 && first_kept < 21, "{first_kept}");
    let resent: Vec<String> = out[1..]
        .iter()
        .map(|m| m[..m.find("|58=").unwrap_or(m.len())].to_string())
        .collect();
    let want: Vec<String> = (first_kept..=21)
        .map(|n| format!("35=8|34={n}|43=Y|37={n}|11={n}"))
        .collect();
    assert_eq!(resent, want);
}

#[test]
fn a_store_that_cannot_void_gap_fills_and_refuses_logons_until_it_can() {
    use std::sync::atomic::Ordering;
    let dir = std::env::temp_dir().join(format!("tw-fix-voidfail-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (store, failing) = super::FailingStore::open(&dir, super::Refuses::Voids);
    let mut h = Harness::new(Dictionary::fix42(), Box::new(store));
    h.logon();
    h.s.send_app(b"8", b"", b"37=1\x0111=R1\x01", h.now);
    h.s.send_app(b"8", b"", b"37=2\x0111=P1\x01", h.now);
    h.take();
    failing.store(true, Ordering::Release);
    let e = h.s.void_sent(&[2]).expect_err("the store refuses the void");
    assert_eq!(h.s.store_error(), Some(e.to_string().as_str()));
    // R1 is never sent, also by resend, and no longer counts as sent
    let mut sent = Vec::new();
    h.s.for_each_sent(&mut |seq, _| sent.push(seq)).expect("read");
    assert_eq!(sent, vec![1, 3], "our Logon and P1");
    assert_eq!(
        h.send("2", "7=1|16=0|"),
        vec!["35=4|34=1|43=Y|36=3|123=Y", "35=8|34=3|43=Y|37=2|11=P1"]
    );
    // a Logon is refused while the store cannot record the void
    let text = format!("Session store failed, stored messages cannot be voided: {e}");
    for _ in 0..2 {
        h.s.on_disconnect(&mut h.app);
        h.s.on_connect(h.now);
        let out = h.logon();
        assert_eq!(out.len(), 1, "{out:?}");
        assert!(
            out[0].starts_with("35=5|") && out[0].ends_with(&format!("|58={text}")),
            "{out:?}"
        );
        assert_eq!(h.s.disconnect_reason(), Some(text.as_str()));
        assert!(!h.s.is_logged_on());
    }
    // the store works again: the next Logon records the void and goes on
    failing.store(false, Ordering::Release);
    h.s.on_disconnect(&mut h.app);
    h.s.on_connect(h.now);
    let out = h.logon();
    assert!(out[0].starts_with("35=A|34=6|"), "{out:?}");
    assert_eq!(h.s.store_error(), None);
    drop(h);
    let reopened = FileStore::open(&dir).expect("reopen");
    let mut kept = Vec::new();
    reopened.sent(1, 10, &mut |seq, _| kept.push(seq)).expect("read");
    assert!(!kept.contains(&2) && kept.contains(&3), "the void is durable: {kept:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn answers_the_store_cannot_take_are_kept_and_stored_before_the_next_logon() {
    use std::sync::atomic::Ordering;
    let dir = std::env::temp_dir().join(format!("tw-fix-savefail-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (store, failing) = super::FailingStore::open(&dir, super::Refuses::Saves);
    let mut h = Harness::new(Dictionary::fix42(), Box::new(store));
    h.logon();
    failing.store(true, Ordering::Release);
    // the answer to X1 cannot be stored: nothing is written, the session disconnects
    assert!(h
        .send("D", "11=X1|21=1|40=1|54=1|55=INTC|60=20231114-22:13:20|")
        .is_empty());
    assert!(h
        .s
        .disconnect_reason()
        .is_some_and(|r| r.starts_with("session store failed: ")));
    let e = std::io::Error::from_raw_os_error(28).to_string();
    assert_eq!(h.s.store_error(), Some(e.as_str()));
    assert_eq!((h.s.owed_len(), h.s.store_failures()), (1, 1));
    assert_eq!(h.s.next_target_seq(), 3, "X1 counts as received: its answer is kept");
    // a later report waits behind it
    assert_eq!(h.s.send_app(b"8", b"", b"37=2\x0111=X2\x01", h.now), None);
    assert_eq!(h.s.owed_len(), 2);
    // a Logon is refused while the store fails (the Logout cannot be stored either)
    h.s.on_disconnect(&mut h.app);
    h.s.on_connect(h.now);
    assert!(h.logon().is_empty());
    assert!(!h.s.is_logged_on() && h.s.disconnect_reason().is_some());
    assert_eq!(h.s.owed_len(), 2);
    // the store works again: the next Logon stores them first, a resend brings them
    failing.store(false, Ordering::Release);
    h.s.on_disconnect(&mut h.app);
    h.s.on_connect(h.now);
    assert_eq!(h.logon(), vec!["35=A|34=4|98=0|108=30"]);
    assert_eq!((h.s.owed_len(), h.s.store_error()), (0, None));
    assert_eq!(
        h.send("2", "7=2|16=0|"),
        vec![
            "35=8|34=2|43=Y|37=1|11=X1",
            "35=8|34=3|43=Y|37=2|11=X2",
            "35=4|34=4|43=Y|36=5|123=Y"
        ]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_reject_the_store_cannot_take_leaves_its_message_uncounted() {
    use std::sync::atomic::Ordering;
    let dir = std::env::temp_dir().join(format!("tw-fix-rejectfail-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (store, failing) = super::FailingStore::open(&dir, super::Refuses::Saves);
    let mut h = Harness::new(Dictionary::fix42(), Box::new(store));
    h.logon();
    failing.store(true, Ordering::Release);
    // HandlInst 4 does not exist: a session Reject, which the store cannot take
    assert!(h
        .send("D", "11=X1|21=4|40=1|54=1|55=INTC|60=20231114-22:13:20|")
        .is_empty());
    assert_eq!(
        h.s.next_target_seq(),
        2,
        "the resend after the next Logon brings it again"
    );
    assert_eq!(h.s.owed_len(), 0, "a Reject is not kept (a resend gap-fills it)");
    let _ = std::fs::remove_dir_all(&dir);
}
