//! Golden frames (packages/protocol/vectors/frames.json): every `server` vector re-encoded by
//! the Rust encoder must match byte for byte; every `source` vector must decode to its
//! `messages`, or fail with its `error` {code, field, index}.

mod golden_support;

use golden_support::{assert_frame, fields, vectors};
use serde_json::{Map, Value as J};
use tidewire_engine::error::ErrorCode;
use tidewire_engine::value::Value;
use tidewire_engine::wire::encode::{self, SubscribedRef};
use tidewire_engine::wire::order::{order_ack, order_reject, OrderAction};
use tidewire_engine::wire::statement::{statement_closed, statement_created};
use tidewire_engine::wire::{decode_source_frame, Publish};

fn code_of(s: &str) -> ErrorCode {
    ErrorCode::parse(s).unwrap_or_else(|| panic!("code {s} is not a protocol code"))
}

fn encode_message(out: &mut Vec<u8>, m: &Map<String, J>) {
    let u32_of = |k: &str| m[k].as_u64().expect(k) as u32;
    match m["type"].as_str().expect("type") {
        "record.subscribed" | "record.resumed" => {
            let recs: Vec<SubscribedRef<'_>> = m["records"]
                .as_array()
                .expect("records")
                .iter()
                .map(|r| SubscribedRef {
                    subject: r["subject"].as_str().expect("subject"),
                    id: r["id"].as_u64().expect("id") as u32,
                    pending: r["pending"].as_bool().expect("pending"),
                })
                .collect();
            if m["type"] == "record.resumed" {
                encode::resumed(out, u32_of("reqId"), &recs);
            } else {
                encode::subscribed(out, u32_of("reqId"), &recs);
            }
        }
        "record.unsubscribed" => {
            let subjects: Vec<&str> = m["subjects"]
                .as_array()
                .expect("subjects")
                .iter()
                .map(|s| s.as_str().expect("subject"))
                .collect();
            encode::unsubscribed(out, u32_of("reqId"), &subjects);
        }
        "source.registered" => {
            encode::source_registered(out, u32_of("reqId"), m["active"].as_bool().expect("active"));
        }
        "source.activate" => {
            let patterns: Vec<&str> = m["patterns"]
                .as_array()
                .expect("patterns")
                .iter()
                .map(|p| p.as_str().expect("pattern"))
                .collect();
            encode::source_activate(out, &patterns);
        }
        "record.status" => {
            let stale = match m["status"].as_str().expect("status") {
                "stale" => true,
                "ok" => false,
                other => panic!("unknown status {other}"),
            };
            encode::record_status(out, u32_of("id"), stale);
        }
        "record.image" => {
            let f = fields(m);
            let iter = f.iter().map(|(k, v, t)| (k.as_str(), v.as_ref(), *t));
            encode::image(
                out,
                u32_of("id"),
                m["subject"].as_str().expect("subject"),
                m["seq"].as_u64().expect("seq"),
                m["ts"].as_f64().expect("ts"),
                iter,
            );
            if m.get("reset").and_then(J::as_bool) == Some(true) {
                encode::flag_reset(out);
            }
        }
        "record.update" => {
            let f = fields(m);
            let iter = f.iter().map(|(k, v, t)| (k.as_str(), v.as_ref(), *t));
            let conflated = m.get("conflated").and_then(J::as_bool).unwrap_or(false);
            encode::update(
                out,
                u32_of("id"),
                m["seq"].as_u64().expect("seq"),
                m["ts"].as_f64().expect("ts"),
                iter,
                conflated,
            );
        }
        "error" => encode::error(
            out,
            m.get("reqId").and_then(J::as_u64).map(|r| r as u32),
            code_of(m["code"].as_str().expect("code")),
            m["message"].as_str().expect("message"),
            m.get("field").and_then(J::as_str),
            m.get("index").and_then(J::as_u64).map(|i| i as u32),
        ),
        "order.ack" | "order.reject" => {
            let action = match m["action"].as_str().expect("action") {
                "submit" => OrderAction::Submit,
                "cancel" => OrderAction::Cancel,
                "amend" => OrderAction::Amend,
                other => panic!("action {other}"),
            };
            let s = |k: &str| m[k].as_str().expect(k);
            if m["type"] == "order.ack" {
                let n = |k: &str| m[k].as_u64().expect(k);
                order_ack(
                    out,
                    u32_of("reqId"),
                    action,
                    s("clientOrderId"),
                    n("orderId"),
                    n("seq"),
                    s("status"),
                );
            } else {
                order_reject(
                    out,
                    u32_of("reqId"),
                    action,
                    s("clientOrderId"),
                    s("field"),
                    s("rule"),
                    s("message"),
                );
            }
        }
        "statement.created" => {
            let s = |k: &str| m[k].as_str().expect(k);
            statement_created(out, u32_of("reqId"), s("name"), s("statement"), s("container"));
        }
        "statement.closed" => statement_closed(out, u32_of("reqId"), m["name"].as_str().expect("name")),
        // Messages the Node server encodes itself (session.*): not the engine's.
        _ => {}
    }
}

fn is_engine_message(m: &Map<String, J>) -> bool {
    matches!(
        m["type"].as_str(),
        Some(
            "record.subscribed"
                | "record.resumed"
                | "record.unsubscribed"
                | "record.image"
                | "record.update"
                | "record.status"
                | "source.registered"
                | "source.activate"
                | "error"
                | "order.ack"
                | "order.reject"
                | "statement.created"
                | "statement.closed"
        )
    )
}

