//! One simulated user: a non-blocking WebSocket connection that logs in, subscribes to its
//! records, keeps the heartbeat, and feeds every received update into the worker's `Stats`.
//! After a cut (recovery.rs) the same user reconnects with what it holds (`Subs`) and resumes
//! or subscribes again.

use crate::clock::Clock;
use crate::link::{Connect, Event, Link};
use crate::recovery::{Progress, RecoveryStats};
use crate::scan;
use crate::stats::{SeqTracker, SeqVerdict, Stats};
use mio::net::TcpStream;
use tidewire_protocol::messages::kind;

/// Where a connection is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Connecting,
    Upgrading,
    LoggingIn,
    Subscribing,
    /// Logged in, subscribed, and every subscribed record's image received.
    Ready,
    Closed,
}

/// What the worker must do after a connection handled an event.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Nothing,
    /// The connection just became `Ready`.
    BecameReady,
    /// The connection ended; the text says why. `was_ready` tells a failed connect from a drop.
    Closed {
        reason: String,
        was_ready: bool,
    },
}

/// Per-connection settings shared by every connection of a run.
#[derive(Debug)]
pub struct ConnSpec {
    pub host: String,
    pub path: String,
    pub user: String,
    pub password: String,
    /// Log in with this token instead of user + password.
    pub token: Option<String>,
    pub max_frame_bytes: usize,
}

/// One simulated user.
pub struct Conn {
    /// The socket and frame layer.
    pub link: Link,
    pub state: State,
    /// When the connection was opened, ms on the run clock (for the connect timeout).
    pub opened_ms: f64,
    /// The user's global index.
    pub user: u64,
    subs: Subs,
}

/// What a fan-out user subscribes to and has received so far; outlives its connections (a
/// recovering user reconnects with it).
pub struct Subs {
    subjects: Vec<String>,
    seq: SeqTracker,
    acked: usize,
    /// Record id of each subject (same index), from the last ack; empty before one.
    ids: Vec<u64>,
    /// `epoch` of the last `session.loggedIn`.
    epoch: Option<u64>,
    /// Set while the user recovers from a cut.
    pub recovery: Option<Progress>,
}

impl Subs {
    /// A new user's: nothing held yet.
    pub fn new(subjects: Vec<String>) -> Subs {
        Subs {
            subjects,
            seq: SeqTracker::default(),
            acked: 0,
            ids: Vec::new(),
            epoch: None,
            recovery: None,
        }
    }
}

const LOGIN_REQ: u64 = 1;
const SUBSCRIBE_REQ: u64 = 2;

impl Conn {
    /// A connection of user `user` that is connecting to the server and will subscribe (or
    /// resume, when `subs.recovery` says so).
    pub fn new(stream: TcpStream, user: u64, subs: Subs, seed: u64, now_ms: f64) -> Conn {
        Conn {
            link: Link::new(stream, seed, 3),
            state: State::Connecting,
            opened_ms: now_ms,
            user,
            subs,
        }
    }

    /// The user's records and progress, to reconnect with.
    pub fn into_subs(self) -> Subs {
        self.subs
    }

    /// The cut time of the user's round, while it recovers.
    pub fn recovering_since(&self) -> Option<f64> {
        self.subs.recovery.as_ref().map(|p| p.round.cut_ms)
    }

    /// The user recovered: its round progress is dropped.
    pub fn end_recovery(&mut self) {
        self.subs.recovery = None;
    }

    fn close(&mut self, reason: String) -> Outcome {
        let was_ready = self.state == State::Ready;
        self.state = State::Closed;
        Outcome::Closed { reason, was_ready }
    }

    /// The socket became writable: finishes the TCP connect (sending the upgrade) and flushes.
    pub fn on_writable(&mut self, spec: &ConnSpec) -> Outcome {
        match self.link.on_writable(self.state == State::Connecting, &spec.host, &spec.path) {
            Ok(Connect::Upgrading) => self.state = State::Upgrading,
            Ok(Connect::Unchanged) => {}
            Err(reason) => return self.close(reason),
        }
        Outcome::Nothing
    }

