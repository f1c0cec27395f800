//! `--mode orders`: the trader connections of the orders preset (STAC durable order flow). The
//! TS side (packages/loadgen/src/presets/native-orders.ts) keeps the instruments' source, the login and
//! the steps; this process sends the orders on schedule and times their answers. One JSON object
//! per line on stdin, each answered by one line, in order:
//!
//! - `{"cmd":"connect"}` opens and logs in the `--clients` connections (with `--token`; with
//!   several `--url` servers, comma-separated, client `c` connects to server `c mod n`):
//!   `{"event":"connected","ready":50,"failed":0,"errors":[]}`.
//! - `{"cmd":"step","firstK":0,"count":260000,"startMs":E,"ratePerSec":20000,"warmEndMs":W}`
//!   starts a step: order `firstK + j` (by client `(firstK + j) mod clients`) is due at
//!   `startMs + j * 1000 / ratePerSec` (epoch ms on the run clock); those due before `warmEndMs`
//!   are sent and checked but not measured. Answered at once: `{"event":"started"}`.
//! - `{"cmd":"cpu"}` -> `{"event":"cpu","cpuUserMicros":u,"cpuSystemMicros":s}` (this process, cumulative).
//! - `{"cmd":"take","waitMs":30000}` answers once the step's orders are all sent and answered, or
//!   `waitMs` after the later of the last send and the command: the measured orders' counters
//!   since the previous take (`submitted`, `acked`, `rejected`, `lastReject`, `outOfOrder`,
//!   `unanswered`: still unanswered then, and forgotten), `sendLatenessSumMs`,
//!   `maxSendLatenessMs`, `createToAck` / `sentToAck` (HDR V2 base64, µs), over the whole run
//!   `orderIds` (distinct acked) and `orderIdGaps`, `unmatchedErrors` / `lastError` (error frames
//!   answering no order), `live`, `dropped`, `dropReason` and the CPU as in `cpu`.
//! - `{"cmd":"stop"}` closes everything and exits (`{"event":"stopped"}`).
//!
//! A bad command gets `{"event":"error","message":...}` in place of its answer.

use crate::args::Args;
use crate::order_stats::{IdSet, OrderStats};
use crate::order_worker::{self, ConnectReport, OrderCommand, OrderWorkerReport, OrderWorkerSpec};
use crate::schedule::{Schedule, Share};
use crate::view_stats::histogram_base64;
use crate::{commands, cpu_micros, emit};
use serde_json::{json, Value};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

type Handle = crate::worker::Handle<OrderCommand>;

/// The `step` command's schedule; Err names the field.
pub fn parse_step(cmd: &Value) -> Result<Schedule, String> {
    let u = |k: &str| {
        cmd.get(k)
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("step needs a non-negative integer '{k}'"))
    };
    let f = |k: &str| {
        cmd.get(k)
            .and_then(Value::as_f64)
            .ok_or_else(|| format!("step needs a number '{k}'"))
    };
    Schedule::new(u("firstK")?, u("count")?, f("startMs")?, f("ratePerSec")?, f("warmEndMs")?)
}

fn take_answer(merged: &OrderStats, reports: &[OrderWorkerReport], ids: &IdSet) -> Value {
    let (user, system) = cpu_micros();
    let sum = |f: fn(&OrderWorkerReport) -> u64| reports.iter().map(f).sum::<u64>();
    let last_error = reports.iter().rev().find_map(|r| r.answers.last_unmatched_error.clone());
    let drop_reason = reports.iter().rev().find_map(|r| r.drop_reason.clone());
    json!({
        "event": "take",
        "submitted": merged.submitted, "acked": merged.acked, "rejected": merged.rejected, "lastReject": merged.last_reject,
        "outOfOrder": merged.out_of_order, "unanswered": sum(|r| r.unanswered),
        "sendLatenessSumMs": merged.send_lateness_sum_ms, "maxSendLatenessMs": merged.max_send_lateness_ms,
        "createToAck": histogram_base64(&merged.create_to_ack), "sentToAck": histogram_base64(&merged.sent_to_ack),
        "orderIds": ids.len(), "orderIdGaps": ids.gaps(),
        "unmatchedErrors": sum(|r| r.answers.unmatched_errors), "lastError": last_error,
        "live": sum(|r| r.live), "dropped": sum(|r| r.dropped), "dropReason": drop_reason,
        "cpuUserMicros": user, "cpuSystemMicros": system
    })
}

