//! One socket-loop thread: a mio poll owning a share of the simulated users. It opens users on
//! command (at most `max_connecting` handshakes at a time), reads every frame they receive into
//! its `Stats`, keeps heartbeats, and hands its stats over (and resets them) on each report.
//! During a recovery round (recovery.rs) users that were cut or dropped reconnect with what they
//! hold, retrying refused attempts, and the round's measurements are kept apart.

use crate::clock::Clock;
use crate::conn::{Conn, ConnSpec, Outcome, State, Subs};
use crate::recovery::{Progress, RecoveryStats, Round};
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
    /// Start a recovery round: from now on a dropped user reconnects and recovers as `Round`
    /// says; with `cut` every user's socket is closed now. Answers the number of users cut.
    Recover { round: Round, cut: bool, reply: Sender<u64> },
    /// The round's measurements so far (`take`: and end the round, resetting them).
    Recovery { take: bool, reply: Sender<RecoveryReport> },
    /// Close every connection and end the thread.
    Stop,
}

/// One worker's share of a recovery answer.
pub struct RecoveryReport {
    pub recovery: RecoveryStats,
    /// What the users received since the round started.
    pub stats: Stats,
    /// Users currently ready.
    pub live: u64,
}

/// A user waiting to (re)connect: new (`Subs::new`) or recovering, not before `due_ms`.
struct Queued {
    user: u64,
    subs: Subs,
    due_ms: f64,
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
    queue: VecDeque<Queued>,
    /// The recovery round in force, if any.
    round: Option<Round>,
    recovery: RecoveryStats,
}

impl Loop {
    /// Applies a connection's outcome: counts it, tells the main thread (or the round), drops
    /// closed ones (a recovering user is queued to reconnect).
    fn settle(&mut self, outcome: Outcome, idx: usize, poll: &Poll, events: &Sender<Event>, now: f64) {
        match outcome {
            Outcome::Nothing => {}
            Outcome::BecameReady => {
                self.connecting -= 1;
                self.live += 1;
                let Some(c) = self.conns[idx].as_mut() else { return };
                match c.recovering_since() {
                    Some(cut_ms) => {
                        c.end_recovery();
                        self.recovery.on_resumed(cut_ms, now);
                    }
                    None => {
                        let _ = events.send(Event::Settled(Ok(())));
                    }
                }
            }
            Outcome::Closed { reason, was_ready } => {
                let Some(mut c) = self.conns[idx].take() else { return };
                let _ = poll.registry().deregister(&mut c.link.stream);
                self.free.push(idx);
                let user = c.user;
                let mut subs = c.into_subs();
                if was_ready {
                    self.live -= 1;
                    match self.round {
                        Some(round) => {
                            // dropped while a round is armed (the server went away): recover
                            self.recovery.users += 1;
                            subs.recovery = Some(Progress::new(round));
                            self.queue.push_back(Queued { user, subs, due_ms: now });
                        }
                        None => {
                            self.dropped += 1;
                            self.last_drop_reason = Some(reason);
                        }
                    }
                    return;
                }
                self.connecting -= 1;
                self.not_ready(user, subs, reason, events, now);
            }
        }
    }

    /// A connection attempt of `user` failed (`reason`): a recovering user retries after the
    /// round's retry period plus jitter (or gives up past the round's deadline); a new user's
    /// failure goes to the main thread.
    fn not_ready(&mut self, user: u64, subs: Subs, reason: String, events: &Sender<Event>, now: f64) {
        match subs.recovery.as_ref().map(|p| (p.round, p.attempts)) {
            Some((round, _)) if now >= round.give_up_ms => {
                self.recovery.failed += 1;
                self.recovery.last_error = Some(reason);
            }
            Some((round, attempts)) => {
                // spread the retries: a per-user share of up to one more retry period
                let jitter = (user.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ attempts).wrapping_mul(0xBF58_476D_1CE4_E5B9) % 1000;
                let due_ms = now + round.retry_ms * (1.0 + jitter as f64 / 1000.0);
                self.recovery.last_error = Some(reason);
                self.queue.push_back(Queued { user, subs, due_ms });
            }
            None => {
                let _ = events.send(Event::Settled(Err(reason)));
            }
        }
    }

