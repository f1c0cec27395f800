//! One configured session and the connection currently bound to it.

use super::app::{dispatch, Application, SessionHandle, SessionId, SessionState, SessionStatus};
use crate::fix::codec::{Frame, Framer, Message};
use crate::fix::session::{BusinessReject, Clock, Outbox, Session, SessionApp};
use std::io::Write;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

pub(super) struct Shared {
    pub session: Session,
    /// The logged-on connection's socket (for writing); `None` when no connection is bound.
    pub conn: Option<TcpStream>,
}

pub(crate) struct SessionSlot {
    pub id: SessionId,
    pub user: String,
    shared: Mutex<Shared>,
    /// Messages sent through a [`SessionHandle`] while another thread held the session.
    pending: Mutex<Outbox>,
    logged_on: AtomicBool,
    /// Messages received (framed, garbled ones excluded) and written, since start.
    received: AtomicU64,
    sent: AtomicU64,
    /// State and sequence numbers as of the last flush: read without the session's lock, which
    /// an application callback may hold for long (the gateway's pre-trade check waits on JS).
    state: AtomicU8,
    next_sender: AtomicU64,
    next_target: AtomicU64,
    app: Arc<dyn Application>,
    clock: Arc<dyn Clock>,
}

/// Adapts the acceptor's [`Application`] to the session's callbacks.
struct Adapter<'a> {
    app: &'a dyn Application,
    handle: &'a SessionHandle,
}

impl SessionApp for Adapter<'_> {
    fn on_logon(&mut self) {
        self.app.on_logon(self.handle);
    }
    fn on_logout(&mut self) {
        self.app.on_logout(self.handle);
    }
    fn on_message(&mut self, msg: &Message<'_>, out: &mut Outbox) -> Result<(), BusinessReject> {
        dispatch(self.app, msg, out, self.handle)
    }
}

impl SessionSlot {
    pub fn new(
        id: SessionId,
        user: String,
        session: Session,
        app: Arc<dyn Application>,
        clock: Arc<dyn Clock>,
    ) -> SessionSlot {
        let (next_sender, next_target) = (session.next_sender_seq(), session.next_target_seq());
        SessionSlot {
            id,
            user,
            state: AtomicU8::new(SessionState::Disconnected as u8),
            next_sender: AtomicU64::new(next_sender),
            next_target: AtomicU64::new(next_target),
            shared: Mutex::new(Shared { session, conn: None }),
            pending: Mutex::new(Outbox::new()),
            logged_on: AtomicBool::new(false),
            received: AtomicU64::new(0),
            sent: AtomicU64::new(0),
            app,
            clock,
        }
    }

    pub fn is_logged_on(&self) -> bool {
        self.logged_on.load(Ordering::Acquire)
    }

    /// Counts one received message.
    pub fn note_received(&self) {
        self.received.fetch_add(1, Ordering::Relaxed);
    }

    /// The session's state, sequence numbers and counters as of its last flush (never waits for
    /// the session's lock).
    pub fn status(&self) -> SessionStatus {
        let state = match self.state.load(Ordering::Acquire) {
            s if s == SessionState::LoggedOn as u8 => SessionState::LoggedOn,
            s if s == SessionState::Connected as u8 => SessionState::Connected,
            _ => SessionState::Disconnected,
        };
        SessionStatus {
            id: self.id.clone(),
            user: self.user.clone(),
            state,
            next_sender_seq: self.next_sender.load(Ordering::Acquire),
            next_target_seq: self.next_target.load(Ordering::Acquire),
            messages_in: self.received.load(Ordering::Relaxed),
            messages_out: self.sent.load(Ordering::Relaxed),
        }
    }

    /// Starts an operator's Logout (`Session::logout`); false when not logged on.
    pub fn logout(self: &Arc<Self>, text: &str) -> bool {
        let (started, _) = self.with_session(|sh, _, now| sh.session.logout(text, now));
        started
    }

