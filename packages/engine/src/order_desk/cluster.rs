//! The desk in cluster mode (docs/architecture.md, "Cluster mode: orders"): the order stream
//! replaces the journal, one node (the leader, holder of the lease) decides, every node applies
//! the stream.
//!
//! Roles: a **follower** forwards its sessions' order requests to the leader (`DeskLink::forward`)
//! and applies the stream to its durable book, trade records and blotters. When the election task
//! holds the lease it sends `Promote` with the stream's last seq: the node is **promoting** until
//! its durable book has applied that seq, then **checking** until the link confirmed that the
//! stream holds there the message this node applied (`DeskLink::check_base`; a node whose own
//! history diverged stops there), then it becomes the **leader**: live book := durable
//! book, working orders indexed, orders left New acknowledged, a new term (event subject) begun,
//! and it serves forwarded requests. The leader decides exactly like the single-process desk;
//! each decided event goes into the term's next stream message, fenced (`batch.rs`:
//! `Nats-Expected-Last-Sequence` = the seq the previous message got, pipelined as base + k, and
//! `Nats-Expected-Last-Msg-Id` = the term's previous message's id, so a message following a failed
//! one of the same term cannot land on another node's event; a term's first message names the
//! message it follows in `Tidewire-Follows`, checked by every node, `cluster/chain.rs`). Its
//! completion (link thread, in publish order) sends the `order.ack`, with the event's seq among the stream's events, to the
//! local session's worker or to the forwarding node; a gateway's event is reported by the gateway
//! of the node that took the request when the stream brings it back (its origin tag). A failed publish (timed out, fenced, no quorum) or
//! the lost lease makes the leader step down: it stops deciding (its live book may hold events
//! never stored), and re-promotes from the stream while it still holds the lease. The leader, too,
//! applies the durable side only from the stream: one path on every node.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use rustc_hash::{FxHashMap, FxHashSet};

use super::{
    ack_message, reply_error, GatewayAttach, GatewayOp, GatewayRequest, OrderDesk, OrderInput, OrderLog, OrdersShared,
    PendingReply, Post, Remote, To,
};
use crate::cluster::batch::Framed;
use crate::cluster::orders::{gateway_answer, unavailable, DeskLink, GatewayAnswer, Replier};
use crate::cluster::stages::Stage;
use crate::config::OrdersConfig;
use crate::hub::Hub;
use crate::order_book::{Amend, ExecutionSimulator, OrderBook, OrderEvent, OrderLimits};

/// A request another node forwarded (its session's user comes with it).
#[derive(Debug, Clone, PartialEq)]
pub enum RemoteRequest {
    /// `order.submit`; `origin`: a gateway's name for where it came from, journaled with the
    /// accept (`GatewayOp::Submit::origin`; `None` for a session's order).
    Submit(OrderInput, Option<String>),
    /// `order.cancel` of the client order id.
    Cancel(String),
    /// `order.amend`.
    Amend {
        /// The order's client id.
        client_order_id: String,
        /// New total quantity.
        quantity: Option<f64>,
        /// New limit price.
        price: Option<f64>,
    },
}

/// One order stream message, in stream order.
#[derive(Debug)]
pub struct StreamEvent {
    /// Stream seq.
    pub seq: u64,
    /// The encoded `OrderEvent`s it holds, in order (none in the genesis marker).
    pub events: Vec<Framed>,
}

/// A stream publish's completion, back on the engine thread.
#[derive(Debug)]
pub struct Published {
    /// `Ok(seq)`: stored on a quorum; `Err`: why not (it may still have been stored after a
    /// timeout: then it arrives through the stream like any event).
    pub result: Result<u64, String>,
    /// The term that published it.
    pub term: u64,
    /// The event.
    pub event: OrderEvent,
    /// The request it answers, if any (its ack or error went out already when remote).
    pub reply: Option<PendingReply>,
    /// The local gateway request it answers, if any.
    pub gateway: Option<u64>,
}

