//! What the hub's unit tests share: a one-field publish and reading what a session was sent.

use std::time::Instant;

use super::{Command, FrameSink, Hub};

/// Publishes `field` = `value` to `subject` (`image`: as an image, else a delta).
pub(super) fn publish_number(hub: &mut Hub, subject: &str, field: &str, value: f64, image: bool, now: Instant) {
    let p = crate::wire::Publish {
        subject: subject.into(),
        ts: Some(1.0),
        image,
        fields: vec![crate::wire::PubField {
            name: field.into(),
            value: Some(crate::value::Value::Number(value)),
            typed: false,
        }],
    };
    hub.handle(
        Command::Publish {
            batch: vec![p],
            received_ms: 1.0,
        },
        now,
    );
}

/// The messages queued to session `sid` since the last call; then every timer due by
/// `flush_at` runs, flushing the queues into a sink that drops them.
pub(super) fn take_queued(hub: &mut Hub, sid: u32, flush_at: Instant) -> Vec<serde_json::Value> {
    struct Drop;
    impl FrameSink for Drop {
        fn frame(&mut self, _: u32, _: u32, _: &[&[u8]], _: u16) {}
    }
    let queued = String::from_utf8(hub.queued(sid).unwrap_or_default().to_vec()).expect("frames are UTF-8");
    hub.run_due(flush_at, &mut Drop);
    serde_json::from_str(&format!("[{queued}]")).expect("queued messages are JSON")
}
