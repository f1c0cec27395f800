//! Shared helpers of the engine's non-criterion benches (`journal`, `orders`, `memory`):
//! command-line flags, process RSS and thread CPU time, and the latency percentile table.
//! Each bench includes it with `#[path = "support/mod.rs"] mod support;` and uses what it needs.
#![allow(dead_code)]

/// The value after flag `name` (`--secs 5` -> `Some("5")`); `None` when absent or last.
pub fn arg_value(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

/// True when flag `name` is present.
pub fn has_flag(args: &[String], name: &str) -> bool {
    args.iter().any(|a| a == name)
}

/// Resident set size of this process in bytes (`/proc/self/statm`, 4 KiB pages); 0 off Linux.
pub fn rss_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// Flags of the paced-latency benches (`journal`, `orders`):
/// `--secs N --rates a,b,c --dir PATH --no-fsync` (unknown flags, e.g. cargo's `--bench`, are skipped).
#[derive(Debug, Clone)]
pub struct RateArgs {
    /// Seconds per paced rate.
    pub secs: u64,
    /// Paced rates, per second.
    pub rates: Vec<u64>,
    /// Journal directory (wiped per run).
    pub dir: std::path::PathBuf,
    /// false with `--no-fsync` (journal without fdatasync: the CPU cost without the disk).
    pub fsync: bool,
}

/// Parses `std::env::args()`; `default_secs` per rate, journal under `default_dir` unless `--dir`.
/// Panics with the flag's usage on a malformed value (a bench's command line, not user input).
pub fn rate_args(default_secs: u64, default_dir: std::path::PathBuf) -> RateArgs {
    let v: Vec<String> = std::env::args().collect();
    let mut a = RateArgs {
        secs: default_secs,
        rates: vec![1_000, 5_000, 10_000, 20_000],
        dir: default_dir,
        fsync: !has_flag(&v, "--no-fsync"),
    };
    if let Some(s) = arg_value(&v, "--secs") {
        a.secs = s.parse().expect("--secs N");
    }
    if let Some(s) = arg_value(&v, "--rates") {
        a.rates = s.split(',').map(|r| r.parse().expect("--rates a,b,c")).collect();
    }
    if let Some(s) = arg_value(&v, "--dir") {
        a.dir = s.into();
    }
    a
}

/// First columns of every latency table row (`rate_row` fills them).
pub const RATE_COLUMNS: &str =
    "| rate (orders/s) | orders | achieved/s | mean µs | p50 µs | p90 µs | p95 µs | p99 µs | max µs | std dev µs |";

/// Prints the table header: `RATE_COLUMNS`, then `extra` columns (each `" name |"`).
pub fn print_header(extra: &[&str]) {
    let mut head = RATE_COLUMNS.to_string();
    for c in extra {
        head.push_str(&format!(" {c} |"));
    }
    let n = head.matches('|').count() - 1;
    println!("{head}");
    println!("|{}", "---|".repeat(n));
}

/// The `RATE_COLUMNS` cells of one run (`rate` 0 = unpaced) from a histogram in nanoseconds,
/// ending with `|` so a bench appends its own cells (` x | y |`).
pub fn rate_row(rate: u64, count: u64, elapsed: std::time::Duration, h: &hdrhistogram::Histogram<u64>) -> String {
    let us = |ns: f64| ns / 1_000.0;
    let label = if rate == 0 {
        "unpaced".to_string()
    } else {
        rate.to_string()
    };
    format!(
        "| {label} | {count} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} |",
        count as f64 / elapsed.as_secs_f64(),
        us(h.mean()),
        us(h.value_at_quantile(0.50) as f64),
        us(h.value_at_quantile(0.90) as f64),
        us(h.value_at_quantile(0.95) as f64),
        us(h.value_at_quantile(0.99) as f64),
        us(h.max() as f64),
        us(h.stdev()),
    )
}

/// CPU time (ns) of this process's threads whose name starts with `prefix` (Linux schedstat; 0
/// elsewhere). Thread names are cut at 15 bytes: `tidewire-engine`, `tidewire-journa`.
pub fn thread_cpu_ns(prefix: &str) -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    let mut total = 0;
    for t in tasks.flatten() {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        if comm.trim_end().starts_with(prefix) {
            let sched = std::fs::read_to_string(t.path().join("schedstat")).unwrap_or_default();
            total += sched
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    total
}