/// Cluster work for the desk (engine thread).
#[derive(Debug)]
pub enum ClusterCmd {
    /// Stream messages, in seq order, starting right after the last ones sent.
    Stream(Vec<StreamEvent>),
    /// This node holds the lease; the stream's last seq was `last_seq`: decide once applied.
    Promote {
        /// The stream's last seq when asked.
        last_seq: u64,
    },
    /// The lease could not be refreshed: stop deciding.
    LeaseLost,
    /// The check of the stream's message at `base` before a term begins there
    /// (`DeskLink::check_base`): `follows` when it is the one this node applied.
    BaseChecked {
        /// The seq checked.
        base: u64,
        /// The term may begin on it.
        follows: bool,
    },
    /// The stream's last seq when this node started: a gateway attaches once it is applied.
    StreamHead {
        /// The stream's last seq.
        last_seq: u64,
    },
    /// A request forwarded by another node, to answer on `reply`.
    Remote {
        /// NATS reply subject.
        reply: Arc<str>,
        /// The session's user.
        user: String,
        /// The session's request id.
        req_id: u32,
        /// A gateway request's origin tag (its events carry it).
        tag: Option<Arc<str>>,
        /// The request.
        request: RemoteRequest,
        /// When it arrived.
        at: Instant,
    },
    /// The answer (one encoded message) to a request this node forwarded for session `sid` or
    /// for its gateway.
    Deliver {
        /// Local session.
        sid: u32,
        /// The local gateway's request id (then `sid` is 0).
        gateway: Option<u64>,
        /// `order.ack`, `order.reject` or `error`.
        msg: Vec<u8>,
        /// When the link thread received it.
        at: Instant,
    },
    /// A stream publish completed.
    Published(Box<Published>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Follower,
    /// Holding the lease, applying the stream up to `target` before deciding.
    Promoting {
        target: u64,
    },
    /// Caught up to `base`: waiting for the check that the stream holds there the message this
    /// node applied (`DeskLink::check_base`).
    Checking {
        base: u64,
    },
    Leader,
}

/// The desk's cluster state (inside `OrderLog::Stream`).
pub(crate) struct ClusterState {
    link: DeskLink,
    pub(super) replier: Replier,
    role: Role,
    /// Last stream seq applied to the durable book.
    applied: u64,
    /// Events applied to the durable book: an event's seq (in acks and trade records) is its
    /// position among the stream's events, the same on every node, gap-free from 1.
    events: u64,
    /// Current term (bumped on every promotion and step-down; completions of older terms only
    /// deliver their acks).
    term: u64,
    /// The term's event subject.
    subject: Arc<str>,
    /// The stream's last seq when the term began.
    base: u64,
    /// Events applied when the term began.
    event_base: u64,
    /// Events published in this term.
    published: u64,
    /// The stream's last seq when this node started (`None`: not known yet).
    head: Option<u64>,
    /// A gateway to attach once the stream is applied up to `head`.
    held_attach: Option<GatewayAttach>,
}

impl ClusterState {
    /// Publishes `ev` (decided on the live book in the engine pass of `now`) in the term's next
    /// stream message; the completion answers its request (see the module doc).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn publish(
        &mut self,
        body: Vec<u8>,
        post: Post,
        shared: Arc<OrdersShared>,
        ev: OrderEvent,
        reply: Option<PendingReply>,
        gateway: Option<u64>,
        now: Instant,
    ) {
        if let Some(r) = &reply {
            let stages = &self.link.stats().stages;
            stages.record(Stage::Decide, now.saturating_duration_since(r.accepted_at));
        }
        self.published += 1;
        let seq = self.event_base + self.published;
        let replier = self.replier.clone();
        let term = self.term;
        // The message's stream seq is not the event's: acks carry the event seq.
        let tag = match (gateway, reply.as_ref().and_then(|r| r.remote.as_ref()?.tag.as_ref())) {
            (Some(g), _) => self.link.gateway_tag(g).into_bytes(),
            (None, Some(t)) => t.as_bytes().to_vec(),
            (None, None) => Vec::new(),
        };
        let done = move |result: Result<u64, String>| {
            complete(&post, &shared, &replier, term, result.map(|_| seq), ev, reply, gateway);
        };
        self.link
            .publish(&self.subject, self.base, tag, body, Box::new(done), now);
    }
}

