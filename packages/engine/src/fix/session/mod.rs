//! The FIX session layer as plain logic: bytes of one framed message and the time go in,
//! messages to send, store updates and a disconnect decision come out. No sockets, threads or
//! clock reads here; the acceptor drives it.
//!
//! Behaviour follows the FIX session protocol as QuickFIX implements it (and as its acceptance
//! suite checks): Logon (HeartBtInt, ResetSeqNumFlag, NextExpectedMsgSeqNum on FIX 4.4,
//! optional Username/Password), Heartbeat and TestRequest timers, gap detection with a queue of
//! early messages and one outstanding ResendRequest, resends of application messages
//! (PossDupFlag, OrigSendingTime) with admin messages gap-filled, SequenceReset in both modes,
//! Logout (also for a too-low MsgSeqNum without PossDupFlag), session Reject and
//! BusinessMessageReject, CompID / BeginString / SendingTime checks.

mod arena;
mod clock;
mod inbound;
mod outbox;
mod resend;
mod store;

pub use arena::SentArena;
pub use clock::{Clock, Now, SystemClock};
pub use outbox::{MessageWriter, Outbox};
#[cfg(test)]
pub(crate) use store::{FailingStore, Refuses};
pub use store::{FileStore, MemoryStore, PendingSync, SessionStore, MEMORY_STORE_LIMIT};

use crate::fix::codec::{tag, Builder, Message, Parser};
use crate::fix::dictionary::{Dictionary, Validator};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::Duration;

/// Settings of one session (one counterparty).
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// FIX version of the session.
    pub dictionary: Dictionary,
    /// Our CompID: SenderCompID (49) of what we send, TargetCompID (56) of what we receive.
    pub sender_comp_id: String,
    /// The counterparty's CompID.
    pub target_comp_id: String,
    /// Reject messages whose SendingTime is more than `max_latency` away from our clock.
    /// @default true
    pub check_latency: bool,
    /// Allowed SendingTime difference (whole seconds count). @default 120 s
    pub max_latency: Duration,
    /// Reset both sequence numbers to 1 and forget sent messages when a connection ends
    /// (the acceptance test mode). @default false: sequence numbers persist across connections
    /// and restarts.
    pub reset_on_disconnect: bool,
    /// FIX 4.4: send NextExpectedMsgSeqNum (789) in our Logon and honour the counterparty's.
    /// @default true for FIX 4.4 (ignored for FIX 4.2)
    pub next_expected_msg_seq_num: bool,
    /// How long to wait for the counterparty's Logout after sending ours. @default 2 s
    pub logout_timeout: Duration,
    /// Messages held while a gap is being filled; beyond this they are dropped (they are
    /// requested again by the outstanding ResendRequest). @default 10000
    pub max_queued: usize,
    /// FIX 4.4: Username (553) the Logon must carry, if set.
    pub username: Option<String>,
    /// FIX 4.4: Password (554) the Logon must carry, if set.
    pub password: Option<String>,
}

impl SessionConfig {
    /// Defaults for a session between `sender_comp_id` (us) and `target_comp_id`.
    pub fn new(dictionary: Dictionary, sender_comp_id: &str, target_comp_id: &str) -> SessionConfig {
        SessionConfig {
            dictionary,
            sender_comp_id: sender_comp_id.to_string(),
            target_comp_id: target_comp_id.to_string(),
            check_latency: true,
            max_latency: Duration::from_secs(120),
            reset_on_disconnect: false,
            next_expected_msg_seq_num: dictionary.is_fix44(),
            logout_timeout: Duration::from_secs(2),
            max_queued: 10_000,
            username: None,
            password: None,
        }
    }
}

