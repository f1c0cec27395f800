//! Property checks with a fixed-seed generator (reproducible, no extra crates): the encoder's
//! strings and numbers read back exactly, and the decoder never panics on mangled frames.

use tidewire_engine::wire::decode_source_frame;
use tidewire_engine::wire::encode::{write_f64, write_str};

/// xorshift64*: deterministic, good enough to spread test inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[test]
fn numbers_read_back_exactly_and_print_like_javascript() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for i in 0..200_000 {
        let n = match i % 3 {
            0 => f64::from_bits(rng.next()),
            1 => (rng.next() as i64 >> rng.below(60)) as f64,
            _ => (rng.below(10_000_000) as f64) / 10f64.powi(rng.below(12) as i32),
        };
        if !n.is_finite() {
            continue;
        }
        let mut out = Vec::new();
        write_f64(&mut out, n);
        let text = std::str::from_utf8(&out).unwrap();
        let back: f64 = text.parse().unwrap_or_else(|_| panic!("{text} does not parse"));
        assert_eq!(back, if n == 0.0 { 0.0 } else { n }, "{n:e} printed as {text}");
        if n.fract() == 0.0 && n.abs() < 1e21 {
            assert!(!text.contains(['.', 'e']), "integral {n:e} printed as {text}");
        }
        assert!(!text.contains("e-") || n.abs() < 1e-6, "{n:e} printed as {text}");
    }
}

#[test]
fn strings_read_back_exactly() {
    let alphabet: Vec<char> = "aZ09 \"\\/\u{0}\u{1}\u{8}\u{9}\u{a}\u{c}\u{d}\u{1f}\u{7f}é€😀\u{2028}\u{fffd}"
        .chars()
        .collect();
    let mut rng = Rng(42);
    for _ in 0..20_000 {
        let len = rng.below(24) as usize;
        let s: String = (0..len)
            .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize])
            .collect();
        let mut out = Vec::new();
        write_str(&mut out, &s);
        let back: String = serde_json::from_slice(&out).unwrap();
        assert_eq!(back, s);
        // Only control characters, quote and backslash are escaped; everything else is raw.
        let raw_unicode = s.chars().filter(|c| !c.is_ascii()).all(|c| {
            let mut buf = [0u8; 4];
            let enc = c.encode_utf8(&mut buf).as_bytes().to_vec();
            out.windows(enc.len()).any(|w| w == enc.as_slice())
        });
        assert!(raw_unicode, "{s:?} -> {}", String::from_utf8_lossy(&out));
    }
}

#[test]
fn decoder_never_panics_on_mangled_frames() {
    let valid = r#"[{"type":"record.publish","subject":"/FX/EURUSD","ts":1700000000000.25,"image":true,"fields":{"bid":1.0841,"name":"EUR/USD","open":true,"m":1924992000000,"x":null},"types":{"m":"timestamp"}}]"#;
    let pieces = [
        &b"{"[..],
        b"}",
        b"[",
        b"]",
        b",",
        b":",
        b"\"",
        b"\\",
        b"1e999",
        b"-",
        b"null",
        b"\xff",
        b"\xc3",
    ];
    let mut rng = Rng(7);
    let mut accepted = 0;
    for _ in 0..20_000 {
        let mut bytes = valid.as_bytes().to_vec();
        for _ in 0..=rng.below(3) {
            let at = rng.below(bytes.len() as u64 + 1) as usize;
            match rng.below(3) {
                0 if at < bytes.len() => {
                    bytes.remove(at);
                }
                1 => {
                    let p = pieces[rng.below(pieces.len() as u64) as usize];
                    bytes.splice(at..at, p.iter().copied());
                }
                _ if at < bytes.len() => bytes[at] = rng.next() as u8,
                _ => {}
            }
        }
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue;
        };
        if decode_source_frame(text).is_ok() {
            accepted += 1;
        }
    }
    assert!(accepted > 0, "some mutations stay valid (e.g. changed digits)");
}
