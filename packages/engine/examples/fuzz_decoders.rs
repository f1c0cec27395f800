//! Long fuzz run of the engine's untrusted-input parsers: `wire::decode_source_frame`
//! and `filter::parse` + `Filter::compile` + `matches`, on seeded random inputs (random bytes,
//! mutated golden frames, deep nesting, huge numbers, lone surrogates, filter token soup).
//! Every call runs under `catch_unwind`; a panic, an untyped error or a call slower than the
//! hang bound stops the run with the input that did it.
//!
//! ```text
//! cargo run --release --no-default-features --example fuzz_decoders -- [inputs] [seed] [corpus.json]
//! ```
//! `inputs` per parser (default 100000), `seed` (default 6). With a corpus written by
//! packages/protocol/src/decode.fuzz.test.ts (FUZZ_CORPUS_OUT), also reports how many frames the
//! TS and Rust decoders disagree on (see tests/fuzz_differential.rs for the rules).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

#[path = "../tests/fuzz_support/mod.rs"]
mod fuzz_support;

use fuzz_support::FILTER_WORDS;
use tidewire_engine::error::ErrorCode;
use tidewire_engine::filter::{parse, Filter, FilterLimits, Row};
use tidewire_engine::value::Value;
use tidewire_engine::wire::decode_source_frame;

/// A single call slower than this counts as a hang.
const HANG: Duration = Duration::from_secs(1);

/// splitmix64: small, seeded, good enough to pick mutations.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in 0..n (n > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

const JSON_SNIPPETS: &[&str] = &[
    "1e999",
    "-1e999",
    "1e-400",
    "-0",
    "9007199254740993",
    "18446744073709551616",
    "\"\\ud800\"",
    "\"\\udfff\"",
    "\"é€𝄞\"",
    "\"\\u0000\"",
    "\u{2028}",
    "\u{feff}",
    "\"__proto__\":1,",
    "\"type\":\"record.publish\",",
    "\"fields\":{\"a\":1,\"a\":2},",
    "\"types\":{\"a\":\"timestamp\"},",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\\",
    "null",
    "true",
    "NaN",
    "\"a\":",
    "[]",
    "{}",
    "\"/A\"",
    "\"/A/\"",
];

/// JSON values on the decoder's rules and limits.
const VALUES: &[&str] = &[
    "1e999",
    "-0",
    "1.5",
    "8640000000000000",
    "8640000000000001",
    "\"\"",
    "\"/A\"",
    "\"/A/\"",
    "\"//A\"",
    "\"/A B\"",
    "\"record.publish\"",
    "\"session.login\"",
    "\"timestamp\"",
    "\"number\"",
    "\"bool\"",
    "true",
    "null",
    "{}",
    "[]",
    "{\"a\":1}",
    "{\"1\":1}",
    "{\"_a\":\"x\",\"b\":null}",
    "[1]",
    "\"\\ud800\"",
];

fn char_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A random source-frame input: raw bytes, or a golden frame with 1..4 mutations.
fn frame_input(rng: &mut Rng, golden: &[String]) -> String {
    if rng.below(8) == 0 {
        let bytes: Vec<u8> = (0..rng.below(200)).map(|_| rng.next() as u8).collect();
        return String::from_utf8_lossy(&bytes).into_owned();
    }
    let mut text = golden[rng.below(golden.len())].clone();
    for _ in 0..1 + rng.below(4) {
        let i = char_boundary(&text, rng.below(text.len() + 1));
        match rng.below(9) {
            0 => text.insert(i, char::from_u32(rng.below(0x11_0000) as u32).unwrap_or('\u{fffd}')),
            1 => text.truncate(i),
            2 => {
                let max = if rng.below(10) == 0 { 100_000 } else { 200 };
                let n = 1 + rng.below(max);
                let (open, close) = if rng.below(2) == 0 {
                    ("[", "]")
                } else {
                    ("{\"a\":", "}")
                };
                text.insert_str(i, &format!("{}1{}", open.repeat(n), close.repeat(n)));
            }
            3 => {
                let j = char_boundary(&text, (i + 1 + rng.below(16)).min(text.len()));
                text.replace_range(i..j, "");
            }
            4 => {
                let j = char_boundary(&text, (i + 1 + rng.below(64)).min(text.len()));
                let dup = text[i..j].to_owned();
                text.insert_str(j, &dup);
            }
            5 => text.insert_str(i, rng.pick(JSON_SNIPPETS)),
            _ => {
                // Replace a simple value (after a ':') with another: keeps most frames JSON, so
                // the rules past the parser are exercised.
                if let Some(c) = text[i..].find(':').map(|c| i + c + 1) {
                    let end = text[c..].find([',', '}', ']']).map_or(text.len(), |e| c + e);
                    text.replace_range(c..end, rng.pick(VALUES));
                }
            }
        }
    }
    text
}