/// A stream publish's completion on the link thread (`result`: the event's seq once stored): the
/// request's `order.ack` goes to the local worker (through the completion sink, like a journal
/// completion; the sink's group ends after the message's last event) or to the forwarding node; a
/// forwarded request whose publish failed is answered `error` UNAVAILABLE here (a local one by the
/// engine thread). Completions run in publish order, so a session's acks keep stream order.
#[allow(clippy::too_many_arguments)]
fn complete(
    post: &Post,
    shared: &OrdersShared,
    replier: &Replier,
    term: u64,
    result: Result<u64, String>,
    event: OrderEvent,
    reply: Option<PendingReply>,
    gateway: Option<u64>,
) {
    let mut msg = Vec::new();
    let mut local_ack = None;
    match (&result, &reply) {
        (Ok(seq), Some(r)) => {
            shared.note_durable(*seq);
            shared.record_latency(r.accepted_at.elapsed().as_secs_f64() * 1e6);
            match &r.remote {
                Some(to) => {
                    ack_message(&mut msg, r, event.order_id(), *seq);
                    replier.send(&to.reply, msg);
                }
                None => {
                    msg.push(b'[');
                    ack_message(&mut msg, r, event.order_id(), *seq);
                    msg.push(b']');
                    local_ack = Some((r.worker, r.sid, msg));
                }
            }
        }
        (Ok(seq), None) => shared.note_durable(*seq),
        (Err(e), Some(r)) => {
            if let Some(to) = &r.remote {
                let text = format!("orders are unavailable: {e}; the request was not acknowledged");
                replier.send(&to.reply, unavailable(r.req_id, &text));
            }
        }
        (Err(_), None) => {}
    }
    let cmd = super::OrderCmd::Cluster(ClusterCmd::Published(Box::new(Published {
        result,
        term,
        event,
        reply,
        gateway,
    })));
    match &local_ack {
        Some((worker, sid, frame)) => post.post(
            cmd,
            Some(super::Ack {
                worker: *worker,
                sid: *sid,
                frame,
            }),
        ),
        None => post.post(cmd, None),
    }
}

impl OrderDesk {
    /// A desk in cluster mode over `link`: empty books that the order stream fills from seq 1
    /// (trade records and blotters are published as the events are applied); it decides once
    /// the election made it the leader.
    pub fn clustered(cfg: OrdersConfig, post: Post, link: DeskLink) -> OrderDesk {
        let limits = OrderLimits {
            max_quantity: cfg.max_quantity,
            default_tick: cfg.default_tick,
            max_price_ticks: cfg.max_price_ticks,
            ..OrderLimits::default()
        };
        let replier = link.replier();
        let subject = link.new_term_subject();
        let sink = Arc::clone(&post);
        link.set_group_end(Arc::new(move || sink.group_done(&|_| {})));
        OrderDesk {
            book: OrderBook::new(limits),
            durable: OrderBook::new(limits),
            log: OrderLog::Stream(Box::new(ClusterState {
                link,
                replier,
                role: Role::Follower,
                applied: 0,
                events: 0,
                term: 1,
                subject,
                base: 0,
                event_base: 0,
                published: 0,
                head: None,
                held_attach: None,
            })),
            sim: ExecutionSimulator::new(cfg.simulator),
            cfg,
            post,
            shared: Arc::new(OrdersShared::default()),
            failed: None,
            working: FxHashMap::default(),
            ticked: FxHashSet::default(),
            fresh: Vec::new(),
            pending: Vec::new(),
            pending_rows: Vec::new(),
            next_pass: None,
            scratch: Vec::with_capacity(256),
            restore_seqs: Vec::new(),
            next_end_of_day: None,
            gateway: None,
        }
    }

