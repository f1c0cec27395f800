//! Latency sampling (`session::Sampler`): the period each worker asked for, applied to its
//! sessions' outboxes, and the origin timestamps of the updated rows of the `view.rows` being
//! queued (sampled when it reaches its session's outbox).

use super::Hub;

/// Sampling state of the hub.
#[derive(Debug, Default)]
pub(super) struct Sampling {
    /// `(worker, every)` of the workers that set a period (few: one per transport thread).
    every: Vec<(u32, u32)>,
    /// `ts` of the updated rows of the `view.rows` last encoded (`encode_rows_at`).
    pub(super) rows: Vec<f64>,
}

impl Sampling {
    /// The period of `worker`'s sessions (1, every item, until the worker sets one).
    fn every(&self, worker: u32) -> u32 {
        self.every.iter().find(|&&(w, _)| w == worker).map_or(1, |&(_, e)| e)
    }
}

impl Hub {
    /// Keeps the latency sample of one in `every` record messages and updated view rows queued
    /// to the sessions of `worker` (theirs now and later ones).
    pub(super) fn set_latency_sampling(&mut self, worker: u32, every: u32) {
        let every = every.max(1);
        match self.sampling.every.iter_mut().find(|(w, _)| *w == worker) {
            Some(entry) => entry.1 = every,
            None => self.sampling.every.push((worker, every)),
        }
        for s in self.sessions.iter_mut().filter(|s| s.worker == worker) {
            s.outbox.samples().set_every(every);
        }
        self.subscriptions.direct.set_every(worker, every);
    }

    /// A session of `worker` opened in `slot`: it samples at its worker's period.
    pub(super) fn init_sampling(&mut self, slot: u32, worker: u32) {
        let every = self.sampling.every(worker);
        if let Some(s) = self.sessions.get_mut(slot) {
            s.outbox.samples().set_every(every);
        }
    }

    /// The `view.rows` just queued to session `slot` carries the rows in `sampling.rows`: they
    /// count for its sampler.
    pub(super) fn sample_view_rows(&mut self, slot: u32) {
        let rows = std::mem::take(&mut self.sampling.rows);
        if let Some(s) = self.sessions.get_mut(slot) {
            let sampler = s.outbox.samples();
            for &ts in &rows {
                sampler.view_row(ts);
            }
        }
        self.sampling.rows = rows;
        self.sampling.rows.clear();
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use crate::config::EngineConfig;
    use crate::hub::{Command, FrameSink, Hub};
    use crate::session::FrameMeta;

    /// Frames with their message counts and samples.
    #[derive(Default)]
    struct Sink(Vec<(u32, u32, Vec<f64>, Vec<f64>)>);
    impl FrameSink for Sink {
        fn frame(&mut self, _: u32, sid: u32, _: &[&[u8]], _: u16) {
            self.0.push((sid, 0, vec![], vec![]));
        }
        fn frame_with(&mut self, _: u32, sid: u32, _: &[&[u8]], meta: &FrameMeta<'_>) {
            self.0
                .push((sid, meta.messages, meta.records.to_vec(), meta.rows.to_vec()));
        }
    }

    fn publish(hub: &mut Hub, subject: &str, ts: f64, now: Instant) {
        let p = crate::wire::Publish {
            subject: subject.into(),
            ts: Some(ts),
            image: false,
            fields: vec![crate::wire::PubField {
                name: "bid".into(),
                value: Some(crate::value::Value::Number(1.0)),
                typed: false,
            }],
        };
        hub.handle(
            Command::Publish {
                batch: vec![p],
                received_ms: ts,
            },
            now,
        );
    }

    #[test]
    fn flushed_frames_carry_message_counts_and_one_sample_in_every() {
        let mut hub = Hub::new(EngineConfig::default());
        let now = Instant::now();
        let mut sink = Sink::default();
        hub.handle(
            Command::OpenSession {
                sid: 1,
                worker: 1,
                user: "u".into(),
                tier: String::new(),
            },
            now,
        );
        hub.handle(
            Command::OpenSession {
                sid: 2,
                worker: 2,
                user: "u".into(),
                tier: String::new(),
            },
            now,
        );
        publish(&mut hub, "/A", 1000.0, now);
        for sid in [1, 2] {
            hub.handle(
                Command::Subscribe {
                    sid,
                    req_id: 1,
                    subjects: vec!["/A".into()],
                },
                now,
            );
        }
        hub.run_due(now + std::time::Duration::from_secs(1), &mut sink);
        // record.subscribed + the image (origin ts 1000), every item sampled by default
        assert_eq!(sink.0, [(1, 2, vec![1000.0], vec![]), (2, 2, vec![1000.0], vec![])]);
        sink.0.clear();
        hub.set_latency_sampling(1, 3);
        let mut t = now + std::time::Duration::from_secs(2);
        for i in 0..6 {
            publish(&mut hub, "/A", 2000.0 + f64::from(i), t);
            t += std::time::Duration::from_millis(1);
        }
        hub.run_due(t + std::time::Duration::from_secs(1), &mut sink);
        let one = sink.0.iter().filter(|f| f.0 == 1).fold((0, vec![]), |(n, mut v), f| {
            v.extend_from_slice(&f.2);
            (n + f.1, v)
        });
        let two = sink.0.iter().filter(|f| f.0 == 2).fold((0, vec![]), |(n, mut v), f| {
            v.extend_from_slice(&f.2);
            (n + f.1, v)
        });
        assert_eq!(one, (6, vec![2000.0, 2003.0]), "worker 1: one in 3");
        assert_eq!(two.0, 6);
        assert_eq!(two.1.len(), 6, "worker 2 keeps sampling every message");
    }

    #[test]
    fn updated_view_rows_are_sampled_with_their_origin_ts() {
        let mut hub = Hub::new(EngineConfig::default());
        let now = Instant::now();
        let mut sink = Sink::default();
        for i in 0..3 {
            publish(&mut hub, &format!("/P/{i}"), 1000.0, now);
        }
        let members = (0..3).map(|i| format!("/P/{i}")).collect();
        let ops = vec![crate::hub::ContainerOp::Add(members)];
        hub.handle(
            Command::ContainerPublish {
                subject: "/C".into(),
                ops,
            },
            now,
        );
        hub.handle(
            Command::OpenSession {
                sid: 1,
                worker: 1,
                user: "u".into(),
                tier: String::new(),
            },
            now,
        );
        let create = Command::ViewCreate {
            sid: 1,
            req_id: 1,
            container: "/C".into(),
            filter: String::new(),
            sort: String::new(),
            offset: 0,
            size: 10,
        };
        hub.handle(create, now);
        let t = now + std::time::Duration::from_secs(1);
        hub.run_due(t, &mut sink);
        assert_eq!(sink.0.len(), 1);
        assert!(
            sink.0[0].3.is_empty(),
            "view.created rows are entered, not updated: not measured"
        );
        sink.0.clear();
        publish(&mut hub, "/P/0", 2000.0, t);
        publish(&mut hub, "/P/2", 2001.0, t);
        hub.run_due(t + std::time::Duration::from_secs(1), &mut sink);
        // one view.rows per publish pass, in one frame
        assert_eq!(sink.0, [(1, 2, vec![], vec![2000.0, 2001.0])]);
    }
}
