//! The FIX order gateway: NewOrderSingle (D), OrderCancelRequest (F) and
//! OrderCancelReplaceRequest (G) of a FIX session go into the order desk as requests of the
//! session's Tidewire user; the desk's outcomes come back as ExecutionReports (8) and
//! OrderCancelRejects (9).
//!
//! - In: an [`OrderPort`] (submit / cancel / amend for a user, tagged with a request id; the
//!   running engine implements it) after the server's [`PreTradeCheck`] (role, instrument
//!   entitlement, order rate: the checks WebSocket orders get before the desk). Requests are
//!   queued by the connection threads and taken in batches by the intake thread (`intake.rs`),
//!   which checks a batch's new orders in one call.
//! - Out: the desk reports to a `GatewaySink` on the engine thread; the sink hands each report to
//!   the gateway's thread, which builds the messages and sends them on the order's session. A
//!   session that is not logged on stores them as sent: its next Logon's resend delivers them.
//! - A report is built and stored when the desk appends the event to its journal (the desk
//!   announces it with the entry's seq) and sent once the journal has made that seq durable as
//!   well as the session store the report (`SessionHandle::send_gated`): the two fdatasyncs run
//!   at the same time, and nothing leaves before both. A request refused before or by the desk is
//!   answered at once (ExecutionReport Rejected, or OrderCancelReject).
//! - When the journal fails, the desk says up to which seq it is durable: the stored reports of
//!   later seqs are voided (a resend gap-fills them) and never sent, the output behind them goes,
//!   and the requests they answered are refused (`Gateway::journal_failed`).
//! - A new order is journaled with its session's name (the accept's origin; cluster mode: in the
//!   order stream, qualified by the node's name, also when the request is forwarded to the
//!   leader), so that a start after a crash can report a New the store lost; a stored report the
//!   journal lost is voided (`state.rs`: `undurable`, `reconcile`).
//! - ClOrdID: a D's ClOrdID is the desk's client order id. F and G name the order by
//!   OrigClOrdID; a G's (or F's) new ClOrdID becomes the order's current one once the desk made
//!   the change durable, and every ClOrdID of the chain keeps naming the order. The chain is
//!   rebuilt at start from the ExecutionReports stored as sent (`state.rs`), so it survives
//!   restarts with the session's sequence numbers.
//! - Which orders are the session's: those it entered (and orders it cancelled or replaced).
//!   Orders the same user enters on the web are not reported on FIX.

mod engine_port;
mod intake;
pub mod report;
pub mod request;
pub mod settings;
mod state;

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use intake::{Intake, Req};

use crate::fix::acceptor::{
    Acceptor, AcceptorConfig, Application, NewOrderSingle, OrderCancelReplaceRequest, OrderCancelRequest,
    SessionHandle, SessionId, SessionStatus,
};
use crate::fix::session::{BusinessReject, Clock, Outbox, SystemClock};
use crate::order_book::{Order, OrderEvent, OrderReject};
use crate::order_desk::{Durable, GatewayOp, GatewaySink, OrderInput};
use report::{CancelReject, ExecKind, Version};
use request::{Reason, Refusal};
use state::{Kind, Pending, State};

/// Where the gateway's requests go: the order desk (the running engine implements it).
pub trait OrderPort: Send + Sync {
    /// Sends `op` for `user` as gateway request `request`; its outcome arrives at the attached
    /// sink. `Err` (the reason) when the desk cannot take requests (orders disabled, shut down).
    fn request(&self, user: &str, request: u64, op: GatewayOp) -> Result<(), String>;
    /// Attaches `sink` for the orders of `users` (see `GatewaySink`).
    fn attach(&self, users: Vec<String>, sink: Arc<dyn GatewaySink>) -> Result<(), String>;
    /// Cluster mode: this node's name (unique in the cluster, the same across its restarts). It
    /// qualifies the origin journaled with a session's orders, because every node applies the
    /// order stream and sessions of one name may be configured on several nodes. `None` (the
    /// default): one process.
    fn node(&self) -> Option<String> {
        None
    }
}

/// The server's checks before an order reaches the desk: the user's role, its entitlement to
/// order the instrument, its order rate (the same checks as for WebSocket orders).
pub trait PreTradeCheck: Send + Sync {
    /// `Err(text)` when `user` may not order `instrument` now (the text says why).
    fn check(&self, user: &str, instrument: &str) -> Result<(), String>;

