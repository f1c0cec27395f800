//! The floor under cluster-mode orders: bare async-nats publishes to a JetStream stream on a
//! 3-server NATS cluster on 127.0.0.1, with no Tidewire code in the path. Open loop at a steady
//! rate, publishes pipelined (each fenced on the previous one's seq, as the order desk sends
//! them), latency from each publish's scheduled time to its PubAck; one row per stream kind
//! (R3 file, as the order stream; R1 file; R3 memory). Then one publish at a time at a sixth of
//! the rate (each sent once the previous one is acknowledged: the round trip alone, unless it
//! takes longer than the period), and a core NATS request/reply between two connections at the
//! full rate (the extra hop of a forwarded order).
//!
//! Needs `nats-server` on the PATH. Run on purpose (with `uptime` beside it):
//! `cargo bench --no-default-features --bench cluster_floor [-- --secs 3 --rate 6000]`

#[path = "../tests/nats_util/mod.rs"]
mod nats_util;

use std::time::{Duration, Instant};

use async_nats::jetstream::{self, message::PublishMessage, stream};
use bytes::Bytes;
use futures_util::StreamExt;
use hdrhistogram::Histogram;

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn report(label: &str, h: &Histogram<u64>) {
    println!(
        "{label:<40} n={:<6} mean {:>6.0} µs  p50 {:>5}  p90 {:>5}  p99 {:>6}  max {:>6}",
        h.len(),
        h.mean(),
        h.value_at_quantile(0.5),
        h.value_at_quantile(0.9),
        h.value_at_quantile(0.99),
        h.max()
    );
}

async fn stream_of(js: &jetstream::Context, name: &str, replicas: usize, storage: stream::StorageType) {
    js.get_or_create_stream(stream::Config {
        name: name.to_owned(),
        subjects: vec![format!("{name}.>")],
        num_replicas: replicas,
        storage,
        ..Default::default()
    })
    .await
    .expect("stream");
    // every fence names a seq >= 1, as on the order stream; a stream just created may not have
    // its leader yet (the publish then answers StreamNotFound or times out): retried, bounded
    let mut attempt = 0;
    loop {
        attempt += 1;
        let ack = match js.publish(format!("{name}.genesis"), Bytes::from_static(b"g")).await {
            Ok(fut) => fut.await.map(|_| ()).map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        match ack {
            Ok(()) => return,
            Err(e) if attempt < 50 => {
                eprintln!("genesis publish to {name}: {e}; retrying");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("genesis publish to {name} failed {attempt} times: {e}"),
        }
    }
}

/// `n` fenced publishes at `rate`/s, pipelined (`one_at_a_time`: each sent when due and the
/// previous one is acknowledged).
async fn publishes(js: &jetstream::Context, name: &str, n: u64, rate: u64, one_at_a_time: bool) -> Histogram<u64> {
    let period = Duration::from_nanos(1_000_000_000 / rate.max(1));
    let mut hist = Histogram::<u64>::new(3).expect("histogram");
    let subject = format!("{name}.ev");
    let body = Bytes::from(vec![7u8; 120]);
    let start = Instant::now() + Duration::from_millis(20);
    let (acks_tx, mut acks_rx) = tokio::sync::mpsc::unbounded_channel();
    let acker = tokio::spawn(async move {
        let mut h = Histogram::<u64>::new(3).expect("histogram");
        while let Some((due, fut)) = acks_rx.recv().await {
            let fut: jetstream::context::PublishAckFuture = fut;
            std::future::IntoFuture::into_future(fut).await.expect("ack");
            h.record(Instant::now().saturating_duration_since(due).as_micros() as u64)
                .ok();
        }
        h
    });
    for i in 0..n {
        let due = start + period * i as u32;
        tokio::time::sleep_until(due.into()).await;
        let msg = PublishMessage::build()
            .payload(body.clone())
            .expected_last_sequence(1 + i);
        let fut = js.send_publish(subject.clone(), msg).await.expect("publish");
        if one_at_a_time {
            std::future::IntoFuture::into_future(fut).await.expect("ack");
            hist.record(Instant::now().saturating_duration_since(due).as_micros() as u64)
                .ok();
        } else {
            acks_tx.send((due, fut)).expect("acker");
        }
    }
    drop(acks_tx);
    let h = acker.await.expect("acker");
    if one_at_a_time {
        hist
    } else {
        h
    }
}

/// `n` core NATS requests at `rate`/s from one connection to a responder on another, pipelined.
async fn requests(urls: &[String], n: u64, rate: u64) -> Histogram<u64> {
    let a = async_nats::connect(urls[0].as_str()).await.expect("connect");
    let b = async_nats::connect(urls[1].as_str()).await.expect("connect");
    let mut sub = b.subscribe("floor.req").await.expect("subscribe");
    let b2 = b.clone();
    tokio::spawn(async move {
        while let Some(m) = sub.next().await {
            if let Some(r) = m.reply {
                let _ = b2.publish(r, m.payload).await;
            }
        }
    });
    b.flush().await.expect("flush");
    let mut replies = a.subscribe("floor.rep.*").await.expect("subscribe");
    a.flush().await.expect("flush");
    let period = Duration::from_nanos(1_000_000_000 / rate.max(1));
    let start = Instant::now() + Duration::from_millis(20);
    let reader = tokio::spawn(async move {
        let mut h = Histogram::<u64>::new(3).expect("histogram");
        let mut got = 0;
        while got < n {
            let Some(m) = replies.next().await else { break };
            let i: u64 = m
                .subject
                .as_str()
                .rsplit('.')
                .next()
                .and_then(|t| t.parse().ok())
                .unwrap_or(0);
            let due = start + period * i as u32;
            h.record(Instant::now().saturating_duration_since(due).as_micros() as u64)
                .ok();
            got += 1;
        }
        h
    });
    for i in 0..n {
        let due = start + period * i as u32;
        tokio::time::sleep_until(due.into()).await;
        a.publish_with_reply("floor.req", format!("floor.rep.{i}"), Bytes::from(vec![1u8; 200]))
            .await
            .expect("request");
    }
    reader.await.expect("reader")
}

fn main() {
    if !nats_util::nats_available() {
        eprintln!("nats-server not found: nothing measured");
        return;
    }
    let secs = arg("--secs", 3);
    let rate = arg("--rate", 6000);
    let n = secs * rate;
    let nats = nats_util::NatsCluster::start("floor");
    let urls = nats.urls();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let client = async_nats::connect(urls[0].as_str()).await.expect("connect");
        let js = jetstream::new(client);
        for (name, replicas, storage, label) in [
            ("F3", 3, stream::StorageType::File, "R3 file"),
            ("F1", 1, stream::StorageType::File, "R1 file"),
            ("M3", 3, stream::StorageType::Memory, "R3 memory"),
        ] {
            stream_of(&js, name, replicas, storage).await;
            let h = publishes(&js, name, n, rate, false).await;
            report(&format!("{label}, pipelined, {rate}/s"), &h);
        }
        stream_of(&js, "S3", 3, stream::StorageType::File).await;
        let h = publishes(&js, "S3", (n / 6).max(1), (rate / 6).max(1), true).await;
        report(&format!("R3 file, one at a time, {}/s", (rate / 6).max(1)), &h);
        let h = requests(&urls, n, rate).await;
        report(&format!("core request/reply, {rate}/s"), &h);
    });
}
