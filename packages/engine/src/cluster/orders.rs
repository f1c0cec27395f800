//! The NATS side of the replicated order desk (docs/architecture.md, "Cluster mode: orders").
//!
//! - Stream `<name>_ORDERS` (subjects `<name>.orders.>`, file storage, `replicas`): the desk's
//!   decided order events, in messages of one or more (`batch.rs`) on the subject of the term that
//!   decided them (`<name>.orders.ev.<node>.<term>`), after one `<name>.orders.genesis` message
//!   (so every publish can be fenced on a last seq >= 1).
//! - KV bucket `<name>_desk` (history 1, `max_age` = `LEASE`): key `leader` is the lease, written
//!   as stream publishes fenced on the bucket stream's last seq (`Bucket`). The holder refreshes it
//!   every `LEASE / 4`, a failed refresh retried, and while the bucket does not answer it decides
//!   on provisionally as long as the order stream holds nothing beyond its term's messages
//!   (`lease.rs`); the others try to create it as often.
//! - Requests of sessions on a node that does not lead go to `<name>.desk.req` as core NATS
//!   requests (reply subject `<name>.desk.rep.<node>.<id>`); only the active leader subscribes
//!   (queue group `leader`), and it answers each with the one message the session gets
//!   (`order.ack`, `order.reject` or `error`).
//!
//! Tasks on the link's runtime: the publisher (group commit: the events queued when a message is
//! sent go in it; messages pipelined, completions in publish order), the consumer (an ordered push consumer from the last applied seq + 1, batches sent to
//! the engine thread), the election, the request server (leader) and the forwarder (followers).
//! They all end when the desk's `DeskLink` is dropped (the engine thread ended).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use async_nats::jetstream::message::PublishMessage;
use async_nats::jetstream::{self, context::PublishErrorKind, stream};
use bytes::Bytes;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, watch};

use super::batch;
use super::batch_meter::BatchMeter;
use super::chain::{self, Base, Chain, Fences};
use super::lease::{self, Lease};
use super::stages::{Stage, StageMeter};
use super::verdict::{stale_refusal, Delivered};
use super::{ClusterError, Link};
use crate::error::ErrorCode;
use crate::order_book::{OrderReject, RejectField, RejectRule, Side, TimeInForce};
use crate::order_desk::cluster::{ClusterCmd, RemoteRequest, StreamEvent};
use crate::order_desk::{OrderCmd, OrderInput};
use crate::wire::encode;

pub use super::lease::LEASE;

/// A consumer that delivered nothing for this long checks whether the stream went on without it.
const CONSUMER_QUIET: Duration = Duration::from_secs(1);

/// Quiet checks (`CONSUMER_QUIET` each) after which the consumer is replaced by a new one from the
/// same position even though no server reports the stream beyond it (`chain.rs`).
const QUIET_CHECKS_TO_REPLACE: u32 = 5;

/// Most stream messages handed to the engine thread in one command.
const APPLY_BATCH: usize = 1024;

/// Wait between two tries of something NATS refused for now (a consumer to recreate, a request
/// nobody answered).
const RETRY: Duration = Duration::from_millis(25);

/// How long a provisional leader's order stream check and each of its lease writes may take
/// (`lease.rs`): a check not answered in time ends provisional deciding.
const CHECK: Duration = Duration::from_millis(500);

/// Sends a command to the engine thread (the runtime's control lane).
pub type ToEngine = Arc<dyn Fn(OrderCmd) + Send + Sync>;

/// A stream publish's completion: `Ok(stream seq)` once stored on a quorum, else why not.
pub type PublishDone = Box<dyn FnOnce(Result<u64, String>) + Send>;

/// Cluster counters of the order desk (`EngineStats`).
#[derive(Debug, Default)]
pub struct ClusterOrderStats {
    /// This node is the deciding leader now.
    pub leader: AtomicBool,
    /// This node holds the lease provisionally now (`lease.rs`).
    pub lease_provisional: AtomicBool,
    /// Last stream seq applied to this node's durable book.
    pub applied_seq: AtomicU64,
    /// Requests forwarded to the leader.
    pub forwarded: AtomicU64,
    /// Stream publishes that failed (timed out, refused by the fence, no quorum).
    pub publish_failures: AtomicU64,
    /// The stream seq of a message the consumer refused because it follows another history than
    /// the one applied here (`chain.rs`); 0: none. From then on this node applies nothing more
    /// and neither takes nor keeps the lease.
    pub diverged_at: AtomicU64,
    /// Group commit: messages published, events and bytes in them, messages in flight.
    pub batches: BatchMeter,
    /// Where an order's time goes in this node, per stage (`stages.rs`).
    pub stages: StageMeter,
}

/// Runs after the completions of one stream message (the desk's completion sink ends its group
/// there: one wake of the engine thread and the workers per message, not per event).
pub type GroupEnd = Arc<dyn Fn() + Send + Sync>;

/// How far the current term's messages can reach in the stream: its base plus the messages the
/// publisher sent (stored or in flight). A stream whose last seq is beyond it holds another
/// node's decisions (the provisional leader's check, `lease.rs`).
#[derive(Debug, Default)]
struct TermReach(Mutex<(Option<Arc<str>>, u64)>);

impl TermReach {
    /// The term with event subject `subject` began on the stream's last seq `base`.
    fn began(&self, subject: &Arc<str>, base: u64) {
        if let Ok(mut r) = self.0.lock() {
            *r = (Some(Arc::clone(subject)), base);
        }
    }

    /// The publisher sent message fenced on `last_seq` (stored as `last_seq + 1`) of `subject`.
    fn sent(&self, subject: &Arc<str>, last_seq: u64) {
        if let Ok(mut r) = self.0.lock() {
            if r.0.as_ref() == Some(subject) {
                r.1 = r.1.max(last_seq + 1);
            }
        }
    }

    /// Whether a stream whose last seq is `last` holds nothing beyond the current term's messages.
    fn covers(&self, last: u64) -> bool {
        self.0.lock().is_ok_and(|r| r.0.is_some() && last <= r.1)
    }
}

/// One event for the publisher (`batch.rs` makes messages of them).
type PublishReq = batch::Item<PublishDone>;

/// A forwarded request of local session `sid`, or of the local gateway (its request id).
struct Forward {
    sid: u32,
    gateway: Option<u64>,
    req_id: u32,
    payload: Vec<u8>,
    /// When the engine thread forwarded it.
    at: Instant,
}

/// The desk's handle on its NATS tasks (engine thread). Dropping it ends them.
pub struct DeskLink {
    publish_tx: mpsc::UnboundedSender<PublishReq>,
    group_end: Arc<OnceLock<GroupEnd>>,
    forward_tx: mpsc::UnboundedSender<Forward>,
    reply_tx: mpsc::UnboundedSender<(Arc<str>, Vec<u8>)>,
    active: watch::Sender<bool>,
    node: String,
    event_prefix: String,
    stats: Arc<ClusterOrderStats>,
    terms: AtomicU64,
    reach: Arc<TermReach>,
    check_tx: mpsc::UnboundedSender<u64>,
}

impl std::fmt::Debug for DeskLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeskLink")
            .field("events", &self.event_prefix)
            .finish_non_exhaustive()
    }
}

/// Sends answers to forwarded requests (cheap to clone; usable from publish completions).
#[derive(Clone)]
pub struct Replier(mpsc::UnboundedSender<(Arc<str>, Vec<u8>)>);

impl Replier {
    /// Sends `msg` (one encoded server message) to the reply subject of a forwarded request.
    pub fn send(&self, to: &Arc<str>, msg: Vec<u8>) {
        // The task is gone only when the engine stops: the request then times out at its origin.
        let _ = self.0.send((Arc::clone(to), msg));
    }
}

impl DeskLink {
    /// Counters.
    pub fn stats(&self) -> &Arc<ClusterOrderStats> {
        &self.stats
    }

