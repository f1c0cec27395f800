//! The gateway's intake: a session's order requests (D, F, G) are read on its connection thread
//! and queued here; one thread (`fix-intake`) takes everything queued, asks the server's
//! pre-trade check once for all of its new orders (one crossing to the server's JavaScript
//! thread per batch instead of one per order, and the connection thread keeps reading
//! meanwhile), then hands the requests to the desk in arrival order or answers their refusals.
//! Every request goes through the queue, so a cancel or replace never overtakes the order it
//! names.

use crossbeam_channel::Receiver;

use super::request::{Refusal, Replace};
use super::state::{Kind, Pending};
use super::Gateway;
use crate::fix::acceptor::SessionHandle;
use crate::fix::session::Outbox;
use crate::order_desk::{GatewayOp, OrderInput};

/// A request as read on its connection thread, owned (the receive buffer is reused by then).
pub(super) struct Queued {
    /// Kind, session and the fields its refusal repeats; `order_id` is resolved when it is taken.
    pub pending: Pending,
    pub req: Req,
}

/// What the connection thread could already tell of a request (the parts that need no state).
pub(super) enum Req {
    /// NewOrderSingle mapped to the desk's input, or why it cannot be.
    New(Result<OrderInput, Refusal>),
    /// OrderCancelRequest: its ClOrdID checked.
    Cancel(Result<(), Refusal>),
    /// OrderCancelReplaceRequest: its new terms and the instrument its Symbol names.
    Replace(Result<(Replace, String), Refusal>),
}

/// What the intake thread receives.
pub(super) enum Intake {
    /// Boxed: a request is large next to `Stop`.
    Request(Box<Queued>),
    /// Everything before it is taken: end the thread.
    Stop,
}

/// Most requests taken (and checked in one call) at once.
const BATCH: usize = 4096;

/// The intake thread: takes what is queued, in order, and sends each session's refusals at once.
pub(super) fn intake_loop(gw: &Gateway, handles: &[SessionHandle], rx: &Receiver<Intake>) {
    let mut outs: Vec<Outbox> = handles.iter().map(|_| Outbox::new()).collect();
    let mut batch = Vec::new();
    loop {
        let Ok(first) = rx.recv() else { return };
        let mut stop = false;
        let mut next = Some(first);
        while let Some(i) = next {
            match i {
                Intake::Request(q) => batch.push(*q),
                Intake::Stop => {
                    stop = true;
                    break;
                }
            }
            next = if batch.len() < BATCH { rx.try_recv().ok() } else { None };
        }
        gw.take(&mut batch, &mut outs);
        for (h, out) in handles.iter().zip(outs.iter_mut()) {
            if !out.is_empty() {
                h.send(out);
                out.clear();
            }
        }
        if stop {
            return;
        }
    }
}

impl Gateway {
    /// Queues a request read on a connection thread; when the intake has ended (the gateway is
    /// stopping) it is refused at once into `reply`.
    pub(super) fn enqueue(&self, pending: Pending, req: Req, reply: &mut Outbox) {
        if let Err(e) = self.intake.send(Intake::Request(Box::new(Queued { pending, req }))) {
            if let Intake::Request(q) = e.into_inner() {
                let r = Gateway::unavailable("the FIX gateway is stopping".into());
                self.answer(&q.pending, None, &r, reply);
            }
        }
    }

    /// The server's verdicts on the new orders of `batch` that will be checked (in order): one
    /// call for all of them. Empty without a check.
    fn verdicts(&self, batch: &[Queued], ready: bool) -> Vec<Result<(), String>> {
        let Some(check) = &self.check else {
            return Vec::new();
        };
        let asks: Vec<(&str, &str)> = batch
            .iter()
            .filter_map(|q| match &q.req {
                Req::New(Ok(o)) if ready => {
                    Some((self.sessions[q.pending.session].user.as_str(), o.instrument.as_str()))
                }
                _ => None,
            })
            .collect();
        if asks.is_empty() {
            return Vec::new();
        }
        check.check_many(&asks)
    }

    /// Takes `batch` (emptying it): new orders checked in one call, then every request sent to
    /// the desk or refused into its session's outbox, in arrival order.
    pub(super) fn take(&self, batch: &mut Vec<Queued>, outs: &mut [Outbox]) {
        let ready = self.is_ready();
        let mut verdicts = self.verdicts(batch, ready).into_iter();
        for Queued { mut pending, req } in batch.drain(..) {
            let s = pending.session;
            let orig = pending.orig_cl_ord_id.as_deref().unwrap_or_default();
            let (order, desk_cid) = match pending.kind {
                Kind::New => (None, String::new()),
                // resolved once ready: the chains are rebuilt and reconciled by then
                Kind::Cancel | Kind::Replace => self.lock().resolve(s, orig),
            };
            let op = if !ready {
                Err(Gateway::not_ready())
            } else {
                match req {
                    Req::New(input) => input.and_then(|input| {
                        if self.check.is_some() {
                            let verdict = verdicts.next().unwrap_or_else(|| {
                                Err("the server's order check gave no answer for this order".into())
                            });
                            verdict.map_err(|text| Refusal {
                                reason: super::request::Reason::Other,
                                text,
                            })?;
                        }
                        if self.lock().knows(s, &input.client_order_id) {
                            return Err(Refusal {
                                reason: super::request::Reason::Duplicate,
                                text: format!("Duplicate ClOrdID '{}', field=11", input.client_order_id),
                            });
                        }
                        Ok(GatewayOp::Submit {
                            order: input,
                            origin: Some(self.sessions[s].origin.clone()),
                        })
                    }),
                    Req::Cancel(checked) => checked.map(|()| GatewayOp::Cancel {
                        client_order_id: desk_cid,
                    }),
                    Req::Replace(terms) => terms.and_then(|(terms, instrument)| {
                        self.lock().check_replace(
                            s,
                            order.map(|o| o.0),
                            &pending.cl_ord_id,
                            orig,
                            &instrument,
                            &terms,
                        )?;
                        Ok(GatewayOp::Amend {
                            client_order_id: desk_cid,
                            quantity: Some(terms.quantity),
                            price: terms.price,
                        })
                    }),
                }
            };
            match op {
                Ok(op) => {
                    pending.order_id = order.map(|o| o.0);
                    if let Err(refused) = self.send(pending, op) {
                        let (p, r) = *refused;
                        self.answer(&p, order, &r, &mut outs[s]);
                    }
                }
                Err(r) => self.answer(&pending, order, &r, &mut outs[s]),
            }
        }
    }
}
