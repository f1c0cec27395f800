//! Held windows through the hub (engine thread only: no napi, no sockets): the shape of the
//! end-to-end `finder-response` run where users keep their view open. `products` (default
//! 10,000) products in `/CONTAINER/PRODUCTS`; `views` unique views (one session each, ~1% static filter on a number +
//! text field, sorted by a text field, window 50), all opened first and held; then a feed of
//! `rate` record updates/s of fields no filter or sort reads (bid, ask, last, change, volume), in
//! 10 ms batches, each batch followed by `run_due` (delivery to the sessions' sinks).
//!
//! Prints, over the measured seconds, the engine thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`, so
//! preemption on a shared machine does not count) per row update sent to a window, per record
//! update and per flush (one flush per publish batch), split into the publish + view flush
//! (`Hub::handle`) and delivery (`Hub::run_due`). Row updates sent are counted from the frames.
//!
//! `history_ab` runs the same feed with the views' history of sent messages on (the default:
//! views held for resume), off (`resumeGraceMs` 0) and on under a tight total
//! (`resumeHistoryTotalBytes`, so windows keep pushing out their own oldest), interleaved over
//! rounds, and prints the engine CPU per view message sent of each and the ratios.

use std::time::{Duration, Instant};

use super::under_load::{load_products, open_finder_view, price_update, publish, PassCpu, Rng, SECTORS};
use tidewire_engine::config::EngineConfig;
use tidewire_engine::hub::{Command, FrameSink, Hub, ViewHistoryConfig, ViewResumeConfig};
use tidewire_engine::wire::Publish;

/// Keeps the delivered frames of one `run_due` (a copy, as a socket write would) so the row
/// updates in them (`{"id":` items of `view.rows` `updated` lists) and the view messages are
/// counted outside the timing.
struct Counter {
    pending: Vec<u8>,
    bytes: usize,
    rows: usize,
    messages: usize,
}

impl FrameSink for Counter {
    fn frame(&mut self, _: u32, _: u32, parts: &[&[u8]], _: u16) {
        for p in parts {
            self.pending.extend_from_slice(p);
        }
    }
}

impl Counter {
    fn count(&mut self) {
        self.bytes += self.pending.len();
        self.rows += self.pending.windows(6).filter(|w| w == b"{\"id\":").count();
        self.messages += self
            .pending
            .windows(11)
            .filter(|w| w == b"\"view.rows\"" || w == b"\"view.size\"")
            .count();
        self.pending.clear();
    }
}

/// What one feed measured (after its warm-up second).
struct Fed {
    cpu: PassCpu,
    updates: usize,
    flushes: usize,
    rows: usize,
    messages: usize,
    bytes: usize,
    per_tick: usize,
    hub: Hub,
}

const TICK_MS: f64 = 10.0;

/// Opens `views` held windows over `products` records (`resume`: the held view settings, else
/// the defaults) and feeds `rate` updates/s for `secs` virtual seconds after 1 s of warm-up.
/// `say`: print the setup line.
fn feed(views: usize, rate: usize, secs: u64, products: usize, resume: Option<ViewResumeConfig>, say: bool) -> Fed {
    let n_products = products.max(1);
    let mut rng = Rng(0x4e1d);
    let mut hub = Hub::new(EngineConfig::default());
    let t0 = Instant::now();
    let at = |ms: f64| t0 + Duration::from_micros((ms * 1000.0) as u64);
    if let Some(cfg) = resume {
        hub.handle(Command::SetViewResume(cfg), at(0.0));
    }
    let mut sink = Counter {
        pending: Vec::new(),
        bytes: 0,
        rows: 0,
        messages: 0,
    };
    load_products(&mut hub, n_products, &mut rng, at(0.0));
    let setup = Instant::now();
    for k in 0..views as u32 {
        let sid = k + 1;
        let lo = k % 90;
        let filter = format!(
            "rating >= {lo} and rating < {} and sector = '{}'",
            (lo + 10) as f64 + (k / 900) as f64 / 100_000.0, // unique text, same ~1% result
            SECTORS[(k / 90 % 10) as usize]
        );
        open_finder_view(&mut hub, sid, filter, at(0.0));
    }
    hub.run_due(at(0.0), &mut sink);
    sink.count();
    if say {
        let rows: usize = hub.views().infos().iter().map(|i| i.rows).sum();
        eprintln!(
            "held_windows/{views}_views/{rate}_per_s/{n_products}_products: {} views, mean {:.0} rows, opened in {:.1} s",
            hub.views().view_count(),
            rows as f64 / views.max(1) as f64,
            setup.elapsed().as_secs_f64()
        );
    }
    let per_tick = (rate as f64 * TICK_MS / 1000.0).round().max(1.0) as usize;
    let mut last = vec![100.0f64; n_products];
    let (mut cpu, mut flushes, mut updates) = (PassCpu::default(), 0usize, 0usize);
    let (mut rows0, mut bytes0, mut messages0) = (0, 0, 0);
    let end = (secs + 1) as f64 * 1000.0;
    let mut tick = TICK_MS;
    let mut next = 0usize;
    while tick <= end {
        let measuring = tick > 1000.0;
        if !measuring {
            (rows0, bytes0, messages0) = (sink.rows, sink.bytes, sink.messages);
        }
        let batch: Vec<Publish> = (0..per_tick)
            .map(|_| {
                // Every record once in turn (each updates rate / N times a second).
                let i = next;
                next = (next + 1) % n_products;
                price_update(i, &mut last, &mut rng, tick)
            })
            .collect();
        cpu.pass(&mut hub, at(tick), &mut sink, measuring, |hub| {
            publish(hub, batch, tick, at(tick))
        });
        sink.count();
        if measuring {
            flushes += 1;
            updates += per_tick;
        }
        tick += TICK_MS;
    }
    Fed {
        cpu,
        updates,
        flushes,
        rows: sink.rows - rows0,
        messages: sink.messages - messages0,
        bytes: sink.bytes - bytes0,
        per_tick,
        hub,
    }
}

