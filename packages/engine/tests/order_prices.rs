//! Limit prices and quantities at the edges of f64: for any double (every bit pattern, subnormals,
//! MAX, MIN_POSITIVE, -0, values a few ulps or a fraction of a tick off a multiple of the tick),
//! submit and amend either accept a positive whole number of ticks within the instrument's range
//! (a whole quantity 1..=max) or reject it with a typed reject whose message stays short; they
//! never accept an off-tick or out-of-range price and never panic. The verdict is checked against
//! an oracle that measures the distance to the nearest tick exactly (error-free product), not with
//! the validator's own arithmetic.

use proptest::prelude::*;
use proptest::sample::select;
use std::collections::HashMap;
use tidewire_engine::order_book::*;

/// One test instrument: subject, tick, `minPrice`, `maxPrice`.
type Spec = (&'static str, f64, Option<f64>, Option<f64>);

const INSTRUMENTS: [Spec; 9] = [
    ("/FX/EURUSD", 0.00001, None, None),
    ("/FX/GBPUSD", 0.000009999999999999999, None, None), // what JavaScript's 10 ** -5 publishes
    ("/FX/USDJPY", 0.001, None, None),
    ("/EQ/VOD", 0.01, None, None),
    ("/FUT/ES", 0.25, None, None),
    ("/FX/BANDED", 0.0001, Some(0.5), Some(2.0)),
    ("/X/TINY", 1e-12, None, None),
    ("/X/HUGE", 1e6, None, Some(5e9)),
    ("/X/THIRD", 1.0 / 3.0, None, None),
];

/// Highest price in ticks the book's limits allow.
const LIMIT_TICKS: u64 = MAX_PRICE_TICKS;
const MAX_QUANTITY: u64 = 1_000_000;

struct Catalog(HashMap<&'static str, Instrument>);

impl InstrumentCatalog for Catalog {
    fn instrument(&self, subject: &str) -> Option<Instrument> {
        self.0.get(subject).copied()
    }
}

fn catalog() -> Catalog {
    Catalog(
        INSTRUMENTS
            .iter()
            .map(|&(s, tick, min_price, max_price)| {
                let i = Instrument {
                    tick_size: Some(tick),
                    min_price,
                    max_price,
                };
                (s, i)
            })
            .collect(),
    )
}

fn limits() -> OrderLimits {
    OrderLimits {
        max_quantity: MAX_QUANTITY,
        max_price_ticks: LIMIT_TICKS,
        ..OrderLimits::default()
    }
}

/// The tick range of `spec` as the rules define it (bounds rounded inwards to whole ticks).
fn range(spec: &Spec) -> (u64, u64) {
    let (_, tick, min, max) = *spec;
    let lo = min.map_or(1, |m| (m / tick - TICK_TOLERANCE).ceil().max(1.0) as u64);
    let hi = max.map_or(LIMIT_TICKS, |m| {
        ((m / tick + TICK_TOLERANCE).floor() as u64).min(LIMIT_TICKS)
    });
    (lo, hi)
}

/// What the oracle says about a price.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Truth {
    /// Must be accepted: `n` ticks in range, within 99.9% of the tolerance of the tick.
    Valid(u64),
    /// Must be rejected with this rule.
    Invalid(RejectRule),
    /// Within 0.1% of a boundary of the tolerance: either verdict is right.
    Edge,
}

/// Distance of `p` to `n` ticks, in ticks, exactly up to one rounding of the result: `n * tick`
/// is split into `h + l` without error (fused multiply-add), and `h - p` is exact near the tick.
fn distance_in_ticks(p: f64, n: f64, tick: f64) -> f64 {
    let h = n * tick;
    let l = n.mul_add(tick, -h);
    ((h - p) + l).abs() / tick
}

fn oracle(p: f64, spec: &Spec) -> Truth {
    let tick = spec.1;
    let (lo, hi) = range(spec);
    if !p.is_finite() {
        return Truth::Invalid(RejectRule::NotFinite);
    }
    if p <= 0.0 {
        return Truth::Invalid(RejectRule::NotPositive);
    }
    let q = p / tick;
    let near = |bound: u64| (q - bound as f64).abs() <= 2.0 * TICK_TOLERANCE;
    if near(lo) || near(hi) {
        return Truth::Edge; // a bound is within the tolerance: either side is right
    }
    if q < lo as f64 {
        return Truth::Invalid(RejectRule::BelowLimit);
    }
    if q > hi as f64 {
        return Truth::Invalid(RejectRule::AboveLimit);
    }
    let n = q.round();
    let d = distance_in_ticks(p, n, tick);
    if d <= TICK_TOLERANCE * 0.999 {
        Truth::Valid(n as u64)
    } else if d >= TICK_TOLERANCE * 1.001 {
        Truth::Invalid(RejectRule::OffTick)
    } else {
        Truth::Edge
    }
}

/// Checks a price verdict (`Ok(())` = accepted) against the oracle.
fn judge(p: f64, spec: &Spec, got: Result<(), OrderReject>) -> Result<(), TestCaseError> {
    let truth = oracle(p, spec);
    match (&got, truth) {
        (Ok(()), Truth::Valid(_) | Truth::Edge) => {}
        (Err(r), Truth::Invalid(rule)) => {
            prop_assert_eq!(r.field, RejectField::Price, "{:e} {:?}", p, r);
            prop_assert_eq!(r.rule, rule, "{:e} on {}: {}", p, spec.0, r.message);
        }
        (Err(r), Truth::Edge) => {
            prop_assert!(matches!(
                r.rule,
                RejectRule::OffTick | RejectRule::BelowLimit | RejectRule::AboveLimit
            ));
        }
        _ => prop_assert!(false, "{:e} on {}: got {:?}, oracle {:?}", p, spec.0, got, truth),
    }
    if let Err(r) = &got {
        // Values as sent (1e+308), bounds with the tick's decimals: no 300-digit numbers.
        prop_assert!(r.message.len() < 160, "{}", r.message);
        if matches!(
            r.rule,
            RejectRule::BelowLimit | RejectRule::AboveLimit | RejectRule::OffTick
        ) {
            prop_assert!(r.message.contains(spec.0), "{}", r.message);
        }
    }
    Ok(())
}

/// Offsets from a whole tick, in ticks: on tick, inside and outside the tolerance, half a tick.
const OFFSETS: [f64; 15] = [
    0.0, 1e-9, -1e-9, 5e-7, -5e-7, 9.9e-7, -9.9e-7, 1.01e-6, -1.01e-6, 3e-6, -3e-6, 1e-3, 0.5, -0.5, 0.4999,
];

const SPECIAL: [f64; 16] = [
    5e-324,
    f64::MIN_POSITIVE,
    f64::MAX,
    f64::MIN,
    1e308,
    1e-9,
    -0.0,
    0.0,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::EPSILON,
    1.0,
    1.0852,
    9_007_199_254_740_993.0,
    1e15,
];

/// Whole tick counts worth trying: the bottom, the top and anywhere in between (and past both).
fn tick_counts(spec: &Spec) -> BoxedStrategy<u64> {
    let (lo, hi) = range(spec);
    prop_oneof![0u64..=lo + 20, hi.saturating_sub(20)..=hi + 20, 0u64..=hi + hi / 10,].boxed()
}

/// `x` moved by `ulps` units in the last place (any bit pattern that gives is a fine input too).
fn nudge(x: f64, ulps: i64) -> f64 {
    f64::from_bits((x.to_bits() as i64).wrapping_add(ulps) as u64)
}

/// Any double for the instrument at `i`.
fn price_for(i: usize) -> BoxedStrategy<f64> {
    let spec = INSTRUMENTS[i];
    let tick = spec.1;
    prop_oneof![
        any::<u64>().prop_map(f64::from_bits),
        select(SPECIAL.to_vec()),
        (tick_counts(&spec), select(OFFSETS.to_vec()), -4i64..=4)
            .prop_map(move |(n, off, ulps)| nudge(n as f64 * tick + off * tick, ulps)),
    ]
    .boxed()
}

fn instrument_and_price() -> impl Strategy<Value = (usize, f64)> {
    (0..INSTRUMENTS.len()).prop_flat_map(|i| (Just(i), price_for(i)))
}

fn any_quantity() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<u64>().prop_map(f64::from_bits),
        select(SPECIAL.to_vec()),
        (0u64..=MAX_QUANTITY + 5, select(vec![0.0, 0.5, 1e-9, -1e-9])).prop_map(|(n, off)| n as f64 + off),
    ]
}

