//! `--mode fix-echo` and `--mode fix-orders`: the timing loops of `tidewire-loadgen run fix-echo`
//! and `run fix-orders` (the TS preset starts the peers and formats the report). Not interactive:
//! the process runs what its arguments say, prints progress lines on stderr and one JSON document
//! on stdout, and exits (0 done, 1 a run failed, 2 bad arguments).
//!
//! - fix-echo (FIX Antenna's single-session echo): per run and per target, one initiator sends
//!   `warmup + messages` FIX 4.2 NewOrderSingles at `rate`, evenly spaced (message k at start +
//!   k / rate, the thread spinning on the monotonic clock); the acceptor echoes each on the same
//!   session; RTT = after reading the echo minus before writing the message (the last `messages`
//!   count). Targets: `bare` (a thread here echoing the bytes as read: the limit of loopback TCP)
//!   and `NAME=HOST:PORT` FIX acceptors. Runs are interleaved (run 1 of every target, then run 2):
//!   on a shared machine each run's neighbours saw the same load.
//! - fix-orders (STAC's shape): per rate, one initiator sends `orders` NewOrderSingles (limit buys
//!   of `symbol` at `price`, quantity 1) evenly spaced; latency = reading the order's
//!   ExecutionReport New (150=0) minus writing the D. Rejected orders (150=8) are counted and
//!   named, not timed.

use crate::fix_conn::{Conn, SessionIds};
use crate::fix_wire::field;
use hdrhistogram::Histogram;
use serde_json::{json, Value};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::time::{Duration, Instant};

/// How long after the last scheduled send a run may take before it fails (generous: on a shared
/// machine a JVM peer still warming up can take minutes to drain a run's backlog).
const GRACE: Duration = Duration::from_secs(300);

/// Usage of the two modes.
pub const USAGE: &str = "usage: tidewire-loadgen-clients --mode fix-echo --target bare --target tidewire=127.0.0.1:9878 \
[--target quickfixj=127.0.0.1:19878] [--messages 200000] [--rate 50000] [--runs 5] [--warmup 20000] [--sender CLIENT] [--target-comp TW]\n\
   or: tidewire-loadgen-clients --mode fix-orders --fix 127.0.0.1:9878 [--rates 1000,5000,20000] [--orders 10000] \
[--begin FIX.4.4] [--sender ORDERS] [--target-comp TW] [--symbol EURUSD] [--price 1] [--id-prefix F1]";

#[derive(Debug)]
struct Target {
    name: String,
    addr: Option<SocketAddr>,
}

fn value<'a>(args: &'a [String], i: usize, name: &str) -> Result<&'a str, String> {
    args.get(i + 1).map(String::as_str).ok_or_else(|| format!("{name} needs a value"))
}

fn number(v: &str, name: &str, min: u64, max: u64) -> Result<u64, String> {
    v.parse::<u64>()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| format!("{name} must be an integer {min}..{max}, got {v:?}"))
}

fn resolve(v: &str, name: &str) -> Result<SocketAddr, String> {
    v.to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| format!("{name} {v:?} is not HOST:PORT"))
}

fn new_hist() -> Histogram<u64> {
    Histogram::<u64>::new_with_bounds(1, 600_000_000_000, 3).expect("histogram bounds are constants")
}

fn us(ns: f64) -> f64 {
    (ns / 100.0).round() / 10.0
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// min, p50 ... p99.99, max and mean of `h` (ns) in µs.
fn echo_summary(h: &Histogram<u64>) -> Value {
    let q = |p: f64| us(h.value_at_quantile(p) as f64);
    json!({
        "count": h.len(), "min": us(h.min() as f64), "p50": q(0.5), "p75": q(0.75), "p90": q(0.9), "p95": q(0.95),
        "p99": q(0.99), "p99.9": q(0.999), "p99.99": q(0.9999), "max": us(h.max() as f64), "mean": us(h.mean()),
    })
}

/// mean, median, p90, p95, p99, max and standard deviation of `h` (ns) in µs (STAC's columns).
fn stac_summary(h: &Histogram<u64>) -> Value {
    let q = |p: f64| us(h.value_at_quantile(p) as f64);
    json!({
        "count": h.len(), "mean": us(h.mean()), "median": q(0.5), "p90": q(0.9), "p95": q(0.95), "p99": q(0.99),
        "max": us(h.max() as f64), "stdDev": us(h.stdev()), "min": us(h.min() as f64),
    })
}

/// A thread echoing the bytes of one connection as read.
fn start_bare() -> io::Result<(SocketAddr, std::thread::JoinHandle<()>)> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let t = std::thread::Builder::new().name("bare-echo".into()).spawn(move || {
        let Ok((mut s, _)) = listener.accept() else { return };
        let _ = s.set_nodelay(true);
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = s.read(&mut buf) {
            if n == 0 || s.write_all(&buf[..n]).is_err() {
                return;
            }
        }
    })?;
    Ok((addr, t))
}

