//! One configured session and the connection currently bound to it.

use super::app::{dispatch, Application, SessionHandle, SessionId, SessionState, SessionStatus};
use super::commit::Committer;
use crate::fix::codec::{Frame, Framer, Message};
use crate::fix::session::{BusinessReject, Clock, Outbox, PendingSync, Session, SessionApp};
use std::collections::VecDeque;
use std::io::Write;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

pub(super) struct Shared {
    pub session: Session,
    /// The logged-on connection's socket (for writing); `None` when no connection is bound.
    pub conn: Option<TcpStream>,
    /// Counts the connections bound so far: the current one's number.
    pub conn_id: u64,
    /// Gated messages `send_app`ed since the last flush: (where each starts and ends in the
    /// session's output, the journal seq it waits for, its MsgSeqNum).
    pub gated: Vec<(usize, usize, u64, u64)>,
    /// Gated messages stored (MsgSeqNum, journal seq) while the journal may not hold their seq
    /// yet: voided if it never will (`SessionSlot::journal_failed`).
    pub journal_held: Vec<(u64, u64)>,
    /// The bound connection is closing (its session decided to disconnect): a new Logon may
    /// take the session over before that connection's thread has finished.
    pub closing: bool,
}

impl Shared {
    /// Binds `conn` to the session, ending a bound connection that is closing; `None` when
    /// another connection holds the session. Returns the new connection's number.
    pub fn bind(&mut self, conn: TcpStream, app: &mut dyn SessionApp, now: crate::fix::session::Now) -> Option<u64> {
        if self.conn.is_some() {
            if !self.closing {
                return None;
            }
            self.unbind(self.conn_id, app);
        }
        self.conn = Some(conn);
        self.conn_id += 1;
        self.closing = false;
        self.session.on_connect(now);
        Some(self.conn_id)
    }

    /// Ends connection `id` if it is still the bound one.
    pub fn unbind(&mut self, id: u64, app: &mut dyn SessionApp) {
        if self.conn_id == id && self.conn.is_some() {
            self.session.on_disconnect(app);
            if let Some(c) = self.conn.take() {
                let _ = c.shutdown(Shutdown::Both);
            }
            self.closing = false;
        }
    }
}

/// The writing side of the bound connection: output waiting for a store sync, then written in
/// order. Every write to the connection goes through here.
///
/// Output can also wait for the order journal: a gated message (an ExecutionReport stored while
/// its order's journal entry is not durable yet) is written only once the acceptor's journal
/// watermark reaches its seq, and everything after it waits behind it. `gates` marks where in
/// `held` such a wait starts; its seqs never decrease (each is the highest seq of every gated
/// message stored before that point), so only the first can block.
#[derive(Default)]
struct Wire {
    /// A clone of the bound connection's socket, and that connection's number.
    conn: Option<TcpStream>,
    conn_id: u64,
    /// Output waiting for a sync, in order; `base` is the position of its first byte in all
    /// the output queued since start.
    held: Vec<u8>,
    base: u64,
    /// A sync of the store that, run now, covers every change `held` depends on.
    sync: Option<PendingSync>,
    /// Where the store is known durable up to (same positions as `base`).
    synced: u64,
    /// (position, journal seq): output from the position on waits for the seq.
    gates: VecDeque<(u64, u64)>,
    /// The highest journal seq of any gated message stored: output after it (on this or a later
    /// connection: a resend) waits for it too.
    outstanding: u64,
    /// The gated messages in `held` (start, end, journal seq), oldest first.
    waiting: VecDeque<(u64, u64, u64)>,
    /// Parts of `held` never to be written (start, end): gated messages voided because their
    /// journal seq will never be durable.
    skip: Vec<(u64, u64)>,
}

impl Wire {
    /// Drops the held output (the connection ended or failed: it is stored, resent later).
    fn drop_held(&mut self) {
        self.base += self.held.len() as u64;
        self.held.clear();
        self.synced = self.base;
        self.gates.clear();
        self.waiting.clear();
        self.skip.clear();
        self.sync = None;
    }

