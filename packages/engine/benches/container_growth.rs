//! Growth stalls of a blotter: the time of each `ViewSet::insert` of a new row at the top of one
//! container (newest first, like `/BLOTTER/<user>` when one user places every order), with the
//! slowest inserts and the row count at which each happened. A table that grows all at once shows
//! as one slow insert at its growth point (hash maps at 7/8 of a power of two: 229,376,
//! 458,752 ...); the sharded id maps (`IdMap`) show as many inserts of ~1/64 of that.
//!
//! `cargo bench --no-default-features --bench container_growth [-- --rows 600000 --view]`
//! (`--view`: a view `statusCode < 10` with a 20-row window is open on the blotter from the start).

#[path = "support/mod.rs"]
mod support;

use std::time::Instant;

use support::{arg_value, has_flag};
use tidewire_engine::store::{Applied, Store};
use tidewire_engine::value::Value;
use tidewire_engine::view::{ViewSet, ViewsConfig};
use tidewire_engine::wire::{PubField, Publish};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if has_flag(&args, "--list") {
        return;
    }
    let rows: usize = arg_value(&args, "--rows")
        .and_then(|s| s.parse().ok())
        .unwrap_or(600_000)
        .max(1);
    let with_view = has_flag(&args, "--view");
    let mut store = Store::new();
    let mut applied = Applied::default();
    let mut ids = Vec::with_capacity(rows);
    for i in 0..rows {
        let p = Publish {
            subject: format!("/TRADE/u/{i}"),
            ts: None,
            image: true,
            fields: vec![PubField {
                name: "statusCode".into(),
                value: Some(Value::Number((i % 20) as f64)),
                typed: false,
            }],
        };
        store.apply(&p, 0.0, &mut applied).expect("publish");
        ids.push(applied.id);
    }
    let mut set = ViewSet::new(ViewsConfig::default());
    let blotter = store.subject_id("/BLOTTER/u");
    if with_view {
        let mut resolve = |name: &str| store.field_lookup(name).unwrap_or(0);
        let v = set
            .open(blotter, "statusCode < 10", "", 0, &store, &mut resolve)
            .expect("view");
        set.open_window(v, 0, 20).expect("window");
    }
    let mut times: Vec<(u64, usize)> = Vec::with_capacity(rows);
    let mut out = Vec::new();
    let started = Instant::now();
    for (k, &id) in ids.iter().enumerate() {
        let t = Instant::now();
        set.insert(blotter, Some(0), id, &store).expect("insert");
        times.push((t.elapsed().as_nanos() as u64, k));
        if k % 20 == 0 {
            set.flush(&mut out); // about one flush per engine pass at 20,000 orders/s
            set.recycle(&mut out);
        }
    }
    let total = started.elapsed();
    let mut sorted: Vec<u64> = times.iter().map(|t| t.0).collect();
    sorted.sort_unstable();
    let at = |q: f64| sorted[((rows as f64 * q) as usize).min(rows - 1)] as f64 / 1_000.0;
    println!(
        "container_growth: {rows} front inserts into one blotter{}: mean {:.2} µs, p99 {:.2} µs, p99.9 {:.2} µs, max {:.0} µs; over 100 µs: {}",
        if with_view { " (one view open)" } else { "" },
        total.as_nanos() as f64 / rows as f64 / 1_000.0,
        at(0.99),
        at(0.999),
        at(1.0),
        sorted.iter().filter(|&&ns| ns > 100_000).count()
    );
    times.sort_unstable_by_key(|t| std::cmp::Reverse(t.0));
    for (ns, k) in times.iter().take(10) {
        println!("  insert of row {k}: {:.0} µs", *ns as f64 / 1_000.0);
    }
}