fn order(cid: &str, instrument: &str, quantity: f64, price: Option<f64>) -> NewOrder {
    NewOrder {
        user: "alice".into(),
        client_order_id: cid.into(),
        instrument: instrument.into(),
        side: Side::Buy,
        quantity,
        price,
        time_in_force: TimeInForce::Gtc,
    }
}

/// A book holding one acknowledged limit order `o` on the instrument at `i`, at its lowest tick.
fn book_with_order(i: usize) -> (OrderBook, f64) {
    let spec = INSTRUMENTS[i];
    let start = range(&spec).0 as f64 * spec.1;
    let mut book = OrderBook::new(limits());
    book.submit(&order("o", spec.0, 10.0, Some(start)), &catalog(), 1)
        .expect("the lowest tick is a valid price");
    book.acknowledge(1, 2).expect("a new order can be acknowledged");
    (book, start)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn submit_accepts_exactly_whole_ticks_in_range((i, p) in instrument_and_price()) {
        let spec = INSTRUMENTS[i];
        let mut book = OrderBook::new(limits());
        let got = book.submit(&order("c", spec.0, 10.0, Some(p)), &catalog(), 1);
        match &got {
            Ok(ev) => {
                let accepted = book.get(ev.order_id()).map(|o| o.price);
                prop_assert_eq!(accepted, Some(Some(p)), "the price as sent, unchanged");
            }
            Err(_) => prop_assert!(book.is_empty(), "a reject changes nothing"),
        }
        judge(p, &spec, got.map(|_| ()))?;
        // The grid the book uses gives the same verdict and the oracle's tick count.
        let (lo, hi) = range(&spec);
        let grid = PriceGrid::new(spec.1, LIMIT_TICKS, spec.2, spec.3);
        prop_assert_eq!((grid.min_ticks(), grid.max_ticks()), (lo, hi));
        if let (Ok(n), Truth::Valid(want)) = (grid.ticks(p, spec.0), oracle(p, &spec)) {
            prop_assert_eq!(n, want);
        }
    }

    #[test]
    fn amend_accepts_exactly_whole_ticks_in_range((i, p) in instrument_and_price()) {
        let spec = INSTRUMENTS[i];
        let (mut book, start) = book_with_order(i);
        let got = book.amend("alice", "o", &Amend { quantity: None, price: Some(p) }, &catalog(), 3);
        let now = book.get(1).and_then(|o| o.price);
        match &got {
            Ok(_) => prop_assert_eq!(now, Some(p)),
            Err(r) if r.rule == RejectRule::NoChange => {
                prop_assert_eq!(p, start, "only the same price is no change");
                return Ok(());
            }
            Err(_) => prop_assert_eq!(now, Some(start), "a reject changes nothing"),
        }
        judge(p, &spec, got.map(|_| ()))?;
    }

    #[test]
    fn quantities_are_whole_and_within_the_limit(q in any_quantity(), amend in any::<bool>()) {
        let valid = q.is_finite() && q.fract() == 0.0 && q >= 1.0 && q <= MAX_QUANTITY as f64;
        let got = if amend {
            let (mut book, _) = book_with_order(0);
            let r = book.amend("alice", "o", &Amend { quantity: Some(q), price: None }, &catalog(), 3);
            let now = book.get(1).map(|o| o.quantity);
            match &r {
                Ok(_) => prop_assert_eq!(now, Some(q as u64)),
                Err(_) => prop_assert!(now == Some(10)),
            }
            // Amending to the same quantity is no change, not a quantity rule.
            if q == 10.0 {
                prop_assert_eq!(r.map(|_| ()).unwrap_err().rule, RejectRule::NoChange);
                return Ok(());
            }
            r.map(|_| ())
        } else {
            let mut book = OrderBook::new(limits());
            let r = book.submit(&order("c", "/EQ/VOD", q, Some(1.0)), &catalog(), 1);
            if r.is_ok() {
                prop_assert_eq!(book.get(1).map(|o| o.quantity), Some(q as u64));
            }
            r.map(|_| ())
        };
        match got {
            Ok(()) => prop_assert!(valid, "accepted {:e}", q),
            Err(r) => {
                prop_assert!(!valid, "rejected {:e}: {}", q, r);
                prop_assert_eq!(r.field, RejectField::Quantity);
                let want = if !q.is_finite() {
                    RejectRule::NotFinite
                } else if q <= 0.0 {
                    RejectRule::NotPositive
                } else if q.fract() != 0.0 {
                    RejectRule::NotWhole
                } else {
                    RejectRule::AboveLimit
                };
                prop_assert_eq!(r.rule, want, "{:e}: {}", q, r.message);
                prop_assert!(r.message.len() < 100, "{}", r.message);
            }
        }
    }
}