/// A random filter input: random characters, token soup, or deep nesting.
fn filter_input(rng: &mut Rng) -> String {
    match rng.below(6) {
        0 => (0..rng.below(80))
            .map(|_| char::from_u32(rng.below(0x250) as u32).unwrap_or('?'))
            .collect(),
        1 => {
            let open = rng.pick(&["(", "not ", "not (", "((", "NOT("]);
            let n = rng.below(5000);
            format!("{}price > 1{}", open.repeat(n), ")".repeat(rng.below(n + 1)))
        }
        2 | 3 => grammar(rng, 0),
        _ => (0..rng.below(60))
            .map(|_| rng.pick(FILTER_WORDS))
            .collect::<Vec<_>>()
            .join(if rng.below(4) == 0 { "" } else { " " }),
    }
}

/// A filter that follows the grammar (docs/views.md), nested up to 40 levels (the limit is 32).
fn grammar(rng: &mut Rng, depth: u32) -> String {
    if depth > 40 {
        return "price = 1".into();
    }
    match rng.below(8) {
        0 => format!("not {}", grammar(rng, depth + 1)),
        1 => format!("({})", grammar(rng, depth + 1)),
        2 => format!("{} and {}", grammar(rng, depth + 1), grammar(rng, depth + 1)),
        3 => format!("{} or {}", grammar(rng, depth + 1), grammar(rng, depth + 1)),
        4 => {
            let values: Vec<&str> = (0..1 + rng.below(5)).map(|_| rng.pick(LITERALS)).collect();
            format!("{} in ({})", rng.pick(FIELDS), values.join(", "))
        }
        _ => format!("{} {} {}", rng.pick(FIELDS), rng.pick(OPS), rng.pick(LITERALS)),
    }
}

const FIELDS: &[&str] = &["price", "name", "flag", "when", "\"Last Price\"", "'in'", "a.b", "_x"];
const OPS: &[&str] = &[
    "=",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "~=",
    "contains",
    "startsWith",
    "icontains",
];
const LITERALS: &[&str] = &[
    "1",
    "-3e2",
    "1.5",
    "0",
    "-0",
    "1e308",
    "\"Vod\"",
    "'x'",
    "\"\"",
    "true",
    "false",
    "2030-01-01",
    "2030-01-01T12:00:00Z",
    "2030-01-01T13:00:00+01:00",
    "1970-01-01T00:00:00.001Z",
    "\"é\"",
];

/// A row where every field id has a value of a type picked by the id (one id in five is absent).
struct AnyRow([Value; 4]);
impl Row for AnyRow {
    fn get(&self, field: u32) -> Option<&Value> {
        self.0.get(field as usize % 5)
    }
}

/// Run totals of one parser.
#[derive(Default)]
struct Tally {
    inputs: u64,
    /// Rejections by error code (`PARSE` for a filter parse error).
    rejected: std::collections::BTreeMap<&'static str, u64>,
    bytes: u64,
    slowest: Duration,
    /// The slowest input, re-timed alone at the end (a slow call under load may be preemption).
    slowest_input: String,
}

impl Tally {
    fn timed(&mut self, input: &str, call: impl FnOnce() -> Result<(), &'static str>) {
        let t0 = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(call));
        let dt = t0.elapsed();
        let Ok(outcome) = result else {
            eprintln!("PANIC on input ({} bytes): {:?}", input.len(), truncate(input));
            std::process::exit(1);
        };
        if dt > HANG {
            eprintln!("HANG ({dt:?}) on input ({} bytes): {:?}", input.len(), truncate(input));
            std::process::exit(1);
        }
        self.inputs += 1;
        self.bytes += input.len() as u64;
        if let Err(code) = outcome {
            *self.rejected.entry(code).or_default() += 1;
        }
        if dt > self.slowest {
            self.slowest = dt;
            self.slowest_input = input.to_owned();
        }
    }

    /// Prints the totals; `again` re-runs one input (the slowest is re-timed, best of 5).
    fn print(&self, name: &str, took: Duration, again: impl Fn(&str)) {
        let retimed = (0..5)
            .map(|_| {
                let t0 = Instant::now();
                again(&self.slowest_input);
                t0.elapsed()
            })
            .min()
            .unwrap_or_default();
        println!(
            "{name}: {} inputs ({:.1} MB) in {:.1} s, rejected {:?}, 0 panics, 0 hangs; slowest call {:?} ({} bytes; {:?} re-timed alone)",
            self.inputs,
            self.bytes as f64 / 1e6,
            took.as_secs_f64(),
            self.rejected,
            self.slowest,
            self.slowest_input.len(),
            retimed
        );
    }
}

