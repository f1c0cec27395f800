//! Test harness: drives a `Hub` with an injected clock and collects flushed frames.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use serde_json::Value as J;
use tidewire_engine::config::{BatchingConfig, EngineConfig};
use tidewire_engine::hub::{Command, FrameSink, Hub};
use tidewire_engine::wire::decode_source_frame;

/// One flushed entry.
#[derive(Debug, Clone)]
pub struct Out {
    pub worker: u32,
    pub sid: u32,
    pub bytes: String,
    pub close: u16,
}

impl Out {
    /// The frame's messages.
    pub fn messages(&self) -> Vec<J> {
        assert_eq!(self.close, 0, "not a text frame: {self:?}");
        serde_json::from_str::<J>(&self.bytes)
            .expect("frame is JSON")
            .as_array()
            .expect("frame is an array")
            .clone()
    }
}

#[derive(Default)]
pub struct Frames(pub Vec<Out>);

impl FrameSink for Frames {
    fn frame(&mut self, worker: u32, sid: u32, parts: &[&[u8]], close: u16) {
        let bytes: Vec<u8> = parts.concat();
        self.0.push(Out {
            worker,
            sid,
            bytes: String::from_utf8(bytes).expect("utf8"),
            close,
        });
    }
}

/// A hub plus a fake clock (ms since `t0`).
pub struct H {
    pub hub: Hub,
    pub t0: Instant,
    pub now_ms: u64,
}

pub fn batching(min: u64, max: u64, inc: u64, throttle: u64) -> BatchingConfig {
    BatchingConfig {
        burst_min: Duration::from_millis(min),
        burst_max: Duration::from_millis(max),
        burst_increment: Duration::from_millis(inc),
        throttle: Duration::from_millis(throttle),
    }
}

impl H {
    pub fn new(cfg: EngineConfig) -> Self {
        H {
            hub: Hub::new(cfg),
            t0: Instant::now(),
            now_ms: 0,
        }
    }

    pub fn with_batching(b: BatchingConfig) -> Self {
        Self::new(EngineConfig {
            batching: b,
            ..EngineConfig::default()
        })
    }

    pub fn now(&self) -> Instant {
        self.t0 + Duration::from_millis(self.now_ms)
    }

    pub fn at(&mut self, ms: u64) -> &mut Self {
        assert!(ms >= self.now_ms, "time goes forward");
        self.now_ms = ms;
        self
    }

    pub fn cmd(&mut self, c: Command) {
        let now = self.now();
        self.hub.handle(c, now);
    }

    /// Opens session `sid` of user `u<sid>`, tier T1, on worker 1.
    pub fn open(&mut self, sid: u32) {
        self.open_tier(sid, "T1");
    }

    /// Opens session `sid` of user `u<sid>`, tier `tier`, on worker 1.
    pub fn open_tier(&mut self, sid: u32, tier: &str) {
        self.cmd(Command::OpenSession {
            sid,
            worker: 1,
            user: format!("u{sid}"),
            tier: tier.into(),
        });
    }

    pub fn sub(&mut self, sid: u32, req_id: u32, subjects: &[&str]) {
        self.cmd(Command::Subscribe {
            sid,
            req_id,
            subjects: subjects.iter().map(|s| s.to_string()).collect(),
        });
    }

    pub fn unsub(&mut self, sid: u32, req_id: u32, subjects: &[&str]) {
        self.cmd(Command::Unsubscribe {
            sid,
            req_id,
            subjects: subjects.iter().map(|s| s.to_string()).collect(),
        });
    }

    /// Publishes a source frame (JSON text) with receive time 1000.
    pub fn publish(&mut self, frame: &str) {
        let batch = decode_source_frame(frame).expect("valid source frame");
        self.cmd(Command::Publish {
            batch,
            received_ms: 1000.0,
        });
    }

    /// A delta of `/S` with ts = 1000 + `seq_hint` (for readability of expectations).
    pub fn delta(&mut self, subject: &str, fields: &str) {
        self.publish(&format!(
            r#"{{"type":"record.publish","subject":"{subject}","fields":{fields}}}"#
        ));
    }

    pub fn image(&mut self, subject: &str, fields: &str) {
        self.publish(&format!(
            r#"{{"type":"record.publish","subject":"{subject}","image":true,"fields":{fields}}}"#
        ));
    }

    pub fn block(&mut self, sid: u32, blocked: bool) {
        self.cmd(Command::SetBlocked { sid, blocked });
    }

    /// Fires timers due now; returns what was flushed.
    pub fn run(&mut self) -> Vec<Out> {
        let mut f = Frames::default();
        let now = self.now();
        self.hub.run_due(now, &mut f);
        f.0
    }

    /// Frames for `sid` flushed now.
    pub fn run_for(&mut self, sid: u32) -> Vec<Out> {
        self.run().into_iter().filter(|o| o.sid == sid).collect()
    }
}

/// The messages of all frames, flattened.
pub fn msgs(frames: &[Out]) -> Vec<J> {
    frames.iter().flat_map(Out::messages).collect()
}

/// `type` of each message.
pub fn types(frames: &[Out]) -> Vec<String> {
    msgs(frames)
        .iter()
        .map(|m| m["type"].as_str().unwrap_or("?").to_owned())
        .collect()
}