    /// Sends a heartbeat if one is due at `now_ms`.
    pub fn tick(&mut self, now_ms: f64) -> Outcome {
        if self.state == State::Closed {
            return Outcome::Nothing;
        }
        match self.link.ping_if_due(now_ms) {
            Ok(()) => Outcome::Nothing,
            Err(reason) => self.close(reason),
        }
    }

    /// Reads everything the socket has (edge-triggered), handling each complete message.
    pub fn on_readable(
        &mut self,
        spec: &ConnSpec,
        clock: &Clock,
        scratch: &mut [u8],
        stats: &mut Stats,
        rec: &mut RecoveryStats,
    ) -> Outcome {
        let mut outcome = Outcome::Nothing;
        let Conn { link, state, subs, .. } = self;
        let r = link.on_readable(clock, scratch, spec.max_frame_bytes, |link, event, recv_ms| {
            match event {
                Event::Upgraded => {
                    *state = State::LoggingIn;
                    let login = match &spec.token {
                        Some(token) => serde_json::json!({ "type": "session.login", "reqId": LOGIN_REQ, "token": token }),
                        None => serde_json::json!({
                            "type": "session.login", "reqId": LOGIN_REQ, "user": spec.user, "password": spec.password
                        }),
                    };
                    link.send_text(&login.to_string());
                }
                Event::Frame(len) => {
                    stats.frames += 1;
                    stats.bytes += len as u64;
                }
                Event::Message(payload) => {
                    if subs.on_messages(link, state, payload, recv_ms, stats, rec)? {
                        outcome = Outcome::BecameReady;
                    }
                }
            }
            Ok(())
        });
        match r {
            Ok(()) => outcome,
            Err(reason) => self.close(reason),
        }
    }
}

