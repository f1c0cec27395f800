//! One simulated user: a non-blocking WebSocket connection that logs in, subscribes to its
//! records, keeps the heartbeat, and feeds every received update into the worker's `Stats`.

use crate::clock::Clock;
use crate::scan;
use crate::stats::{SeqTracker, SeqVerdict, Stats};
use crate::ws::{self, Opcode, Upgrade};
use mio::net::TcpStream;
use std::io::{self, Read, Write};

/// Where a connection is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Connecting,
    Upgrading,
    LoggingIn,
    Subscribing,
    /// Logged in, subscribed, and every subscribed record's image received.
    Ready,
    Closed,
}

/// What the worker must do after a connection handled an event.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Nothing,
    /// The connection just became `Ready`.
    BecameReady,
    /// The connection ended; the text says why. `was_ready` tells a failed connect from a drop.
    Closed {
        reason: String,
        was_ready: bool,
    },
}

/// Per-connection settings shared by every connection of a run.
#[derive(Debug)]
pub struct ConnSpec {
    pub host: String,
    pub path: String,
    pub user: String,
    pub password: String,
    /// Log in with this token instead of user + password.
    pub token: Option<String>,
    pub max_frame_bytes: usize,
}

/// One simulated user.
pub struct Conn {
    pub stream: TcpStream,
    pub state: State,
    /// When the connection was opened, ms on the run clock (for the connect timeout).
    pub opened_ms: f64,
    subjects: Vec<String>,
    accept: String,
    inbuf: Vec<u8>,
    frag: Vec<u8>,
    outbuf: Vec<u8>,
    seq: SeqTracker,
    acked: usize,
    heartbeat_ms: f64,
    next_ping_ms: f64,
    next_req_id: u64,
    rng: u64,
}

const LOGIN_REQ: u64 = 1;
const SUBSCRIBE_REQ: u64 = 2;

impl Conn {
    /// A connection that is connecting to the server and will subscribe to `subjects`.
    pub fn new(stream: TcpStream, subjects: Vec<String>, seed: u64, now_ms: f64) -> Conn {
        Conn {
            stream,
            state: State::Connecting,
            opened_ms: now_ms,
            subjects,
            accept: String::new(),
            inbuf: Vec::with_capacity(4096),
            frag: Vec::new(),
            outbuf: Vec::new(),
            seq: SeqTracker::default(),
            acked: 0,
            heartbeat_ms: 5000.0,
            next_ping_ms: f64::MAX,
            next_req_id: 3,
            rng: seed | 1,
        }
    }

