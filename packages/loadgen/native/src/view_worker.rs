//! One socket-loop thread of view users: a mio poll owning the users whose index falls to it.
//! Commands arrive on a channel (the loop drains it without blocking after each poll, woken by
//! the waker); `openView` answers go straight to stdout with the command's id, so a slow answer
//! never holds up the command loop or another worker.

use crate::clock::Clock;
use crate::user::{UserCounts, UserOutcome, UserState};
use crate::view_conn::{CreateResult, Sink, ViewConn, ViewSpec};
use crate::view_stats::ViewStats;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::sync::Arc;
use std::time::Duration;

/// A request for one user's view: the TS side's command id, user index, token and request.
pub struct OpenView {
    pub cmd_id: u64,
    pub index: u64,
    pub token: Arc<str>,
    /// The `view.create` object the TS side encoded, without `reqId`.
    pub request: serde_json::Map<String, serde_json::Value>,
}

/// Commands from the main thread.
pub enum ViewCommand {
    Open(OpenView),
    /// Close user `index` (no-op when it is not open).
    CloseUser(u64),
    /// Close every user; answers on the channel once their sockets are shut.
    CloseAll(Sender<()>),
    /// Hand over the interval's stats (and reset them).
    Take(Sender<ViewWorkerReport>),
    Stop,
}

/// One worker's share of a `take` answer.
pub struct ViewWorkerReport {
    pub stats: ViewStats,
    /// Users logged in now.
    pub live: u64,
    /// Live users the server dropped since the previous take, and the last reason.
    pub dropped: u64,
    pub drop_reason: Option<String>,
}

/// Settings of a worker.
pub struct ViewWorkerSpec {
    pub addr: SocketAddr,
    pub conn: ViewSpec,
    pub clock: Clock,
    pub max_connecting: usize,
    pub connect_timeout_ms: f64,
    pub response_timeout_ms: f64,
}

/// Writes what a batch of events produced: openView answers and rows that left, one line each.
fn emit_sink(sink: &mut Sink) {
    for (id, r) in sink.answers.drain(..) {
        crate::emit(match r {
            CreateResult::Created {
                view_id,
                count,
                latency_ms,
            } => serde_json::json!({
                "event": "opened", "id": id, "ok": true, "viewId": view_id, "count": count, "latencyMs": latency_ms
            }),
            CreateResult::Failed(error) => serde_json::json!({ "event": "opened", "id": id, "ok": false, "error": error }),
        });
    }
    if !sink.left.is_empty() {
        let rows: Vec<serde_json::Value> = sink.left.drain(..).map(|(s, at)| serde_json::json!([s, at])).collect();
        crate::emit(serde_json::json!({ "event": "left", "rows": rows }));
    }
}

struct Loop {
    conns: Vec<Option<ViewConn>>,
    free: Vec<usize>,
    by_index: HashMap<u64, usize>,
    users: UserCounts,
    stats: ViewStats,
    sink: Sink,
}

impl Loop {
    /// Applies a connection's outcome: counts it, fails its requests and drops closed ones.
    fn settle(&mut self, outcome: UserOutcome, idx: usize, poll: &Poll) {
        match outcome {
            UserOutcome::Nothing => {}
            UserOutcome::LoggedIn => self.users.logged_in(),
            UserOutcome::Closed { reason, was_live } => {
                let Some(mut c) = self.conns[idx].take() else { return };
                let _ = poll.registry().deregister(&mut c.link.stream);
                c.fail_all(&reason, &mut self.sink);
                self.by_index.remove(&c.index);
                self.free.push(idx);
                self.users.closed(reason, was_live); // a failed connect was answered by fail_all
            }
        }
    }

    /// Closes the user at `idx` (a WebSocket close, then the socket) without counting a drop;
    /// its unanswered requests fail with "user closed".
    fn close_quietly(&mut self, idx: usize, poll: &Poll) {
        let Some(mut c) = self.conns[idx].take() else { return };
        let _ = poll.registry().deregister(&mut c.link.stream);
        c.goodbye();
        self.users.left(c.state == UserState::Live);
        c.fail_all("user closed", &mut self.sink);
        self.by_index.remove(&c.index);
        self.free.push(idx);
    }
}

