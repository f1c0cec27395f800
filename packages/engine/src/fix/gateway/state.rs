//! What the gateway knows: the orders its sessions own (current ClOrdID, every ClOrdID of the
//! chain, what was last reported), and the requests waiting for the desk's answer.
//!
//! After a restart the orders are learnt back from the ExecutionReports stored as sent
//! (`learn_sent`); the desk's durable orders at attach time then tell what the store holds that
//! the journal does not (`undurable`: a report is stored when its journal entry is appended, so a
//! crash can keep a report whose entry never became durable; the gateway voids those, a resend
//! gap-fills them) and what happened while the gateway was not reporting (`reconcile`: a crash
//! before a report was stored), which is reported then: a New for an order the session entered
//! (the accept's journaled origin names it) that its store never reported, fills as one report
//! per order (LastQty the quantity not reported yet, LastPx its average price), then a cancel,
//! expiry, rejection or replace.

use std::collections::{HashMap, VecDeque};

use rustc_hash::{FxHashMap, FxHashSet};

use super::report::{self, ExecKind, OrderView, Version};
use super::request::{self, Reason, Refusal, Replace};
use super::Raw;
use crate::fix::codec::Parser;
use crate::fix::session::Outbox;
use crate::order_book::{CancelReason, Order, OrderEvent, OrderStatus, Side};

/// What a pending request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// NewOrderSingle.
    New,
    /// OrderCancelRequest.
    Cancel,
    /// OrderCancelReplaceRequest.
    Replace,
}

/// A request sent to the desk, waiting for its outcome.
#[derive(Debug, Clone)]
pub struct Pending {
    pub kind: Kind,
    pub session: usize,
    pub cl_ord_id: String,
    pub orig_cl_ord_id: Option<String>,
    /// The order a cancel or replace names, if the gateway knows it.
    pub order_id: Option<u64>,
    // A new order's fields as sent (for its rejection).
    pub symbol: String,
    pub side: u8,
    pub quantity: String,
    pub price: Option<String>,
    pub ord_type: u8,
    pub time_in_force: u8,
}

impl Pending {
    pub fn new(kind: Kind, session: usize, raw: &Raw<'_>, orig: Option<&str>, order_id: Option<u64>) -> Pending {
        Pending {
            kind,
            session,
            cl_ord_id: raw.cl_ord_id.to_owned(),
            orig_cl_ord_id: orig.map(str::to_owned),
            order_id,
            symbol: raw.symbol.to_owned(),
            side: raw.side,
            quantity: raw.quantity.to_owned(),
            price: raw.price.map(str::to_owned),
            ord_type: raw.ord_type,
            time_in_force: raw.time_in_force,
        }
    }
    /// The request's fields as sent (for its refusal).
    pub fn raw(&self) -> Raw<'_> {
        Raw {
            cl_ord_id: &self.cl_ord_id,
            symbol: &self.symbol,
            side: self.side,
            quantity: &self.quantity,
            price: self.price.as_deref(),
            ord_type: self.ord_type,
            time_in_force: self.time_in_force,
        }
    }
}

/// An order a session owns, as last reported to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Owned {
    pub session: usize,
    /// The ClOrdID the latest report carried.
    pub cl_ord_id: String,
    /// The desk's client order id (the first ClOrdID).
    pub desk_cid: String,
    pub instrument: String,
    pub side: Side,
    /// Limit (true) or market order.
    pub limit: bool,
    /// OrdStatus (39) last reported.
    pub status: u8,
    /// CumQty (14), AvgPx (6), OrderQty (38), Price (44) last reported.
    pub cum: u64,
    pub avg: f64,
    pub quantity: u64,
    pub price: Option<f64>,
}

impl Owned {
    /// Durable order `o` as accepted, entered on session `s` with ClOrdID `cl_ord_id`: its New is
    /// what was last reported.
    fn accepted(s: usize, cl_ord_id: String, o: &Order) -> Owned {
        Owned {
            session: s,
            cl_ord_id,
            desk_cid: o.client_order_id.clone(),
            instrument: o.instrument.clone(),
            side: o.side,
            limit: o.price.is_some(),
            status: b'0',
            cum: 0,
            avg: 0.0,
            quantity: o.quantity,
            price: o.price,
        }
    }

