//! Orders in the running engine: the `OrderDesk` owned by the engine thread wires the order book,
//! the journal and the execution simulator to sessions and the store.
//!
//! Flow (docs: the orders contract): `OrderCmd::Submit` -> `book.submit` against the store's
//! instruments -> `order.reject` at once (nothing changed, nothing written), or the `Accepted` event
//! (acknowledged by the same entry: one journal entry per accepted order) is appended to the
//! journal with a completion that runs on the journal writer thread right after
//! the fdatasync covering it: it encodes the request's `order.ack` and posts `OrderCmd::Journaled`
//! together with the ack to the `CompletionSink`, which at the end of the commit group hands the
//! acks straight to the sessions' workers (ready queue + wake-up) and the completions to the engine
//! thread: the engine thread never waits for fsync, and the ack never waits for the engine thread.
//! On the engine thread the durable event is applied to the *durable* book (the state clients may
//! see) and its trade record / blotter change is published, after the ack; the order starts
//! working. (A journal written with the accept and its acknowledgement as two entries replays as
//! well; cluster mode's order stream still carries them apart, `cluster.rs`: there a durable accept
//! is acknowledged by a second event.) Working orders are indexed by
//! instrument; a tick of an instrument (a publish touching `bid`/`ask`) and a periodic
//! pass run the simulator (`exec.rs`). Trade record publishes and blotter rows that became durable
//! go out together once the engine thread has applied the completions it took at once
//! (`apply_completions`, before its next command: a view created on receipt of an ack lists the
//! order).

mod catalog;
pub mod cluster;
mod exec;
mod expiry;
pub mod frame;
pub mod gateway;
pub mod privacy;
pub mod records;
mod recovery;
mod working;

pub use catalog::StoreCatalog;
pub use gateway::{Durable, GatewayAttach, GatewayOp, GatewayRequest, GatewaySink};
pub use records::status_code;
pub use recovery::JournalRecovery;

use std::collections::VecDeque;

use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::config::OrdersConfig;
use crate::error::ErrorCode;
use crate::hub::{Command, ContainerOp, Hub};
use crate::journal::{Journal, JournalError};
use crate::order_book::{
    Amend, ExecutionSimulator, NewOrder, OrderBook, OrderEvent, OrderReject, OrderStatus, RejectField, RejectRule,
    Side, TimeInForce,
};
use crate::wire::encode;
use crate::wire::order::{order_ack, order_reject, OrderAction};
use crate::wire::Publish;
use cluster::{ClusterCmd, ClusterState, RemoteRequest};

/// Most ack latencies kept for `take_ack_latencies` (oldest dropped past it).
pub const MAX_ACK_LATENCIES: usize = 65_536;

/// A new order as a session sent it (shape checked by the server's decoder, rules by the book).
#[derive(Debug, Clone, PartialEq)]
pub struct OrderInput {
    /// The client's id (unique per user).
    pub client_order_id: String,
    /// Instrument subject.
    pub instrument: String,
    /// Buy or sell.
    pub side: Side,
    /// Quantity as sent (the book checks whole, > 0, <= max).
    pub quantity: f64,
    /// Limit price; `None` = market.
    pub price: Option<f64>,
    /// Time in force.
    pub time_in_force: TimeInForce,
}

/// The request a journal entry answers once durable.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingReply {
    /// Session to answer.
    pub sid: u32,
    /// The worker that owns the session (where the `order.ack` goes).
    pub worker: u32,
    /// Its request id.
    pub req_id: u32,
    /// What is answered.
    pub action: OrderAction,
    /// The order's client id.
    pub client_order_id: String,
    /// The order's status after the action, as the ack shows it (a submit: `acknowledged`, the
    /// transition its durable accept starts; a cancel or amend: the status it left the order in).
    pub status: OrderStatus,
    /// When the request was accepted (for the accept -> ack latency).
    pub accepted_at: Instant,
    /// Cluster mode: the NATS reply subject of a request forwarded by another node (`sid` and
    /// `worker` are then 0); `None`: a session of this engine.
    pub remote: Option<Arc<Remote>>,
}

/// Cluster mode: where a request another node forwarded is answered.
#[derive(Debug, PartialEq)]
pub struct Remote {
    /// The NATS reply subject.
    pub reply: Arc<str>,
    /// A gateway request's origin tag (the stream event carries it back to that node's gateway).
    pub tag: Option<Arc<str>>,
}