/// A business-level refusal of an application message (BusinessMessageReject, 35=j).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BusinessReject {
    /// BusinessRejectReason (380): 0 other, 1 unknown ID, 2 unknown security, 3 unsupported
    /// message type, 4 application not available, 5 conditionally required field missing,
    /// 6 not authorized.
    pub reason: u32,
    /// The tag concerned, appended to the text as `, field=N`.
    pub ref_tag: Option<u32>,
    /// Text (58).
    pub text: Cow<'static, str>,
}

impl BusinessReject {
    /// BusinessRejectReason 3, "Unsupported Message Type".
    pub fn unsupported_message_type() -> BusinessReject {
        BusinessReject {
            reason: 3,
            ref_tag: None,
            text: Cow::Borrowed("Unsupported Message Type"),
        }
    }

    /// BusinessRejectReason 5 for a missing tag.
    pub fn conditionally_required(tag: u32) -> BusinessReject {
        BusinessReject {
            reason: 5,
            ref_tag: Some(tag),
            text: Cow::Borrowed("Conditionally required field missing"),
        }
    }
}

/// What the session hands to the application.
pub trait SessionApp {
    /// The session logged on (our Logon response was sent).
    fn on_logon(&mut self) {}
    /// The logged-on session ended (Logout or disconnect).
    fn on_logout(&mut self) {}
    /// An application message that passed validation and sequencing. Replies go into `out`
    /// and are sent right after; `Err` sends a BusinessMessageReject instead. Either way the
    /// inbound sequence number advances.
    fn on_message(&mut self, msg: &Message<'_>, out: &mut Outbox) -> Result<(), BusinessReject>;
}

#[derive(Debug, Default)]
struct State {
    logon_received: bool,
    reset_received: bool,
    logout_sent_at: Option<u64>,
    heartbeat_ms: u64,
    last_sent_ms: u64,
    last_received_ms: u64,
    test_requests: u32,
    /// Outstanding ResendRequest: (begin, end) of the gap.
    resend_range: Option<(u64, u64)>,
    disconnect: Option<String>,
}

/// One FIX session: sequence numbers, store, timers and the session protocol.
pub struct Session {
    cfg: SessionConfig,
    store: Box<dyn SessionStore>,
    validator: Validator,
    parser: Parser,
    queue_parser: Parser,
    builder: Builder,
    hdr: Vec<u8>,
    body: Vec<u8>,
    text: Vec<u8>,
    out: Vec<u8>,
    outbox: Outbox,
    /// Messages that arrived ahead of a gap, by MsgSeqNum.
    queue: BTreeMap<u64, Vec<u8>>,
    st: State,
    /// Stored messages that must never be sent but whose void the store could not record
    /// (ascending): a resend gap-fills them, and every Logon retries the void and is refused
    /// while it fails.
    unvoided: Vec<u64>,
    /// Application messages the store could not take (a full disk), in order, each with its
    /// gate ([`Session::send_app_gated`]; 0: none). Stored before any later message; every Logon
    /// retries them and is refused while the store fails.
    owed: Outbox,
    owed_gates: Vec<u64>,
    /// Messages of `owed` stored since [`Session::take_stored_late`] was last called, with a
    /// gate: (MsgSeqNum, gate).
    stored_late: Vec<(u64, u64)>,
    /// The store's last error while the session holds something the store could not take
    /// (owed messages, unrecorded voids), or until the store takes a write after it failed.
    store_error: Option<String>,
    /// Writes and syncs of the store that failed, since the session was created.
    store_failures: u64,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Session({}->{})", self.cfg.sender_comp_id, self.cfg.target_comp_id)
    }
}

impl Session {
    /// A session over `store` (its sequence numbers are where the store left them).
    pub fn new(cfg: SessionConfig, store: Box<dyn SessionStore>) -> Session {
        Session {
            cfg,
            store,
            validator: Validator::new(),
            parser: Parser::new(),
            queue_parser: Parser::new(),
            builder: Builder::new(),
            hdr: Vec::new(),
            body: Vec::new(),
            text: Vec::new(),
            out: Vec::with_capacity(4096),
            outbox: Outbox::new(),
            queue: BTreeMap::new(),
            st: State::default(),
            unvoided: Vec::new(),
            owed: Outbox::new(),
            owed_gates: Vec::new(),
            stored_late: Vec::new(),
            store_error: None,
            store_failures: 0,
        }
    }

