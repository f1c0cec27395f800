//! The acceptor with a file store and an application that answers later from another thread:
//! the later ExecutionReport arrives, and after a restart the sequence numbers continue and the
//! report is resent (PossDupFlag) on request.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tidewire_engine::fix::acceptor::{
    Acceptor, AcceptorConfig, Application, EchoApplication, NewOrderSingle, SessionHandle, SessionSettings, Side,
};
use tidewire_engine::fix::codec::{Builder, Frame, Framer, Parser};
use tidewire_engine::fix::dictionary::Dictionary;
use tidewire_engine::fix::session::{BusinessReject, Outbox, SessionConfig, SystemClock};

/// Acknowledges nothing inline; a worker thread sends the ExecutionReport through the handle.
struct LaterFills {
    work: Mutex<Sender<(SessionHandle, String)>>,
}

impl Application for LaterFills {
    fn on_new_order(
        &self,
        order: &NewOrderSingle<'_>,
        _reply: &mut Outbox,
        session: &SessionHandle,
    ) -> Result<(), BusinessReject> {
        assert_eq!(order.side(), Some(Side::Buy));
        assert_eq!(session.user(), "alice");
        let id = order
            .cl_ord_id()
            .ok_or(BusinessReject::conditionally_required(11))?
            .to_string();
        self.work
            .lock()
            .map_err(|_| BusinessReject::unsupported_message_type())?
            .send((session.clone(), id))
            .ok();
        Ok(())
    }
}

fn start(dir: &std::path::Path) -> (Acceptor, std::thread::JoinHandle<()>) {
    let (tx, rx) = channel::<(SessionHandle, String)>();
    let worker = std::thread::spawn(move || {
        for (session, id) in rx {
            session.send(&report(&id, "E1"));
        }
    });
    let settings = SessionSettings {
        config: SessionConfig::new(Dictionary::fix42(), "TW", "CLIENT"),
        user: "alice".into(),
    };
    let mut cfg = AcceptorConfig::new("127.0.0.1:0".parse().expect("addr"), vec![settings]);
    cfg.store_dir = Some(dir.to_path_buf());
    let app = Arc::new(LaterFills { work: Mutex::new(tx) });
    (
        Acceptor::start(cfg, app, Arc::new(SystemClock::default())).expect("start"),
        worker,
    )
}

struct Client {
    s: TcpStream,
    f: Framer,
    seq: u64,
}

impl Client {
    fn connect(addr: SocketAddr, seq: u64) -> Client {
        let s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
        Client {
            s,
            f: Framer::new(1 << 16),
            seq,
        }
    }

    fn send(&mut self, msg_type: &str, fields: &str) {
        let bytes = self.encode(msg_type, fields);
        self.s.write_all(&bytes).expect("write");
    }

    /// The next message, encoded with the next sequence number, for the caller to write.
    fn encode(&mut self, msg_type: &str, fields: &str) -> Vec<u8> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("time")
            .as_millis() as i64;
        let mut b = Builder::new();
        b.begin(msg_type.as_bytes())
            .field(49, b"CLIENT")
            .field(56, b"TW")
            .field_u64(34, self.seq)
            .field_timestamp(52, now)
            .raw(fields.replace('|', "\u{1}").as_bytes());
        self.seq += 1;
        b.finish(b"FIX.4.2").to_vec()
    }

    /// The next message as "tag=value|..." without 8, 9, 10, 49, 52, 56, 122.
    fn recv(&mut self) -> String {
        loop {
            if let Some(Frame::Message(r)) = self.f.next_frame() {
                let mut p = Parser::new();
                let m = p.parse(&self.f.bytes()[r]).expect("parses");
                let parts: Vec<String> = m
                    .fields()
                    .filter(|(t, _)| ![8, 9, 10, 49, 52, 56, 122].contains(t))
                    .map(|(t, v)| format!("{t}={}", String::from_utf8_lossy(v)))
                    .collect();
                return parts.join("|");
            }
            let n = self.f.read_from(&mut self.s).expect("read");
            assert!(n > 0, "acceptor closed the connection");
        }
    }

    fn closed(&mut self) -> bool {
        let mut b = [0u8; 64];
        matches!(self.s.read(&mut b), Ok(0) | Err(_))
    }
}

