//! The fast path of `order.submit`: reads a client frame's bytes straight into an order, with no
//! JSON tree and no JS object per order (the server's transport hands the frame to napi as is).
//!
//! It accepts only frames that packages/protocol's `decodeClientMessage` accepts with the same
//! values: one JSON object whose keys are those of `OrderSubmit` (messages.ts), each at most once,
//! `type` `"order.submit"`, `reqId` a plain integer 0..=2^31-1, `clientOrderId` 1..64 of
//! `[A-Za-z0-9._:-]`, `instrument` a subject ('/'-separated segments of `[A-Za-z0-9_.@:-]`, at
//! most 256 bytes), `side` buy/sell, finite `quantity` and optional `price`, `timeInForce`
//! day/ioc/gtc. Anything else (another type, an unknown or repeated key, an escape or a non-ASCII
//! byte in a string, a `reqId` written as `1e1`, trailing bytes) is `None`: the caller then takes
//! the protocol decoder's path, which answers it (or its typed error) exactly as before. So the fast
//! path never changes what a client sees; it only skips work for the frames every trader sends.

use crate::order_book::{Side, TimeInForce};
use tidewire_protocol::messages::{key, kind, order_side, time_in_force};

/// The protocol's limits and syntax rules (tidewire-protocol, generated from
/// packages/protocol/schema/protocol.json): `CLIENT_ORDER_ID_PATTERN`, `SUBJECT_PATTERN`.
pub use tidewire_protocol::limits::{MAX_CLIENT_ORDER_ID_CHARS, MAX_REQ_ID, MAX_SUBJECT_BYTES};
pub use tidewire_protocol::syntax::{is_client_order_id, is_subject};

/// An `order.submit` read by [`read_submit`]; its strings borrow the frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SubmitFrame<'a> {
    /// Request id, 0..=`MAX_REQ_ID`.
    pub req_id: u32,
    /// Client order id (syntax checked).
    pub client_order_id: &'a str,
    /// Instrument subject (syntax checked).
    pub instrument: &'a str,
    /// Buy or sell.
    pub side: Side,
    /// Quantity as sent: any finite number (the book checks whole, > 0, <= max).
    pub quantity: f64,
    /// Limit price; `None` = market order (no `price` key).
    pub price: Option<f64>,
    /// Time in force.
    pub time_in_force: TimeInForce,
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        self.ws();
        (self.b.get(self.i) == Some(&c)).then(|| self.i += 1)
    }

    /// A string of printable ASCII without escapes (anything else: `None`).
    fn string(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.i;
        loop {
            match *self.b.get(self.i)? {
                b'"' => break,
                b'\\' | 0..=0x1f | 0x80..=0xff => return None,
                _ => self.i += 1,
            }
        }
        let s = &self.b[start..self.i];
        self.i += 1;
        std::str::from_utf8(s).ok()
    }

    /// A JSON number token (RFC 8259 grammar), as text.
    fn number(&mut self) -> Option<&'a str> {
        self.ws();
        let start = self.i;
        let digits = |c: &mut Self| {
            let from = c.i;
            while c.b.get(c.i).is_some_and(u8::is_ascii_digit) {
                c.i += 1;
            }
            c.i > from
        };
        if self.b.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        match self.b.get(self.i) {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                digits(self);
            }
            _ => return None,
        }
        if self.b.get(self.i) == Some(&b'.') {
            self.i += 1;
            if !digits(self) {
                return None;
            }
        }
        if let Some(b'e' | b'E') = self.b.get(self.i) {
            self.i += 1;
            if let Some(b'+' | b'-') = self.b.get(self.i) {
                self.i += 1;
            }
            if !digits(self) {
                return None;
            }
        }
        std::str::from_utf8(&self.b[start..self.i]).ok()
    }

    /// A finite number (`JSON.parse` and `str::parse` both round correctly).
    fn finite(&mut self) -> Option<f64> {
        let v: f64 = self.number()?.parse().ok()?;
        v.is_finite().then_some(v)
    }
}

/// `reqId` written as plain digits (no sign, fraction or exponent), 0..=`MAX_REQ_ID`.
fn req_id(token: &str) -> Option<u32> {
    let plain = token.len() <= 10 && token.bytes().all(|b| b.is_ascii_digit());
    let v: u64 = if plain { token.parse().ok()? } else { return None };
    (v <= u64::from(MAX_REQ_ID)).then_some(v as u32)
}

