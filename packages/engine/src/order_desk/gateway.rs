//! Orders from a gateway (the FIX acceptor) instead of a WebSocket session: the narrow interface
//! between the desk and a gateway. Requests go in (`OrderCmd::Gateway`: submit, cancel, amend on
//! behalf of a named user, tagged with the gateway's own request id); order outcomes come out
//! through the attached [`GatewaySink`]: a refusal at once (nothing changed, nothing written), a
//! journal failure, and every event of the gateway's users' orders twice, in journal order: when
//! it is appended (with its journal seq and the order's state after it, before it is durable) and
//! when it is durable; after a journal failure, which of the appended seqs never will be. Rules, limits, journal and lifecycle are those of WebSocket orders: only
//! where the answer goes differs. The gateway never sees the journal.
//!
//! An event is announced as appended when its journal entry is queued if the desk journals
//! (single node) and the order was accepted after the attach; otherwise (cluster mode's order
//! stream, events of orders older than the attach) it is announced as appended when it is durable,
//! right before its `durable`.

use std::sync::Arc;
use std::time::Instant;

use rustc_hash::{FxHashMap, FxHashSet};

use super::OrderInput;
use crate::order_book::{Order, OrderEvent, OrderReject};

/// What a gateway asks the desk to do.
#[derive(Debug, Clone, PartialEq)]
pub enum GatewayOp {
    /// A new order.
    Submit {
        /// The order.
        order: OrderInput,
        /// The gateway's name for where it came from (a FIX session), journaled with the accept
        /// (cluster mode: in the order stream, also when the request is forwarded to the leader).
        origin: Option<String>,
    },
    /// Cancel the user's open order `client_order_id`.
    Cancel {
        /// The order's client id (as the desk knows it).
        client_order_id: String,
    },
    /// New total quantity and/or limit price of the user's open order (neither: refused
    /// `order`/`noChange`).
    Amend {
        /// The order's client id (as the desk knows it).
        client_order_id: String,
        /// New total quantity.
        quantity: Option<f64>,
        /// New limit price.
        price: Option<f64>,
    },
}

/// One gateway request (`OrderCmd::Gateway`).
#[derive(Debug, Clone, PartialEq)]
pub struct GatewayRequest {
    /// The Tidewire user the request acts for (the gateway authenticated it).
    pub user: String,
    /// The gateway's id of the request, handed back with its outcome.
    pub request: u64,
    /// What to do.
    pub op: GatewayOp,
    /// When the gateway handed it over.
    pub at: Instant,
}

/// An order event of one of a gateway's users, appended or durable.
#[derive(Debug, Clone, Copy)]
pub struct Durable<'a> {
    /// Its journal seq (cluster mode: its order stream seq).
    pub seq: u64,
    /// The event. Its strings (an accept's user, ids, instrument) may have been moved into
    /// `order`: read them there. An accept acknowledged in the same entry comes as the plain
    /// accept, then its acknowledgement (same seq).
    pub event: &'a OrderEvent,
    /// The order's state after the event (as it is durable once the seq is).
    pub order: &'a Order,
    /// The gateway request this event answers (a submit's accept, a cancel, an amend); `None` for
    /// events the desk made itself (acknowledgement, fills, IOC remainder, end-of-day expiry,
    /// rejection after acceptance) and for events answering a WebSocket request.
    pub request: Option<u64>,
}

/// Where the desk reports to a gateway. Called on the engine thread: keep each call short (hand
/// the report to the gateway's own thread).
pub trait GatewaySink: Send + Sync {
    /// Attached: `orders` are the durable orders of the gateway's users at this point (oldest
    /// first); every event after it comes through `durable`.
    fn attached(&self, orders: &[&Order]);
    /// `request` was refused: nothing changed, nothing was written.
    fn refused(&self, request: u64, reject: &OrderReject);
    /// `request` cannot be served: the journal failed (now or earlier); `message` says why.
    fn unavailable(&self, request: u64, message: &str);
    /// An event of an order of one of the gateway's users was appended (in journal order); it is
    /// durable once `durable` names its seq. A journal failure after it: the seq never becomes
    /// durable (`failed` says so; the request it answers, if any, gets `unavailable`).
    fn appended(&self, update: &Durable<'_>);
    /// The appended event `update.seq` is durable (in journal order; every seq before it is too).
    fn durable(&self, update: &Durable<'_>);
    /// The journal failed (`message` says how; single node): it is durable up to `durable`, and no
    /// seq after it that was announced as appended ever becomes durable (the desk refuses every
    /// request from now on, `unavailable`, until a restart). Called once, after every `appended`
    /// of such a seq; `durable` of seqs up to `durable` may still follow.
    fn failed(&self, durable: u64, message: &str);
}

/// `OrderCmd::AttachGateway`: reports of the orders of `users` go to `sink` from now on (replacing
/// any gateway attached before).
pub struct GatewayAttach {
    /// Users whose orders the gateway follows.
    pub users: Vec<String>,
    /// Where reports go.
    pub sink: Arc<dyn GatewaySink>,
}

impl std::fmt::Debug for GatewayAttach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayAttach")
            .field("users", &self.users)
            .finish_non_exhaustive()
    }
}

/// The attached gateway, on the engine thread.
pub(super) struct Attached {
    pub sink: Arc<dyn GatewaySink>,
    pub users: FxHashSet<String>,
    /// The first order id accepted after the attach: events of orders from it on are announced
    /// when appended (single node).
    pub first_order: u64,
    /// The open orders of the gateway's users accepted after the attach, in their appended state
    /// (events are applied as they are appended; closed orders leave).
    pub appended: FxHashMap<u64, Order>,
    /// The sink was told the journal failed (`GatewaySink::failed`).
    pub told_failed: bool,
}

impl Attached {
    /// Applies `ev` (being appended) to the appended state of its order if the gateway follows
    /// it: the event to announce (an acknowledged accept as the plain accept) and the order's
    /// state after it.
    pub fn appending(&mut self, ev: &OrderEvent) -> Option<(OrderEvent, Order)> {
        if let Some(mut o) = Order::from_accept(ev) {
            if !self.users.contains(o.user.as_str()) {
                return None;
            }
            let mut plain = ev.clone();
            let at_accept = o.clone();
            if let Some(ack) = plain.split_acknowledgement() {
                o.step(&ack).ok()?;
            }
            self.appended.insert(o.order_id, o);
            return Some((plain, at_accept));
        }
        let id = ev.order_id();
        let o = self.appended.get_mut(&id)?;
        o.step(ev).ok()?;
        let after = o.clone();
        if !after.status.is_open() {
            self.appended.remove(&id);
        }
        Some((ev.clone(), after))
    }

    /// True when the events of `order_id` were announced as they were appended.
    pub fn announces(&self, order_id: u64) -> bool {
        order_id >= self.first_order
    }
}
