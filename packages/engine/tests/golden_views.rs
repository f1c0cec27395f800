//! Golden frames of the view messages (packages/protocol/vectors/views.json): every `server`
//! vector re-encoded by `wire::view` must match byte for byte.

mod golden_support;

use golden_support::{assert_frame, fields, vectors};
use serde_json::{Map, Value as J};
use tidewire_engine::wire::view::{view_closed, view_resumed, view_size, ViewCreated, ViewRows};

fn u(m: &Map<String, J>, k: &str) -> u64 {
    m[k].as_u64().unwrap_or_else(|| panic!("{k}"))
}

fn encode_message(out: &mut Vec<u8>, m: &Map<String, J>) {
    let seq = m.get("seq").map(|s| s.as_u64().expect("seq"));
    let list = |k: &str| m.get(k).and_then(J::as_array).cloned().unwrap_or_default();
    match m["type"].as_str().expect("type") {
        "view.created" => {
            let mut w = ViewCreated::begin(out, u(m, "reqId") as u32, u(m, "viewId") as u32, seq, u(m, "count"));
            for r in list("rows") {
                let r = r.as_object().expect("row");
                let f = fields(r);
                let it = f.iter().map(|(k, v, t)| (k.as_str(), v.as_ref(), *t));
                let subject = r["subject"].as_str().expect("subject");
                w.row(
                    u(r, "index"),
                    u(r, "id") as u32,
                    subject,
                    u(r, "seq"),
                    r["ts"].as_f64().expect("ts"),
                    it,
                );
            }
            w.finish_flagged(m.get("reset").and_then(J::as_bool).unwrap_or(false));
        }
        "view.rows" => {
            let mut w = ViewRows::begin(out, u(m, "reqId") as u32, u(m, "viewId") as u32, seq);
            for id in list("left") {
                w.left(id.as_u64().expect("id") as u32);
            }
            for r in list("moved") {
                let r = r.as_object().expect("moved");
                w.moved(u(r, "index"), u(r, "id") as u32);
            }
            for r in list("entered") {
                let r = r.as_object().expect("entered");
                let f = fields(r);
                let it = f.iter().map(|(k, v, t)| (k.as_str(), v.as_ref(), *t));
                let subject = r["subject"].as_str().expect("subject");
                w.entered(
                    u(r, "index"),
                    u(r, "id") as u32,
                    subject,
                    u(r, "seq"),
                    r["ts"].as_f64().expect("ts"),
                    it,
                );
            }
            for r in list("updated") {
                let r = r.as_object().expect("updated");
                let f = fields(r);
                let it = f.iter().map(|(k, v, t)| (k.as_str(), v.as_ref(), *t));
                let conflated = r.get("conflated").and_then(J::as_bool).unwrap_or(false);
                w.updated(
                    u(r, "id") as u32,
                    u(r, "seq"),
                    r["ts"].as_f64().expect("ts"),
                    it,
                    conflated,
                );
            }
            w.finish();
        }
        "view.size" => view_size(out, u(m, "viewId") as u32, seq, u(m, "count")),
        "view.resumed" => view_resumed(out, u(m, "reqId") as u32, u(m, "viewId") as u32, u(m, "seq")),
        "view.closed" => view_closed(out, u(m, "reqId") as u32, u(m, "viewId") as u32),
        other => panic!("{other} is not a view message"),
    }
}

#[test]
fn view_server_vectors_encode_byte_for_byte() {
    let vectors = vectors("views.json");
    let mut checked = 0;
    for v in vectors.iter().filter(|v| v["direction"] == "server") {
        let messages = v["messages"].as_array().expect("messages");
        assert_frame(
            v,
            messages.iter().map(|m| m.as_object().expect("object")),
            encode_message,
        );
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} view vectors checked");
}
