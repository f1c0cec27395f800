//! Encode-once fan-out: one record update -> encoded once -> appended to 1,000 subscriber
//! outboxes. Reports subscriber deliveries per second (criterion "elements").
//!
//! Run: `cargo bench --no-default-features --bench fanout`

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tidewire_engine::config::{BatchingConfig, EngineConfig};
use tidewire_engine::hub::{Command, FrameSink, Hub};
use tidewire_engine::value::Value;
use tidewire_engine::wire::{PubField, Publish};

const SUBSCRIBERS: u32 = 1_000;

struct Discard;
impl FrameSink for Discard {
    fn frame(&mut self, _: u32, _: u32, _: &[&[u8]], _: u16) {}
}

fn update(i: usize) -> Publish {
    Publish {
        subject: "/FX/EURUSD".into(),
        ts: Some(1_700_000_000_000.0 + i as f64),
        image: false,
        fields: vec![
            PubField {
                name: "bid".into(),
                value: Some(Value::Number(1.0841 + i as f64 * 1e-4)),
                typed: false,
            },
            PubField {
                name: "ask".into(),
                value: Some(Value::Number(1.0843 + i as f64 * 1e-4)),
                typed: false,
            },
        ],
    }
}

fn hub(batching: BatchingConfig) -> Hub {
    let mut hub = Hub::new(EngineConfig {
        batching,
        ..EngineConfig::default()
    });
    let now = Instant::now();
    hub.handle(
        Command::Publish {
            batch: vec![update(0)],
            received_ms: 0.0,
        },
        now,
    );
    for sid in 1..=SUBSCRIBERS {
        hub.handle(
            Command::OpenSession {
                sid,
                worker: 1,
                user: "u".into(),
                tier: "T".into(),
            },
            now,
        );
        hub.handle(
            Command::Subscribe {
                sid,
                req_id: 1,
                subjects: vec!["/FX/EURUSD".into()],
            },
            now,
        );
    }
    hub.run_due(now + Duration::from_secs(1), &mut Discard);
    hub
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("fanout_1000_outboxes");
    // Updates queued per outbox between flushes: 1 (batching off, one update per pass), 16 and
    // 64 (a burst window). More per flush = bigger outboxes = more cache misses.
    let cases = [
        ("batching_off/1_update_per_flush", BatchingConfig::default(), 1),
        ("batching_off/16_updates_per_flush", BatchingConfig::default(), 16),
        ("batching_off/64_updates_per_flush", BatchingConfig::default(), 64),
        (
            "burst_100_500ms/64_updates_per_flush",
            BatchingConfig {
                burst_max: Duration::from_millis(500),
                ..BatchingConfig::default()
            },
            64,
        ),
    ];
    for (name, batching, updates) in cases {
        group.throughput(Throughput::Elements(u64::from(SUBSCRIBERS) * updates as u64));
        let batches: Vec<Command> = (0..updates)
            .map(|i| Command::Publish {
                batch: vec![update(i + 1)],
                received_ms: 0.0,
            })
            .collect();
        let mut h = hub(batching);
        let mut clock = Instant::now();
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut measured = Duration::ZERO;
                for _ in 0..iters {
                    // Flush what the previous round queued (not measured); outboxes keep capacity.
                    clock += Duration::from_secs(1);
                    h.run_due(clock, &mut Discard);
                    let cmds = batches.clone();
                    let t = Instant::now();
                    for cmd in cmds {
                        h.handle(cmd, clock);
                    }
                    measured += t.elapsed();
                }
                measured
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