    /// A new term's event subject (unique: this process's start time and a counter).
    pub fn new_term_subject(&self) -> Arc<str> {
        let n = self.terms.fetch_add(1, Ordering::Relaxed);
        format!("{}{}", self.event_prefix, n).into()
    }

    /// Sets what runs after the completions of each stream message (once; later calls change
    /// nothing).
    pub fn set_group_end(&self, end: GroupEnd) {
        let _ = self.group_end.set(end);
    }

    /// Publishes `body`, an event of the term whose subject is `subject` and that began when the
    /// stream's last seq was `base`, in the term's next stream message (with the events queued
    /// beside it, `batch.rs`); `tag` names the gateway request it answers (empty: none). `done`
    /// runs on the link's thread with the message's result (its stream seq), in publish order.
    /// `now`: the engine pass's time (the stage timing, `stages.rs`).
    #[allow(clippy::too_many_arguments)]
    pub fn publish(&self, subject: &Arc<str>, base: u64, tag: Vec<u8>, body: Vec<u8>, done: PublishDone, now: Instant) {
        let req = PublishReq {
            subject: Arc::clone(subject),
            base,
            tag,
            body,
            done,
            at: now,
        };
        if let Err(mpsc::error::SendError(req)) = self.publish_tx.send(req) {
            (req.done)(Err("the cluster link is stopping".into()));
        }
    }

    /// Forwards a request of local session `sid` to the leader; its answer (or `error`
    /// UNAVAILABLE when no leader takes it in time) comes back as `ClusterCmd::Deliver`. `at`:
    /// when the request was taken (its command queued for the engine thread).
    pub fn forward(&self, sid: u32, req_id: u32, user: &str, req: &RemoteRequest, at: Instant) {
        self.stats.forwarded.fetch_add(1, Ordering::Relaxed);
        let payload = encode_request(user, req_id, "", req);
        let _ = self.forward_tx.send(Forward {
            sid,
            gateway: None,
            req_id,
            payload,
            at,
        });
    }

    /// Forwards gateway request `request` (for `user`) to the leader; the events answering it
    /// carry this node's tag for it (`gateway_tag`), and the leader's answer comes back as
    /// `ClusterCmd::Deliver` with `gateway` set.
    pub fn forward_gateway(&self, request: u64, user: &str, req: &RemoteRequest) {
        self.stats.forwarded.fetch_add(1, Ordering::Relaxed);
        let payload = encode_request(user, 0, &self.gateway_tag(request), req);
        let _ = self.forward_tx.send(Forward {
            sid: 0,
            gateway: Some(request),
            req_id: 0,
            payload,
            at: Instant::now(),
        });
    }

    /// The origin tag of this node's gateway request `request` (`<node>:<request>`).
    pub fn gateway_tag(&self, request: u64) -> String {
        format!("{}:{request}", self.node)
    }

    /// The gateway request of this node a stream event's origin tag names, if it names one.
    pub fn own_request(&self, tag: &[u8]) -> Option<u64> {
        let tag = std::str::from_utf8(tag).ok()?;
        let (node, request) = tag.rsplit_once(':')?;
        (node == self.node).then(|| request.parse().ok()).flatten()
    }

    /// The answer sender for forwarded requests.
    pub fn replier(&self) -> Replier {
        Replier(self.reply_tx.clone())
    }

    /// A term with event subject `subject` begins on the stream's last seq `base` (before
    /// `set_active(true)`).
    pub fn term_began(&self, subject: &Arc<str>, base: u64) {
        self.reach.began(subject, base);
    }

    /// Checks, before a term begins on `base` (the last seq this node applied), that the stream
    /// holds there the message this node applied (`chain::check_base`); the answer comes back as
    /// `ClusterCmd::BaseChecked`. On a divergence the link marks this node diverged first
    /// (`diverged_at`, one stderr line): it applies nothing more and gives up the lease.
    pub fn check_base(&self, base: u64) {
        // the task is gone only when the engine stops: nothing leads then
        let _ = self.check_tx.send(base);
    }

    /// Starts (true) or stops serving forwarded requests as the leader.
    pub fn set_active(&self, active: bool) {
        self.stats.leader.store(active, Ordering::Relaxed);
        self.active.send_replace(active);
    }
}

/// The wire form of a forwarded request (JSON).
#[derive(Serialize, Deserialize)]
struct WireRequest {
    user: String,
    req_id: u32,
    /// `submit`, `cancel` or `amend`.
    kind: String,
    client_order_id: String,
    #[serde(default)]
    instrument: String,
    #[serde(default)]
    side: String,
    #[serde(default)]
    time_in_force: String,
    #[serde(default)]
    quantity: Option<f64>,
    #[serde(default)]
    price: Option<f64>,
    /// A gateway request's origin tag (`<node>:<request id>`); empty for a session's request.
    #[serde(default)]
    tag: String,
    /// A gateway submit's origin (`GatewayOp::Submit::origin`), journaled with the accept;
    /// absent for a session's request and in requests of nodes that do not send it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    origin: Option<String>,
}

fn encode_request(user: &str, req_id: u32, tag: &str, req: &RemoteRequest) -> Vec<u8> {
    let mut w = WireRequest {
        user: user.to_owned(),
        req_id,
        tag: tag.to_owned(),
        kind: String::new(),
        client_order_id: String::new(),
        instrument: String::new(),
        side: String::new(),
        time_in_force: String::new(),
        quantity: None,
        price: None,
        origin: None,
    };
    match req {
        RemoteRequest::Submit(o, origin) => {
            w.kind = "submit".into();
            w.origin.clone_from(origin);
            w.client_order_id.clone_from(&o.client_order_id);
            w.instrument.clone_from(&o.instrument);
            w.side = crate::order_desk::records::side_str(o.side).into();
            w.time_in_force = crate::order_desk::records::tif_str(o.time_in_force).into();
            w.quantity = Some(o.quantity);
            w.price = o.price;
        }
        RemoteRequest::Cancel(cid) => {
            w.kind = "cancel".into();
            w.client_order_id.clone_from(cid);
        }
        RemoteRequest::Amend {
            client_order_id,
            quantity,
            price,
        } => {
            w.kind = "amend".into();
            w.client_order_id.clone_from(client_order_id);
            w.quantity = *quantity;
            w.price = *price;
        }
    }
    serde_json::to_vec(&w).unwrap_or_default()
}

fn decode_request(bytes: &[u8]) -> Option<(String, u32, String, RemoteRequest)> {
    let w: WireRequest = serde_json::from_slice(bytes).ok()?;
    let req = match w.kind.as_str() {
        "submit" => RemoteRequest::Submit(
            OrderInput {
                client_order_id: w.client_order_id,
                instrument: w.instrument,
                side: match w.side.as_str() {
                    "buy" => Side::Buy,
                    "sell" => Side::Sell,
                    _ => return None,
                },
                quantity: w.quantity?,
                price: w.price,
                time_in_force: match w.time_in_force.as_str() {
                    "day" => TimeInForce::Day,
                    "ioc" => TimeInForce::Ioc,
                    "gtc" => TimeInForce::Gtc,
                    _ => return None,
                },
            },
            w.origin,
        ),
        "cancel" => RemoteRequest::Cancel(w.client_order_id),
        "amend" => RemoteRequest::Amend {
            client_order_id: w.client_order_id,
            quantity: w.quantity,
            price: w.price,
        },
        _ => return None,
    };
    Some((w.user, w.req_id, w.tag, req))
}

/// What the leader answered a forwarded gateway request (one encoded server message).
#[derive(Debug, Clone, PartialEq)]
pub enum GatewayAnswer {
    /// Durable (`order.ack`): the gateway reports it when the event arrives through the stream.
    Durable,
    /// Refused (`order.reject`): nothing changed.
    Refused(OrderReject),
    /// Not served (`error`, or an answer this version cannot read): why.
    Unavailable(String),
}