#[test]
fn the_reported_prices_are_rejected_on_submit_and_amend_with_the_rule_named() {
    let mut book = OrderBook::new(limits());
    let cat = catalog();
    let submit = |book: &mut OrderBook, p: f64| {
        book.submit(&order("x", "/FX/EURUSD", 1.0, Some(p)), &cat, 1)
            .unwrap_err()
    };
    let r = submit(&mut book, 1e308);
    assert_eq!((r.field, r.rule), (RejectField::Price, RejectRule::AboveLimit));
    assert_eq!(
        r.message,
        "price 1e+308 is above the maximum 10000.00000 for /FX/EURUSD"
    );
    let r = submit(&mut book, 5e-324);
    assert_eq!(r.rule, RejectRule::BelowLimit);
    assert_eq!(r.message, "price 5e-324 is below the minimum 0.00001 for /FX/EURUSD");
    let r = submit(&mut book, 1e-9);
    assert_eq!(r.message, "price 1e-9 is below the minimum 0.00001 for /FX/EURUSD");
    let r = submit(&mut book, 1.080001);
    assert_eq!(
        r.message,
        "price 1.080001 is not a multiple of tick 0.00001 for /FX/EURUSD (nearest: 1.08000, 1.08001)"
    );
    // JavaScript's 10 ** -5 as the tick: shown as 0.00001, not 0.000009999999999999999.
    let r = book
        .submit(&order("x", "/FX/GBPUSD", 1.0, Some(1.080001)), &cat, 1)
        .unwrap_err();
    assert!(r.message.contains("tick 0.00001 for /FX/GBPUSD"), "{}", r.message);
    assert!(book.is_empty());
    // The same rules on amend.
    let (mut book, start) = book_with_order(0);
    for (p, rule) in [
        (1e308, RejectRule::AboveLimit),
        (5e-324, RejectRule::BelowLimit),
        (1e-9, RejectRule::BelowLimit),
        (f64::NAN, RejectRule::NotFinite),
        (-0.0, RejectRule::NotPositive),
        (1.080001, RejectRule::OffTick),
    ] {
        let r = book
            .amend(
                "alice",
                "o",
                &Amend {
                    quantity: None,
                    price: Some(p),
                },
                &cat,
                3,
            )
            .unwrap_err();
        assert_eq!((r.field, r.rule), (RejectField::Price, rule), "{p:e}: {}", r.message);
    }
    assert_eq!(book.get(1).and_then(|o| o.price), Some(start));
    // Quantities: shown as sent.
    let r = book
        .submit(&order("q", "/FX/EURUSD", 1e308, Some(1.0852)), &cat, 1)
        .unwrap_err();
    assert_eq!(r.message, "quantity 1e+308 is above the limit 1000000");
    let r = book
        .submit(&order("q", "/FX/EURUSD", 5e-324, Some(1.0852)), &cat, 1)
        .unwrap_err();
    assert_eq!(
        (r.rule, r.message.as_str()),
        (RejectRule::NotWhole, "quantity 5e-324 must be a whole number")
    );
}