    /// The OrdStatus an OrderCancelReject shows.
    pub fn status_char(&self) -> u8 {
        self.status
    }
}

/// An ExecutionReport stored as sent, as far as `undurable` needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredReport {
    pub session: usize,
    /// Its MsgSeqNum.
    pub msg_seq: u64,
    pub order_id: u64,
    /// The order's transition it reported (its ExecID `<orderId>-<version>`).
    pub version: u32,
    /// A New report (ExecType 0): the D's ClOrdID, the desk's client order id.
    pub new_cl: Option<String>,
}

/// Every order and pending request of the gateway.
#[derive(Debug, Default)]
pub struct State {
    pub orders: FxHashMap<u64, Owned>,
    /// (session, ClOrdID) -> order id, for every ClOrdID an order had.
    by_cl: HashMap<(usize, String), u64>,
    pub pending: FxHashMap<u64, Pending>,
    /// Requests whose outcome was reported as appended, with its journal seq, until that seq is
    /// durable (appended order): answered as refused if the journal fails before.
    pub in_flight: VecDeque<(u64, Pending)>,
    /// The reports learnt from the stores, until the attach has checked them.
    pub stored: Vec<StoredReport>,
    parser: Parser,
}

/// Per session: its version and symbol prefix.
pub type Sessions<'a> = [(Version, &'a str)];

impl State {
    /// True when `cl` named an order of session `s` (a new order must not reuse it).
    pub fn knows(&self, s: usize, cl: &str) -> bool {
        self.by_cl.contains_key(&(s, cl.to_owned()))
    }

    /// The order `orig` names on session `s` (id, OrdStatus last reported) and its desk client
    /// order id; an unknown `orig` goes to the desk as it is (which knows the user's orders).
    pub fn resolve(&self, s: usize, orig: &str) -> (Option<(u64, u8)>, String) {
        match self
            .by_cl
            .get(&(s, orig.to_owned()))
            .and_then(|id| self.orders.get(id).map(|o| (*id, o)))
        {
            Some((id, o)) => (Some((id, o.status)), o.desk_cid.clone()),
            None => (None, orig.to_owned()),
        }
    }

    /// A replace may change quantity and price only; its new ClOrdID must be new.
    pub fn check_replace(
        &self,
        s: usize,
        order_id: Option<u64>,
        cl: &str,
        orig: &str,
        instrument: &str,
        terms: &Replace,
    ) -> Result<(), Refusal> {
        let refuse = |reason, text: String| Err(Refusal { reason, text });
        if cl != orig && self.knows(s, cl) {
            return refuse(Reason::Duplicate, format!("Duplicate ClOrdID '{cl}', field=11"));
        }
        let Some(o) = order_id.and_then(|id| self.orders.get(&id)) else {
            return Ok(());
        };
        if o.instrument != instrument {
            return refuse(Reason::Other, "Symbol cannot be changed by a replace, field=55".into());
        }
        if o.side != terms.side {
            return refuse(Reason::Other, "Side cannot be changed by a replace, field=54".into());
        }
        if o.limit != terms.limit {
            return refuse(Reason::Other, "OrdType cannot be changed by a replace, field=40".into());
        }
        Ok(())
    }