    /// Cluster counters (`None` on a single node).
    pub fn cluster_stats(&self) -> Option<&Arc<crate::cluster::orders::ClusterOrderStats>> {
        match &self.log {
            OrderLog::Stream(c) => Some(c.link.stats()),
            OrderLog::Journal(_) => None,
        }
    }

    /// Whether this desk decides (single node: always; cluster: while it leads).
    pub(super) fn deciding(&self) -> bool {
        match &self.log {
            OrderLog::Journal(_) => true,
            OrderLog::Stream(c) => c.role == Role::Leader,
        }
    }

    /// Cluster mode, not leading: forwards session `sid`'s request (`make`) to the leader and
    /// returns true. Otherwise false (the caller decides here).
    pub(super) fn forward(
        &mut self,
        hub: &mut Hub,
        sid: u32,
        req_id: u32,
        at: Instant,
        make: impl FnOnce() -> RemoteRequest,
    ) -> bool {
        let OrderLog::Stream(c) = &self.log else { return false };
        if c.role == Role::Leader {
            return false;
        }
        // A closed session has nobody to answer: nothing is forwarded.
        if let Some((user, _)) = hub.session_user_and_worker(sid) {
            c.link.forward(sid, req_id, user, &make(), at);
        }
        true
    }

    pub(super) fn cluster(&mut self, hub: &mut Hub, cmd: ClusterCmd, now: Instant) {
        match cmd {
            ClusterCmd::Stream(batch) => self.apply_stream(hub, batch, now),
            ClusterCmd::Promote { last_seq } => {
                let OrderLog::Stream(c) = &mut self.log else { return };
                if matches!(c.role, Role::Leader | Role::Checking { .. }) {
                    return;
                }
                c.role = Role::Promoting { target: last_seq };
                self.maybe_lead();
            }
            ClusterCmd::LeaseLost => self.step_down(),
            ClusterCmd::BaseChecked { base, follows } => {
                let OrderLog::Stream(c) = &mut self.log else { return };
                if c.role != (Role::Checking { base }) {
                    return;
                }
                if follows && c.applied == base {
                    self.lead(hub, now);
                } else {
                    // diverged (the link stopped the node), unknown, or the stream went on
                    // meanwhile: the election promotes again while the lease is held
                    c.role = Role::Follower;
                }
            }
            ClusterCmd::StreamHead { last_seq } => {
                if let OrderLog::Stream(c) = &mut self.log {
                    c.head = Some(last_seq);
                }
                self.attach_when_caught_up();
            }
            ClusterCmd::Remote {
                reply,
                user,
                req_id,
                tag,
                request,
                at,
            } => {
                let to = To {
                    sid: 0,
                    remote: Some(Arc::new(Remote { reply, tag })),
                    gateway: None,
                };
                if !self.deciding() {
                    let msg = "orders are unavailable: this node stopped leading the orders; send again";
                    reply_error(&mut self.scratch, req_id, msg);
                    return self.answer(hub, &to, now);
                }
                let user = Some(user);
                match request {
                    RemoteRequest::Submit(order, origin) => self.submit(hub, to, user, req_id, order, origin, at, now),
                    RemoteRequest::Cancel(cid) => self.change(hub, to, user, req_id, cid, None, at, now),
                    RemoteRequest::Amend {
                        client_order_id,
                        quantity,
                        price,
                    } => {
                        let amend = Some(Amend { quantity, price });
                        self.change(hub, to, user, req_id, client_order_id, amend, at, now);
                    }
                }
            }
            ClusterCmd::Deliver {
                sid,
                gateway: None,
                msg,
                at,
            } => {
                if let OrderLog::Stream(c) = &self.log {
                    let stages = &c.link.stats().stages;
                    stages.record(Stage::ForwardDeliver, now.saturating_duration_since(at));
                }
                hub.reply_now(sid, &msg, now);
            }
            ClusterCmd::Deliver {
                gateway: Some(request),
                msg,
                ..
            } => {
                let Some(g) = &self.gateway else { return };
                match gateway_answer(&msg) {
                    // reported when the event arrives through the stream (its tag names the request)
                    GatewayAnswer::Durable => {}
                    GatewayAnswer::Refused(r) => g.sink.refused(request, &r),
                    GatewayAnswer::Unavailable(m) => g.sink.unavailable(request, &m),
                }
            }
            ClusterCmd::Published(p) => self.published(hub, *p, now),
        }
    }

