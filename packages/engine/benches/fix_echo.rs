//! FIX session echo (FIX Antenna's benchmark) against our acceptor inside this process: starts
//! `fix::acceptor::Acceptor` with an echo application (a fresh acceptor, sequence numbers in
//! memory) on 127.0.0.1 and runs the load generator's timing loop against it
//! (`tidewire-loadgen-clients --mode fix-echo`, packages/loadgen/native/src/fix_bench.rs: one
//! initiator sends FIX 4.2 NewOrderSingles at a fixed rate, evenly spaced; RTT per message = after
//! reading its echo minus before writing it). The same loop measures the other targets in the same
//! sitting, runs interleaved:
//! - `bare`: a thread echoing the bytes as read (the limit of TCP on this machine);
//! - `tidewire`: the acceptor started here;
//! - `tcp://127.0.0.1:PORT`: an external FIX 4.2 acceptor (e.g. QuickFIX/J's, see
//!   `packages/loadgen/fix-peer/`) accepting CLIENT -> TW and echoing NewOrderSingle.
//!
//! Needs the load generator's simulator built (`npm run build`, or `cargo build --release
//! --manifest-path packages/loadgen/native/Cargo.toml`).
//!
//! `cargo bench --no-default-features --bench fix_echo -- [--target bare,tidewire,tcp://127.0.0.1:9878]
//!  [--messages 200000] [--rate 50000] [--runs 5] [--warmup 20000] [--json out.json]`

use serde_json::Value;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use tidewire_engine::fix::acceptor::{
    Acceptor, AcceptorConfig, Application, NewOrderSingle, SessionHandle, SessionSettings,
};
use tidewire_engine::fix::dictionary::Dictionary;
use tidewire_engine::fix::session::{BusinessReject, Outbox, SessionConfig, SystemClock};

/// Header and trailer fields the initiator sends; the session writes its own.
const SESSION_FIELDS: [i32; 11] = [8, 9, 35, 49, 56, 34, 52, 43, 97, 122, 10];

/// Echoes a NewOrderSingle as a new NewOrderSingle with the same body (the session writes a
/// new standard header). Unlike the acceptance suite's `EchoApplication` it keeps no ClOrdIDs.
struct Echo;

impl Application for Echo {
    fn on_new_order(
        &self,
        order: &NewOrderSingle<'_>,
        reply: &mut Outbox,
        _session: &SessionHandle,
    ) -> Result<(), BusinessReject> {
        let msg = order.message();
        let mut w = reply.message(b"D");
        for (t, v) in msg.fields() {
            if t <= 0 || SESSION_FIELDS.contains(&t) {
                continue;
            }
            w.field(t as u32, v);
        }
        Ok(())
    }
}

/// The simulator binary, next to this crate in the checkout.
fn simulator() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../loadgen/native/target/release/tidewire-loadgen-clients")
}

/// The value after `name` in `args`.
fn arg_value(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn start_tidewire() -> io::Result<Acceptor> {
    let settings = SessionSettings {
        config: SessionConfig::new(Dictionary::fix42(), "TW", "CLIENT"),
        user: "bench".into(),
    };
    let cfg = AcceptorConfig::new("127.0.0.1:0".parse().map_err(io::Error::other)?, vec![settings]);
    let app = Arc::new(Echo);
    Acceptor::start(cfg, app, Arc::new(SystemClock::default()))
}

/// `--target` entries as the simulator takes them (`bare`, `NAME=HOST:PORT`); starts the acceptor
/// when `tidewire` is one of them.
fn targets(list: &str) -> Result<(Vec<String>, Option<Acceptor>), String> {
    let mut out = Vec::new();
    let mut acceptor = None;
    for t in list.split(',') {
        match t {
            "bare" => out.push("bare".to_string()),
            "tidewire" => {
                let a = start_tidewire().map_err(|e| format!("starting the acceptor: {e}"))?;
                out.push(format!("tidewire={}", a.local_addr()));
                acceptor = Some(a);
            }
            _ => {
                let addr: SocketAddr = t
                    .strip_prefix("tcp://")
                    .ok_or_else(|| format!("unknown target {t:?} (bare, tidewire or tcp://127.0.0.1:PORT)"))?
                    .parse()
                    .map_err(|e| format!("target {t:?}: {e}"))?;
                if !addr.ip().is_loopback() {
                    return Err(format!("target {t:?}: loopback addresses only"));
                }
                out.push(format!("{t}={addr}"));
            }
        }
    }
    Ok((out, acceptor))
}

/// One row per run and an all-runs row per target from the simulator's report.
fn print_table(doc: &Value) {
    const COLS: [&str; 10] = [
        "min", "p50", "p75", "p90", "p95", "p99", "p99.9", "p99.99", "max", "mean",
    ];
    let row = |label: &str, v: &Value, extra: &str| {
        let mut line = format!("{label:<26}");
        for c in COLS {
            line.push_str(&format!(" {:>9.1}", v[c].as_f64().unwrap_or(f64::NAN)));
        }
        println!("{line}  {extra}");
    };
    for t in doc["targets"].as_array().into_iter().flatten() {
        println!();
        let mut head = format!("{:<26}", t["target"].as_str().unwrap_or("?"));
        for c in COLS {
            head.push_str(&format!(" {c:>9}"));
        }
        println!("{head}  load before -> after");
        for r in t["runs"].as_array().into_iter().flatten() {
            let label = format!("run {}", r["run"]);
            let load = format!(
                "{} -> {}",
                r["loadBefore"].as_str().unwrap_or(""),
                r["loadAfter"].as_str().unwrap_or("")
            );
            match r["error"].as_str() {
                Some(e) => println!("{label:<26} failed: {e}  {load}"),
                None => row(&label, &r["rttUs"], &load),
            }
        }
        if !t["allRunsRttUs"].is_null() {
            row("all runs", &t["allRunsRttUs"], "");
        }
    }
}

fn run() -> Result<bool, String> {
    let args: Vec<String> = std::env::args().collect();
    let (targets, acceptor) = targets(&arg_value(&args, "--target").unwrap_or_else(|| "bare,tidewire".into()))?;
    let bin = simulator();
    if !bin.exists() {
        return Err(format!("{} is missing: build it first (npm run build)", bin.display()));
    }
    let mut cmd = Command::new(&bin);
    cmd.args(["--mode", "fix-echo"]);
    for t in &targets {
        cmd.args(["--target", t]);
    }
    for flag in ["--messages", "--rate", "--runs", "--warmup"] {
        if let Some(v) = arg_value(&args, flag) {
            cmd.args([flag, &v]);
        }
    }
    // progress lines (stderr) pass through; the report comes on stdout
    let out = cmd
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("running {}: {e}", bin.display()))?;
    if let Some(a) = acceptor {
        a.stop();
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let doc: Value =
        serde_json::from_str(text.trim()).map_err(|e| format!("the simulator's report is not JSON ({e}): {text}"))?;
    println!(
        "FIX session echo: {} messages at {}/s after {} warm-up, {} runs per target; RTT in µs",
        doc["messages"], doc["rate"], doc["warmup"], doc["runs"]
    );
    print_table(&doc);
    let pretty = serde_json::to_string_pretty(&doc).unwrap_or_default();
    println!();
    println!("{pretty}");
    if let Some(path) = arg_value(&args, "--json") {
        std::fs::write(&path, &pretty).map_err(|e| format!("writing {path}: {e}"))?;
    }
    Ok(out.status.success())
}

fn main() {
    match run() {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("fix_echo: {e}");
            std::process::exit(2);
        }
    }
}
