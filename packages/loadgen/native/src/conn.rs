//! One simulated user: a non-blocking WebSocket connection that logs in, subscribes to its
//! records, keeps the heartbeat, and feeds every received update into the worker's `Stats`.

use crate::clock::Clock;
use crate::link::{Connect, Event, Link};
use crate::scan;
use crate::stats::{SeqTracker, SeqVerdict, Stats};
use mio::net::TcpStream;
use tidewire_protocol::messages::kind;

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
    /// The socket and frame layer.
    pub link: Link,
    pub state: State,
    /// When the connection was opened, ms on the run clock (for the connect timeout).
    pub opened_ms: f64,
    subs: Subs,
}

/// What a fan-out user subscribes to and has received so far.
struct Subs {
    subjects: Vec<String>,
    seq: SeqTracker,
    acked: usize,
}

const LOGIN_REQ: u64 = 1;
const SUBSCRIBE_REQ: u64 = 2;

impl Conn {
    /// A connection that is connecting to the server and will subscribe to `subjects`.
    pub fn new(stream: TcpStream, subjects: Vec<String>, seed: u64, now_ms: f64) -> Conn {
        Conn {
            link: Link::new(stream, seed, 3),
            state: State::Connecting,
            opened_ms: now_ms,
            subs: Subs {
                subjects,
                seq: SeqTracker::default(),
                acked: 0,
            },
        }
    }

    fn close(&mut self, reason: String) -> Outcome {
        let was_ready = self.state == State::Ready;
        self.state = State::Closed;
        Outcome::Closed { reason, was_ready }
    }

    /// The socket became writable: finishes the TCP connect (sending the upgrade) and flushes.
    pub fn on_writable(&mut self, spec: &ConnSpec) -> Outcome {
        match self.link.on_writable(self.state == State::Connecting, &spec.host, &spec.path) {
            Ok(Connect::Upgrading) => self.state = State::Upgrading,
            Ok(Connect::Unchanged) => {}
            Err(reason) => return self.close(reason),
        }
        Outcome::Nothing
    }

    /// Sends a heartbeat if one is due at `now_ms`.
    pub fn tick(&mut self, now_ms: f64) -> Outcome {
        if self.state == State::Closed {
            return Outcome::Nothing;
        }
        match self.link.ping_if_due(now_ms) {
            Ok(()) => Outcome::Nothing,
            Err(reason) => self.close(reason),
        }
    }

    /// Reads everything the socket has (edge-triggered), handling each complete message.
    pub fn on_readable(&mut self, spec: &ConnSpec, clock: &Clock, scratch: &mut [u8], stats: &mut Stats) -> Outcome {
        let mut outcome = Outcome::Nothing;
        let Conn { link, state, subs, .. } = self;
        let r = link.on_readable(clock, scratch, spec.max_frame_bytes, |link, event, recv_ms| {
            match event {
                Event::Upgraded => {
                    *state = State::LoggingIn;
                    let login = match &spec.token {
                        Some(token) => serde_json::json!({ "type": "session.login", "reqId": LOGIN_REQ, "token": token }),
                        None => serde_json::json!({
                            "type": "session.login", "reqId": LOGIN_REQ, "user": spec.user, "password": spec.password
                        }),
                    };
                    link.send_text(&login.to_string());
                }
                Event::Frame(len) => {
                    stats.frames += 1;
                    stats.bytes += len as u64;
                }
                Event::Message(payload) => {
                    if subs.on_messages(link, state, payload, recv_ms, stats)? {
                        outcome = Outcome::BecameReady;
                    }
                }
            }
            Ok(())
        });
        match r {
            Ok(()) => outcome,
            Err(reason) => self.close(reason),
        }
    }
}

impl Subs {
    /// Handles the messages of one frame; true when the user just became `Ready`.
    fn on_messages(&mut self, link: &mut Link, state: &mut State, payload: &[u8], recv_ms: f64, stats: &mut Stats) -> Result<bool, String> {
        let msgs = scan::scan_frame(payload).map_err(|e| format!("bad JSON frame from server: {e}"))?;
        let mut ready = false;
        for m in msgs {
            match m.ty.as_ref() {
                kind::RECORD_UPDATE => {
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
                    if *state == State::Subscribing && self.is_complete() {
                        *state = State::Ready;
                        ready = true;
                    }
                }
                kind::RECORD_IMAGE => {
                    let (Some(id), Some(seq)) = (m.id, m.seq) else { continue };
                    stats.images += 1;
                    self.seq.on_image(id, seq);
                    if *state == State::Subscribing && self.is_complete() {
                        *state = State::Ready;
                        ready = true;
                    }
                }
                kind::SESSION_LOGGED_IN if m.req_id == Some(LOGIN_REQ) => {
                    *state = State::Subscribing;
                    let subscribe = serde_json::json!({ "type": "record.subscribe", "reqId": SUBSCRIBE_REQ, "subjects": self.subjects });
                    link.send_text(&subscribe.to_string());
                    link.start_heartbeat(m.heartbeat_ms.unwrap_or(5000).max(100) as f64, recv_ms);
                }
                kind::RECORD_SUBSCRIBED if m.req_id == Some(SUBSCRIBE_REQ) => {
                    self.acked += m.records.unwrap_or(0);
                    if *state == State::Subscribing && self.is_complete() {
                        *state = State::Ready;
                        ready = true;
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
        Ok(ready)
    }

    fn is_complete(&self) -> bool {
        self.acked >= self.subjects.len() && self.seq.len() >= self.subjects.len()
    }
}
