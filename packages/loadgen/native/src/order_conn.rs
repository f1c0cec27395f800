//! One simulated trader connection of the orders preset: a non-blocking WebSocket that logs in
//! with a session token, sends the `order.submit`s its worker hands it, and matches each
//! `order.ack` / `order.reject` / `error` to its order by reqId (create -> ack from the schedule,
//! send -> ack from the send, per-client answer order, the acked `orderId`s). The TS counterpart
//! is the Node engine of packages/loadgen/src/presets/orders.ts; both count the same things.

use crate::clock::Clock;
use crate::link::{Connect, Event, Link};
use crate::order_codec::{encode_submit, order_of};
use crate::order_stats::OrderStats;
use crate::scan;
use crate::user::{UserOutcome, UserState};
use mio::net::TcpStream;
use std::collections::VecDeque;
use tidewire_protocol::messages::kind;

/// An order in flight.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Pending {
    req_id: u64,
    scheduled_ms: f64,
    sent_ms: f64,
    measured: bool,
}

/// What answers produced besides the interval's counters.
#[derive(Debug, Default)]
pub struct Answers {
    /// `orderId` of every ack of a pending order (measured or not: gaps are checked over all).
    pub order_ids: Vec<u64>,
    /// `error` frames that answer no order (the TS runner fails the run on them), and the last.
    pub unmatched_errors: u64,
    pub last_unmatched_error: Option<String>,
}

/// Reusable text buffers for encoding orders.
#[derive(Debug, Default)]
pub struct OrderBufs {
    id: String,
    instrument: String,
    frame: String,
}

const LOGIN_REQ: u64 = 1;
/// First reqId of orders and heartbeats (the TS runner's clients start at 10 too).
const FIRST_REQ: u64 = 10;

/// One trader connection.
pub struct OrderConn {
    pub link: Link,
    pub state: UserState,
    /// When the connection was opened, ms on the run clock (for the connect timeout).
    pub opened_ms: f64,
    token: std::sync::Arc<str>,
    pending: VecDeque<Pending>,
    last_answered_req: u64,
}

impl OrderConn {
    /// A connection that is connecting and will log in with `token`.
    pub fn new(stream: TcpStream, token: std::sync::Arc<str>, seed: u64, now_ms: f64) -> OrderConn {
        OrderConn {
            link: Link::new(stream, seed, FIRST_REQ),
            state: UserState::Connecting,
            opened_ms: now_ms,
            token,
            pending: VecDeque::new(),
            last_answered_req: 0,
        }
    }

    /// Marks the connection closed and says why.
    pub fn close(&mut self, reason: String) -> UserOutcome {
        let was_live = self.state == UserState::Live;
        self.state = UserState::Closed;
        UserOutcome::Closed { reason, was_live }
    }

    /// Sends a WebSocket close (1000) if logged in and the socket takes it now, then shuts the socket.
    pub fn goodbye(&mut self) {
        self.link.goodbye(matches!(self.state, UserState::LoggingIn | UserState::Live));
    }

    /// Orders in flight: (all, measured).
    pub fn in_flight(&self) -> (usize, usize) {
        (self.pending.len(), self.pending.iter().filter(|p| p.measured).count())
    }

    /// Forgets every order in flight (the take's response timeout passed); returns the measured ones.
    pub fn forget_pending(&mut self) -> u64 {
        let measured = self.pending.iter().filter(|p| p.measured).count() as u64;
        self.pending.clear();
        measured
    }

    /// Encodes and sends order `k` (scheduled at `scheduled_ms`, sent now at `sent_ms`); queued
    /// until the socket takes it. Err: the reason to close with.
    pub fn submit(&mut self, k: u64, prefix: &str, scheduled_ms: f64, sent_ms: f64, measured: bool, bufs: &mut OrderBufs) -> UserOutcome {
        let req_id = self.link.next_req_id();
        let order = order_of(k, prefix, &mut bufs.id, &mut bufs.instrument);
        encode_submit(&mut bufs.frame, req_id, &order);
        self.link.send_text(&bufs.frame);
        self.pending.push_back(Pending {
            req_id,
            scheduled_ms,
            sent_ms,
            measured,
        });
        match self.link.flush_or_reason() {
            Ok(()) => UserOutcome::Nothing,
            Err(reason) => self.close(reason),
        }
    }