/// Reads the leader's answer to a forwarded gateway request.
pub fn gateway_answer(msg: &[u8]) -> GatewayAnswer {
    #[derive(Deserialize)]
    struct Wire {
        #[serde(rename = "type")]
        kind: String,
        #[serde(default)]
        field: String,
        #[serde(default)]
        rule: String,
        #[serde(default)]
        message: String,
    }
    let Ok(w) = serde_json::from_slice::<Wire>(msg) else {
        return GatewayAnswer::Unavailable(
            "orders are unavailable: the order leader's answer could not be read".into(),
        );
    };
    let field = RejectField::ALL.iter().find(|f| f.as_str() == w.field);
    let rule = RejectRule::ALL.iter().find(|r| r.as_str() == w.rule);
    match (w.kind.as_str(), field, rule) {
        ("order.ack", _, _) => GatewayAnswer::Durable,
        ("order.reject", Some(field), Some(rule)) => GatewayAnswer::Refused(OrderReject {
            field: *field,
            rule: *rule,
            message: w.message,
        }),
        _ if w.message.is_empty() => GatewayAnswer::Unavailable("orders are unavailable".into()),
        _ => GatewayAnswer::Unavailable(w.message),
    }
}

/// `error` UNAVAILABLE for request `req_id`.
pub fn unavailable(req_id: u32, message: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + message.len());
    encode::error(&mut out, Some(req_id), ErrorCode::Unavailable, message, None, None);
    out
}

/// Names of everything the order desk uses in NATS.
#[derive(Clone)]
struct Names {
    stream: String,
    events: String,
    genesis: String,
    bucket: String,
    requests: String,
    replies: String,
}

impl Names {
    fn new(link: &Link) -> Names {
        let c = link.config();
        Names {
            stream: format!("{}_ORDERS", c.name),
            events: c.subject("orders.ev."),
            genesis: c.subject("orders.genesis"),
            bucket: format!("{}_desk", c.name),
            requests: c.subject("desk.req"),
            replies: c.subject(&format!("desk.rep.{}", c.node)),
        }
    }
}

/// Creates (or opens) the order stream and the lease bucket, retrying until `connect_timeout`
/// (a JetStream cluster elects its meta leader for a moment after it starts).
async fn ensure(js: &jetstream::Context, link: &Link, names: &Names) -> Result<(), String> {
    let c = link.config();
    let deadline = Instant::now() + c.connect_timeout;
    let mut last = String::new();
    while Instant::now() < deadline {
        let created = js
            .get_or_create_stream(stream::Config {
                name: names.stream.clone(),
                subjects: vec![c.subject("orders.>")],
                num_replicas: c.replicas,
                storage: stream::StorageType::File,
                // Message ids are the fence, not a dedupe: keep the server's id table small.
                duplicate_window: Duration::from_secs(5),
                ..Default::default()
            })
            .await;
        if let Err(e) = created {
            last = format!("order stream {}: {e}", names.stream);
            tokio::time::sleep(RETRY * 4).await;
            continue;
        }
        // The bucket's stream, as `create_key_value` would make it (that call first reads the
        // account info, which this client cannot parse from a 2.9 server).
        let bucket = js
            .get_or_create_stream(stream::Config {
                name: format!("KV_{}", names.bucket),
                subjects: vec![format!("$KV.{}.>", names.bucket)],
                max_messages_per_subject: 1,
                max_age: LEASE,
                storage: stream::StorageType::File,
                num_replicas: c.replicas,
                allow_rollup: true,
                deny_delete: true,
                allow_direct: true,
                discard: stream::DiscardPolicy::New,
                ..Default::default()
            })
            .await;
        if let Err(e) = bucket {
            last = format!("lease bucket {}: {e}", names.bucket);
            tokio::time::sleep(RETRY * 4).await;
            continue;
        }
        return Ok(());
    }
    Err(last)
}

/// Starts the order desk's NATS side on `link`: creates the stream and the lease bucket, then
/// spawns the tasks. Stream events from seq 1 and election results go to `to_engine`.
pub fn start(link: &Arc<Link>, to_engine: ToEngine) -> Result<DeskLink, ClusterError> {
    let names = Names::new(link);
    let js = {
        // Stream publishes and API calls time out after the cluster's request timeout.
        let _in_runtime = link.handle().enter();
        jetstream::ContextBuilder::new()
            .timeout(link.config().request_timeout)
            .build(link.client().clone())
    };
    link.handle()
        .block_on(ensure(&js, link, &names))
        .map_err(ClusterError::Runtime)?;
    let stats = Arc::new(ClusterOrderStats::default());
    let (publish_tx, publish_rx) = mpsc::unbounded_channel();
    let (forward_tx, forward_rx) = mpsc::unbounded_channel();
    let (reply_tx, reply_rx) = mpsc::unbounded_channel();
    let (active, active_rx) = watch::channel(false);
    let (check_tx, check_rx) = mpsc::unbounded_channel();
    let h = link.handle();
    let client = link.client().clone();
    let timeout = link.config().request_timeout;
    let group_end = Arc::new(OnceLock::new());
    let reach = Arc::new(TermReach::default());
    let delivered = Arc::new(Delivered::default());
    h.spawn(publisher(
        js.clone(),
        publish_rx,
        Arc::clone(&stats),
        timeout,
        Arc::clone(&group_end),
        Arc::clone(&reach),
        Arc::clone(&delivered),
    ));
    h.spawn(consumer(
        js.clone(),
        names.clone(),
        Arc::clone(&to_engine),
        active_rx.clone(),
        Arc::clone(&delivered),
        Arc::clone(&stats),
    ));
    h.spawn(base_checker(
        client.clone(),
        names.clone(),
        check_rx,
        delivered,
        Arc::clone(&to_engine),
        Arc::clone(&stats),
    ));
    h.spawn(election(
        js.clone(),
        Bucket::new(&js, &names),
        names.clone(),
        link.config().node.clone(),
        Arc::clone(&to_engine),
        active_rx.clone(),
        Arc::clone(&reach),
        Arc::clone(&stats),
    ));
    h.spawn(server(
        client.clone(),
        names.requests.clone(),
        Arc::clone(&to_engine),
        active_rx,
    ));
    h.spawn(replies(client.clone(), reply_rx));
    h.spawn(forwarder(
        client,
        names.clone(),
        timeout,
        forward_rx,
        Arc::clone(&to_engine),
        Arc::clone(&stats),
    ));
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    Ok(DeskLink {
        publish_tx,
        group_end,
        forward_tx,
        reply_tx,
        active,
        node: link.config().node.clone(),
        event_prefix: format!("{}{}.{started:x}-", names.events, link.config().node),
        stats,
        terms: AtomicU64::new(1),
        reach,
        check_tx,
    })
}

/// One stream message as sent: what a retry sends again.
struct Sent {
    subject: Arc<str>,
    last_seq: u64,
    k: u64,
    body: Bytes,
    events: usize,
    /// The first send: the publish's deadline is this plus the request timeout.
    at: Instant,
    /// The last seq the consumer had delivered at the first send (`verdict.rs`).
    seen: u64,
    /// A term's first message: the id of the message the consumer delivered at `last_seq`
    /// (`chain::FOLLOWS`; `None`: it had none, or the consumer is past it and the seq fence
    /// refuses the message anyway).
    follows: Option<String>,
}

impl Sent {
    /// The message with its fences (`batch.rs`; `Nats-Msg-Id` the same on every send: a retry
    /// the stream already stored is answered as a duplicate with the same seq).
    fn message(&self) -> PublishMessage {
        let mut msg = PublishMessage::build()
            .payload(self.body.clone())
            .header(batch::HEADER, self.events.to_string().as_str())
            .expected_last_sequence(self.last_seq)
            .message_id(format!("{}:{}", self.subject, self.k));
        if self.k > 0 {
            msg = msg.expected_last_message_id(format!("{}:{}", self.subject, self.k - 1));
        } else if let Some(follows) = &self.follows {
            msg = msg.header(chain::FOLLOWS, follows.as_str());
        }
        msg
    }
}

