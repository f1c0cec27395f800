//! `--mode views`: simulated view users (the finder and blotter presets). One JSON object per
//! line on stdin, every command carrying an `id` that its answer repeats:
//!
//! - `{"id":1,"cmd":"openView","index":7,"token":"T","request":"{\"type\":\"view.create\",...}"}`
//!   connects user 7, logs in with the token and sends the request (the `view.create` the TS side
//!   encoded, its `reqId` replaced). Answered when it ends, in any order relative to other
//!   commands: `{"event":"opened","id":1,"ok":true,"viewId":1,"count":120,"latencyMs":3.2}` or
//!   `{"event":"opened","id":1,"ok":false,"error":"..."}`.
//! - `{"id":2,"cmd":"closeUser","index":7}` -> `{"event":"done","id":2}` (no-op when not open).
//! - `{"id":3,"cmd":"closeAll"}` -> `{"event":"done","id":3}` once every socket is shut.
//! - `{"id":4,"cmd":"take"}` -> `{"event":"take","id":4,...}`: the counters of view-users.ts
//!   `ViewUsersReport` since the previous take (and `lost`, `outOfOrder`, `negativeLatency`), the
//!   response and row histograms (HDR V2 base64, µs) and the process's CPU (µs, cumulative).
//! - `{"cmd":"stop"}` closes everything and exits (`{"event":"stopped"}`).
//!
//! Unprompted: `{"event":"left","rows":[[subject, recvEpochMs], ...]}` with `--report-left true`
//! (rows that left a window; the TS side times them from the source's send times), always before
//! the answer of a later `take`; `{"event":"error","message":...}` for a bad command line.
//! The stdin loop never waits on a socket: workers take commands from a channel after each poll.

use crate::args::Args;
use crate::view_conn::ViewSpec;
use crate::view_stats::{histogram_base64, ViewStats};
use crate::view_worker::{self, OpenView, ViewCommand, ViewWorkerReport, ViewWorkerSpec};
use crate::{commands, cpu_micros, emit};
use serde_json::{json, Value};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::Duration;
use tidewire_protocol::messages::kind;

type Handle = crate::worker::Handle<ViewCommand>;

/// A `view.create` request text from the TS side, checked: a JSON object of type `view.create`.
pub fn parse_request(text: &str) -> Result<serde_json::Map<String, Value>, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) if m.get("type").and_then(Value::as_str) == Some(kind::VIEW_CREATE) => Ok(m),
        Ok(_) => Err("'request' must be a view.create object".into()),
        Err(e) => Err(format!("'request' is not JSON: {e}")),
    }
}

fn take_answer(id: u64, merged: &ViewStats, live: u64, dropped: u64, reason: Option<String>) -> Value {
    let (user, system) = cpu_micros();
    json!({
        "event": "take", "id": id,
        "created": merged.created, "createErrors": merged.create_errors, "lastError": merged.last_error,
        "timeouts": merged.timeouts, "entered": merged.entered, "left": merged.left, "updated": merged.updated,
        "lost": merged.lost, "outOfOrder": merged.out_of_order, "negativeLatency": merged.negative_latency,
        "frames": merged.frames, "bytes": merged.bytes, "live": live, "dropped": dropped, "dropReason": reason,
        "response": histogram_base64(&merged.response), "rows": histogram_base64(&merged.rows),
        "cpuUserMicros": user, "cpuSystemMicros": system
    })
}