    /// The session's settings.
    pub fn config(&self) -> &SessionConfig {
        &self.cfg
    }

    /// True between our Logon response and the end of the connection.
    pub fn is_logged_on(&self) -> bool {
        self.st.logon_received
    }

    /// Why the connection must close, once decided. The caller writes [`Session::output`] first.
    pub fn disconnect_reason(&self) -> Option<&str> {
        self.st.disconnect.as_deref()
    }

    /// MsgSeqNum of the next message we send.
    pub fn next_sender_seq(&self) -> u64 {
        self.store.next_sender_seq()
    }

    /// MsgSeqNum we expect next.
    pub fn next_target_seq(&self) -> u64 {
        self.store.next_target_seq()
    }

    /// Bytes to write to the connection, in order.
    pub fn output(&self) -> &[u8] {
        &self.out
    }

    /// Forgets the bytes returned by [`Session::output`] (after they were written).
    pub fn clear_output(&mut self) {
        self.out.clear();
    }

    /// Makes store changes durable; call before writing [`Session::output`].
    pub fn sync_store(&mut self) -> std::io::Result<()> {
        let r = self.store.sync();
        if let Err(e) = &r {
            self.note_store_failure(e);
        }
        r
    }

    /// Hands out the sync that makes store changes durable ([`SessionStore::sync_later`]):
    /// run it before writing [`Session::output`]. `None`: nothing to make durable.
    pub fn sync_store_later(&mut self) -> std::io::Result<Option<PendingSync>> {
        let r = self.store.sync_later();
        if let Err(e) = &r {
            self.note_store_failure(e);
        }
        r
    }

    /// A new connection was accepted for this session.
    pub fn on_connect(&mut self, now: Now) {
        self.st = State {
            last_sent_ms: now.mono_ms,
            last_received_ms: now.mono_ms,
            ..State::default()
        };
        self.queue.clear();
        self.out.clear();
    }

    /// The connection ended (for any reason).
    pub fn on_disconnect(&mut self, app: &mut dyn SessionApp) {
        if self.st.logon_received {
            app.on_logout();
        }
        self.st.logon_received = false;
        self.st.logout_sent_at = None;
        self.st.resend_range = None;
        self.queue.clear();
        if self.cfg.reset_on_disconnect {
            match self.store.reset().and_then(|()| self.store.sync()) {
                Ok(()) => {
                    self.unvoided.clear();
                    self.store_error = None;
                }
                Err(e) => self.fail(&e),
            }
        }
    }

    /// Processes one framed message (BodyLength and CheckSum already verified by the framer).
    pub fn on_frame(&mut self, frame: &[u8], now: Now, app: &mut dyn SessionApp) {
        let mut parser = std::mem::take(&mut self.parser);
        if let Ok(msg) = parser.parse(frame) {
            self.next(&msg, now, app);
        }
        // a frame whose fields cannot be split is garbled: ignored, the sequence does not advance
        self.parser = parser;
        self.process_queue(now, app);
    }