    /// Learns from one message stored as sent on session `s` as `msg_seq`: an ExecutionReport
    /// names its order (37), current ClOrdID (11), previous one (41) and what was reported.
    pub fn learn_sent(&mut self, s: usize, prefix: &str, msg_seq: u64, bytes: &[u8]) {
        let Ok(m) = self.parser.parse(bytes) else { return };
        if m.msg_type() != b"8" {
            return;
        }
        let Some(id) = m.get_u64(37) else { return };
        let text = |tag| m.get_str(tag).unwrap_or_default();
        if let Some(version) = exec_version(text(17), id) {
            self.stored.push(StoredReport {
                session: s,
                msg_seq,
                order_id: id,
                version,
                new_cl: (text(150) == "0").then(|| text(11).to_owned()),
            });
        }
        let num = |tag| text(tag).parse::<f64>().ok().filter(|f| f.is_finite());
        let cl = text(11).to_owned();
        let symbol = text(55);
        let instrument = request::instrument(symbol, prefix).unwrap_or_else(|_| symbol.to_owned());
        let o = self.orders.entry(id).or_insert_with(|| Owned {
            session: s,
            cl_ord_id: cl.clone(),
            desk_cid: cl.clone(), // the first report of an order carries the D's ClOrdID
            instrument,
            side: if text(54) == "2" { Side::Sell } else { Side::Buy },
            limit: text(40) == "2",
            status: b'0',
            cum: 0,
            avg: 0.0,
            quantity: 0,
            price: None,
        });
        o.cl_ord_id.clone_from(&cl);
        o.status = m.get(39).and_then(|v| v.first().copied()).unwrap_or(o.status);
        o.cum = num(14).map_or(o.cum, |v| v as u64);
        o.avg = num(6).unwrap_or(o.avg);
        o.quantity = num(38).map_or(o.quantity, |v| v as u64);
        o.price = num(44);
        self.by_cl.insert((s, cl), id);
        if let Some(orig) = m.get_str(41) {
            self.by_cl.insert((s, orig.to_owned()), id);
        }
    }

    /// The stored reports (session, MsgSeqNum) that the desk's durable `orders` (of the
    /// gateway's users, at attach time) do not hold: the report of a transition past the
    /// order's durable version, or of an order the journal does not have (a New report whose
    /// ClOrdID is not the durable order's: the id went to another order after the crash), and
    /// every later report of such an order. They were never sent (a report leaves only once its
    /// journal entry is durable).
    pub fn undurable(&self, orders: &[Order]) -> Vec<(usize, u64)> {
        let by_id: FxHashMap<u64, &Order> = orders.iter().map(|o| (o.order_id, o)).collect();
        let mut lost: FxHashSet<(usize, u64)> = FxHashSet::default();
        let mut out = Vec::new();
        for r in &self.stored {
            let held = by_id
                .get(&r.order_id)
                .is_some_and(|o| o.version >= r.version && r.new_cl.as_ref().is_none_or(|cl| *cl == o.client_order_id));
            if held && !lost.contains(&(r.session, r.order_id)) {
                continue;
            }
            if r.new_cl.is_some() {
                lost.insert((r.session, r.order_id));
            }
            out.push((r.session, r.msg_seq));
        }
        out
    }