/// Runs the view-user process until `stop` or the end of stdin.
pub fn serve(args: &Args) {
    let mut workers: Vec<(Handle, thread::JoinHandle<()>)> = Vec::new();
    for i in 0..args.threads {
        let (poll, waker) = match crate::worker::new_poll() {
            Ok(p) => p,
            Err(e) => {
                emit(json!({ "event": "error", "message": format!("cannot create poll: {e}") }));
                std::process::exit(1);
            }
        };
        let (tx, rx) = mpsc::channel::<ViewCommand>();
        let spec = ViewWorkerSpec {
            addr: args.addr,
            conn: ViewSpec {
                host: args.host.clone(),
                path: args.path.clone(),
                max_frame_bytes: args.max_frame_bytes,
                light: args.light,
                report_left: args.report_left,
            },
            clock: args.clock,
            max_connecting: args.max_connecting,
            connect_timeout_ms: args.connect_timeout_ms,
            response_timeout_ms: args.response_timeout_ms,
        };
        let join = thread::Builder::new()
            .name(format!("views-{i}"))
            .spawn(move || view_worker::run(poll, spec, rx))
            .unwrap_or_else(|e| {
                eprintln!("cannot start worker thread: {e}");
                std::process::exit(1)
            });
        workers.push((Handle { tx, waker }, join));
    }
    emit(json!({ "event": "ready", "threads": args.threads, "mode": "views" }));
    // bounds a worker's answer to closeAll/take: a worker stuck that long is a bug worth an error line
    let reply_timeout = Duration::from_secs(30);
    let n = workers.len() as u64;

    for cmd in commands() {
        let id = cmd.get("id").and_then(Value::as_u64);
        let bad = |message: String| emit(json!({ "event": "error", "id": id, "message": message }));
        let name = cmd.get("cmd").and_then(Value::as_str);
        if name == Some("stop") {
            break;
        }
        let Some(id) = id else {
            bad("every command but stop needs an integer 'id'".into());
            continue;
        };
        match name {
            Some("openView") => {
                let index = cmd.get("index").and_then(Value::as_u64);
                let token = cmd.get("token").and_then(Value::as_str);
                let request = cmd
                    .get("request")
                    .and_then(Value::as_str)
                    .ok_or_else(|| "'request' must be a string".to_string());
                let (Some(index), Some(token)) = (index, token) else {
                    bad("openView needs an integer 'index' and a string 'token'".into());
                    continue;
                };
                match request.and_then(parse_request) {
                    Ok(request) => workers[(index % n) as usize].0.send(ViewCommand::Open(OpenView {
                        cmd_id: id,
                        index,
                        token: Arc::from(token),
                        request,
                    })),
                    Err(e) => emit(json!({ "event": "opened", "id": id, "ok": false, "error": e })),
                }
            }
            Some("closeUser") => {
                let Some(index) = cmd.get("index").and_then(Value::as_u64) else {
                    bad("closeUser needs an integer 'index'".into());
                    continue;
                };
                workers[(index % n) as usize].0.send(ViewCommand::CloseUser(index));
                emit(json!({ "event": "done", "id": id }));
            }
            Some("closeAll") => {
                let (rtx, rrx) = mpsc::channel::<()>();
                for (h, _) in &workers {
                    h.send(ViewCommand::CloseAll(rtx.clone()));
                }
                drop(rtx);
                let answered = (0..n).filter(|_| rrx.recv_timeout(reply_timeout).is_ok()).count() as u64;
                if answered == n {
                    emit(json!({ "event": "done", "id": id }));
                } else {
                    bad(format!("{} of {n} workers did not close their users within 30 s", n - answered));
                }
            }
            Some("take") => {
                let mut merged = ViewStats::default();
                let (mut live, mut dropped, mut reason) = (0u64, 0u64, None);
                let mut answered = 0;
                for (h, _) in &workers {
                    let (rtx, rrx) = mpsc::channel::<ViewWorkerReport>();
                    h.send(ViewCommand::Take(rtx));
                    if let Ok(r) = rrx.recv_timeout(reply_timeout) {
                        merged.merge(&r.stats);
                        live += r.live;
                        dropped += r.dropped;
                        reason = reason.or(r.drop_reason);
                        answered += 1;
                    }
                }
                if answered == workers.len() {
                    emit(take_answer(id, &merged, live, dropped, reason));
                } else {
                    bad(format!("{} of {n} workers gave no stats within 30 s", workers.len() - answered));
                }
            }
            other => bad(format!(
                "unknown cmd {other:?}: expected openView, closeUser, closeAll, take or stop"
            )),
        }
    }
    crate::worker::stop_all(workers, || ViewCommand::Stop);
}

#[cfg(test)]
mod tests {
    use super::parse_request;

    #[test]
    fn accepts_only_view_create_objects() {
        let m = parse_request(r#"{"type":"view.create","reqId":0,"container":"/C","window":{"offset":0,"size":5}}"#).unwrap();
        assert_eq!(m["container"], "/C");
        assert!(parse_request(r#"{"type":"record.subscribe"}"#).is_err());
        assert!(parse_request("[1]").is_err());
        assert!(parse_request("{").unwrap_err().contains("not JSON"));
    }
}
