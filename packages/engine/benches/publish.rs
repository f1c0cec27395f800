//! The engine thread's side of a publish: `Hub::handle(Command::Publish)` merging decoded frames
//! into records that already exist (the steady state of a feed), then dropping the batch. No
//! session subscribes, so encode and fan-out (`--bench fanout`) are left out.
//! Run: `cargo bench --no-default-features --bench publish`
//!
//! Per frame shape: wall time per publish on this one thread (median of 7 rounds, each bounded
//! to 400 frames and 2 s; the thread's CPU clock in /proc ticks too coarsely for a round) and
//! heap allocations per publish (a counting global allocator; frees are not counted). Frames are decoded before a round starts, so decoding is not in the numbers
//! (`--bench decode` measures it); dropping the decoded batch is, as on the engine thread.

use std::time::{Duration, Instant};

use tidewire_engine::config::EngineConfig;
use tidewire_engine::hub::{Command, Hub};
use tidewire_engine::wire::decode_source_frame;

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocations;

/// Publishes per frame.
const PER_FRAME: usize = 100;

/// Frame `k` of the FX shape: 100 publishes of 4 numbers with `ts`, over 30 subjects.
fn fx_frame(k: usize) -> String {
    let msgs: Vec<String> = (0..PER_FRAME)
        .map(|i| {
            format!(
                r#"{{"type":"record.publish","subject":"/FX/PAIR{}","ts":{},"fields":{{"bid":{},"ask":{},"spread":0.00019,"change":-0.0012}}}}"#,
                i % 30,
                1_700_000_000_000u64 + (k * PER_FRAME + i) as u64,
                1.08412 + (k + i) as f64 * 1e-5,
                1.08431 + (k + i) as f64 * 1e-5
            )
        })
        .collect();
    format!("[{}]", msgs.join(","))
}

/// Frame `k` of the blotter shape: 100 order-status publishes (strings, a bool, a typed
/// timestamp), over 700 subjects.
fn blotter_frame(k: usize) -> String {
    let statuses = ["working", "partiallyFilled", "filled", "cancelled"];
    let msgs: Vec<String> = (0..PER_FRAME)
        .map(|i| {
            format!(
                r#"{{"type":"record.publish","subject":"/BLOTTER/user{}/ORD{}","fields":{{"status":"{}","filledQty":{},"avgPx":{},"side":"buy","venue":"XLON","live":true,"updated":{}}},"types":{{"updated":"timestamp"}}}}"#,
                i % 7,
                10_000 + (k * PER_FRAME + i) % 700,
                statuses[(k + i) % 4],
                (k + i) * 100,
                101.25 + i as f64 * 0.01,
                1_700_000_000_000u64 + i as u64
            )
        })
        .collect();
    format!("[{}]", msgs.join(","))
}

/// Frame `k` of a news-like shape: 100 publishes whose string values are past the 15 inline
/// bytes of a `SmallStr` (each takes a heap allocation wherever it is copied).
fn long_strings_frame(k: usize) -> String {
    let msgs: Vec<String> = (0..PER_FRAME)
        .map(|i| {
            format!(
                r#"{{"type":"record.publish","subject":"/NEWS/{}","fields":{{"headline":"Central bank holds rates, item {}","source":"Tidewire newswire desk","seq":{}}}}}"#,
                i % 50,
                k * PER_FRAME + i,
                k * PER_FRAME + i
            )
        })
        .collect();
    format!("[{}]", msgs.join(","))
}

/// (wall ns per publish, allocations per publish) of one round: `frames` decoded frames handed
/// to `hub`, or fewer if 2 s pass first.
fn round(hub: &mut Hub, texts: &[String], frames: usize, now: Instant) -> (f64, f64) {
    let mut batches: Vec<Command> = (0..frames)
        .map(|k| Command::Publish {
            batch: decode_source_frame(&texts[k % texts.len()]).expect("bench frame decodes"),
            received_ms: 1_700_000_000_000.0,
        })
        .collect();
    batches.reverse();
    let deadline = Instant::now() + Duration::from_secs(2);
    let (t0, allocs0) = (Instant::now(), allocations());
    let mut done = 0;
    while let Some(cmd) = batches.pop() {
        hub.handle(std::hint::black_box(cmd), now);
        done += 1;
        if done % 64 == 0 && Instant::now() >= deadline {
            break;
        }
    }
    let publishes = (done * PER_FRAME) as f64;
    let ns = t0.elapsed().as_nanos() as f64 / publishes;
    let allocs = (allocations() - allocs0) as f64 / publishes;
    drop(batches);
    (ns, allocs)
}

fn main() {
    println!("| frame | ns/publish (median of 7) | min | allocs/publish |");
    println!("|---|---|---|---|");
    type Shape = (&'static str, fn(usize) -> String);
    let shapes: [Shape; 3] = [
        ("fx 100 x 4 numbers", fx_frame),
        ("blotter 100 x 7 mixed", blotter_frame),
        ("news 100 x 2 long strings + 1 number", long_strings_frame),
    ];
    for (name, frame) in shapes {
        // 16 distinct frames, so values change between publishes of one record.
        let texts: Vec<String> = (0..16).map(frame).collect();
        let mut hub = Hub::new(EngineConfig::default());
        let now = Instant::now();
        round(&mut hub, &texts, 64, now); // creates every record, warms up
        let mut rounds: Vec<(f64, f64)> = (0..7).map(|_| round(&mut hub, &texts, 400, now)).collect();
        rounds.sort_by(|a, b| a.0.total_cmp(&b.0));
        println!(
            "| {name} | {:.0} | {:.0} | {:.2} |",
            rounds[3].0, rounds[0].0, rounds[3].1
        );
    }
}
