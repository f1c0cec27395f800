//! The end-to-end `finder-response` run's engine thread, through the hub (no napi, no sockets):
//! 64,000 finder records (`num` 0..1,000,000, `cat` C0..C9, a unique text `name`, `price`) in
//! `/CONTAINER/PRODUCTS`; a feed of `rate` price updates/s (no filter or sort reads `price`) in
//! batches every `batch_ms`, each batch its own pass (publish + view flush, then `run_due`);
//! sessions batched in 100 ms bursts (as the run sets them); unique `view.create` requests at 166.7/s (one new session each: `num` band of 10% x one
//! category = ~1% of the records, sorted by `name`, window 50), every view held to the end, as
//! the finder's users hold theirs.
//!
//! Prints, over the measured seconds (after `warm` s): the engine thread's CPU time
//! (`CLOCK_THREAD_CPUTIME_ID`: preemption by other processes does not count) per request (every
//! pass of the second divided by the requests in it, what "engine CPU per request" means at this
//! rate), split into the requests' own passes (create + `view.created`) and the feed's passes
//! (publish, view flush: the held windows' updates, delivery); the distribution of a create's
//! CPU time; and the engine-thread response time of each request from a single-server queue
//! replay of the measured pass times (queueing behind feed passes and other requests included).

use std::time::{Duration, Instant};

use super::under_load::{cpu_us, load_container, num, open_finder_view, pct, publish, text};
use tidewire_engine::config::EngineConfig;
use tidewire_engine::hub::{FrameSink, Hub};
use tidewire_engine::wire::Publish;

/// Records of the container.
const RECORDS: usize = 64_000;
/// The static number field's range (`num` in 0..NUM_RANGE).
const NUM_RANGE: u32 = 1_000_000;
/// Requests per second.
const REQUESTS_PER_SEC: f64 = 166.7;

/// Murmur3 finaliser (the load generator's `mix32`): spreads consecutive indexes uniformly.
fn mix32(x: u32) -> u32 {
    let mut h = x;
    h = (h ^ (h >> 16)).wrapping_mul(0x85eb_ca6b);
    h = (h ^ (h >> 13)).wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// Counts the bytes and frames delivered (a socket write's copy is not part of the engine
/// thread).
struct Sink(usize, usize);
impl FrameSink for Sink {
    fn frame(&mut self, _: u32, _: u32, parts: &[&[u8]], _: u16) {
        self.0 += parts.iter().map(|p| p.len()).sum::<usize>();
        self.1 += 1;
    }
}

fn load(hub: &mut Hub, at: Instant) {
    load_container(
        hub,
        RECORDS,
        |i| {
            let i = i as u32;
            vec![
                num("num", f64::from(mix32(i + 1) % NUM_RANGE)),
                text("cat", format!("C{}", mix32(i ^ 0x9e37_79b9) % 10)),
                text("name", format!("N{:08}-{i}", mix32(i * 7 + 3) % 100_000_000)),
                num("price", 101.0),
            ]
        },
        at,
    );
}

/// User `user`'s unique filter (the load generator's `finderFilter` for a 1% result).
fn filter(user: u64) -> String {
    let width = u64::from(NUM_RANGE) / 10;
    let starts = u64::from(NUM_RANGE) - width;
    let lo = (user / 10 * 7919) % starts;
    format!("num >= {lo} and num < {} and cat = \"C{}\"", lo + width, user % 10)
}

/// Runs `warm` + `secs` virtual seconds of the feed at `rate` updates/s in batches every
/// `batch_ms`, with requests at 166.7/s, and prints the figures.
pub fn run(secs: u64, warm: u64, rate: usize, batch_ms: f64) {
    // The run's batching (the load generator sets it as admin): 100 ms bursts.
    let mut cfg = EngineConfig::default();
    cfg.batching.burst_max = Duration::from_millis(100);
    let mut hub = Hub::new(cfg);
    let t0 = Instant::now();
    let at = |ms: f64| t0 + Duration::from_micros((ms * 1000.0) as u64);
    let mut sink = Sink(0, 0);
    load(&mut hub, at(0.0));
    let per_batch = ((rate as f64 * batch_ms / 1000.0).round() as usize).max(1);
    let end = (warm + secs) as f64 * 1000.0;
    let from = warm as f64 * 1000.0;
    let gap = 1000.0 / REQUESTS_PER_SEC;
    let (mut next_req, mut next_tick, mut user) = (0.0f64, 0.0f64, 0u64);
    let mut k = 0u64;
    // (arrival ms, CPU us, is a request) of each measured pass.
    let mut events: Vec<(f64, f64, bool)> = Vec::new();
    let mut creates: Vec<f64> = Vec::new();
    let (mut feed_us, mut req_us) = (0.0f64, 0.0f64);
    while next_tick < end || next_req < end {
        if next_tick <= next_req {
            let batch: Vec<Publish> = (0..per_batch)
                .map(|_| {
                    k += 1;
                    let i = k % RECORDS as u64;
                    Publish {
                        subject: format!("/PRODUCT/{i}"),
                        ts: Some(next_tick),
                        image: false,
                        fields: vec![num("price", 101.0 + (k / RECORDS as u64 % 1000) as f64 / 100.0)],
                    }
                })
                .collect();
            let s = cpu_us();
            publish(&mut hub, batch, next_tick, at(next_tick));
            hub.run_due(at(next_tick), &mut sink);
            let us = cpu_us() - s;
            if next_tick >= from {
                events.push((next_tick, us, false));
                feed_us += us;
            }
            next_tick += batch_ms;
        } else {
            user += 1;
            let f = filter(user);
            let s = cpu_us();
            open_finder_view(&mut hub, user as u32, f, at(next_req));
            hub.run_due(at(next_req), &mut sink);
            let us = cpu_us() - s;
            if next_req >= from {
                events.push((next_req, us, true));
                creates.push(us / 1000.0);
                req_us += us;
            }
            next_req += gap;
        }
    }
    let mut free_at = 0.0f64;
    let mut resp: Vec<f64> = Vec::new();
    for &(arr, us, is_req) in &events {
        let start = free_at.max(arr);
        free_at = start + us / 1000.0;
        if is_req {
            resp.push(free_at - arr);
        }
    }
    creates.sort_by(f64::total_cmp);
    resp.sort_by(f64::total_cmp);
    let n = creates.len().max(1) as f64;
    eprintln!(
        "finder_held: {RECORDS} records, {rate} updates/s in {batch_ms} ms batches, {} views held at the end, {} requests measured over {secs} s; {:.1} MB in {} frames, {} messages delivered",
        hub.views().view_count(),
        creates.len(),
        sink.0 as f64 / 1e6,
        sink.1,
        hub.stats().deliveries
    );
    eprintln!(
        "  engine CPU per request ms: {:.3} (requests' passes {:.3}, feed passes {:.3}); engine busy {:.0}%",
        (feed_us + req_us) / 1000.0 / n,
        req_us / 1000.0 / n,
        feed_us / 1000.0 / n,
        (feed_us + req_us) / 10.0 / (secs as f64 * 1000.0)
    );
    eprintln!(
        "  create CPU ms: p50 {:.3} p99 {:.3} max {:.3}; engine-thread response ms: p50 {:.2} p99 {:.2} max {:.2}",
        pct(&creates, 50.0),
        pct(&creates, 99.0),
        pct(&creates, 100.0),
        pct(&resp, 50.0),
        pct(&resp, 99.0),
        pct(&resp, 100.0)
    );
}
