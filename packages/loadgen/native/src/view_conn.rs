//! One simulated view user: a non-blocking WebSocket connection that logs in with a session
//! token, sends the `view.create` requests the TS side encoded, times each answer, and keeps its
//! views: row latency from each row's `ts`, sequence checks per row, and (for rows leaving a
//! window, which carry no `ts`) the row's subject handed back so the TS side can time it.
//! The TS counterpart is packages/loadgen/src/clients/view-users.ts; both count the same things.

use crate::clock::Clock;
use crate::link::{Connect, Event, Link};
use crate::scan::{self, RowList};
use crate::user::{UserOutcome, UserState};
use crate::view_stats::ViewStats;
use mio::net::TcpStream;
use std::collections::HashMap;
use std::sync::Arc;
use tidewire_protocol::messages::kind;

/// How one `openView` command ended (answered to the TS side with the command's id).
#[derive(Debug, Clone, PartialEq)]
pub enum CreateResult {
    Created { view_id: u64, count: u64, latency_ms: f64 },
    Failed(String),
}

/// Settings shared by every view user of a process.
#[derive(Debug)]
pub struct ViewSpec {
    pub host: String,
    pub path: String,
    pub max_frame_bytes: usize,
    /// Rows are counted but neither timed nor sequence-checked (the finder's response-time users). @default false
    pub light: bool,
    /// Report the subject of rows leaving a window (the TS side times them from the source's clock).
    pub report_left: bool,
}

/// What handling frames produced besides counters: command answers and rows that left.
#[derive(Default)]
pub struct Sink {
    /// (command id, result) of `openView` commands that ended.
    pub answers: Vec<(u64, CreateResult)>,
    /// (subject, receipt epoch ms) of rows that left a window.
    pub left: Vec<(String, f64)>,
}

struct Pending {
    req_id: u64,
    cmd_id: u64,
    sent_ms: f64,
}

/// A row of an open view: its last seq and (when the TS side times rows leaving) its subject.
struct RowState {
    seq: Option<u64>,
    subject: Option<Box<str>>,
}

/// One simulated view user.
pub struct ViewConn {
    /// The socket and frame layer.
    pub link: Link,
    pub state: UserState,
    /// The TS side's user index (closeUser names it).
    pub index: u64,
    /// When the connection was opened, ms on the run clock (for the connect timeout).
    pub opened_ms: f64,
    user: ViewUser,
}

/// A view user's requests and open views.
struct ViewUser {
    token: Arc<str>,
    /// `view.create` requests (command id, request object) waiting for the login.
    queued: Vec<(u64, serde_json::Map<String, serde_json::Value>)>,
    pending: Vec<Pending>,
    /// Open views by viewId (not kept for light users).
    views: HashMap<u64, HashMap<u64, RowState>>,
}

const LOGIN_REQ: u64 = 1;

impl ViewConn {
    /// A connection that is connecting and will log in with `token`.
    pub fn new(stream: TcpStream, index: u64, token: Arc<str>, seed: u64, now_ms: f64) -> ViewConn {
        ViewConn {
            link: Link::new(stream, seed, 10),
            state: UserState::Connecting,
            index,
            opened_ms: now_ms,
            user: ViewUser {
                token,
                queued: Vec::new(),
                pending: Vec::new(),
                views: HashMap::new(),
            },
        }
    }

    /// Sends (or queues until the login) a `view.create`: `request` with a fresh reqId.
    pub fn create_view(&mut self, cmd_id: u64, request: serde_json::Map<String, serde_json::Value>, now_ms: f64) -> UserOutcome {
        if self.state != UserState::Live {
            self.user.queued.push((cmd_id, request));
            return UserOutcome::Nothing;
        }
        self.user.send_create(&mut self.link, cmd_id, request, now_ms);
        match self.link.flush_or_reason() {
            Ok(()) => UserOutcome::Nothing,
            Err(reason) => self.close(reason),
        }
    }

    /// Ends the connection: every queued or pending request fails with `reason` into `sink`.
    pub fn fail_all(&mut self, reason: &str, sink: &mut Sink) {
        for (cmd_id, _) in self.user.queued.drain(..) {
            sink.answers.push((cmd_id, CreateResult::Failed(reason.to_string())));
        }
        for p in self.user.pending.drain(..) {
            sink.answers.push((p.cmd_id, CreateResult::Failed(reason.to_string())));
        }
    }