/// A journal completion, posted back to the engine thread.
#[derive(Debug)]
pub struct Journaled {
    /// `Ok(seq)`: on disk; `Err`: the writer failed.
    pub result: Result<u64, JournalError>,
    /// The event that was appended.
    pub event: OrderEvent,
    /// The request to answer, if the event answers one.
    pub reply: Option<PendingReply>,
    /// The gateway request the event answers, if any (reported with the durable event).
    pub gateway: Option<u64>,
}

/// Work for the desk, on the engine thread.
#[derive(Debug)]
pub enum OrderCmd {
    /// `order.submit` from session `sid`.
    Submit {
        /// Session id.
        sid: u32,
        /// Request id.
        req_id: u32,
        /// The order.
        order: OrderInput,
        /// When the caller handed it over.
        at: Instant,
    },
    /// `order.cancel`.
    Cancel {
        /// Session id.
        sid: u32,
        /// Request id.
        req_id: u32,
        /// The order's client id.
        client_order_id: String,
        /// When the caller handed it over.
        at: Instant,
    },
    /// `order.amend` (at least one of quantity / price; the book rejects "no change").
    Amend {
        /// Session id.
        sid: u32,
        /// Request id.
        req_id: u32,
        /// The order's client id.
        client_order_id: String,
        /// New total quantity.
        quantity: Option<f64>,
        /// New limit price.
        price: Option<f64>,
        /// When the caller handed it over.
        at: Instant,
    },
    /// A request from a gateway (`gateway.rs`): answered through the attached `GatewaySink`.
    Gateway(GatewayRequest),
    /// Attaches a gateway (`gateway.rs`).
    AttachGateway(GatewayAttach),
    /// A journal append completed.
    Journaled(Journaled),
    /// Cluster mode: the order stream, the lease, forwarded requests and their answers.
    Cluster(ClusterCmd),
}

/// An encoded `order.ack` frame for session `sid`, owned by `worker`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ack<'a> {
    /// The worker that owns the session.
    pub worker: u32,
    /// The session.
    pub sid: u32,
    /// One server frame (a JSON array holding the ack).
    pub frame: &'a [u8],
}

/// Where the journal writer thread sends the desk's completions. The runtime's sink gathers a
/// commit group's completions and acks and delivers them at the group's end: acks into their
/// workers' ready queues (an unregistered worker's are dropped, and a worker drops frames of
/// sessions it closed), completions to the engine thread, such that the engine thread takes a
/// completion only after its ack is in the ready queue (so the order's trade record and blotter
/// change follow the ack), and anything sent to the engine thread after an ack was read comes after
/// that completion (so a cancel or amend sent on receipt of a submit's ack finds the order
/// acknowledged). Then it wakes the workers and the engine thread (once per group).
pub trait CompletionSink: Send + Sync {
    /// One completion, with the `order.ack` of the request it made durable, if any.
    fn post(&self, cmd: OrderCmd, ack: Option<Ack<'_>>);
    /// The end of a commit group (every append of it was completed). `durable(seq)` counts the
    /// group's last durable seq in the stats: the sink calls it once the group's completions are on
    /// their way to the engine thread and before its acks are delivered, so a client that read an
    /// ack never sees an older durable seq, and a command sent after reading the durable seq is
    /// handled after those completions.
    fn group_done(&self, durable: &dyn Fn(u64));
}

/// The desk's completion sink.
pub type Post = Arc<dyn CompletionSink>;

/// Order counters and the ack latency buffer, shared with every engine handle.
#[derive(Debug, Default)]
pub struct OrdersShared {
    accepted: AtomicU64,
    rejected: AtomicU64,
    open: AtomicU64,
    durable_seq: AtomicU64,
    expired: AtomicU64,
    latencies: Mutex<VecDeque<f64>>,
    recovery: JournalRecovery,
}

/// Order counters (see `OrdersShared::stats`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct OrderStats {
    /// Orders accepted since start (journaled as new).
    pub accepted: u64,
    /// Requests rejected since start (submit, cancel and amend rejects).
    pub rejected: u64,
    /// Orders currently open (new, acknowledged, partially filled), recovered ones included.
    pub open: u64,
    /// Last journal seq known durable (0 = none).
    pub journal_durable_seq: u64,
    /// DAY orders expired at an end of day since start.
    pub expired: u64,
}

impl OrdersShared {
    /// Current counters.
    pub fn stats(&self) -> OrderStats {
        let r = Ordering::Relaxed;
        OrderStats {
            accepted: self.accepted.load(r),
            rejected: self.rejected.load(r),
            open: self.open.load(r),
            journal_durable_seq: self.durable_seq.load(r),
            expired: self.expired.load(r),
        }
    }

