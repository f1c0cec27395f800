//! View engine benchmarks (criterion; `elements` = the unit named per group):
//! - `filter_update`: one record update checked against 1,000 views that read the changed field
//!   (elements = view x update evaluations; target >= 50 million/s on one core), with realistic
//!   small price moves and with random jumps (worst case).
//! - `create_view_64k`: open a view on a 64,000-record container, ~1% static filter (number +
//!   text field), sorted by a text field, plus its first 50-row window (elements = views).
//! - `dynamic_1000_views`: 30,000 records, 1,000 views of ~300 rows on a dynamic field (and the
//!   same sorted by a second dynamic field), one 50-row window each, a flush every 60 updates
//!   (10 ms at 6,000 updates/s), prices ticking by small steps (elements = updates; time per
//!   element = cost per update, flush included).
//! - then a memory run (not criterion): 2,000 containers x 1,000 records, one view + window each.
//! - `-- under_load [secs]` instead runs only `view.create` under load through the hub
//!   (views_support/under_load.rs).
//! - `-- create_each [views]` instead opens that many views (default 3,000) one after the other
//!   exactly as `create_view_64k` does and prints the per-create time distribution (min, p10,
//!   p50, p99, us): on a loaded machine the low percentiles are the engine's own cost.
//! - `-- create_held [views]` instead opens that many distinct views (default 2,000) and keeps
//!   each with its 50-row window, as the finder's held users do, and prints the per-create time
//!   distribution (p50, p99, p99.5, max, us) and the creates over 1 ms: the cost of a create
//!   while every earlier view is still live (membership bit widening included).
//! - `-- held_windows [views] [updates/s] [secs] [products]` instead runs only held windows under a feed of
//!   non-filter field updates through the hub (views_support/held_windows.rs; defaults 3,000
//!   views, 10,000 updates/s, 5 s, 10,000 products): engine CPU per row update sent and per flush.
//! - `-- view_history [views] [updates/s] [secs] [rounds] [cap bytes]` instead runs the held
//!   windows feed with the view history on, off (`resumeGraceMs` 0) and on under a tight
//!   `resumeHistoryTotalBytes`, interleaved (views_support/held_windows.rs; defaults 3,000 views,
//!   10,000 updates/s, 5 s, 5 rounds, 4 MiB): engine CPU per view message sent and the ratios.
//! - `-- finder_held [secs] [warm secs] [updates/s] [batch ms]` instead runs the end-to-end
//!   `finder-response` shape through the hub (views_support/finder_held.rs; defaults 10 s measured
//!   after 3 s, 20,000 price updates/s in 1 ms batches, 166.7 requests/s, every view held): engine
//!   CPU per request, a create's CPU time and the engine-thread response time.
//! - `-- blotter [users] [trades] [updates/s] [secs]` instead runs only the blotter shape through
//!   the hub (views_support/blotter.rs; defaults 2,000 users x 1,000 trades, 69,000 updates/s,
//!   5 s): engine CPU per record update and the distribution of a pass's CPU time.
//!
//! Run: `cargo bench --no-default-features --bench views`

use std::time::{Duration, Instant};

use criterion::{criterion_group, Criterion, Throughput};
use tidewire_engine::store::{Applied, Store};
use tidewire_engine::value::Value;
use tidewire_engine::view::{ViewSet, ViewsConfig, WindowDiff};
use tidewire_engine::wire::{PubField, Publish};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn field(name: &str, value: Value) -> PubField {
    PubField {
        name: name.into(),
        value: Some(value),
        typed: false,
    }
}

fn publish(store: &mut Store, subject: &str, fields: Vec<PubField>, image: bool) -> u32 {
    let mut a = Applied::default();
    let p = Publish {
        subject: subject.into(),
        ts: Some(0.0),
        image,
        fields,
    };
    store.apply(&p, 0.0, &mut a).expect("publish");
    a.id
}

/// Field id of `name` (the store interns field names; read back through a record's slots).
fn field_id(store: &Store, any: u32, name: &str) -> u32 {
    let rec = store.get(any).expect("record");
    rec.slots
        .iter()
        .map(|s| s.name)
        .find(|&n| store.field_name(n) == name)
        .expect("field")
}

use under_load::SECTORS;

