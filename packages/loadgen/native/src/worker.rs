//! One socket-loop thread: a mio poll owning a share of the simulated users. It opens users on
//! command (at most `max_connecting` handshakes at a time), reads every frame they receive into
//! its `Stats`, keeps heartbeats, and hands its stats over (and resets them) on each report.

use crate::clock::Clock;
use crate::conn::{Conn, ConnSpec, Outcome, State};
use crate::stats::Stats;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token, Waker};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;
use std::time::Duration;

/// Commands from the main thread.
pub enum Command {
    /// Open these users: (global user index, subjects to subscribe).
    Connect(Vec<(u64, Vec<String>)>),
    /// Send a `WorkerReport` and reset the interval stats.
    Report(Sender<WorkerReport>),
    /// Close every connection and end the thread.
    Stop,
}

/// Events to the main thread.
pub enum Event {
    /// A user finished connecting: `Ok` when ready, `Err(reason)` when it failed.
    Settled(Result<(), String>),
}

/// One worker's share of a report.
pub struct WorkerReport {
    pub stats: Stats,
    /// Users currently ready.
    pub live: u64,
    /// Ready users lost since the previous report, and the last reason.
    pub dropped: u64,
    pub last_drop_reason: Option<String>,
}

/// Settings of a worker.
pub struct WorkerSpec {
    pub addr: SocketAddr,
    pub conn: ConnSpec,
    pub clock: Clock,
    /// Most users in the connecting states at once (bounds the accept backlog we cause).
    pub max_connecting: usize,
    /// A user not ready after this long fails, ms.
    pub connect_timeout_ms: f64,
}

const WAKER: Token = Token(usize::MAX);
/// Heartbeats and timeouts are checked this often, ms.
const HOUSEKEEPING_MS: f64 = 200.0;

/// Creates the poll and its waker (the main thread keeps the waker to wake the loop).
/// A worker thread's command channel and the waker of its poll (views and orders modes).
pub struct Handle<C> {
    pub tx: std::sync::mpsc::Sender<C>,
    pub waker: Arc<Waker>,
}

impl<C> Handle<C> {
    /// Queues `c` and wakes the worker (a worker already gone is not an error here).
    pub fn send(&self, c: C) {
        let _ = self.tx.send(c);
        let _ = self.waker.wake();
    }
}

/// Sends `stop()` to every worker, waits for their threads, then says `stopped` (the views and
/// orders modes' end).
pub fn stop_all<C>(workers: Vec<(Handle<C>, std::thread::JoinHandle<()>)>, stop: impl Fn() -> C) {
    for (h, _) in &workers {
        h.send(stop());
    }
    for (_, join) in workers {
        let _ = join.join();
    }
    crate::emit(serde_json::json!({ "event": "stopped" }));
}

pub fn new_poll() -> std::io::Result<(Poll, Arc<Waker>)> {
    let poll = Poll::new()?;
    let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
    Ok((poll, waker))
}

/// Mutable state of one worker's loop.
struct Loop {
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    connecting: usize,
    stats: Stats,
    live: u64,
    dropped: u64,
    last_drop_reason: Option<String>,
}

impl Loop {
    /// Applies a connection's outcome: counts it, tells the main thread, drops closed ones.
    fn settle(&mut self, outcome: Outcome, idx: usize, poll: &Poll, events: &Sender<Event>) {
        match outcome {
            Outcome::Nothing => {}
            Outcome::BecameReady => {
                self.connecting -= 1;
                self.live += 1;
                let _ = events.send(Event::Settled(Ok(())));
            }
            Outcome::Closed { reason, was_ready } => {
                if let Some(mut c) = self.conns[idx].take() {
                    let _ = poll.registry().deregister(&mut c.link.stream);
                }
                self.free.push(idx);
                if was_ready {
                    self.live -= 1;
                    self.dropped += 1;
                    self.last_drop_reason = Some(reason);
                } else {
                    self.connecting -= 1;
                    let _ = events.send(Event::Settled(Err(reason)));
                }
            }
        }
    }
}