    /// Every stored sent message, oldest first.
    pub fn for_each_sent(&self, each: &mut dyn FnMut(u64, &[u8])) -> std::io::Result<()> {
        self.lock().session.for_each_sent(each)
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        // a panic while holding the lock leaves the session as it was: keep serving it
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on the locked session with the application adapter, then sends what the
    /// session produced. Returns `f`'s result and whether the connection must close.
    pub fn with_session<R>(
        self: &Arc<Self>,
        f: impl FnOnce(&mut Shared, &mut dyn SessionApp, crate::fix::session::Now) -> R,
    ) -> (R, bool) {
        let handle = SessionHandle { slot: Arc::clone(self) };
        let mut adapter = Adapter {
            app: self.app.as_ref(),
            handle: &handle,
        };
        let mut sh = self.lock();
        let r = f(&mut sh, &mut adapter, self.clock.now());
        self.drain_pending(&mut sh);
        let close = self.flush(&mut sh);
        drop(sh);
        self.drain();
        (r, close)
    }

    /// Runs every complete message `framer` holds through the session under one lock, then
    /// makes the store durable and writes all the answers in one `write`: a counterparty that
    /// sent faster than it was read (a burst, or a backlog after a stall) is answered at the
    /// cost of one lock, one sync and one system call, not one per message. Garbled data is
    /// dropped (the connection is bound, so its session is logged on or logging on); a message
    /// that ends the session stops the batch, the rest stay unread. Returns whether the
    /// connection must close.
    pub fn on_frames(self: &Arc<Self>, framer: &mut Framer) -> bool {
        let ((), close) = self.with_session(|sh, app, _| {
            while let Some(frame) = framer.next_frame() {
                let Frame::Message(range) = frame else { continue };
                self.note_received();
                sh.session.on_frame(&framer.bytes()[range], self.clock.now(), app);
                if sh.session.disconnect_reason().is_some() {
                    break;
                }
            }
        });
        close
    }

    /// Queues messages from a [`SessionHandle`] and sends them if the session is free; if not,
    /// the thread holding it sends them before it lets go.
    pub fn send(&self, messages: &Outbox) {
        {
            let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            for (t, h, b) in messages.iter() {
                pending.push_encoded(t, h, b);
            }
        }
        self.drain();
    }

    fn drain(&self) {
        loop {
            let empty = self.pending.lock().map(|p| p.is_empty()).unwrap_or(true);
            if empty {
                return;
            }
            let Ok(mut sh) = self.shared.try_lock() else {
                return;
            };
            self.drain_pending(&mut sh);
            self.flush(&mut sh);
        }
    }

    fn drain_pending(&self, sh: &mut Shared) {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        if pending.is_empty() {
            return;
        }
        let now = self.clock.now();
        for (t, h, b) in pending.iter() {
            sh.session.send_app(t, h, b, now);
        }
        pending.clear();
    }

    /// Makes the store durable, writes the session's output, closes the socket if the session
    /// decided to disconnect. Returns true if the connection must close.
    fn flush(&self, sh: &mut Shared) -> bool {
        // before the write: the counterparty never sees a message the status does not count
        self.next_sender.store(sh.session.next_sender_seq(), Ordering::Release);
        self.next_target.store(sh.session.next_target_seq(), Ordering::Release);
        let mut close = sh.session.disconnect_reason().is_some();
        if !sh.session.output().is_empty() {
            // on disk before the counterparty can see it
            let synced = sh.session.sync_store();
            match (&mut sh.conn, synced) {
                (Some(conn), Ok(())) => {
                    let out = sh.session.output();
                    // one CheckSum field per message: SOH "10="
                    let n = out.windows(4).filter(|w| *w == b"\x0110=").count();
                    self.sent.fetch_add(n as u64, Ordering::Relaxed);
                    if conn.write_all(out).is_err() {
                        close = true;
                    }
                }
                (_, Err(_)) => close = true,
                (None, Ok(())) => {}
            }
            sh.session.clear_output();
        }
        let logged_on = sh.session.is_logged_on() && !close;
        self.logged_on.store(logged_on, Ordering::Release);
        let state = match (&sh.conn, logged_on) {
            (None, _) => SessionState::Disconnected,
            (Some(_), false) => SessionState::Connected,
            (Some(_), true) => SessionState::LoggedOn,
        };
        self.state.store(state as u8, Ordering::Release);

        if close {
            if let Some(conn) = &sh.conn {
                let _ = conn.shutdown(Shutdown::Both);
            }
        }
        close
    }
}
