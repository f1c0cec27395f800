//! napi: the `order.submit` fast path. The server hands a client frame's bytes to the engine as is
//! (`orders::frame::read_submit` reads them), so a trader's order costs no `JSON.parse`, no JS
//! object and no per-field napi conversion. Frames the fast path does not take give null and go
//! through the protocol decoder and `orderSubmit` as before. The `#[napi]` methods
//! (`orderFrameInstrument`, `orderSubmitFrame`) sit in mod.rs's `impl JsEngine`: a second
//! `#[napi] impl` block outside the struct's module would export the class as `JsEngine`.

use napi::Env;

use super::error::to_js;
use crate::error::EngineError;
use crate::orders::frame::{read_submit, SubmitFrame};
use crate::runtime::{self, OrderSubmit};

/// `orderFrameInstrument`: the instrument of a frame the fast path takes, else `None`. Pure.
pub(super) fn frame_instrument(frame: &[u8]) -> Option<String> {
    read_submit(frame).map(|f| f.instrument.to_owned())
}

fn submit_of(f: &SubmitFrame<'_>) -> OrderSubmit {
    OrderSubmit {
        client_order_id: f.client_order_id.to_owned(),
        instrument: f.instrument.to_owned(),
        side: f.side,
        quantity: f.quantity,
        price: f.price,
        time_in_force: f.time_in_force,
    }
}

/// The orders of `orderSubmitFrames`: frame `i` is `data[index[2i] .. index[2i] + index[2i+1]]`
/// of session `sessions[i]`. BAD_REQUEST naming the first frame the fast path does not take (or
/// an index past `data`, or index/sessions of different lengths).
fn read_batch(sessions: &[u32], data: &[u8], index: &[u32]) -> crate::error::Result<Vec<(u32, u32, OrderSubmit)>> {
    let bad = |message: String, i: usize| EngineError::BadRequest {
        message,
        field: Some("frames".into()),
        index: Some(i as u32),
    };
    if index.len() != sessions.len() * 2 {
        return Err(bad(
            format!(
                "index has {} entries for {} sessions: it must hold an (offset, length) pair per session",
                index.len(),
                sessions.len()
            ),
            0,
        ));
    }
    let mut out = Vec::with_capacity(sessions.len());
    for (i, &sid) in sessions.iter().enumerate() {
        let (offset, len) = (index[2 * i] as usize, index[2 * i + 1] as usize);
        let frame = data.get(offset..offset.saturating_add(len)).ok_or_else(|| {
            bad(
                format!("frame {i} ({offset}+{len}) is past the data ({} bytes)", data.len()),
                i,
            )
        })?;
        let f = read_submit(frame)
            .ok_or_else(|| bad(format!("frame {i} is not an order.submit the fast path takes"), i))?;
        out.push((sid, f.req_id, submit_of(&f)));
    }
    Ok(out)
}

/// `orderSubmitFrames`: submits every frame's order as one engine command (in order); nothing
/// when any frame is refused (thrown as BAD_REQUEST naming it) or orders are unavailable.
pub(super) fn submit_frames(
    engine: &runtime::Engine,
    env: &Env,
    sessions: &[u32],
    data: &[u8],
    index: &[u32],
) -> napi::Result<()> {
    let orders = read_batch(sessions, data, index).map_err(|e| to_js(env, e))?;
    engine.order_submit_batch(orders).map_err(|e| to_js(env, e))
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
    engine
        .order_submit(session_id, f.req_id, submit_of(&f))
        .map_err(|e| to_js(env, e))?;
    Ok(Some(f.req_id))
}