/// Runs `views` held windows over `products` records under `rate` updates/s for `secs` virtual
/// seconds (after 1 s of warm-up) and prints the costs and the distribution of a flush's CPU time
/// (a pass: publish batch, view flush, delivery).
pub fn run(views: usize, rate: usize, secs: u64, products: usize) {
    let mut f = feed(views, rate, secs, products, None, true);
    let total = f.cpu.total_us();
    eprintln!(
        "  {} record updates, {} flushes, {} row updates sent to windows ({:.1} per record update), {:.1} MB framed",
        f.updates,
        f.flushes,
        f.rows,
        f.rows as f64 / f.updates.max(1) as f64,
        f.bytes as f64 / 1e6
    );
    eprintln!(
        "  engine CPU: {:.0} ns per row update sent, {:.2} us per record update, {:.0} us per flush; {}",
        total * 1000.0 / f.rows.max(1) as f64,
        total / f.updates.max(1) as f64,
        total / f.flushes.max(1) as f64,
        f.cpu.split(secs)
    );
    f.cpu.print_passes(f.per_tick as f64, TICK_MS);
}

/// The 1-, 5- and 15-minute load averages (`uptime`).
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// `rounds` rounds of the held-windows feed with the view history on, off and on under a
/// `cap_bytes` total, in an order that rotates each round; prints each run (engine CPU per view
/// message sent, the history held, the load average) and the medians with their ratios to off.
pub fn history_ab(views: usize, rate: usize, secs: u64, rounds: usize, cap_bytes: usize) {
    let on = ViewResumeConfig::default();
    let off = ViewResumeConfig {
        grace: Duration::ZERO,
        ..on
    };
    let capped = ViewResumeConfig {
        history: ViewHistoryConfig {
            total_bytes: cap_bytes,
            ..on.history
        },
        ..on
    };
    let cases = [("history on", on), ("history off", off), ("history capped", capped)];
    let mut ns: [Vec<f64>; 3] = Default::default();
    eprintln!(
        "view_history/{views}_views/{rate}_per_s/{secs}_s: {rounds} rounds, capped = resumeHistoryTotalBytes {cap_bytes}"
    );
    for round in 0..rounds {
        for k in 0..cases.len() {
            let c = (round + k) % cases.len();
            let (name, cfg) = cases[c];
            let before = load();
            let f = feed(views, rate, secs, 10_000, Some(cfg), false);
            let per_msg = f.cpu.total_us() * 1000.0 / f.messages.max(1) as f64;
            ns[c].push(per_msg);
            let s = f.hub.stats();
            eprintln!(
                "  round {round} {name:<15} {per_msg:>5.0} ns per view message ({} messages, {:.0} ns per row update), history {:.1} MiB, {} evicted; load {before}",
                f.messages,
                f.cpu.total_us() * 1000.0 / f.rows.max(1) as f64,
                s.view_history_bytes as f64 / (1 << 20) as f64,
                s.view_history_evicted,
            );
        }
    }
    let m: Vec<f64> = ns.iter_mut().map(|v| median(v)).collect();
    eprintln!(
        "  median ns per view message: on {:.0}, off {:.0}, capped {:.0}; on/off {:.3}, capped/off {:.3}",
        m[0],
        m[1],
        m[2],
        m[0] / m[1].max(1e-9),
        m[2] / m[1].max(1e-9)
    );
}
