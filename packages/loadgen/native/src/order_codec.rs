//! The orders preset's requests: order `k` of a run (the TS `orderOf` in
//! packages/loadgen/src/presets/orders.ts: same client order id, instrument, price and quantity) and its
//! `order.submit` frame text in the canonical key order of packages/protocol (messages.ts), so the
//! text is byte-identical to `encodeClientMessage`; the order.* golden frames pin it.

use std::fmt::Write as _;

/// Instruments the preset publishes (`/BENCH/ORD/0..99`; TS `ORDER_INSTRUMENTS`).
pub const ORDER_INSTRUMENTS: u64 = 100;

/// Side of an order.
#[allow(dead_code)] // the preset sends buy / day only; the codec covers every value (golden frames)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Buy,
    Sell,
}

/// Time in force of an order.
#[allow(dead_code)] // see Side
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeInForce {
    Day,
    Ioc,
    Gtc,
}

/// One `order.submit` (without its reqId).
#[derive(Debug, Clone, PartialEq)]
pub struct Submit<'a> {
    pub client_order_id: &'a str,
    pub instrument: &'a str,
    pub side: Side,
    pub quantity: u64,
    /// Limit price; `None`: a market order.
    pub price: Option<f64>,
    pub time_in_force: TimeInForce,
}

/// Appends `s` to `out` as a JSON string (quotes included).
fn push_json_str(out: &mut String, s: &str) {
    if s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        // rare here (ids and subjects of the preset need no escapes): let serde_json do it exactly
        out.push_str(&serde_json::Value::from(s).to_string());
    } else {
        out.push('"');
        out.push_str(s);
        out.push('"');
    }
}

/// Appends a JSON number as JavaScript prints it (shortest round-trip; finite values with
/// |x| in 1e-6..1e21, the range of prices and quantities: no exponent form).
fn push_number(out: &mut String, x: f64) {
    let _ = write!(out, "{x}");
}