/// Whether a publish that failed with `kind` `elapsed` after its first send is sent again: only
/// when no server answered for the stream (NATS says "no responders": the stream's raft group has
/// no leader while it elects one after a NATS server died) and its time is not up. Anything else
/// (fenced, timed out, refused) is final: the leader steps down.
fn retry_publish(kind: PublishErrorKind, elapsed: Duration, timeout: Duration) -> bool {
    kind == PublishErrorKind::StreamNotFound && elapsed + RETRY < timeout
}

/// Publishes in order, each message with the events queued when it is sent (`batch.rs`), many
/// messages in flight; a second task awaits the acks in the same order and runs the completions
/// of each message's events, then the group end. A message nobody answered for (the stream is
/// electing a leader) is sent again every `RETRY` until `timeout` after its first send, before
/// the acks of the later ones are read, so an order arriving during a stream leader election
/// waits for the new leader instead of being refused. A "wrong last sequence" refusal that
/// cannot be true (a stale stream leader's, `verdict.rs`) is not taken: the message the consumer
/// delivers at the fenced seq decides, within the same timeout.
async fn publisher(
    js: jetstream::Context,
    mut rx: mpsc::UnboundedReceiver<PublishReq>,
    stats: Arc<ClusterOrderStats>,
    timeout: Duration,
    group_end: Arc<OnceLock<GroupEnd>>,
    reach: Arc<TermReach>,
    delivered: Arc<Delivered>,
) {
    type Pending = (
        Result<jetstream::context::PublishAckFuture, String>,
        Sent,
        Vec<PublishDone>,
    );
    let (acks_tx, mut acks_rx) = mpsc::unbounded_channel::<Pending>();
    let resend = js.clone();
    let failures = Arc::clone(&stats);
    let seen = Arc::clone(&delivered);
    let acker = tokio::spawn(async move {
        while let Some((mut attempt, sent, dones)) = acks_rx.recv().await {
            let result = loop {
                // a retry's own ack timeout would run past the first send's deadline: bound it
                let left = (sent.at + timeout).saturating_duration_since(Instant::now());
                let (kind, why) = match attempt {
                    Ok(fut) => match tokio::time::timeout(left, std::future::IntoFuture::into_future(fut)).await {
                        Ok(Ok(ack)) => break Ok(ack.sequence),
                        Ok(Err(e)) if stale(&e, sent.seen) => {
                            let fenced_for = sent.last_seq + 1;
                            break match delivered.wait(fenced_for, &sent.subject, sent.at + timeout).await {
                                Some(true) => Ok(fenced_for),
                                Some(false) => Err(describe(e.kind(), &e)),
                                None => Err(describe(PublishErrorKind::TimedOut, &"")),
                            };
                        }
                        Ok(Err(e)) => (e.kind(), describe(e.kind(), &e)),
                        Err(_) => break Err(describe(PublishErrorKind::TimedOut, &"")),
                    },
                    Err(e) => break Err(e),
                };
                let elapsed = sent.at.elapsed();
                if !retry_publish(kind, elapsed, timeout) {
                    break Err(why);
                }
                tokio::time::sleep(RETRY).await;
                attempt = resend
                    .send_publish(sent.subject.to_string(), sent.message())
                    .await
                    .map_err(|e| describe(e.kind(), &e));
            };
            if result.is_err() {
                failures.publish_failures.fetch_add(1, Ordering::Relaxed);
            }
            let events = dones.len() as u64;
            let stored = Instant::now();
            failures.stages.record_n(Stage::Store, stored - sent.at, events);
            batch::settle(dones, &result);
            failures.batches.settled();
            if let Some(end) = group_end.get() {
                end();
            }
            failures.stages.record_n(Stage::Complete, stored.elapsed(), events);
        }
    });
    let mut batcher = batch::Batcher::default();
    let mut held: Option<PublishReq> = None;
    loop {
        let first = match held.take() {
            Some(req) => req,
            None => match rx.recv().await {
                Some(req) => req,
                None => break,
            },
        };
        let m = batcher.message(first, &mut held, || rx.try_recv().ok());
        reach.sent(&m.subject, m.last_seq);
        let sent = Sent {
            subject: m.subject,
            last_seq: m.last_seq,
            k: m.k,
            body: Bytes::from(m.body),
            events: m.events,
            at: Instant::now(),
            seen: seen.last(),
            follows: if m.k == 0 { seen.last_id_at(m.last_seq) } else { None },
        };
        let attempt = js
            .send_publish(sent.subject.to_string(), sent.message())
            .await
            .map_err(|e| describe(e.kind(), &e));
        for queued in &m.queued {
            stats
                .stages
                .record(Stage::Queue, sent.at.saturating_duration_since(*queued));
        }
        stats.batches.published(sent.events, sent.body.len());
        if acks_tx.send((attempt, sent, m.dones)).is_err() {
            break;
        }
    }
    drop(acks_tx);
    let _ = acker.await;
}

/// Whether publish error `e` is a "wrong last sequence" refusal naming a last seq below `seen`
/// (`verdict.rs`): the server's text is in the error's source.
fn stale(e: &jetstream::context::PublishError, seen: u64) -> bool {
    e.kind() == PublishErrorKind::WrongLastSequence
        && std::error::Error::source(e).is_some_and(|s| stale_refusal(&s.to_string(), seen))
}

fn describe(kind: PublishErrorKind, e: &dyn std::fmt::Display) -> String {
    match kind {
        PublishErrorKind::TimedOut => "the order stream did not confirm in time (no quorum?)".into(),
        PublishErrorKind::WrongLastSequence => {
            "another node decided meanwhile (this one is no longer the order leader)".into()
        }
        PublishErrorKind::StreamNotFound => {
            "the order stream had no leader in time (a NATS server lost, the others electing one?)".into()
        }
        _ => format!("the order stream refused: {e}"),
    }
}

