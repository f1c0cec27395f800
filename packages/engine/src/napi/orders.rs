//! napi: the `order.submit` fast path. The server hands a client frame's bytes to the engine as is
//! (`runtime::Engine::order_submit_frame` reads them, checks the session's order grants and
//! submits), so a trader's order costs one napi call: no `JSON.parse`, no JS object and no
//! per-field napi conversion. Frames the fast path does not take answer -1 and go through the
//! protocol decoder and `orderSubmit` as before. The `#[napi]` method (`orderSubmitFrame`) sits
//! in mod.rs's `impl JsEngine`: a second `#[napi] impl` block outside the struct's module would
//! export the class as `JsEngine`.

use napi::Env;
use napi_derive::napi;

use super::error::to_js;
use crate::error::EngineError;
use crate::runtime::{self, FrameSubmit};
use crate::wire::OrderGrants;

/// `orderSubmitFrame`'s answer for a frame the fast path does not take.
const NOT_TAKEN: i32 = -1;
/// `orderSubmitFrame`'s answer for a permitted order without an order token.
const NO_TOKEN: i32 = -2;

/// `orderSubmitFrame`: the frame's reqId when submitted, else `NOT_TAKEN` / `NO_TOKEN`; engine
/// errors (NOT_ENTITLED first) are thrown as JS errors.
pub(super) fn submit_frame(
    engine: &runtime::Engine,
    env: &Env,
    session_id: u32,
    frame: &[u8],
    grants: &OrderGrants,
    token: bool,
) -> napi::Result<i32> {
    match engine.order_submit_frame(session_id, frame, grants, token) {
        // reqIds are 0..=2^31-1 (the reader refuses larger ones)
        Ok(FrameSubmit::Submitted(req_id)) => Ok(i32::try_from(req_id).unwrap_or(i32::MAX)),
        Ok(FrameSubmit::NotTaken) => Ok(NOT_TAKEN),
        Ok(FrameSubmit::NoToken) => Ok(NO_TOKEN),
        Err(e) => Err(to_js(env, e)),
    }
}

/// An `order.submit` as the server decoded it (shape checked; the engine checks the rules).
#[napi(object)]
pub struct OrderSubmitInput {
    /// 1-64 characters, unique per user.
    pub client_order_id: String,
    /// Instrument subject (a record with bid/ask), e.g. `/FX/EURUSD`.
    pub instrument: String,
    /// `buy` or `sell`.
    pub side: String,
    /// Whole number 1..orderMaxQuantity (else an `order.reject`).
    pub quantity: f64,
    /// Limit price on the instrument's tick; null/absent = market order.
    pub price: Option<f64>,
    /// `day`, `ioc` or `gtc`.
    pub time_in_force: String,
}

/// The journal replay done at construction.
#[napi(object)]
pub struct JournalRecovery {
    /// Journal entries replayed.
    pub records: f64,
    /// Bytes of torn tail cut off (0 = clean).
    pub bytes_dropped: f64,
    /// Last journal seq (0 = empty); the next entry gets lastSeq + 1.
    pub last_seq: f64,
    /// Orders rebuilt.
    pub orders: f64,
    /// Of those, still open.
    pub open_orders: f64,
    /// `journal: dropped N bytes of torn tail after seq S` when a tail was cut: log it.
    pub log_line: Option<String>,
    /// Records dropped by a cut back to the last consistent seq (`journalTruncateToConsistent`).
    pub records_dropped: f64,
    /// `journal: cut back to seq S (truncate to consistent): <why>; dropped N records: <files>;
    /// saved in <dir>` when the journal was cut: log it.
    pub cut_line: Option<String>,
}

pub fn order_side(s: &str) -> crate::error::Result<crate::order_book::Side> {
    match s {
        "buy" => Ok(crate::order_book::Side::Buy),
        "sell" => Ok(crate::order_book::Side::Sell),
        other => Err(EngineError::bad_request(
            format!("'side' ({other:?}) must be 'buy' or 'sell'"),
            Some("side"),
            None,
        )),
    }
}

pub fn time_in_force(s: &str) -> crate::error::Result<crate::order_book::TimeInForce> {
    use crate::order_book::TimeInForce as T;
    match s {
        "day" => Ok(T::Day),
        "ioc" => Ok(T::Ioc),
        "gtc" => Ok(T::Gtc),
        other => Err(EngineError::bad_request(
            format!("'timeInForce' ({other:?}) must be 'day', 'ioc' or 'gtc'"),
            Some("timeInForce"),
            None,
        )),
    }
}

/// The NATS server a cluster node is connected to (`Engine::cluster_nats_server`).
#[napi(object)]
pub struct NatsServerInfo {
    /// `version` from the server's INFO at connect.
    pub version: String,
    /// Set when Tidewire is known not to run safely on that version: the problem and the fix.
    pub warning: Option<String>,
}

/// One stage of an order's path in a cluster node (`Engine::order_stages`).
#[napi(object)]
pub struct OrderStage {
    /// `decide`, `queue`, `store`, `complete`, `forward_send`, `forward_round_trip` or
    /// `forward_deliver`.
    pub stage: String,
    /// Upper bounds of the buckets, µs.
    pub le_us: Vec<f64>,
    /// Cumulative: observations of at most `leUs[i]` µs.
    pub buckets: Vec<f64>,
    /// Observations (the `+Inf` bucket).
    pub count: f64,
    /// Their sum, µs.
    pub sum_us: f64,
}
