//! Fan-in cost of cluster record replication, per remote record (run on purpose:
//! `cargo bench --no-default-features --bench cluster_fanin`).
//!
//! 1. In process, no NATS: decoding a batch (the link thread's work) and applying its records to
//!    a hub with a subscriber per record (the engine thread's work), per record.
//! 2. With a real 3-server NATS cluster (when `nats-server` is on the PATH): node A ingests
//!    updates of 1,000 records, node B applies them; throughput A -> B and B's link thread CPU
//!    per record (from /proc).

#[path = "../tests/nats_util/mod.rs"]
mod nats_util;

use std::sync::Arc;
use std::time::{Duration, Instant};

use tidewire_engine::cluster::records::codec::{self, Entry, Reader};
use tidewire_engine::cluster::records::RecordsConfig;
use tidewire_engine::cluster::{ClusterConfig, Link};
use tidewire_engine::config::EngineConfig;
use tidewire_engine::hub::{Command, Hub};
use tidewire_engine::runtime::{ClusterStart, Engine};
use tidewire_engine::value::Value;
use tidewire_engine::wire::{PubField, Publish};

const RECORDS: u64 = 1000;

fn update(i: u64, n: u64) -> Publish {
    Publish {
        subject: format!("/FX/PAIR{}", i % RECORDS),
        ts: Some(1.7e12 + n as f64),
        image: false,
        fields: vec![
            PubField {
                name: "bid".into(),
                value: Some(Value::Number(1.0 + n as f64 / 1e6)),
                typed: false,
            },
            PubField {
                name: "ask".into(),
                value: Some(Value::Number(1.0001 + n as f64 / 1e6)),
                typed: false,
            },
            PubField {
                name: "status".into(),
                value: Some(Value::Str("TRADABLE".into())),
                typed: false,
            },
        ],
    }
}

fn in_process() {
    const PER_BATCH: u64 = 2000;
    const BATCHES: u64 = 200;
    let mut batches = Vec::new();
    for b in 0..BATCHES {
        let mut out = Vec::new();
        codec::header(&mut out, codec::KIND_BATCH, 1, b + 1);
        for k in 0..PER_BATCH {
            let n = b * PER_BATCH + k;
            codec::put_publish(&mut out, &update(n, n), n / RECORDS + 1, 1.7e12);
        }
        batches.push(out);
    }
    let bytes: usize = batches.iter().map(Vec::len).sum();
    let n = (PER_BATCH * BATCHES) as f64;

    let t = Instant::now();
    let mut decoded = Vec::with_capacity(batches.len());
    for b in &batches {
        let mut r = Reader::new(b);
        r.header().expect("header");
        let mut entries = Vec::new();
        while !r.done() {
            entries.push(r.entry().expect("entry"));
        }
        decoded.push(entries);
    }
    let decode_ns = t.elapsed().as_nanos() as f64 / n;

    let mut hub = Hub::new(EngineConfig::default());
    let now = Instant::now();
    hub.handle(
        Command::OpenSession {
            sid: 1,
            worker: 1,
            user: "u".into(),
            tier: String::new(),
        },
        now,
    );
    let subjects: Vec<String> = (0..RECORDS).map(|i| format!("/FX/PAIR{i}")).collect();
    hub.handle(
        Command::Subscribe {
            sid: 1,
            req_id: 1,
            subjects,
        },
        now,
    );
    let t = Instant::now();
    for entries in &decoded {
        for e in entries {
            if let Entry::Record { publish, seq } = e {
                hub.apply_replicated(publish, *seq, false, now);
            }
        }
        hub.finish_replicated(now);
    }
    let apply_ns = t.elapsed().as_nanos() as f64 / n;
    println!(
        "in process: {n} remote records, {:.1} bytes/record on the wire; decode {decode_ns:.0} ns/record \
         (link thread), apply + fan-out to 1 subscriber {apply_ns:.0} ns/record (engine thread)",
        bytes as f64 / n
    );
}

/// utime + stime of this process's thread named `name`, in seconds.
fn thread_cpu(name: &str) -> f64 {
    let tick = 100.0; // USER_HZ on Linux
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    let mut total = 0.0;
    for t in dir.flatten() {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        if comm.trim() != name {
            continue;
        }
        let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
        let after = stat.rsplit(')').next().unwrap_or("");
        let f: Vec<&str> = after.split_whitespace().collect();
        let ut: f64 = f.get(11).and_then(|v| v.parse().ok()).unwrap_or(0.0);
        let st: f64 = f.get(12).and_then(|v| v.parse().ok()).unwrap_or(0.0);
        total += (ut + st) / tick;
    }
    total
}

fn with_nats() {
    if !nats_util::nats_available() {
        println!("with NATS: nats-server not found, skipped");
        return;
    }
    let nats = nats_util::NatsCluster::start("bench-fanin");
    let start = |node: &str| {
        let mut cc = ClusterConfig::new(nats.urls(), node);
        cc.name = "bench".into();
        let link = Arc::new(Link::connect(cc).expect("connect"));
        Engine::start_with_cluster(
            EngineConfig::default(),
            None,
            Some(ClusterStart {
                link,
                records: RecordsConfig::default(),
            }),
        )
        .expect("start")
    };
    let a = start("a");
    let b = start("b");
    const N: u64 = 400_000;
    const PER_FRAME: u64 = 50;
    let frames: Vec<String> = (0..N / PER_FRAME)
        .map(|f| {
            let items: Vec<String> = (0..PER_FRAME)
                .map(|k| {
                    let n = f * PER_FRAME + k;
                    format!(
                        r#"{{"type":"record.publish","subject":"/FX/PAIR{}","fields":{{"bid":{},"ask":{},"status":"TRADABLE"}}}}"#,
                        n % RECORDS,
                        1.0 + n as f64 / 1e6,
                        1.0001 + n as f64 / 1e6
                    )
                })
                .collect();
            format!("[{}]", items.join(","))
        })
        .collect();
    let cpu0 = thread_cpu("tw-cluster-b");
    let t = Instant::now();
    for f in &frames {
        a.ingest_str(f).expect("ingest");
        // Keep the ingest lane short, as a server's source backpressure does.
        while a.ingest_queue().0 > 64 {
            std::thread::yield_now();
        }
    }
    let deadline = Instant::now() + Duration::from_secs(300);
    while b.stats().cluster_records_received < N && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    let secs = t.elapsed().as_secs_f64();
    let cb = b.stats();
    let ca = a.stats();
    let cpu = thread_cpu("tw-cluster-b") - cpu0;
    println!(
        "with NATS: {} of {N} records A -> B in {secs:.2} s = {:.0} records/s; {} batches ({:.0} records/batch, \
         {:.1} bytes/record); B link thread {:.2} us CPU/record; gaps {}",
        cb.cluster_records_received,
        cb.cluster_records_received as f64 / secs,
        ca.cluster_batches_sent,
        ca.cluster_records_sent as f64 / ca.cluster_batches_sent.max(1) as f64,
        ca.cluster_bytes_sent as f64 / ca.cluster_records_sent.max(1) as f64,
        cpu * 1e6 / cb.cluster_records_received.max(1) as f64,
        cb.cluster_gaps
    );
    a.shutdown().ok();
    b.shutdown().ok();
}

fn main() {
    in_process();
    with_nats();
}