    /// Heartbeat, TestRequest, heartbeat-timeout and logout-timeout timers.
    pub fn on_timer(&mut self, now: Now) {
        if !self.st.logon_received || self.st.disconnect.is_some() {
            return;
        }
        if let Some(at) = self.st.logout_sent_at {
            if now.mono_ms.saturating_sub(at) >= self.cfg.logout_timeout.as_millis() as u64 {
                self.disconnect("Timed out waiting for logout response");
                return;
            }
        }
        let hb = self.st.heartbeat_ms;
        if hb == 0 {
            return;
        }
        let since_received = now.mono_ms.saturating_sub(self.st.last_received_ms);
        let since_sent = now.mono_ms.saturating_sub(self.st.last_sent_ms);
        // QuickFIX's thresholds: TestRequest after 1.2 intervals of silence (then again per 1.2),
        // give up after 2.4 intervals
        if since_received * 10 >= hb * 24 {
            self.disconnect("Timed out waiting for heartbeat");
        } else if since_received * 10 >= u64::from(1 + self.st.test_requests) * hb * 12 {
            self.st.test_requests += 1;
            self.body.clear();
            self.put(tag::TEST_REQ_ID, b"TEST");
            self.send(b"1", now);
        } else if since_sent >= hb && self.st.test_requests == 0 {
            self.body.clear();
            self.send(b"0", now);
        }
    }

    /// Sends an application message from outside a callback (e.g. a later ExecutionReport).
    /// It gets the next MsgSeqNum and is stored; it is written to the connection only while
    /// logged on (otherwise the counterparty gets it by ResendRequest after its next Logon).
    /// Returns its MsgSeqNum; `None` when the store could not take it (a full disk): it is kept
    /// and stored before any later message, as soon as the store takes it (at the latest at the
    /// next Logon, which is refused while the store fails), and the session disconnects.
    pub fn send_app(&mut self, msg_type: &[u8], header: &[u8], body: &[u8], now: Now) -> Option<u64> {
        self.send_app_gated(msg_type, header, body, 0, now)
    }

    /// [`Session::send_app`] of a message with a `gate` (a number of the caller's, not 0): when
    /// the message is stored only later, [`Session::take_stored_late`] names it with its gate.
    pub fn send_app_gated(&mut self, msg_type: &[u8], header: &[u8], body: &[u8], gate: u64, now: Now) -> Option<u64> {
        self.hdr.clear();
        self.hdr.extend_from_slice(header);
        self.body.clear();
        self.body.extend_from_slice(body);
        self.send_with_header(msg_type, gate, now)
    }

    /// Messages with a gate that the store took only after [`Session::send_app_gated`] returned
    /// `None`: (MsgSeqNum, gate). They are stored as sent, not in [`Session::output`] (a resend
    /// after the next Logon carries them).
    pub fn take_stored_late(&mut self) -> Vec<(u64, u64)> {
        std::mem::take(&mut self.stored_late)
    }

    /// Forgets the messages kept for the store ([`Session::send_app`] returned `None`) whose gate
    /// `drop` says: they are never stored nor sent.
    pub fn drop_owed(&mut self, drop: impl Fn(u64) -> bool) {
        if self.owed_gates.iter().all(|&g| !drop(g)) {
            return;
        }
        let owed = std::mem::take(&mut self.owed);
        let gates = std::mem::take(&mut self.owed_gates);
        for ((t, h, b), g) in owed.iter().zip(gates) {
            if !drop(g) {
                self.owed.push_encoded(t, h, b);
                self.owed_gates.push(g);
            }
        }
    }

    /// Application messages kept because the store could not take them (not stored yet).
    pub fn owed_len(&self) -> usize {
        self.owed.len()
    }

    /// Writes and syncs of the store that failed since the session was created.
    pub fn store_failures(&self) -> u64 {
        self.store_failures
    }

    /// Starts a Logout (an operator's): sends Logout with `text` and disconnects once the
    /// counterparty answers or `logout_timeout` passes. False when not logged on or a Logout
    /// is already under way.
    pub fn logout(&mut self, text: &str, now: Now) -> bool {
        if !self.st.logon_received || self.st.logout_sent_at.is_some() || self.st.disconnect.is_some() {
            return false;
        }
        self.send_logout(text, now);
        true
    }

