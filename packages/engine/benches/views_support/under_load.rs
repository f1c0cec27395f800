//! `view.create` under load, through the hub (engine thread only: no napi, no sockets): the issue-3
//! response-time case. 64,000 products in `/CONTAINER/PRODUCTS`; a feed of 15,000 price updates/s
//! (the demo's 5,000/s plus T2/T3 copies, here all on the catalog) in 10 ms batches; unique
//! `view.create` requests at 166.7/s (one new session each, window 50, ~1% static filter on a
//! number + text field, sorted by a text field); each session closes its view after 1 s, so with
//! the 5 s grace period ~1,000 views stay materialised. Virtual time drives the schedule; every
//! `Hub::handle`/`run_due` call is timed on the wall clock and replayed through a single-server
//! queue (the engine thread) to estimate each request's response time on that thread: queueing
//! behind feed batches and other requests included. Service times are the thread's CPU time
//! (`CLOCK_THREAD_CPUTIME_ID`), so preemption by other processes on a shared machine does not
//! count as engine work.

use std::time::{Duration, Instant};

use tidewire_engine::config::EngineConfig;
use tidewire_engine::hub::{Command, ContainerOp, FrameSink, Hub};
use tidewire_engine::value::Value;
use tidewire_engine::wire::{PubField, Publish};

#[repr(C)]
struct Timespec {
    sec: i64,
    nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, out: *mut Timespec) -> i32;
}

/// CPU time of this thread, us (Linux `CLOCK_THREAD_CPUTIME_ID`).
pub fn cpu_us() -> f64 {
    let mut t = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `t` is a valid, writable timespec; clock id 3 is CLOCK_THREAD_CPUTIME_ID on Linux.
    unsafe { clock_gettime(3, &mut t) };
    t.sec as f64 * 1e6 + t.nsec as f64 / 1e3
}

struct Sink(usize);
impl FrameSink for Sink {
    fn frame(&mut self, _: u32, _: u32, parts: &[&[u8]], _: u16) {
        self.0 += parts.iter().map(|p| p.len()).sum::<usize>();
    }
}

/// Xorshift generator (deterministic runs).
pub struct Rng(pub u64);
impl Rng {
    /// Next value.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A value in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Sector names (the static text field).
pub const SECTORS: [&str; 10] = [
    "Tech",
    "Energy",
    "Banks",
    "Retail",
    "Health",
    "Autos",
    "Media",
    "Mining",
    "Telecom",
    "Utilities",
];

/// A number field.
pub fn num(name: &str, v: f64) -> PubField {
    PubField {
        name: name.into(),
        value: Some(Value::Number(v)),
        typed: false,
    }
}

/// A text field.
pub fn text(name: &str, v: String) -> PubField {
    PubField {
        name: name.into(),
        value: Some(Value::Str(v.into())),
        typed: false,
    }
}

/// Hands `batch` to the hub as one source frame received at `received_ms` (virtual ms), at `now`.
pub fn publish(hub: &mut Hub, batch: Vec<Publish>, received_ms: f64, now: Instant) {
    hub.handle(Command::Publish { batch, received_ms }, now);
}

/// Publishes `n` products `/PRODUCT/<i>` (static `name`, `sector`, `rating`, `currency`; prices at
/// 100) in batches of 5,000 and puts them all in `/CONTAINER/PRODUCTS`, at `at`.
pub fn load_products(hub: &mut Hub, n: usize, rng: &mut Rng, at: Instant) {
    load_container(
        hub,
        n,
        |_| {
            vec![
                text("name", format!("{:08x} Holdings", rng.next() as u32)),
                text("sector", SECTORS[rng.below(10) as usize].into()),
                num("rating", rng.below(100) as f64),
                text("currency", "EUR".into()),
                num("bid", 99.5),
                num("ask", 100.5),
                num("last", 100.0),
                num("change", 0.0),
                num("volume", 1000.0),
            ]
        },
        at,
    );
}

/// Publishes images `/PRODUCT/0 .. n` (record `i`'s fields from `fields(i)`) in batches of 5,000
/// and adds them all to `/CONTAINER/PRODUCTS`.
pub fn load_container(hub: &mut Hub, n: usize, mut fields: impl FnMut(usize) -> Vec<PubField>, at: Instant) {
    let images: Vec<Publish> = (0..n)
        .map(|i| Publish {
            subject: format!("/PRODUCT/{i}"),
            ts: Some(0.0),
            image: true,
            fields: fields(i),
        })
        .collect();
    for chunk in images.chunks(5_000) {
        publish(hub, chunk.to_vec(), 0.0, at);
    }
    hub.handle(
        Command::ContainerPublish {
            subject: "/CONTAINER/PRODUCTS".into(),
            ops: vec![ContainerOp::Add((0..n).map(|i| format!("/PRODUCT/{i}")).collect())],
        },
        at,
    );
}

pub fn open_finder_view(hub: &mut Hub, sid: u32, filter: String, at: Instant) {
    hub.handle(
        Command::OpenSession {
            sid,
            worker: 0,
            user: format!("u{sid}"),
            tier: String::new(),
        },
        at,
    );
    hub.handle(
        Command::ViewCreate {
            sid,
            req_id: 1,
            container: "/CONTAINER/PRODUCTS".into(),
            filter,
            sort: "name".into(),
            offset: 0,
            size: 50,
        },
        at,
    );
}

/// A price tick of product `i` (a random step of at most 0.2% from `last[i]`, which it updates)
/// stamped `ts`: bid, ask, last, change, volume (fields no finder filter or sort reads).
pub fn price_update(i: usize, last: &mut [f64], rng: &mut Rng, ts: f64) -> Publish {
    last[i] = (last[i] * (1.0 + (rng.below(201) as f64 - 100.0) / 50_000.0)).max(0.01);
    Publish {
        subject: format!("/PRODUCT/{i}"),
        ts: Some(ts),
        image: false,
        fields: vec![
            num("bid", last[i] - 0.5),
            num("ask", last[i] + 0.5),
            num("last", last[i]),
            num("change", last[i] - 100.0),
            num("volume", 1000.0 + ts),
        ],
    }
}

/// Percentile `p` (0..100) of sorted `xs`; 0 when empty.
pub fn pct(xs: &[f64], p: f64) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    xs[((xs.len() - 1) as f64 * p / 100.0).round() as usize]
}

