//! What the order gateway implements: the [`Application`] trait, typed views of the order
//! messages, and [`SessionHandle`] for sending later messages (execution reports) from any
//! thread.

use super::slot::SessionSlot;
use crate::fix::codec::Message;
use crate::fix::session::{BusinessReject, Outbox};
use std::sync::Arc;

/// Identifies a session: FIX version and the two CompIDs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SessionId {
    /// `FIX.4.2` or `FIX.4.4`.
    pub begin_string: String,
    /// Our CompID.
    pub sender_comp_id: String,
    /// The counterparty's CompID.
    pub target_comp_id: String,
}

impl std::fmt::Display for SessionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}->{}",
            self.begin_string, self.sender_comp_id, self.target_comp_id
        )
    }
}

/// Where a session's connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionState {
    /// No connection.
    Disconnected,
    /// A connection whose Logon is not complete (or that is logging out).
    Connected,
    /// Logged on.
    LoggedOn,
}

impl SessionState {
    /// `disconnected`, `connected` or `loggedOn`.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionState::Disconnected => "disconnected",
            SessionState::Connected => "connected",
            SessionState::LoggedOn => "loggedOn",
        }
    }
}

/// One session as an operator sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionStatus {
    /// Version and CompIDs.
    pub id: SessionId,
    /// The Tidewire user it trades as.
    pub user: String,
    /// Connection state.
    pub state: SessionState,
    /// MsgSeqNum of our next message.
    pub next_sender_seq: u64,
    /// MsgSeqNum we expect next.
    pub next_target_seq: u64,
    /// Messages received since start (garbled ones excluded).
    pub messages_in: u64,
    /// Messages written to connections since start (resends included).
    pub messages_out: u64,
    /// The session store's error while it fails: it could not take a message (a full disk) or
    /// a void, which it keeps retrying (Logons are refused meanwhile), or its last write or
    /// sync failed and none has succeeded since. `None` when the store works.
    pub store_error: Option<String>,
    /// When the store started failing (UTC ms since the Unix epoch; `None` with `store_error`).
    pub store_failed_since_ms: Option<i64>,
    /// Messages the store could not take yet: stored (and sent, by resend after the next Logon)
    /// before any later one once it does.
    pub unstored_messages: u64,
    /// Writes and syncs of the session store that failed since start.
    pub store_failures: u64,
}

/// The application behind the acceptor. Called on the session's connection thread with the
/// session locked: answer through `reply` (sent right after the callback, in order); use the
/// [`SessionHandle`] only from other threads (later execution reports). An `Err` answers the
/// message with a BusinessMessageReject. The defaults refuse everything as an unsupported
/// message type.
pub trait Application: Send + Sync + 'static {
    /// The session logged on.
    fn on_logon(&self, _session: &SessionHandle) {}

    /// The logged-on session ended.
    fn on_logout(&self, _session: &SessionHandle) {}

    /// NewOrderSingle (35=D).
    fn on_new_order(
        &self,
        _order: &NewOrderSingle<'_>,
        _reply: &mut Outbox,
        _session: &SessionHandle,
    ) -> Result<(), BusinessReject> {
        Err(BusinessReject::unsupported_message_type())
    }

    /// OrderCancelRequest (35=F).
    fn on_cancel(
        &self,
        _cancel: &OrderCancelRequest<'_>,
        _reply: &mut Outbox,
        _session: &SessionHandle,
    ) -> Result<(), BusinessReject> {
        Err(BusinessReject::unsupported_message_type())
    }

    /// OrderCancelReplaceRequest (35=G).
    fn on_replace(
        &self,
        _replace: &OrderCancelReplaceRequest<'_>,
        _reply: &mut Outbox,
        _session: &SessionHandle,
    ) -> Result<(), BusinessReject> {
        Err(BusinessReject::unsupported_message_type())
    }

    /// Any other application message type.
    fn on_message(
        &self,
        _msg: &Message<'_>,
        _reply: &mut Outbox,
        _session: &SessionHandle,
    ) -> Result<(), BusinessReject> {
        Err(BusinessReject::unsupported_message_type())
    }
}

