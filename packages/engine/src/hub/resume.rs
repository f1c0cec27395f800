//! `record.resume`: a reconnecting client names, per subject, the record id and seq it holds and
//! the epoch they come from; it is subscribed as by `record.subscribe` and gets `record.resumed`,
//! then per record what it missed: the original messages from the record's history (`history.rs`),
//! nothing when it is up to date, or a fresh image flagged `reset` when the history does not reach
//! back, the epoch differs (the server restarted), or the subject now names another record.

use std::time::Instant;

use super::subscribe::ReqError;
use super::{history::Decision, Hub};
use crate::error::ErrorCode;
use crate::wire::encode::{self, SubscribedRef};
use crate::wire::rules::{check_subject, show_str, MAX_SUBJECTS_PER_REQUEST};

/// One record a resuming client holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResumeRecord {
    /// Subject as the client subscribed it.
    pub subject: String,
    /// The record id the client knew it by (0: none, it was pending).
    pub id: u32,
    /// The seq the client holds (0: no image yet).
    pub seq: u64,
}

impl ResumeRecord {
    /// Records from parallel lists (the napi call's shape); BAD_REQUEST when their lengths differ.
    pub fn zip(subjects: Vec<String>, ids: &[u32], seqs: &[f64]) -> crate::error::Result<Vec<ResumeRecord>> {
        if ids.len() != subjects.len() || seqs.len() != subjects.len() {
            return Err(crate::error::EngineError::bad_request(
                format!(
                    "resume needs one id and one seq per subject, got {} subjects, {} ids, {} seqs",
                    subjects.len(),
                    ids.len(),
                    seqs.len()
                ),
                Some("records"),
                None,
            ));
        }
        Ok(subjects
            .into_iter()
            .zip(ids.iter().zip(seqs))
            .map(|(subject, (&id, &seq))| ResumeRecord {
                subject,
                id,
                // the protocol decoder allows integers 0..2^53 only
                seq: if seq.is_finite() && seq > 0.0 { seq as u64 } else { 0 },
            })
            .collect())
    }
}

fn check_records(records: &[ResumeRecord]) -> Result<(), ReqError> {
    if records.is_empty() {
        return Err(ReqError {
            code: ErrorCode::BadRequest,
            message: format!("'records' must hold 1..{MAX_SUBJECTS_PER_REQUEST} records, got 0"),
            field: Some("records".into()),
        });
    }
    if records.len() > MAX_SUBJECTS_PER_REQUEST {
        return Err(ReqError {
            code: ErrorCode::LimitExceeded,
            message: format!(
                "'records' holds {} records; at most {MAX_SUBJECTS_PER_REQUEST} per request (MAX_SUBJECTS_PER_REQUEST)",
                records.len()
            ),
            field: Some("records".into()),
        });
    }
    for (i, r) in records.iter().enumerate() {
        if let Err(rule) = check_subject(&r.subject) {
            return Err(ReqError {
                code: ErrorCode::BadRequest,
                message: format!("'records.{i}.subject' ({}) {rule}", show_str(&r.subject)),
                field: Some(format!("records.{i}.subject")),
            });
        }
    }
    Ok(())
}

impl Hub {
    /// Sets this hub's epoch (at start: a value no earlier run of the server had).
    pub fn set_epoch(&mut self, epoch: u64) {
        self.epoch = epoch;
    }

    /// This hub's epoch (0: none set; resumes then always reset).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Bytes the record histories hold.
    pub fn history_bytes(&self) -> usize {
        self.history.bytes()
    }

    /// Keeps the publish just delivered in record `id`'s history (when a rule covers it): an
    /// image (the record was created) starts the ring; an update is kept as encoded, encoding it
    /// here when it had no subscribers (`encoded` false).
    pub(super) fn record_history(&mut self, id: u32, image: bool, encoded: bool, now: Instant) {
        let Some(rule) = self.history.rule(id, self.store.subject(id)) else {
            return;
        };
        let Some(seq) = self.store.get(id).map(|r| r.seq) else {
            return;
        };
        if image {
            self.history.created(id, seq);
            return;
        }
        if !encoded {
            self.encode_publish(id, false);
        }
        self.history.record(id, rule, seq, false, &self.scratch, now);
    }