/// Tells the engine thread the stream's last seq at start (`StreamHead`), then delivers the stream
/// in seq order from seq 1, through an ordered push consumer recreated from the last delivered
/// seq + 1 whenever it fails, or when it is quiet while a server reports the stream beyond it.
/// A message that does not follow the history delivered so far (`chain.rs`) stops the delivery
/// for good (`diverged_at`).
async fn consumer(
    js: jetstream::Context,
    names: Names,
    to_engine: ToEngine,
    mut stop: watch::Receiver<bool>,
    shared: Arc<Delivered>,
    stats: Arc<ClusterOrderStats>,
) {
    // How far the stream reached at start: the desk attaches a gateway once it applied that much.
    let head = loop {
        if let Some(last) = stream_last_seq(&js, &names).await {
            break last;
        }
        tokio::select! {
            _ = tokio::time::sleep(RETRY * 4) => {}
            r = stop.changed() => if r.is_err() { return },
        }
    };
    to_engine(OrderCmd::Cluster(ClusterCmd::StreamHead { last_seq: head }));
    let mut delivered = 0u64;
    let mut chain = Chain::default();
    loop {
        if stop.has_changed().is_err() {
            return;
        }
        if stats.diverged_at.load(Ordering::Relaxed) != 0 {
            // applies nothing more; ends with the desk
            while stop.changed().await.is_ok() {}
            return;
        }
        let created = async {
            let s = js.get_stream(&names.stream).await.map_err(|e| e.to_string())?;
            let c = s
                .create_consumer(jetstream::consumer::push::OrderedConfig {
                    deliver_subject: js.client().new_inbox(),
                    deliver_policy: jetstream::consumer::DeliverPolicy::ByStartSequence {
                        start_sequence: delivered + 1,
                    },
                    ..Default::default()
                })
                .await
                .map_err(|e| e.to_string())?;
            c.messages().await.map_err(|e| e.to_string())
        }
        .await;
        let Ok(mut messages) = created else {
            tokio::select! {
                _ = tokio::time::sleep(RETRY * 4) => continue,
                r = stop.changed() => if r.is_err() { return } else { continue },
            }
        };
        let mut quiet = 0u32;
        loop {
            let first = tokio::select! {
                m = messages.next() => m,
                r = stop.changed() => if r.is_err() { return } else { continue },
                _ = tokio::time::sleep(CONSUMER_QUIET) => {
                    // Quiet: if the stream went on without us (our consumer died with its server
                    // and the client's own recreation is backing off, or it sits on a replica
                    // left behind), start over from here. A replica left behind by a NATS
                    // desync may be all that answers for the stream (`chain.rs`): a consumer
                    // quiet for long is replaced whatever the answer.
                    quiet += 1;
                    match highest_last_seq(&js.client(), &names).await {
                        Some(last) if last > delivered => break,
                        _ if quiet >= QUIET_CHECKS_TO_REPLACE => break,
                        _ => continue,
                    }
                }
            };
            quiet = 0;
            let Some(Ok(first)) = first else { break };
            let mut batch = Vec::new();
            let mut next = Some(first);
            let mut gap = false;
            while let Some(m) = next.take() {
                let Ok(info) = m.info() else { continue };
                let seq = info.stream_sequence;
                if stats.diverged_at.load(Ordering::Relaxed) != 0 {
                    // the writer's check found this node's history diverged (`base_checker`)
                    gap = true;
                    break;
                } else if seq <= delivered {
                    // A recreated consumer's overlap.
                } else if seq != delivered + 1 {
                    gap = true;
                    break;
                } else if let Err(d) = chain.follow(seq, fences(&m)) {
                    // the one line a node writes on its own: an operator has to restart it
                    eprintln!(
                        "tidewire {}: {d}; this node stops applying the order stream \
                         (restart it to rebuild from the stream)",
                        names.stream
                    );
                    stats.diverged_at.store(seq, Ordering::Relaxed);
                    gap = true;
                    break;
                } else {
                    delivered = seq;
                    shared.delivered_with_id(seq, m.subject.as_str(), fences(&m).id);
                    batch.push(StreamEvent {
                        seq,
                        events: stream_events(&names, &m),
                    });
                }
                if batch.len() >= APPLY_BATCH {
                    break;
                }
                // More already here: same batch.
                next = match futures_util::FutureExt::now_or_never(messages.next()) {
                    Some(Some(Ok(m))) => Some(m),
                    _ => None,
                };
            }
            if !batch.is_empty() {
                to_engine(OrderCmd::Cluster(ClusterCmd::Stream(batch)));
            }
            if gap {
                break;
            }
        }
    }
}

/// The events of a stream message (none in the genesis marker or in a message this version
/// cannot read).
fn stream_events(names: &Names, m: &async_nats::Message) -> Vec<batch::Framed> {
    if !m.subject.as_str().starts_with(&names.events) {
        return Vec::new();
    }
    let count = m
        .headers
        .as_ref()
        .and_then(|h| h.get(batch::HEADER))
        .map(|v| v.as_str().parse::<usize>().ok());
    match count {
        // written one event per message
        None => vec![batch::Framed {
            tag: Vec::new(),
            body: m.payload.to_vec(),
        }],
        Some(Some(n)) => batch::split(&m.payload, n).unwrap_or_default(),
        Some(None) => Vec::new(),
    }
}

/// The fences of a delivered stream message (`chain.rs`).
fn fences(m: &async_nats::Message) -> Fences<'_> {
    let Some(h) = m.headers.as_ref() else {
        return Fences::default();
    };
    let get = |name: &str| h.get(name).map(|v| v.as_str());
    Fences {
        id: get(chain::MSG_ID),
        expected_last_id: get(chain::EXPECTED_LAST_MSG_ID),
        expected_last_seq: get(chain::EXPECTED_LAST_SEQ).map(|v| v.parse().ok()),
        follows: get(chain::FOLLOWS),
    }
}

/// How long the stream info answers of other servers are awaited after the first one.
const OTHER_ANSWERS: Duration = Duration::from_millis(200);

/// How long the message-get answers of other servers are awaited after the first one, before a
/// term begins (`base_checker`): shorter than `OTHER_ANSWERS`, as it delays every promotion.
const OTHER_BASE_ANSWERS: Duration = Duration::from_millis(100);

/// Every answer to a JetStream API request on `subject` (a server left with an old replica after
/// a lost quorum can answer for the stream's leader too, and first, `chain.rs`): answers are taken
/// until `others` after the first one, all within `CHECK`. `None`: the request could not be sent.
async fn all_answers(
    client: &async_nats::Client,
    subject: String,
    body: Bytes,
    others: Duration,
) -> Option<Vec<Bytes>> {
    let inbox = client.new_inbox();
    let mut answers = client.subscribe(inbox.clone()).await.ok()?;
    client.publish_with_reply(subject, inbox, body).await.ok()?;
    let mut bodies = Vec::new();
    let mut until = tokio::time::Instant::now() + CHECK;
    while let Ok(Some(m)) = tokio::time::timeout_at(until, answers.next()).await {
        if bodies.is_empty() {
            until = until.min(tokio::time::Instant::now() + others);
        }
        bodies.push(m.payload);
    }
    let _ = answers.unsubscribe().await;
    Some(bodies)
}

/// The order stream's last seq as the highest any server answering for its leader reports, within
/// `CHECK` (`chain.rs`: a server left with an old replica can answer too, and first). `None`: no
/// answer.
async fn highest_last_seq(client: &async_nats::Client, names: &Names) -> Option<u64> {
    let subject = format!("$JS.API.STREAM.INFO.{}", names.stream);
    let bodies = all_answers(client, subject, Bytes::new(), OTHER_ANSWERS).await?;
    chain::highest_last_seq(bodies.iter().map(|b| &b[..]))
}

