//! One socket thread of the orders preset: a mio poll owning its share of the trader
//! connections (client `c` belongs to thread `c mod threads`), which both sends the orders of
//! those clients on schedule and reads their answers. Pacing: a timerfd (ns resolution, unlike
//! epoll's ms timeout) armed at the next order's due time (never sooner than `min_tick_ms` after
//! the previous send) wakes the same poll that reads the sockets, so a tick costs one wake-up
//! of one thread; with `spin_ms` > 0 the loop polls without sleeping when the next order is due
//! within that long (lower lateness, a busy core). Commands come on a channel (woken by the
//! waker); answers go back on the channel each command carries.

use crate::args::Endpoint;
use crate::clock::Clock;
use crate::order_conn::{Answers, OrderBufs, OrderConn};
use crate::order_stats::OrderStats;
use crate::schedule::{next_tick_ms, server_of, Schedule, Share};
use crate::user::{UserCounts, UserOutcome, UserState};
use mio::net::TcpStream;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::sync::Arc;
use std::time::Duration;

/// How a worker's connections came up.
#[derive(Debug, Default)]
pub struct ConnectReport {
    pub ready: u64,
    pub failed: u64,
    /// Distinct failure reasons (at most 5).
    pub errors: Vec<String>,
}

/// One worker's share of a `take` answer.
#[derive(Debug, Default)]
pub struct OrderWorkerReport {
    pub stats: OrderStats,
    pub answers: Answers,
    /// Measured orders still unanswered when the take's wait ran out (then forgotten).
    pub unanswered: u64,
    /// Connections logged in now.
    pub live: u64,
    /// Live connections the server dropped since the previous take, and the last reason.
    pub dropped: u64,
    pub drop_reason: Option<String>,
}

/// Commands from the main thread.
pub enum OrderCommand {
    /// Open and log in this thread's clients; answered once each is live or failed.
    Connect(Sender<ConnectReport>),
    /// Send this step's orders (replaces a finished step).
    Step(Schedule),
    /// Once the step's orders are all sent and answered (or `wait_ms` after the later of the last
    /// send and this command): the interval's report.
    Take {
        reply: Sender<OrderWorkerReport>,
        wait_ms: f64,
    },
    Stop,
}

/// Settings of a worker.
pub struct OrderWorkerSpec {
    /// The servers; client `c` connects to `endpoints[c mod len]` (`schedule::server_of`).
    pub endpoints: Arc<[Endpoint]>,
    pub token: Arc<str>,
    /// Client order ids are `<prefix>-<k base 36>`.
    pub id_prefix: String,
    pub share: Share,
    pub clock: Clock,
    pub connect_timeout_ms: f64,
    pub max_frame_bytes: usize,
    /// Shortest time between two sends, ms (0: every order at its own due time).
    pub min_tick_ms: f64,
    /// Poll without sleeping when the next order is due within this long, ms (0: always sleep).
    pub spin_ms: f64,
}

const TIMER: Token = Token(usize::MAX - 1);
const HOUSEKEEPING_MS: f64 = 100.0;

/// A CLOCK_MONOTONIC timerfd armed at absolute times.
struct Timer {
    fd: OwnedFd,
    /// Monotonic ms it is armed for (NaN: disarmed or fired).
    armed_ms: f64,
}

impl Timer {
    fn new() -> std::io::Result<Timer> {
        // SAFETY: timerfd_create returns a new descriptor or -1; we own it from here on.
        let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh, valid descriptor nobody else owns.
        Ok(Timer {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            armed_ms: f64::NAN,
        })
    }

    /// Arms the timer at monotonic `at_ms` (a time already past fires at once); no syscall when
    /// it is armed for that time already.
    fn arm(&mut self, at_ms: f64) {
        if self.armed_ms == at_ms {
            return;
        }
        let at_ms = at_ms.max(0.001); // an all-zero value would disarm it
        let ns = (at_ms * 1e6) as i64;
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec {
                tv_sec: (ns / 1_000_000_000) as libc::time_t,
                tv_nsec: (ns % 1_000_000_000) as libc::c_long,
            },
        };
        // SAFETY: the descriptor is ours and `spec` a valid itimerspec; the old value is not asked for.
        unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut()) };
        self.armed_ms = at_ms;
    }

    /// Reads the expiry count (so the descriptor stops being readable) and marks it fired.
    fn fired(&mut self) {
        let mut buf = [0u8; 8];
        // SAFETY: reads at most 8 bytes into our buffer; a non-blocking read that finds nothing fails harmlessly.
        unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        self.armed_ms = f64::NAN;
    }
}

/// The step being sent and how far it got.
struct Sending {
    schedule: Schedule,
    /// Index (in the step) of the next order this thread sends; `schedule.count` when done.
    next: u64,
    /// When the last order was sent (run clock, ms).
    done_at_ms: Option<f64>,
}