    /// The desk's durable orders of the gateway's users at attach time: completes what the
    /// store told (desk client ids) and reports what the sessions have not been told.
    /// `origins`: per session, the origin its orders are journaled with.
    pub fn reconcile(&mut self, orders: &[Order], sessions: &Sessions<'_>, origins: &[&str], outs: &mut [Outbox]) {
        // per session the newest order its store reported: a New report lost with a crash is one
        // of a later order (the store loses only its tail); a store with no report (new, or reset
        // by a Logon with ResetSeqNumFlag) is given none
        let mut newest = vec![None::<u64>; origins.len()];
        for r in &self.stored {
            let n = &mut newest[r.session];
            *n = Some(n.map_or(r.order_id, |m: u64| m.max(r.order_id)));
        }
        for o in orders {
            if !self.orders.contains_key(&o.order_id) {
                let Some(s) = o
                    .origin
                    .as_deref()
                    .and_then(|org| origins.iter().position(|x| *x == org))
                else {
                    continue;
                };
                if newest[s].is_none_or(|n| o.order_id <= n) {
                    continue;
                }
                self.report_lost_new(s, o, sessions, outs);
            }
            let Some(own) = self.orders.get_mut(&o.order_id) else {
                continue;
            };
            own.desk_cid.clone_from(&o.client_order_id);
            own.instrument.clone_from(&o.instrument);
            own.side = o.side;
            own.limit = o.price.is_some();
            self.by_cl.insert((own.session, o.client_order_id.clone()), o.order_id);
            let (v, prefix) = sessions[own.session];
            let out = &mut outs[own.session];
            let mut k = 0;
            let mut exec_id = || {
                k += 1;
                format!("{}-{}.{k}", o.order_id, o.version)
            };
            if o.filled_quantity > own.cum {
                let quantity = o.filled_quantity - own.cum;
                let value = o.filled_quantity as f64 * o.average_price - own.cum as f64 * own.avg;
                let price = value / quantity as f64;
                let status = if o.filled_quantity >= o.quantity {
                    OrderStatus::Filled
                } else {
                    OrderStatus::PartiallyFilled
                };
                let open = status.is_open();
                let kind = ExecKind::Trade { quantity, price };
                emit(out, v, prefix, own, o, kind, status, open, &exec_id(), None, None);
            }
            let closing = match o.status {
                OrderStatus::Cancelled if !matches!(own.status, b'4' | b'C') => {
                    Some(if o.reason.as_deref() == Some(CancelReason::EndOfDay.as_str()) {
                        ExecKind::Expired
                    } else {
                        ExecKind::Cancelled
                    })
                }
                OrderStatus::Rejected if own.status != b'8' => Some(ExecKind::Rejected {
                    reason: Reason::Other.ord_rej_reason(v),
                }),
                _ => None,
            };
            if let Some(kind) = closing {
                emit(
                    out,
                    v,
                    prefix,
                    own,
                    o,
                    kind,
                    o.status,
                    false,
                    &exec_id(),
                    None,
                    o.reason.as_deref(),
                );
            } else if o.status.is_open() && (o.quantity != own.quantity || o.price != own.price) {
                emit(
                    out,
                    v,
                    prefix,
                    own,
                    o,
                    ExecKind::Replaced,
                    o.status,
                    true,
                    &exec_id(),
                    None,
                    None,
                );
            }
        }
    }

    /// The New report of durable order `o`, entered on session `s`, that the session's store lost
    /// (the order as accepted: what happened to it since is reported after it).
    fn report_lost_new(&mut self, s: usize, o: &Order, sessions: &Sessions<'_>, outs: &mut [Outbox]) {
        let mut accepted = o.clone();
        accepted.status = OrderStatus::New;
        accepted.filled_quantity = 0;
        accepted.average_price = 0.0;
        accepted.updated_ms = o.created_ms;
        let mut own = Owned::accepted(s, o.client_order_id.clone(), o);
        let (v, prefix) = sessions[s];
        let exec_id = format!("{}-1", o.order_id);
        emit(
            &mut outs[s],
            v,
            prefix,
            &mut own,
            &accepted,
            ExecKind::New,
            OrderStatus::New,
            true,
            &exec_id,
            None,
            None,
        );
        self.by_cl.insert((s, o.client_order_id.clone()), o.order_id);
        self.orders.insert(o.order_id, own);
    }

    /// The requests answered by journal seqs up to `seq`, which is durable, are done.
    pub fn settle(&mut self, seq: u64) {
        while self.in_flight.front().is_some_and(|f| f.0 <= seq) {
            self.in_flight.pop_front();
        }
    }

    /// After the journal failed at `durable`: the requests whose outcome it never holds.
    pub fn unsettled(&mut self, durable: u64) -> Vec<Pending> {
        let (lost, kept): (Vec<_>, Vec<_>) = self.in_flight.drain(..).partition(|f| f.0 > durable);
        self.in_flight = kept.into();
        lost.into_iter().map(|f| f.1).collect()
    }

    /// This state learnt again from the stores in place of `old`: the requests and what the
    /// stores do not tell (the desk's client order id, instrument, side and type of the orders
    /// both know) are carried over.
    pub fn relearnt(mut self, mut old: State) -> State {
        self.pending = std::mem::take(&mut old.pending);
        self.in_flight = std::mem::take(&mut old.in_flight);
        self.stored = Vec::new();
        for (id, o) in &mut self.orders {
            if let Some(was) = old.orders.remove(id) {
                self.by_cl.insert((o.session, was.desk_cid.clone()), *id);
                o.desk_cid = was.desk_cid;
                o.instrument = was.instrument;
                o.side = was.side;
                o.limit = was.limit;
            }
        }
        self
    }

