//! napi: the `order.submit` fast path. The server hands a client frame's bytes to the engine as is
//! (`orders::frame::read_submit` reads them), so a trader's order costs no `JSON.parse`, no JS
//! object and no per-field napi conversion. Frames the fast path does not take give null and go
//! through the protocol decoder and `orderSubmit` as before. The `#[napi]` methods
//! (`orderFrameInstrument`, `orderSubmitFrame`) sit in mod.rs's `impl JsEngine`: a second
//! `#[napi] impl` block outside the struct's module would export the class as `JsEngine`.

use napi::Env;

use super::error::to_js;
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
