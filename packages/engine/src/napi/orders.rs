//! napi: the `order.submit` fast path. The server hands a client frame's bytes to the engine as is
//! (`orders::frame::read_submit` reads them), so a trader's order costs no `JSON.parse`, no JS
//! object and no per-field napi conversion. Frames the fast path does not take give null and go
//! through the protocol decoder and `orderSubmit` as before. The `#[napi]` methods
//! (`orderFrameInstrument`, `orderSubmitFrame`) sit in mod.rs's `impl JsEngine`: a second
//! `#[napi] impl` block outside the struct's module would export the class as `JsEngine`.

use napi::Env;
use napi_derive::napi;

use super::error::to_js;
use crate::error::EngineError;
use crate::order_desk::frame::read_submit;
use crate::runtime::{self, OrderSubmit};

/// `orderFrameInstrument`: the instrument of a frame the fast path takes, else `None`. Pure.
pub(super) fn frame_instrument(frame: &[u8]) -> Option<String> {
    read_submit(frame).map(|f| f.instrument.to_owned())
}

/// `orderSubmitFrame`: submits the frame's order for `session_id`; its reqId, `None` when the
/// fast path does not take the frame (nothing submitted). Engine errors are thrown as JS errors.
pub(super) fn submit_frame(
    engine: &runtime::Engine,
    env: &Env,
    session_id: u32,
    frame: &[u8],
) -> napi::Result<Option<u32>> {
    let Some(f) = read_submit(frame) else {
        return Ok(None);
    };
    let order = OrderSubmit {
        client_order_id: f.client_order_id.to_owned(),
        instrument: f.instrument.to_owned(),
        side: f.side,
        quantity: f.quantity,
        price: f.price,
        time_in_force: f.time_in_force,
    };
    engine
        .order_submit(session_id, f.req_id, order)
        .map_err(|e| to_js(env, e))?;
    Ok(Some(f.req_id))
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