/// Sends messages on one session from any thread, and names the session and its user.
#[derive(Clone)]
pub struct SessionHandle {
    pub(super) slot: Arc<SessionSlot>,
}

impl std::fmt::Debug for SessionHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SessionHandle({})", self.slot.id)
    }
}

impl SessionHandle {
    /// The session's identity.
    pub fn id(&self) -> &SessionId {
        &self.slot.id
    }

    /// The Tidewire user this session trades as.
    pub fn user(&self) -> &str {
        &self.slot.user
    }

    /// Sends the messages in `messages` (in order) with the next sequence numbers. They are
    /// stored for resends; while the session is not logged on they are delivered by the
    /// counterparty's ResendRequest after its next Logon. When the store cannot take one (a full
    /// disk) it is kept with those after it and stored first once the store takes a write (the
    /// session disconnects and refuses Logons meanwhile; [`SessionStatus::store_error`]). Must not
    /// be called from inside an [`Application`] callback of the same session (use `reply` there).
    pub fn send(&self, messages: &Outbox) {
        self.slot.send(messages, &[]);
    }

    /// [`SessionHandle::send`] of messages some of which must not reach the counterparty before
    /// the order journal holds an entry: `gates` lists (index in `messages`, journal seq). Such a
    /// message is stored (and its store sync started) at once, but written only once both the
    /// store and the journal (up to its seq, as told by [`SessionHandle::journal_durable`]) are
    /// durable; every later message of the session waits behind it (sequence numbers stay in
    /// order on the wire), and so does any resend of it.
    pub fn send_gated(&self, messages: &Outbox, gates: &[(usize, u64)]) {
        self.slot.send(messages, gates);
    }

    /// The order journal is durable up to `seq` (acceptor-wide; call it on each session whose
    /// output may wait for it).
    pub fn journal_durable(&self, seq: u64) {
        self.slot.journal_durable(seq);
    }

    /// The order journal failed and holds nothing past `durable` (call [`SessionHandle::journal_durable`]
    /// with it first): the messages stored by `send_gated` for a later seq are voided in the store
    /// (durable on return; a ResendRequest covering them gets a SequenceReset-GapFill) and never
    /// written; the output held behind them is written. Errors: the store could not void them;
    /// they are still never written nor resent, the session is logged out with Text `Session
    /// store failed, stored messages cannot be voided: <error>`, and each Logon retries the voids
    /// and is refused (Logout with that Text) while the store fails.
    pub fn journal_failed(&self, durable: u64) -> std::io::Result<()> {
        self.slot.journal_failed(durable)
    }

    /// True while the session is logged on.
    pub fn is_logged_on(&self) -> bool {
        self.slot.is_logged_on()
    }

    /// State, sequence numbers and message counters as of the session's last send or receive
    /// (never waits for the session's lock).
    pub fn status(&self) -> SessionStatus {
        self.slot.status()
    }

    /// Every message stored as sent on this session (what a ResendRequest would resend), oldest
    /// first, with its MsgSeqNum. Must not be called from inside an [`Application`] callback.
    pub fn for_each_sent(&self, each: &mut dyn FnMut(u64, &[u8])) -> std::io::Result<()> {
        self.slot.for_each_sent(each)
    }

    /// Voids messages stored as sent (by MsgSeqNum): they are never sent again, a ResendRequest
    /// covering them gets a SequenceReset-GapFill instead. Durable on return. For messages that
    /// were never written (a gated message whose journal entry was lost). Must not be called from
    /// inside an [`Application`] callback.
    pub fn void_sent(&self, seqs: &[u64]) -> std::io::Result<()> {
        self.slot.void_sent(seqs)
    }

    /// An operator's Logout with `text`: the connection closes once the counterparty answers
    /// (or after the logout timeout). False when the session is not logged on. Must not be
    /// called from inside an [`Application`] callback.
    pub fn logout(&self, text: &str) -> bool {
        self.slot.logout(text)
    }
}

/// Side (54).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// 1
    Buy,
    /// 2
    Sell,
    /// Any other valid value (sell short, cross, ...), kept as its character.
    Other(u8),
}