#[test]
fn an_instrument_gone_from_the_catalog_amends_on_the_default_tick_and_band() {
    let (mut book, _) = book_with_order(3); // /EQ/VOD, tick 0.01
    let empty = Catalog(HashMap::new());
    let amend = |book: &mut OrderBook, p: f64| {
        book.amend(
            "alice",
            "o",
            &Amend {
                quantity: None,
                price: Some(p),
            },
            &empty,
            3,
        )
    };
    // Default tick 0.0001 (OrderLimits::default): 1.2345 is on it, 1e9 above its 10^9 ticks.
    amend(&mut book, 1.2345).unwrap();
    assert_eq!(amend(&mut book, 1e9).unwrap_err().rule, RejectRule::AboveLimit);
    assert_eq!(amend(&mut book, 1.23455).unwrap_err().rule, RejectRule::OffTick);
}

#[test]
fn tick_sizes_outside_the_allowed_range_fall_back_to_the_default_tick() {
    let cat = Catalog(HashMap::from([
        (
            "/X/ZERO_TICK",
            Instrument {
                tick_size: Some(1e-300),
                ..Instrument::default()
            },
        ),
        (
            "/X/HUGE_TICK",
            Instrument {
                tick_size: Some(1e300),
                ..Instrument::default()
            },
        ),
    ]));
    let mut book = OrderBook::new(limits());
    for s in ["/X/ZERO_TICK", "/X/HUGE_TICK"] {
        let r = book.submit(&order("x", s, 1.0, Some(1e308)), &cat, 1).unwrap_err();
        assert_eq!(
            r.message,
            format!("price 1e+308 is above the maximum 100000.0000 for {s}")
        );
        book.submit(&order(s, s, 1.0, Some(1.2345)), &cat, 1).unwrap();
    }
}