impl Subs {
    /// Handles the messages of one frame; true when the user just became `Ready` (for a
    /// recovering user: recovered, checked once the whole frame was read, so the replay that
    /// follows the ack in its frame is taken first).
    fn on_messages(
        &mut self,
        link: &mut Link,
        state: &mut State,
        payload: &[u8],
        recv_ms: f64,
        stats: &mut Stats,
        rec: &mut RecoveryStats,
    ) -> Result<bool, String> {
        let msgs = scan::scan_frame(payload).map_err(|e| format!("bad JSON frame from server: {e}"))?;
        let mut ready = false;
        // a recovering user's updates that follow its ack in the ack's frame are the replay
        let mut after_ack = false;
        let mut recovery_frame = false;
        for m in msgs {
            match m.ty.as_ref() {
                kind::RECORD_UPDATE => {
                    let (Some(id), Some(seq)) = (m.id, m.seq) else { continue };
                    stats.updates += 1;
                    let conflated = m.conflated.unwrap_or(false);
                    if conflated {
                        stats.conflated += 1;
                    }
                    match self.seq.on_update(id, seq, conflated) {
                        SeqVerdict::Lost(n) => stats.lost += n,
                        SeqVerdict::OutOfOrder => stats.out_of_order += 1,
                        SeqVerdict::First if self.recovery.as_ref().is_some_and(|p| p.acked) => rec.unbased += 1,
                        SeqVerdict::InOrder | SeqVerdict::First => {}
                    }
                    if after_ack {
                        rec.replayed += 1;
                    }
                    if let Some(ts) = m.ts {
                        stats.record_latency(recv_ms, ts);
                    }
                    if *state == State::Subscribing && self.recovery.is_none() && self.is_complete() {
                        *state = State::Ready;
                        ready = true;
                    }
                }
                kind::RECORD_IMAGE => {
                    let (Some(id), Some(seq)) = (m.id, m.seq) else { continue };
                    stats.images += 1;
                    self.seq.on_image(id, seq);
                    if let Some(p) = self.recovery.as_mut() {
                        recovery_frame |= p.awaiting.contains(&id) || after_ack;
                        let was_pending = p.on_image(id);
                        if m.reset == Some(true) {
                            rec.reset_images += 1;
                        } else if was_pending && p.round.resume {
                            rec.pending_images += 1;
                        } else if !p.round.resume {
                            rec.fresh_images += 1;
                        }
                    } else if *state == State::Subscribing && self.is_complete() {
                        *state = State::Ready;
                        ready = true;
                    }
                }
                kind::SESSION_LOGGED_IN if m.req_id == Some(LOGIN_REQ) => {
                    *state = State::Subscribing;
                    let request = self.login_request(m.epoch);
                    link.send_text(&request.to_string());
                    link.start_heartbeat(m.heartbeat_ms.unwrap_or(5000).max(100) as f64, recv_ms);
                }
                kind::RECORD_SUBSCRIBED | kind::RECORD_RESUMED if m.req_id == Some(SUBSCRIBE_REQ) => {
                    self.on_ack(&m.acked);
                    after_ack = self.recovery.as_ref().is_some_and(|p| p.round.resume);
                    recovery_frame |= self.recovery.is_some();
                    if *state == State::Subscribing && self.recovery.is_none() && self.is_complete() {
                        *state = State::Ready;
                        ready = true;
                    }
                }
                "error" => {
                    let code = m.code.as_deref().unwrap_or("?");
                    let message = m.message.as_deref().unwrap_or("");
                    return Err(format!("server error {code}: {message}"));
                }
                _ => {}
            }
        }
        if recovery_frame {
            rec.recovery_frames += 1;
            rec.recovery_bytes += payload.len() as u64;
        }
        if *state == State::Subscribing && self.recovery.as_ref().is_some_and(Progress::done) {
            *state = State::Ready;
            ready = true;
        }
        Ok(ready)
    }

    /// What follows the login: `record.resume` (a recovering user of a resume round that holds
    /// an epoch and ids) naming the previous epoch and, per subject, the id and seq it holds (0
    /// and 0 without an image), else `record.subscribe`. Takes the new login's `epoch`.
    fn login_request(&mut self, epoch: Option<u64>) -> serde_json::Value {
        let previous = std::mem::replace(&mut self.epoch, epoch);
        let resume = self.recovery.as_ref().is_some_and(|p| p.round.resume);
        match previous {
            Some(prev) if resume && self.ids.len() == self.subjects.len() => {
                let records: Vec<serde_json::Value> = self
                    .subjects
                    .iter()
                    .zip(&self.ids)
                    .map(|(subject, id)| match self.seq.last(*id) {
                        Some(seq) => serde_json::json!({ "subject": subject, "id": id, "seq": seq }),
                        None => serde_json::json!({ "subject": subject, "id": 0, "seq": 0 }),
                    })
                    .collect();
                if let Some(p) = self.recovery.as_mut() {
                    // another epoch: every record restarts from an image (reset, or pending)
                    p.all_images = epoch != Some(prev);
                }
                serde_json::json!({ "type": "record.resume", "reqId": SUBSCRIBE_REQ, "epoch": prev, "records": records })
            }
            _ => {
                if let Some(p) = self.recovery.as_mut() {
                    // a fresh subscribe: every record restarts from its image
                    p.round.resume = false;
                    p.all_images = true;
                }
                serde_json::json!({ "type": "record.subscribe", "reqId": SUBSCRIBE_REQ, "subjects": self.subjects })
            }
        }
    }