fn truncate(s: &str) -> &str {
    &s[..char_boundary(s, s.len().min(300))]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args.get(1).map_or(100_000, |a| a.parse().expect("inputs: a number"));
    let seed: u64 = args.get(2).map_or(6, |a| a.parse().expect("seed: a number"));
    let golden_path = concat!(env!("CARGO_MANIFEST_DIR"), "/../protocol/vectors/frames.json");
    let golden: Vec<String> =
        serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(golden_path).expect("frames.json"))
            .expect("frames.json is JSON")
            .as_array()
            .expect("an array")
            .iter()
            .map(|v| v["frame"].as_str().expect("frame").to_owned())
            .collect();
    // A panic is reported by `timed` with its input; keep the default hook quiet.
    std::panic::set_hook(Box::new(|_| {}));

    let mut rng = Rng(seed);
    let (mut tally, t0) = (Tally::default(), Instant::now());
    for _ in 0..n {
        let text = frame_input(&mut rng, &golden);
        tally.timed(&text, || match decode_source_frame(&text) {
            Ok(_) => Ok(()),
            Err(e) => {
                assert!(matches!(
                    e.code(),
                    ErrorCode::BadFrame | ErrorCode::BadRequest | ErrorCode::UnknownType
                ));
                Err(e.code().as_str())
            }
        });
    }
    tally.print("wire::decode_source_frame", t0.elapsed(), |t| {
        let _ = decode_source_frame(t);
    });

    let limits = FilterLimits::default();
    let row = AnyRow([
        Value::Number(1.5),
        Value::Str("Vodafone".into()),
        Value::Bool(true),
        Value::Timestamp(1_893_456_000_000),
    ]);
    let (mut tally, t0) = (Tally::default(), Instant::now());
    for _ in 0..n {
        let text = filter_input(&mut rng);
        tally.timed(&text, || match parse(&text, &limits) {
            Ok(expr) => {
                let mut next = 0;
                let f = Filter::compile(&expr, &mut |_| {
                    next += 1;
                    next
                });
                f.matches(&row);
                Ok(())
            }
            Err(e) => {
                assert!(e.column >= 1 && !e.message.is_empty());
                Err("PARSE")
            }
        });
    }
    tally.print("filter::parse + Filter::compile + matches", t0.elapsed(), |t| {
        if let Ok(e) = parse(t, &limits) {
            Filter::compile(&e, &mut |_| 0).matches(&row);
        }
    });

    if let Some(path) = args.get(3) {
        // Back to the default hook: a panic here is the harness's own, not a finding.
        drop(std::panic::take_hook());
        differential(path);
    }
}

/// Counts TS/Rust disagreements on a corpus written by the TS fuzz test.
fn differential(path: &str) {
    let corpus: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(path).expect("read corpus")).expect("corpus is JSON");
    let (mut agree, mut by_design, mut other) = (0, 0, 0);
    for entry in &corpus {
        let frame = entry["frame"].as_str().expect("frame");
        let rust = decode_source_frame(frame);
        let same = match &rust {
            Ok(m) => entry["ok"] == true && entry["count"].as_u64() == Some(m.len() as u64),
            Err(e) => {
                entry["ok"] == false
                    && entry["code"].as_str() == Some(e.code().as_str())
                    && entry.get("field").and_then(|f| f.as_str()) == e.field()
                    && entry.get("index").and_then(|i| i.as_u64()) == e.index().map(u64::from)
            }
        };
        let design = rust.as_ref().is_err_and(|e| {
            let m = e.to_string();
            // The same rule as tests/fuzz_differential.rs.
            m.contains("recursion limit exceeded")
                || m.contains("lone leading surrogate")
                || m.contains("unexpected end of hex escape")
                || m.contains("invalid unicode code point")
        });
        if same {
            agree += 1;
        } else if design {
            by_design += 1;
        } else {
            other += 1;
            if other <= 10 {
                eprintln!("DISAGREE: {:?}\n  ts: {entry}\n  rust: {rust:?}", truncate(frame));
            }
        }
    }
    println!(
        "differential: {} frames, {agree} agree, {by_design} differ by design, {other} disagree",
        corpus.len()
    );
    if other > 0 {
        std::process::exit(1);
    }
}