/// Runs the socket loop until `Stop` (or the command channel closes).
pub fn run(mut poll: Poll, spec: WorkerSpec, commands: Receiver<Command>, events: Sender<Event>) {
    let mut w = Loop {
        conns: Vec::new(),
        free: Vec::new(),
        connecting: 0,
        stats: Stats::default(),
        live: 0,
        dropped: 0,
        last_drop_reason: None,
    };
    let mut queue: VecDeque<(u64, Vec<String>)> = VecDeque::new();
    let mut scratch = vec![0u8; 256 * 1024];
    let mut evs = Events::with_capacity(1024);
    let mut next_housekeeping = 0.0f64;

    'outer: loop {
        if let Err(e) = poll.poll(&mut evs, Some(Duration::from_millis(HOUSEKEEPING_MS as u64))) {
            if e.kind() != std::io::ErrorKind::Interrupted {
                eprintln!("worker poll failed: {e}");
                break;
            }
        }
        for ev in evs.iter() {
            if ev.token() == WAKER {
                continue;
            }
            let idx = ev.token().0;
            let Some(conn) = w.conns.get_mut(idx).and_then(|c| c.as_mut()) else {
                continue;
            };
            let mut outcome = Outcome::Nothing;
            if ev.is_writable() || ev.is_write_closed() || ev.is_error() {
                outcome = conn.on_writable(&spec.conn);
            }
            if conn.state != State::Closed && (ev.is_readable() || ev.is_read_closed()) {
                let o = conn.on_readable(&spec.conn, &spec.clock, &mut scratch, &mut w.stats);
                if o != Outcome::Nothing {
                    outcome = o;
                }
            }
            w.settle(outcome, idx, &poll, &events);
        }
        loop {
            match commands.try_recv() {
                Ok(Command::Connect(users)) => queue.extend(users),
                Ok(Command::Report(reply)) => {
                    let report = WorkerReport {
                        stats: std::mem::take(&mut w.stats),
                        live: w.live,
                        dropped: std::mem::take(&mut w.dropped),
                        last_drop_reason: w.last_drop_reason.take(),
                    };
                    let _ = reply.send(report);
                }
                Ok(Command::Stop) | Err(std::sync::mpsc::TryRecvError::Disconnected) => break 'outer,
                Err(std::sync::mpsc::TryRecvError::Empty) => break,
            }
        }
        let now = spec.clock.now_ms();
        while w.connecting < spec.max_connecting {
            let Some((user, subjects)) = queue.pop_front() else { break };
            match TcpStream::connect(spec.addr) {
                Ok(mut stream) => {
                    let _ = stream.set_nodelay(true);
                    let idx = w.free.pop().unwrap_or_else(|| {
                        w.conns.push(None);
                        w.conns.len() - 1
                    });
                    let interest = Interest::READABLE | Interest::WRITABLE;
                    if let Err(e) = poll.registry().register(&mut stream, Token(idx), interest) {
                        w.free.push(idx);
                        let _ = events.send(Event::Settled(Err(format!("register failed: {e}"))));
                        continue;
                    }
                    let seed = user.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ now.to_bits();
                    w.conns[idx] = Some(Conn::new(stream, subjects, seed, now));
                    w.connecting += 1;
                }
                Err(e) => {
                    let _ = events.send(Event::Settled(Err(format!("connect failed: {e}"))));
                }
            }
        }
        if now >= next_housekeeping {
            next_housekeeping = now + HOUSEKEEPING_MS;
            for idx in 0..w.conns.len() {
                let Some(conn) = w.conns[idx].as_mut() else { continue };
                let outcome = if conn.state != State::Ready && now - conn.opened_ms > spec.connect_timeout_ms {
                    let reason = format!("not ready after {} ms (stuck in {:?})", spec.connect_timeout_ms, conn.state);
                    conn.state = State::Closed;
                    Outcome::Closed { reason, was_ready: false }
                } else {
                    conn.tick(now)
                };
                w.settle(outcome, idx, &poll, &events);
            }
        }
    }
    for conn in w.conns.into_iter().flatten() {
        let _ = conn.link.stream.shutdown(std::net::Shutdown::Both);
    }
}