    /// Starts a round; with `cut`, closes every user's socket now and queues them all to
    /// reconnect at once. Returns the users cut.
    fn recover(&mut self, round: Round, cut: bool, poll: &Poll) -> u64 {
        self.round = Some(round);
        self.recovery = RecoveryStats::default();
        if !cut {
            return 0;
        }
        let mut n = 0;
        for idx in 0..self.conns.len() {
            let Some(mut c) = self.conns[idx].take() else { continue };
            let _ = c.link.stream.shutdown(std::net::Shutdown::Both);
            let _ = poll.registry().deregister(&mut c.link.stream);
            self.free.push(idx);
            if c.state == State::Ready {
                self.live -= 1;
            } else {
                self.connecting -= 1;
            }
            let user = c.user;
            let mut subs = c.into_subs();
            subs.recovery = Some(Progress::new(round));
            self.queue.push_back(Queued {
                user,
                subs,
                due_ms: round.cut_ms,
            });
            n += 1;
        }
        self.recovery.users += n;
        n
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
        queue: VecDeque::new(),
        round: None,
        recovery: RecoveryStats::default(),
    };
    let mut scratch = vec![0u8; 256 * 1024];
    let mut evs = Events::with_capacity(1024);
    let mut next_housekeeping = 0.0f64;

    'outer: loop {
        // wake for the next queued reconnect when it is due before the housekeeping
        let wait_ms = match w.queue.front() {
            Some(q) if w.connecting < spec.max_connecting => (q.due_ms - spec.clock.now_ms()).clamp(0.0, HOUSEKEEPING_MS),
            _ => HOUSEKEEPING_MS,
        };
        if let Err(e) = poll.poll(&mut evs, Some(Duration::from_micros((wait_ms * 1000.0) as u64))) {
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
                let o = conn.on_readable(&spec.conn, &spec.clock, &mut scratch, &mut w.stats, &mut w.recovery);
                if o != Outcome::Nothing {
                    outcome = o;
                }
            }
            if outcome != Outcome::Nothing {
                w.settle(outcome, idx, &poll, &events, spec.clock.now_ms());
            }
        }
        loop {
            match commands.try_recv() {
                Ok(Command::Connect(users)) => w.queue.extend(users.into_iter().map(|(user, subjects)| Queued {
                    user,
                    subs: Subs::new(subjects),
                    due_ms: 0.0,
                })),
                Ok(Command::Recover { round, cut, reply }) => {
                    let n = w.recover(round, cut, &poll);
                    w.stats = Stats::default();
                    let _ = reply.send(n);
                }
                Ok(Command::Recovery { take, reply }) => {
                    let report = if take {
                        w.round = None;
                        RecoveryReport {
                            recovery: std::mem::take(&mut w.recovery),
                            stats: std::mem::take(&mut w.stats),
                            live: w.live,
                        }
                    } else {
                        RecoveryReport {
                            recovery: w.recovery.clone(),
                            stats: w.stats.clone(),
                            live: w.live,
                        }
                    };
                    let _ = reply.send(report);
                }
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
        while w.connecting < spec.max_connecting && w.queue.front().is_some_and(|q| q.due_ms <= now) {
            let Some(Queued { user, mut subs, .. }) = w.queue.pop_front() else {
                break;
            };
            if let Some(p) = subs.recovery.as_mut() {
                p.attempts += 1;
                w.recovery.attempts += 1;
            }
            match TcpStream::connect(spec.addr) {
                Ok(stream) => {
                    let _ = stream.set_nodelay(true);
                    let idx = w.free.pop().unwrap_or_else(|| {
                        w.conns.push(None);
                        w.conns.len() - 1
                    });
                    let interest = Interest::READABLE | Interest::WRITABLE;
                    let seed = user.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ now.to_bits();
                    let mut conn = Conn::new(stream, user, subs, seed, now);
                    w.connecting += 1;
                    if let Err(e) = poll.registry().register(&mut conn.link.stream, Token(idx), interest) {
                        conn.state = State::Closed;
                        w.conns[idx] = Some(conn);
                        let outcome = Outcome::Closed {
                            reason: format!("register failed: {e}"),
                            was_ready: false,
                        };
                        w.settle(outcome, idx, &poll, &events, now);
                        continue;
                    }
                    w.conns[idx] = Some(conn);
                }
                Err(e) => w.not_ready(user, subs, format!("connect failed: {e}"), &events, now),
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
                if outcome != Outcome::Nothing {
                    w.settle(outcome, idx, &poll, &events, now);
                }
            }
        }
    }
    for conn in w.conns.into_iter().flatten() {
        let _ = conn.link.stream.shutdown(std::net::Shutdown::Both);
    }
}