    /// Accept -> ack-enqueued latencies in microseconds since the last call, oldest first (at most
    /// `MAX_ACK_LATENCIES`; older ones were dropped).
    pub fn take_ack_latencies(&self) -> Vec<f64> {
        let mut q = self.latencies.lock().unwrap_or_else(|p| p.into_inner());
        q.drain(..).collect()
    }

    /// What the journal replay at start found.
    pub fn recovery(&self) -> &JournalRecovery {
        &self.recovery
    }

    /// Counts `seq` as durable (the journal writer thread, at a commit group's end).
    fn note_durable(&self, seq: u64) {
        self.durable_seq.fetch_max(seq, Ordering::Relaxed);
    }

    fn record_latency(&self, micros: f64) {
        let mut q = self.latencies.lock().unwrap_or_else(|p| p.into_inner());
        if q.len() >= MAX_ACK_LATENCIES {
            q.pop_front();
        }
        q.push_back(micros);
    }
}

/// The engine thread's order state. See the module doc.
pub struct OrderDesk {
    /// Decisions: every accepted event, durable or not.
    book: OrderBook,
    /// What is durable (and published): events applied as their journal acks arrive.
    durable: OrderBook,
    /// Where decided events go: the local journal, or (cluster mode) the order stream.
    log: OrderLog,
    sim: ExecutionSimulator,
    cfg: OrdersConfig,
    post: Post,
    shared: Arc<OrdersShared>,
    /// The journal failed: no order request is accepted any more (message for the error frames).
    failed: Option<String>,
    /// Working (acknowledged, partially filled) orders by instrument (`working.rs`).
    working: FxHashMap<String, working::InstrumentOrders>,
    /// Instruments with working orders that ticked since the last execution.
    ticked: FxHashSet<String>,
    /// Orders that started working in this pass (executed once at its end).
    fresh: Vec<u64>,
    /// Next periodic pass (while any order works).
    next_pass: Option<Instant>,
    scratch: Vec<u8>,
    /// Trade record publishes of the completions being applied (`apply_completions`).
    pending: Vec<Publish>,
    /// (order id, trade subject) of records shown for the first time by those completions, oldest
    /// first (the user is the durable order's).
    pending_rows: Vec<(u64, String)>,
    /// Journal seq of each order's last transition, from the replay; consumed by `restore`.
    restore_seqs: Vec<u64>,
    /// Next end of day (ms since the epoch) DAY orders expire at; `None` until the first check.
    next_end_of_day: Option<u64>,
    /// The attached gateway, if any (`gateway.rs`).
    gateway: Option<gateway::Attached>,
}

impl std::fmt::Debug for OrderDesk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OrderDesk")
            .field("orders", &self.book.len())
            .field("durable_seq", &self.shared.durable_seq.load(Ordering::Relaxed))
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