#[derive(Debug)]
struct EchoOpts {
    targets: Vec<Target>,
    messages: u64,
    rate: u64,
    runs: u64,
    warmup: u64,
    sender: String,
    target_comp: String,
}

fn echo_opts(args: &[String]) -> Result<EchoOpts, String> {
    let mut o = EchoOpts {
        targets: Vec::new(),
        messages: 200_000,
        rate: 50_000,
        runs: 5,
        warmup: 20_000,
        sender: "CLIENT".into(),
        target_comp: "TW".into(),
    };
    let mut i = 0;
    while i < args.len() {
        let name = args[i].as_str();
        let v = value(args, i, name)?;
        match name {
            "--mode" => {}
            "--target" if v == "bare" => o.targets.push(Target {
                name: "bare".into(),
                addr: None,
            }),
            "--target" => {
                let (n, a) = v
                    .split_once('=')
                    .ok_or_else(|| format!("--target {v:?} must be bare or NAME=HOST:PORT"))?;
                o.targets.push(Target {
                    name: n.into(),
                    addr: Some(resolve(a, "--target")?),
                });
            }
            "--messages" => o.messages = number(v, name, 1, 100_000_000)?,
            "--rate" => o.rate = number(v, name, 1, 10_000_000)?,
            "--runs" => o.runs = number(v, name, 1, 1000)?,
            "--warmup" => o.warmup = number(v, name, 0, 100_000_000)?,
            "--sender" => o.sender = v.into(),
            "--target-comp" => o.target_comp = v.into(),
            _ => return Err(format!("unknown flag {name}")),
        }
        i += 2;
    }
    if o.targets.is_empty() {
        return Err("--target is required (bare or NAME=HOST:PORT, repeated)".into());
    }
    Ok(o)
}

struct EchoRun {
    rtt: Histogram<u64>,
    late: Histogram<u64>,
    secs: f64,
    msg_bytes: usize,
}

/// NewOrderSingle `k` of the echo (ClOrdID = k).
fn echo_order(c: &mut Conn, k: u64) -> io::Result<usize> {
    let id = k.to_string();
    let now = crate::fix_wire::utc_timestamp();
    c.send(
        "D",
        &[
            (11, &id),
            (21, "1"),
            (55, "EUR/USD"),
            (54, "1"),
            (60, &now),
            (38, "1000000"),
            (40, "2"),
            (44, "1.08345"),
            (59, "0"),
        ],
    )
}

/// One echo run on `c` (FIX targets log on first).
fn echo_drive(c: &mut Conn, fix: bool, o: &EchoOpts) -> io::Result<EchoRun> {
    if fix {
        c.logon()?;
    }
    let total = o.warmup + o.messages;
    let mut sent_at = vec![0u64; total as usize];
    let mut received = vec![false; total as usize];
    let (mut rtt, mut late) = (new_hist(), new_hist());
    let interval_ns = 1e9 / o.rate as f64;
    let deadline = Instant::now() + Duration::from_secs_f64(total as f64 / o.rate as f64) + GRACE;
    let base = Instant::now();
    let (mut next, mut got, mut msg_bytes, mut read_ns) = (0u64, 0u64, 0usize, 0u64);
    while got < total {
        if next < total {
            let due = (next as f64 * interval_ns) as u64;
            if base.elapsed().as_nanos() as u64 >= due {
                let before = base.elapsed().as_nanos() as u64;
                sent_at[next as usize] = before;
                msg_bytes = echo_order(c, next)?;
                if next >= o.warmup {
                    late.record(before.saturating_sub(due).max(1)).ok();
                }
                next += 1;
            }
        }
        c.flush()?;
        if c.poll_read()? {
            read_ns = base.elapsed().as_nanos() as u64;
        }
        while let Some(m) = c.framer.next().map_err(io::Error::other)? {
            match field(m, 35) {
                Some("D") => {}
                Some("0") => continue,
                t => {
                    return Err(io::Error::other(format!(
                        "acceptor answered 35={} {}",
                        t.unwrap_or("?"),
                        field(m, 58).unwrap_or_default()
                    )))
                }
            }
            let k = field(m, 11)
                .and_then(|v| v.parse::<u64>().ok())
                .filter(|&k| k < next && !received[k as usize])
                .ok_or_else(|| io::Error::other("echo with an unknown or repeated ClOrdID"))?;
            received[k as usize] = true;
            got += 1;
            if k >= o.warmup {
                rtt.record(read_ns.saturating_sub(sent_at[k as usize]).max(1)).ok();
            }
        }
        if Instant::now() > deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("{got} of {total} echoes before the deadline"),
            ));
        }
        std::hint::spin_loop();
    }
    let secs = base.elapsed().as_secs_f64();
    if fix {
        c.logout();
    }
    Ok(EchoRun {
        rtt,
        late,
        secs,
        msg_bytes,
    })
}