/// Writes the `order.submit` text of `o` with `req_id` into `out` (cleared first).
pub fn encode_submit(out: &mut String, req_id: u64, o: &Submit<'_>) {
    out.clear();
    let _ = write!(out, r#"{{"type":"order.submit","reqId":{req_id},"clientOrderId":"#);
    push_json_str(out, o.client_order_id);
    out.push_str(r#","instrument":"#);
    push_json_str(out, o.instrument);
    out.push_str(match o.side {
        Side::Buy => r#","side":"buy","quantity":"#,
        Side::Sell => r#","side":"sell","quantity":"#,
    });
    let _ = write!(out, "{}", o.quantity);
    if let Some(p) = o.price {
        out.push_str(r#","price":"#);
        push_number(out, p);
    }
    out.push_str(match o.time_in_force {
        TimeInForce::Day => r#","timeInForce":"day"}"#,
        TimeInForce::Ioc => r#","timeInForce":"ioc"}"#,
        TimeInForce::Gtc => r#","timeInForce":"gtc"}"#,
    });
}

/// `k` in base 36, lower case (JavaScript's `k.toString(36)`).
pub fn base36(mut k: u64, out: &mut String) {
    let mut digits = [0u8; 13];
    let mut n = 0;
    loop {
        let d = (k % 36) as u8;
        digits[n] = if d < 10 { b'0' + d } else { b'a' + d - 10 };
        n += 1;
        k /= 36;
        if k == 0 {
            break;
        }
    }
    out.extend(digits[..n].iter().rev().map(|&b| b as char));
}

/// Order number `k` of a run: a resting limit buy 10 below the bid of instrument `k mod 100`
/// (bid 100 + i), quantity 100 x (1 + k mod 10), client order id `<prefix>-<k base 36>`.
/// Writes the id and instrument into the two buffers (cleared first) and returns the submit.
pub fn order_of<'a>(k: u64, prefix: &str, id_buf: &'a mut String, instrument_buf: &'a mut String) -> Submit<'a> {
    let i = k % ORDER_INSTRUMENTS;
    id_buf.clear();
    id_buf.push_str(prefix);
    id_buf.push('-');
    base36(k, id_buf);
    instrument_buf.clear();
    let _ = write!(instrument_buf, "/BENCH/ORD/{i}");
    Submit {
        client_order_id: id_buf,
        instrument: instrument_buf,
        side: Side::Buy,
        quantity: 100 * (1 + k % 10),
        price: Some((90 + i) as f64),
        time_in_force: TimeInForce::Day,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// The client-direction order.submit golden frames that decode (no `error`).
    fn golden_submits() -> Vec<Value> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../protocol/vectors/frames.json");
        let text = std::fs::read_to_string(path).expect("golden frames readable");
        let v: Value = serde_json::from_str(&text).expect("golden frames are JSON");
        v.as_array()
            .expect("an array of vectors")
            .iter()
            .filter(|f| f["direction"] == "client" && f.get("error").is_none())
            .filter(|f| f["messages"][0]["type"] == "order.submit")
            .cloned()
            .collect()
    }

    #[test]
    fn encodes_every_golden_submit_byte_for_byte() {
        let frames = golden_submits();
        assert!(frames.len() >= 2, "order.submit golden frames found: {}", frames.len());
        let mut out = String::new();
        for f in frames {
            let m = &f["messages"][0];
            let o = Submit {
                client_order_id: m["clientOrderId"].as_str().expect("id"),
                instrument: m["instrument"].as_str().expect("instrument"),
                side: if m["side"] == "buy" { Side::Buy } else { Side::Sell },
                quantity: m["quantity"].as_u64().expect("quantity"),
                price: m["price"].as_f64(),
                time_in_force: match m["timeInForce"].as_str() {
                    Some("day") => TimeInForce::Day,
                    Some("ioc") => TimeInForce::Ioc,
                    _ => TimeInForce::Gtc,
                },
            };
            encode_submit(&mut out, m["reqId"].as_u64().expect("reqId"), &o);
            assert_eq!(out, f["frame"].as_str().expect("frame"), "{}", f["name"]);
        }
    }

    #[test]
    fn escapes_strings_that_need_it() {
        let mut out = String::new();
        let o = Submit {
            client_order_id: "a",
            instrument: "/X/\"q\\",
            side: Side::Sell,
            quantity: 1,
            price: Some(0.5),
            time_in_force: TimeInForce::Gtc,
        };
        encode_submit(&mut out, 3, &o);
        let v: Value = serde_json::from_str(&out).expect("valid JSON");
        assert_eq!((v["instrument"].as_str(), v["price"].as_f64()), (Some("/X/\"q\\"), Some(0.5)));
    }

    #[test]
    fn orders_match_the_ts_order_of() {
        // orders.test.ts: orderOf(12345, 'Lrun1') is instrument 45, price 135; 12345 = 9*36^2 + 18*36 + 33
        let (mut id, mut ins) = (String::new(), String::new());
        let o = order_of(12345, "Lrun1", &mut id, &mut ins);
        assert_eq!(
            (o.client_order_id, o.instrument, o.price, o.quantity),
            ("Lrun1-9ix", "/BENCH/ORD/45", Some(135.0), 600)
        );
        assert_eq!((o.side, o.time_in_force), (Side::Buy, TimeInForce::Day));
        let mut s = String::new();
        for (k, want) in [(0u64, "0"), (35, "z"), (36, "10"), (u64::MAX, "3w5e11264sgsf")] {
            s.clear();
            base36(k, &mut s);
            assert_eq!(s, want);
        }
        let mut out = String::new();
        let o = order_of(7, "P", &mut id, &mut ins);
        encode_submit(&mut out, 10, &o);
        assert_eq!(
            out,
            r#"{"type":"order.submit","reqId":10,"clientOrderId":"P-7","instrument":"/BENCH/ORD/7","side":"buy","quantity":800,"price":97,"timeInForce":"day"}"#
        );
    }
}