    /// An event of an order of the gateway's users, appended to the journal as `seq`: reported to
    /// the owning session (the one that entered the order, or that cancels or replaces it now).
    #[allow(clippy::too_many_arguments)]
    pub fn durable(
        &mut self,
        ev: &OrderEvent,
        o: &Order,
        request: Option<u64>,
        seq: u64,
        sessions: &Sessions<'_>,
        outs: &mut [Outbox],
    ) {
        let pending = request.and_then(|r| self.pending.remove(&r));
        self.report(ev, o, pending.as_ref(), sessions, outs);
        if let Some(p) = pending {
            self.in_flight.push_back((seq, p));
        }
    }

    fn report(
        &mut self,
        ev: &OrderEvent,
        o: &Order,
        pending: Option<&Pending>,
        sessions: &Sessions<'_>,
        outs: &mut [Outbox],
    ) {
        let id = o.order_id;
        if let OrderEvent::Accepted { .. } = ev {
            let Some(p) = pending.filter(|p| p.kind == Kind::New) else {
                return; // an order entered elsewhere (the web) is not reported on FIX
            };
            let own = Owned::accepted(p.session, p.cl_ord_id.clone(), o);
            self.by_cl.insert((p.session, p.cl_ord_id.clone()), id);
            let (v, prefix) = sessions[own.session];
            let exec_id = format!("{id}-{}", o.version);
            let own = self.orders.entry(id).or_insert(own);
            emit(
                &mut outs[own.session],
                v,
                prefix,
                own,
                o,
                ExecKind::New,
                o.status,
                true,
                &exec_id,
                None,
                None,
            );
            return;
        }
        let kind = match ev {
            OrderEvent::Accepted { .. } | OrderEvent::Acknowledged { .. } => return,
            OrderEvent::Filled { quantity, price, .. } => ExecKind::Trade {
                quantity: *quantity,
                price: *price,
            },
            OrderEvent::Amended { .. } => ExecKind::Replaced,
            OrderEvent::Cancelled {
                reason: CancelReason::EndOfDay,
                ..
            } => ExecKind::Expired,
            OrderEvent::Cancelled { .. } => ExecKind::Cancelled,
            OrderEvent::Rejected { .. } => ExecKind::Rejected { reason: 0 },
        };
        let changer = pending.filter(|p| p.kind != Kind::New);
        if !self.orders.contains_key(&id) {
            // an order the session did not enter, but cancels or replaces now: it owns it from here
            let Some(p) = &changer else { return };
            self.by_cl.insert((p.session, o.client_order_id.clone()), id);
            self.orders.insert(
                id,
                Owned {
                    session: p.session,
                    cl_ord_id: o.client_order_id.clone(),
                    desk_cid: o.client_order_id.clone(),
                    instrument: o.instrument.clone(),
                    side: o.side,
                    limit: o.price.is_some(),
                    status: report::status_char(o.status),
                    cum: o.filled_quantity,
                    avg: o.average_price,
                    quantity: o.quantity,
                    price: o.price,
                },
            );
        }
        let Some(own) = self.orders.get_mut(&id) else { return };
        let (v, prefix) = sessions[own.session];
        let kind = match kind {
            ExecKind::Rejected { .. } => ExecKind::Rejected {
                reason: Reason::Other.ord_rej_reason(v),
            },
            k => k,
        };
        let orig = match changer {
            Some(p) => {
                let orig = p.orig_cl_ord_id.clone().unwrap_or_else(|| own.cl_ord_id.clone());
                self.by_cl.insert((own.session, p.cl_ord_id.clone()), id);
                own.cl_ord_id.clone_from(&p.cl_ord_id);
                Some(orig)
            }
            None => None,
        };
        let text = match ev {
            OrderEvent::Rejected { .. } => o.reason.as_deref(),
            OrderEvent::Cancelled {
                reason: CancelReason::ImmediateOrCancel,
                ..
            } => Some("IOC remainder cancelled"),
            _ => None,
        };
        let exec_id = format!("{id}-{}", o.version);
        emit(
            &mut outs[own.session],
            v,
            prefix,
            own,
            o,
            kind,
            o.status,
            o.status.is_open(),
            &exec_id,
            orig.as_deref(),
            text,
        );
    }
}