    /// Voids stored messages `seqs` (a resend gap-fills them) and makes that durable now. When
    /// the store fails, they are still never resent (gap-filled) by this session; every Logon
    /// retries the void and is refused while the store fails ([`Session::store_error`]).
    pub fn void_sent(&mut self, seqs: &[u64]) -> std::io::Result<()> {
        for &seq in seqs {
            if let Err(i) = self.unvoided.binary_search(&seq) {
                self.unvoided.insert(i, seq);
            }
        }
        self.void_unvoided()
    }

    /// Records the voids the store has not recorded yet (durably); clears the store error once
    /// it did.
    fn void_unvoided(&mut self) -> std::io::Result<()> {
        let done = self
            .unvoided
            .iter()
            .try_for_each(|seq| self.store.void_sent(*seq))
            .and_then(|()| self.store.sync());
        match &done {
            Ok(()) => {
                self.unvoided.clear();
                self.clear_store_error_if_done();
            }
            Err(e) => self.note_store_failure(e),
        }
        done
    }

    /// The store's last error while the session holds something the store could not take
    /// (messages to store, voids of stored messages: the session refuses Logons until a retry
    /// succeeds), or after a failed write until the store takes the next one.
    pub fn store_error(&self) -> Option<&str> {
        self.store_error.as_deref()
    }

    fn note_store_failure(&mut self, e: &std::io::Error) {
        self.store_failures += 1;
        self.store_error = Some(e.to_string());
    }

    fn clear_store_error_if_done(&mut self) {
        if self.owed.is_empty() && self.unvoided.is_empty() {
            self.store_error = None;
        }
    }

    /// Stores the owed messages, in order (not written: a resend carries them); the first the
    /// store refuses and those after it stay owed.
    fn store_owed(&mut self, now: Now) -> std::io::Result<()> {
        let hdr = std::mem::take(&mut self.hdr);
        let body = std::mem::take(&mut self.body);
        let owed = std::mem::take(&mut self.owed);
        let gates = std::mem::take(&mut self.owed_gates);
        let mut result = Ok(());
        for ((t, h, b), g) in owed.iter().zip(gates) {
            if result.is_ok() {
                self.hdr.clear();
                self.hdr.extend_from_slice(h);
                self.body.clear();
                self.body.extend_from_slice(b);
                match self.store_message(t, now) {
                    Ok(seq) => {
                        if g != 0 {
                            self.stored_late.push((seq, g));
                        }
                        continue;
                    }
                    Err(e) => {
                        self.note_store_failure(&e);
                        result = Err(e);
                    }
                }
            }
            self.owed.push_encoded(t, h, b);
            self.owed_gates.push(g);
        }
        self.hdr = hdr;
        self.body = body;
        if result.is_ok() {
            self.clear_store_error_if_done();
        }
        result
    }

    /// True when stored message `seq` must never be sent (its void is not in the store yet).
    fn is_unvoided(&self, seq: u64) -> bool {
        self.unvoided.binary_search(&seq).is_ok()
    }

    /// Every stored sent message (what a ResendRequest would resend: not those voided, even
    /// when the store could not record the void), oldest first.
    pub fn for_each_sent(&self, each: &mut dyn FnMut(u64, &[u8])) -> std::io::Result<()> {
        let last = self.store.next_sender_seq().saturating_sub(1);
        if last == 0 {
            return Ok(());
        }
        self.store.sent(1, last, &mut |seq, m| {
            if !self.is_unvoided(seq) {
                each(seq, m);
            }
        })
    }

    // ---- sending ----

    fn put(&mut self, tag: u32, value: &[u8]) {
        crate::fix::codec::push_u64(&mut self.body, u64::from(tag));
        self.body.push(b'=');
        self.body.extend_from_slice(value);
        self.body.push(crate::fix::codec::SOH);
    }

    fn put_u64(&mut self, tag: u32, value: u64) {
        crate::fix::codec::push_u64(&mut self.body, u64::from(tag));
        self.body.push(b'=');
        crate::fix::codec::push_u64(&mut self.body, value);
        self.body.push(crate::fix::codec::SOH);
    }

