//! Differential fuzz: the engine's source-frame decoder must give the verdict the
//! TypeScript decoder (`decodeSourceFrame`, packages/protocol) recorded for the same seeded
//! mutations of the golden frames: accept (same message count) or reject with the same code,
//! field and index. The corpus is written by packages/protocol/src/decode.fuzz.test.ts.
//!
//! Two differences are by design (docs/security.md, "Fuzzing"): the engine refuses as BAD_FRAME
//! a frame nested deeper than 128 (serde_json's recursion limit; JSON.parse has none) and a
//! `\uD800`-style lone surrogate escape (not a Unicode scalar value, so not a Rust string). Any
//! other disagreement fails the test.

use serde_json::Value as J;
use tidewire_engine::wire::{decode_source_frame, decode_source_frame_tree};

/// `(code, field, index)` or the accepted message count.
#[derive(Debug, PartialEq)]
enum Verdict {
    Ok(usize),
    Err(String, Option<String>, Option<u32>),
}

/// The engine's BAD_FRAME for a frame nested past 128 levels or holding a lone surrogate escape.
fn by_design(frame: &str) -> bool {
    match decode_source_frame(frame) {
        Err(e) => {
            let m = e.to_string();
            m.contains("recursion limit exceeded")
                || m.contains("lone leading surrogate")
                || m.contains("unexpected end of hex escape")
                || m.contains("invalid unicode code point")
        }
        Ok(_) => false,
    }
}

fn rust_verdict(frame: &str) -> Verdict {
    match decode_source_frame(frame) {
        Ok(msgs) => Verdict::Ok(msgs.len()),
        Err(e) => Verdict::Err(e.code().as_str().to_owned(), e.field().map(str::to_owned), e.index()),
    }
}

fn ts_verdict(entry: &J) -> Verdict {
    if entry["ok"].as_bool() == Some(true) {
        return Verdict::Ok(entry["count"].as_u64().expect("count") as usize);
    }
    Verdict::Err(
        entry["code"].as_str().expect("code").to_owned(),
        entry.get("field").and_then(J::as_str).map(str::to_owned),
        entry.get("index").and_then(J::as_u64).map(|i| i as u32),
    )
}

#[test]
fn rust_and_ts_source_decoders_agree_on_the_corpus() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../protocol/fuzz/source-frames.corpus.json"
    );
    let corpus: Vec<J> =
        serde_json::from_str(&std::fs::read_to_string(path).expect("read corpus")).expect("corpus is JSON");
    assert!(corpus.len() >= 1000, "corpus too small: {}", corpus.len());
    let mut disagreements = Vec::new();
    let (mut known, mut agreed) = (0, 0);
    for (i, entry) in corpus.iter().enumerate() {
        let frame = entry["frame"].as_str().expect("frame");
        let (ts, rust) = (ts_verdict(entry), rust_verdict(frame));
        if ts == rust {
            agreed += 1;
        } else if by_design(frame) {
            known += 1;
        } else {
            disagreements.push(format!("#{i} {frame:.200}\n  ts:   {ts:?}\n  rust: {rust:?}"));
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} of {} frames disagree:\n{}",
        disagreements.len(),
        corpus.len(),
        disagreements.join("\n")
    );
    // The by-design differences must stay a small part of the corpus, or it tests nothing.
    assert!(
        agreed > corpus.len() * 9 / 10,
        "only {agreed} of {} agree ({known} by design)",
        corpus.len()
    );
}

/// The engine's two source decoders (one-pass scanner with tree fallback, and the tree decoder
/// alone) give the same answer, bit for bit, on every corpus frame: same publishes, or the same
/// error with the same code, index, field and message.
#[test]
fn one_pass_and_tree_decoders_agree_on_the_corpus() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../protocol/fuzz/source-frames.corpus.json"
    );
    let corpus: Vec<J> =
        serde_json::from_str(&std::fs::read_to_string(path).expect("read corpus")).expect("corpus is JSON");
    let mut accepted = 0;
    for entry in &corpus {
        let frame = entry["frame"].as_str().expect("frame");
        let (fast, tree) = (decode_source_frame(frame), decode_source_frame_tree(frame));
        assert_eq!(format!("{fast:?}"), format!("{tree:?}"), "{frame:.200}");
        accepted += usize::from(fast.is_ok());
    }
    assert!(
        accepted > 0,
        "no corpus frame is valid: the comparison tested only errors"
    );
}
