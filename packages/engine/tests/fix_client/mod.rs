//! A plain FIX initiator over TCP for the gateway tests (included with `#[path]`): builds
//! messages with the engine's own builder (BodyLength and CheckSum are its job), reads with its
//! framer and parser, and keeps its own MsgSeqNum.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use tidewire_engine::fix::codec::{Builder, Frame, Framer, Parser};

/// How long a message may take to arrive before the test fails.
pub const WAIT: Duration = Duration::from_secs(10);

/// One received message: its fields in order.
#[derive(Debug, Clone)]
pub struct Msg(pub Vec<(u32, String)>);

impl Msg {
    /// The value of `tag`, if present.
    pub fn get(&self, tag: u32) -> Option<&str> {
        self.0.iter().find(|(t, _)| *t == tag).map(|(_, v)| v.as_str())
    }
    /// The value of `tag`; panics naming the message when absent.
    pub fn at(&self, tag: u32) -> &str {
        self.get(tag).unwrap_or_else(|| panic!("no tag {tag} in {self:?}"))
    }
    /// MsgType.
    pub fn msg_type(&self) -> &str {
        self.at(35)
    }
}

/// The counterparty's side of a session.
pub struct FixClient {
    stream: TcpStream,
    framer: Framer,
    begin: &'static str,
    sender: String,
    target: String,
    /// MsgSeqNum of the next message sent.
    pub seq: u64,
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_millis() as i64
}

impl FixClient {
    /// Connects as `sender` (their CompID) to `target` (ours) on `begin` (`FIX.4.2` / `FIX.4.4`).
    pub fn connect(addr: SocketAddr, begin: &'static str, sender: &str, target: &str, seq: u64) -> FixClient {
        let stream = TcpStream::connect(addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_millis(100)))
            .expect("timeout");
        FixClient {
            stream,
            framer: Framer::new(1 << 16),
            begin,
            sender: sender.into(),
            target: target.into(),
            seq,
        }
    }

    /// Sends `msg_type` with body `fields` (`tag=value|...`; `<NOW>` is replaced by the time).
    pub fn send(&mut self, msg_type: &str, fields: &str) {
        let mut ts = Vec::new();
        tidewire_engine::fix::codec::time::push_utc_timestamp(&mut ts, now_ms());
        let body = fields
            .replace("<NOW>", std::str::from_utf8(&ts).expect("ascii"))
            .replace('|', "\u{1}");
        let body = if body.is_empty() || body.ends_with('\u{1}') {
            body
        } else {
            format!("{body}\u{1}")
        };
        let mut b = Builder::new();
        b.begin(msg_type.as_bytes())
            .field(49, self.sender.as_bytes())
            .field(56, self.target.as_bytes())
            .field_u64(34, self.seq)
            .field_timestamp(52, now_ms())
            .raw(body.as_bytes());
        self.seq += 1;
        self.stream.write_all(b.finish(self.begin.as_bytes())).expect("write");
    }

    /// The next message (any type).
    pub fn recv(&mut self) -> Msg {
        let deadline = Instant::now() + WAIT;
        loop {
            match self.framer.next_frame() {
                Some(Frame::Message(r)) => {
                    let mut p = Parser::new();
                    let m = p.parse(&self.framer.bytes()[r]).expect("parses");
                    let fields = m
                        .fields()
                        .map(|(t, v)| (t as u32, String::from_utf8_lossy(v).into_owned()))
                        .collect();
                    return Msg(fields);
                }
                Some(Frame::Garbled(g)) => panic!("garbled from the acceptor: {g:?}"),
                None => {}
            }
            assert!(Instant::now() < deadline, "no message within {WAIT:?}");
            let mut buf = [0u8; 4096];
            match self.stream.read(&mut buf) {
                Ok(0) => panic!("connection closed by the acceptor"),
                Ok(n) => self.framer.push(&buf[..n]),
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
                Err(e) => panic!("read: {e}"),
            }
        }
    }

    /// The next application message (heartbeats, test requests and gap fills answered or skipped).
    pub fn next_app(&mut self) -> Msg {
        loop {
            let m = self.recv();
            match m.msg_type() {
                "0" | "4" => {}
                "1" => {
                    let id = m.at(112).to_owned();
                    self.send("0", &format!("112={id}"));
                }
                _ => return m,
            }
        }
    }

    /// Logs on (HeartBtInt 30) and returns the acceptor's Logon.
    pub fn logon(&mut self) -> Msg {
        self.send("A", "98=0|108=30");
        let m = self.recv();
        assert_eq!(m.msg_type(), "A", "{m:?}");
        m
    }

    /// Closes the connection without a Logout (a dropped line).
    pub fn drop_line(self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}
