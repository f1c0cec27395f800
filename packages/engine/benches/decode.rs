//! Source-frame decoding (parse + validate): the part of `ingest` that runs on the calling
//! transport thread. Run: `cargo bench --no-default-features --bench decode`
//!
//! First a table, per frame shape: thread CPU time per publish (median of 7 rounds, each
//! bounded to 4,000 frames and 2 s) and heap allocations per publish (a counting global
//! allocator); the fx and single shapes also with a source's publish grants that need checking
//! (`/FX/**` minus one prefix, as a narrowed source role). Thread CPU time (`/proc/thread-self/schedstat`) rather than wall time, so the
//! numbers stay comparable on a loaded machine. Then criterion's wall-clock run of the first
//! shape. `-- --table` prints the table only.

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use tidewire_engine::wire::decode::decode_source_frame_as;
use tidewire_engine::wire::{decode_source_frame, PublishGrants};

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocations;

/// The FX tick frame of earlier sessions: 100 publishes of 4 numeric fields with `ts`.
fn fx_frame() -> String {
    let msgs: Vec<String> = (0..100)
        .map(|i| {
            format!(
                r#"{{"type":"record.publish","subject":"/FX/PAIR{}","ts":{},"fields":{{"bid":{},"ask":{},"spread":0.00019,"change":-0.0012}}}}"#,
                i % 30,
                1_700_000_000_000u64 + i,
                1.08412 + i as f64 * 1e-5,
                1.08431 + i as f64 * 1e-5
            )
        })
        .collect();
    format!("[{}]", msgs.join(","))
}

/// A blotter-shaped frame: 100 order-status publishes with strings, a bool and a typed timestamp.
fn blotter_frame() -> String {
    let statuses = ["working", "partiallyFilled", "filled", "cancelled"];
    let msgs: Vec<String> = (0..100)
        .map(|i| {
            format!(
                r#"{{"type":"record.publish","subject":"/BLOTTER/user{}/ORD{}","fields":{{"status":"{}","filledQty":{},"avgPx":{},"side":"buy","venue":"XLON","live":true,"updated":{}}},"types":{{"updated":"timestamp"}}}}"#,
                i % 7,
                10_000 + i,
                statuses[i % 4],
                i * 100,
                101.25 + i as f64 * 0.01,
                1_700_000_000_000u64 + i as u64
            )
        })
        .collect();
    format!("[{}]", msgs.join(","))
}

/// One publish per frame (the single-object form).
fn single_frame() -> String {
    r#"{"type":"record.publish","subject":"/FX/EURUSD","ts":1700000000000,"fields":{"bid":1.08412,"ask":1.08431}}"#
        .into()
}

/// This thread's CPU time so far, ns (Linux schedstat; 0 elsewhere).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

/// (CPU ns per publish, allocations per publish) of one round of at most `frames` decodes.
fn round(text: &str, grants: Option<&PublishGrants>, per_frame: usize, frames: usize) -> (f64, f64) {
    let deadline = Instant::now() + Duration::from_secs(2);
    let (cpu0, allocs0) = (thread_cpu_ns(), allocations());
    let mut done = 0;
    while done < frames && (done % 64 != 0 || Instant::now() < deadline) {
        let batch = decode_source_frame_as(std::hint::black_box(text), grants).expect("bench frame decodes");
        assert_eq!(batch.len(), per_frame);
        drop(std::hint::black_box(batch));
        done += 1;
    }
    let publishes = (done * per_frame) as f64;
    let cpu = (thread_cpu_ns() - cpu0) as f64 / publishes;
    let allocs = (allocations() - allocs0) as f64 / publishes;
    (cpu, allocs)
}

fn table() {
    println!("| frame | bytes/publish | CPU ns/publish (median of 7) | min | allocs/publish |");
    println!("|---|---|---|---|---|");
    let grants = PublishGrants::compile("feed", "source", &["/FX/**", "!/FX/SECRET/**"]).expect("valid rules");
    let shapes = [
        ("fx 100 x 4 numbers", fx_frame(), None, 100),
        ("fx 100 x 4 numbers, grants checked", fx_frame(), Some(&grants), 100),
        ("blotter 100 x 7 mixed", blotter_frame(), None, 100),
        ("single object", single_frame(), None, 1),
        ("single object, grants checked", single_frame(), Some(&grants), 1),
    ];
    for (name, text, grants, n) in shapes {
        let frames = 400_000 / n.max(1) / 10;
        round(&text, grants, n, frames.min(400)); // warm-up
        let mut rounds: Vec<(f64, f64)> = (0..7).map(|_| round(&text, grants, n, frames)).collect();
        rounds.sort_by(|a, b| a.0.total_cmp(&b.0));
        println!(
            "| {name} | {} | {:.0} | {:.0} | {:.2} |",
            text.len() / n,
            rounds[3].0,
            rounds[0].0,
            rounds[3].1
        );
    }
}

fn main() {
    table();
    if std::env::args().any(|a| a == "--table") {
        return;
    }
    let text = fx_frame();
    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("decode_source_frame");
    group.throughput(Throughput::Elements(100));
    group.bench_function("100_publishes_4_fields", |b| {
        b.iter(|| decode_source_frame(std::hint::black_box(&text)).map(|v| v.len()))
    });
    group.finish();
    c.final_summary();
}