    /// Sends a WebSocket close (1000) if the socket takes it now, then shuts the socket.
    pub fn goodbye(&mut self) {
        self.link.goodbye(matches!(self.state, UserState::LoggingIn | UserState::Live));
    }

    /// Marks the connection closed and says why.
    pub fn close(&mut self, reason: String) -> UserOutcome {
        let was_live = self.state == UserState::Live;
        self.state = UserState::Closed;
        UserOutcome::Closed { reason, was_live }
    }

    /// The socket became writable: finishes the TCP connect (sending the upgrade) and flushes.
    pub fn on_writable(&mut self, spec: &ViewSpec) -> UserOutcome {
        match self.link.on_writable(self.state == UserState::Connecting, &spec.host, &spec.path) {
            Ok(Connect::Upgrading) => self.state = UserState::Upgrading,
            Ok(Connect::Unchanged) => {}
            Err(reason) => return self.close(reason),
        }
        UserOutcome::Nothing
    }

    /// Sends a heartbeat if one is due and fails requests unanswered for `response_timeout_ms`.
    pub fn tick(&mut self, now_ms: f64, response_timeout_ms: f64, stats: &mut ViewStats, sink: &mut Sink) -> UserOutcome {
        if self.state == UserState::Closed {
            return UserOutcome::Nothing;
        }
        let pending = &mut self.user.pending;
        let before = pending.len();
        pending.retain(|p| {
            let late = now_ms - p.sent_ms > response_timeout_ms;
            if late {
                sink.answers.push((
                    p.cmd_id,
                    CreateResult::Failed(format!("no view.created within {response_timeout_ms} ms")),
                ));
            }
            !late
        });
        stats.timeouts += (before - pending.len()) as u64;
        match self.link.ping_if_due(now_ms) {
            Ok(()) => UserOutcome::Nothing,
            Err(reason) => self.close(reason),
        }
    }

