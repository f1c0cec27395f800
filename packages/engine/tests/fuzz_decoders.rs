//! Fuzz properties (docs/security.md, "Fuzzing"): the source-frame decoder and the filter parser /
//! compiler never panic on any input, and reject with a typed error. Short proptest runs here;
//! the long run (a million inputs each) is `cargo run --release --no-default-features --example
//! fuzz_decoders -- 1000000` (docs/security.md).

mod fuzz_support;

use fuzz_support::FILTER_WORDS;
use proptest::prelude::*;
use tidewire_engine::error::ErrorCode;
use tidewire_engine::filter::{parse, Filter, FilterLimits, Row};
use tidewire_engine::value::Value;
use tidewire_engine::wire::{decode_source_frame, decode_source_frame_tree};

const FRAME_CODES: [ErrorCode; 3] = [ErrorCode::BadFrame, ErrorCode::BadRequest, ErrorCode::UnknownType];

fn golden_frames() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../protocol/vectors/frames.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|e| e["frame"].as_str().unwrap().to_owned())
        .collect()
}

/// Typed rejection or success, and the one-pass decoder agrees with the tree decoder bit for bit
/// (same publishes, or the same error: code, index, field and message).
fn check_frame(text: &str) {
    let fast = decode_source_frame(text);
    if let Err(e) = &fast {
        assert!(FRAME_CODES.contains(&e.code()), "{text:.200}: {e:?}");
        assert!(!e.to_string().is_empty());
    }
    let tree = decode_source_frame_tree(text);
    assert_eq!(format!("{fast:?}"), format!("{tree:?}"), "{text:.200}");
}

/// A JSON number literal: integers (short, long, past u64), decimals, exponents, -0, overflow.
fn number_literal() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => any::<i64>().prop_map(|n| n.to_string()),
        2 => any::<u64>().prop_map(|n| format!("{n}{}", n % 10)),
        3 => any::<f64>().prop_map(|x| format!("{x:?}")),
        2 => any::<f64>().prop_map(|x| format!("{x:e}")),
        2 => (any::<i32>(), 0u32..1000, -330i32..330).prop_map(|(i, f, e)| format!("{i}.{f:03}E{e:+}")),
        1 => prop::sample::select(vec!["-0", "0", "-0.0", "1e999", "-1e400", "1e-400", "01", "1.", ".5", "1e", "-"])
            .prop_map(str::to_owned),
    ]
}

/// A field value: number, string (short, long, escaped, control byte), bool, null, or junk.
fn value_literal() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => number_literal(),
        4 => "[a-zA-Z0-9 é€_/.-]{0,24}".prop_map(|s| format!("\"{s}\"")),
        1 => prop::sample::select(vec![
            "true", "false", "null", "\"a\\\"b\"", "\"\\u00e9\"", "\"tab\tin\"", "{}", "[1]", "tru", "\"\\ud800\"",
        ])
        .prop_map(str::to_owned),
    ]
}

/// A field name: valid mostly, sometimes long, escaped, or breaking the pattern.
fn name_literal() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => "[a-z_][a-zA-Z0-9_]{0,20}",
        1 => "[a-z]{60,70}",
        1 => prop::sample::select(vec!["1x", "a-b", "", "a\\u0062", "bid", "é"]).prop_map(str::to_owned),
    ]
}

/// One message of a plausible publish frame: keys in random order, occasionally one missing,
/// repeated, unknown or mistyped, and random whitespace.
fn message_literal() -> impl Strategy<Value = String> {
    let fields = prop::collection::vec((name_literal(), value_literal()), 0..8);
    // `types` entries name a field by position (index past the fields: a random name).
    let types = prop::collection::vec(
        (
            any::<prop::sample::Index>(),
            name_literal(),
            prop::sample::select(vec!["number", "string", "bool", "timestamp", "date"]),
        ),
        0..2,
    );
    let subject = prop_oneof![
        8 => "(/[A-Za-z0-9_.@:-]{1,12}){1,3}",
        1 => prop::sample::select(vec!["A", "/", "/a//b", "/a b", "/é"]).prop_map(str::to_owned),
    ];
    (
        fields,
        types,
        subject,
        prop::option::of(number_literal()),
        prop::option::of(any::<bool>()),
        any::<prop::sample::Index>(),
        0u8..24,
        prop::sample::select(vec!["", " ", "\n\t", "\r\n "]),
    )
        .prop_map(|(fields, types, subject, ts, image, order, quirk, ws)| {
            let obj = |pairs: Vec<(String, String)>| {
                let inner: Vec<String> = pairs.iter().map(|(k, v)| format!("\"{k}\"{ws}:{ws}{v}")).collect();
                format!("{{{ws}{}{ws}}}", inner.join(&format!("{ws},")))
            };
            let types: Vec<(String, String)> = types
                .into_iter()
                .map(|(at, other, t)| {
                    let i = at.index(fields.len() + 1);
                    (fields.get(i).map_or(other, |f| f.0.clone()), format!("\"{t}\""))
                })
                .collect();
            let mut keys = vec![
                ("type".to_owned(), "\"record.publish\"".to_owned()),
                ("subject".to_owned(), format!("\"{subject}\"")),
                ("fields".to_owned(), obj(fields)),
            ];
            if let Some(ts) = ts {
                keys.push(("ts".into(), ts));
            }
            if let Some(image) = image {
                keys.push(("image".into(), image.to_string()));
            }
            if !types.is_empty() {
                keys.push(("types".into(), obj(types)));
            }
            let n = keys.len();
            keys.rotate_left(order.index(n));
            match quirk {
                0 => drop(keys.remove(order.index(n))),
                1 => keys.push(keys[order.index(n)].clone()),
                2 => keys.push(("extra".into(), "1".into())),
                3 => keys[order.index(n)].1 = "7".into(),
                _ => {}
            }
            obj(keys)
        })
}

