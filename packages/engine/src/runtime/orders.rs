//! The order side of `Engine`: order requests sent to the engine thread's `OrderDesk`, the
//! recovery report, ack latencies, and the source-side privacy refusals (`/TRADE/`, `/BLOTTER/`
//! belong to the engine).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::lane::LaneSender;
use super::ready::{self, WorkerQueue, Workers};
use super::{Engine, Msg};
use crate::error::{EngineError, Result};
use crate::hub::ContainerOp;
use crate::order_book::{Side, TimeInForce};
use crate::order_desk::frame::read_submit;
use crate::order_desk::privacy::is_private;
use crate::order_desk::{
    Ack, CompletionSink, GatewayAttach, GatewayOp, GatewayRequest, GatewaySink, JournalRecovery, Journaled, OrderCmd,
    OrderInput, OrdersShared,
};
use crate::wire::{OrderGrants, Publish};

/// An `order.submit` as the server decoded it.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderSubmit {
    /// The client's id of the order (unique per user).
    pub client_order_id: String,
    /// Instrument subject (a record with bid/ask).
    pub instrument: String,
    /// Buy or sell.
    pub side: Side,
    /// Quantity (the engine checks: whole, 1..=max).
    pub quantity: f64,
    /// Limit price; `None` = market order.
    pub price: Option<f64>,
    /// Time in force.
    pub time_in_force: TimeInForce,
}

/// What [`Engine::order_submit_frame`] did with a client frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameSubmit {
    /// Not a frame the `order.submit` reader takes (`order_desk::frame::read_submit`): nothing
    /// was checked or submitted; the caller decodes it as usual.
    NotTaken,
    /// An order the user may place, but the caller had no order token for it (over the per-user
    /// order rate): nothing submitted; the caller answers `RATE_LIMITED`.
    NoToken,
    /// Submitted, as [`Engine::order_submit`]; the frame's reqId.
    Submitted(u32),
}

/// Journal completions waiting for the engine thread. The journal writer completes a whole commit
/// group at once; queueing them here and sending one `Msg::Completions` when the queue goes from
/// empty to non-empty wakes the engine thread once per group instead of once per entry.
#[derive(Default)]
pub(super) struct Completions {
    q: Mutex<Vec<OrderCmd>>,
}

