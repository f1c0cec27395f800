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