/// `n` product records: price (dynamic, 0..1000), bid (dynamic), rating (static 0..100),
/// sector (static, 10 values), name (static text). Returns the store, ids and a name resolver.
fn products(n: usize, rng: &mut Rng) -> (Store, Vec<u32>) {
    let mut store = Store::new();
    let ids = (0..n)
        .map(|i| {
            let fields = vec![
                field("price", Value::Number(rng.below(100_000) as f64 / 100.0)),
                field("bid", Value::Number(rng.below(100_000) as f64 / 100.0)),
                field("rating", Value::Number(rng.below(100) as f64)),
                field("sector", Value::Str(SECTORS[rng.below(10) as usize].into())),
                field("name", Value::Str(format!("{:08x} Holdings", rng.next() as u32).into())),
            ];
            publish(&mut store, &format!("/PRODUCT/{i}"), fields, true)
        })
        .collect();
    (store, ids)
}

fn resolver(store: &Store, any: u32) -> impl FnMut(&str) -> u32 + '_ {
    move |name| field_id(store, any, name)
}

fn filter_update(c: &mut Criterion) {
    let mut rng = Rng(0x5eed);
    let (mut store, ids) = products(30_000, &mut rng);
    let mut set = ViewSet::new(ViewsConfig::default());
    for &id in &ids {
        set.insert(1, None, id, &store).unwrap();
    }
    let price = field_id(&store, ids[0], "price");
    for v in 0..1_000 {
        let f = format!("price >= {} and price < {}", v, v + 10);
        let mut r = resolver(&store, ids[0]);
        set.open(1, &f, "", 0, &store, &mut r).unwrap();
    }
    let mut group = c.benchmark_group("filter_update");
    group.throughput(Throughput::Elements(1_000));
    let mut prices: Vec<f64> = ids
        .iter()
        .map(
            |&id| match tidewire_engine::view::records::field_of(&store, id, price) {
                Some(Value::Number(p)) => *p,
                _ => 0.0,
            },
        )
        .collect();
    let mut i = 0usize;
    let mut out = Vec::new();
    // random_walk: prices move by up to +-0.05 (realistic ticks; a view gains or loses a row on
    // ~1 update in 10). random_jump: a new random price each time (~20 membership changes per
    // update: the worst case, dominated by index inserts/removes).
    for (name, walk) in [("1000_views/random_walk", true), ("1000_views/random_jump", false)] {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut t = Duration::ZERO;
                for _ in 0..iters {
                    i = (i + 7919) % ids.len();
                    let p = if walk {
                        (prices[i] + (rng.below(101) as f64 - 50.0) / 1000.0).clamp(0.0, 999.99)
                    } else {
                        rng.below(100_000) as f64 / 100.0
                    };
                    // A tick always changes the price (an unchanged value re-evaluates no view).
                    let p = if p != prices[i] {
                        p
                    } else if p >= 999.0 {
                        p - 0.01
                    } else {
                        p + 0.01
                    };
                    prices[i] = p;
                    let subject = format!("/PRODUCT/{i}");
                    publish(&mut store, &subject, vec![field("price", Value::Number(p))], false);
                    let start = Instant::now();
                    let n = set.record_updated(ids[i], &[price], &store);
                    t += start.elapsed();
                    assert_eq!(n, 1_000);
                    if i.is_multiple_of(64) {
                        out.clear();
                        set.flush(&mut out);
                    }
                }
                t
            })
        });
    }
    group.finish();
}

/// The `create_view_64k` shape: 64,000 products in container 1, views expiring at once.
fn create_setup() -> (Store, Vec<u32>, ViewSet) {
    let mut rng = Rng(0xc0ffee);
    let (store, ids) = products(64_000, &mut rng);
    let mut set = ViewSet::new(ViewsConfig {
        grace_ms: 0,
        ..ViewsConfig::default()
    });
    for &id in &ids {
        set.insert(1, None, id, &store).unwrap();
    }
    (store, ids, set)
}

/// Request `k` of `create_view_64k`: unique per request, a rating band of 10 (10%) x one
/// sector (10%) = ~1% of the container.
fn create_filter(k: u64) -> String {
    let lo = k % 90;
    format!(
        "rating >= {lo} and rating < {} and sector = '{}'",
        lo + 10,
        SECTORS[(k % 10) as usize]
    )
}