/// Runs the order-client process until `stop` or the end of stdin.
pub fn serve(args: &Args) {
    let token: Arc<str> = Arc::from(args.token.clone().unwrap_or_default());
    let threads = (args.threads as u64).min(args.clients).max(1);
    let endpoints: Arc<[crate::args::Endpoint]> = Arc::from(args.endpoints.clone());
    let mut workers: Vec<(Handle, thread::JoinHandle<()>)> = Vec::new();
    for t in 0..threads {
        let (poll, waker) = match crate::worker::new_poll() {
            Ok(p) => p,
            Err(e) => {
                emit(json!({ "event": "error", "message": format!("cannot create poll: {e}") }));
                std::process::exit(1);
            }
        };
        let (tx, rx) = mpsc::channel::<OrderCommand>();
        let spec = OrderWorkerSpec {
            endpoints: endpoints.clone(),
            token: token.clone(),
            id_prefix: args.id_prefix.clone(),
            share: Share {
                clients: args.clients,
                threads,
                thread: t,
            },
            clock: args.clock,
            connect_timeout_ms: args.connect_timeout_ms,
            max_frame_bytes: args.max_frame_bytes,
            min_tick_ms: args.tick_ms,
            spin_ms: args.spin_ms,
        };
        let join = thread::Builder::new()
            .name(format!("orders-{t}"))
            .spawn(move || {
                if let Err(e) = order_worker::run(poll, spec, rx) {
                    emit(json!({ "event": "error", "message": e }));
                    std::process::exit(1);
                }
            })
            .unwrap_or_else(|e| {
                eprintln!("cannot start worker thread: {e}");
                std::process::exit(1)
            });
        workers.push((Handle { tx, waker }, join));
    }
    emit(json!({ "event": "ready", "threads": threads, "mode": "orders" }));
    let mut ids = IdSet::default();
    let connect_bound = Duration::from_secs_f64(args.connect_timeout_ms / 1000.0 + 10.0);

    for cmd in commands() {
        let bad = |message: String| emit(json!({ "event": "error", "message": message }));
        match cmd.get("cmd").and_then(Value::as_str) {
            Some("stop") => break,
            Some("connect") => {
                let (rtx, rrx) = mpsc::channel::<ConnectReport>();
                for (h, _) in &workers {
                    h.send(OrderCommand::Connect(rtx.clone()));
                }
                drop(rtx);
                let mut total = ConnectReport::default();
                let mut answered = 0;
                for _ in 0..workers.len() {
                    let Ok(r) = rrx.recv_timeout(connect_bound) else { break };
                    answered += 1;
                    total.ready += r.ready;
                    total.failed += r.failed;
                    for e in r.errors {
                        if total.errors.len() < 5 && !total.errors.contains(&e) {
                            total.errors.push(e);
                        }
                    }
                }
                if answered == workers.len() {
                    emit(json!({ "event": "connected", "ready": total.ready, "failed": total.failed, "errors": total.errors }));
                } else {
                    bad(format!(
                        "{} of {} workers did not settle their connections in time",
                        workers.len() - answered,
                        workers.len()
                    ));
                }
            }
            Some("step") => match parse_step(&cmd) {
                Ok(s) => {
                    for (h, _) in &workers {
                        h.send(OrderCommand::Step(s));
                    }
                    emit(json!({ "event": "started" }));
                }
                Err(e) => bad(e),
            },
            Some("cpu") => {
                let (user, system) = cpu_micros();
                emit(json!({ "event": "cpu", "cpuUserMicros": user, "cpuSystemMicros": system }));
            }
            Some("take") => {
                let Some(wait_ms) = cmd.get("waitMs").and_then(Value::as_f64).filter(|w| (0.0..=600_000.0).contains(w)) else {
                    bad("take needs 'waitMs' 0..600000".into());
                    continue;
                };
                let (rtx, rrx) = mpsc::channel::<OrderWorkerReport>();
                for (h, _) in &workers {
                    h.send(OrderCommand::Take {
                        reply: rtx.clone(),
                        wait_ms,
                    });
                }
                drop(rtx);
                // a worker answers within wait_ms of its step's end; the TS side takes after the step
                let bound = Duration::from_secs_f64(wait_ms / 1000.0 + 60.0);
                let mut reports = Vec::new();
                for _ in 0..workers.len() {
                    let Ok(r) = rrx.recv_timeout(bound) else { break };
                    reports.push(r);
                }
                if reports.len() < workers.len() {
                    bad(format!(
                        "{} of {} workers gave no report in time",
                        workers.len() - reports.len(),
                        workers.len()
                    ));
                    continue;
                }
                let mut merged = OrderStats::default();
                for r in &mut reports {
                    merged.merge(&r.stats);
                    for id in r.answers.order_ids.drain(..) {
                        ids.add(id);
                    }
                }
                emit(take_answer(&merged, &reports, &ids));
            }
            other => bad(format!("unknown cmd {other:?}: expected connect, step, cpu, take or stop")),
        }
    }
    crate::worker::stop_all(workers, || OrderCommand::Stop);
}

#[cfg(test)]
mod tests {
    use super::parse_step;
    use serde_json::json;

    #[test]
    fn step_commands_are_checked() {
        let s = parse_step(&json!({"firstK": 5, "count": 10, "startMs": 1000.5, "ratePerSec": 200, "warmEndMs": 1010})).unwrap();
        assert_eq!(
            (s.first_k, s.count, s.start_ms, s.rate_per_sec, s.warm_end_ms),
            (5, 10, 1000.5, 200.0, 1010.0)
        );
        assert!(parse_step(&json!({"count": 10, "startMs": 1, "ratePerSec": 2, "warmEndMs": 1}))
            .unwrap_err()
            .contains("firstK"));
        assert!(parse_step(&json!({"firstK": -1, "count": 10, "startMs": 1, "ratePerSec": 2, "warmEndMs": 1})).is_err());
        assert!(
            parse_step(&json!({"firstK": 0, "count": 10, "startMs": 1, "ratePerSec": 0, "warmEndMs": 1}))
                .unwrap_err()
                .contains("ratePerSec")
        );
    }
}
