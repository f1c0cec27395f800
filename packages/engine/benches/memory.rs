//! Memory of the blotter shape: 2,000 containers x 1,000 trade records, one view per container
//! (`statusCode < 10` / `Status < 10`, natural order = newest first) with a 20-row window.
//! Prints RSS (from `/proc/self/statm`) after the records and after containers + views, and bytes
//! per record for each part. Not criterion: one build, then the numbers.
//!
//! Shapes (`--shape`):
//! - `trade` (default): the engine's own trade record (`orders::records::image`, 19 fields: what
//!   `/BLOTTER/<user>` holds for real orders), filter `statusCode < 10`.
//! - `blotter`: the 7 fields the load generator's blotter preset publishes through `/source`
//!   (`tradeId instrument side quantity price Status updated`), filter `Status < 10`.
//!
//! Run: `cargo bench --no-default-features --bench memory -- [--shape trade|blotter]
//! [--users 2000] [--trades 1000]`

#[path = "support/mod.rs"]
mod support;

use std::time::Instant;

use support::{arg_value, rss_bytes};
use tidewire_engine::order_book::{Order, OrderStatus, Side, TimeInForce};
use tidewire_engine::order_desk::records;
use tidewire_engine::store::{Applied, Store};
use tidewire_engine::value::Value;
use tidewire_engine::view::{ViewSet, ViewsConfig};
use tidewire_engine::wire::{PubField, Publish};

/// Status codes stepping like the blotter preset's: the newest trades in progress, the rest done.
fn status_of(trade: u64, trades: u64) -> OrderStatus {
    match trades - 1 - trade {
        0 => OrderStatus::New,
        1 => OrderStatus::Acknowledged,
        2 => OrderStatus::PartiallyFilled,
        n if n % 17 == 0 => OrderStatus::Cancelled,
        _ => OrderStatus::Filled,
    }
}

/// The engine trade record of order `trade` of user `u` (19 fields; limit order, one fill).
fn trade_record(u: u64, trade: u64, trades: u64) -> Publish {
    let status = status_of(trade, trades);
    let order_id = u * trades + trade + 1;
    let filled = if status == OrderStatus::Filled { 1_000 } else { 0 };
    let o = Order {
        order_id,
        user: format!("user{u}"),
        client_order_id: format!("c{trade}"),
        instrument: format!("/FX/I{}", (u * 7 + trade) % 50),
        side: if (u + trade).is_multiple_of(2) {
            Side::Buy
        } else {
            Side::Sell
        },
        quantity: 1_000,
        price: Some(100.0 + ((u * 13 + trade * 7) % 1_000) as f64 / 100.0),
        time_in_force: TimeInForce::Day,
        status,
        filled_quantity: filled,
        average_price: if filled > 0 { 100.5 } else { 0.0 },
        fills: u32::from(filled > 0),
        last_fill: (filled > 0).then_some((filled, 100.5)),
        reason: None,
        created_ms: 1_700_000_000_000 + order_id,
        updated_ms: 1_700_000_000_000 + order_id + 5,
        version: 1,
        origin: None,
    };
    records::image(&o, order_id * 3)
}

/// The load generator's blotter-preset record (`packages/loadgen/src/blotter.ts` `tradeFields`).
fn preset_record(u: u64, trade: u64, trades: u64) -> Publish {
    let field = |name: &str, value: Value| PubField {
        name: name.into(),
        value: Some(value),
        typed: false,
    };
    let status = (1 + (trades - 1 - trade) / 3).min(10);
    Publish {
        subject: format!("/TRADE/user{u}/{trade}"),
        ts: Some(0.0),
        image: true,
        fields: vec![
            field("tradeId", Value::Number(trade as f64)),
            field("instrument", Value::Str(format!("I{}", (u * 7 + trade) % 50).into())),
            field(
                "side",
                Value::Str(if (u + trade).is_multiple_of(2) { "buy" } else { "sell" }.into()),
            ),
            field("quantity", Value::Number((1_000 * (1 + (u + 3 * trade) % 20)) as f64)),
            field(
                "price",
                Value::Number(100.0 + ((u * 13 + trade * 7) % 1_000) as f64 / 100.0),
            ),
            field("Status", Value::Number(status as f64)),
            field("updated", Value::Number(1_700_000_000_000.0 + trade as f64)),
        ],
    }
}

/// Builds the publish of trade `trade` of user `u` (of `trades` per user).
type MakeRecord = fn(u64, u64, u64) -> Publish;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let shape = arg_value(&args, "--shape").unwrap_or_else(|| "trade".into());
    let users: u64 = arg_value(&args, "--users")
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000);
    let trades: u64 = arg_value(&args, "--trades")
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000);
    let (make, filter): (MakeRecord, &str) = match shape.as_str() {
        "trade" => (trade_record, "statusCode < 10"),
        "blotter" => (preset_record, "Status < 10"),
        other => {
            eprintln!("memory: unknown --shape '{other}' (trade | blotter)");
            std::process::exit(2);
        }
    };
    let records_n = (users * trades) as f64;
    let start = rss_bytes();
    let t = Instant::now();
    let mut store = Store::new();
    let mut applied = Applied::default();
    let mut per_user: Vec<Vec<u32>> = Vec::with_capacity(users as usize);
    let mut fields_per_record = 0;
    for u in 0..users {
        let mut ids = Vec::with_capacity(trades as usize);
        for trade in 0..trades {
            let p = make(u, trade, trades);
            fields_per_record = p.fields.len();
            store.apply(&p, 0.0, &mut applied).expect("publish");
            ids.push(applied.id);
        }
        per_user.push(ids);
    }
    let after_records = rss_bytes();
    let mut set = ViewSet::new(ViewsConfig::default());
    for (u, ids) in per_user.iter().enumerate() {
        let container = store.subject_id(&format!("/BLOTTER/user{u}"));
        // Blotters insert each new trade at the top (newest first).
        for &id in ids {
            set.insert(container, Some(0), id, &store).expect("insert");
        }
        let mut resolve = |name: &str| store.field_lookup(name).unwrap_or(0);
        let v = set.open(container, filter, "", 0, &store, &mut resolve).expect("view");
        set.open_window(v, 0, 20).expect("window");
    }
    let mut out = Vec::new();
    set.flush(&mut out);
    let after_views = rss_bytes();
    let mb = |b: usize| b as f64 / 1_048_576.0;
    println!(
        "memory/{shape}: {users} x {trades} records ({fields_per_record} fields), one view + 20-row window per container, built in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    println!(
        "  records:           {:>7.0} MiB  {:>6.0} bytes/record",
        mb(after_records - start),
        (after_records - start) as f64 / records_n
    );
    println!(
        "  containers+views:  {:>7.0} MiB  {:>6.0} bytes/record",
        mb(after_views - after_records),
        (after_views - after_records) as f64 / records_n
    );
    println!(
        "  total RSS:         {:>7.0} MiB  {:>6.0} bytes/record (engine only; the server adds Node, sessions, queues)",
        mb(after_views),
        after_views as f64 / records_n
    );
    std::hint::black_box((&store, &set, out.len()));
}