#[test]
fn server_vectors_encode_byte_for_byte() {
    let mut checked = 0;
    let mut orders = 0;
    let mut statements = 0;
    // Vectors with `error` are invalid server frames for the TS decoder: nothing to encode.
    for v in vectors("frames.json")
        .iter()
        .filter(|v| v["direction"] == "server" && v.get("error").is_none())
    {
        let msgs = v["messages"].as_array().expect("messages");
        let objs: Vec<&Map<String, J>> = msgs.iter().map(|m| m.as_object().expect("object")).collect();
        if !objs.iter().all(|m| is_engine_message(m)) {
            continue;
        }
        assert_frame(v, objs.iter().copied(), encode_message);
        checked += 1;
        orders += usize::from(
            objs.iter()
                .any(|m| m["type"].as_str().is_some_and(|t| t.starts_with("order."))),
        );
        statements += usize::from(
            objs.iter()
                .any(|m| m["type"].as_str().is_some_and(|t| t.starts_with("statement."))),
        );
    }
    assert!(checked >= 5, "only {checked} server vectors checked");
    assert!(orders >= 3, "only {orders} order.* server vectors checked");
    assert!(statements >= 2, "only {statements} statement.* server vectors checked");
}

fn publish_json(p: &Publish) -> J {
    let mut m = Map::new();
    m.insert("type".into(), "record.publish".into());
    m.insert("subject".into(), p.subject.clone().into());
    if let Some(ts) = p.ts {
        m.insert("ts".into(), serde_json::Number::from_f64(ts).map_or(J::Null, J::Number));
    }
    if p.image {
        m.insert("image".into(), true.into());
    }
    let mut fields = Map::new();
    let mut types = Map::new();
    for f in &p.fields {
        let v = match &f.value {
            None => J::Null,
            Some(Value::Number(n)) => serde_json::Number::from_f64(*n).map_or(J::Null, J::Number),
            Some(Value::Timestamp(t)) => J::Number((*t).into()),
            Some(Value::Str(s)) => J::String(s.to_string()),
            Some(Value::Bool(b)) => J::Bool(*b),
        };
        fields.insert(f.name.to_string(), v);
        if f.typed {
            let ty = f.value.as_ref().map_or("number", |v| v.field_type().as_str());
            types.insert(f.name.to_string(), ty.into());
        }
    }
    m.insert("fields".into(), J::Object(fields));
    if !types.is_empty() {
        m.insert("types".into(), J::Object(types));
    }
    J::Object(m)
}

/// Numbers compared as doubles (serde_json keeps 1924992000000 as an integer, we as f64).
fn normalize(v: &J) -> J {
    match v {
        J::Number(n) => serde_json::Number::from_f64(n.as_f64().unwrap_or(f64::NAN)).map_or(J::Null, J::Number),
        J::Array(a) => J::Array(a.iter().map(normalize).collect()),
        J::Object(o) => J::Object(o.iter().map(|(k, v)| (k.clone(), normalize(v))).collect()),
        other => other.clone(),
    }
}

#[test]
fn source_vectors_decode() {
    let mut checked = 0;
    for v in vectors("frames.json").iter().filter(|v| v["direction"] == "source") {
        let name = &v["name"];
        let frame = v["frame"].as_str().expect("frame");
        let is_publish_frame = match &v["messages"] {
            J::Array(ms) => ms.iter().all(|m| m["type"] == "record.publish"),
            _ => true,
        };
        if let Some(err) = v.get("error") {
            let e = decode_source_frame(frame).expect_err(&format!("vector {name} must fail"));
            assert_eq!(
                e.code().as_str(),
                err["code"].as_str().expect("code"),
                "vector {name}: {e}"
            );
            assert_eq!(e.field(), err.get("field").and_then(J::as_str), "vector {name}: {e}");
            assert_eq!(
                e.index().map(u64::from),
                err.get("index").and_then(J::as_u64),
                "vector {name}: {e}"
            );
            checked += 1;
            continue;
        }
        if !is_publish_frame {
            continue; // session.* frames on /source are decoded by the server, not the engine
        }
        let decoded = decode_source_frame(frame).unwrap_or_else(|e| panic!("vector {name}: {e}"));
        let got: Vec<J> = decoded.iter().map(publish_json).map(|j| normalize(&j)).collect();
        let want: Vec<J> = match &v["messages"] {
            J::Array(ms) => ms.iter().map(normalize).collect(),
            one => vec![normalize(one)],
        };
        assert_eq!(got, want, "vector {name}");
        // Field order is part of the contract (it is the record's field order).
        for (p, w) in decoded.iter().zip(&want) {
            let names: Vec<&str> = p.fields.iter().map(|f| f.name.as_str()).collect();
            let want_names: Vec<&str> = w["fields"]
                .as_object()
                .expect("fields")
                .keys()
                .map(String::as_str)
                .collect();
            let mut sorted_want = want_names.clone();
            sorted_want.sort_unstable();
            let mut sorted_got = names.clone();
            sorted_got.sort_unstable();
            assert_eq!(sorted_got, sorted_want, "vector {name}");
        }
        checked += 1;
    }
    assert!(checked >= 1, "no source vectors checked");
}
