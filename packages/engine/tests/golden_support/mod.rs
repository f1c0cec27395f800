//! Shared by the golden-frame tests: reading a vectors file of packages/protocol, turning a
//! message's `fields` (+ `types`) into store values, and checking an encoded frame.

use serde_json::{Map, Value as J};
use tidewire_engine::value::{FieldType, Value};

/// A field as the encoders take it: name, value (`None` = deleted), declared type.
pub type Field = (String, Option<Value>, Option<FieldType>);

/// The vectors of `packages/protocol/vectors/<file>`.
pub fn vectors(file: &str) -> Vec<J> {
    let path = format!("{}/../protocol/vectors/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {path}: {e}"));
    match serde_json::from_str::<J>(&text).unwrap_or_else(|e| panic!("{path} is not JSON: {e}")) {
        J::Array(v) => v,
        _ => panic!("{path} is not an array"),
    }
}

/// Encodes `messages` as one frame (`[` m1 `,` m2 ... `]`, each by `encode`) and asserts it is
/// vector `v`'s `frame`, byte for byte.
pub fn assert_frame<'a>(
    v: &J,
    messages: impl IntoIterator<Item = &'a Map<String, J>>,
    encode: impl Fn(&mut Vec<u8>, &Map<String, J>),
) {
    let mut out = vec![b'['];
    for (i, m) in messages.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        encode(&mut out, m);
    }
    out.push(b']');
    assert_eq!(
        String::from_utf8(out).expect("utf8"),
        v["frame"].as_str().expect("frame"),
        "vector {}",
        v["name"]
    );
}

/// Fields of a message as store values (timestamps per `types`), in message order.
pub fn fields(m: &Map<String, J>) -> Vec<Field> {
    let types = m.get("types").and_then(J::as_object);
    m["fields"]
        .as_object()
        .expect("fields")
        .iter()
        .map(|(k, v)| {
            let ty = types
                .and_then(|t| t.get(k))
                .and_then(J::as_str)
                .and_then(FieldType::parse);
            let value = match v {
                J::Null => None,
                J::Bool(b) => Some(Value::Bool(*b)),
                J::String(s) => Some(Value::Str(s.as_str().into())),
                J::Number(n) => {
                    let f = n.as_f64().expect("number");
                    Some(if ty == Some(FieldType::Timestamp) {
                        Value::Timestamp(f as i64)
                    } else {
                        Value::Number(f)
                    })
                }
                other => panic!("field value {other}"),
            };
            (k.clone(), value, ty)
        })
        .collect()
}
