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
    /// Application messages sent (MsgSeqNum, MsgType, body): what a ResendRequest resends.
    sent: Vec<(u64, String, String)>,
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
            sent: Vec::new(),
        }
    }

    /// A new connection for the same session, keeping the sequence number and the messages
    /// sent (a ResendRequest on it resends them); this one is closed.
    pub fn reconnect(self, addr: SocketAddr) -> FixClient {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
        let mut c = FixClient::connect(addr, self.begin, &self.sender, &self.target, self.seq);
        c.sent = self.sent;
        c
    }

    /// Sends `msg_type` with body `fields` (`tag=value|...`; `<NOW>` is replaced by the time).
    pub fn send(&mut self, msg_type: &str, fields: &str) {
        let seq = self.seq;
        self.seq += 1;
        if !matches!(msg_type, "0" | "1" | "2" | "3" | "4" | "5" | "A") {
            self.sent.push((seq, msg_type.to_owned(), fields.to_owned()));
        }
        self.send_at(seq, msg_type, fields, "");
    }

    /// Sends `msg_type` as MsgSeqNum `seq` with extra header fields `header` (`tag=value|`).
    fn send_at(&mut self, seq: u64, msg_type: &str, fields: &str, header: &str) {
        let mut ts = Vec::new();
        tidewire_engine::fix::codec::time::push_utc_timestamp(&mut ts, now_ms());
        let expand = |f: &str| {
            let f = f
                .replace("<NOW>", std::str::from_utf8(&ts).expect("ascii"))
                .replace('|', "\u{1}");
            if f.is_empty() || f.ends_with('\u{1}') {
                f
            } else {
                format!("{f}\u{1}")
            }
        };
        let (body, header) = (expand(fields), expand(header));
        let mut b = Builder::new();
        b.begin(msg_type.as_bytes())
            .field(49, self.sender.as_bytes())
            .field(56, self.target.as_bytes())
            .field_u64(34, seq)
            .field_timestamp(52, now_ms())
            .raw(header.as_bytes())
            .raw(body.as_bytes());
        self.stream.write_all(b.finish(self.begin.as_bytes())).expect("write");
    }

    /// Answers the acceptor's ResendRequest `begin..=end` (0: up to the last sent): application
    /// messages again with PossDupFlag, the rest gap-filled.
    pub fn resend(&mut self, begin: u64, end: u64) {
        let end = if end == 0 { self.seq - 1 } else { end.min(self.seq - 1) };
        let mut seq = begin;
        while seq <= end {
            let stored = self.sent.iter().find(|m| m.0 == seq).cloned();
            match stored {
                Some((_, t, f)) => self.send_at(seq, &t, &f, "43=Y|122=<NOW>"),
                None => {
                    let next = self.sent.iter().map(|m| m.0).filter(|&s| s > seq && s <= end).min();
                    let new_seq = next.unwrap_or(end + 1);
                    self.send_at(seq, "4", &format!("123=Y|36={new_seq}"), "43=Y|122=<NOW>");
                    seq = new_seq;
                    continue;
                }
            }
            seq += 1;
        }
    }

    /// The next message, or `None` once the acceptor closed the connection.
    pub fn recv_or_closed(&mut self) -> Option<Msg> {
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
                    return Some(Msg(fields));
                }
                Some(Frame::Garbled(g)) => panic!("garbled from the acceptor: {g:?}"),
                None => {}
            }
            assert!(Instant::now() < deadline, "no message within {WAIT:?}");
            let mut buf = [0u8; 4096];
            match self.stream.read(&mut buf) {
                Ok(0) => return None,
                Ok(n) => self.framer.push(&buf[..n]),
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
                Err(_) => return None,
            }
        }
    }

    /// The next message (any type).
    pub fn recv(&mut self) -> Msg {
        self.recv_or_closed().expect("connection closed by the acceptor")
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
                "2" => {
                    let begin = m.at(7).parse().expect("BeginSeqNo");
                    let end = m.at(16).parse().expect("EndSeqNo");
                    self.resend(begin, end);
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