    /// A publish completion: a durable accept of this term is acknowledged (published like any
    /// decision); a failure answers a local request `error` UNAVAILABLE and, in the current term,
    /// makes the node step down.
    fn published(&mut self, hub: &mut Hub, p: Published, now: Instant) {
        let OrderLog::Stream(c) = &self.log else { return };
        let current = c.term == p.term && c.role == Role::Leader;
        match p.result {
            Ok(_) => {
                let answers = p.reply.is_some() || p.gateway.is_some();
                if current && answers && matches!(p.event, OrderEvent::Accepted { .. }) {
                    self.acknowledge(hub, p.event.order_id(), now);
                }
            }
            Err(e) => {
                let msg = format!("orders are unavailable: {e}; the request was not acknowledged");
                if let Some(r) = p.reply.as_ref().filter(|r| r.remote.is_none()) {
                    reply_error(&mut self.scratch, r.req_id, &msg);
                    hub.reply_now(r.sid, &self.scratch, now);
                }
                if let (Some(request), Some(g)) = (p.gateway, &self.gateway) {
                    g.sink.unavailable(request, &msg);
                }
                if current {
                    self.step_down();
                }
            }
        }
    }

    /// Stops deciding: the live book may hold events that were never stored; it is replaced by
    /// the durable book at the next promotion.
    fn step_down(&mut self) {
        let OrderLog::Stream(c) = &mut self.log else { return };
        if c.role == Role::Leader {
            c.link.set_active(false);
            c.term += 1;
        }
        c.role = Role::Follower;
        self.working.clear();
        self.ticked.clear();
        self.fresh.clear();
        self.next_pass = None;
        let open = self.durable.open_orders().count() as u64;
        self.shared.open.store(open, Ordering::Relaxed);
    }

    /// Promoting and caught up: check the stream's message at the base first (`BaseChecked`).
    fn maybe_lead(&mut self) {
        let OrderLog::Stream(c) = &mut self.log else { return };
        let Role::Promoting { target } = c.role else { return };
        if c.applied < target {
            return;
        }
        c.role = Role::Checking { base: c.applied };
        c.link.check_base(c.applied);
    }

    /// Checked and still caught up: start deciding on a copy of the durable book.
    fn lead(&mut self, hub: &mut Hub, now: Instant) {
        let OrderLog::Stream(c) = &mut self.log else { return };
        c.role = Role::Leader;
        c.term += 1;
        c.subject = c.link.new_term_subject();
        c.base = c.applied;
        c.event_base = c.events;
        c.published = 0;
        c.link.term_began(&c.subject, c.base);
        c.link.set_active(true);
        self.book = self.durable.clone();
        // The durable book has no risk rules (it only applies events): the deciding book does.
        self.book.set_risk(self.cfg.risk.clone());
        self.working.clear();
        self.ticked.clear();
        self.fresh.clear();
        self.next_pass = None;
        self.next_end_of_day = None;
        let open = self.book.open_orders().count() as u64;
        self.shared.open.store(open, Ordering::Relaxed);
        self.resume_open(hub, now);
    }