/// The order version an ExecID `<orderId>-<version>` (or `<orderId>-<version>.<k>`, a catch-up
/// report) of order `id` names; `None` for the ExecID of a refused request (`R...`).
fn exec_version(exec_id: &str, id: u64) -> Option<u32> {
    let (order, rest) = exec_id.split_once('-')?;
    if order.parse::<u64>().ok()? != id {
        return None;
    }
    rest.split('.').next()?.parse().ok()
}

/// Appends the ExecutionReport of `kind` for desk order `o` (status `status` after it) to `out`
/// and notes it as the last reported state of `own`.
#[allow(clippy::too_many_arguments)]
fn emit(
    out: &mut Outbox,
    v: Version,
    prefix: &str,
    own: &mut Owned,
    o: &Order,
    kind: ExecKind,
    status: OrderStatus,
    open: bool,
    exec_id: &str,
    orig: Option<&str>,
    text: Option<&str>,
) {
    let (cum, avg) = (o.filled_quantity, o.average_price);
    let quantity = o.quantity.to_string();
    let price = o.price.map(|p| p.to_string());
    let view = OrderView {
        order_id: Some(o.order_id),
        cl_ord_id: &own.cl_ord_id,
        orig_cl_ord_id: orig,
        exec_id,
        symbol: request::symbol(&o.instrument, prefix),
        side: report::side_char(o.side),
        quantity: &quantity,
        price: price.as_deref(),
        ord_type: if o.price.is_some() { b'2' } else { b'1' },
        time_in_force: report::tif_char(o.time_in_force),
        status,
        cum_qty: cum,
        leaves_qty: if open { o.quantity.saturating_sub(cum) } else { 0 },
        avg_px: avg,
        transact_ms: o.updated_ms as i64,
        text,
    };
    report::execution_report(out, v, kind, &view);
    own.status = report::ord_status(v, kind, status);
    own.cum = cum;
    own.avg = avg;
    own.quantity = o.quantity;
    own.price = o.price;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(fields: &str) -> Vec<u8> {
        let mut b = crate::fix::codec::Builder::new();
        b.begin(b"8").raw(fields.replace('|', "\u{1}").as_bytes());
        b.finish(b"FIX.4.4").to_vec()
    }

    #[test]
    fn stored_reports_rebuild_every_cl_ord_id_of_a_chain() {
        let mut st = State::default();
        st.learn_sent(
            0,
            "/FX/",
            0,
            &stored("37=7|11=A|17=7-1|150=0|39=0|55=EURUSD|54=2|38=10|40=2|44=1.1|151=10|14=0|6=0|"),
        );
        st.learn_sent(
            0,
            "/FX/",
            0,
            &stored("37=7|11=B|41=A|17=7-3|150=5|39=0|55=EURUSD|54=2|38=8|40=2|44=1.2|151=8|14=0|6=0|"),
        );
        st.learn_sent(
            0,
            "/FX/",
            0,
            &stored("37=7|11=B|17=7-4|150=F|39=1|55=EURUSD|54=2|38=8|40=2|44=1.2|32=3|31=1.2|151=5|14=3|6=1.2|"),
        );
        for cl in ["A", "B"] {
            assert_eq!(st.resolve(0, cl), (Some((7, b'1')), "A".to_owned()), "{cl}");
        }
        assert_eq!(st.resolve(1, "A"), (None, "A".to_owned()), "ClOrdIDs are per session");
        let o = &st.orders[&7];
        assert_eq!(
            (o.cl_ord_id.as_str(), o.instrument.as_str(), o.side),
            ("B", "/FX/EURUSD", Side::Sell)
        );
        assert_eq!((o.cum, o.avg, o.quantity, o.price), (3, 1.2, 8, Some(1.2)));
        assert!(st.knows(0, "A") && st.knows(0, "B") && !st.knows(0, "C"));
    }
}