fn echo_once(t: &Target, o: &EchoOpts) -> io::Result<EchoRun> {
    let ids = SessionIds {
        begin: "FIX.4.2".into(),
        sender: o.sender.clone(),
        target: o.target_comp.clone(),
    };
    match t.addr {
        None => {
            let (addr, th) = start_bare()?;
            let mut c = Conn::connect(addr, ids)?;
            let r = echo_drive(&mut c, false, o);
            drop(c);
            let _ = th.join();
            r
        }
        Some(addr) => echo_drive(&mut Conn::connect(addr, ids)?, true, o),
    }
}

/// Runs fix-echo; returns the report and whether every run succeeded.
fn fix_echo(o: &EchoOpts) -> (Value, bool) {
    let mut ok = true;
    let mut per: Vec<(Vec<Value>, Histogram<u64>, bool)> = o.targets.iter().map(|_| (Vec::new(), new_hist(), false)).collect();
    for run in 1..=o.runs {
        for (t, (runs, all, broken)) in o.targets.iter().zip(per.iter_mut()) {
            if *broken {
                continue;
            }
            let load_before = load_average();
            match echo_once(t, o) {
                Ok(r) => {
                    eprintln!(
                        "fix-echo run {run} {}: p50 {:.1} µs, p99 {:.1} µs, {:.2} s",
                        t.name,
                        us(r.rtt.value_at_quantile(0.5) as f64),
                        us(r.rtt.value_at_quantile(0.99) as f64),
                        r.secs
                    );
                    all.add(&r.rtt).ok();
                    runs.push(json!({
                        "run": run, "rttUs": echo_summary(&r.rtt), "sendLateUs": echo_summary(&r.late),
                        "seconds": (r.secs * 1000.0).round() / 1000.0, "messageBytes": r.msg_bytes,
                        "loadBefore": load_before, "loadAfter": load_average(),
                    }));
                }
                Err(e) => {
                    eprintln!("fix-echo run {run} {}: failed: {e}", t.name);
                    ok = false;
                    // the acceptor may still hold the broken session and refuse the next logon
                    *broken = t.addr.is_some();
                    runs.push(json!({ "run": run, "error": e.to_string(), "loadBefore": load_before, "loadAfter": load_average() }));
                }
            }
        }
    }
    let targets: Vec<Value> = o
        .targets
        .iter()
        .zip(per)
        .map(|(t, (runs, all, _))| {
            json!({
                "target": t.name, "address": t.addr.map(|a| a.to_string()), "runs": runs,
                "allRunsRttUs": if all.is_empty() { Value::Null } else { echo_summary(&all) },
            })
        })
        .collect();
    let doc = json!({
        "mode": "fix-echo", "messages": o.messages, "rate": o.rate, "runs": o.runs, "warmup": o.warmup,
        "targets": targets,
    });
    (doc, ok)
}

#[derive(Debug)]
struct OrderOpts {
    fix: SocketAddr,
    rates: Vec<u64>,
    orders: u64,
    ids: SessionIds,
    symbol: String,
    price: String,
    id_prefix: String,
}