/// Runs the socket loop until `Stop` (or the command channel closes).
pub fn run(mut poll: Poll, spec: ViewWorkerSpec, commands: Receiver<ViewCommand>) {
    let mut w = Loop {
        conns: Vec::new(),
        free: Vec::new(),
        by_index: HashMap::new(),
        users: UserCounts::default(),
        stats: ViewStats::default(),
        sink: Sink::default(),
    };
    let mut queue: VecDeque<OpenView> = VecDeque::new();
    let mut scratch = vec![0u8; 256 * 1024];
    let mut evs = Events::with_capacity(1024);
    let mut next_housekeeping = 0.0f64;
    const HOUSEKEEPING_MS: f64 = 100.0;

    'outer: loop {
        if let Err(e) = poll.poll(&mut evs, Some(Duration::from_millis(HOUSEKEEPING_MS as u64))) {
            if e.kind() != std::io::ErrorKind::Interrupted {
                eprintln!("view worker poll failed: {e}");
                break;
            }
        }
        for ev in evs.iter() {
            let idx = ev.token().0;
            let Some(conn) = w.conns.get_mut(idx).and_then(|c| c.as_mut()) else {
                continue;
            };
            let mut outcome = UserOutcome::Nothing;
            if ev.is_writable() || ev.is_write_closed() || ev.is_error() {
                outcome = conn.on_writable(&spec.conn);
            }
            if conn.state != UserState::Closed && (ev.is_readable() || ev.is_read_closed()) {
                let o = conn.on_readable(&spec.conn, &spec.clock, &mut scratch, &mut w.stats, &mut w.sink);
                if o != UserOutcome::Nothing {
                    outcome = o;
                }
            }
            w.settle(outcome, idx, &poll);
        }
        loop {
            match commands.try_recv() {
                Ok(ViewCommand::Open(o)) => queue.push_back(o),
                Ok(ViewCommand::CloseUser(index)) => {
                    queue.retain(|o| {
                        let hit = o.index == index;
                        if hit {
                            w.sink.answers.push((o.cmd_id, CreateResult::Failed("user closed".into())));
                        }
                        !hit
                    });
                    if let Some(&idx) = w.by_index.get(&index) {
                        w.close_quietly(idx, &poll);
                    }
                }
                Ok(ViewCommand::CloseAll(done)) => {
                    for o in queue.drain(..) {
                        w.sink.answers.push((o.cmd_id, CreateResult::Failed("user closed".into())));
                    }
                    for idx in 0..w.conns.len() {
                        w.close_quietly(idx, &poll);
                    }
                    emit_sink(&mut w.sink);
                    let _ = done.send(());
                }
                Ok(ViewCommand::Take(reply)) => {
                    emit_sink(&mut w.sink); // rows that left reach the TS side before the take answer
                    let _ = reply.send(ViewWorkerReport {
                        stats: std::mem::take(&mut w.stats),
                        live: w.users.live,
                        dropped: std::mem::take(&mut w.users.dropped),
                        drop_reason: w.users.drop_reason.take(),
                    });
                }
                Ok(ViewCommand::Stop) | Err(TryRecvError::Disconnected) => break 'outer,
                Err(TryRecvError::Empty) => break,
            }
        }
        let now = spec.clock.now_ms();
        while w.users.connecting < spec.max_connecting {
            let Some(o) = queue.pop_front() else { break };
            if w.by_index.contains_key(&o.index) {
                w.sink
                    .answers
                    .push((o.cmd_id, CreateResult::Failed(format!("user {} is already open", o.index))));
                continue;
            }
            let mut stream = match TcpStream::connect(spec.addr) {
                Ok(s) => s,
                Err(e) => {
                    w.sink
                        .answers
                        .push((o.cmd_id, CreateResult::Failed(format!("connect failed: {e}"))));
                    continue;
                }
            };
            let _ = stream.set_nodelay(true);
            let idx = w.free.pop().unwrap_or_else(|| {
                w.conns.push(None);
                w.conns.len() - 1
            });
            if let Err(e) = poll
                .registry()
                .register(&mut stream, Token(idx), Interest::READABLE | Interest::WRITABLE)
            {
                w.free.push(idx);
                w.sink
                    .answers
                    .push((o.cmd_id, CreateResult::Failed(format!("register failed: {e}"))));
                continue;
            }
            let seed = o.index.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ now.to_bits();
            let mut conn = ViewConn::new(stream, o.index, o.token, seed, now);
            let _ = conn.create_view(o.cmd_id, o.request, now); // queued until the login
            w.conns[idx] = Some(conn);
            w.by_index.insert(o.index, idx);
            w.users.connecting += 1;
        }
        if now >= next_housekeeping {
            next_housekeeping = now + HOUSEKEEPING_MS;
            for idx in 0..w.conns.len() {
                let Some(conn) = w.conns[idx].as_mut() else { continue };
                let outcome = if conn.state != UserState::Live && now - conn.opened_ms > spec.connect_timeout_ms {
                    conn.close(format!(
                        "user {} not logged in after {} ms (stuck in {:?})",
                        conn.index, spec.connect_timeout_ms, conn.state
                    ))
                } else {
                    conn.tick(now, spec.response_timeout_ms, &mut w.stats, &mut w.sink)
                };
                w.settle(outcome, idx, &poll);
            }
        }
        emit_sink(&mut w.sink);
    }
    for conn in w.conns.into_iter().flatten() {
        let _ = conn.link.stream.shutdown(std::net::Shutdown::Both);
    }
}