    /// Sends `msg_type` with the body in `self.body` and no extra header fields.
    fn send(&mut self, msg_type: &[u8], now: Now) -> Option<u64> {
        self.hdr.clear();
        self.send_with_header(msg_type, 0, now)
    }

    /// Sends `msg_type` with the extra header fields in `self.hdr` and the body in `self.body`:
    /// stored, then queued for writing. An application message the store cannot take (or that
    /// would follow one it could not) is kept with `gate` and stored later (`owed`); any store
    /// failure disconnects. Returns the MsgSeqNum, `None` when not stored.
    fn send_with_header(&mut self, msg_type: &[u8], gate: u64, now: Now) -> Option<u64> {
        let app = !inbound::is_admin(msg_type);
        if app && !self.owed.is_empty() && self.store_owed(now).is_err() {
            self.owed.push_encoded(msg_type, &self.hdr, &self.body);
            self.owed_gates.push(gate);
            self.disconnect_store_failed();
            return None;
        }
        match self.store_message(msg_type, now) {
            Ok(seq) => {
                if self.store_error.is_some() {
                    self.clear_store_error_if_done();
                }
                // nothing new is written once the connection is closing (a store failure): it
                // is stored, a resend after the next Logon carries it
                let closing = self.st.disconnect.is_some() && msg_type != b"5";
                if (self.st.logon_received || msg_type == b"A" || msg_type == b"5") && !closing {
                    self.out.extend_from_slice(self.builder.message());
                    self.st.last_sent_ms = now.mono_ms;
                }
                Some(seq)
            }
            Err(e) => {
                if app {
                    self.owed.push_encoded(msg_type, &self.hdr, &self.body);
                    self.owed_gates.push(gate);
                }
                self.fail(&e);
                None
            }
        }
    }

    /// Builds `msg_type` (header fields `self.hdr`, body `self.body`) with the next MsgSeqNum
    /// and stores it as sent; the bytes are in the builder.
    fn store_message(&mut self, msg_type: &[u8], now: Now) -> std::io::Result<u64> {
        let seq = self.store.next_sender_seq();
        let b = &mut self.builder;
        b.begin(msg_type)
            .field(tag::SENDER_COMP_ID, self.cfg.sender_comp_id.as_bytes())
            .field(tag::TARGET_COMP_ID, self.cfg.target_comp_id.as_bytes())
            .field_u64(tag::MSG_SEQ_NUM, seq)
            .field_timestamp(tag::SENDING_TIME, now.utc_ms)
            .raw(&self.hdr)
            .raw(&self.body);
        let bytes = b.finish(self.cfg.dictionary.begin_string().as_bytes());
        self.store.save_sent(seq, bytes)?;
        Ok(seq)
    }

    fn send_logout(&mut self, text: &str, now: Now) {
        self.body.clear();
        if !text.is_empty() {
            self.put(tag::TEXT, text.as_bytes());
        }
        self.send(b"5", now);
        self.st.logout_sent_at = Some(now.mono_ms);
    }

    fn incr_target(&mut self) {
        let next = self.store.next_target_seq() + 1;
        if let Err(e) = self.store.set_next_target_seq(next) {
            self.fail(&e);
        }
    }

    /// Disconnects because the store failed (its error is `store_error`).
    fn disconnect_store_failed(&mut self) {
        let e = self.store_error.clone().unwrap_or_default();
        self.disconnect(&format!("session store failed: {e}"));
    }

    fn disconnect(&mut self, reason: &str) {
        if self.st.disconnect.is_none() {
            self.st.disconnect = Some(reason.to_string());
        }
    }

    fn fail(&mut self, e: &std::io::Error) {
        // sequence numbers or sent messages could not be kept: stop rather than lose them
        self.note_store_failure(e);
        self.disconnect(&format!("session store failed: {e}"));
    }
}

#[cfg(test)]
mod tests;