    /// Keeps the `record.status` in `scratch` in record `id`'s history (when a rule covers it).
    pub(super) fn record_history_status(&mut self, id: u32, now: Instant) {
        let Some(rule) = self.history.rule(id, self.store.subject(id)) else {
            return;
        };
        let Some(seq) = self.store.get(id).map(|r| r.seq) else {
            return;
        };
        self.history.record(id, rule, seq, true, &self.scratch, now);
    }

    pub(super) fn resume(&mut self, sid: u32, req_id: u32, epoch: u64, records: &[ResumeRecord], now: Instant) {
        let Some(slot) = self.sessions.slot(sid) else {
            return;
        };
        if let Err(e) = check_records(records) {
            return self.send_error(slot, req_id, e, now);
        }
        for (i, r) in records.iter().enumerate() {
            if let Err(e) = self.check_private(slot, &r.subject, || format!("records.{i}.subject")) {
                return self.send_error(slot, req_id, e, now);
            }
        }
        let subjects: Vec<String> = records.iter().map(|r| r.subject.clone()).collect();
        let acks = match self.attach(slot, &subjects, "records") {
            Ok(acks) => acks,
            Err(e) => return self.send_error(slot, req_id, e, now),
        };
        self.scratch.clear();
        let refs: Vec<SubscribedRef<'_>> = subjects
            .iter()
            .zip(&acks)
            .map(|(subject, a)| SubscribedRef {
                subject,
                id: a.id,
                pending: a.pending,
            })
            .collect();
        encode::resumed(&mut self.scratch, req_id, &refs);
        self.send_reply(slot, now);
        let same_epoch = epoch != 0 && epoch == self.epoch;
        let mut done: Vec<u32> = Vec::new();
        for (r, a) in records.iter().zip(acks) {
            if a.pending || done.contains(&a.id) {
                continue; // a pending record's image comes when it is first published
            }
            done.push(a.id);
            let Some(current) = self.store.get(a.id).map(|rec| rec.seq) else {
                continue;
            };
            if r.seq == 0 {
                // the client never had this record: its first image, nothing to reset
                self.send_image(slot, a.id, a.idx, now);
                continue;
            }
            let decision = if same_epoch && r.id == a.id {
                self.history.decide(a.id, r.seq, current, now)
            } else {
                Decision::Reset
            };
            match decision {
                Decision::Replay { from } => self.replay_history(slot, a.id, a.idx, from, now),
                Decision::Reset => self.send_image_flagged(slot, a.id, a.idx, true, now),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Command, HistoryConfig};
    use super::*;
    use crate::config::EngineConfig;
    use std::time::Duration;

    fn publish(hub: &mut Hub, subject: &str, px: f64, now: Instant) {
        super::super::test_support::publish_number(hub, subject, "px", px, false, now);
    }

    /// Messages queued to session `sid` since the last call; queues are then flushed.
    fn take(hub: &mut Hub, sid: u32, now: Instant) -> Vec<serde_json::Value> {
        super::super::test_support::take_queued(hub, sid, now + Duration::from_secs(1))
    }

    fn open(hub: &mut Hub, sid: u32, now: Instant) {
        let cmd = Command::OpenSession {
            sid,
            worker: 0,
            user: "u".into(),
            tier: String::new(),
        };
        hub.handle(cmd, now);
    }

    fn resume(hub: &mut Hub, sid: u32, epoch: u64, records: Vec<(&str, u32, u64)>, now: Instant) {
        let records = records
            .into_iter()
            .map(|(subject, id, seq)| ResumeRecord {
                subject: subject.into(),
                id,
                seq,
            })
            .collect();
        hub.handle(
            Command::Resume {
                sid,
                req_id: 9,
                epoch,
                records,
            },
            now,
        );
    }

    fn hub(rules: &[&str], now: Instant) -> Hub {
        let mut hub = Hub::new(EngineConfig::default());
        hub.set_epoch(77);
        let cfg = HistoryConfig {
            rules: HistoryConfig::parse_rules(rules).unwrap(),
            max_bytes: 1 << 20,
        };
        hub.handle(Command::SetHistory(cfg), now);
        hub
    }

    fn kinds(msgs: &[serde_json::Value]) -> Vec<String> {
        msgs.iter()
            .map(|m| {
                let t = m["type"].as_str().unwrap();
                match t {
                    "record.update" => format!("update {}", m["seq"]),
                    "record.image" if m["reset"] == true => format!("reset {}", m["seq"]),
                    "record.image" => format!("image {}", m["seq"]),
                    "record.status" => format!("status {}", m["status"].as_str().unwrap()),
                    _ => t.to_owned(),
                }
            })
            .collect()
    }

    #[test]
    fn replays_what_a_client_missed_with_the_original_seqs() {
        let now = Instant::now();
        let mut hub = hub(&["/**=100/60000"], now);
        for px in 1..=6 {
            publish(&mut hub, "/A/X", f64::from(px), now);
        }
        open(&mut hub, 1, now);
        resume(&mut hub, 1, 77, vec![("/A/X", 1, 3)], now);
        let msgs = take(&mut hub, 1, now);
        assert_eq!(kinds(&msgs), ["record.resumed", "update 4", "update 5", "update 6"]);
        assert_eq!(msgs[0]["reqId"], 9);
        assert_eq!(msgs[0]["records"][0]["id"], 1);
        assert_eq!(msgs[3]["fields"]["px"], 6.0);
        // and it is subscribed: live updates follow
        publish(&mut hub, "/A/X", 7.0, now);
        assert_eq!(kinds(&take(&mut hub, 1, now)), ["update 7"]);
        // up to date: the ack alone
        open(&mut hub, 2, now);
        resume(&mut hub, 2, 77, vec![("/A/X", 1, 7)], now);
        assert_eq!(kinds(&take(&mut hub, 2, now)), ["record.resumed"]);
    }

    #[test]
    fn resets_when_the_history_is_short_the_epoch_differs_or_the_id_moved() {
        let now = Instant::now();
        let mut hub = hub(&["/A/**=2/60000"], now);
        for px in 1..=6 {
            publish(&mut hub, "/A/X", f64::from(px), now);
            publish(&mut hub, "/B/Y", f64::from(px), now);
        }
        open(&mut hub, 1, now);
        resume(
            &mut hub,
            1,
            77,
            vec![("/A/X", 1, 3), ("/B/Y", 2, 5), ("/A/X", 1, 3)],
            now,
        );
        let msgs = take(&mut hub, 1, now);
        assert_eq!(kinds(&msgs), ["record.resumed", "reset 6", "reset 6"]);
        assert_eq!(msgs[1]["fields"]["px"], 6.0);
        open(&mut hub, 2, now);
        resume(&mut hub, 2, 76, vec![("/A/X", 1, 5)], now);
        assert_eq!(kinds(&take(&mut hub, 2, now)), ["record.resumed", "reset 6"]);
        open(&mut hub, 3, now);
        resume(&mut hub, 3, 77, vec![("/A/X", 2, 5)], now);
        assert_eq!(kinds(&take(&mut hub, 3, now)), ["record.resumed", "reset 6"]);
        // a client that had no image gets a plain one; a pending subject gets nothing yet
        open(&mut hub, 4, now);
        resume(&mut hub, 4, 77, vec![("/A/X", 0, 0), ("/C/Z", 0, 0)], now);
        let msgs = take(&mut hub, 4, now);
        assert_eq!(kinds(&msgs), ["record.resumed", "image 6"]);
        assert_eq!(msgs[0]["records"][1]["pending"], true);
    }

    #[test]
    fn replays_status_changes_in_order_with_updates() {
        let now = Instant::now();
        let mut hub = hub(&["/**=100/60000"], now);
        let status = super::super::StatusConfig {
            stale_grace: Duration::ZERO,
            max_age: Vec::new(),
        };
        hub.handle(Command::SetStatus(status), now);
        let frame = |px: u32| {
            crate::wire::decode_source_frame(&format!(
                r#"{{"type":"record.publish","subject":"/A/X","fields":{{"px":{px}}}}}"#
            ))
            .unwrap()
        };
        for px in 1..=2 {
            let cmd = Command::SourcePublish {
                source: 5,
                batch: frame(px),
                received_ms: 1.0,
            };
            hub.handle(cmd, now);
        }
        hub.handle(Command::CloseSession { sid: 5 }, now);
        take(&mut hub, 0, now); // runs the status timers: stale at seq 2
        let cmd = Command::SourcePublish {
            source: 6,
            batch: frame(3),
            received_ms: 1.0,
        };
        hub.handle(cmd, now);
        open(&mut hub, 1, now);
        resume(&mut hub, 1, 77, vec![("/A/X", 1, 2)], now);
        let msgs = take(&mut hub, 1, now);
        assert_eq!(
            kinds(&msgs),
            ["record.resumed", "status stale", "update 3", "status ok"]
        );
    }

    #[test]
    fn refuses_bad_requests_with_the_field_at_fault() {
        let now = Instant::now();
        let mut hub = hub(&["/**=100/60000"], now);
        open(&mut hub, 1, now);
        resume(&mut hub, 1, 77, vec![], now);
        let m = take(&mut hub, 1, now);
        assert_eq!(
            (m[0]["code"].as_str(), m[0]["field"].as_str()),
            (Some("BAD_REQUEST"), Some("records"))
        );
        resume(&mut hub, 1, 77, vec![("/A/X", 0, 0), ("no-slash", 0, 0)], now);
        let m = take(&mut hub, 1, now);
        assert_eq!(m[0]["field"], "records.1.subject");
        let many = (0..=MAX_SUBJECTS_PER_REQUEST).map(|_| ("/A/X", 0, 0)).collect();
        resume(&mut hub, 1, 77, many, now);
        let m = take(&mut hub, 1, now);
        assert_eq!(m[0]["code"], "LIMIT_EXCEEDED");
        // another user's trade record: refused as on subscribe
        resume(&mut hub, 1, 77, vec![("/TRADE/v/000001", 1, 1)], now);
        let m = take(&mut hub, 1, now);
        assert_eq!(
            (m[0]["code"].as_str(), m[0]["field"].as_str()),
            (Some("NOT_ENTITLED"), Some("records.0.subject"))
        );
        assert_eq!(hub.stats().subscriptions, 0);
    }

    #[test]
    fn stats_count_the_history_held_and_what_the_byte_cap_evicted() {
        let now = Instant::now();
        let mut hub = hub(&["/**=1000/60000"], now);
        for px in 1..=5 {
            publish(&mut hub, "/A/X", f64::from(px), now);
        }
        let s = hub.stats();
        assert_eq!(s.history_entries, 4, "the image that created the record is not kept");
        assert_eq!(s.history_bytes, hub.history_bytes() as u64);
        assert!(s.history_bytes > 0);
        assert_eq!(s.history_evicted, 0);
        let cfg = HistoryConfig {
            rules: HistoryConfig::parse_rules(&["/**=1000/60000"]).unwrap(),
            max_bytes: 1024,
        };
        hub.handle(Command::SetHistory(cfg), now);
        for px in 1..=200 {
            publish(&mut hub, "/A/X", f64::from(px), now);
        }
        let s = hub.stats();
        assert!(s.history_bytes > 0 && s.history_bytes <= 1024, "{s:?}");
        assert!(s.history_evicted > 0, "{s:?}");
        assert_eq!(
            s.history_entries + s.history_evicted,
            200,
            "each update is held or was evicted"
        );
    }

    #[test]
    fn no_rules_keep_no_history() {
        let now = Instant::now();
        let mut hub = hub(&[], now);
        for px in 1..=3 {
            publish(&mut hub, "/A/X", f64::from(px), now);
        }
        assert_eq!(hub.history_bytes(), 0);
        open(&mut hub, 1, now);
        resume(&mut hub, 1, 77, vec![("/A/X", 1, 2)], now);
        assert_eq!(kinds(&take(&mut hub, 1, now)), ["record.resumed", "reset 3"]);
    }
}