    /// Applies stream messages in order to the durable book (and, through `flush_published`,
    /// trade records and blotters); a promoting node that caught up starts deciding.
    fn apply_stream(&mut self, hub: &mut Hub, batch: Vec<StreamEvent>, now: Instant) {
        let OrderLog::Stream(c) = &self.log else { return };
        let (mut applied, mut events) = (c.applied, c.events);
        let leader = c.role == Role::Leader;
        let mut open_delta = 0i64;
        // a node found diverged applies nothing from that seq on (`ClusterOrderStats::diverged_at`)
        let diverged_at = c.link.stats().diverged_at.load(Ordering::Relaxed);
        for StreamEvent { seq, events: framed } in batch {
            if seq <= applied || (diverged_at != 0 && seq >= diverged_at) {
                continue;
            }
            applied = seq;
            for f in framed {
                events += 1;
                let Ok(mut ev) = OrderEvent::decode(&f.body) else {
                    continue; // not written by a desk of this version: nothing to apply
                };
                // the gateway request of this node the event answers, if any
                let request = match &self.log {
                    OrderLog::Stream(c) if !f.tag.is_empty() => c.link.own_request(&f.tag),
                    _ => None,
                };
                if let Ok((was, is)) = self.apply_durable(events, &mut ev, request) {
                    open_delta += i64::from(is) - i64::from(was);
                }
            }
        }
        if !leader {
            // The leader counts open orders as it decides; a follower as the stream says.
            if open_delta >= 0 {
                self.shared.open.fetch_add(open_delta as u64, Ordering::Relaxed);
            } else {
                self.shared.open.fetch_sub(open_delta.unsigned_abs(), Ordering::Relaxed);
            }
        }
        self.shared.note_durable(events);
        if let OrderLog::Stream(c) = &mut self.log {
            c.applied = applied;
            c.events = events;
            c.link.stats().applied_seq.store(applied, Ordering::Relaxed);
        }
        self.flush_published(hub, now);
        self.attach_when_caught_up();
        self.maybe_lead();
    }

    /// Cluster mode, not leading: forwards gateway request `r` to the leader and returns true.
    /// Otherwise false (decided here).
    pub(super) fn forward_gateway(&mut self, r: &GatewayRequest) -> bool {
        let OrderLog::Stream(c) = &self.log else { return false };
        if c.role == Role::Leader {
            return false;
        }
        let req = match &r.op {
            GatewayOp::Submit { order, origin } => RemoteRequest::Submit(order.clone(), origin.clone()),
            GatewayOp::Cancel { client_order_id } => RemoteRequest::Cancel(client_order_id.clone()),
            GatewayOp::Amend {
                client_order_id,
                quantity,
                price,
            } => RemoteRequest::Amend {
                client_order_id: client_order_id.clone(),
                quantity: *quantity,
                price: *price,
            },
        };
        c.link.forward_gateway(r.request, &r.user, &req);
        true
    }

    /// Cluster mode: keeps a gateway's attach until the durable book has applied the stream as
    /// far as it reached when this node started (else the gateway would take the events it
    /// applies later for new ones and report them again). `Some`: attach now.
    pub(super) fn hold_attach(&mut self, a: GatewayAttach) -> Option<GatewayAttach> {
        let OrderLog::Stream(c) = &mut self.log else {
            return Some(a);
        };
        if c.head.is_some_and(|h| c.applied >= h) {
            return Some(a);
        }
        c.held_attach = Some(a);
        None
    }

    /// Attaches a held gateway once the stream is applied up to its head at start.
    fn attach_when_caught_up(&mut self) {
        let OrderLog::Stream(c) = &mut self.log else { return };
        if c.held_attach.is_none() || c.head.is_none_or(|h| c.applied < h) {
            return;
        }
        if let Some(a) = c.held_attach.take() {
            self.attach_gateway(a);
        }
    }
}