    /// The ack of the login request: the records' ids (by subject index). A recovering user
    /// learns which images it waits for: every record's after a fresh subscribe or a resume from
    /// another epoch (`all_images`), else those pending, renumbered or never imaged; the held seqs
    /// of the records that restart from an image are forgotten.
    fn on_ack(&mut self, acked: &[(u64, bool)]) {
        self.acked += acked.len();
        let old = std::mem::replace(&mut self.ids, acked.iter().map(|a| a.0).collect());
        let Some(p) = self.recovery.as_mut() else { return };
        p.acked = true;
        p.pending = acked.iter().filter(|a| a.1).map(|a| a.0).collect();
        let all = p.all_images;
        let mut keep = SeqTracker::default();
        p.awaiting.clear();
        for (i, &(id, pending)) in acked.iter().enumerate() {
            let held = (old.get(i) == Some(&id)).then(|| self.seq.last(id)).flatten();
            match held {
                Some(seq) if !all => {
                    keep.on_image(id, seq);
                    if pending {
                        p.awaiting.push(id);
                    }
                }
                _ => p.awaiting.push(id),
            }
        }
        self.seq = keep;
    }

    fn is_complete(&self) -> bool {
        self.acked >= self.subjects.len() && self.seq.len() >= self.subjects.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recovery::Round;

    fn round(resume: bool) -> Round {
        Round {
            resume,
            cut_ms: 1.0,
            give_up_ms: 1000.0,
            retry_ms: 10.0,
        }
    }

    /// A user that subscribed to /A and /B (ids 1 and 2) in epoch 10 and holds seqs 5 and 7.
    fn held() -> Subs {
        let mut s = Subs::new(vec!["/A".into(), "/B".into()]);
        assert_eq!(s.login_request(Some(10))["type"], "record.subscribe");
        s.on_ack(&[(1, false), (2, false)]);
        s.seq.on_image(1, 5);
        s.seq.on_image(2, 7);
        s
    }

    #[test]
    fn a_resume_names_the_previous_epoch_ids_and_seqs_and_waits_only_for_pending_images() {
        let mut s = held();
        s.recovery = Some(Progress::new(round(true)));
        let r = s.login_request(Some(10));
        assert_eq!(
            r,
            serde_json::json!({ "type": "record.resume", "reqId": SUBSCRIBE_REQ, "epoch": 10,
                "records": [{ "subject": "/A", "id": 1, "seq": 5 }, { "subject": "/B", "id": 2, "seq": 7 }] })
        );
        s.on_ack(&[(1, false), (2, true)]);
        let p = s.recovery.as_ref().unwrap();
        assert_eq!((p.acked, p.awaiting.clone(), p.done()), (true, vec![2], false));
        // the held seq goes on: the next update is 6
        assert_eq!(s.seq.on_update(1, 6, false), SeqVerdict::InOrder);
    }

    #[test]
    fn a_resume_from_another_epoch_waits_for_every_image_and_forgets_the_seqs() {
        let mut s = held();
        s.recovery = Some(Progress::new(round(true)));
        assert_eq!(s.login_request(Some(11))["epoch"], 10);
        s.on_ack(&[(1, false), (2, false)]);
        assert_eq!(s.recovery.as_ref().unwrap().awaiting, vec![1, 2]);
        assert_eq!(s.seq.last(1), None);
        assert_eq!(s.epoch, Some(11));
    }

    #[test]
    fn the_baseline_subscribes_again_and_a_renumbered_record_is_awaited() {
        let mut s = held();
        s.recovery = Some(Progress::new(round(false)));
        assert_eq!(s.login_request(Some(10))["type"], "record.subscribe");
        s.on_ack(&[(1, false), (2, false)]);
        assert_eq!(s.recovery.as_ref().unwrap().awaiting, vec![1, 2]);
        let mut s = held();
        s.recovery = Some(Progress::new(round(true)));
        s.login_request(Some(10));
        s.on_ack(&[(1, false), (9, false)]);
        assert_eq!(s.recovery.as_ref().unwrap().awaiting, vec![9]);
        assert_eq!((s.seq.last(1), s.seq.last(2)), (Some(5), None));
    }
}