/// One `create_view_64k` request at time `k` (ms): open the view sorted by name, snapshot its
/// first 50-row window, close and release it (it expires at once). Returns the view's rows.
fn create_once(set: &mut ViewSet, store: &Store, any: u32, filter: &str, k: u64, out: &mut Vec<WindowDiff>) -> usize {
    let mut r = resolver(store, any);
    let v = set.open(1, filter, "name", 0, store, &mut r).unwrap();
    let w = set.open_window(v, 0, 50).unwrap();
    out.clear();
    set.flush(out);
    let rows = set.view(v).unwrap().len();
    set.close_window(w).unwrap();
    set.release(v, k).unwrap();
    set.expire(k);
    rows
}

/// `-- create_held [views]`: `views` distinct requests (the `create_view_64k` filter and
/// `rating != -k`, so none shares a view), each view kept with its window, each create timed.
fn create_held(views: usize) {
    let (store, ids, mut set) = create_setup();
    let mut out = Vec::new();
    let mut us: Vec<(f64, usize)> = Vec::with_capacity(views);
    let mut r = resolver(&store, ids[0]);
    for k in 1..=views as u64 {
        let f = format!("{} and rating != -{k}", create_filter(k));
        let t = Instant::now();
        let v = set.open(1, &f, "name", 0, &store, &mut r).unwrap();
        set.open_window(v, 0, 50).unwrap();
        out.clear();
        set.flush(&mut out);
        us.push((t.elapsed().as_secs_f64() * 1e6, k as usize));
        set.recycle(&mut out);
    }
    let slow: Vec<usize> = us.iter().filter(|u| u.0 > 1_000.0).map(|u| u.1).collect();
    us.sort_by(|a, b| a.0.total_cmp(&b.0));
    let at = |q: f64| us[((us.len() as f64 * q) as usize).min(us.len() - 1)].0;
    eprintln!(
        "create_held: {views} views kept on 64,000 members, us per create: p50 {:.0}, p99 {:.0}, p99.5 {:.0}, max {:.0}; {} creates over 1 ms (the n-th view: {slow:?})",
        at(0.5),
        at(0.99),
        at(0.995),
        at(1.0),
        slow.len()
    );
}

fn create_view(c: &mut Criterion) {
    let (store, ids, mut set) = create_setup();
    let mut group = c.benchmark_group("create_view_64k");
    group.throughput(Throughput::Elements(1));
    let mut k = 0u64;
    let mut out: Vec<WindowDiff> = Vec::new();
    let mut rows = 0usize;
    group.bench_function("1pct_static_filter_sorted_by_text", |b| {
        b.iter(|| {
            k += 1;
            let f = create_filter(k);
            rows = create_once(&mut set, &store, ids[0], &f, k, &mut out);
        })
    });
    group.finish();
    eprintln!("create_view_64k: last view held {rows} rows");
}