fn order_opts(args: &[String]) -> Result<OrderOpts, String> {
    let mut fix = None;
    let mut o = OrderOpts {
        fix: SocketAddr::from(([127, 0, 0, 1], 9878)),
        rates: vec![1000, 5000, 20_000],
        orders: 10_000,
        ids: SessionIds {
            begin: "FIX.4.4".into(),
            sender: "ORDERS".into(),
            target: "TW".into(),
        },
        symbol: "EURUSD".into(),
        price: "1".into(),
        id_prefix: "F".into(),
    };
    let mut i = 0;
    while i < args.len() {
        let name = args[i].as_str();
        let v = value(args, i, name)?;
        match name {
            "--mode" => {}
            "--fix" => fix = Some(resolve(v, name)?),
            "--rates" => o.rates = v.split(',').map(|r| number(r, name, 1, 1_000_000)).collect::<Result<_, _>>()?,
            "--orders" => o.orders = number(v, name, 1, 100_000_000)?,
            "--begin" if v == "FIX.4.2" || v == "FIX.4.4" => o.ids.begin = v.into(),
            "--begin" => return Err(format!("--begin must be FIX.4.2 or FIX.4.4, got {v:?}")),
            "--sender" => o.ids.sender = v.into(),
            "--target-comp" => o.ids.target = v.into(),
            "--symbol" => o.symbol = v.into(),
            "--price" => o.price = v.into(),
            "--id-prefix" => o.id_prefix = v.into(),
            _ => return Err(format!("unknown flag {name}")),
        }
        i += 2;
    }
    o.fix = fix.ok_or("--fix HOST:PORT is required")?;
    Ok(o)
}

/// One rate of fix-orders: its report.
fn orders_at(o: &OrderOpts, rate: u64) -> io::Result<Value> {
    let mut c = Conn::connect(o.fix, o.ids.clone())?;
    c.logon()?;
    let total = o.orders as usize;
    let prefix = format!("{}-{rate}-", o.id_prefix);
    let mut sent_at = vec![0u64; total];
    let mut done = vec![false; total];
    let (mut lat, mut late) = (new_hist(), new_hist());
    let (mut rejected, mut first_reject) = (0u64, None::<String>);
    let interval_ns = 1e9 / rate as f64;
    let deadline = Instant::now() + Duration::from_secs_f64(total as f64 / rate as f64) + GRACE;
    let load_before = load_average();
    let base = Instant::now();
    let (mut next, mut answered, mut read_ns, mut last_send_ns) = (0usize, 0usize, 0u64, 0u64);
    let fix42 = o.ids.begin == "FIX.4.2";
    while answered < total {
        if next < total {
            let due = (next as f64 * interval_ns) as u64;
            if base.elapsed().as_nanos() as u64 >= due {
                let cl = format!("{prefix}{next}");
                let now = crate::fix_wire::utc_timestamp();
                let mut body: Vec<(u32, &str)> = vec![
                    (11, &cl),
                    (55, &o.symbol),
                    (54, "1"),
                    (60, &now),
                    (38, "1"),
                    (40, "2"),
                    (44, &o.price),
                    (59, "0"),
                ];
                if fix42 {
                    body.insert(1, (21, "1"));
                }
                let before = base.elapsed().as_nanos() as u64;
                sent_at[next] = before;
                c.send("D", &body)?;
                late.record(before.saturating_sub(due).max(1)).ok();
                last_send_ns = before;
                next += 1;
            }
        }
        c.flush()?;
        if c.poll_read()? {
            read_ns = base.elapsed().as_nanos() as u64;
        }
        while let Some(m) = c.framer.next().map_err(io::Error::other)? {
            match field(m, 35) {
                Some("8") => {}
                Some("0") | Some("1") => continue,
                t => {
                    return Err(io::Error::other(format!(
                        "acceptor answered 35={} {}",
                        t.unwrap_or("?"),
                        field(m, 58).unwrap_or_default()
                    )))
                }
            }
            let Some(k) = field(m, 11)
                .and_then(|cl| cl.strip_prefix(prefix.as_str()))
                .and_then(|k| k.parse::<usize>().ok())
                .filter(|&k| k < next)
            else {
                continue; // a report of an order of an earlier run
            };
            match field(m, 150) {
                Some("0") if !done[k] => {
                    done[k] = true;
                    answered += 1;
                    lat.record(read_ns.saturating_sub(sent_at[k]).max(1)).ok();
                }
                Some("8") if !done[k] => {
                    done[k] = true;
                    answered += 1;
                    rejected += 1;
                    first_reject.get_or_insert_with(|| field(m, 58).unwrap_or_default().to_string());
                }
                _ => {}
            }
        }
        if Instant::now() > deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("{answered} of {total} orders answered before the deadline"),
            ));
        }
        std::hint::spin_loop();
    }
    let secs = base.elapsed().as_secs_f64();
    c.logout();
    let send_secs = last_send_ns as f64 / 1e9;
    Ok(json!({
        "rate": rate, "orders": total, "accepted": lat.len(), "rejected": rejected, "firstReject": first_reject,
        "achievedPerSec": if send_secs > 0.0 { (total as f64 - 1.0) / send_secs } else { 0.0 },
        "latencyUs": if lat.is_empty() { Value::Null } else { stac_summary(&lat) },
        "sendLateUs": echo_summary(&late), "seconds": (secs * 1000.0).round() / 1000.0,
        "loadBefore": load_before, "loadAfter": load_average(),
    }))
}