impl Completions {
    /// Everything queued, in completion (journal seq) order.
    pub(super) fn take(&self) -> Vec<OrderCmd> {
        std::mem::take(&mut *self.q.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// The desk's completion sink (`CompletionSink`, called on the journal writer thread): a commit
/// group's completions and acks are gathered, then delivered at the group's end under the
/// completions lock: completions queued (and one `Msg::Completions` sent when the queue was empty;
/// a non-empty queue already has one on its way), then the group's last seq counted as durable in
/// the stats, then acks appended to their workers' ready queues; then the workers whose queue went
/// non-empty are woken. So the engine thread, which takes
/// completions under that lock, sees a completion only once its ack is ready (the order's trade
/// record follows the ack), and the `Msg::Completions` that takes it is queued before anything a
/// client sends after reading the ack (a cancel right behind the ack finds the order
/// acknowledged) or after reading the durable seq in the stats. One engine wake-up and at most one
/// wake-up per worker per group.
pub(super) struct CompletionPost {
    tx: LaneSender<Msg>,
    completions: Arc<Completions>,
    workers: Arc<Workers>,
    /// The group being completed (writer thread only; a mutex for `Sync`, never contended).
    group: Mutex<Group>,
}

/// What a commit group's completions produced so far.
#[derive(Default)]
struct Group {
    cmds: Vec<OrderCmd>,
    /// The acks' frames back to back.
    data: Vec<u8>,
    /// Per ack: worker, session, end of its frame in `data`.
    acks: Vec<(u32, u32, usize)>,
    /// The group's last durable seq (0: none).
    last_seq: u64,
}

impl CompletionPost {
    pub(super) fn new(tx: LaneSender<Msg>, completions: Arc<Completions>, workers: Arc<Workers>) -> Self {
        CompletionPost {
            tx,
            completions,
            workers,
            group: Mutex::default(),
        }
    }
}

impl CompletionSink for CompletionPost {
    fn post(&self, cmd: OrderCmd, ack: Option<Ack<'_>>) {
        let mut g = self.group.lock().unwrap_or_else(|p| p.into_inner());
        if let OrderCmd::Journaled(Journaled { result: Ok(seq), .. }) = &cmd {
            g.last_seq = g.last_seq.max(*seq);
        }
        g.cmds.push(cmd);
        if let Some(a) = ack {
            g.data.extend_from_slice(a.frame);
            let end = g.data.len();
            g.acks.push((a.worker, a.sid, end));
        }
    }

    fn group_done(&self, durable: &dyn Fn(u64)) {
        let mut g = self.group.lock().unwrap_or_else(|p| p.into_inner());
        let Group {
            cmds,
            data,
            acks,
            last_seq,
        } = &mut *g;
        if cmds.is_empty() {
            return;
        }
        let mut to_wake: Vec<Arc<WorkerQueue>> = Vec::new();
        {
            let mut q = self.completions.q.lock().unwrap_or_else(|p| p.into_inner());
            if q.is_empty() {
                // The engine thread is gone only at shutdown: the completions have no one to tell.
                let _ = self.tx.send(Msg::Completions);
            }
            q.append(cmds);
            if *last_seq > 0 {
                durable(std::mem::take(last_seq));
            }
            let mut start = 0;
            for &(worker, sid, end) in acks.iter() {
                if let Some(queue) = ready::push_ack(&self.workers, worker, sid, &data[start..end]) {
                    if !to_wake.iter().any(|w| Arc::ptr_eq(w, &queue)) {
                        to_wake.push(queue);
                    }
                }
                start = end;
            }
        }
        data.clear();
        acks.clear();
        drop(g);
        for queue in to_wake {
            queue.wake();
        }
    }
}

fn private_error(subject: &str, field: String, index: Option<u32>) -> EngineError {
    EngineError::NotEntitled {
        message: format!(
            "'{subject}' is under /TRADE/ or /BLOTTER/: trade records and blotters are published by the engine only"
        ),
        field: Some(field),
        index,
    }
}

/// NOT_ENTITLED (naming the message index and `subject`) when a source frame publishes under
/// `/TRADE/` or `/BLOTTER/`; nothing of the frame is accepted then.
pub(super) fn refuse_private_publishes(batch: &[Publish]) -> Result<()> {
    match batch.iter().position(|p| is_private(&p.subject)) {
        Some(i) => Err(private_error(&batch[i].subject, "subject".into(), Some(i as u32))),
        None => Ok(()),
    }
}

/// NOT_ENTITLED when a source's `container.publish` targets a private container or names a
/// private subject as a member (that would expose a trade record in a public view).
pub(super) fn refuse_private_container(subject: &str, ops: &[ContainerOp]) -> Result<()> {
    if is_private(subject) {
        return Err(private_error(subject, "subject".into(), None));
    }
    for (i, op) in ops.iter().enumerate() {
        let members = match op {
            ContainerOp::Add(s) | ContainerOp::InsertAt(_, s) | ContainerOp::Remove(s) => s,
            ContainerOp::Clear => continue,
        };
        if let Some(j) = members.iter().position(|m| is_private(m)) {
            return Err(private_error(&members[j], format!("ops.{i}.subjects.{j}"), None));
        }
    }
    Ok(())
}

impl Engine {
    fn orders_shared(&self) -> Result<&Arc<OrdersShared>> {
        self.shared.orders.as_ref().ok_or_else(|| EngineError::NotConfigured {
            message: "orders are disabled: the engine was started without a journal directory (journalDir)".into(),
        })
    }

    fn send_order(&self, cmd: OrderCmd) -> Result<()> {
        self.orders_shared()?;
        if self.is_shut() {
            return Err(EngineError::Unavailable {
                engine_id: self.shared.id,
            });
        }
        self.shared
            .tx
            .send(Msg::Order(cmd))
            .map_err(|_| EngineError::Unavailable {
                engine_id: self.shared.id,
            })
    }

    /// `order.submit` for session `sid`: `order.ack` (once durable), `order.reject` or `error`
    /// arrives in the session's frames. Errors only when orders are disabled (UNAVAILABLE naming
    /// journalDir) or the engine is shut down.
    pub fn order_submit(&self, sid: u32, req_id: u32, order: OrderSubmit) -> Result<()> {
        self.send_order(OrderCmd::Submit {
            sid,
            req_id,
            order: OrderInput {
                client_order_id: order.client_order_id,
                instrument: order.instrument,
                side: order.side,
                quantity: order.quantity,
                price: order.price,
                time_in_force: order.time_in_force,
            },
            at: Instant::now(),
        })
    }

    /// The whole `order.submit` path of a client frame in one step: reads the frame's bytes
    /// (`read_submit`), checks that `grants` permit its instrument, then that the caller holds an
    /// order token (`token`: the per-user order rate, counted by the caller), then submits it as
    /// [`Engine::order_submit`]. Frames the reader does not take are [`FrameSubmit::NotTaken`]
    /// whatever the grants. Errors: `NOT_ENTITLED` (field `instrument`, the server's wording)
    /// when the grants refuse the instrument (nothing submitted), else those of `order_submit`.
    pub fn order_submit_frame(&self, sid: u32, frame: &[u8], grants: &OrderGrants, token: bool) -> Result<FrameSubmit> {
        let Some(f) = read_submit(frame) else {
            return Ok(FrameSubmit::NotTaken);
        };
        if !grants.permits(f.instrument) {
            return Err(grants.refusal(f.instrument));
        }
        if !token {
            return Ok(FrameSubmit::NoToken);
        }
        let order = OrderSubmit {
            client_order_id: f.client_order_id.to_owned(),
            instrument: f.instrument.to_owned(),
            side: f.side,
            quantity: f.quantity,
            price: f.price,
            time_in_force: f.time_in_force,
        };
        self.order_submit(sid, f.req_id, order)?;
        Ok(FrameSubmit::Submitted(f.req_id))
    }

    /// `order.cancel` of the session user's order `client_order_id`; replies as `order_submit`.
    pub fn order_cancel(&self, sid: u32, req_id: u32, client_order_id: String) -> Result<()> {
        self.send_order(OrderCmd::Cancel {
            sid,
            req_id,
            client_order_id,
            at: Instant::now(),
        })
    }

    /// `order.amend`: new total quantity and/or limit price (neither: rejected `order`/`noChange`).
    pub fn order_amend(
        &self,
        sid: u32,
        req_id: u32,
        client_order_id: String,
        quantity: Option<f64>,
        price: Option<f64>,
    ) -> Result<()> {
        self.send_order(OrderCmd::Amend {
            sid,
            req_id,
            client_order_id,
            quantity,
            price,
            at: Instant::now(),
        })
    }

    /// A gateway's request on behalf of `user` (`orders::gateway`): its outcome goes to the attached
    /// `GatewaySink` under `request`. Errors only when orders are disabled or the engine is shut
    /// down (nothing is reported then).
    pub fn gateway_request(&self, user: &str, request: u64, op: GatewayOp) -> Result<()> {
        self.send_order(OrderCmd::Gateway(GatewayRequest {
            user: user.to_owned(),
            request,
            op,
            at: Instant::now(),
        }))
    }

    /// Attaches a gateway following the orders of `users`: `sink.attached` gets their durable
    /// orders on the engine thread, then every later durable event and every outcome of a
    /// `gateway_request` goes to `sink`. Replaces a gateway attached before.
    pub fn attach_gateway(&self, users: Vec<String>, sink: Arc<dyn GatewaySink>) -> Result<()> {
        self.send_order(OrderCmd::AttachGateway(GatewayAttach { users, sink }))
    }

    /// The journal replay done at start; `None` when orders are disabled.
    pub fn recovery(&self) -> Option<JournalRecovery> {
        self.shared.orders.as_ref().map(|o| o.recovery().clone())
    }

    /// Accept -> ack-enqueued latencies (µs) since the last call (at most 65,536, oldest dropped);
    /// empty when orders are disabled.
    pub fn take_order_ack_latencies(&self) -> Vec<f64> {
        self.shared
            .orders
            .as_ref()
            .map_or_else(Vec::new, |o| o.take_ack_latencies())
    }

    /// True when the engine was started with orders.
    pub fn orders_enabled(&self) -> bool {
        self.shared.orders.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::order_book::OrderEvent;
    use crate::order_desk::Journaled;

    fn completion(seq: u64) -> OrderCmd {
        OrderCmd::Journaled(Journaled {
            result: Ok(seq),
            event: OrderEvent::Acknowledged { order_id: seq, ts: 1 },
            reply: None,
            gateway: None,
        })
    }

    #[test]
    fn the_durable_seq_is_counted_once_the_groups_completions_are_on_their_way() {
        let (tx, rx) = crate::runtime::lane::lane(&Arc::default());
        let completions = Arc::new(Completions::default());
        let post = CompletionPost::new(tx, Arc::clone(&completions), Arc::default());
        post.post(completion(7), None);
        post.post(completion(8), None);
        let counted = Mutex::new(Vec::new());
        post.group_done(&|seq| {
            // The engine thread's wake-up is queued already; the completions lock is still held
            // (the engine thread takes the completions once the acks are in too).
            let locked = completions.q.try_lock().is_err();
            counted.lock().unwrap().push((seq, rx.len(), locked));
        });
        assert_eq!(*counted.lock().unwrap(), [(8, 1, true)]);
        assert!(matches!(rx.try_recv(), Ok(Msg::Completions)));
        post.group_done(&|seq| counted.lock().unwrap().push((seq, 0, false)));
        assert_eq!(counted.lock().unwrap().len(), 1, "an empty group counts nothing");
        assert_eq!(completions.take().len(), 2);
    }
}