/// `-- create_each [views]`: the `create_view_64k` request `views` times, each timed alone.
fn create_each(views: usize) {
    let (store, ids, mut set) = create_setup();
    let filters: Vec<String> = (1..=views as u64).map(create_filter).collect();
    let mut out = Vec::new();
    let mut us: Vec<f64> = Vec::with_capacity(views);
    for (i, f) in filters.iter().enumerate() {
        let t = Instant::now();
        create_once(&mut set, &store, ids[0], f, i as u64 + 1, &mut out);
        us.push(t.elapsed().as_secs_f64() * 1e6);
    }
    us.sort_by(f64::total_cmp);
    let at = |q: f64| {
        us.get(((us.len() as f64 * q) as usize).min(us.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0.0)
    };
    eprintln!(
        "create_each: {views} views on 64,000 members, us per create: min {:.0}, p10 {:.0}, p50 {:.0}, p99 {:.0}",
        at(0.0),
        at(0.1),
        at(0.5),
        at(0.99)
    );
}

fn dynamic(c: &mut Criterion) {
    let mut group = c.benchmark_group("dynamic_1000_views");
    for (name, sort) in [("filter_only", ""), ("filter_and_sort_on_bid", "bid desc")] {
        let mut rng = Rng(0xd1ce);
        let (mut store, ids) = products(30_000, &mut rng);
        let mut set = ViewSet::new(ViewsConfig::default());
        for &id in &ids {
            set.insert(1, None, id, &store).unwrap();
        }
        let (price, bid) = (field_id(&store, ids[0], "price"), field_id(&store, ids[0], "bid"));
        let mut changed = [price, bid];
        changed.sort_unstable();
        for v in 0..1_000 {
            let f = format!("price >= {} and price < {}", v, v + 10);
            let mut r = resolver(&store, ids[0]);
            let view = set.open(1, &f, sort, 0, &store, &mut r).unwrap();
            set.open_window(view, 0, 50).unwrap();
        }
        let mut out = Vec::new();
        set.flush(&mut out);
        let read = |f: u32| -> Vec<f64> {
            ids.iter()
                .map(|&id| match tidewire_engine::view::records::field_of(&store, id, f) {
                    Some(Value::Number(p)) => *p,
                    _ => 0.0,
                })
                .collect()
        };
        let (mut prices, mut bids) = (read(price), read(bid));
        let sizes: Vec<usize> = (0..1_000).filter_map(|v| set.view(v).map(|v| v.len())).collect();
        eprintln!(
            "dynamic_1000_views/{name}: view sizes mean {:.0}, min {}, max {}",
            sizes.iter().sum::<usize>() as f64 / sizes.len() as f64,
            sizes.iter().min().unwrap(),
            sizes.iter().max().unwrap()
        );
        const PER_FLUSH: usize = 60;
        group.throughput(Throughput::Elements(PER_FLUSH as u64));
        let mut i = 0usize;
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut t = Duration::ZERO;
                for _ in 0..iters {
                    // Each record's price and bid tick by up to +-0.05: every view sees the
                    // update; a view gains or loses a row on about 1 update in 20 (the Refiner
                    // shape: each view gains one row and loses one every 5 s).
                    let updates: Vec<(usize, f64, f64)> = (0..PER_FLUSH)
                        .map(|_| {
                            i = (i + 7919) % ids.len();
                            let step = |rng: &mut Rng| (rng.below(101) as f64 - 50.0) / 1000.0;
                            prices[i] = (prices[i] + step(&mut rng)).clamp(0.0, 999.99);
                            bids[i] = (bids[i] + step(&mut rng)).clamp(0.0, 999.99);
                            (i, prices[i], bids[i])
                        })
                        .collect();
                    for &(k, p, q) in &updates {
                        publish(
                            &mut store,
                            &format!("/PRODUCT/{k}"),
                            vec![field("price", Value::Number(p)), field("bid", Value::Number(q))],
                            false,
                        );
                        let start = Instant::now();
                        set.record_updated(ids[k], &changed, &store);
                        t += start.elapsed();
                    }
                    let start = Instant::now();
                    out.clear();
                    set.flush(&mut out);
                    t += start.elapsed();
                }
                t
            })
        });
    }
    group.finish();
}

use support::rss_bytes;

/// The blotter shape: 2,000 containers x 1,000 trade records, each user's view `status < 10`
/// with a 20-row window. Prints RSS growth for records and for containers + views.
fn memory() {
    let start = rss_bytes();
    let mut store = Store::new();
    let mut rng = Rng(0xb10);
    let mut per_user: Vec<Vec<u32>> = Vec::with_capacity(2_000);
    for u in 0..2_000 {
        let ids = (0..1_000)
            .map(|t| {
                let fields = vec![
                    field("status", Value::Number(rng.below(10) as f64 + 1.0)),
                    field("qty", Value::Number(rng.below(1_000_000) as f64)),
                    field("price", Value::Number(rng.below(100_000) as f64 / 100.0)),
                    field("side", Value::Str(if t % 2 == 0 { "BUY" } else { "SELL" }.into())),
                    field(
                        "instrument",
                        Value::Str(format!("/PRODUCT/{}", rng.below(50_000)).into()),
                    ),
                    field("ts", Value::Timestamp(1_700_000_000_000 + t)),
                ];
                publish(&mut store, &format!("/TRADE/{u}/{t}"), fields, true)
            })
            .collect();
        per_user.push(ids);
    }
    let after_records = rss_bytes();
    let t = Instant::now();
    let mut set = ViewSet::new(ViewsConfig::default());
    let any = per_user[0][0];
    for (u, ids) in per_user.iter().enumerate() {
        let container = 1_000_000 + u as u32;
        for &id in ids {
            set.insert(container, None, id, &store).unwrap();
        }
        let mut r = resolver(&store, any);
        let v = set
            .open(container, "status < 10", "ts desc", 0, &store, &mut r)
            .unwrap();
        set.open_window(v, 0, 20).unwrap();
    }
    let mut out = Vec::new();
    set.flush(&mut out);
    let after_views = rss_bytes();
    let mb = |b: usize| b as f64 / 1_048_576.0;
    let container_bytes: usize = (0..2_000u32)
        .filter_map(|u| set.container(1_000_000 + u))
        .map(|c| c.heap_bytes())
        .sum();
    eprintln!(
        "memory/containers_only: {:.0} MB heap for 2,000,000 members ({:.1} bytes/member)",
        mb(container_bytes),
        container_bytes as f64 / 2_000_000.0
    );
    eprintln!(
        "memory/blotter_2000x1000: records {:.0} MB, containers+views {:.0} MB ({:.1} bytes/member; \
         engine-counted heap {:.0} MB), total RSS {:.0} MB; built in {:.2} s; {} windows snapshotted",
        mb(after_records - start),
        mb(after_views - after_records),
        (after_views - after_records) as f64 / 2_000_000.0,
        mb(set.heap_bytes()),
        mb(after_views),
        t.elapsed().as_secs_f64(),
        out.len()
    );
}

