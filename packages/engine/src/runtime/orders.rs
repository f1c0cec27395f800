//! The order side of `Engine`: order requests sent to the engine thread's `OrderDesk`, the
//! recovery report, ack latencies, and the source-side privacy refusals (`/TRADE/`, `/BLOTTER/`
//! belong to the engine).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use crossbeam_channel::Sender;

use super::{Engine, Msg};
use crate::error::{EngineError, Result};
use crate::hub::ContainerOp;
use crate::order::{Side, TimeInForce};
use crate::orders::privacy::is_private;
use crate::orders::{JournalRecovery, OrderCmd, OrderInput, OrdersShared, Post};
use crate::wire::Publish;

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

/// The `Post` the order desk gives the journal: queue the completion, wake the engine thread when
/// the queue was empty (a non-empty queue already has a `Msg::Completions` on its way).
pub(super) fn completion_post(tx: Sender<Msg>, completions: Arc<Completions>) -> Post {
    Arc::new(move |c| {
        let was_empty = {
            let mut q = completions.q.lock().unwrap_or_else(|p| p.into_inner());
            q.push(c);
            q.len() == 1
        };
        if was_empty {
            // The engine thread is gone only at shutdown: the completion has no one to tell.
            let _ = tx.send(Msg::Completions);
        }
    })
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