    /// The verdicts on several orders `(user, instrument)`, in order (each as `check` would
    /// answer it, an order rate counting the earlier ones). The gateway checks a batch of new
    /// orders with one call; implement it when one call is cheaper than several.
    fn check_many(&self, orders: &[(&str, &str)]) -> Vec<Result<(), String>> {
        orders
            .iter()
            .map(|(user, instrument)| self.check(user, instrument))
            .collect()
    }
}

/// The gateway's settings beyond the acceptor's.
#[derive(Debug, Clone)]
pub struct GatewayConfig {
    /// The acceptor (port, sessions and their users, store directory, timers).
    pub acceptor: AcceptorConfig,
    /// Per acceptor session (same order): prefix that turns a Symbol without a leading `/`
    /// into an instrument subject (`/FX/` + `EURUSD`); missing or empty: symbols must be subjects.
    pub symbol_prefixes: Vec<String>,
    /// Per acceptor session (same order): true makes the session a benchmark echo (each
    /// NewOrderSingle is sent back as a NewOrderSingle with the same body; nothing reaches the
    /// desk, so no order is taken). Missing: false.
    pub bench_echo: Vec<bool>,
    /// How long the start waits for the desk to attach the gateway. @default 10 s
    pub attach_timeout: Duration,
}

impl GatewayConfig {
    /// Defaults around `acceptor`: no symbol prefixes.
    pub fn new(acceptor: AcceptorConfig) -> GatewayConfig {
        GatewayConfig {
            acceptor,
            symbol_prefixes: Vec::new(),
            bench_echo: Vec::new(),
            attach_timeout: Duration::from_secs(10),
        }
    }
}

/// What the desk reported, on its way to the gateway's thread.
enum Report {
    Attached(Vec<Order>),
    Refused(u64, OrderReject),
    Unavailable(u64, String),
    /// An event appended to the journal: (event, order after it, request, journal seq). Boxed:
    /// an order is large next to the other reports.
    Appended(Box<(OrderEvent, Order, Option<u64>, u64)>),
    /// The journal is durable up to this seq.
    Durable(u64),
    /// The journal failed: durable up to this seq, never past it (the error's message).
    Failed(u64, String),
    /// Everything before it is handled: send what is built, then end the thread.
    Stop,
}

/// The desk's sink: hands reports to the gateway's thread (never blocks the engine thread).
struct Sink(Sender<Report>);

impl GatewaySink for Sink {
    fn attached(&self, orders: &[&Order]) {
        let _ = self
            .0
            .send(Report::Attached(orders.iter().map(|o| (*o).clone()).collect()));
    }
    fn refused(&self, request: u64, reject: &OrderReject) {
        let _ = self.0.send(Report::Refused(request, reject.clone()));
    }
    fn unavailable(&self, request: u64, message: &str) {
        let _ = self.0.send(Report::Unavailable(request, message.to_owned()));
    }
    fn appended(&self, u: &Durable<'_>) {
        let _ = self.0.send(Report::Appended(Box::new((
            u.event.clone(),
            u.order.clone(),
            u.request,
            u.seq,
        ))));
    }
    fn durable(&self, u: &Durable<'_>) {
        let _ = self.0.send(Report::Durable(u.seq));
    }
    fn failed(&self, durable: u64, message: &str) {
        let _ = self.0.send(Report::Failed(durable, message.to_owned()));
    }
}

/// One configured session as the gateway sees it.
struct SessionInfo {
    user: String,
    /// Journaled with the session's orders: `BeginString-ours-theirs` (as its store directory);
    /// cluster mode `<node>/BeginString-ours-theirs`.
    origin: String,
    prefix: String,
    version: Version,
    /// Benchmark echo: NewOrderSingles come back as NewOrderSingles, no order is taken.
    bench_echo: bool,
}

/// The gateway: the acceptor's [`Application`] and the desk's sink behind it. Built and run by
/// [`FixGateway::start`].
pub struct Gateway {
    sessions: Vec<SessionInfo>,
    index: HashMap<SessionId, usize>,
    port: Arc<dyn OrderPort>,
    check: Option<Arc<dyn PreTradeCheck>>,
    state: Mutex<State>,
    /// True once the desk attached the gateway and its orders are reconciled.
    ready: Mutex<bool>,
    ready_cv: Condvar,
    attach_timeout: Duration,
    next_request: AtomicU64,
    tx: Sender<Report>,
    /// Requests read on the connection threads, to the intake thread.
    intake: Sender<Intake>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("sessions", &self.index.len())
            .finish_non_exhaustive()
    }
}