    /// The socket became writable: finishes the TCP connect (sending the upgrade) and flushes.
    pub fn on_writable(&mut self, host: &str, path: &str) -> UserOutcome {
        match self.link.on_writable(self.state == UserState::Connecting, host, path) {
            Ok(Connect::Upgrading) => self.state = UserState::Upgrading,
            Ok(Connect::Unchanged) => {}
            Err(reason) => return self.close(reason),
        }
        UserOutcome::Nothing
    }

    /// Sends a heartbeat if one is due.
    pub fn tick(&mut self, now_ms: f64) -> UserOutcome {
        if self.state != UserState::Live {
            return UserOutcome::Nothing;
        }
        match self.link.ping_if_due(now_ms) {
            Ok(()) => UserOutcome::Nothing,
            Err(reason) => self.close(reason),
        }
    }

    /// Reads everything the socket has (edge-triggered), handling each complete message.
    pub fn on_readable(
        &mut self,
        clock: &Clock,
        scratch: &mut [u8],
        max_frame_bytes: usize,
        stats: &mut OrderStats,
        answers: &mut Answers,
    ) -> UserOutcome {
        let mut outcome = UserOutcome::Nothing;
        let r = {
            let OrderConn {
                link,
                state,
                token,
                pending,
                last_answered_req,
                ..
            } = self;
            let mut user = User {
                state,
                token,
                pending,
                last_answered_req,
            };
            link.on_readable(clock, scratch, max_frame_bytes, |link, event, recv_ms| {
                match event {
                    Event::Upgraded => {
                        *user.state = UserState::LoggingIn;
                        let login = serde_json::json!({ "type": "session.login", "reqId": LOGIN_REQ, "token": &**user.token });
                        link.send_text(&login.to_string());
                    }
                    Event::Frame(_) => {}
                    Event::Message(payload) => {
                        if user.on_frame(link, payload, recv_ms, stats, answers)? {
                            outcome = UserOutcome::LoggedIn;
                        }
                    }
                }
                Ok(())
            })
        };
        match r {
            Ok(()) => outcome,
            Err(reason) => self.close(reason),
        }
    }

    /// Handles one whole message as `on_readable` does (the tests feed frames directly).
    #[cfg(test)]
    fn on_frame(&mut self, payload: &[u8], at: f64, stats: &mut OrderStats, answers: &mut Answers) -> Result<bool, String> {
        let mut user = User {
            state: &mut self.state,
            token: &self.token,
            pending: &mut self.pending,
            last_answered_req: &mut self.last_answered_req,
        };
        user.on_frame(&mut self.link, payload, at, stats, answers)
    }
}

/// The connection's state borrowed apart from its link (the link's read callback gets the link).
struct User<'a> {
    state: &'a mut UserState,
    token: &'a std::sync::Arc<str>,
    pending: &'a mut VecDeque<Pending>,
    last_answered_req: &'a mut u64,
}