struct Loop {
    conns: Vec<Option<OrderConn>>,
    users: UserCounts,
    stats: OrderStats,
    answers: Answers,
    /// Measured orders in flight on connections that closed since the previous take.
    closed_unanswered: u64,
    connect_reply: Option<(Sender<ConnectReport>, ConnectReport)>,
}

impl Loop {
    fn settle(&mut self, outcome: UserOutcome, slot: usize, poll: &Poll) {
        match outcome {
            UserOutcome::Nothing => {}
            UserOutcome::LoggedIn => {
                self.users.logged_in();
                if let Some((_, r)) = self.connect_reply.as_mut() {
                    r.ready += 1;
                }
            }
            UserOutcome::Closed { reason, was_live } => {
                let Some(mut c) = self.conns[slot].take() else { return };
                let _ = poll.registry().deregister(&mut c.link.stream);
                let _ = c.link.stream.shutdown(std::net::Shutdown::Both);
                self.closed_unanswered += c.forget_pending(); // never answered now: lost, as the Node engine counts them
                if let (Some(reason), Some((_, r))) = (self.users.closed(reason, was_live), self.connect_reply.as_mut()) {
                    r.failed += 1;
                    if r.errors.len() < 5 && !r.errors.contains(&reason) {
                        r.errors.push(reason);
                    }
                }
            }
        }
        if self.users.connecting == 0 {
            if let Some((tx, r)) = self.connect_reply.take() {
                let _ = tx.send(r);
            }
        }
    }

    fn in_flight(&self) -> usize {
        self.conns.iter().flatten().map(|c| c.in_flight().0).sum()
    }
}

