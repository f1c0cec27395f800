//! FIX session echo (FIX Antenna's benchmark): one initiator session sends FIX 4.2
//! NewOrderSingles at a fixed rate, evenly spaced; the acceptor echoes each back on the same
//! session; RTT per message = after reading its echo minus before writing it. Reports min,
//! p50, p75, p90, p95, p99, p99.9, p99.99 and max per run, then one JSON document.
//!
//! Targets (loopback only):
//! - `bare`: a thread echoing the bytes as read (the limit of TCP on this machine);
//! - `tidewire`: our `fix::acceptor::Acceptor` with an echo application (a fresh acceptor
//!   per run, sequence numbers in memory);
//! - `tcp://127.0.0.1:PORT`: an external FIX 4.2 acceptor (e.g. QuickFIX/J's, see
//!   `packages/loadgen/fix-peer/`) accepting CLIENT -> TW and echoing NewOrderSingle.
//!
//! The initiator is one thread on a non-blocking socket: it spins on the monotonic clock,
//! writes message k at start + k / rate, and reads echoes between sends. The acceptor side
//! blocks in `read`, so on a 2-core machine the run needs one busy core, not three.
//!
//! `cargo bench --no-default-features --bench fix_echo -- [--target bare,tidewire,tcp://127.0.0.1:9878]
//!  [--messages 200000] [--rate 50000] [--runs 5] [--warmup 20000] [--json out.json]`

use hdrhistogram::Histogram;
use serde_json::{json, Value};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tidewire_engine::fix::acceptor::{
    Acceptor, AcceptorConfig, Application, NewOrderSingle, SessionHandle, SessionSettings,
};
use tidewire_engine::fix::codec::{tag, Builder, Frame, Framer, Parser};
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

#[derive(Clone, Debug)]
enum Target {
    Bare,
    Tidewire,
    External(SocketAddr),
}

impl Target {
    fn parse(s: &str) -> Result<Target, String> {
        match s {
            "bare" => Ok(Target::Bare),
            "tidewire" => Ok(Target::Tidewire),
            _ => {
                let addr: SocketAddr = s
                    .strip_prefix("tcp://")
                    .ok_or_else(|| format!("unknown target {s:?} (bare, tidewire or tcp://127.0.0.1:PORT)"))?
                    .parse()
                    .map_err(|e| format!("target {s:?}: {e}"))?;
                if !addr.ip().is_loopback() {
                    return Err(format!("target {s:?}: loopback addresses only"));
                }
                Ok(Target::External(addr))
            }
        }
    }

    fn name(&self) -> String {
        match self {
            Target::Bare => "bare".into(),
            Target::Tidewire => "tidewire".into(),
            Target::External(a) => format!("tcp://{a}"),
        }
    }

    fn is_fix(&self) -> bool {
        !matches!(self, Target::Bare)
    }
}

struct Opts {
    targets: Vec<Target>,
    messages: u64,
    rate: u64,
    runs: u32,
    warmup: u64,
    json: Option<String>,
}

fn arg_value(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn parse_opts() -> Result<Opts, String> {
    let args: Vec<String> = std::env::args().collect();
    let num = |name: &str, default: u64| -> Result<u64, String> {
        match arg_value(&args, name) {
            Some(v) => v.parse().map_err(|e| format!("{name} {v:?}: {e}")),
            None => Ok(default),
        }
    };
    let targets = arg_value(&args, "--target")
        .unwrap_or_else(|| "bare,tidewire".into())
        .split(',')
        .map(Target::parse)
        .collect::<Result<Vec<_>, _>>()?;
    let o = Opts {
        targets,
        messages: num("--messages", 200_000)?,
        rate: num("--rate", 50_000)?,
        runs: num("--runs", 5)? as u32,
        warmup: num("--warmup", 20_000)?,
        json: arg_value(&args, "--json"),
    };
    if o.messages == 0 || o.rate == 0 || o.runs == 0 {
        return Err("--messages, --rate and --runs must be positive".into());
    }
    Ok(o)
}

fn utc_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// A bare TCP echo: one connection, bytes written back as read.
fn start_bare() -> io::Result<(SocketAddr, std::thread::JoinHandle<()>)> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let t = std::thread::Builder::new().name("bare-echo".into()).spawn(move || {
        let Ok((mut s, _)) = listener.accept() else { return };
        let _ = s.set_nodelay(true);
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match s.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if s.write_all(&buf[..n]).is_err() {
                        return;
                    }
                }
            }
        }
    })?;
    Ok((addr, t))
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

