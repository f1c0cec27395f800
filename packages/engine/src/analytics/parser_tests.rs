//! Statement parser: what parses into what, canonical text, and every error with its column.

use std::time::Duration;

use super::*;
use crate::filter::Expr;

fn ok(text: &str) -> Statement {
    parse(text, &AnalyticsLimits::default()).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn err(text: &str) -> String {
    parse(text, &AnalyticsLimits::default()).unwrap_err().to_string()
}

#[test]
fn parses_the_full_form() {
    let st = ok(
        "select vwap(price, volume) as vwap, count(*) as n from /MKT/* where ticker = 'S0AA' \
                 group by ticker window length 1000 output every event",
    );
    assert_eq!(
        st.items,
        [
            Item {
                kind: ItemKind::Agg(Agg::Vwap("price".into(), "volume".into())),
                alias: "vwap".into()
            },
            Item {
                kind: ItemKind::Agg(Agg::CountAll),
                alias: "n".into()
            },
        ]
    );
    assert_eq!(st.source, Source::Pattern(Pattern::parse("/MKT/*").unwrap()));
    assert_eq!(st.filter.to_string(), "ticker = \"S0AA\"");
    assert_eq!(st.key, KeySpec::Field("ticker".into()));
    assert_eq!(st.window, WindowSpec::Length(1000));
    assert_eq!(st.output, OutputSpec::EveryEvent);
    assert!(!st.is_stream());
}

#[test]
fn defaults_and_every_aggregate() {
    let st = ok(
        "SELECT count(*), count(qty), sum(price), avg(price), min(price), max(price), \
                 first(price), last(price), stddev(price), vwap(price, qty) FROM /MKT/**",
    );
    let aliases: Vec<&str> = st.items.iter().map(|i| i.alias.as_str()).collect();
    assert_eq!(
        aliases,
        [
            "count",
            "count_qty",
            "sum_price",
            "avg_price",
            "min_price",
            "max_price",
            "first_price",
            "last_price",
            "stddev_price",
            "vwap"
        ]
    );
    assert_eq!(st.filter, Expr::All);
    assert_eq!(st.key, KeySpec::Subject);
    assert_eq!(st.window, WindowSpec::None);
    assert_eq!(st.output, OutputSpec::EveryEvent);
}

#[test]
fn windows_outputs_and_durations() {
    let cases = [
        ("window time 2s", WindowSpec::Time(Duration::from_secs(2))),
        ("window time 2 s", WindowSpec::Time(Duration::from_secs(2))),
        ("window time 1500ms", WindowSpec::Time(Duration::from_millis(1500))),
        ("window time 1 min", WindowSpec::Time(Duration::from_secs(60))),
        ("window time 1 h", WindowSpec::Time(Duration::from_secs(3600))),
        ("window length 1", WindowSpec::Length(1)),
        ("window none", WindowSpec::None),
    ];
    for (clause, want) in cases {
        assert_eq!(
            ok(&format!("select avg(p) from /A/* {clause}")).window,
            want,
            "{clause}"
        );
    }
    let st = ok("select avg(p) from /A/* output last every 500 ms");
    assert_eq!(st.output, OutputSpec::LastEvery(Duration::from_millis(500)));
}

#[test]
fn streams_are_statements_without_aggregates() {
    let st = ok("select * from /MKT/* where ticker = 'X'");
    assert!(st.is_stream());
    assert!(st.items.is_empty());
    let st = ok("select ticker, price as px from container /CONTAINER/FX");
    assert!(st.is_stream());
    assert_eq!(st.source, Source::Container("/CONTAINER/FX".into()));
    assert_eq!(st.items[1].alias, "px");
    assert_eq!(st.items[1].kind, ItemKind::Field("price".into()));
}

#[test]
fn canonical_text_is_equal_for_equal_statements() {
    let a = ok(
        "SELECT VWAP(price,volume) AS vwap , Count(*) FROM /MKT/* WHERE (ticker='S0AA') \
                WINDOW TIME 2000 MS OUTPUT EVERY EVENT",
    );
    let b = ok("select vwap(price, volume), count(*) as count from /MKT/* where ticker = \"S0AA\" window time 2s");
    assert_eq!(a.to_string(), b.to_string());
    assert_eq!(
        a.to_string(),
        "select vwap(price, volume) as vwap, count(*) as count from /MKT/* where ticker = \"S0AA\" window time 2 s"
    );
    // canonical text parses back to itself
    for text in [
        "select * from /MKT/* where price > 10 and (side = 'buy' or qty in (1, 2)) group by ticker",
        "select \"Last Price\" as \"from\", \"group\" from container /C/X output last every 1500 ms",
        "select sum(\"window\") as s from /A/** where window = 5 window length 3",
        "select min(p) as m from /A/* window time 90 s output last every 1 min",
    ] {
        let c = ok(text).to_string();
        assert_eq!(ok(&c).to_string(), c, "{text}");
        assert_eq!(ok(&c), ok(text), "{text}");
    }
    assert_ne!(
        ok("select avg(p) from /A/* window length 10").to_string(),
        ok("select avg(p) from /A/* window length 11").to_string()
    );
}

#[test]
fn the_where_clause_ends_at_the_next_clause() {
    // a field named like a clause keyword still filters; quoted text never ends the clause
    let st = ok("select count(*) from /A/* where window = 1 and output > 2 group by g window length 5");
    assert_eq!(st.filter.to_string(), "window = 1 and output > 2");
    assert_eq!(st.key, KeySpec::Field("g".into()));
    let st = ok("select count(*) from /A/* where name = 'group by x window length 5'");
    assert_eq!(st.key, KeySpec::Subject);
    assert_eq!(st.window, WindowSpec::None);
    let st = ok("select count(*) from /A/* where (a = 1 or b = 2) output last every 1 s");
    assert_eq!(st.filter.to_string(), "a = 1 or b = 2");
}

#[test]
fn errors_name_the_column() {
    let cases: &[(&str, &str)] = &[
        ("", "at 1: expected 'select', found end of statement"),
        (
            "select",
            "at 7: expected '*', an aggregate or a field, found end of statement",
        ),
        (
            "select avg(p)",
            "at 14: expected ',' or 'from' after the select list, found end of statement",
        ),
        (
            "select avg(p) from",
            "at 19: expected a subject pattern (like /MKT/*) or 'container' after 'from', found end of statement",
        ),
        (
            "select avg(p) from MKT",
            "at 20: expected a subject pattern (like /MKT/*) or 'container' after 'from', found 'MKT'",
        ),
        ("select avg(p) from /MKT/a$b", "at 20: segment 'a$b' "),
        (
            "select median(p) from /A",
            "at 8: expected an aggregate (count sum avg min max first last stddev vwap) before '(', found 'median'",
        ),
        (
            "select avg() from /A",
            "at 12: expected a field name in avg(...), found ')'",
        ),
        (
            "select avg(p q) from /A",
            "at 14: expected ')' to close avg(, found 'q'",
        ),
        (
            "select vwap(p) from /A",
            "at 14: expected ',' and the volume field in vwap(price, volume), found ')'",
        ),
        (
            "select avg(p), avg(p) from /A",
            "at 16: result field 'avg_p' is already named by the item at 8",
        ),
        (
            "select avg(p), q from /A",
            "at 16: a statement selects either aggregates or fields, not both",
        ),
        (
            "select avg(p) from /A where",
            "at 28: expected a filter after 'where', found end of statement",
        ),
        (
            "select avg(p) from /A where price >",
            "at 36: expected a value after '>', found end of filter",
        ),
        (
            "select avg(p) from /A where price > 1 group by",
            "at 47: expected a field name after 'group by', found end of statement",
        ),
        (
            "select avg(p) from /A where x = 1 window length 0",
            "at 49: a length window holds 1..100000 events, got 0",
        ),
        (
            "select avg(p) from /A window length 1.5",
            "at 37: expected the number of events after 'length' (a whole number), found number 1.5",
        ),
        (
            "select avg(p) from /A window time 2",
            "at 36: expected a time unit (ms, s, min, h), found end of statement",
        ),
        (
            "select avg(p) from /A window time 2 days",
            "at 37: expected a time unit (ms, s, min, h), found 'days'",
        ),
        (
            "select avg(p) from /A window time 0 s",
            "at 35: a duration is at least 1 ms, got 0",
        ),
        (
            "select avg(p) from /A window time 2 h",
            "at 35: a time window is at most 1 h, got 2 h",
        ),
        (
            "select avg(p) from /A window sliding",
            "at 30: expected 'length', 'time' or 'none' after 'window', found 'sliding'",
        ),
        ("select * from /A window length 5", "at 18: a window needs an aggregate"),
        (
            "select avg(p) from /A output every",
            "at 35: expected 'event' after 'output every', found end of statement",
        ),
        (
            "select avg(p) from /A output last 5 s",
            "at 35: expected 'every' after 'output last', found number 5",
        ),
        (
            "select avg(p) from /A output last every 5 s where x = 1",
            "at 45: expected end of statement (clauses go in this order",
        ),
        (
            "select avg(p) from /A window length 5 where x = 1",
            "at 39: expected 'output', end of statement",
        ),
        (
            "select avg(p) from container /C/*",
            "at 30: a container is one subject, not a pattern: '/C/*'",
        ),
        (
            "select avg(p) from /A where name = 'open",
            "at 36: unterminated string: expected a closing '",
        ),
    ];
    for &(text, want) in cases {
        let got = err(text);
        assert!(got.starts_with(want), "{text}\n  got:  {got}\n  want: {want}");
    }
}

#[test]
fn limits_bound_the_text_and_items() {
    let limits = AnalyticsLimits {
        max_text_bytes: 40,
        max_items: 2,
        ..AnalyticsLimits::default()
    };
    let long = format!("select avg(p) from /A where x = '{}'", "y".repeat(40));
    assert_eq!(
        parse(&long, &limits).unwrap_err().to_string(),
        format!("at 41: statement is {} bytes long; at most 40 are allowed", long.len())
    );
    assert_eq!(
        parse("select avg(a), avg(b), avg(c) from /A", &limits)
            .unwrap_err()
            .to_string(),
        "at 24: a statement selects at most 2 items"
    );
}