/// OrdType (40).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrdType {
    /// 1
    Market,
    /// 2
    Limit,
    /// Any other valid value, kept as its character.
    Other(u8),
}

fn side(msg: &Message<'_>) -> Option<Side> {
    match msg.get(54)? {
        b"1" => Some(Side::Buy),
        b"2" => Some(Side::Sell),
        [c] => Some(Side::Other(*c)),
        _ => None,
    }
}

fn ord_type(msg: &Message<'_>) -> Option<OrdType> {
    match msg.get(40)? {
        b"1" => Some(OrdType::Market),
        b"2" => Some(OrdType::Limit),
        [c] => Some(OrdType::Other(*c)),
        _ => None,
    }
}

macro_rules! order_view {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub struct $name<'a> {
            msg: Message<'a>,
        }

        impl<'a> $name<'a> {
            /// The whole message (every field, for what the accessors do not cover).
            pub fn message(&self) -> &Message<'a> {
                &self.msg
            }
            /// ClOrdID (11).
            pub fn cl_ord_id(&self) -> Option<&'a str> {
                self.msg.get_str(11)
            }
            /// Symbol (55).
            pub fn symbol(&self) -> Option<&'a str> {
                self.msg.get_str(55)
            }
            /// Side (54).
            pub fn side(&self) -> Option<Side> {
                side(&self.msg)
            }
            /// Account (1).
            pub fn account(&self) -> Option<&'a str> {
                self.msg.get_str(1)
            }
        }
    };
}

order_view!(
    /// A NewOrderSingle (35=D) that passed the session layer and the data dictionary.
    NewOrderSingle
);
order_view!(
    /// An OrderCancelRequest (35=F).
    OrderCancelRequest
);
order_view!(
    /// An OrderCancelReplaceRequest (35=G).
    OrderCancelReplaceRequest
);

impl<'a> NewOrderSingle<'a> {
    /// OrderQty (38) as sent (a decimal).
    pub fn order_qty(&self) -> Option<&'a str> {
        self.msg.get_str(38)
    }
    /// OrdType (40).
    pub fn ord_type(&self) -> Option<OrdType> {
        ord_type(&self.msg)
    }
    /// Price (44) as sent (a decimal).
    pub fn price(&self) -> Option<&'a str> {
        self.msg.get_str(44)
    }
    /// TimeInForce (59), `0` (Day) when absent.
    pub fn time_in_force(&self) -> u8 {
        self.msg.get(59).and_then(|v| v.first().copied()).unwrap_or(b'0')
    }
}

impl<'a> OrderCancelRequest<'a> {
    /// OrigClOrdID (41): the order to cancel.
    pub fn orig_cl_ord_id(&self) -> Option<&'a str> {
        self.msg.get_str(41)
    }
    /// OrderID (37), if the counterparty sent ours.
    pub fn order_id(&self) -> Option<&'a str> {
        self.msg.get_str(37)
    }
}

impl<'a> OrderCancelReplaceRequest<'a> {
    /// OrigClOrdID (41): the order to replace.
    pub fn orig_cl_ord_id(&self) -> Option<&'a str> {
        self.msg.get_str(41)
    }
    /// OrderQty (38), the new total quantity.
    pub fn order_qty(&self) -> Option<&'a str> {
        self.msg.get_str(38)
    }
    /// Price (44), the new price.
    pub fn price(&self) -> Option<&'a str> {
        self.msg.get_str(44)
    }
    /// OrdType (40).
    pub fn ord_type(&self) -> Option<OrdType> {
        ord_type(&self.msg)
    }
}

/// Routes a validated application message to the typed callback.
pub(super) fn dispatch(
    app: &dyn Application,
    msg: &Message<'_>,
    reply: &mut Outbox,
    session: &SessionHandle,
) -> Result<(), BusinessReject> {
    match msg.msg_type() {
        b"D" => app.on_new_order(&NewOrderSingle { msg: *msg }, reply, session),
        b"F" => app.on_cancel(&OrderCancelRequest { msg: *msg }, reply, session),
        b"G" => app.on_replace(&OrderCancelReplaceRequest { msg: *msg }, reply, session),
        _ => app.on_message(msg, reply, session),
    }
}