/// The engine thread's CPU time over the measured passes of a feed run (held_windows, blotter):
/// publish + view flush (`Hub::handle`) and delivery (`Hub::run_due`), and each pass's total.
#[derive(Default)]
pub struct PassCpu {
    /// `Hub::handle` CPU time, us.
    pub handle_us: f64,
    /// `Hub::run_due` CPU time, us.
    pub deliver_us: f64,
    /// CPU time of each pass, ms.
    passes: Vec<f64>,
}

impl PassCpu {
    /// Runs one engine pass at `now`: `handle` (the pass's `Hub::handle` calls: publishes,
    /// container ops), then `Hub::run_due` into `sink`; adds its CPU times when `measuring`.
    pub fn pass<S: FrameSink>(
        &mut self,
        hub: &mut Hub,
        now: Instant,
        sink: &mut S,
        measuring: bool,
        handle: impl FnOnce(&mut Hub),
    ) {
        let start = cpu_us();
        handle(hub);
        let handled = cpu_us();
        hub.run_due(now, sink);
        let end = cpu_us();
        if measuring {
            self.handle_us += handled - start;
            self.deliver_us += end - handled;
            self.passes.push((end - start) / 1000.0);
        }
    }

    /// Both parts, us.
    pub fn total_us(&self) -> f64 {
        self.handle_us + self.deliver_us
    }

    /// `publish+views N%, delivery N%; N cores at this rate` over `secs` measured seconds.
    pub fn split(&self, secs: u64) -> String {
        let total = self.total_us();
        format!(
            "publish+views {:.0}%, delivery {:.0}%; {:.2} cores at this rate",
            self.handle_us * 100.0 / total.max(1e-9),
            self.deliver_us * 100.0 / total.max(1e-9),
            total / (secs as f64 * 1e6)
        )
    }

    /// Prints the distribution of a pass's CPU time (mean, p50, p99, max, ms); a pass carries
    /// `per_tick` updates, `tick_ms` of feed.
    pub fn print_passes(&mut self, per_tick: f64, tick_ms: f64) {
        let passes = &mut self.passes;
        passes.sort_by(f64::total_cmp);
        eprintln!(
            "  pass ({per_tick:.0} updates, {tick_ms} ms of feed) CPU ms: mean {:.3} p50 {:.3} p99 {:.3} max {:.3}",
            passes.iter().sum::<f64>() / passes.len().max(1) as f64,
            pct(passes, 50.0),
            pct(passes, 99.0),
            pct(passes, 100.0)
        );
    }
}