/// Runs the loop until `Stop` (or the command channel closes). Err: the timer could not be set up.
pub fn run(mut poll: Poll, spec: OrderWorkerSpec, commands: Receiver<OrderCommand>) -> Result<(), String> {
    let mut timer = Timer::new().map_err(|e| format!("cannot create a timerfd: {e}"))?;
    poll.registry()
        .register(&mut SourceFd(&timer.fd.as_raw_fd()), TIMER, Interest::READABLE)
        .map_err(|e| format!("cannot register the timerfd: {e}"))?;
    let share = spec.share;
    let mut w = Loop {
        conns: share.owned_clients().map(|_| None).collect(),
        users: UserCounts::default(),
        stats: OrderStats::default(),
        answers: Answers::default(),
        closed_unanswered: 0,
        connect_reply: None,
    };
    let mut sending: Option<Sending> = None;
    let mut take: Option<(Sender<OrderWorkerReport>, f64, f64)> = None; // (reply, wait ms, received at)
    let mut bufs = OrderBufs::default();
    let mut scratch = vec![0u8; 256 * 1024];
    let mut evs = Events::with_capacity(1024);
    let mut next_housekeeping = 0.0f64;
    let mut last_send_ms = f64::NEG_INFINITY;
    let mut spin = false;

    'outer: loop {
        let timeout = if spin {
            Duration::ZERO
        } else {
            Duration::from_millis(HOUSEKEEPING_MS as u64)
        };
        if let Err(e) = poll.poll(&mut evs, Some(timeout)) {
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(format!("order worker poll failed: {e}"));
            }
        }
        for ev in evs.iter() {
            if ev.token() == TIMER {
                timer.fired();
                continue;
            }
            let slot = ev.token().0;
            let Some(conn) = w.conns.get_mut(slot).and_then(|c| c.as_mut()) else {
                continue;
            };
            let mut outcome = UserOutcome::Nothing;
            if ev.is_writable() || ev.is_write_closed() || ev.is_error() {
                let Some(ep) = spec.endpoints.get(server_of(share.client_at(slot), spec.endpoints.len())) else {
                    continue;
                };
                outcome = conn.on_writable(&ep.host, &ep.path);
            }
            if conn.state != UserState::Closed && (ev.is_readable() || ev.is_read_closed()) {
                let o = conn.on_readable(&spec.clock, &mut scratch, spec.max_frame_bytes, &mut w.stats, &mut w.answers);
                if o != UserOutcome::Nothing {
                    outcome = o;
                }
            }
            w.settle(outcome, slot, &poll);
        }
        loop {
            match commands.try_recv() {
                Ok(OrderCommand::Connect(reply)) => {
                    let now = spec.clock.now_ms();
                    let mut report = ConnectReport::default();
                    for c in share.owned_clients() {
                        let slot = share.slot_of(c);
                        if w.conns[slot].is_some() {
                            continue; // already open
                        }
                        let Some(ep) = spec.endpoints.get(server_of(c, spec.endpoints.len())) else {
                            report.failed += 1;
                            report.errors.truncate(4);
                            report.errors.push("no server to connect to".into());
                            continue;
                        };
                        let mut stream = match TcpStream::connect(ep.addr) {
                            Ok(s) => s,
                            Err(e) => {
                                report.failed += 1;
                                report.errors.truncate(4);
                                report.errors.push(format!("connect failed: {e}"));
                                continue;
                            }
                        };
                        let _ = stream.set_nodelay(true);
                        if let Err(e) = poll
                            .registry()
                            .register(&mut stream, Token(slot), Interest::READABLE | Interest::WRITABLE)
                        {
                            report.failed += 1;
                            report.errors.truncate(4);
                            report.errors.push(format!("register failed: {e}"));
                            continue;
                        }
                        let seed = c.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ now.to_bits();
                        w.conns[slot] = Some(OrderConn::new(stream, spec.token.clone(), seed, now));
                        w.users.connecting += 1;
                    }
                    if w.users.connecting == 0 {
                        let _ = reply.send(report);
                    } else {
                        w.connect_reply = Some((reply, report));
                    }
                }
                Ok(OrderCommand::Step(schedule)) => {
                    let next = share.next_owned(&schedule, 0);
                    sending = Some(Sending {
                        schedule,
                        next,
                        done_at_ms: (next >= schedule.count).then(|| spec.clock.now_ms()),
                    });
                }
                Ok(OrderCommand::Take { reply, wait_ms }) => take = Some((reply, wait_ms, spec.clock.now_ms())),
                Ok(OrderCommand::Stop) | Err(TryRecvError::Disconnected) => break 'outer,
                Err(TryRecvError::Empty) => break,
            }
        }

        // send every order that is due, each stamped right before it is written
        spin = false;
        if let Some(s) = sending.as_mut().filter(|s| s.next < s.schedule.count) {
            let sched = s.schedule;
            let due = sched.due_count(spec.clock.now_ms());
            while s.next < due {
                let j = s.next;
                let k = sched.first_k + j;
                let slot = share.slot_of(share.client_of(k));
                if let Some(conn) = w.conns[slot].as_mut().filter(|c| c.state == UserState::Live) {
                    let sent_ms = spec.clock.now_ms();
                    let due_ms = sched.due_ms(j);
                    let measured = sched.measured(j);
                    let outcome = conn.submit(k, &spec.id_prefix, due_ms, sent_ms, measured, &mut bufs);
                    if measured {
                        w.stats.on_sent(sent_ms - due_ms);
                    }
                    last_send_ms = sent_ms;
                    w.settle(outcome, slot, &poll);
                }
                s.next = share.next_owned(&sched, j + 1);
            }
            if s.next >= sched.count {
                s.done_at_ms = Some(spec.clock.now_ms());
            } else {
                let at = next_tick_ms(sched.due_ms(s.next), last_send_ms, spec.min_tick_ms);
                if spec.spin_ms > 0.0 && at - spec.clock.now_ms() <= spec.spin_ms {
                    spin = true;
                } else {
                    timer.arm(spec.clock.monotonic_at(at));
                }
            }
        }

        let now = spec.clock.now_ms();
        if now >= next_housekeeping {
            next_housekeeping = now + HOUSEKEEPING_MS;
            for slot in 0..w.conns.len() {
                let Some(conn) = w.conns[slot].as_mut() else { continue };
                let outcome = if conn.state != UserState::Live && now - conn.opened_ms > spec.connect_timeout_ms {
                    conn.close(format!(
                        "not logged in after {} ms (stuck in {:?})",
                        spec.connect_timeout_ms, conn.state
                    ))
                } else {
                    conn.tick(now)
                };
                w.settle(outcome, slot, &poll);
            }
        }

        // answer a take once this thread's orders are sent and answered, or its wait ran out
        if let Some((wait_ms, at)) = take.as_ref().map(|t| (t.1, t.2)) {
            let done_at = match sending.as_ref() {
                None => Some(at),
                Some(s) => s.done_at_ms,
            };
            if let Some(done_at) = done_at {
                if w.in_flight() == 0 || now >= done_at.max(at) + wait_ms {
                    let Some((reply, _, _)) = take.take() else { continue };
                    let unanswered =
                        w.conns.iter_mut().flatten().map(|c| c.forget_pending()).sum::<u64>() + std::mem::take(&mut w.closed_unanswered);
                    let _ = reply.send(OrderWorkerReport {
                        stats: std::mem::take(&mut w.stats),
                        answers: std::mem::take(&mut w.answers),
                        unanswered,
                        live: w.users.live,
                        dropped: std::mem::take(&mut w.users.dropped),
                        drop_reason: w.users.drop_reason.take(),
                    });
                }
            }
        }
    }
    for mut conn in w.conns.into_iter().flatten() {
        conn.goodbye();
    }
    Ok(())
}
