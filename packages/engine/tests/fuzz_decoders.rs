//! Fuzz properties (issue 6, "Hostile input"): the source-frame decoder and the filter parser /
//! compiler never panic on any input, and reject with a typed error. Short proptest runs here;
//! the long run (a million inputs each) is `cargo run --release --no-default-features --example
//! fuzz_decoders -- 1000000` (docs/security.md).

mod fuzz_support;

use fuzz_support::FILTER_WORDS;
use proptest::prelude::*;
use tidewire_engine::error::ErrorCode;
use tidewire_engine::filter::{parse, Filter, FilterLimits, Row};
use tidewire_engine::value::Value;
use tidewire_engine::wire::decode_source_frame;

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

fn check_frame(text: &str) {
    if let Err(e) = decode_source_frame(text) {
        assert!(FRAME_CODES.contains(&e.code()), "{text:.200}: {e:?}");
        assert!(!e.to_string().is_empty());
    }
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