/// Runs the scenario for `secs` virtual seconds and prints the distribution.
pub fn run(secs: u64) {
    const N: usize = 64_000;
    const RATE_MS: f64 = 6.0; // 166.7 requests/s
    let mut rng = Rng(0xfeed);
    let mut hub = Hub::new(EngineConfig::default());
    let t0 = Instant::now();
    let at = |ms: f64| t0 + Duration::from_micros((ms * 1000.0) as u64);
    let mut sink = Sink(0);
    load_products(&mut hub, N, &mut rng, at(0.0));
    // (virtual arrival ms, wall service us) of each request, and busy time of everything else.
    let mut requests: Vec<(f64, f64)> = Vec::new();
    let mut events: Vec<(f64, f64, bool)> = Vec::new(); // (arrival ms, service us, is request)
    let mut closes: std::collections::VecDeque<(f64, u32)> = Default::default();
    let (mut next_req, mut next_tick, mut sid, mut k) = (1000.0f64, 0.0f64, 0u32, 0u64);
    let end = secs as f64 * 1000.0;
    let mut last = vec![100.0f64; N];
    let mut rows_total = 0usize;
    while next_tick < end || next_req < end {
        if next_tick <= next_req {
            let batch: Vec<Publish> = (0..150)
                .map(|_| {
                    let i = rng.below(N as u64) as usize;
                    price_update(i, &mut last, &mut rng, next_tick)
                })
                .collect();
            let s = cpu_us();
            publish(&mut hub, batch, next_tick, at(next_tick));
            while closes.front().is_some_and(|&(t, _)| t <= next_tick) {
                let (_, s) = closes.pop_front().unwrap();
                hub.handle(Command::CloseSession { sid: s }, at(next_tick));
            }
            hub.run_due(at(next_tick), &mut sink);
            events.push((next_tick, cpu_us() - s, false));
            next_tick += 10.0;
        } else {
            sid += 1;
            k += 1;
            let lo = k % 90;
            let filter = format!(
                "rating >= {lo} and rating < {} and sector = '{}'",
                (lo + 10) as f64 + (k % 1000) as f64 / 10_000.0, // unique text, same ~1% result
                SECTORS[(k / 90 % 10) as usize]
            );
            let s = cpu_us();
            open_finder_view(&mut hub, sid, filter, at(next_req));
            hub.run_due(at(next_req), &mut sink);
            let us = cpu_us() - s;
            requests.push((next_req, us));
            events.push((next_req, us, true));
            rows_total += 1;
            closes.push_back((next_req + 1000.0, sid));
            next_req += RATE_MS;
        }
    }
    // Single-server queue replay: a request's response = its wait behind earlier work + its own service.
    events.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut free_at = 0.0f64; // ms
    let mut resp: Vec<f64> = Vec::new();
    let mut busy_us = 0.0;
    for &(arr, us, is_req) in &events {
        let start = free_at.max(arr);
        free_at = start + us / 1000.0;
        busy_us += us;
        if is_req && arr >= 2000.0 {
            resp.push(free_at - arr);
        }
    }
    let mut svc: Vec<f64> = requests
        .iter()
        .filter(|r| r.0 >= 2000.0)
        .map(|r| r.1 / 1000.0)
        .collect();
    svc.sort_by(f64::total_cmp);
    resp.sort_by(f64::total_cmp);
    let mut ticks: Vec<f64> = events.iter().filter(|e| !e.2).map(|e| e.1 / 1000.0).collect();
    ticks.sort_by(f64::total_cmp);
    eprintln!(
        "view_create_under_load: {} requests over {secs} s virtual; live views at end {}; engine busy {:.0}% of the run",
        rows_total,
        hub.views().view_count(),
        busy_us / 10.0 / end
    );
    eprintln!(
        "  view.create service ms: mean {:.2} p50 {:.2} p99 {:.2} max {:.2}",
        svc.iter().sum::<f64>() / svc.len().max(1) as f64,
        pct(&svc, 50.0),
        pct(&svc, 99.0),
        pct(&svc, 100.0)
    );
    eprintln!(
        "  feed batch (150 updates) ms: mean {:.2} p99 {:.2} max {:.2}",
        ticks.iter().sum::<f64>() / ticks.len().max(1) as f64,
        pct(&ticks, 99.0),
        pct(&ticks, 100.0)
    );
    eprintln!(
        "  engine-thread response ms (queueing included): mean {:.2} p50 {:.2} p99 {:.2} max {:.2}",
        resp.iter().sum::<f64>() / resp.len().max(1) as f64,
        pct(&resp, 50.0),
        pct(&resp, 99.0),
        pct(&resp, 100.0)
    );
}