impl User<'_> {
    /// Handles the messages of one frame; Ok(true) when it logged the user in.
    fn on_frame(
        &mut self,
        link: &mut Link,
        payload: &[u8],
        recv_ms: f64,
        stats: &mut OrderStats,
        answers: &mut Answers,
    ) -> Result<bool, String> {
        let msgs = scan::scan_frame(payload).map_err(|e| format!("bad JSON frame from server: {e}"))?;
        let mut logged_in = false;
        for m in msgs {
            let ty = m.ty.as_ref();
            if *self.state == UserState::LoggingIn {
                match ty {
                    kind::SESSION_LOGGED_IN if m.req_id == Some(LOGIN_REQ) => {
                        link.start_heartbeat(m.heartbeat_ms.unwrap_or(5000).max(100) as f64, recv_ms);
                        *self.state = UserState::Live;
                        logged_in = true;
                    }
                    "error" => {
                        let code = m.code.as_deref().unwrap_or("?");
                        return Err(format!("login failed: {code}: {}", m.message.as_deref().unwrap_or("")));
                    }
                    _ => {}
                }
                continue;
            }
            if ty != kind::ORDER_ACK && ty != kind::ORDER_REJECT && ty != kind::ERROR {
                continue;
            }
            // acks come in submission order on one connection: the answer is nearly always the front
            let found = m.req_id.and_then(|r| self.pending.iter().position(|p| p.req_id == r));
            let Some(i) = found else {
                if ty == "error" {
                    answers.unmatched_errors += 1;
                    answers.last_unmatched_error = Some(format!(
                        "server error {}: {}",
                        m.code.as_deref().unwrap_or("?"),
                        m.message.as_deref().unwrap_or("")
                    ));
                }
                continue;
            };
            let Some(p) = self.pending.remove(i) else { continue };
            if p.req_id < *self.last_answered_req && p.measured {
                stats.out_of_order += 1;
            }
            *self.last_answered_req = (*self.last_answered_req).max(p.req_id);
            if ty == kind::ORDER_ACK {
                if let Some(id) = m.order_id {
                    answers.order_ids.push(id);
                }
            }
            if !p.measured {
                continue;
            }
            match ty {
                kind::ORDER_ACK => stats.on_ack(recv_ms, p.scheduled_ms, p.sent_ms),
                kind::ORDER_REJECT => {
                    stats.rejected += 1;
                    stats.last_reject = Some(format!(
                        "{}/{}: {}",
                        m.field.as_deref().unwrap_or("?"),
                        m.rule.as_deref().unwrap_or("?"),
                        m.message.as_deref().unwrap_or("")
                    ));
                }
                _ => {
                    stats.rejected += 1;
                    stats.last_reject = Some(format!(
                        "{}: {}",
                        m.code.as_deref().unwrap_or("?"),
                        m.message.as_deref().unwrap_or("")
                    ));
                }
            }
        }
        Ok(logged_in)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// Reads one masked client text frame (payload < 64 KiB) from a blocking socket.
    fn read_client_text(s: &mut std::net::TcpStream) -> Vec<u8> {
        let mut head = [0u8; 2];
        s.read_exact(&mut head).expect("frame head");
        assert_eq!((head[0], head[1] & 0x80), (0x81, 0x80), "a final, masked text frame");
        let mut len = (head[1] & 0x7f) as usize;
        if len == 126 {
            let mut ext = [0u8; 2];
            s.read_exact(&mut ext).expect("length");
            len = u16::from_be_bytes(ext) as usize;
        }
        let mut mask = [0u8; 4];
        s.read_exact(&mut mask).expect("mask");
        let mut payload = vec![0u8; len];
        s.read_exact(&mut payload).expect("payload");
        for (i, b) in payload.iter_mut().enumerate() {
            *b ^= mask[i & 3];
        }
        payload
    }

    /// A logged-in connection on a real loopback socket; the server side is returned to read from.
    fn live_conn() -> (OrderConn, std::net::TcpStream) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let std_stream = std::net::TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        std_stream.set_nonblocking(true).expect("nonblocking");
        let (server, _) = listener.accept().expect("accept");
        let mut c = OrderConn::new(TcpStream::from_std(std_stream), std::sync::Arc::from("tok"), 42, 0.0);
        c.state = UserState::LoggingIn;
        let (mut stats, mut answers) = (OrderStats::default(), Answers::default());
        let login = br#"[{"type":"session.loggedIn","reqId":1,"heartbeatMs":1000}]"#;
        assert_eq!(c.on_frame(login, 1.0, &mut stats, &mut answers), Ok(true));
        assert_eq!(c.state, UserState::Live);
        (c, server)
    }

    #[test]
    fn sends_orders_and_matches_acks_rejects_and_errors() {
        let (mut c, mut server) = live_conn();
        let (mut stats, mut answers) = (OrderStats::default(), Answers::default());
        let mut bufs = OrderBufs::default();
        // reqIds 10..13: order 10 unmeasured (warm-up), the rest measured
        assert_eq!(c.submit(5, "P", 100.0, 100.1, false, &mut bufs), UserOutcome::Nothing);
        for k in 6..9 {
            c.submit(k, "P", 100.0 + k as f64, 100.5 + k as f64, true, &mut bufs);
        }
        assert_eq!(c.in_flight(), (4, 3));
        // the server got four masked text frames; the first is order 5 with reqId 10
        server.set_read_timeout(Some(std::time::Duration::from_secs(5))).expect("timeout");
        let v: serde_json::Value = serde_json::from_slice(&read_client_text(&mut server)).expect("JSON");
        assert_eq!((v["reqId"].as_u64(), v["clientOrderId"].as_str()), (Some(10), Some("P-5")));

        let frame = br#"[{"type":"order.ack","reqId":10,"action":"submit","clientOrderId":"P-5","orderId":7,"seq":1,"status":"acknowledged"},{"type":"order.ack","reqId":12,"action":"submit","clientOrderId":"P-7","orderId":9,"seq":3,"status":"acknowledged"}]"#;
        c.on_frame(frame, 110.0, &mut stats, &mut answers).expect("acks");
        // 11 after 12: out of order; a reject and an error answer the last two
        let frame = br#"[{"type":"order.ack","reqId":11,"action":"submit","clientOrderId":"P-6","orderId":8,"seq":2,"status":"acknowledged"},{"type":"order.reject","reqId":13,"action":"submit","clientOrderId":"P-8","field":"quantity","rule":"aboveLimit","message":"too big"}]"#;
        c.on_frame(frame, 111.0, &mut stats, &mut answers).expect("ack and reject");
        assert_eq!((stats.acked, stats.rejected, stats.out_of_order), (2, 1, 1));
        assert_eq!(answers.order_ids, vec![7, 9, 8]);
        assert_eq!(stats.last_reject.as_deref(), Some("quantity/aboveLimit: too big"));
        // order 7: due 107, sent 107.5, acked 110 (3 / 2.5 ms); order 6: due 106, sent 106.5, acked 111 (5 / 4.5 ms)
        let h = &stats.create_to_ack;
        assert_eq!(
            (h.len(), h.min(), h.max()),
            (2, h.lowest_equivalent(3000), h.highest_equivalent(5000))
        );
        let h = &stats.sent_to_ack;
        assert_eq!(
            (h.len(), h.min(), h.max()),
            (2, h.lowest_equivalent(2500), h.highest_equivalent(4500))
        );
        assert_eq!(c.in_flight(), (0, 0));
        c.submit(9, "P", 120.0, 120.0, true, &mut bufs);
        let err = br#"[{"type":"error","reqId":14,"code":"RATE_LIMITED","message":"slow down"}]"#;
        c.on_frame(err, 121.0, &mut stats, &mut answers).expect("error");
        assert_eq!((stats.rejected, stats.last_reject.as_deref()), (2, Some("RATE_LIMITED: slow down")));
        // an error that answers no order is reported apart; unknown acks and other types are ignored
        let stray = br#"[{"type":"error","code":"INTERNAL","message":"boom"},{"type":"order.ack","reqId":99,"action":"submit","clientOrderId":"x","orderId":1,"seq":1,"status":"acknowledged"},{"type":"session.pong","reqId":15,"ts":1}]"#;
        c.on_frame(stray, 122.0, &mut stats, &mut answers).expect("stray");
        assert_eq!((answers.unmatched_errors, answers.order_ids.len()), (1, 3));
        assert_eq!(answers.last_unmatched_error.as_deref(), Some("server error INTERNAL: boom"));
        c.submit(10, "P", 130.0, 130.0, true, &mut bufs);
        c.submit(11, "P", 130.0, 130.0, false, &mut bufs);
        assert_eq!(c.forget_pending(), 1);
        assert!(c.on_frame(b"[{", 140.0, &mut stats, &mut answers).is_err());
    }

    #[test]
    fn a_refused_login_is_an_error() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let std_stream = std::net::TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        let mut c = OrderConn::new(TcpStream::from_std(std_stream), std::sync::Arc::from("bad"), 1, 0.0);
        c.state = UserState::LoggingIn;
        let (mut stats, mut answers) = (OrderStats::default(), Answers::default());
        let r = c.on_frame(
            br#"[{"type":"error","reqId":1,"code":"AUTH_FAILED","message":"bad token"}]"#,
            1.0,
            &mut stats,
            &mut answers,
        );
        assert_eq!(r, Err("login failed: AUTH_FAILED: bad token".into()));
    }
}