/// The initiator's side of one connection: non-blocking socket, framer, builder.
struct Conn {
    s: TcpStream,
    framer: Framer,
    parser: Parser,
    builder: Builder,
    seq: u64,
    /// Bytes not yet accepted by a non-blocking write.
    unsent: Vec<u8>,
}

impl Conn {
    fn connect(addr: SocketAddr) -> io::Result<Conn> {
        let s = TcpStream::connect(addr)?;
        s.set_nodelay(true)?;
        s.set_nonblocking(true)?;
        Ok(Conn {
            s,
            framer: Framer::new(1 << 16),
            parser: Parser::new(),
            builder: Builder::new(),
            seq: 1,
            unsent: Vec::new(),
        })
    }

    /// Builds message `msg_type` with the standard header and `body` and the next MsgSeqNum.
    fn build(&mut self, msg_type: &[u8], body: impl FnOnce(&mut Builder)) {
        let now = utc_ms();
        self.builder
            .begin(msg_type)
            .field(49, b"CLIENT")
            .field(56, b"TW")
            .field_u64(34, self.seq)
            .field_timestamp(52, now);
        body(&mut self.builder);
        self.builder.finish(b"FIX.4.2");
        self.seq += 1;
    }

    /// Writes the last built message (after anything still unsent) without blocking.
    fn write_built(&mut self) -> io::Result<()> {
        if self.unsent.is_empty() {
            let msg = self.builder.message();
            match self.s.write(msg) {
                Ok(n) if n == msg.len() => return Ok(()),
                Ok(n) => self.unsent.extend_from_slice(&msg[n..]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.unsent.extend_from_slice(msg),
                Err(e) => return Err(e),
            }
            Ok(())
        } else {
            self.unsent.extend_from_slice(self.builder.message());
            self.flush_unsent()
        }
    }

    fn flush_unsent(&mut self) -> io::Result<()> {
        while !self.unsent.is_empty() {
            match self.s.write(&self.unsent) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.unsent.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Reads what is available. Ok(false): nothing to read now.
    fn poll_read(&mut self) -> io::Result<bool> {
        match self.framer.read_from(&mut self.s) {
            Ok(0) => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed by the target",
            )),
            Ok(_) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Waits (spinning, bounded) for the next message and returns its MsgType and Text.
    fn recv(&mut self, deadline: Instant) -> io::Result<(Vec<u8>, String)> {
        loop {
            if let Some(frame) = self.framer.next_frame() {
                let Frame::Message(r) = frame else {
                    return Err(io::Error::other("garbled message from the target"));
                };
                let bytes = &self.framer.bytes()[r];
                let msg = self
                    .parser
                    .parse(bytes)
                    .map_err(|e| io::Error::other(format!("{e:?}")))?;
                let text = msg.get_str(58).unwrap_or_default().to_string();
                return Ok((msg.msg_type().to_vec(), text));
            }
            self.flush_unsent()?;
            if !self.poll_read()? {
                if Instant::now() > deadline {
                    return Err(io::ErrorKind::TimedOut.into());
                }
                std::thread::yield_now();
            }
        }
    }

    fn logon(&mut self) -> io::Result<()> {
        self.build(b"A", |b| {
            b.field(98, b"0").field(108, b"30").field(141, b"Y");
        });
        self.write_built()?;
        let (t, text) = self.recv(Instant::now() + Duration::from_secs(10))?;
        if t != b"A" {
            return Err(io::Error::other(format!(
                "logon answered with 35={} {text}",
                String::from_utf8_lossy(&t)
            )));
        }
        Ok(())
    }

    fn logout(&mut self) {
        self.build(b"5", |_| {});
        if self.write_built().is_err() {
            return;
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while let Ok((t, _)) = self.recv(deadline) {
            if t == b"5" {
                return;
            }
        }
    }
}

/// Builds NewOrderSingle number `k` (ClOrdID = k) for `fix` targets; for the bare echo the
/// same bytes (its MsgSeqNum does not matter).
fn build_order(c: &mut Conn, k: u64) {
    let now = utc_ms();
    c.build(b"D", |b| {
        b.field_u64(11, k)
            .field(21, b"1")
            .field(55, b"EUR/USD")
            .field(54, b"1")
            .field_timestamp(60, now)
            .field(38, b"1000000")
            .field(40, b"2")
            .field(44, b"1.08345")
            .field(59, b"0");
    });
}

/// How long after the last scheduled send a run may take before it is reported as failed.
const GRACE_SECS: f64 = 120.0;

struct RunResult {
    hist: Histogram<u64>,
    /// How late the sends were against their schedule (ns).
    late: Histogram<u64>,
    secs: f64,
    load_before: String,
    load_after: String,
    msg_bytes: usize,
}

fn new_hist() -> Histogram<u64> {
    Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("histogram bounds")
}

/// Sends `warmup + messages` orders at `rate` and records the RTT of the last `messages`.
fn drive(c: &mut Conn, fix: bool, o: &Opts) -> io::Result<RunResult> {
    if fix {
        c.logon()?;
    }
    let total = o.warmup + o.messages;
    let mut sent_at = vec![0u64; total as usize];
    let mut received = vec![false; total as usize];
    let mut hist = new_hist();
    let mut late = new_hist();
    let load_before = load_average();
    let interval_ns = 1e9 / o.rate as f64;
    let deadline = Instant::now() + Duration::from_secs_f64(total as f64 / o.rate as f64 + GRACE_SECS);
    let base = Instant::now();
    let mut next = 0u64;
    let mut got = 0u64;
    let mut msg_bytes = 0;
    let mut last_read_ns = 0u64;
    while got < total {
        let now_ns = base.elapsed().as_nanos() as u64;
        if next < total {
            let due = (next as f64 * interval_ns) as u64;
            if now_ns >= due {
                build_order(c, next);
                msg_bytes = c.builder.message().len();
                let before = base.elapsed().as_nanos() as u64;
                sent_at[next as usize] = before;
                c.write_built()?;
                if next >= o.warmup {
                    late.record(before.saturating_sub(due).max(1)).ok();
                }
                next += 1;
            }
        }
        if !c.unsent.is_empty() {
            c.flush_unsent()?;
        }
        if c.poll_read()? {
            last_read_ns = base.elapsed().as_nanos() as u64;
        }
        while let Some(frame) = c.framer.next_frame() {
            let Frame::Message(r) = frame else {
                return Err(io::Error::other("garbled echo"));
            };
            let bytes = &c.framer.bytes()[r];
            let msg = c.parser.parse(bytes).map_err(|e| io::Error::other(format!("{e:?}")))?;
            match msg.msg_type() {
                b"D" => {}
                b"0" => continue,
                t => {
                    return Err(io::Error::other(format!(
                        "target answered 35={} {}",
                        String::from_utf8_lossy(t),
                        msg.get_str(58).unwrap_or_default()
                    )))
                }
            }
            let k = msg
                .get_u64(tag::CL_ORD_ID)
                .filter(|&k| k < next && !received[k as usize])
                .ok_or_else(|| io::Error::other("echo with an unknown or repeated ClOrdID"))?;
            received[k as usize] = true;
            got += 1;
            if k >= o.warmup {
                let rtt = last_read_ns.saturating_sub(sent_at[k as usize]).max(1);
                hist.record(rtt).ok();
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
    Ok(RunResult {
        hist,
        late,
        secs,
        load_before,
        load_after: load_average(),
        msg_bytes,
    })
}

fn run_once(target: &Target, o: &Opts) -> io::Result<RunResult> {
    match target {
        Target::Bare => {
            let (addr, t) = start_bare()?;
            let mut c = Conn::connect(addr)?;
            let r = drive(&mut c, target.is_fix(), o);
            drop(c);
            let _ = t.join();
            r
        }
        Target::Tidewire => {
            let acceptor = start_tidewire()?;
            let mut c = Conn::connect(acceptor.local_addr())?;
            let r = drive(&mut c, target.is_fix(), o);
            drop(c);
            acceptor.stop();
            r
        }
        Target::External(addr) => {
            let mut c = Conn::connect(*addr)?;
            drive(&mut c, target.is_fix(), o)
        }
    }
}

const QUANTILES: [(&str, f64); 7] = [
    ("p50", 0.50),
    ("p75", 0.75),
    ("p90", 0.90),
    ("p95", 0.95),
    ("p99", 0.99),
    ("p99.9", 0.999),
    ("p99.99", 0.9999),
];

fn us(ns: u64) -> f64 {
    (ns as f64 / 100.0).round() / 10.0
}

fn summary(h: &Histogram<u64>) -> Value {
    let mut m = serde_json::Map::new();
    m.insert("count".into(), json!(h.len()));
    m.insert("min".into(), json!(us(h.min())));
    for (name, q) in QUANTILES {
        m.insert(name.into(), json!(us(h.value_at_quantile(q))));
    }
    m.insert("max".into(), json!(us(h.max())));
    m.insert("mean".into(), json!((h.mean() / 100.0).round() / 10.0));
    Value::Object(m)
}

fn row(label: &str, h: &Histogram<u64>, extra: &str) {
    let mut line = format!("{label:<26} {:>9.1}", us(h.min()));
    for (_, q) in QUANTILES {
        line.push_str(&format!(" {:>9.1}", us(h.value_at_quantile(q))));
    }
    line.push_str(&format!(" {:>9.1}  {extra}", us(h.max())));
    println!("{line}");
}

fn main() {
    let o = match parse_opts() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("fix_echo: {e}");
            std::process::exit(2);
        }
    };
    println!(
        "FIX session echo: {} messages at {}/s after {} warm-up, {} runs per target; RTT in µs",
        o.messages, o.rate, o.warmup, o.runs
    );
    let mut out = Vec::new();
    let mut failed = false;
    for target in &o.targets {
        println!();
        let mut head = format!("{:<26} {:>9}", target.name(), "min");
        for (name, _) in QUANTILES {
            head.push_str(&format!(" {name:>9}"));
        }
        head.push_str(&format!(" {:>9}  send late p99/max µs, load before -> after", "max"));
        println!("{head}");
        let mut all = new_hist();
        let mut runs = Vec::new();
        for run in 1..=o.runs {
            match run_once(target, &o) {
                Ok(r) => {
                    let extra = format!(
                        "{:.1}/{:.1}, {} -> {}",
                        us(r.late.value_at_quantile(0.99)),
                        us(r.late.max()),
                        r.load_before,
                        r.load_after
                    );
                    row(&format!("run {run}"), &r.hist, &extra);
                    all.add(&r.hist).ok();
                    runs.push(json!({
                        "run": run,
                        "rtt_us": summary(&r.hist),
                        "send_late_us": summary(&r.late),
                        "seconds": (r.secs * 1000.0).round() / 1000.0,
                        "message_bytes": r.msg_bytes,
                        "load_before": r.load_before,
                        "load_after": r.load_after,
                    }));
                }
                Err(e) => {
                    println!("run {run}: failed: {e}");
                    failed = true;
                    runs.push(json!({ "run": run, "error": e.to_string() }));
                    if matches!(target, Target::External(_)) {
                        // the acceptor may still hold the broken session and refuse the next logon
                        println!("remaining runs of {} skipped", target.name());
                        break;
                    }
                }
            }
        }
        if !all.is_empty() {
            row("all runs", &all, "");
        }
        out.push(json!({
            "target": target.name(),
            "runs": runs,
            "all_runs_rtt_us": if all.is_empty() { Value::Null } else { summary(&all) },
        }));
    }
    let doc = json!({
        "benchmark": "fix_echo",
        "messages": o.messages,
        "rate": o.rate,
        "warmup": o.warmup,
        "runs": o.runs,
        "targets": out,
    });
    let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    println!();
    println!("{text}");
    if let Some(path) = &o.json {
        if let Err(e) = std::fs::write(path, &text) {
            eprintln!("fix_echo: writing {path}: {e}");
            failed = true;
        }
    }
    if failed {
        std::process::exit(1);
    }
}