    /// Reads everything the socket has (edge-triggered), handling each complete message.
    pub fn on_readable(
        &mut self,
        spec: &ViewSpec,
        clock: &Clock,
        scratch: &mut [u8],
        stats: &mut ViewStats,
        sink: &mut Sink,
    ) -> UserOutcome {
        let mut outcome = UserOutcome::Nothing;
        let ViewConn { link, state, user, .. } = self;
        let r = link.on_readable(clock, scratch, spec.max_frame_bytes, |link, event, recv_ms| {
            match event {
                Event::Upgraded => {
                    *state = UserState::LoggingIn;
                    let login = serde_json::json!({ "type": "session.login", "reqId": LOGIN_REQ, "token": &*user.token });
                    link.send_text(&login.to_string());
                }
                Event::Frame(_) => {}
                Event::Message(payload) => {
                    stats.frames += 1;
                    stats.bytes += payload.len() as u64;
                    let o = user.on_frame(link, state, spec, payload, recv_ms, stats, sink)?;
                    if o != UserOutcome::Nothing {
                        outcome = o;
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

    /// Handles one whole message as `on_readable` does (the tests feed frames directly).
    #[cfg(test)]
    fn on_frame(
        &mut self,
        spec: &ViewSpec,
        payload: &[u8],
        at: f64,
        stats: &mut ViewStats,
        sink: &mut Sink,
    ) -> Result<UserOutcome, String> {
        self.user.on_frame(&mut self.link, &mut self.state, spec, payload, at, stats, sink)
    }
}

impl ViewUser {
    fn send_create(&mut self, link: &mut Link, cmd_id: u64, mut request: serde_json::Map<String, serde_json::Value>, now_ms: f64) {
        let req_id = link.next_req_id();
        request.insert("reqId".into(), req_id.into());
        link.send_text(&serde_json::Value::Object(request).to_string());
        self.pending.push(Pending {
            req_id,
            cmd_id,
            sent_ms: now_ms,
        });
    }

    /// Handles the messages of one whole frame.
    #[allow(clippy::too_many_arguments)]
    fn on_frame(
        &mut self,
        link: &mut Link,
        state: &mut UserState,
        spec: &ViewSpec,
        payload: &[u8],
        recv_ms: f64,
        stats: &mut ViewStats,
        sink: &mut Sink,
    ) -> Result<UserOutcome, String> {
        // light users neither time nor sequence-check row traffic (the Node light users do not even
        // decode it); here scanning is cheap enough to count the rows received
        if spec.light && *state == UserState::Live && !contains(payload, b"\"view.created\"") && !contains(payload, b"\"error\"") {
            let msgs = scan::scan_frame(payload).map_err(|e| format!("bad JSON frame from server: {e}"))?;
            for r in msgs.iter().flat_map(|m| m.rows.iter()) {
                match r.list {
                    RowList::Left => stats.left += 1,
                    RowList::Entered | RowList::Created => stats.entered += 1,
                    RowList::Updated => stats.updated += 1,
                }
            }
            return Ok(UserOutcome::Nothing);
        }
        let msgs = scan::scan_frame(payload).map_err(|e| format!("bad JSON frame from server: {e}"))?;
        let mut outcome = UserOutcome::Nothing;
        for m in msgs {
            match m.ty.as_ref() {
                kind::SESSION_LOGGED_IN if m.req_id == Some(LOGIN_REQ) && *state == UserState::LoggingIn => {
                    link.start_heartbeat(m.heartbeat_ms.unwrap_or(5000).max(100) as f64, recv_ms);
                    *state = UserState::Live;
                    outcome = UserOutcome::LoggedIn;
                    for (cmd_id, request) in std::mem::take(&mut self.queued) {
                        self.send_create(link, cmd_id, request, recv_ms);
                    }
                }
                "error" if *state == UserState::LoggingIn => {
                    let code = m.code.as_deref().unwrap_or("?");
                    return Err(format!("login failed: {code}: {}", m.message.as_deref().unwrap_or("")));
                }
                "error" => {
                    let text = format!("{}: {}", m.code.as_deref().unwrap_or("?"), m.message.as_deref().unwrap_or(""));
                    if let Some(i) = self.pending.iter().position(|p| Some(p.req_id) == m.req_id) {
                        let p = self.pending.swap_remove(i);
                        stats.create_errors += 1;
                        sink.answers.push((p.cmd_id, CreateResult::Failed(text.clone())));
                    }
                    stats.last_error = Some(text);
                }
                kind::VIEW_CREATED => {
                    let Some(i) = self.pending.iter().position(|p| Some(p.req_id) == m.req_id) else {
                        continue;
                    };
                    let p = self.pending.swap_remove(i);
                    let latency_ms = recv_ms - p.sent_ms;
                    stats.record_response(latency_ms);
                    stats.created += 1;
                    let view_id = m.view_id.unwrap_or(0);
                    if !spec.light {
                        let mut rows = HashMap::with_capacity(m.rows.len());
                        for r in &m.rows {
                            let subject = if spec.report_left {
                                r.subject.as_deref().map(Box::from)
                            } else {
                                None
                            };
                            rows.insert(r.id, RowState { seq: r.seq, subject });
                        }
                        self.views.insert(view_id, rows);
                    }
                    let count = m.count.unwrap_or(0);
                    sink.answers.push((
                        p.cmd_id,
                        CreateResult::Created {
                            view_id,
                            count,
                            latency_ms,
                        },
                    ));
                }
                kind::VIEW_ROWS if !spec.light => {
                    let Some(rows) = m.view_id.and_then(|v| self.views.get_mut(&v)) else {
                        continue;
                    };
                    for r in &m.rows {
                        match r.list {
                            RowList::Left => {
                                stats.left += 1;
                                if let Some(RowState { subject: Some(s), .. }) = rows.remove(&r.id) {
                                    sink.left.push((s.into(), recv_ms));
                                }
                            }
                            RowList::Entered | RowList::Created => {
                                stats.entered += 1;
                                if let Some(ts) = r.ts {
                                    stats.record_row(recv_ms, ts);
                                }
                                let subject = if spec.report_left {
                                    r.subject.as_deref().map(Box::from)
                                } else {
                                    None
                                };
                                rows.insert(r.id, RowState { seq: r.seq, subject });
                            }
                            RowList::Updated => {
                                stats.updated += 1;
                                if let Some(ts) = r.ts {
                                    stats.record_row(recv_ms, ts);
                                }
                                let (Some(row), Some(seq)) = (rows.get_mut(&r.id), r.seq) else {
                                    continue;
                                };
                                match row.seq {
                                    Some(last) if seq <= last => stats.out_of_order += 1,
                                    Some(last) if seq > last + 1 && !r.conflated => stats.lost += seq - last - 1,
                                    _ => {}
                                }
                                row.seq = Some(seq.max(row.seq.unwrap_or(0)));
                            }
                        }
                    }
                }
                kind::VIEW_CLOSED => {
                    if let Some(v) = m.view_id {
                        self.views.remove(&v);
                    }
                }
                _ => {}
            }
        }
        Ok(outcome)
    }
}

/// True when `needle` occurs in `hay` (a byte search; frames are at most a few hundred KiB).
pub fn contains(hay: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else { return true };
    let mut i = 0;
    while i + needle.len() <= hay.len() {
        match hay[i..hay.len() - rest.len()].iter().position(|&b| b == first) {
            None => return false,
            Some(k) => {
                i += k;
                if &hay[i + 1..i + needle.len()] == rest {
                    return true;
                }
                i += 1;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A view user on a real loopback socket (nothing is read from it: frames are fed directly).
    fn live_user(spec_light: bool) -> (ViewConn, ViewSpec, std::net::TcpListener) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let std_stream = std::net::TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        std_stream.set_nonblocking(true).expect("nonblocking");
        let mut c = ViewConn::new(TcpStream::from_std(std_stream), 7, Arc::from("tok"), 42, 0.0);
        c.state = UserState::LoggingIn;
        let spec = ViewSpec {
            host: "h".into(),
            path: "/stream".into(),
            max_frame_bytes: 1 << 20,
            light: spec_light,
            report_left: true,
        };
        (c, spec, listener)
    }

    fn request() -> serde_json::Map<String, serde_json::Value> {
        crate::views::parse_request(r#"{"type":"view.create","reqId":0,"container":"/C","window":{"offset":0,"size":5}}"#).expect("request")
    }

    #[test]
    fn answers_a_create_and_times_checks_and_hands_back_rows() {
        let (mut c, spec, _l) = live_user(false);
        let (mut stats, mut sink) = (ViewStats::default(), Sink::default());
        assert_eq!(c.create_view(5, request(), 1.0), UserOutcome::Nothing); // queued until the login
        let login = br#"[{"type":"session.loggedIn","reqId":1,"heartbeatMs":1000}]"#;
        assert_eq!(c.on_frame(&spec, login, 100.0, &mut stats, &mut sink), Ok(UserOutcome::LoggedIn));
        let req_id = c.user.pending[0].req_id;
        let created = format!(
            r#"[{{"type":"view.created","reqId":{req_id},"viewId":3,"count":2,"rows":[{{"index":0,"id":1,"subject":"/C/a","seq":4,"ts":90,"fields":{{}}}},{{"index":1,"id":2,"subject":"/C/b","seq":1,"ts":95,"fields":{{}}}}]}}]"#
        );
        c.on_frame(&spec, created.as_bytes(), 102.5, &mut stats, &mut sink)
            .expect("created");
        assert_eq!(
            sink.answers,
            vec![(
                5,
                CreateResult::Created {
                    view_id: 3,
                    count: 2,
                    latency_ms: 2.5
                }
            )]
        );
        assert_eq!((stats.created, stats.response.len()), (1, 1));
        // row 1: 4 -> 5 in order, then 8 (2 lost), then 8 again (out of order); row 2 leaves; row 9 enters
        let rows = br#"[{"type":"view.rows","reqId":1,"viewId":3,"left":[2],"entered":[{"index":1,"id":9,"subject":"/C/z","seq":1,"ts":200,"fields":{}}],"updated":[{"id":1,"seq":5,"ts":201,"fields":{}},{"id":1,"seq":8,"ts":202,"fields":{}},{"id":1,"seq":8,"ts":203,"fields":{}}]}]"#;
        c.on_frame(&spec, rows, 210.0, &mut stats, &mut sink).expect("rows");
        assert_eq!(
            (stats.entered, stats.left, stats.updated, stats.lost, stats.out_of_order),
            (1, 1, 3, 2, 1)
        );
        assert_eq!(stats.rows.len(), 4); // entered + 3 updated; the left row is timed by the TS side
        assert_eq!(sink.left, vec![("/C/b".to_string(), 210.0)]);
        // a conflated jump is not a loss
        let conflated =
            br#"[{"type":"view.rows","reqId":1,"viewId":3,"updated":[{"id":1,"seq":20,"ts":300,"fields":{},"conflated":true}]}]"#;
        c.on_frame(&spec, conflated, 301.0, &mut stats, &mut sink).expect("conflated");
        assert_eq!(stats.lost, 2);
    }

    #[test]
    fn fails_requests_on_errors_timeouts_and_close() {
        let (mut c, spec, _l) = live_user(false);
        let (mut stats, mut sink) = (ViewStats::default(), Sink::default());
        c.create_view(1, request(), 0.0);
        c.create_view(2, request(), 0.0);
        c.on_frame(
            &spec,
            br#"[{"type":"session.loggedIn","reqId":1,"heartbeatMs":1000}]"#,
            10.0,
            &mut stats,
            &mut sink,
        )
        .expect("login");
        let first = c.user.pending[0].req_id;
        let err = format!(r#"[{{"type":"error","reqId":{first},"code":"BAD_FILTER","message":"x"}}]"#);
        c.on_frame(&spec, err.as_bytes(), 11.0, &mut stats, &mut sink).expect("error frame");
        assert_eq!(sink.answers, vec![(1, CreateResult::Failed("BAD_FILTER: x".into()))]);
        assert_eq!(stats.create_errors, 1);
        c.tick(10.0 + 501.0, 500.0, &mut stats, &mut sink);
        assert_eq!(stats.timeouts, 1);
        assert!(matches!(&sink.answers[1], (2, CreateResult::Failed(e)) if e.contains("no view.created within 500")));
        c.create_view(3, request(), 600.0);
        c.fail_all("gone", &mut sink);
        assert_eq!(sink.answers[2], (3, CreateResult::Failed("gone".into())));
        assert!(c.on_frame(&spec, b"[{", 700.0, &mut stats, &mut sink).is_err());
    }

    #[test]
    fn a_refused_login_is_an_error() {
        let (mut c, spec, _l) = live_user(false);
        let (mut stats, mut sink) = (ViewStats::default(), Sink::default());
        let r = c.on_frame(
            &spec,
            br#"[{"type":"error","reqId":1,"code":"AUTH_FAILED","message":"bad token"}]"#,
            1.0,
            &mut stats,
            &mut sink,
        );
        assert_eq!(r, Err("login failed: AUTH_FAILED: bad token".into()));
    }

    #[test]
    fn light_users_count_rows_without_timing_them() {
        let (mut c, spec, _l) = live_user(true);
        let (mut stats, mut sink) = (ViewStats::default(), Sink::default());
        c.on_frame(
            &spec,
            br#"[{"type":"session.loggedIn","reqId":1,"heartbeatMs":1000}]"#,
            1.0,
            &mut stats,
            &mut sink,
        )
        .expect("login");
        let rows = br#"[{"type":"view.rows","reqId":1,"viewId":3,"left":[2],"updated":[{"id":1,"seq":5,"ts":1,"fields":{}},{"id":1,"seq":9,"ts":1,"fields":{}}]}]"#;
        c.on_frame(&spec, rows, 2.0, &mut stats, &mut sink).expect("rows");
        assert_eq!((stats.left, stats.updated, stats.lost, stats.rows.len()), (1, 2, 0, 0));
        assert!(sink.left.is_empty());
    }

    #[test]
    fn finds_byte_strings() {
        assert!(contains(br#"[{"type":"view.created"}]"#, b"\"view.created\""));
        assert!(!contains(br#"[{"type":"view.rows"}]"#, b"\"view.created\""));
        assert!(contains(b"ab", b"ab"));
        assert!(!contains(b"a", b"ab"));
        assert!(contains(b"aab", b"ab"));
        assert!(contains(b"x", b""));
    }
}