/// Checks each base the desk would begin a term on (`DeskLink::check_base`): the stream's message
/// there, as every server answering for the stream's leader holds it, against the one the
/// consumer delivered there (`chain::check_base`). A base the consumer is no longer at (it
/// delivered more meanwhile) is answered unknown: the desk catches up and asks again.
async fn base_checker(
    client: async_nats::Client,
    names: Names,
    mut rx: mpsc::UnboundedReceiver<u64>,
    delivered: Arc<Delivered>,
    to_engine: ToEngine,
    stats: Arc<ClusterOrderStats>,
) {
    while let Some(base) = rx.recv().await {
        let verdict = match delivered.id_at(base) {
            None => Base::Unknown,
            Some(applied) => {
                let subject = format!("$JS.API.STREAM.MSG.GET.{}", names.stream);
                let body = Bytes::from(format!(r#"{{"seq":{base}}}"#));
                let answers: Vec<chain::HeldAt> = all_answers(&client, subject, body, OTHER_BASE_ANSWERS)
                    .await
                    .unwrap_or_default()
                    .iter()
                    .map(|b| chain::held_at(b))
                    .collect();
                let held = answers.iter().any(|a| matches!(a, chain::HeldAt::Message { .. }));
                // the last seq matters only when no server holds a message there
                let last = if held {
                    None
                } else {
                    highest_last_seq(&client, &names).await
                };
                chain::check_base(base, applied.as_deref(), &answers, last)
            }
        };
        if let Base::Diverged(d) = &verdict {
            if stats
                .diverged_at
                .compare_exchange(0, base.max(1), Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
            {
                // the one line a node writes on its own: an operator has to know
                eprintln!(
                    "tidewire {}: {d}; this node stops applying the order stream and does not lead \
                     (restart it to rebuild from the stream)",
                    names.stream
                );
            }
        }
        let follows = verdict == Base::Follows;
        to_engine(OrderCmd::Cluster(ClusterCmd::BaseChecked { base, follows }));
    }
}

/// The order stream's last seq (`None`: not answered).
async fn stream_last_seq(js: &jetstream::Context, names: &Names) -> Option<u64> {
    let s = js.get_stream(&names.stream).await.ok()?;
    s.get_info().await.ok().map(|i| i.state.last_sequence)
}

/// The lease: refresh it while held, else try to take it; while held (confirmed) by a desk that is
/// not deciding yet, tell it the stream's last seq to catch up to (`Promote`). A failed refresh is
/// retried (`keep`, `lease.rs`); once the lease is lost the desk is told `LeaseLost`.
#[allow(clippy::too_many_arguments)]
async fn election(
    js: jetstream::Context,
    bucket: Bucket,
    names: Names,
    node: String,
    to_engine: ToEngine,
    mut active: watch::Receiver<bool>,
    reach: Arc<TermReach>,
    stats: Arc<ClusterOrderStats>,
) {
    let mut held: Option<Lease> = None;
    let mut tick = tokio::time::interval(LEASE / 4);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let value = Bytes::from(node.clone());
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            r = active.changed() => if r.is_err() { return } else { continue },
        }
        if stats.diverged_at.load(Ordering::Relaxed) != 0 {
            // a node whose order book follows another history neither leads nor keeps the lease
            if held.take().is_some() {
                to_engine(OrderCmd::Cluster(ClusterCmd::LeaseLost));
            }
            continue;
        }
        held = match held {
            Some(mut l) => match keep(
                &js,
                &bucket,
                &names,
                &value,
                &mut l,
                &reach,
                &active,
                &to_engine,
                &stats.lease_provisional,
            )
            .await
            {
                lease::Next::Lost => {
                    to_engine(OrderCmd::Cluster(ClusterCmd::LeaseLost));
                    None
                }
                _ => Some(l),
            },
            None => match bucket.read(LEASE / 4).await {
                Some(Key::Absent { last_seq }) => {
                    let sent = Instant::now();
                    match bucket.write(&value, last_seq, true, LEASE / 4).await {
                        Written::Stored(rev) => Some(Lease::new(rev, sent)),
                        Written::Moved | Written::Unanswered => None,
                    }
                }
                _ => None,
            },
        };
        // only a confirmed lease promotes
        let confirmed = held.is_some_and(|l| l.remaining(Instant::now()).is_some());
        if !confirmed || *active.borrow() {
            continue;
        }
        let Some(last) = stream_last_seq(&js, &names).await else {
            continue;
        };
        if last == 0 {
            // Every publish is fenced on a last seq >= 1: store the genesis message first (once
            // ever: a second one finds its subject taken).
            let msg = PublishMessage::build()
                .payload(Bytes::from_static(b"tidewire orders"))
                .expected_last_subject_sequence(0);
            if let Ok(ack) = js.send_publish(names.genesis.clone(), msg).await {
                let _ = ack.await;
            }
            continue;
        }
        to_engine(OrderCmd::Cluster(ClusterCmd::Promote { last_seq: last }));
    }
}

/// Keeps the held lease (`lease.rs`): refreshes it, and while the bucket does not answer, retries
/// every `RETRY`, each try bounded by the confirmed time left (`CHECK` once only provisional);
/// past the confirmed lease each retry also checks the order stream, and a desk that stepped down
/// meanwhile is promoted again when the check allows. Returns `Held` once refreshed (or created
/// again), `Lost` when the lease is lost.
#[allow(clippy::too_many_arguments)]
async fn keep(
    js: &jetstream::Context,
    bucket: &Bucket,
    names: &Names,
    value: &Bytes,
    l: &mut Lease,
    reach: &TermReach,
    active: &watch::Receiver<bool>,
    to_engine: &ToEngine,
    provisional: &AtomicBool,
) -> lease::Next {
    // what the next write expects: the stream's last seq, and whether the key must be absent
    let mut expect = (l.revision, false);
    loop {
        let sent = Instant::now();
        let bound = l.remaining(sent).unwrap_or(CHECK);
        let answer = match bucket.write(value, expect.0, expect.1, bound).await {
            Written::Stored(revision) => lease::Answer::Stored {
                revision,
                sent_at: sent,
            },
            // the bucket answered: the key moved
            Written::Moved => match bucket.read(bound).await {
                Some(Key::Held { revision, holder }) if holder == *value => lease::Answer::Ours { revision },
                Some(Key::Held { .. }) => lease::Answer::Theirs,
                Some(Key::Absent { last_seq }) => {
                    expect = (last_seq, true);
                    lease::Answer::Absent
                }
                None => lease::Answer::Unanswered,
            },
            // no responders (the bucket has no leader), timed out
            Written::Unanswered => lease::Answer::Unanswered,
        };
        let mut next = l.answer(Instant::now(), answer);
        if next == lease::Next::Check {
            let (stream, last) = check_stream(js, names, reach).await;
            next = l.checked(Instant::now(), *active.borrow(), stream);
            provisional.store(next != lease::Next::Lost, Ordering::Relaxed);
            if let (lease::Next::Promote, Some(last_seq)) = (next, last) {
                to_engine(OrderCmd::Cluster(ClusterCmd::Promote { last_seq }));
            }
        }
        match next {
            lease::Next::Held | lease::Next::Lost => {
                provisional.store(false, Ordering::Relaxed);
                return next;
            }
            lease::Next::Recreate => {}
            lease::Next::Retry | lease::Next::Check | lease::Next::Promote => expect = (l.revision, false),
        }
        tokio::time::sleep(RETRY).await;
        if active.has_changed().is_err() {
            provisional.store(false, Ordering::Relaxed);
            return lease::Next::Lost; // the desk is gone
        }
    }
}

/// What a write of the lease key came to.
enum Written {
    /// Stored at this revision (the bucket stream's seq).
    Stored(u64),
    /// Refused: the stream's last seq is not the one expected (or the key is not absent).
    Moved,
    /// No answer (no responders: the bucket has no leader; a timeout).
    Unanswered,
}

/// The lease key as the bucket stream's leader says.
enum Key {
    /// Held at `revision` by the node named `holder`.
    Held { revision: u64, holder: Bytes },
    /// Gone; the bucket stream's last seq is `last_seq` (a create expects it).
    Absent { last_seq: u64 },
}

/// The lease bucket (`<name>_desk`, stream `KV_<name>_desk`) written as a plain stream: every
/// write expects the stream's last seq (`Nats-Expected-Last-Sequence`), which the stream checks
/// in proposal order. The KV API's `Nats-Expected-Last-Subject-Sequence` alone is checked by
/// nats-server 2.9 against the applied state, so two creates in flight together could both
/// succeed; the key is the bucket's only subject, so its revision is the stream's last seq.
struct Bucket {
    js: jetstream::Context,
    stream: String,
    subject: String,
}

impl Bucket {
    fn new(js: &jetstream::Context, names: &Names) -> Bucket {
        Bucket {
            js: js.clone(),
            stream: format!("KV_{}", names.bucket),
            subject: format!("$KV.{}.leader", names.bucket),
        }
    }

    /// Writes `value` expecting the stream's last seq `last_seq` (`absent`: and no key), within
    /// `bound`.
    async fn write(&self, value: &Bytes, last_seq: u64, absent: bool, bound: Duration) -> Written {
        let mut msg = PublishMessage::build()
            .payload(value.clone())
            .expected_last_sequence(last_seq);
        if absent {
            msg = msg.expected_last_subject_sequence(0);
        }
        let sent = tokio::time::timeout(bound, async {
            let ack = self.js.send_publish(self.subject.clone(), msg).await?;
            std::future::IntoFuture::into_future(ack).await
        })
        .await;
        match sent {
            Ok(Ok(ack)) => Written::Stored(ack.sequence),
            Ok(Err(e)) if e.kind() == PublishErrorKind::WrongLastSequence => Written::Moved,
            Ok(Err(_)) | Err(_) => Written::Unanswered,
        }
    }

    /// Reads the key from the stream's leader (not a replica that may lag), within `bound`
    /// (`None`: no answer).
    async fn read(&self, bound: Duration) -> Option<Key> {
        tokio::time::timeout(bound, async {
            let s = self.js.get_stream(&self.stream).await.ok()?;
            let state = &s.cached_info().state;
            if state.messages == 0 {
                return Some(Key::Absent {
                    last_seq: state.last_sequence,
                });
            }
            let m = s.get_last_raw_message_by_subject(&self.subject).await.ok()?;
            Some(Key::Held {
                revision: m.sequence,
                holder: m.payload,
            })
        })
        .await
        .ok()
        .flatten()
    }
}

/// A replica the stream's leader heard from within this long counts towards the quorum of the
/// provisional leader's check. nats-server 2.9 sends a raft heartbeat every second; it keeps a
/// replica it no longer hears `current` for 10 s, and a replica it does hear can show `current`
/// false for a moment while it trails the leader's applied index under load: `current` would pass
/// a leader cut off from its replicas for 10 s and fail a healthy one now and then.
const REPLICA_SEEN: Duration = Duration::from_secs(2);

/// Whether a stream of `replicas` replicas whose leader reports `peers` (its other replicas) has
/// a quorum it is in touch with: the leader plus the peers not `offline` that it heard from within
/// `REPLICA_SEEN`. A stream without cluster info (one server) has its quorum.
fn quorum_in_touch(replicas: usize, peers: Option<&[stream::PeerInfo]>) -> bool {
    let Some(peers) = peers else { return true };
    let fresh = peers.iter().filter(|p| !p.offline && p.active < REPLICA_SEEN).count();
    1 + fresh > replicas / 2
}

/// Checks the order stream for a provisional leader (within `CHECK`): `Ours` while its last seq
/// is within what this node's term sent, with the last seq when answered. A stream leader out of
/// touch with a quorum of its replicas (`quorum_in_touch`) answers with what it held when it lost
/// them: that counts as no answer.
async fn check_stream(js: &jetstream::Context, names: &Names, reach: &TermReach) -> (lease::Stream, Option<u64>) {
    let info = tokio::time::timeout(CHECK, async {
        let s = js.get_stream(&names.stream).await.ok()?;
        let info = s.cached_info();
        let peers = info.cluster.as_ref().map(|c| c.replicas.as_slice());
        quorum_in_touch(info.config.num_replicas, peers).then_some(info.state.last_sequence)
    })
    .await;
    match info {
        Ok(Some(last)) if reach.covers(last) => (lease::Stream::Ours, Some(last)),
        Ok(Some(last)) => (lease::Stream::Moved, Some(last)),
        Ok(None) | Err(_) => (lease::Stream::Unanswered, None),
    }
}

/// While this node leads: takes forwarded requests to the engine thread.
async fn server(client: async_nats::Client, subject: String, to_engine: ToEngine, mut active: watch::Receiver<bool>) {
    loop {
        while !*active.borrow_and_update() {
            if active.changed().await.is_err() {
                return;
            }
        }
        // A queue group: should a provisional leader and the next one both serve for a moment
        // (`lease.rs`), each request still reaches one of them and is decided once.
        let Ok(mut sub) = client.queue_subscribe(subject.clone(), "leader".to_owned()).await else {
            tokio::time::sleep(RETRY).await;
            continue;
        };
        loop {
            tokio::select! {
                m = sub.next() => {
                    let Some(m) = m else { break };
                    if !*active.borrow() {
                        continue; // stepped down: the origin retries with the next leader
                    }
                    let Some(reply) = m.reply else { continue };
                    let reply: Arc<str> = reply.as_str().into();
                    match decode_request(&m.payload) {
                        Some((user, req_id, tag, request)) => to_engine(OrderCmd::Cluster(ClusterCmd::Remote {
                            reply,
                            user,
                            req_id,
                            tag: (!tag.is_empty()).then(|| tag.into()),
                            request,
                            at: Instant::now(),
                        })),
                        None => {
                            let _ = client.publish(reply.to_string(), Bytes::from(unavailable(0, "orders are unavailable: the order leader could not read a forwarded request (nodes of different versions?)"))).await;
                        }
                    }
                }
                r = active.changed() => {
                    if r.is_err() { return }
                    if !*active.borrow() { break }
                }
            }
        }
        let _ = sub.unsubscribe().await;
    }
}

/// Sends the leader's answers to forwarded requests, in the order the desk made them.
async fn replies(client: async_nats::Client, mut rx: mpsc::UnboundedReceiver<(Arc<str>, Vec<u8>)>) {
    while let Some((to, msg)) = rx.recv().await {
        let _ = client.publish(to.to_string(), Bytes::from(msg)).await;
    }
}

/// A forwarded request waiting for its answer.
struct Waiting {
    sid: u32,
    gateway: Option<u64>,
    req_id: u32,
    payload: Bytes,
    deadline: Instant,
    /// Sent again at this time (nobody led when it was sent).
    retry_at: Option<Instant>,
    /// Its latest send.
    sent: Instant,
}

/// Sends this node's forwarded requests in order and delivers each answer to its session; a
/// request nobody serves (no leader right now) is sent again until `timeout`, then answered
/// `error` UNAVAILABLE.
async fn forwarder(
    client: async_nats::Client,
    names: Names,
    timeout: Duration,
    mut rx: mpsc::UnboundedReceiver<Forward>,
    to_engine: ToEngine,
    stats: Arc<ClusterOrderStats>,
) {
    let mut sub = loop {
        match client.subscribe(format!("{}.*", names.replies)).await {
            Ok(s) => break s,
            Err(_) => tokio::time::sleep(RETRY).await,
        }
    };
    let mut waiting: HashMap<u64, Waiting> = HashMap::new();
    let mut next_id = 0u64;
    let mut tick = tokio::time::interval(RETRY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let deliver = |sid: u32, gateway: Option<u64>, msg: Vec<u8>, at: Instant| {
        to_engine(OrderCmd::Cluster(ClusterCmd::Deliver { sid, gateway, msg, at }))
    };
    loop {
        tokio::select! {
            f = rx.recv() => {
                let Some(f) = f else { return };
                next_id += 1;
                let payload = Bytes::from(f.payload);
                let reply = format!("{}.{next_id}", names.replies);
                let _ = client.publish_with_reply(names.requests.clone(), reply, payload.clone()).await;
                let sent = Instant::now();
                stats.stages.record(Stage::ForwardSend, sent.saturating_duration_since(f.at));
                waiting.insert(next_id, Waiting {
                    sid: f.sid,
                    gateway: f.gateway,
                    req_id: f.req_id,
                    payload,
                    deadline: sent + timeout,
                    retry_at: None,
                    sent,
                });
            }
            m = sub.next() => {
                let Some(m) = m else { return };
                let Some(id) = m.subject.as_str().rsplit('.').next().and_then(|t| t.parse::<u64>().ok()) else { continue };
                if m.status == Some(async_nats::StatusCode::NO_RESPONDERS) {
                    if let Some(w) = waiting.get_mut(&id) {
                        w.retry_at = Some(Instant::now() + RETRY);
                    }
                    continue;
                }
                if let Some(w) = waiting.remove(&id) {
                    let received = Instant::now();
                    stats.stages.record(Stage::ForwardRoundTrip, received.saturating_duration_since(w.sent));
                    deliver(w.sid, w.gateway, m.payload.to_vec(), received);
                }
            }
            _ = tick.tick() => {
                let now = Instant::now();
                let mut expired = Vec::new();
                for (id, w) in waiting.iter_mut() {
                    if now >= w.deadline {
                        expired.push(*id);
                    } else if w.retry_at.is_some_and(|t| now >= t) {
                        w.retry_at = None;
                        let reply = format!("{}.{id}", names.replies);
                        let _ = client.publish_with_reply(names.requests.clone(), reply, w.payload.clone()).await;
                        w.sent = Instant::now();
                    }
                }
                for id in expired {
                    if let Some(w) = waiting.remove(&id) {
                        let msg = if w.retry_at.is_some() {
                            format!("orders are unavailable: no order leader answered within {} ms", timeout.as_millis())
                        } else {
                            format!("orders are unavailable: the order leader did not answer within {} ms (the request may still be carried out: check the blotter)", timeout.as_millis())
                        };
                        deliver(w.sid, w.gateway, unavailable(w.req_id, &msg), now);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forwarded_requests_round_trip() {
        let reqs = [
            RemoteRequest::Submit(
                OrderInput {
                    client_order_id: "c1".into(),
                    instrument: "/FX/EURUSD".into(),
                    side: Side::Sell,
                    quantity: 5.0,
                    price: Some(1.25),
                    time_in_force: TimeInForce::Gtc,
                },
                None,
            ),
            RemoteRequest::Submit(
                OrderInput {
                    client_order_id: "c4".into(),
                    instrument: "/FX/EURUSD".into(),
                    side: Side::Buy,
                    quantity: 1.0,
                    price: None,
                    time_in_force: TimeInForce::Day,
                },
                Some("b/FIX.4.4-TW-CLIENT".into()),
            ),
            RemoteRequest::Cancel("c2".into()),
            RemoteRequest::Amend {
                client_order_id: "c3".into(),
                quantity: None,
                price: Some(2.0),
            },
        ];
        for r in reqs {
            let bytes = encode_request("alice", 7, "b:12", &r);
            let (user, req_id, tag, back) = decode_request(&bytes).expect("decodes");
            assert_eq!((user.as_str(), req_id, tag.as_str()), ("alice", 7, "b:12"));
            assert_eq!(back, r);
        }
        assert!(decode_request(b"{}").is_none());
    }

    #[test]
    fn a_forwarded_submit_carries_its_origin_and_one_without_it_still_decodes() {
        // as a node that does not send origins forwards a gateway submit
        let old = br#"{"user":"alice","req_id":0,"kind":"submit","client_order_id":"g-1","instrument":"/FX/EURUSD","side":"buy","time_in_force":"day","quantity":10.0,"price":1.0,"tag":"b:7"}"#;
        let (_, _, tag, req) = decode_request(old).expect("decodes");
        assert_eq!(tag, "b:7");
        assert!(
            matches!(req, RemoteRequest::Submit(ref o, None) if o.client_order_id == "g-1"),
            "{req:?}"
        );
        let order = OrderInput {
            client_order_id: "g-1".into(),
            instrument: "/FX/EURUSD".into(),
            side: Side::Buy,
            quantity: 10.0,
            price: Some(1.0),
            time_in_force: TimeInForce::Day,
        };
        let with = RemoteRequest::Submit(order.clone(), Some("b/FIX.4.4-TW-CLIENT44".into()));
        let bytes = encode_request("alice", 0, "b:7", &with);
        let new = br#"{"user":"alice","req_id":0,"kind":"submit","client_order_id":"g-1","instrument":"/FX/EURUSD","side":"buy","time_in_force":"day","quantity":10.0,"price":1.0,"tag":"b:7","origin":"b/FIX.4.4-TW-CLIENT44"}"#;
        assert_eq!(String::from_utf8_lossy(&bytes), String::from_utf8_lossy(new));
        assert_eq!(decode_request(new).map(|d| d.3), Some(with));
        // a session's submit sends no origin field (what older leaders read)
        let plain = encode_request("alice", 3, "", &RemoteRequest::Submit(order, None));
        assert!(!String::from_utf8_lossy(&plain).contains("origin"));
    }

    #[test]
    fn gateway_answers_are_read_back_from_the_leaders_messages() {
        assert_eq!(
            gateway_answer(&unavailable(0, "no quorum")),
            GatewayAnswer::Unavailable("no quorum".into())
        );
        let mut ack = Vec::new();
        crate::wire::order::order_ack(
            &mut ack,
            0,
            crate::wire::order::OrderAction::Submit,
            "c1",
            3,
            9,
            "acknowledged",
        );
        assert_eq!(gateway_answer(&ack), GatewayAnswer::Durable);
        for field in RejectField::ALL {
            for rule in RejectRule::ALL {
                let mut out = Vec::new();
                crate::wire::order::order_reject(
                    &mut out,
                    0,
                    crate::wire::order::OrderAction::Submit,
                    "c1",
                    field.as_str(),
                    rule.as_str(),
                    "why",
                );
                let want = OrderReject {
                    field,
                    rule,
                    message: "why".into(),
                };
                assert_eq!(gateway_answer(&out), GatewayAnswer::Refused(want));
            }
        }
        assert!(matches!(gateway_answer(b"not json"), GatewayAnswer::Unavailable(_)));
    }

    #[test]
    fn a_stream_leader_counts_only_replicas_it_heard_from_lately() {
        let peer = |current: bool, offline: bool, active_ms: u64| stream::PeerInfo {
            name: "n".into(),
            current,
            active: Duration::from_millis(active_ms),
            offline,
            lag: None,
        };
        let healthy = [peer(true, false, 300), peer(true, false, 900)];
        assert!(quorum_in_touch(3, Some(&healthy)));
        // one replica gone (silent, or offline): the leader and the other are still 2 of 3
        assert!(quorum_in_touch(
            3,
            Some(&[peer(true, false, 300), peer(true, false, 5_000)])
        ));
        assert!(quorum_in_touch(
            3,
            Some(&[peer(true, false, 300), peer(true, true, 300)])
        ));
        // a replica trailing the leader's applied index for a moment still counts
        assert!(quorum_in_touch(
            3,
            Some(&[peer(false, false, 300), peer(true, false, 5_000)])
        ));
        // both cut off: still `current` (nats-server keeps it for 10 s) but silent for too long
        assert!(!quorum_in_touch(
            3,
            Some(&[peer(true, false, 2_500), peer(true, false, 4_000)])
        ));
        assert!(!quorum_in_touch(
            3,
            Some(&[peer(true, true, 100), peer(true, false, 2_000)])
        ));
        assert!(!quorum_in_touch(3, Some(&[])));
        // 5 replicas: the leader and 2 of its 4 peers
        let five = [
            peer(true, false, 10),
            peer(true, false, 10),
            peer(true, false, 9_000),
            peer(true, true, 10),
        ];
        assert!(quorum_in_touch(5, Some(&five)));
        assert!(!quorum_in_touch(5, Some(&five[1..])));
        // one server: no cluster info
        assert!(quorum_in_touch(1, None));
    }

    #[test]
    fn stream_info_replicas_read_from_a_2_9_server() {
        // the shape nats-server 2.9.10 reports (`active` in ns); a replica trailing by one entry
        // shows `current` false under load
        let json = r#"{"name":"tidewire-local","leader":"n1","replicas":[
            {"name":"n0","current":true,"active":145513717,"lag":1,"peer":"fjFyEjc1"},
            {"name":"n2","current":false,"active":120000000,"lag":1,"peer":"44jzkV9D"}]}"#;
        let c: stream::ClusterInfo = serde_json::from_str(json).expect("cluster info");
        assert!(quorum_in_touch(3, Some(&c.replicas)));
        // the same leader cut off from both for 3.5 s: both still `current`
        let json = r#"{"name":"tidewire-local","leader":"n1","replicas":[
            {"name":"n0","current":true,"active":3500000000,"lag":4,"peer":"fjFyEjc1"},
            {"name":"n2","current":true,"active":3400000000,"peer":"44jzkV9D"}]}"#;
        let c: stream::ClusterInfo = serde_json::from_str(json).expect("cluster info");
        assert!(!quorum_in_touch(3, Some(&c.replicas)));
    }

    #[test]
    fn only_publishes_nobody_answered_are_sent_again_within_the_timeout() {
        let timeout = Duration::from_secs(2);
        let early = Duration::from_millis(300);
        assert!(retry_publish(PublishErrorKind::StreamNotFound, early, timeout));
        // time up (the next try would start after the deadline)
        assert!(!retry_publish(
            PublishErrorKind::StreamNotFound,
            timeout - RETRY,
            timeout
        ));
        assert!(!retry_publish(PublishErrorKind::StreamNotFound, timeout, timeout));
        // final answers: fenced (another leader wrote), timed out, refused
        for kind in [
            PublishErrorKind::WrongLastSequence,
            PublishErrorKind::WrongLastMessageId,
            PublishErrorKind::TimedOut,
            PublishErrorKind::Other,
        ] {
            assert!(!retry_publish(kind, early, timeout), "{kind:?}");
        }
    }
}