/// The raw fields of a request, for the answer when it is refused.
struct Raw<'a> {
    cl_ord_id: &'a str,
    symbol: &'a str,
    side: u8,
    quantity: &'a str,
    price: Option<&'a str>,
    ord_type: u8,
    time_in_force: u8,
}

impl<'a> Raw<'a> {
    fn of(m: &crate::fix::codec::Message<'a>) -> Raw<'a> {
        let ch = |tag: u32, default: u8| m.get(tag).and_then(|v| v.first().copied()).unwrap_or(default);
        Raw {
            cl_ord_id: m.get_str(11).unwrap_or_default(),
            symbol: m.get_str(55).unwrap_or_default(),
            side: ch(54, b'1'),
            quantity: m.get_str(38).unwrap_or("0"),
            price: m.get_str(44),
            ord_type: ch(40, b'2'),
            time_in_force: ch(59, b'0'),
        }
    }
}

impl Gateway {
    fn session_of(&self, h: &SessionHandle) -> Result<usize, BusinessReject> {
        self.index.get(h.id()).copied().ok_or(BusinessReject {
            reason: 4,
            ref_tag: None,
            text: "Application not available".into(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// True once the desk attached the gateway. Requests before it (a Logon racing the start)
    /// are refused at once rather than held: the start reads the session stores meanwhile.
    fn is_ready(&self) -> bool {
        *self.ready.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until the desk attached the gateway, at most the attach timeout.
    fn wait_ready(&self) -> bool {
        let deadline = Instant::now() + self.attach_timeout;
        let mut ready = self.ready.lock().unwrap_or_else(|p| p.into_inner());
        while !*ready {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            ready = match self.ready_cv.wait_timeout(ready, deadline - now) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
        true
    }

    fn now_ms(&self) -> i64 {
        self.clock.now().utc_ms
    }

    /// An ExecutionReport Rejected for a new order the desk never accepted.
    fn reject_new(&self, out: &mut Outbox, s: usize, raw: &Raw<'_>, r: &Refusal) {
        let v = self.sessions[s].version;
        let exec_id = format!(
            "R{}-{}",
            self.now_ms(),
            self.next_request.fetch_add(1, Ordering::Relaxed)
        );
        let view = report::OrderView {
            order_id: None,
            cl_ord_id: raw.cl_ord_id,
            orig_cl_ord_id: None,
            exec_id: &exec_id,
            symbol: raw.symbol,
            side: raw.side,
            quantity: raw.quantity,
            price: raw.price,
            ord_type: raw.ord_type,
            time_in_force: raw.time_in_force,
            status: crate::order_book::OrderStatus::New,
            cum_qty: 0,
            leaves_qty: 0,
            avg_px: 0.0,
            transact_ms: self.now_ms(),
            text: Some(&r.text),
        };
        let kind = ExecKind::Rejected {
            reason: r.reason.ord_rej_reason(v),
        };
        report::execution_report(out, v, kind, &view);
    }

    /// An OrderCancelReject for a refused F (`response_to` 1) or G (2).
    #[allow(clippy::too_many_arguments)]
    fn reject_change(
        &self,
        out: &mut Outbox,
        s: usize,
        order: Option<(u64, u8)>,
        cl_ord_id: &str,
        orig: &str,
        response_to: u8,
        r: &Refusal,
    ) {
        let v = self.sessions[s].version;
        report::cancel_reject(
            out,
            &CancelReject {
                order_id: order.map(|o| o.0),
                cl_ord_id,
                orig_cl_ord_id: orig,
                ord_status: order.map_or(b'8', |o| o.1),
                response_to,
                reason: r.reason.cxl_rej_reason(v),
                text: &r.text,
            },
        );
    }

    fn unavailable(e: String) -> Refusal {
        Refusal {
            reason: Reason::Other,
            text: format!("orders are unavailable: {e}"),
        }
    }

    fn not_ready() -> Refusal {
        Refusal {
            reason: Reason::Other,
            text: "orders are unavailable: the gateway is not attached to the order desk".into(),
        }
    }

    /// Registers `pending` and sends `op`; on a send failure the request is forgotten and
    /// handed back with the refusal.
    fn send(&self, pending: Pending, op: GatewayOp) -> Result<(), Box<(Pending, Refusal)>> {
        let id = self.next_request.fetch_add(1, Ordering::Relaxed);
        let user = &self.sessions[pending.session].user;
        self.lock().pending.insert(id, pending);
        if let Err(e) = self.port.request(user, id, op) {
            // a refused send reports nothing: the request is still registered
            if let Some(p) = self.lock().pending.remove(&id) {
                return Err(Box::new((p, Gateway::unavailable(e))));
            }
        }
        Ok(())
    }

    /// The answer to a refused request: ExecutionReport Rejected for a D, OrderCancelReject for
    /// an F or G (`order`: the order it names, with the OrdStatus last reported).
    fn answer(&self, p: &Pending, order: Option<(u64, u8)>, r: &Refusal, out: &mut Outbox) {
        let s = p.session;
        match p.kind {
            Kind::New => self.reject_new(out, s, &p.raw(), r),
            Kind::Cancel | Kind::Replace => {
                let to = if p.kind == Kind::Cancel { b'1' } else { b'2' };
                let orig = p.orig_cl_ord_id.as_deref().unwrap_or_default();
                self.reject_change(out, s, order, &p.cl_ord_id, orig, to, r);
            }
        }
    }
}

impl Application for Gateway {
    fn on_new_order(
        &self,
        order: &NewOrderSingle<'_>,
        reply: &mut Outbox,
        session: &SessionHandle,
    ) -> Result<(), BusinessReject> {
        let s = self.session_of(session)?;
        if self.sessions[s].bench_echo {
            crate::fix::acceptor::echo::echo(order.message(), reply);
            return Ok(());
        }
        let input = request::new_order(order, &self.sessions[s].prefix).map(|o| OrderInput {
            client_order_id: o.cl_ord_id.to_owned(),
            instrument: o.instrument,
            side: o.side,
            quantity: o.quantity,
            price: o.price,
            time_in_force: o.time_in_force,
        });
        let pending = Pending::new(Kind::New, s, &Raw::of(order.message()), None, None);
        self.enqueue(pending, Req::New(input), reply);
        Ok(())
    }

    fn on_cancel(
        &self,
        cancel: &OrderCancelRequest<'_>,
        reply: &mut Outbox,
        session: &SessionHandle,
    ) -> Result<(), BusinessReject> {
        let s = self.session_of(session)?;
        let cl = cancel.cl_ord_id().unwrap_or_default();
        let orig = cancel.orig_cl_ord_id().unwrap_or_default();
        let pending = Pending::new(Kind::Cancel, s, &Raw::of(cancel.message()), Some(orig), None);
        self.enqueue(pending, Req::Cancel(request::check_cl_ord_id(11, cl)), reply);
        Ok(())
    }

    fn on_replace(
        &self,
        replace: &OrderCancelReplaceRequest<'_>,
        reply: &mut Outbox,
        session: &SessionHandle,
    ) -> Result<(), BusinessReject> {
        let s = self.session_of(session)?;
        let cl = replace.cl_ord_id().unwrap_or_default();
        let orig = replace.orig_cl_ord_id().unwrap_or_default();
        let prefix = &self.sessions[s].prefix;
        let terms = request::check_cl_ord_id(11, cl)
            .and_then(|()| request::replace(replace))
            .and_then(|terms| {
                Ok((
                    terms,
                    request::instrument(replace.symbol().unwrap_or_default(), prefix)?,
                ))
            });
        let pending = Pending::new(Kind::Replace, s, &Raw::of(replace.message()), Some(orig), None);
        self.enqueue(pending, Req::Replace(terms), reply);
        Ok(())
    }
}

/// The origin journaled with the orders of session `id`: its name, on node `node` in cluster mode.
fn origin(node: Option<&str>, id: &SessionId) -> String {
    let name = format!("{}-{}-{}", id.begin_string, id.sender_comp_id, id.target_comp_id);
    match node {
        Some(node) => format!("{node}/{name}"),
        None => name,
    }
}

/// The gateway running: the acceptor, the desk attachment and the reporting thread.
pub struct FixGateway {
    gateway: Arc<Gateway>,
    acceptor: Option<Acceptor>,
    handles: Arc<Vec<SessionHandle>>,
    thread: Option<JoinHandle<()>>,
    intake_thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for FixGateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FixGateway")
            .field("acceptor", &self.acceptor)
            .finish_non_exhaustive()
    }
}

impl FixGateway {
    /// Opens the session stores, listens, rebuilds the orders each session reported (from its
    /// stored ExecutionReports), attaches to the desk and reports what happened to those orders
    /// while the gateway was down. Errors: the listener cannot bind (`AddrInUse` for a port in
    /// use), a store cannot be opened, the desk refuses or does not attach in time.
    pub fn start(
        cfg: GatewayConfig,
        port: Arc<dyn OrderPort>,
        check: Option<Arc<dyn PreTradeCheck>>,
    ) -> io::Result<FixGateway> {
        let clock: Arc<dyn Clock> = Arc::new(SystemClock::default());
        let (tx, rx) = crossbeam_channel::unbounded();
        let (intake_tx, intake_rx) = crossbeam_channel::unbounded();
        let mut sessions = Vec::new();
        let mut index = HashMap::new();
        let node = port.node();
        for (i, s) in cfg.acceptor.sessions.iter().enumerate() {
            let c = &s.config;
            let id = SessionId {
                begin_string: c.dictionary.begin_string().to_string(),
                sender_comp_id: c.sender_comp_id.clone(),
                target_comp_id: c.target_comp_id.clone(),
            };
            index.insert(id.clone(), i);
            sessions.push(SessionInfo {
                user: s.user.clone(),
                origin: origin(node.as_deref(), &id),
                prefix: cfg.symbol_prefixes.get(i).cloned().unwrap_or_default(),
                bench_echo: cfg.bench_echo.get(i).copied().unwrap_or(false),
                version: if c.dictionary.is_fix44() {
                    Version::Fix44
                } else {
                    Version::Fix42
                },
            });
        }
        let gateway = Arc::new(Gateway {
            sessions,
            index,
            port: Arc::clone(&port),
            check,
            state: Mutex::new(State::default()),
            ready: Mutex::new(false),
            ready_cv: Condvar::new(),
            attach_timeout: cfg.attach_timeout,
            next_request: AtomicU64::new(1),
            tx: tx.clone(),
            intake: intake_tx,
            clock: Arc::clone(&clock),
        });
        let app: Arc<dyn Application> = Arc::clone(&gateway) as Arc<dyn Application>;
        let acceptor = Acceptor::start(cfg.acceptor, app, clock)?;
        let handles = Arc::new(acceptor.sessions());
        *gateway.lock() = gateway.learn(&handles)?;
        let thread = {
            let gw = Arc::clone(&gateway);
            let hs = Arc::clone(&handles);
            std::thread::Builder::new()
                .name("fix-gateway".into())
                .spawn(move || report_loop(&gw, &hs, &rx))?
        };
        let mut running = FixGateway {
            gateway: Arc::clone(&gateway),
            acceptor: Some(acceptor),
            handles: Arc::clone(&handles),
            thread: Some(thread),
            intake_thread: None,
        };
        let intake = {
            let gw = Arc::clone(&gateway);
            std::thread::Builder::new()
                .name("fix-intake".into())
                .spawn(move || intake::intake_loop(&gw, &handles, &intake_rx))
        };
        match intake {
            Ok(t) => running.intake_thread = Some(t),
            Err(e) => {
                running.shutdown();
                return Err(e);
            }
        }
        let mut users: Vec<String> = gateway.sessions.iter().map(|s| s.user.clone()).collect();
        users.sort();
        users.dedup();
        let attached = port.attach(users, Arc::new(Sink(tx)));
        if let Err(e) = attached {
            running.shutdown();
            return Err(io::Error::other(format!("the order desk refused the FIX gateway: {e}")));
        }
        if !gateway.wait_ready() {
            running.shutdown();
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "the order desk did not attach the FIX gateway within {:?}",
                    cfg.attach_timeout
                ),
            ));
        }
        Ok(running)
    }

    /// The address the acceptor listens on.
    pub fn local_addr(&self) -> Option<std::net::SocketAddr> {
        self.acceptor.as_ref().map(Acceptor::local_addr)
    }

    /// Every configured session's state, sequence numbers and counters, in configuration order.
    pub fn sessions(&self) -> Vec<SessionStatus> {
        self.handles.iter().map(SessionHandle::status).collect()
    }

    /// The session `begin_string` / our CompID / theirs, if configured (for an operator's
    /// `SessionHandle::logout`, which waits for the session's lock).
    pub fn session(&self, begin_string: &str, sender_comp_id: &str, target_comp_id: &str) -> Option<SessionHandle> {
        self.handles
            .iter()
            .find(|h| {
                let id = h.id();
                id.begin_string == begin_string
                    && id.sender_comp_id == sender_comp_id
                    && id.target_comp_id == target_comp_id
            })
            .cloned()
    }

    /// Stops: reports already handed over by the desk are sent (stored), then the acceptor
    /// closes every connection. Stop the engine first so every durable event is handed over.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        let _ = self.gateway.tx.send(Report::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        if let Some(a) = self.acceptor.take() {
            a.stop();
        }
        // after the connections: every request they queued is taken (refused once the desk
        // has stopped) and its answer stored
        let _ = self.gateway.intake.send(Intake::Stop);
        if let Some(t) = self.intake_thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for FixGateway {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// A batch of the gateway's thread: per session the messages built and which of them wait for a
/// journal seq, and the journal's durable seq as the batch learnt it.
struct Batch {
    outs: Vec<Outbox>,
    gates: Vec<Vec<(usize, u64)>>,
    durable: u64,
}

/// The gateway's thread: takes the desk's reports in order, builds the messages per session and
/// sends each session's batch at once (one store sync per batch). A report of an event the
/// journal does not hold yet is stored at once but waits for the journal on the wire
/// (`SessionHandle::send_gated`); the journal's progress is passed on after the batch.
fn report_loop(gw: &Gateway, handles: &[SessionHandle], rx: &Receiver<Report>) {
    const BATCH: usize = 1024;
    let mut b = Batch {
        outs: handles.iter().map(|_| Outbox::new()).collect(),
        gates: handles.iter().map(|_| Vec::new()).collect(),
        durable: 0,
    };
    let mut told = 0;
    let mut stop = false;
    while !stop {
        let mut attached = false;
        let Ok(first) = rx.recv() else { return };
        let mut next = Some(first);
        let mut n = 0;
        while let Some(r) = next {
            if matches!(r, Report::Stop) {
                stop = true;
                break;
            }
            attached |= gw.handle_report(r, &mut b, handles);
            n += 1;
            next = if n < BATCH { rx.try_recv().ok() } else { None };
        }
        for ((h, out), gates) in handles.iter().zip(b.outs.iter_mut()).zip(b.gates.iter_mut()) {
            if !out.is_empty() {
                h.send_gated(out, gates);
                out.clear();
                gates.clear();
            }
        }
        if b.durable > told {
            told = b.durable;
            for h in handles {
                h.journal_durable(told);
            }
        }
        if attached {
            gw.set_ready();
        }
    }
}

impl Gateway {
    /// Builds the messages of `r` into the batch; true for the attach (ready once they are sent).
    fn handle_report(&self, r: Report, b: &mut Batch, handles: &[SessionHandle]) -> bool {
        if let Report::Attached(orders) = &r {
            if self.void_undurable(orders, handles).is_err() {
                // not ready: the start fails (it cannot tell the stores from the journal)
                return false;
            }
        }
        if let Report::Failed(durable, message) = &r {
            self.journal_failed(*durable, message, b, handles);
            return false;
        }
        let outs = &mut b.outs;
        let mut st = self.lock();
        match r {
            Report::Attached(orders) => {
                let origins: Vec<&str> = self.sessions.iter().map(|s| s.origin.as_str()).collect();
                st.reconcile(&orders, &self.sessions_view(), &origins, outs);
                st.stored = Vec::new();
                return true;
            }
            Report::Refused(request, reject) => {
                let r = Refusal {
                    reason: Reason::of_rule(reject.rule),
                    text: reject.message,
                };
                self.answer_refusal(&mut st, request, &r, outs);
            }
            Report::Unavailable(request, message) => {
                let r = Refusal {
                    reason: Reason::Other,
                    text: message,
                };
                self.answer_refusal(&mut st, request, &r, outs);
            }
            Report::Appended(a) => {
                let (event, order, request, seq) = *a;
                let before: Vec<usize> = outs.iter().map(Outbox::len).collect();
                st.durable(&event, &order, request, seq, &self.sessions_view(), outs);
                for ((out, gates), n) in outs.iter().zip(b.gates.iter_mut()).zip(before) {
                    gates.extend((n..out.len()).map(|i| (i, seq)));
                }
            }
            Report::Durable(seq) => {
                b.durable = b.durable.max(seq);
                st.settle(seq);
            }
            Report::Failed(..) | Report::Stop => {}
        }
        false
    }

    /// The journal failed at `durable`: the reports stored for later seqs are voided and never
    /// sent (a resend gap-fills them), the output behind them goes, what the gateway knows is
    /// learnt again from the stores without them, and the requests they answered are refused as
    /// the desk refuses a WebSocket request whose entry failed.
    fn journal_failed(&self, durable: u64, message: &str, b: &mut Batch, handles: &[SessionHandle]) {
        // what is built is stored first, so that the voids cover it
        for ((h, out), gates) in handles.iter().zip(b.outs.iter_mut()).zip(b.gates.iter_mut()) {
            if !out.is_empty() {
                h.send_gated(out, gates);
                out.clear();
                gates.clear();
            }
        }
        b.durable = b.durable.max(durable);
        for h in handles {
            h.journal_durable(durable);
            // a store that cannot void them never sends them either: its session is logged out
            // and refuses Logons until the store records the voids
            let _ = h.journal_failed(durable);
        }
        let lost = self.lock().unsettled(durable);
        if let Ok(learnt) = self.learn(handles) {
            let mut st = self.lock();
            let old = std::mem::take(&mut *st);
            *st = learnt.relearnt(old);
        }
        let r = Refusal {
            reason: Reason::Other,
            text: format!("order journal failed, request not acknowledged: {message}"),
        };
        let st = self.lock();
        for p in lost {
            let order = p
                .order_id
                .and_then(|id| st.orders.get(&id).map(|o| (id, o.status_char())));
            self.answer(&p, order, &r, &mut b.outs[p.session]);
        }
    }

    /// What the sessions reported, learnt from their stores (outside the gateway's lock: a
    /// session's lock is taken per store read).
    fn learn(&self, handles: &[SessionHandle]) -> io::Result<State> {
        let mut learnt = State::default();
        for (i, h) in handles.iter().enumerate() {
            let prefix = &self.sessions[i].prefix;
            h.for_each_sent(&mut |seq, bytes| learnt.learn_sent(i, prefix, seq, bytes))?;
        }
        Ok(learnt)
    }

    /// At attach: voids the stored reports whose journal entries the desk's durable `orders` do
    /// not hold (never sent; a resend gap-fills them) and learns the stores again without them.
    fn void_undurable(&self, orders: &[Order], handles: &[SessionHandle]) -> io::Result<()> {
        let lost = self.lock().undurable(orders);
        if lost.is_empty() {
            return Ok(());
        }
        for (i, h) in handles.iter().enumerate() {
            let seqs: Vec<u64> = lost.iter().filter(|l| l.0 == i).map(|l| l.1).collect();
            if !seqs.is_empty() {
                h.void_sent(&seqs)?;
            }
        }
        let mut learnt = self.learn(handles)?;
        let mut st = self.lock();
        learnt.pending = std::mem::take(&mut st.pending);
        *st = learnt;
        Ok(())
    }

    /// Ready: the catch-up reports of the attach are stored (and sent) before any request is taken.
    fn set_ready(&self) {
        *self.ready.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.ready_cv.notify_all();
    }

    fn sessions_view(&self) -> Vec<(Version, &str)> {
        self.sessions.iter().map(|s| (s.version, s.prefix.as_str())).collect()
    }

    fn answer_refusal(&self, st: &mut State, request: u64, r: &Refusal, outs: &mut [Outbox]) {
        let Some(p) = st.pending.remove(&request) else { return };
        let order = p
            .order_id
            .and_then(|id| st.orders.get(&id).map(|o| (id, o.status_char())));
        self.answer(&p, order, r, &mut outs[p.session]);
    }
}