const TYPE: u8 = 1;
const REQ_ID: u8 = 2;
const CLIENT_ORDER_ID: u8 = 4;
const INSTRUMENT: u8 = 8;
const SIDE: u8 = 16;
const QUANTITY: u8 = 32;
const PRICE: u8 = 64;
const TIME_IN_FORCE: u8 = 128;
const REQUIRED: u8 = TYPE | REQ_ID | CLIENT_ORDER_ID | INSTRUMENT | SIDE | QUANTITY | TIME_IN_FORCE;

/// Reads a well-formed `order.submit` frame (see the module doc); `None` for anything else,
/// valid or not, which the protocol decoder then handles. Never panics; O(frame length).
pub fn read_submit(frame: &[u8]) -> Option<SubmitFrame<'_>> {
    let mut c = Cursor { b: frame, i: 0 };
    c.eat(b'{')?;
    let mut seen = 0u8;
    let mut out = SubmitFrame {
        req_id: 0,
        client_order_id: "",
        instrument: "",
        side: Side::Buy,
        quantity: 0.0,
        price: None,
        time_in_force: TimeInForce::Day,
    };
    loop {
        let name = c.string()?;
        c.eat(b':')?;
        let bit = match name {
            key::TYPE => {
                (c.string()? == kind::ORDER_SUBMIT).then_some(())?;
                TYPE
            }
            key::REQ_ID => {
                out.req_id = req_id(c.number()?)?;
                REQ_ID
            }
            key::CLIENT_ORDER_ID => {
                out.client_order_id = c.string().filter(|s| is_client_order_id(s))?;
                CLIENT_ORDER_ID
            }
            key::INSTRUMENT => {
                out.instrument = c.string().filter(|s| is_subject(s))?;
                INSTRUMENT
            }
            key::SIDE => {
                out.side = match c.string()? {
                    order_side::BUY => Side::Buy,
                    order_side::SELL => Side::Sell,
                    _ => return None,
                };
                SIDE
            }
            key::QUANTITY => {
                out.quantity = c.finite()?;
                QUANTITY
            }
            key::PRICE => {
                out.price = Some(c.finite()?);
                PRICE
            }
            key::TIME_IN_FORCE => {
                out.time_in_force = match c.string()? {
                    time_in_force::DAY => TimeInForce::Day,
                    time_in_force::IOC => TimeInForce::Ioc,
                    time_in_force::GTC => TimeInForce::Gtc,
                    _ => return None,
                };
                TIME_IN_FORCE
            }
            _ => return None,
        };
        if seen & bit != 0 {
            return None; // JSON.parse keeps the last of a repeated key: leave that to the decoder
        }
        seen |= bit;
        if c.eat(b',').is_some() {
            continue;
        }
        c.eat(b'}')?;
        break;
    }
    c.ws();
    (c.i == frame.len() && seen & REQUIRED == REQUIRED).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"type":"order.submit","reqId":7,"clientOrderId":"L-1a:2_b.c","instrument":"/BENCH/ORD/3","side":"sell","quantity":100,"price":93.25,"timeInForce":"gtc"}"#;

    #[test]
    fn reads_a_canonical_submit_and_any_key_order_or_whitespace() {
        let f = read_submit(GOOD.as_bytes()).unwrap();
        assert_eq!(
            f,
            SubmitFrame {
                req_id: 7,
                client_order_id: "L-1a:2_b.c",
                instrument: "/BENCH/ORD/3",
                side: Side::Sell,
                quantity: 100.0,
                price: Some(93.25),
                time_in_force: TimeInForce::Gtc,
            }
        );
        let spaced = " \n{ \"timeInForce\" : \"day\" ,\t\"side\":\"buy\",\"quantity\":-0.5e1,\"instrument\":\"/A\",\"clientOrderId\":\"x\",\"reqId\":2147483647,\"type\":\"order.submit\"}\r\n";
        let f = read_submit(spaced.as_bytes()).unwrap();
        assert_eq!(
            (f.req_id, f.quantity, f.price, f.side),
            (MAX_REQ_ID, -5.0, None, Side::Buy)
        );
        assert_eq!(f.time_in_force, TimeInForce::Day);
    }

    #[test]
    fn leaves_everything_else_to_the_protocol_decoder() {
        let swap = |from: &str, to: &str| GOOD.replacen(from, to, 1);
        let rejected = [
            swap("order.submit", "order.cancel"),
            swap(r#""reqId":7"#, r#""reqId":7.0"#),
            swap(r#""reqId":7"#, r#""reqId":1e1"#),
            swap(r#""reqId":7"#, r#""reqId":-1"#),
            swap(r#""reqId":7"#, r#""reqId":2147483648"#),
            swap(r#""reqId":7"#, r#""reqId":07"#),
            swap(r#""reqId":7"#, r#""reqId":"7""#),
            swap("L-1a:2_b.c", ""),
            swap("L-1a:2_b.c", &"x".repeat(65)),
            swap("L-1a:2_b.c", "a b"),
            swap("L-1a:2_b.c", r"a\u0041"),
            swap("/BENCH/ORD/3", "BENCH"),
            swap("/BENCH/ORD/3", "/BENCH//3"),
            swap("/BENCH/ORD/3", "/BENCH/"),
            swap("/BENCH/ORD/3", "/BÉNCH"),
            swap("/BENCH/ORD/3", &format!("/{}", "a".repeat(256))),
            swap("sell", "SELL"),
            swap("100", "1e999"),
            swap("100", "null"),
            swap("100", "+1"),
            swap("100", "1."),
            swap("100", ".5"),
            swap("93.25", "null"),
            swap("gtc", "fok"),
            swap(r#","price":93.25"#, r#","price":93.25,"price":94"#),
            swap(r#""side":"sell","#, r#""side":"sell","extra":1,"#),
            swap(r#""side":"sell","#, ""),
            format!("{GOOD} x"),
            format!("[{GOOD}]"),
            GOOD.trim_end_matches('}').to_owned(),
            "{}".to_owned(),
            String::new(),
        ];
        for r in &rejected {
            assert_eq!(read_submit(r.as_bytes()), None, "{r}");
        }
        assert!(read_submit(&[0xEF, 0xBB, 0xBF, b'{', b'}']).is_none());
        // every prefix of a good frame is refused, never a panic
        for n in 0..GOOD.len() {
            assert_eq!(read_submit(&GOOD.as_bytes()[..n]), None);
        }
    }

    /// packages/protocol/vectors/orders.json: every vector the fast path takes (`fastPath`) reads
    /// to exactly the message the protocol decoder gives; every other one, valid or not, is `None`.
    #[test]
    fn reads_the_golden_order_frames_as_the_protocol_decoder_does() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../protocol/vectors/orders.json");
        let text = std::fs::read_to_string(path).expect("order vectors readable");
        let vectors: serde_json::Value = serde_json::from_str(&text).expect("order vectors are JSON");
        let (mut taken, mut left) = (0, 0);
        for v in vectors.as_array().expect("an array of vectors") {
            let name = v["name"].as_str().expect("name");
            let got = read_submit(v["frame"].as_str().expect("frame").as_bytes());
            if !v["fastPath"].as_bool().expect("fastPath") {
                assert_eq!(got, None, "{name}: the fast path must leave it to the protocol decoder");
                left += 1;
                continue;
            }
            let m = &v["message"];
            let s = |k: &str| m[k].as_str().unwrap_or_else(|| panic!("{name}: {k}"));
            let want = SubmitFrame {
                req_id: m["reqId"].as_u64().expect("reqId") as u32,
                client_order_id: s("clientOrderId"),
                instrument: s("instrument"),
                side: if s("side") == "buy" { Side::Buy } else { Side::Sell },
                quantity: m["quantity"].as_f64().expect("quantity"),
                price: m.get("price").and_then(serde_json::Value::as_f64),
                time_in_force: match s("timeInForce") {
                    "day" => TimeInForce::Day,
                    "ioc" => TimeInForce::Ioc,
                    _ => TimeInForce::Gtc,
                },
            };
            assert_eq!(got, Some(want), "{name}");
            taken += 1;
        }
        assert!(
            taken >= 3 && left >= 10,
            "order vectors: {taken} taken, {left} left to the decoder"
        );
    }

    #[test]
    fn subject_and_client_order_id_rules_match_the_protocol_patterns() {
        for s in ["/A", "/a/b", "/x@T1", "/_.:-/9"] {
            assert!(is_subject(s), "{s}");
        }
        for s in ["", "/", "//", "/a/", "a", "/a b", "/a//b", "/a\u{e9}"] {
            assert!(!is_subject(s), "{s}");
        }
        assert!(is_subject(&format!("/{}", "a".repeat(255))));
        assert!(is_client_order_id(&"z".repeat(64)) && is_client_order_id("a.b_c:d-e"));
        assert!(!is_client_order_id("a/b") && !is_client_order_id("a@b"));
    }
}