    /// The journal failed and holds nothing past `durable`: the gated messages waiting for a later
    /// seq are skipped, and nothing waits for more than `durable` any more.
    fn journal_failed(&mut self, durable: u64) {
        for (start, end, seq) in self.waiting.drain(..) {
            if seq > durable && end > self.base {
                self.skip.push((start.max(self.base), end));
            }
        }
        for g in &mut self.gates {
            g.1 = g.1.min(durable);
        }
        self.outstanding = self.outstanding.min(durable);
    }

    /// `held[..n]` without the skipped parts.
    fn unskipped(&self, n: usize) -> Vec<u8> {
        let end = self.base + n as u64;
        let mut out = Vec::with_capacity(n);
        let mut at = self.base;
        for &(s, e) in &self.skip {
            if s >= end {
                break;
            }
            if s > at {
                out.extend_from_slice(&self.held[(at - self.base) as usize..(s - self.base) as usize]);
            }
            at = at.max(e.min(end));
        }
        if end > at {
            out.extend_from_slice(&self.held[(at - self.base) as usize..n]);
        }
        out
    }

    /// Marks that output from `at` on waits for the journal up to `seq` (unless it is there).
    fn gate(&mut self, at: u64, seq: u64, durable: u64) {
        self.outstanding = self.outstanding.max(seq);
        if self.outstanding <= durable || self.gates.back().is_some_and(|g| g.1 >= self.outstanding) {
            return;
        }
        self.gates.push_back((at, self.outstanding));
    }

    /// Where the held output may be written up to: what the store made durable, short of the
    /// first gate whose journal seq is not durable (`durable`).
    fn writable_end(&mut self, durable: u64) -> u64 {
        while self.gates.front().is_some_and(|g| g.1 <= durable) {
            self.gates.pop_front();
        }
        match self.gates.front() {
            Some(g) => self.synced.min(g.0),
            None => self.synced,
        }
    }
}

pub(crate) struct SessionSlot {
    pub id: SessionId,
    pub user: String,
    shared: Mutex<Shared>,
    wire: Mutex<Wire>,
    committer: Arc<Committer>,
    /// Messages sent through a [`SessionHandle`] while another thread held the session, and
    /// which of them wait for a journal seq (message index, seq).
    pending: Mutex<(Outbox, Vec<(usize, u64)>)>,
    logged_on: AtomicBool,
    /// Messages received (framed, garbled ones excluded) and written, since start.
    received: AtomicU64,
    sent: AtomicU64,
    /// State and sequence numbers as of the last flush: read without the session's lock, which
    /// an application callback may hold for long.
    state: AtomicU8,
    next_sender: AtomicU64,
    next_target: AtomicU64,
    /// The store's health as of the last flush (and failed syncs of the committer).
    health: Mutex<StoreHealth>,
    /// `health` says the store fails (its lock is taken by a flush only then, or on a failure).
    health_failed: AtomicBool,
    /// Failed writes and syncs: the session's count as of the last flush, and the committer's.
    store_failures: AtomicU64,
    sync_failures: AtomicU64,
    app: Arc<dyn Application>,
    clock: Arc<dyn Clock>,
}