/// A journal append's completion, on the writer thread right after the fdatasync covering it:
/// posted with the `order.ack` of a durable request (see `CompletionSink` for the order the
/// runtime keeps; the sink counts the durable seq at the group's end). The writer completes appends in seq order, so
/// a session's acks keep journal order. A failed append posts no ack (the engine thread answers
/// `error`).
fn complete(
    post: &Post,
    shared: &OrdersShared,
    result: Result<u64, JournalError>,
    event: OrderEvent,
    reply: Option<PendingReply>,
    gateway: Option<u64>,
) {
    thread_local! {
        static FRAME: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let (Ok(seq), Some(r)) = (&result, &reply) else {
        let j = Journaled {
            result,
            event,
            reply,
            gateway,
        };
        return post.post(OrderCmd::Journaled(j), None);
    };
    let (worker, sid) = (r.worker, r.sid);
    shared.record_latency(r.accepted_at.elapsed().as_secs_f64() * 1e6);
    FRAME.with_borrow_mut(|frame| {
        frame.clear();
        frame.push(b'['); // a server frame is an array of messages
        ack_message(frame, r, event.order_id(), *seq);
        frame.push(b']');
    });
    let cmd = OrderCmd::Journaled(Journaled {
        result,
        event,
        reply,
        gateway,
    });
    FRAME.with_borrow(|frame| post.post(cmd, Some(Ack { worker, sid, frame })));
}

/// Where the desk's decided events go (`OrderDesk::append`).
enum OrderLog {
    /// One process: the local journal (group commit, fdatasync).
    Journal(Journal),
    /// Cluster mode: the replicated order stream, with the node's role (`cluster.rs`).
    Stream(Box<ClusterState>),
}

/// Whom a request's answers go to.
#[derive(Debug, Clone)]
pub(crate) struct To {
    /// Local session (0 for a forwarded request).
    sid: u32,
    /// Cluster mode: where a request another node forwarded is answered.
    remote: Option<Arc<Remote>>,
    /// A gateway request (its id): answers go through the attached `GatewaySink`.
    gateway: Option<u64>,
}

impl To {
    fn local(sid: u32) -> To {
        To {
            sid,
            remote: None,
            gateway: None,
        }
    }
}

/// Encodes the `order.ack` answering `r` (one message, no frame brackets).
fn ack_message(out: &mut Vec<u8>, r: &PendingReply, order_id: u64, seq: u64) {
    order_ack(
        out,
        r.req_id,
        r.action,
        &r.client_order_id,
        order_id,
        seq,
        r.status.as_str(),
    );
}

fn reply_error(out: &mut Vec<u8>, req_id: u32, message: &str) {
    out.clear();
    encode::error(out, Some(req_id), ErrorCode::Unavailable, message, None, None);
}

impl OrderDesk {
    /// Counters and latencies shared with engine handles.
    pub fn shared(&self) -> &Arc<OrdersShared> {
        &self.shared
    }

    /// The live order book (decisions; includes events not yet durable).
    pub fn book(&self) -> &OrderBook {
        &self.book
    }

    /// The durable order book (what trade records show).
    pub fn durable_book(&self) -> &OrderBook {
        &self.durable
    }

    fn now_ms(&self) -> u64 {
        self.cfg.clock.now_nanos() / 1_000_000
    }

    /// Applies journal completions (in journal order), then publishes their trade records and
    /// blotter rows together (`flush_published`) before the caller's next command: their acks are
    /// out already, so a blotter view created on receipt of an ack lists the order.
    pub fn apply_completions(&mut self, hub: &mut Hub, cmds: Vec<OrderCmd>, now: Instant) {
        for cmd in cmds {
            self.handle(hub, cmd, now);
        }
        self.flush_published(hub, now);
    }

    /// Handles one command at `now` (a journal completion goes through `apply_completions`).
    pub fn handle(&mut self, hub: &mut Hub, cmd: OrderCmd, now: Instant) {
        match cmd {
            OrderCmd::Submit { sid, req_id, order, at } => {
                if !self.forward(hub, sid, req_id, at, || RemoteRequest::Submit(order.clone(), None)) {
                    let user = hub.session_user_and_worker(sid).map(|(u, _)| u.to_owned());
                    self.submit(hub, To::local(sid), user, req_id, order, None, at, now);
                }
            }
            OrderCmd::Cancel {
                sid,
                req_id,
                client_order_id,
                at,
            } => {
                if !self.forward(hub, sid, req_id, at, || RemoteRequest::Cancel(client_order_id.clone())) {
                    let user = hub.session_user_and_worker(sid).map(|(u, _)| u.to_owned());
                    self.change(hub, To::local(sid), user, req_id, client_order_id, None, at, now);
                }
            }
            OrderCmd::Amend {
                sid,
                req_id,
                client_order_id,
                quantity,
                price,
                at,
            } => {
                let forwarded = self.forward(hub, sid, req_id, at, || RemoteRequest::Amend {
                    client_order_id: client_order_id.clone(),
                    quantity,
                    price,
                });
                if !forwarded {
                    let user = hub.session_user_and_worker(sid).map(|(u, _)| u.to_owned());
                    let amend = Some(Amend { quantity, price });
                    self.change(hub, To::local(sid), user, req_id, client_order_id, amend, at, now);
                }
            }
            OrderCmd::Gateway(r) => self.gateway_request(hub, r, now),
            OrderCmd::AttachGateway(a) => self.attach_gateway(a),
            OrderCmd::Journaled(j) => self.journaled(hub, j, now),
            OrderCmd::Cluster(c) => self.cluster(hub, c, now),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn reject(
        &mut self,
        hub: &mut Hub,
        to: &To,
        req_id: u32,
        action: OrderAction,
        cid: &str,
        r: &OrderReject,
        now: Instant,
    ) {
        self.shared.rejected.fetch_add(1, Ordering::Relaxed);
        if let Some(request) = to.gateway {
            if let Some(g) = &self.gateway {
                g.sink.refused(request, r);
            }
            return;
        }
        self.scratch.clear();
        order_reject(
            &mut self.scratch,
            req_id,
            action,
            cid,
            r.field.as_str(),
            r.rule.as_str(),
            &r.message,
        );
        self.answer(hub, to, now);
    }

    /// Sends the message in `scratch` to `to` (a local session, or the node that forwarded it).
    fn answer(&mut self, hub: &mut Hub, to: &To, now: Instant) {
        match (&to.remote, &self.log) {
            (Some(remote), OrderLog::Stream(c)) => c.replier.send(&remote.reply, self.scratch.clone()),
            (Some(_), OrderLog::Journal(_)) => {} // forwarded requests exist in cluster mode only
            (None, _) => hub.reply_now(to.sid, &self.scratch, now),
        }
    }

    /// Answers with `error` UNAVAILABLE when the journal failed earlier; true when it did.
    fn refuse_failed(&mut self, hub: &mut Hub, to: &To, req_id: u32, now: Instant) -> bool {
        let Some(msg) = &self.failed else { return false };
        let msg = format!("orders are unavailable: {msg}");
        self.unavailable(hub, to, req_id, &msg, now);
        true
    }

    /// Answers `to` that orders are unavailable: `error` UNAVAILABLE to a session or the
    /// forwarding node, `unavailable` to a gateway.
    fn unavailable(&mut self, hub: &mut Hub, to: &To, req_id: u32, message: &str, now: Instant) {
        if let Some(request) = to.gateway {
            if let Some(g) = &self.gateway {
                g.sink.unavailable(request, message);
            }
            return;
        }
        reply_error(&mut self.scratch, req_id, message);
        self.answer(hub, to, now);
    }

    /// A gateway request (`gateway.rs`), for its user. In cluster mode a node that does not lead
    /// forwards it to the order leader (`cluster.rs`).
    fn gateway_request(&mut self, hub: &mut Hub, r: GatewayRequest, now: Instant) {
        let to = To {
            sid: 0,
            remote: None,
            gateway: Some(r.request),
        };
        if self.forward_gateway(&r) {
            return;
        }
        let user = Some(r.user);
        match r.op {
            GatewayOp::Submit { order, origin } => self.submit(hub, to, user, 0, order, origin, r.at, now),
            GatewayOp::Cancel { client_order_id } => self.change(hub, to, user, 0, client_order_id, None, r.at, now),
            GatewayOp::Amend {
                client_order_id,
                quantity,
                price,
            } => {
                let amend = Some(Amend { quantity, price });
                self.change(hub, to, user, 0, client_order_id, amend, r.at, now);
            }
        }
    }

    /// Attaches a gateway: it gets the durable orders of its users now, and their events from
    /// here on (`gateway.rs`).
    fn attach_gateway(&mut self, a: GatewayAttach) {
        // Cluster mode: once the stream is applied as far as it reached at start (`cluster.rs`).
        let Some(a) = self.hold_attach(a) else { return };
        let users: FxHashSet<String> = a.users.into_iter().collect();
        let orders: Vec<&crate::order_book::Order> = self
            .durable
            .orders()
            .iter()
            .filter(|o| users.contains(o.user.as_str()))
            .collect();
        a.sink.attached(&orders);
        // Single node: events of orders accepted from here on are announced as they are appended
        // (their journal seqs are known then); the order stream announces everything when durable.
        let first_order = match self.log {
            OrderLog::Journal(_) => self.book.len() as u64 + 1,
            OrderLog::Stream(_) => u64::MAX,
        };
        self.gateway = Some(gateway::Attached {
            sink: a.sink,
            users,
            first_order,
            appended: FxHashMap::default(),
            told_failed: false,
        });
    }

    /// The worker of local session `to.sid` (0 for a forwarded request).
    fn worker_of(hub: &Hub, to: &To) -> u32 {
        match to.remote {
            Some(_) => 0,
            None => hub.session_user_and_worker(to.sid).map_or(0, |(_, w)| w),
        }
    }

    /// `order.submit` of `user` (`None`: the local session closed meanwhile, nobody to answer);
    /// `origin` is journaled with the accept (`OrderEvent::Accepted::origin`).
    #[allow(clippy::too_many_arguments)]
    fn submit(
        &mut self,
        hub: &mut Hub,
        to: To,
        user: Option<String>,
        req_id: u32,
        order: OrderInput,
        origin: Option<String>,
        at: Instant,
        now: Instant,
    ) {
        let Some(user) = user else {
            return; // the session closed meanwhile: nobody to answer
        };
        let worker = Self::worker_of(hub, &to);
        if self.refuse_failed(hub, &to, req_id, now) {
            return;
        }
        let req = NewOrder {
            user,
            client_order_id: order.client_order_id,
            instrument: order.instrument,
            side: order.side,
            quantity: order.quantity,
            price: order.price,
            time_in_force: order.time_in_force,
        };
        let ts = self.now_ms();
        let decided = match privacy::check_owner_name(&req.user) {
            Err(message) => Err(OrderReject {
                field: RejectField::User,
                rule: RejectRule::NotEntitled,
                message,
            }),
            Ok(()) => self.book.check_submit(&req, &StoreCatalog::new(hub.store()).at(ts)),
        };
        let checked = match decided {
            Ok(checked) => checked,
            Err(r) => return self.reject(hub, &to, req_id, OrderAction::Submit, &req.client_order_id, &r, now),
        };
        // The request's strings move into the event (the reply keeps a copy of the client id).
        let client_order_id = req.client_order_id.clone();
        // One journal entry accepts and acknowledges the order (the ack leaves once it is durable);
        // the order stream keeps the accept and its acknowledgement apart.
        let acknowledged = matches!(self.log, OrderLog::Journal(_));
        match self.book.accept_checked(req, checked, ts, acknowledged) {
            Err(r) => self.reject(hub, &to, req_id, OrderAction::Submit, &client_order_id, &r, now),
            Ok(mut ev) => {
                if let OrderEvent::Accepted { origin: o, .. } = &mut ev {
                    *o = origin;
                }
                self.shared.accepted.fetch_add(1, Ordering::Relaxed);
                self.shared.open.fetch_add(1, Ordering::Relaxed);
                let gateway = to.gateway;
                let reply = gateway.is_none().then_some(PendingReply {
                    sid: to.sid,
                    worker,
                    req_id,
                    action: OrderAction::Submit,
                    client_order_id,
                    status: OrderStatus::Acknowledged,
                    accepted_at: at,
                    remote: to.remote,
                });
                self.append_for(hub, ev, reply, gateway, now);
            }
        }
    }

    /// Cancel (`amend` = None) or amend of the session user's order.
    #[allow(clippy::too_many_arguments)]
    fn change(
        &mut self,
        hub: &mut Hub,
        to: To,
        user: Option<String>,
        req_id: u32,
        cid: String,
        amend: Option<Amend>,
        at: Instant,
        now: Instant,
    ) {
        let Some(user) = user else { return };
        let worker = Self::worker_of(hub, &to);
        if self.refuse_failed(hub, &to, req_id, now) {
            return;
        }
        let ts = self.now_ms();
        // Where the order rests in the working index, if it does (a cancel closes it, an amend may
        // move its limit: either way it leaves the resting index; see `unrest`).
        let prior = self.book.find(&user, &cid).map(|o| (o.order_id, o.side, o.price));
        let (action, decided) = match &amend {
            None => (OrderAction::Cancel, self.book.cancel(&user, &cid, ts)),
            Some(a) => (
                OrderAction::Amend,
                self.book
                    .amend(&user, &cid, a, &StoreCatalog::new(hub.store()).at(ts), ts),
            ),
        };
        match decided {
            Err(r) => self.reject(hub, &to, req_id, action, &cid, &r, now),
            Ok(ev) => {
                if action == OrderAction::Cancel {
                    self.shared.open.fetch_sub(1, Ordering::Relaxed);
                }
                if let Some((order_id, side, price)) = prior {
                    self.unrest(order_id, side, price, now);
                }
                // The live book has applied the event: its status now is the one the durable book
                // reaches when this entry is durable (same events, same order).
                let Some(status) = self.book.get(ev.order_id()).map(|o| o.status) else {
                    return; // cannot happen: the book just changed this order
                };
                let gateway = to.gateway;
                let reply = gateway.is_none().then_some(PendingReply {
                    sid: to.sid,
                    worker,
                    req_id,
                    action,
                    client_order_id: cid,
                    status,
                    accepted_at: at,
                    remote: to.remote,
                });
                self.append_for(hub, ev, reply, gateway, now);
            }
        }
    }

    /// Journals `ev` (already applied to the live book). Its completion runs on the journal writer
    /// thread: once durable, the request's `order.ack` (if it answers one) goes straight to the
    /// session's worker; then the completion comes back as `OrderCmd::Journaled`. On a journal
    /// failure the desk stops taking orders and the request (if any) is answered with `error`
    /// UNAVAILABLE (from the engine thread; no ack).
    fn append(&mut self, hub: &mut Hub, ev: OrderEvent, reply: Option<PendingReply>, now: Instant) {
        self.append_for(hub, ev, reply, None, now);
    }

    /// `append` of an event that may answer a gateway request (`gateway`: its id; then `reply`
    /// is `None`). Gateway requests reach it on a single node only (the journal).
    fn append_for(
        &mut self,
        hub: &mut Hub,
        ev: OrderEvent,
        reply: Option<PendingReply>,
        gateway: Option<u64>,
        now: Instant,
    ) {
        let to = match (&reply, gateway) {
            (Some(r), _) => Some((
                To {
                    sid: r.sid,
                    remote: r.remote.clone(),
                    gateway: None,
                },
                r.req_id,
            )),
            (None, Some(g)) => Some((
                To {
                    sid: 0,
                    remote: None,
                    gateway: Some(g),
                },
                0,
            )),
            (None, None) => None,
        };
        if let Some(msg) = &self.failed {
            let msg = format!("orders are unavailable: {msg}");
            if let Some((to, req_id)) = to {
                self.unavailable(hub, &to, req_id, &msg, now);
            }
            return;
        }
        let body = ev.encode();
        let post = Arc::clone(&self.post);
        let shared = Arc::clone(&self.shared);
        let journal = match &mut self.log {
            OrderLog::Journal(j) => j,
            OrderLog::Stream(c) => return c.publish(body, post, shared, ev, reply, gateway, now),
        };
        // An attached gateway's order: announced with its journal seq before it is durable.
        let announce = self.gateway.as_mut().and_then(|g| g.appending(&ev));
        // Blocks only while the journal's bounded queue is full (backpressure), never on fsync.
        let queued = journal.append(body, move |result| complete(&post, &shared, result, ev, reply, gateway));
        if let (Ok(seq), Some((event, order)), Some(g)) = (&queued, &announce, &self.gateway) {
            g.sink.appended(&Durable {
                seq: *seq,
                event,
                order,
                request: gateway,
            });
        }
        if let Err(e) = queued {
            self.fail(&e);
            if let Some((to, req_id)) = to {
                let msg = format!("orders are unavailable: {e}");
                self.unavailable(hub, &to, req_id, &msg, now);
            }
        }
    }

    /// The journal failed: no request is taken from now on; an attached gateway learns which of
    /// the appended seqs it was told about never become durable.
    fn fail(&mut self, e: &JournalError) {
        self.failed.get_or_insert_with(|| e.to_string());
        if let (OrderLog::Journal(j), Some(g)) = (&self.log, &mut self.gateway) {
            // once the writer failed (not a refused append, which loses nothing)
            if let (false, Some(durable)) = (g.told_failed, j.failed_at()) {
                g.told_failed = true;
                g.sink.failed(durable, &e.to_string());
            }
        }
    }

    /// A journal completion (its `order.ack` already went to the worker): on success the event
    /// becomes visible (durable book, trade record, blotter) and a durable accept is acknowledged;
    /// on failure the request gets `error` UNAVAILABLE instead.
    fn journaled(&mut self, hub: &mut Hub, mut j: Journaled, now: Instant) {
        let seq = match j.result {
            Ok(seq) => seq,
            Err(e) => {
                self.fail(&e);
                let msg = format!("order journal failed, request not acknowledged: {e}");
                if let Some(r) = j.reply {
                    reply_error(&mut self.scratch, r.req_id, &msg);
                    hub.reply_now(r.sid, &self.scratch, now);
                } else if let (Some(request), Some(g)) = (j.gateway, &self.gateway) {
                    g.sink.unavailable(request, &msg);
                }
                return;
            }
        };
        let order_id = j.event.order_id();
        let acknowledged = matches!(j.event, OrderEvent::Accepted { acknowledged: true, .. });
        if self.apply_durable(seq, &mut j.event, j.gateway).is_err() {
            // Cannot happen: durable events arrive in journal order and were valid in the live book.
            self.failed
                .get_or_insert_with(|| format!("journal seq {seq} does not fit the durable book"));
            return;
        }
        let accepted = matches!(j.event, OrderEvent::Accepted { .. });
        if accepted && (j.reply.is_some() || j.gateway.is_some()) {
            if acknowledged {
                // Durable and acknowledged by the same entry: the order starts working (unless a
                // cancel closed it meanwhile).
                self.start_working(order_id, now);
            } else {
                // Durable accept: acknowledge (journaled; its trade record goes out when durable).
                self.acknowledge(hub, order_id, now);
            }
        }
    }

    /// Applies durable event `ev` (stored at `seq`) to the durable book and queues its trade
    /// record and blotter change (`flush_published`). The event's strings (an accept's user, ids,
    /// instrument) move into the durable order. An accept acknowledged by the same entry is applied
    /// as the accept then its acknowledgement (it is left a plain accept), so the gateway and the
    /// trade record see what the two-entry form shows. Returns whether the order was open before
    /// and after; `Err` when the event does not fit the durable book.
    fn apply_durable(&mut self, seq: u64, ev: &mut OrderEvent, request: Option<u64>) -> Result<(bool, bool), ()> {
        let ack = ev.split_acknowledgement();
        let (was_open, open) = self.apply_durable_one(seq, ev, request)?;
        match ack {
            Some(mut ack) => Ok((was_open, self.apply_durable_one(seq, &mut ack, None)?.1)),
            None => Ok((was_open, open)),
        }
    }

    /// `apply_durable` of one transition.
    fn apply_durable_one(&mut self, seq: u64, ev: &mut OrderEvent, request: Option<u64>) -> Result<(bool, bool), ()> {
        let order_id = ev.order_id();
        let was_open = self.durable.get(order_id).is_some_and(|o| o.status.is_open());
        let o = self.durable.apply_taking(ev).map_err(|_| ())?;
        let open = o.status.is_open();
        if let Some(g) = self.gateway.as_ref().filter(|g| g.users.contains(o.user.as_str())) {
            let d = Durable {
                seq,
                event: ev,
                order: o,
                request,
            };
            if !g.announces(order_id) {
                g.sink.appended(&d);
            }
            g.sink.durable(&d);
        }
        // Status `new` is never shown: the record and its blotter row appear with the first
        // transition after the accept (normally the acknowledgement), as an image.
        if !matches!(ev, OrderEvent::Accepted { .. }) {
            let first = o.version == 2;
            let publish = if first {
                records::image(o, seq)
            } else {
                records::delta(o, seq, ev)
            };
            if first {
                self.pending_rows.push((order_id, publish.subject.clone()));
            }
            self.pending.push(publish);
        }
        Ok((was_open, open))
    }

    /// New -> Acknowledged in the live book, journaled; the order starts working.
    fn acknowledge(&mut self, hub: &mut Hub, order_id: u64, now: Instant) {
        let ts = self.now_ms();
        if let Ok(ev) = self.book.acknowledge(order_id, ts) {
            self.append(hub, ev, None, now);
            self.start_working(order_id, now);
        }
    }

    /// Publishes the trade records and blotter rows that became durable in `apply_completions`: one
    /// store batch, then per user one container publish whose ops insert the new rows at position
    /// 0 one by one, oldest first, so the blotter ends newest first.
    ///
    /// One front insert per row (not one `InsertAt(0, rows)`): a container labels a front insert
    /// a fixed step below the first member, but a run inserted at positions 0, 1, 2, ... bisects
    /// one gap per row and relabels the whole container (O(n)) after ~32-46 rows; with 100,000
    /// rows in a blotter that relabel was 63% of the engine thread at 7,000 orders/s.
    fn flush_published(&mut self, hub: &mut Hub, now: Instant) {
        if !self.pending.is_empty() {
            let batch = std::mem::take(&mut self.pending);
            let received_ms = self.now_ms() as f64;
            hub.handle(Command::Publish { batch, received_ms }, now);
        }
        if self.pending_rows.is_empty() {
            return;
        }
        let mut rows = std::mem::take(&mut self.pending_rows);
        let durable = &self.durable;
        let user = |order_id: u64| durable.get(order_id).map_or("", |o| o.user.as_str());
        // Rows arrive oldest first; a stable sort by user keeps each user's run oldest first, and
        // front-inserting them in that order leaves the newest first. The subjects move into the ops.
        rows.sort_by(|a, b| user(a.0).cmp(user(b.0)));
        let mut rows = rows.into_iter().peekable();
        while let Some((order_id, subject)) = rows.next() {
            let owner = user(order_id);
            let mut ops = vec![ContainerOp::InsertAt(0, vec![subject])];
            while let Some((_, s)) = rows.next_if(|r| user(r.0) == owner) {
                ops.push(ContainerOp::InsertAt(0, vec![s]));
            }
            hub.handle(
                Command::ContainerPublish {
                    subject: privacy::blotter_subject(owner),
                    ops,
                },
                now,
            );
        }
    }
}

#[cfg(test)]
mod ack_tests;
