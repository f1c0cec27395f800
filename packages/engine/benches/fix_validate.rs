//! FIX data-dictionary validation of one inbound message (`fix::dictionary::Validator`), the part
//! of the acceptor's per-message cost that does not depend on the network: a FIX 4.2
//! NewOrderSingle as `run fix-echo` sends it, and a FIX 4.4 one as `run fix-orders` sends it.
//! Prints ns per message (median of 7 rounds of 200,000), then runs criterion.
//!
//! `cargo bench --no-default-features --bench fix_validate [-- --table]`

use criterion::Criterion;
use std::time::Instant;
use tidewire_engine::fix::codec::{Builder, Parser};
use tidewire_engine::fix::dictionary::{Dictionary, Validator};

/// A NewOrderSingle with `body` (`tag=value|...`) after the standard header.
fn order(begin: &str, body: &str) -> Vec<u8> {
    let mut b = Builder::new();
    b.begin(b"D")
        .field(49, b"CLIENT")
        .field(56, b"TW")
        .field_u64(34, 1234)
        .field_timestamp(52, 1_795_839_179_369)
        .raw(body.replace('|', "\u{1}").as_bytes());
    b.finish(begin.as_bytes()).to_vec()
}

fn cases() -> Vec<(&'static str, Dictionary, Vec<u8>)> {
    vec![
        (
            "fix42_new_order_single",
            Dictionary::fix42(),
            order(
                "FIX.4.2",
                "11=ORD00000001|21=1|55=INTC|54=1|60=20261128-04:12:59.290|38=100|40=2|44=10.55|59=0|1=ACCT1|",
            ),
        ),
        (
            "fix44_new_order_single",
            Dictionary::fix44(),
            order(
                "FIX.4.4",
                "11=F1a2b3c-000001|55=EURUSD|54=1|60=20261128-04:12:59.290|38=100|40=2|44=0.5|59=0|",
            ),
        ),
    ]
}

fn table() {
    const N: u32 = 200_000;
    println!("| message | bytes | ns per validate (median of 7) | fastest |");
    println!("|---|---|---|---|");
    for (name, dict, bytes) in cases() {
        let mut parser = Parser::new();
        let mut v = Validator::new();
        let msg = parser.parse(&bytes).expect("parses");
        assert!(v.validate(&dict, &msg).is_ok(), "{name} is valid");
        let mut rounds: Vec<f64> = (0..7)
            .map(|_| {
                let t = Instant::now();
                for _ in 0..N {
                    let _ = std::hint::black_box(v.validate(&dict, std::hint::black_box(&msg)));
                }
                t.elapsed().as_nanos() as f64 / f64::from(N)
            })
            .collect();
        rounds.sort_by(f64::total_cmp);
        println!("| {name} | {} | {:.0} | {:.0} |", bytes.len(), rounds[3], rounds[0]);
    }
}

fn main() {
    table();
    if std::env::args().any(|a| a == "--table") {
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("fix_validate");
    for (name, dict, bytes) in cases() {
        let mut parser = Parser::new();
        let mut v = Validator::new();
        let msg = parser.parse(&bytes).expect("parses");
        group.bench_function(name, |b| {
            b.iter(|| v.validate(&dict, std::hint::black_box(&msg)).is_ok())
        });
    }
    group.finish();
    c.final_summary();
}