/// What the status says of a session's store.
#[derive(Default)]
struct StoreHealth {
    /// The store's error while it fails, and since when (UTC ms).
    error: Option<(String, i64)>,
    /// Messages it could not take yet.
    unstored: u64,
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
        committer: Arc<Committer>,
    ) -> SessionSlot {
        let (next_sender, next_target) = (session.next_sender_seq(), session.next_target_seq());
        SessionSlot {
            id,
            user,
            state: AtomicU8::new(SessionState::Disconnected as u8),
            next_sender: AtomicU64::new(next_sender),
            next_target: AtomicU64::new(next_target),
            health: Mutex::new(StoreHealth::default()),
            health_failed: AtomicBool::new(false),
            store_failures: AtomicU64::new(0),
            sync_failures: AtomicU64::new(0),
            shared: Mutex::new(Shared {
                session,
                conn: None,
                conn_id: 0,
                gated: Vec::new(),
                journal_held: Vec::new(),
                closing: false,
            }),
            wire: Mutex::new(Wire::default()),
            committer,
            pending: Mutex::new((Outbox::new(), Vec::new())),
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
        let health = self.health();
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
            store_error: health.error.as_ref().map(|e| e.0.clone()),
            store_failed_since_ms: health.error.as_ref().map(|e| e.1),
            unstored_messages: health.unstored,
            store_failures: self.store_failures.load(Ordering::Relaxed) + self.sync_failures.load(Ordering::Relaxed),
        }
    }

    fn health(&self) -> MutexGuard<'_, StoreHealth> {
        self.health.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Copies the session's store health for the status (`now_ms`: when a failure is first seen).
    fn note_health(&self, session: &Session, now_ms: i64) {
        self.store_failures.store(session.store_failures(), Ordering::Relaxed);
        let failing = session.store_error().is_some() || session.owed_len() > 0;
        // the common case, a store that works and worked: no lock on the per-read path
        if !failing && !self.health_failed.load(Ordering::Acquire) {
            return;
        }
        let mut h = self.health();
        h.unstored = session.owed_len() as u64;
        match (session.store_error(), &mut h.error) {
            (None, e) => *e = None,
            (Some(text), Some(e)) => text.clone_into(&mut e.0),
            (Some(text), e @ None) => *e = Some((text.to_owned(), now_ms)),
        }
        self.health_failed
            .store(h.error.is_some() || h.unstored > 0, Ordering::Release);
    }

    /// A sync the committer ran for this session failed.
    fn note_sync_failure(&self, e: &std::io::Error, now_ms: i64) {
        self.sync_failures.fetch_add(1, Ordering::Relaxed);
        let mut h = self.health();
        if h.error.is_none() {
            h.error = Some((e.to_string(), now_ms));
        }
        self.health_failed.store(true, Ordering::Release);
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

    /// Voids stored messages `seqs` (durable on return).
    pub fn void_sent(&self, seqs: &[u64]) -> std::io::Result<()> {
        self.lock().session.void_sent(seqs)
    }

    /// Makes every store change durable now (the acceptor is stopping: the last sequence
    /// numbers and anything stored since the last sync).
    pub(super) fn sync_store(&self) -> std::io::Result<()> {
        match self.lock().session.sync_store_later()? {
            Some(p) => p.run(),
            None => Ok(()),
        }
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
    /// connection (number `id`) must close; also when another connection took the session over.
    pub fn on_frames(self: &Arc<Self>, framer: &mut Framer, id: u64) -> bool {
        let (stale, close) = self.with_session(|sh, app, _| {
            if sh.conn_id != id {
                return true;
            }
            while let Some(frame) = framer.next_frame() {
                let Frame::Message(range) = frame else { continue };
                self.note_received();
                sh.session.on_frame(&framer.bytes()[range], self.clock.now(), app);
                if sh.session.disconnect_reason().is_some() {
                    break;
                }
            }
            false
        });
        stale || close
    }

    /// Queues messages from a [`SessionHandle`] and sends them if the session is free; if not,
    /// the thread holding it sends them before it lets go. `gates`: (index in `messages`, journal
    /// seq) of the messages that must not be written before the journal holds that seq.
    pub fn send(self: &Arc<Self>, messages: &Outbox, gates: &[(usize, u64)]) {
        {
            let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            let (out, pending_gates) = &mut *pending;
            let first = out.len();
            for (t, h, b) in messages.iter() {
                out.push_encoded(t, h, b);
            }
            pending_gates.extend(gates.iter().map(|&(i, seq)| (first + i, seq)));
        }
        self.drain();
    }

    /// The order journal is durable up to `seq`: writes the output that waited only for it.
    pub fn journal_durable(&self, seq: u64) {
        self.committer.note_journal_durable(seq);
        let mut w = self.wire();
        let _ = self.write_released(&mut w);
    }

    /// The order journal failed and holds nothing past `durable`: the stored messages waiting for
    /// a later seq are voided (durably: a resend gap-fills them) and never written, and the output
    /// behind them goes. Errors: the store could not void them; they are still never written (a
    /// resend gap-fills them), the session is logged out with a Text naming the store's error
    /// and refuses Logons until the store records the voids (`Session::void_sent`).
    pub fn journal_failed(self: &Arc<Self>, durable: u64) -> std::io::Result<()> {
        let mut sh = self.lock();
        self.drain_pending(&mut sh);
        let close = self.flush(&mut sh);
        // kept for the store (not stored yet): never stored nor sent
        sh.session.drop_owed(|gate| gate > durable);
        let lost: Vec<u64> = sh.journal_held.iter().filter(|h| h.1 > durable).map(|h| h.0).collect();
        let voided = if lost.is_empty() {
            Ok(())
        } else {
            sh.session.void_sent(&lost)
        };
        sh.journal_held.clear();
        {
            let mut w = self.wire();
            w.journal_failed(durable);
            if !close {
                let _ = self.write_released(&mut w);
            }
        }
        if let Err(e) = &voided {
            let text = format!("Session store failed, stored messages cannot be voided: {e}");
            if sh.session.logout(&text, self.clock.now()) {
                self.flush(&mut sh);
            }
        }
        self.note_health(&sh.session, self.clock.now().utc_ms);
        drop(sh);
        self.drain();
        voided
    }

    fn drain(self: &Arc<Self>) {
        loop {
            let empty = self.pending.lock().map(|p| p.0.is_empty()).unwrap_or(true);
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
        let (out, gates) = &mut *pending;
        if out.is_empty() {
            return;
        }
        let now = self.clock.now();
        let mut next_gate = gates.iter().peekable();
        for (i, (t, h, b)) in out.iter().enumerate() {
            let mut gate = 0;
            while let Some((_, seq)) = next_gate.next_if(|g| g.0 == i) {
                gate = gate.max(*seq);
            }
            let at = sh.session.output().len();
            // not stored (a full disk): the session keeps it with its gate (`take_stored_late`)
            let stored = sh.session.send_app_gated(t, h, b, gate, now);
            let end = sh.session.output().len();
            if let (Some(msg_seq), true) = (stored, gate != 0) {
                sh.gated.push((at, end, gate, msg_seq));
            }
        }
        out.clear();
        gates.clear();
    }

    fn wire(&self) -> MutexGuard<'_, Wire> {
        self.wire.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes `bytes` to the connection, counting the messages; false when the write failed.
    fn write_out(&self, conn: &mut &TcpStream, bytes: &[u8]) -> bool {
        // one CheckSum field per message: SOH "10="
        let n = bytes.windows(4).filter(|w| *w == b"\x0110=").count();
        self.sent.fetch_add(n as u64, Ordering::Relaxed);
        conn.write_all(bytes).is_ok()
    }

    /// For the committer: where the held output ends now and the sync it needs; `None` when
    /// nothing is held.
    pub(super) fn held_mark(&self) -> Option<(u64, Option<PendingSync>)> {
        let w = self.wire();
        if w.held.is_empty() {
            return None;
        }
        Some((w.base + w.held.len() as u64, w.sync.clone()))
    }

    /// For the committer, after its sync (`synced` false: it failed): writes the held output up
    /// to `end`. A failed sync or write closes the connection (the conn thread then ends the
    /// session's connection); what was held is stored and reaches the counterparty by resend.
    pub(super) fn release_held(&self, end: u64, failed: Option<&std::io::Error>) {
        if let Some(e) = failed {
            self.note_sync_failure(e, self.clock.now().utc_ms);
        }
        let mut w = self.wire();
        if failed.is_some() {
            if end > w.base {
                if let Some(conn) = &w.conn {
                    let _ = conn.shutdown(Shutdown::Both);
                }
                w.drop_held();
            }
            return;
        }
        w.synced = w.synced.max(end);
        let _ = self.write_released(&mut w);
    }

    /// Writes the held output that is durable in the store and not waiting for the journal. A
    /// failed write closes the connection (what was held is stored: resent after the next Logon).
    /// False when the write failed.
    fn write_released(&self, w: &mut Wire) -> bool {
        let end = w.writable_end(self.committer.journal_durable());
        let n = end.saturating_sub(w.base).min(w.held.len() as u64) as usize;
        if n == 0 {
            return true;
        }
        let ok = match (&w.conn, w.skip.is_empty()) {
            (None, _) => true,
            (Some(conn), true) => self.write_out(&mut &*conn, &w.held[..n]),
            (Some(conn), false) => self.write_out(&mut &*conn, &w.unskipped(n)),
        };
        if ok {
            w.held.drain(..n);
            w.base += n as u64;
            let base = w.base;
            w.skip.retain(|s| s.1 > base);
            while w.waiting.front().is_some_and(|g| g.1 <= base) {
                w.waiting.pop_front();
            }
            if w.held.is_empty() {
                w.sync = None;
            }
        } else {
            if let Some(conn) = &w.conn {
                let _ = conn.shutdown(Shutdown::Both);
            }
            w.drop_held();
        }
        ok
    }

    /// Makes the store durable (handing the sync to the committer), writes the session's
    /// output once it is, closes the socket if the session decided to disconnect. Returns true
    /// if the connection must close.
    fn flush(self: &Arc<Self>, sh: &mut Shared) -> bool {
        // before the write: the counterparty never sees a message the status does not count
        self.next_sender.store(sh.session.next_sender_seq(), Ordering::Release);
        self.next_target.store(sh.session.next_target_seq(), Ordering::Release);
        let mut close = sh.session.disconnect_reason().is_some();
        let mut w = self.wire();
        if w.conn.is_some() && (sh.conn.is_none() || w.conn_id != sh.conn_id) {
            // the connection ended: what it did not get is stored (resent after the next Logon)
            if let Some(p) = w.sync.take() {
                let _ = p.run();
            }
            w.drop_held();
            w.conn = None;
        }
        if w.conn.is_none() {
            w.conn = sh.conn.as_ref().and_then(|c| c.try_clone().ok());
            w.conn_id = sh.conn_id;
        }
        // gated messages: their output waits for the journal; stored ones with no output (no
        // connection) make a later connection's output wait (a resend may carry them)
        let journal = self.committer.journal_durable();
        let start = w.base + w.held.len() as u64;
        for (msg_seq, seq) in sh.session.take_stored_late() {
            // stored after the store failed, without output: a resend carries it, so what
            // follows (on this or a later connection) waits for its journal seq
            if seq > journal {
                sh.journal_held.push((msg_seq, seq));
                w.outstanding = w.outstanding.max(seq);
            }
        }
        if w.conn.is_some() && !sh.session.output().is_empty() {
            let outstanding = w.outstanding;
            w.gate(start, outstanding, journal);
        }
        sh.journal_held.retain(|h| h.1 > journal);
        for (at, end, seq, msg_seq) in sh.gated.drain(..) {
            if seq <= journal {
                continue;
            }
            sh.journal_held.push((msg_seq, seq));
            if w.conn.is_some() {
                w.gate(start + at as u64, seq, journal);
                w.waiting.push_back((start + at as u64, start + end as u64, seq));
            } else {
                w.outstanding = w.outstanding.max(seq);
            }
        }
        if !sh.session.output().is_empty() {
            match sh.session.sync_store_later() {
                Err(_) => close = true,
                Ok(pending) if close => {
                    // the last output: on disk and written before the socket closes (short of
                    // what waits for the journal)
                    let synced = match pending.as_ref().or(w.sync.as_ref()) {
                        Some(p) => p.run().is_ok(),
                        None => true,
                    };
                    if synced && w.conn.is_some() {
                        w.held.extend_from_slice(sh.session.output());
                        w.synced = w.base + w.held.len() as u64;
                        let _ = self.write_released(&mut w);
                    }
                }
                Ok(None) if w.held.is_empty() => {
                    // nothing to make durable and nothing before it: written now (unless it
                    // waits for the journal)
                    if w.conn.is_some() {
                        w.held.extend_from_slice(sh.session.output());
                        w.synced = w.base + w.held.len() as u64;
                        close |= !self.write_released(&mut w);
                    }
                }
                Ok(pending) => {
                    if w.conn.is_some() {
                        w.held.extend_from_slice(sh.session.output());
                        if pending.is_some() {
                            w.sync = pending;
                        }
                        drop(w);
                        self.committer.submit(self);
                        w = self.wire();
                    } else if let Some(p) = pending {
                        // no connection: nothing waits for it, but the changes are made durable
                        let _ = p.run();
                    }
                }
            }
            sh.session.clear_output();
        } else if w.conn.is_none() {
            // stored without output (reports while no one is logged on): durable now, so the
            // next Logon's resend has them after a crash too
            if let Ok(Some(p)) = sh.session.sync_store_later() {
                let _ = p.run();
            }
        }
        drop(w);
        self.note_health(&sh.session, self.clock.now().utc_ms);
        let logged_on = sh.session.is_logged_on() && !close;
        self.logged_on.store(logged_on, Ordering::Release);
        let state = match (&sh.conn, logged_on) {
            (None, _) => SessionState::Disconnected,
            (Some(_), false) => SessionState::Connected,
            (Some(_), true) => SessionState::LoggedOn,
        };
        self.state.store(state as u8, Ordering::Release);

        if close {
            sh.closing = sh.conn.is_some();
            if let Some(conn) = &sh.conn {
                let _ = conn.shutdown(Shutdown::Both);
            }
        }
        close
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fix::dictionary::Dictionary;
    use crate::fix::session::{MemoryStore, Now, SessionConfig};
    use std::net::TcpListener;

    #[derive(Default)]
    struct Count {
        logouts: u32,
    }

    impl SessionApp for Count {
        fn on_logout(&mut self) {
            self.logouts += 1;
        }
        fn on_message(&mut self, _: &Message<'_>, _: &mut Outbox) -> Result<(), BusinessReject> {
            Ok(())
        }
    }

    fn socket(l: &TcpListener) -> TcpStream {
        let c = TcpStream::connect(l.local_addr().expect("addr")).expect("connect");
        let _ = l.accept().expect("accept");
        c
    }

    #[test]
    fn a_closing_connection_can_be_taken_over_and_its_late_unbind_is_ignored() {
        let l = TcpListener::bind("127.0.0.1:0").expect("listen");
        let cfg = SessionConfig::new(Dictionary::fix42(), "TW", "CLIENT");
        let mut sh = Shared {
            session: Session::new(cfg, Box::new(MemoryStore::new())),
            conn: None,
            conn_id: 0,
            gated: Vec::new(),
            journal_held: Vec::new(),
            closing: false,
        };
        let mut app = Count::default();
        let now = Now { utc_ms: 0, mono_ms: 0 };
        assert_eq!(sh.bind(socket(&l), &mut app, now), Some(1));
        // live: a second connection is refused
        assert_eq!(sh.bind(socket(&l), &mut app, now), None);
        // closing (the session decided to disconnect, its thread has not ended it yet)
        sh.closing = true;
        assert_eq!(sh.bind(socket(&l), &mut app, now), Some(2));
        assert!(!sh.closing);
        // the first connection's thread ends late: the second one stays bound
        sh.unbind(1, &mut app);
        assert!(sh.conn.is_some());
        assert_eq!(sh.conn_id, 2);
        sh.unbind(2, &mut app);
        assert!(sh.conn.is_none());
    }

    struct NoApp;
    impl Application for NoApp {}

    /// A slot over a file store in a fresh directory, with no connection bound.
    fn file_slot(name: &str) -> (Arc<SessionSlot>, Arc<Committer>, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!("tw-fix-slot-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = crate::fix::session::FileStore::open(&dir).expect("store");
        let cfg = SessionConfig::new(Dictionary::fix42(), "TW", "CLIENT");
        let committer = Committer::start().expect("committer");
        let id = SessionId {
            begin_string: "FIX.4.2".into(),
            sender_comp_id: "TW".into(),
            target_comp_id: "CLIENT".into(),
        };
        let slot = Arc::new(SessionSlot::new(
            id,
            "u".into(),
            Session::new(cfg, Box::new(store)),
            Arc::new(NoApp),
            Arc::new(crate::fix::session::SystemClock::default()),
            Arc::clone(&committer),
        ));
        (slot, committer, dir)
    }

    /// A logged-on slot over a file store whose committer runs only when the test says
    /// (`commit_now`), and the counterparty's end of the connection.
    fn logged_on_slot(name: &str) -> (Arc<SessionSlot>, Arc<Committer>, TcpStream, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!("tw-fix-slot-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = crate::fix::session::FileStore::open(&dir).expect("store");
        logged_on_slot_over(Box::new(store), dir)
    }

    fn logged_on_slot_over(
        store: Box<dyn crate::fix::session::SessionStore>,
        dir: std::path::PathBuf,
    ) -> (Arc<SessionSlot>, Arc<Committer>, TcpStream, std::path::PathBuf) {
        let cfg = SessionConfig::new(Dictionary::fix42(), "TW", "CLIENT");
        let committer = Arc::new(Committer::default());
        let id = SessionId {
            begin_string: "FIX.4.2".into(),
            sender_comp_id: "TW".into(),
            target_comp_id: "CLIENT".into(),
        };
        let clock = Arc::new(crate::fix::session::SystemClock::default());
        let slot = Arc::new(SessionSlot::new(
            id,
            "u".into(),
            Session::new(cfg, store),
            Arc::new(NoApp),
            clock.clone(),
            Arc::clone(&committer),
        ));
        let l = TcpListener::bind("127.0.0.1:0").expect("listen");
        let client = TcpStream::connect(l.local_addr().expect("addr")).expect("connect");
        let (server, _) = l.accept().expect("accept");
        let mut b = crate::fix::codec::Builder::new();
        b.begin(b"A")
            .field(49, b"CLIENT")
            .field(56, b"TW")
            .field_u64(34, 1)
            .field_timestamp(52, clock.now().utc_ms)
            .field(98, b"0")
            .field(108, b"30");
        let logon = b.finish(b"FIX.4.2").to_vec();
        let (_, close) = slot.with_session(|sh, app, now| {
            sh.bind(server, app, now);
            sh.session.on_frame(&logon, now, app);
        });
        assert!(!close);
        committer.commit_now();
        assert_eq!(slot.status().messages_out, 1, "our Logon");
        (slot, committer, client, dir)
    }

    /// Reads from the counterparty's end until `n` messages arrived; their MsgTypes and ClOrdIDs.
    fn read_messages(c: &mut TcpStream, n: usize) -> Vec<String> {
        use std::io::Read;
        c.set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .expect("timeout");
        let mut framer = Framer::new(1 << 16);
        let mut got = Vec::new();
        while got.len() < n {
            while let Some(Frame::Message(r)) = framer.next_frame() {
                let mut p = crate::fix::codec::Parser::new();
                let m = p.parse(&framer.bytes()[r]).expect("parses");
                let cl = m.get_str(11).unwrap_or_default();
                let text = m.get_str(58).map(|t| format!(":{t}")).unwrap_or_default();
                got.push(format!("{}:{cl}{text}", m.get_str(35).unwrap_or_default()));
            }
            if got.len() >= n {
                break;
            }
            let mut buf = [0u8; 4096];
            let k = c.read(&mut buf).expect("read within 10 s");
            assert!(k > 0, "closed");
            framer.push(&buf[..k]);
        }
        got
    }

    fn report(cl: &str) -> Outbox {
        let mut out = Outbox::new();
        out.push_encoded(b"8", b"", format!("37=1\x0111={cl}\x01").as_bytes());
        out
    }

    #[test]
    fn a_gated_report_leaves_only_once_both_the_store_and_the_journal_are_durable() {
        let (slot, committer, mut client, dir) = logged_on_slot("gated");
        let written = || slot.status().messages_out;
        assert_eq!(read_messages(&mut client, 1), ["A:"]);

        // the store's sync completes first: the report still waits for journal seq 7
        slot.send(&report("S1"), &[(0, 7)]);
        assert_eq!(slot.next_sender.load(Ordering::Acquire), 3, "stored as sent at once");
        assert_eq!(written(), 1);
        committer.commit_now();
        assert_eq!(written(), 1, "store durable, journal not: not written");
        slot.journal_durable(6);
        assert_eq!(written(), 1, "journal durable only up to 6");
        slot.journal_durable(7);
        assert_eq!(written(), 2);
        assert_eq!(read_messages(&mut client, 1), ["8:S1"]);

        // the journal completes first: the report waits for the store's sync
        slot.send(&report("J1"), &[(0, 9)]);
        slot.journal_durable(9);
        assert_eq!(written(), 2, "journal durable, store not synced: not written");
        committer.commit_now();
        assert_eq!(written(), 3);
        assert_eq!(read_messages(&mut client, 1), ["8:J1"]);

        // what follows a waiting report waits behind it (sequence numbers stay in order)
        slot.send(&report("W1"), &[(0, 11)]);
        slot.send(&report("P1"), &[]);
        committer.commit_now();
        assert_eq!(written(), 3, "P1 needs no journal entry but follows W1");
        slot.journal_durable(11);
        assert_eq!(written(), 5);
        assert_eq!(read_messages(&mut client, 2), ["8:W1", "8:P1"]);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_store_that_cannot_void_a_held_report_logs_the_session_out_and_releases_the_rest() {
        let dir = std::env::temp_dir().join(format!("tw-fix-slot-voidfail-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (store, failing) = crate::fix::session::FailingStore::open(&dir, crate::fix::session::Refuses::Voids);
        let (slot, committer, mut client, dir) = logged_on_slot_over(Box::new(store), dir);
        assert_eq!(read_messages(&mut client, 1), ["A:"]);
        // R1 waits for journal seq 7, P1 (a refusal) behind it
        slot.send(&report("R1"), &[(0, 7)]);
        slot.send(&report("P1"), &[]);
        committer.commit_now();
        assert_eq!(slot.status().messages_out, 1, "both wait for the journal");
        // the journal fails at 6, and the store cannot record R1's void
        failing.store(true, Ordering::Release);
        slot.journal_durable(6);
        let e = slot.journal_failed(6).expect_err("the void is refused");
        committer.commit_now();
        let text = format!("Session store failed, stored messages cannot be voided: {e}");
        assert_eq!(read_messages(&mut client, 2), ["8:P1".to_owned(), format!("5::{text}")]);
        assert_eq!(slot.lock().session.store_error(), Some(e.to_string().as_str()));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_report_kept_for_a_full_store_is_dropped_when_its_journal_entry_fails() {
        let dir = std::env::temp_dir().join(format!("tw-fix-slot-savefail-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (store, failing) = crate::fix::session::FailingStore::open(&dir, crate::fix::session::Refuses::Saves);
        let (slot, _committer, mut client, dir) = logged_on_slot_over(Box::new(store), dir);
        assert_eq!(read_messages(&mut client, 1), ["A:"]);
        // the store refuses R1 (waiting for journal seq 7) and so P1 waits behind it
        failing.store(true, Ordering::Release);
        slot.send(&report("R1"), &[(0, 7)]);
        slot.send(&report("P1"), &[]);
        let st = slot.status();
        assert_eq!(st.unstored_messages, 2);
        assert!(st.store_error.is_some() && st.store_failed_since_ms.is_some(), "{st:?}");
        assert!(st.store_failures >= 1);
        // the journal fails at 6: R1 is never stored nor sent, P1 still is
        slot.journal_durable(6);
        slot.journal_failed(6).expect("nothing stored to void");
        assert_eq!(slot.status().unstored_messages, 1);
        failing.store(false, Ordering::Release);
        slot.send(&report("P2"), &[]);
        let st = slot.status();
        assert_eq!((st.unstored_messages, st.store_error), (0, None));
        let mut stored = Vec::new();
        slot.for_each_sent(&mut |seq, m| {
            let mut p = crate::fix::codec::Parser::new();
            let msg = p.parse(m).expect("parses");
            stored.push(format!(
                "{seq}:{}",
                msg.get_str(11).unwrap_or(msg.get_str(35).unwrap_or_default())
            ));
        })
        .expect("read");
        assert_eq!(stored, ["1:A", "2:P1", "3:P2"]);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn reports_stored_while_nobody_is_logged_on_are_synced_at_once() {
        let (slot, committer, dir) = file_slot("away");
        let mut out = Outbox::new();
        out.push_encoded(b"8", b"", b"37=1\x0111=a\x01");
        slot.send(&out, &[]);
        assert_eq!(slot.next_sender.load(Ordering::Acquire), 2, "stored as sent");
        let left = slot.lock().session.sync_store_later().expect("store");
        assert!(left.is_none(), "the report is durable without waiting for a logon");
        committer.stop();
        let _ = std::fs::remove_dir_all(dir);
    }
}