    fn random(&mut self) -> u64 {
        // xorshift64: masks and nonces only need to vary, not to be secret (load generator).
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    fn send_text(&mut self, text: &str) {
        let mask = (self.random() as u32).to_le_bytes();
        ws::encode_frame(&mut self.outbuf, 0x1, text.as_bytes(), mask);
    }

    /// Writes as much of the pending output as the socket takes.
    pub fn flush(&mut self) -> io::Result<()> {
        while !self.outbuf.is_empty() {
            match self.stream.write(&self.outbuf) {
                Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "socket closed")),
                Ok(n) => {
                    self.outbuf.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn close(&mut self, reason: String) -> Outcome {
        let was_ready = self.state == State::Ready;
        self.state = State::Closed;
        Outcome::Closed { reason, was_ready }
    }

    /// The socket became writable: finishes the TCP connect (sending the upgrade) and flushes.
    pub fn on_writable(&mut self, spec: &ConnSpec) -> Outcome {
        if self.state == State::Connecting {
            match self.stream.take_error() {
                Ok(Some(e)) | Err(e) => return self.close(format!("connect failed: {e}")),
                Ok(None) => {}
            }
            if let Err(e) = self.stream.peer_addr() {
                if e.kind() == io::ErrorKind::NotConnected {
                    return Outcome::Nothing; // spurious wake-up before the connect completed
                }
                return self.close(format!("connect failed: {e}"));
            }
            let mut nonce = [0u8; 16];
            nonce[..8].copy_from_slice(&self.random().to_le_bytes());
            nonce[8..].copy_from_slice(&self.random().to_le_bytes());
            let (req, accept) = ws::upgrade_request(&spec.host, &spec.path, nonce);
            self.accept = accept;
            self.outbuf.extend_from_slice(req.as_bytes());
            self.state = State::Upgrading;
        }
        match self.flush() {
            Ok(()) => Outcome::Nothing,
            Err(e) => self.close(format!("write failed: {e}")),
        }
    }

    /// Sends a heartbeat if one is due at `now_ms`.
    pub fn tick(&mut self, now_ms: f64) -> Outcome {
        if now_ms < self.next_ping_ms || self.state == State::Closed {
            return Outcome::Nothing;
        }
        self.next_ping_ms = now_ms + self.heartbeat_ms;
        let req = self.next_req_id;
        self.next_req_id += 1;
        self.send_text(&format!(r#"{{"type":"session.ping","reqId":{req},"ts":{now_ms:.3}}}"#));
        match self.flush() {
            Ok(()) => Outcome::Nothing,
            Err(e) => self.close(format!("write failed: {e}")),
        }
    }

    /// Reads everything the socket has (edge-triggered), handling each complete frame.
    pub fn on_readable(&mut self, spec: &ConnSpec, clock: &Clock, scratch: &mut [u8], stats: &mut Stats) -> Outcome {
        let mut outcome = Outcome::Nothing;
        loop {
            match self.stream.read(scratch) {
                Ok(0) => return self.close("server closed the connection".into()),
                Ok(n) => {
                    let recv_ms = clock.now_ms();
                    let result = if self.inbuf.is_empty() {
                        // common case: whole frames straight from the read buffer, copy only a partial tail
                        let data = &scratch[..n];
                        self.process(spec, data, recv_ms, stats).map(|(used, o)| {
                            self.inbuf.extend_from_slice(&data[used..]);
                            o
                        })
                    } else {
                        self.inbuf.extend_from_slice(&scratch[..n]);
                        let mut buf = std::mem::take(&mut self.inbuf);
                        let r = self.process(spec, &buf, recv_ms, stats);
                        if let Ok((used, _)) = &r {
                            buf.drain(..*used);
                        }
                        self.inbuf = buf;
                        r.map(|(_, o)| o)
                    };
                    match result {
                        Ok(o) => {
                            if o != Outcome::Nothing {
                                outcome = o;
                            }
                        }
                        Err(reason) => return self.close(reason),
                    }
                    if self.state == State::Closed {
                        return outcome;
                    }
                    if n < scratch.len() {
                        // A short read drained the socket: more data raises a new edge, so the
                        // extra read that would only return WouldBlock (one syscall per event) is skipped.
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return self.close(format!("read failed: {e}")),
            }
        }
        if let Err(e) = self.flush() {
            return self.close(format!("write failed: {e}"));
        }
        outcome
    }

    /// Handles the complete frames at the start of `buf`; returns the bytes used and the outcome.
    fn process(&mut self, spec: &ConnSpec, buf: &[u8], recv_ms: f64, stats: &mut Stats) -> Result<(usize, Outcome), String> {
        let mut pos = 0;
        if self.state == State::Upgrading {
            match ws::parse_upgrade_response(buf, &self.accept) {
                Upgrade::Incomplete => return Ok((0, Outcome::Nothing)),
                Upgrade::Refused(why) => return Err(why),
                Upgrade::Done(n) => {
                    pos = n;
                    self.state = State::LoggingIn;
                    let login = match &spec.token {
                        Some(token) => serde_json::json!({ "type": "session.login", "reqId": LOGIN_REQ, "token": token }),
                        None => serde_json::json!({
                            "type": "session.login", "reqId": LOGIN_REQ, "user": spec.user, "password": spec.password
                        }),
                    };
                    self.send_text(&login.to_string());
                }
            }
        }
        let mut outcome = Outcome::Nothing;
        let result = loop {
            let header = match ws::decode_frame(&buf[pos..], spec.max_frame_bytes) {
                Ok(Some(h)) => h,
                Ok(None) => break Ok(()),
                Err(e) => break Err(format!("bad frame from server: {e:?}")),
            };
            let payload = &buf[pos + header.start..pos + header.start + header.len];
            pos += header.start + header.len;
            stats.frames += 1;
            stats.bytes += header.len as u64;
            let r = match header.opcode {
                Opcode::Text | Opcode::Binary if header.fin && self.frag.is_empty() => self.on_messages(payload, recv_ms, stats),
                Opcode::Text | Opcode::Binary | Opcode::Continuation => {
                    self.frag.extend_from_slice(payload);
                    if header.fin {
                        let whole = std::mem::take(&mut self.frag);
                        self.on_messages(&whole, recv_ms, stats)
                    } else {
                        Ok(Outcome::Nothing)
                    }
                }
                Opcode::Ping => {
                    let mask = (self.random() as u32).to_le_bytes();
                    ws::encode_frame(&mut self.outbuf, 0xA, payload, mask);
                    Ok(Outcome::Nothing)
                }
                Opcode::Pong => Ok(Outcome::Nothing),
                Opcode::Close => {
                    let code = if payload.len() >= 2 {
                        u16::from_be_bytes([payload[0], payload[1]])
                    } else {
                        1005
                    };
                    let text = String::from_utf8_lossy(payload.get(2..).unwrap_or(&[])).into_owned();
                    break Err(format!("server closed with {code} {text}"));
                }
            };
            match r {
                Ok(Outcome::Nothing) => {}
                Ok(o) => outcome = o,
                Err(e) => break Err(e),
            }
        };
        result.map(|_| (pos, outcome))
    }

    fn on_messages(&mut self, payload: &[u8], recv_ms: f64, stats: &mut Stats) -> Result<Outcome, String> {
        let msgs = scan::scan_frame(payload).map_err(|e| format!("bad JSON frame from server: {e}"))?;
        let mut outcome = Outcome::Nothing;
        for m in msgs {
            match m.ty.as_ref() {
                "record.update" => {
                    let (Some(id), Some(seq)) = (m.id, m.seq) else { continue };
                    stats.updates += 1;
                    let conflated = m.conflated.unwrap_or(false);
                    if conflated {
                        stats.conflated += 1;
                    }
                    match self.seq.on_update(id, seq, conflated) {
                        SeqVerdict::Lost(n) => stats.lost += n,
                        SeqVerdict::OutOfOrder => stats.out_of_order += 1,
                        SeqVerdict::InOrder | SeqVerdict::First => {}
                    }
                    if let Some(ts) = m.ts {
                        stats.record_latency(recv_ms, ts);
                    }
                    if self.state == State::Subscribing && self.is_complete() {
                        outcome = self.ready();
                    }
                }
                "record.image" => {
                    let (Some(id), Some(seq)) = (m.id, m.seq) else { continue };
                    stats.images += 1;
                    self.seq.on_image(id, seq);
                    if self.state == State::Subscribing && self.is_complete() {
                        outcome = self.ready();
                    }
                }
                "session.loggedIn" if m.req_id == Some(LOGIN_REQ) => {
                    self.heartbeat_ms = m.heartbeat_ms.unwrap_or(5000).max(100) as f64;
                    self.state = State::Subscribing;
                    let subscribe = serde_json::json!({ "type": "record.subscribe", "reqId": SUBSCRIBE_REQ, "subjects": self.subjects });
                    self.send_text(&subscribe.to_string());
                    self.next_ping_ms = recv_ms + self.heartbeat_ms;
                }
                "record.subscribed" if m.req_id == Some(SUBSCRIBE_REQ) => {
                    self.acked += m.records.unwrap_or(0);
                    if self.state == State::Subscribing && self.is_complete() {
                        outcome = self.ready();
                    }
                }
                "error" => {
                    let code = m.code.as_deref().unwrap_or("?");
                    let message = m.message.as_deref().unwrap_or("");
                    return Err(format!("server error {code}: {message}"));
                }
                _ => {}
            }
        }
        Ok(outcome)
    }

    fn is_complete(&self) -> bool {
        self.acked >= self.subjects.len() && self.seq.len() >= self.subjects.len()
    }

    fn ready(&mut self) -> Outcome {
        self.state = State::Ready;
        Outcome::BecameReady
    }
}