criterion_group!(benches, filter_update, create_view, dynamic);

mod support; // views.rs uses only `rss_bytes` of it (the module allows the rest unused)
#[path = "views_support/under_load.rs"]
mod under_load;

#[path = "views_support/held_windows.rs"]
mod held_windows;

#[path = "views_support/blotter.rs"]
mod blotter;

#[path = "views_support/finder_held.rs"]
mod finder_held;

fn main() {
    // `cargo bench --bench views -- under_load [secs]`: only the hub-level response-time run.
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "under_load") {
        let secs = args.get(i + 1).and_then(|s| s.parse().ok()).unwrap_or(20);
        under_load::run(secs);
        return;
    }
    // `-- create_each [views]`: only view creates, each timed.
    if let Some(i) = args.iter().position(|a| a == "create_each") {
        create_each(args.get(i + 1).and_then(|s| s.parse().ok()).unwrap_or(3_000));
        return;
    }
    // `-- create_held [views]`: only view creates, every view kept.
    if let Some(i) = args.iter().position(|a| a == "create_held") {
        create_held(args.get(i + 1).and_then(|s| s.parse().ok()).unwrap_or(2_000));
        return;
    }
    // `-- held_windows [views] [updates/s] [secs]`: only the hub-level held-windows run.
    if let Some(i) = args.iter().position(|a| a == "held_windows") {
        let arg = |k: usize, d: usize| args.get(i + k).and_then(|s| s.parse().ok()).unwrap_or(d);
        held_windows::run(arg(1, 3_000), arg(2, 10_000), arg(3, 5) as u64, arg(4, 10_000));
        return;
    }
    // `-- view_history [views] [updates/s] [secs] [rounds] [cap bytes]`: history on / off / capped.
    if let Some(i) = args.iter().position(|a| a == "view_history") {
        let arg = |k: usize, d: usize| args.get(i + k).and_then(|s| s.parse().ok()).unwrap_or(d);
        held_windows::history_ab(
            arg(1, 3_000),
            arg(2, 10_000),
            arg(3, 5) as u64,
            arg(4, 5),
            arg(5, 4 << 20),
        );
        return;
    }
    // `-- finder_held [secs] [warm secs] [updates/s] [batch ms]`: the finder run's engine thread.
    if let Some(i) = args.iter().position(|a| a == "finder_held") {
        let arg = |k: usize, d: f64| args.get(i + k).and_then(|s| s.parse().ok()).unwrap_or(d);
        finder_held::run(
            arg(1, 10.0) as u64,
            arg(2, 3.0) as u64,
            arg(3, 20_000.0) as usize,
            arg(4, 1.0),
        );
        return;
    }
    // `-- blotter [users] [trades] [updates/s] [secs]`: only the hub-level blotter run.
    if let Some(i) = args.iter().position(|a| a == "blotter") {
        let arg = |k: usize, d: usize| args.get(i + k).and_then(|s| s.parse().ok()).unwrap_or(d);
        blotter::run(arg(1, 2_000), arg(2, 1_000), arg(3, 69_000), arg(4, 5) as u64);
        return;
    }
    benches();
    memory();
    criterion::Criterion::default().configure_from_args().final_summary();
}