fn fix_orders(o: &OrderOpts) -> (Value, bool) {
    let mut ok = true;
    let mut steps = Vec::new();
    for &rate in &o.rates {
        match orders_at(o, rate) {
            Ok(v) => {
                eprintln!(
                    "fix-orders {rate}/s: median {} µs, p99 {} µs, rejected {}",
                    v["latencyUs"]["median"], v["latencyUs"]["p99"], v["rejected"]
                );
                ok &= v["rejected"] == 0;
                steps.push(v);
            }
            Err(e) => {
                eprintln!("fix-orders {rate}/s: failed: {e}");
                ok = false;
                steps.push(json!({ "rate": rate, "error": e.to_string() }));
            }
        }
    }
    let doc = json!({
        "mode": "fix-orders", "fix": o.fix.to_string(), "beginString": o.ids.begin, "orders": o.orders,
        "symbol": o.symbol, "price": o.price, "steps": steps,
    });
    (doc, ok)
}

/// Runs `--mode fix-echo` or `--mode fix-orders` with `args` (all arguments); the exit status.
pub fn main(mode: &str, args: &[String]) -> i32 {
    let parsed = if mode == "fix-echo" {
        echo_opts(args).map(Ok)
    } else {
        order_opts(args).map(Err)
    };
    let opts = match parsed {
        Ok(o) => o,
        Err(msg) => {
            eprintln!("tidewire-loadgen-clients: {msg}\n\n{USAGE}");
            return 2;
        }
    };
    let (user0, sys0) = crate::cpu_micros();
    let (mut doc, ok) = match &opts {
        Ok(e) => fix_echo(e),
        Err(o) => fix_orders(o),
    };
    let (user1, sys1) = crate::cpu_micros();
    // a saturated generator measures itself: the simulator's own CPU beside the numbers
    doc["generatorCpuSeconds"] = json!(((user1 - user0 + sys1 - sys0) as f64 / 1e4).round() / 100.0);
    println!("{doc}");
    i32::from(!ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn arguments_are_checked_and_named() {
        let o = echo_opts(&strings(&[
            "--mode",
            "fix-echo",
            "--target",
            "bare",
            "--target",
            "tw=127.0.0.1:9",
            "--runs",
            "2",
        ]))
        .unwrap();
        assert_eq!(o.targets.len(), 2);
        assert_eq!(o.targets[1].addr, Some(SocketAddr::from(([127, 0, 0, 1], 9))));
        assert_eq!(o.runs, 2);
        assert!(echo_opts(&strings(&["--runs", "2"])).unwrap_err().contains("--target is required"));
        assert!(echo_opts(&strings(&["--target", "tw"]))
            .unwrap_err()
            .contains("bare or NAME=HOST:PORT"));
        assert!(echo_opts(&strings(&["--target", "bare", "--rate", "0"]))
            .unwrap_err()
            .contains("--rate must be an integer 1.."));
        let f = order_opts(&strings(&["--fix", "127.0.0.1:7", "--rates", "10,20"])).unwrap();
        assert_eq!(f.rates, [10, 20]);
        assert!(order_opts(&strings(&["--rates", "10"]))
            .unwrap_err()
            .contains("--fix HOST:PORT is required"));
    }

    #[test]
    fn the_bare_echo_runs_and_reports_every_column() {
        let o = EchoOpts {
            targets: vec![Target {
                name: "bare".into(),
                addr: None,
            }],
            messages: 200,
            rate: 20_000,
            runs: 2,
            warmup: 20,
            sender: "C".into(),
            target_comp: "T".into(),
        };
        let (doc, ok) = fix_echo(&o);
        assert!(ok, "{doc}");
        let all = &doc["targets"][0]["allRunsRttUs"];
        assert_eq!(all["count"], 400);
        for k in ["min", "p50", "p75", "p90", "p95", "p99", "p99.9", "p99.99", "max"] {
            assert!(all[k].as_f64().is_some_and(|v| v > 0.0), "{k} in {all}");
        }
        assert_eq!(doc["targets"][0]["runs"].as_array().map(Vec::len), Some(2));
    }
}