#[test]
fn later_reports_are_sent_stored_and_resent_after_a_restart() {
    let dir = std::env::temp_dir().join(format!("tw-fix-acceptor-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (acceptor, worker) = start(&dir);
    let mut c = Client::connect(acceptor.local_addr(), 1);
    c.send("A", "98=0|108=30|");
    assert_eq!(c.recv(), "35=A|34=1|98=0|108=30");
    c.send("D", "11=ORD1|21=1|40=1|54=1|38=100|55=INTC|60=20240101-10:00:00|");
    assert_eq!(
        c.recv(),
        "35=8|34=2|37=O1|11=ORD1|17=E1|20=0|150=0|39=0|55=INTC|54=1|151=100|14=0|6=0"
    );
    // a second connection for the live session is refused; the first one is untouched
    let mut second = Client::connect(acceptor.local_addr(), 1);
    second.send("A", "98=0|108=30|");
    assert!(second.closed());
    c.send("1", "112=still-here|");
    assert_eq!(c.recv(), "35=0|34=3|112=still-here");
    drop(c);
    acceptor.stop();
    worker.join().expect("worker");

    let (acceptor, worker) = start(&dir);
    let mut c = Client::connect(acceptor.local_addr(), 4);
    c.send("A", "98=0|108=30|");
    assert_eq!(c.recv(), "35=A|34=4|98=0|108=30");
    c.send("2", "7=2|16=2|");
    assert_eq!(
        c.recv(),
        "35=8|34=2|43=Y|37=O1|11=ORD1|17=E1|20=0|150=0|39=0|55=INTC|54=1|151=100|14=0|6=0"
    );
    c.send("5", "");
    assert_eq!(c.recv(), "35=5|34=5");
    assert!(c.closed());
    acceptor.stop();
    worker.join().expect("worker");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An acceptor echoing NewOrderSingles (the acceptance test mode), its store in memory.
fn start_echo() -> Acceptor {
    let settings = SessionSettings {
        config: SessionConfig::new(Dictionary::fix42(), "TW", "CLIENT"),
        user: "alice".into(),
    };
    let mut cfg = AcceptorConfig::new("127.0.0.1:0".parse().expect("addr"), vec![settings]);
    cfg.memory_stores = vec![true];
    Acceptor::start(cfg, Arc::new(EchoApplication::new()), Arc::new(SystemClock::default())).expect("start")
}

const ORDER: &str = "21=1|40=1|54=1|38=100|55=INTC|60=20240101-10:00:00|";

#[test]
fn messages_that_arrive_together_are_each_answered_in_order() {
    let acceptor = start_echo();
    let mut c = Client::connect(acceptor.local_addr(), 1);
    c.send("A", "98=0|108=30|");
    assert_eq!(c.recv(), "35=A|34=1|98=0|108=30");
    // 200 orders in one write: the acceptor reads many in one read and answers them as a batch
    let mut burst = Vec::new();
    for i in 0..200 {
        burst.extend(c.encode("D", &format!("11=B{i}|{ORDER}")));
    }
    c.s.write_all(&burst).expect("write");
    for i in 0..200u64 {
        assert_eq!(
            c.recv(),
            format!(
                "35=D|34={}|11=B{i}|21=1|40=1|54=1|38=100|55=INTC|60=20240101-10:00:00",
                i + 2
            )
        );
    }
    // and the session goes on as before
    c.send("1", "112=after|");
    assert_eq!(c.recv(), "35=0|34=202|112=after");
    acceptor.stop();
}

#[test]
fn a_message_that_ends_the_session_leaves_the_rest_of_its_read_unanswered() {
    let acceptor = start_echo();
    let mut c = Client::connect(acceptor.local_addr(), 1);
    c.send("A", "98=0|108=30|");
    assert_eq!(c.recv(), "35=A|34=1|98=0|108=30");
    let mut burst = c.encode("D", &format!("11=FIRST|{ORDER}"));
    // MsgSeqNum 1 again, without PossDupFlag: too low, the acceptor logs out and disconnects
    c.seq = 1;
    burst.extend(c.encode("D", &format!("11=LOW|{ORDER}")));
    c.seq = 3;
    burst.extend(c.encode("D", &format!("11=AFTER|{ORDER}")));
    c.s.write_all(&burst).expect("write");
    assert_eq!(
        c.recv(),
        "35=D|34=2|11=FIRST|21=1|40=1|54=1|38=100|55=INTC|60=20240101-10:00:00"
    );
    let logout = c.recv();
    assert!(logout.starts_with("35=5|34=3|58=MsgSeqNum too low"), "{logout}");
    assert!(c.closed(), "the connection ends after the Logout, AFTER never echoed");
    acceptor.stop();
}

/// An ExecutionReport (New) with ClOrdID `id` and ExecID `exec_id`, for sending through a handle.
fn report(id: &str, exec_id: &str) -> Outbox {
    let mut out = Outbox::new();
    out.message(b"8")
        .field(37, b"O1")
        .field(11, id.as_bytes())
        .field(17, exec_id.as_bytes())
        .field(20, b"0")
        .field(150, b"0")
        .field(39, b"0")
        .field(55, b"INTC")
        .field(54, b"1")
        .field(151, b"100")
        .field(14, b"0")
        .field(6, b"0");
    out
}

fn field<'a>(msg: &'a str, tag: &str) -> Option<&'a str> {
    msg.split('|')
        .find_map(|f| f.strip_prefix(tag).and_then(|v| v.strip_prefix('=')))
}

#[test]
fn reports_from_another_thread_and_inline_answers_arrive_in_order_and_stored() {
    let dir = std::env::temp_dir().join(format!("tw-fix-acceptor-commit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    const REPORTS: usize = 400;
    const TESTS: usize = 200;
    let (acceptor, worker) = start(&dir);
    let mut c = Client::connect(acceptor.local_addr(), 1);
    c.send("A", "98=0|108=30|");
    assert_eq!(c.recv(), "35=A|34=1|98=0|108=30");
    let handle = acceptor.session("FIX.4.2", "TW", "CLIENT").expect("session");
    // reports from a thread (their syncs go to the committer) while the connection thread
    // answers TestRequests: both orders hold and MsgSeqNum has no gap
    let sender = std::thread::spawn(move || {
        for i in 0..REPORTS {
            let id = format!("R{i}");
            handle.send(&report(&id, &id));
        }
    });
    for i in 0..TESTS {
        c.send("1", &format!("112=T{i}|"));
    }
    let (mut reports, mut heartbeats) = (Vec::new(), Vec::new());
    for want_seq in 2..2 + (REPORTS + TESTS) as u64 {
        let m = c.recv();
        assert_eq!(field(&m, "34"), Some(want_seq.to_string().as_str()), "{m}");
        match field(&m, "35") {
            Some("8") => reports.push(field(&m, "11").unwrap_or_default().to_string()),
            Some("0") => heartbeats.push(field(&m, "112").unwrap_or_default().to_string()),
            _ => panic!("unexpected {m}"),
        }
    }
    sender.join().expect("sender");
    assert_eq!(reports, (0..REPORTS).map(|i| format!("R{i}")).collect::<Vec<_>>());
    assert_eq!(heartbeats, (0..TESTS).map(|i| format!("T{i}")).collect::<Vec<_>>());
    drop(c);
    acceptor.stop();
    worker.join().expect("worker");

    // every message written was stored: after a restart all reports are resent, heartbeats
    // gap-filled
    let last = 1 + (REPORTS + TESTS) as u64;
    let (acceptor, worker) = start(&dir);
    let mut c = Client::connect(acceptor.local_addr(), 2 + TESTS as u64);
    c.send("A", "98=0|108=30|");
    assert_eq!(c.recv(), format!("35=A|34={}|98=0|108=30", last + 1));
    c.send("2", &format!("7=2|16={last}|"));
    let mut resent = Vec::new();
    let mut next = 2u64;
    while next <= last {
        let m = c.recv();
        assert_eq!(field(&m, "34"), Some(next.to_string().as_str()), "{m}");
        assert_eq!(field(&m, "43"), Some("Y"), "{m}");
        match field(&m, "35") {
            Some("8") => {
                resent.push(field(&m, "11").unwrap_or_default().to_string());
                next += 1;
            }
            Some("4") => next = field(&m, "36").and_then(|v| v.parse().ok()).expect("NewSeqNo"),
            _ => panic!("unexpected {m}"),
        }
    }
    assert_eq!(resent, reports);
    acceptor.stop();
    worker.join().expect("worker");
    let _ = std::fs::remove_dir_all(&dir);
}