/// A row where every field id has a value of a type picked by the id.
struct AnyRow;
impl Row for AnyRow {
    fn get(&self, field: u32) -> Option<&Value> {
        static VALUES: std::sync::OnceLock<[Value; 4]> = std::sync::OnceLock::new();
        let v = VALUES.get_or_init(|| {
            [
                Value::Number(1.5),
                Value::Str("Vodafone".into()),
                Value::Bool(true),
                Value::Timestamp(1_893_456_000_000),
            ]
        });
        v.get(field as usize % 5)
    }
}

fn check_filter(text: &str) {
    if let Ok(expr) = parse(text, &FilterLimits::default()) {
        let mut next = 0;
        let f = Filter::compile(&expr, &mut |_| {
            next += 1;
            next
        });
        f.matches(&AnyRow);
        // Canonical text parses back to the same tree.
        let canonical = expr.to_string();
        assert_eq!(
            parse(&canonical, &FilterLimits::default()).as_ref(),
            Ok(&expr),
            "{text} -> {canonical}"
        );
    }
}

fn filter_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(FILTER_WORDS), 0..40).prop_map(|w| w.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn decoder_never_panics_on_any_string(text in any::<String>()) {
        check_frame(&text);
    }

    #[test]
    fn decoder_never_panics_on_mutated_golden_frames(
        pick in any::<prop::sample::Index>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..4, any::<char>(), 1usize..3000), 1..4),
    ) {
        let frames = golden_frames();
        let mut text = frames[pick.index(frames.len())].clone();
        for (at, kind, c, n) in edits {
            let mut i = at.index(text.len() + 1);
            while !text.is_char_boundary(i) { i -= 1; }
            match kind {
                0 => text.insert(i, c),
                1 => text.truncate(i),
                2 => text.insert_str(i, &format!("{}1{}", "[".repeat(n), "]".repeat(n))),
                _ => text.insert_str(i, ["1e999", "-0", "\"\\ud800\"", "18446744073709551616", "\"a\":1,"][n % 5]),
            }
        }
        check_frame(&text);
    }

    /// Plausible frames (most valid, many one rule away): the fast path must give the tree
    /// decoder's answer on every one.
    #[test]
    fn one_pass_decoder_matches_the_tree_decoder(
        msgs in prop::collection::vec(message_literal(), 1..6),
        single in any::<bool>(),
    ) {
        let text = if single { msgs[0].clone() } else { format!("[{}]", msgs.join(",")) };
        check_frame(&text);
    }

    #[test]
    fn filter_never_panics_on_any_string(text in any::<String>()) {
        check_filter(&text);
    }

    #[test]
    fn filter_never_panics_on_token_soup(text in filter_soup()) {
        check_filter(&text);
    }
}

#[test]
fn deep_and_long_input_hits_the_documented_limits() {
    let limits = FilterLimits::default();
    for open in ["(", "not ", "not ("] {
        let text = format!("{}a = 1", open.repeat(100_000));
        let e = parse(&text, &limits).unwrap_err().to_string();
        assert!(e.contains("bytes long"), "{e}");
        let text = format!("{}a = 1", open.repeat(40));
        let e = parse(&text, &limits).unwrap_err().to_string();
        assert!(e.contains("nests deeper than 32"), "{e}");
    }
    let chain = vec!["a = 1"; 400].join(" and ");
    assert!(parse(&chain, &limits).is_ok());
    let frame = format!("{}1{}", "[".repeat(1_000_000), "]".repeat(1_000_000));
    let e = decode_source_frame(&frame).unwrap_err();
    assert_eq!(e.code(), ErrorCode::BadFrame);
    assert!(e.to_string().contains("recursion limit"), "{e}");
}

/// The plausible-frame generator is not vacuous: over 10% of its frames are valid (so the
/// one-pass path is exercised) and over 10% are not (so its declining is).
#[test]
fn plausible_frames_are_both_valid_and_invalid() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = message_literal();
    let (mut ok, total) = (0, 2000);
    for _ in 0..total {
        let text = strategy.new_tree(&mut runner).expect("generate").current();
        check_frame(&text);
        ok += usize::from(decode_source_frame(&text).is_ok());
    }
    assert!(ok * 10 > total && ok * 10 < total * 9, "{ok} of {total} valid");
}
