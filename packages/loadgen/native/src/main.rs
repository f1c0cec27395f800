//! `tidewire-loadgen-clients`: the simulated streaming users of `tidewire-loadgen clients`, in
//! Rust so that one core can receive hundreds of thousands of updates per second. The TS CLI
//! spawns it and talks to it over stdin/stdout, one JSON object per line:
//!
//! - in:  `{"cmd":"connect","users":N}` opens N more users (and answers `connected` when each
//!   one is ready or failed), `{"cmd":"report"}` answers `report` with the stats since the
//!   previous report (and resets them), `{"cmd":"recover",...}` starts a recovery round (a cut:
//!   recovery.rs) and `{"cmd":"recovery",...}` answers its measurements once every user
//!   recovered, `{"cmd":"stop"}` closes everything and exits.
//! - out: `{"event":"ready"}` once started, then one answer per command. See
//!   packages/loadgen/README.md for every field.
//!
//! With `--mode views` it simulates view users instead (views.rs documents those commands), with
//! `--mode orders` the order clients of the orders preset (orders.rs). `--mode fix-echo` and
//! `--mode fix-orders` run the FIX presets' timing loops and exit (fix_bench.rs).
//!
//! The process exits by itself after `--max-seconds` or when stdin closes.

mod args;
mod clock;
mod conn;
mod fix_bench;
mod fix_conn;
mod fix_wire;
mod link;
mod order_codec;
mod order_conn;
mod order_stats;
mod order_worker;
mod orders;
mod recovery;
mod scan;
mod schedule;
mod stats;
mod user;
mod view_conn;
mod view_stats;
mod view_worker;
mod views;
mod worker;
mod ws;

use args::Args;
use stats::Stats;
use std::io::{BufRead, Write};
use std::sync::mpsc;
use std::thread;
use worker::{Command, Event, RecoveryReport, WorkerReport, WorkerSpec};

/// Writes one JSON line to stdout (whole lines: the lock is held for the write and flush).
pub(crate) fn emit(value: serde_json::Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{value}");
    let _ = out.flush();
}

/// The JSON command lines of stdin until it ends (or cannot be read): blank lines skipped, a line
/// that is not JSON answered with an `error` line and skipped.
pub(crate) fn commands() -> impl Iterator<Item = serde_json::Value> {
    std::io::stdin().lock().lines().map_while(Result::ok).filter_map(|line| {
        if line.trim().is_empty() {
            return None;
        }
        serde_json::from_str(&line)
            .map_err(|e| emit(serde_json::json!({ "event": "error", "message": format!("command is not JSON: {e}") })))
            .ok()
    })
}

fn raise_fd_limit() -> u64 {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit only read/write the struct we own.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
    lim.rlim_cur
}

/// CPU time of this process so far, µs: (user, system).
pub(crate) fn cpu_micros() -> (u64, u64) {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the struct we own.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    (us(ru.ru_utime), us(ru.ru_stime))
}

