//! Source-frame decoding (parse + validate) of 100 publishes: the part of `ingest` that runs on
//! the calling worker thread. Run: `cargo bench --no-default-features --bench decode`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tidewire_engine::wire::decode_source_frame;

fn frame() -> String {
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

fn bench(c: &mut Criterion) {
    let text = frame();
    let mut group = c.benchmark_group("decode_source_frame");
    group.throughput(Throughput::Elements(100));
    group.bench_function("100_publishes_4_fields", |b| {
        b.iter(|| decode_source_frame(std::hint::black_box(&text)).map(|v| v.len()))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