/// The round of a `recover` command (`resume`, `cut`, `giveUpMs`, `retryMs`, optional `cutMs`:
/// when the cut happened on the run clock, default now) and whether to cut.
fn recovery_round(cmd: &serde_json::Value, now_ms: f64) -> Result<(recovery::Round, bool), String> {
    let flag = |k: &str| {
        cmd.get(k)
            .and_then(|v| v.as_bool())
            .ok_or_else(|| format!("recover needs '{k}' (true or false)"))
    };
    let ms = |k: &str, max: f64| {
        cmd.get(k)
            .and_then(|v| v.as_f64())
            .filter(|v| *v > 0.0 && *v <= max)
            .ok_or_else(|| format!("recover needs '{k}' (ms, above 0, at most {max})"))
    };
    let (resume, cut) = (flag("resume")?, flag("cut")?);
    let cut_ms = match cmd.get("cutMs") {
        None => now_ms,
        Some(v) => v
            .as_f64()
            .filter(|c| *c > 0.0)
            .ok_or_else(|| "'cutMs' must be a run-clock time, ms".to_string())?,
    };
    let round = recovery::Round {
        resume,
        cut_ms,
        give_up_ms: cut_ms + ms("giveUpMs", 3_600_000.0)?,
        retry_ms: ms("retryMs", 60_000.0)?,
    };
    Ok((round, cut))
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if let Some(mode) = argv
        .windows(2)
        .find(|w| w[0] == "--mode")
        .map(|w| w[1].clone())
        .filter(|m| m.starts_with("fix-"))
    {
        if mode != "fix-echo" && mode != "fix-orders" {
            eprintln!("tidewire-loadgen-clients: unknown mode {mode:?}\n\n{}", fix_bench::USAGE);
            std::process::exit(2);
        }
        std::process::exit(fix_bench::main(&mode, &argv));
    }
    let args = match Args::parse(argv.into_iter()) {
        Ok(a) => a,
        Err(msg) => {
            eprintln!("tidewire-loadgen-clients: {msg}\n\n{}", args::USAGE);
            std::process::exit(2);
        }
    };
    let fd_limit = raise_fd_limit();
    let max_seconds = args.max_seconds;
    thread::spawn(move || {
        thread::sleep(std::time::Duration::from_secs_f64(max_seconds));
        emit(serde_json::json!({ "event": "error", "message": format!("stopped after --max-seconds {max_seconds}") }));
        std::process::exit(3);
    });

    if args.mode == args::Mode::Views {
        views::serve(&args);
        return;
    }
    if args.mode == args::Mode::Orders {
        orders::serve(&args);
        return;
    }
    let (event_tx, event_rx) = mpsc::channel::<Event>();
    let mut workers = Vec::new();
    for i in 0..args.threads {
        let (poll, waker) = match worker::new_poll() {
            Ok(p) => p,
            Err(e) => {
                emit(serde_json::json!({ "event": "error", "message": format!("cannot create poll: {e}") }));
                std::process::exit(1);
            }
        };
        let (tx, rx) = mpsc::channel::<Command>();
        let spec = WorkerSpec {
            addr: args.addr,
            conn: args.conn_spec(),
            clock: args.clock,
            max_connecting: args.max_connecting,
            connect_timeout_ms: args.connect_timeout_ms,
        };
        let events = event_tx.clone();
        let handle = thread::Builder::new()
            .name(format!("clients-{i}"))
            .spawn(move || worker::run(poll, spec, rx, events))
            .unwrap_or_else(|e| {
                eprintln!("cannot start worker thread: {e}");
                std::process::exit(1)
            });
        workers.push((tx, waker, handle));
    }
    emit(serde_json::json!({ "event": "ready", "threads": args.threads, "fdLimit": fd_limit }));

    let mut next_user = args.user_offset;
    let mut ready_total = 0u64;
    for cmd in commands() {
        match cmd.get("cmd").and_then(|c| c.as_str()) {
            Some("connect") => {
                let Some(n) = cmd.get("users").and_then(|u| u.as_u64()).filter(|n| *n <= 1_000_000) else {
                    emit(serde_json::json!({ "event": "error", "message": "'users' must be an integer 0..1000000" }));
                    continue;
                };
                let mut batches: Vec<Vec<(u64, Vec<String>)>> = vec![Vec::new(); workers.len()];
                for k in 0..n {
                    let user = next_user + k;
                    batches[(user % workers.len() as u64) as usize].push((user, args.subjects_for(user)));
                }
                next_user += n;
                for ((tx, waker, _), batch) in workers.iter().zip(batches) {
                    let _ = tx.send(Command::Connect(batch));
                    let _ = waker.wake();
                }
                let (mut ok, mut failed) = (0u64, 0u64);
                let mut errors: Vec<String> = Vec::new();
                while ok + failed < n {
                    match event_rx.recv() {
                        Ok(Event::Settled(Ok(()))) => ok += 1,
                        Ok(Event::Settled(Err(reason))) => {
                            failed += 1;
                            if errors.len() < 5 && !errors.contains(&reason) {
                                errors.push(reason);
                            }
                        }
                        Err(_) => break,
                    }
                }
                ready_total += ok;
                emit(serde_json::json!({
                    "event": "connected", "requested": n, "ready": ok, "failed": failed, "errors": errors, "totalReady": ready_total
                }));
            }
            Some("report") => {
                let mut merged = Stats::default();
                let (mut live, mut dropped, mut reason) = (0u64, 0u64, None);
                for (tx, waker, _) in &workers {
                    let (rtx, rrx) = mpsc::channel::<WorkerReport>();
                    let _ = tx.send(Command::Report(rtx));
                    let _ = waker.wake();
                    if let Ok(r) = rrx.recv() {
                        merged.merge(&r.stats);
                        live += r.live;
                        dropped += r.dropped;
                        reason = reason.or(r.last_drop_reason);
                    }
                }
                let (user, system) = cpu_micros();
                let h = &merged.latency;
                let pct = |q: f64| if h.is_empty() { 0 } else { h.value_at_quantile(q) };
                emit(serde_json::json!({
                    "event": "report",
                    "clockMs": args.clock.now_ms(),
                    "updates": merged.updates, "images": merged.images, "lost": merged.lost,
                    "outOfOrder": merged.out_of_order, "conflated": merged.conflated,
                    "negativeLatency": merged.negative_latency, "frames": merged.frames, "bytes": merged.bytes,
                    "live": live, "dropped": dropped, "dropReason": reason,
                    "latencyMicros": {
                        "count": h.len(), "mean": if h.is_empty() { 0.0 } else { h.mean() },
                        "min": if h.is_empty() { 0 } else { h.min() }, "p50": pct(0.5), "p90": pct(0.9),
                        "p99": pct(0.99), "p999": pct(0.999), "max": h.max()
                    },
                    "histogram": merged.histogram_base64(),
                    "cpuUserMicros": user, "cpuSystemMicros": system
                }));
            }
            Some("recover") => match recovery_round(&cmd, args.clock.now_ms()) {
                Ok((round, cut)) => {
                    let mut users = 0u64;
                    let mut replies = Vec::new();
                    // every worker gets the command before any answers: the cut is one instant
                    for (tx, waker, _) in &workers {
                        let (rtx, rrx) = mpsc::channel::<u64>();
                        let _ = tx.send(Command::Recover { round, cut, reply: rtx });
                        let _ = waker.wake();
                        replies.push(rrx);
                    }
                    for r in replies {
                        users += r.recv().unwrap_or(0);
                    }
                    let (user, system) = cpu_micros();
                    emit(serde_json::json!({
                        "event": "recovering", "cutMs": round.cut_ms, "cut": users, "doneMs": args.clock.now_ms(),
                        "cpuUserMicros": user, "cpuSystemMicros": system
                    }));
                }
                Err(message) => emit(serde_json::json!({ "event": "error", "message": message })),
            },
            Some("recovery") => {
                let (Some(expect), Some(wait_ms)) = (
                    cmd.get("expect").and_then(|u| u.as_u64()),
                    cmd.get("waitMs").and_then(|u| u.as_f64()).filter(|w| *w >= 0.0),
                ) else {
                    emit(serde_json::json!({ "event": "error", "message": "recovery needs 'expect' (users) and 'waitMs' (>= 0)" }));
                    continue;
                };
                let cut_ms = cmd.get("cutMs").and_then(|c| c.as_f64()).unwrap_or(0.0);
                let deadline = args.clock.now_ms() + wait_ms;
                let take = |take: bool| {
                    let mut rec = recovery::RecoveryStats::default();
                    let mut stats = Stats::default();
                    let mut live = 0;
                    for (tx, waker, _) in &workers {
                        let (rtx, rrx) = mpsc::channel::<RecoveryReport>();
                        let _ = tx.send(Command::Recovery { take, reply: rtx });
                        let _ = waker.wake();
                        if let Ok(r) = rrx.recv() {
                            rec.merge(&r.recovery);
                            stats.merge(&r.stats);
                            live += r.live;
                        }
                    }
                    (rec, stats, live)
                };
                // poll the workers until every expected user recovered or gave up, or the wait ends
                let settled = loop {
                    let (rec, _, _) = take(false);
                    if rec.users >= expect && rec.settled() {
                        break true;
                    }
                    if args.clock.now_ms() >= deadline {
                        break false;
                    }
                    thread::sleep(std::time::Duration::from_millis(10));
                };
                let (rec, stats, live) = take(true);
                let (user, system) = cpu_micros();
                let mut answer = rec.to_json(cut_ms);
                if let Some(o) = answer.as_object_mut() {
                    for (k, v) in [
                        ("event", serde_json::json!("recovery")),
                        ("settled", settled.into()),
                        ("live", live.into()),
                        ("updates", stats.updates.into()),
                        ("images", stats.images.into()),
                        ("lost", stats.lost.into()),
                        ("outOfOrder", stats.out_of_order.into()),
                        ("conflated", stats.conflated.into()),
                        ("frames", stats.frames.into()),
                        ("bytes", stats.bytes.into()),
                        ("clockMs", args.clock.now_ms().into()),
                        ("cpuUserMicros", user.into()),
                        ("cpuSystemMicros", system.into()),
                    ] {
                        o.insert(k.to_string(), v);
                    }
                }
                emit(answer);
            }
            Some("stop") => break,
            other => emit(serde_json::json!({
                "event": "error", "message": format!("unknown cmd {other:?}: expected connect, report, recover, recovery or stop")
            })),
        }
    }
    for (tx, waker, _) in &workers {
        let _ = tx.send(Command::Stop);
        let _ = waker.wake();
    }
    for (_, _, handle) in workers {
        let _ = handle.join();
    }
    emit(serde_json::json!({ "event": "stopped" }));
}
