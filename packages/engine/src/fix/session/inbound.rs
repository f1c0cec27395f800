//! Handling of one inbound message: version, MsgSeqNum presence, validation, then the
//! per-MsgType rules with the sequence checks of `verify`.

use super::{BusinessReject, Now, Session, SessionApp};
use crate::fix::codec::{parse_i64, tag, time, Message};
use crate::fix::dictionary::{Dictionary, Reject, RejectReason};

/// Reverse routing: OnBehalfOf* of the message become DeliverTo* of our answer and back.
const ROUTES: [(u32, u32); 6] = [
    (tag::ON_BEHALF_OF_COMP_ID, tag::DELIVER_TO_COMP_ID),
    (tag::ON_BEHALF_OF_SUB_ID, tag::DELIVER_TO_SUB_ID),
    (tag::ON_BEHALF_OF_LOCATION_ID, tag::DELIVER_TO_LOCATION_ID),
    (tag::DELIVER_TO_COMP_ID, tag::ON_BEHALF_OF_COMP_ID),
    (tag::DELIVER_TO_SUB_ID, tag::ON_BEHALF_OF_SUB_ID),
    (tag::DELIVER_TO_LOCATION_ID, tag::ON_BEHALF_OF_LOCATION_ID),
];

impl Session {
    pub(super) fn process_queue(&mut self, now: Now, app: &mut dyn SessionApp) {
        while self.st.disconnect.is_none() && self.st.logon_received {
            let expected = self.store.next_target_seq();
            let Some(bytes) = self.queue.remove(&expected) else {
                break;
            };
            let mut parser = std::mem::take(&mut self.queue_parser);
            if let Ok(msg) = parser.parse(&bytes) {
                if matches!(msg.msg_type(), b"A" | b"2") {
                    // Logon and ResendRequest were acted on when they arrived; only count them
                    self.incr_target();
                } else {
                    self.next(&msg, now, app);
                }
            }
            self.queue_parser = parser;
        }
    }

    pub(super) fn next(&mut self, msg: &Message<'_>, now: Now, app: &mut dyn SessionApp) {
        let msg_type = msg.msg_type();

        if msg.get(tag::MSG_SEQ_NUM).is_none() {
            self.send_logout("Received message without MsgSeqNum", now);
            self.disconnect("Received message without MsgSeqNum");
            return;
        }
        let dict = self.cfg.dictionary;
        if msg.begin_string() != dict.begin_string().as_bytes() {
            if msg_type == b"5" {
                self.next_logout(msg, now);
            } else {
                let text = format!(
                    "Incorrect BeginString: {} (session is {})",
                    String::from_utf8_lossy(msg.begin_string()),
                    dict.begin_string()
                );
                self.send_logout(&text, now);
                self.incr_if_expected(msg);
                self.disconnect(&text);
            }
            return;
        }
        if msg_type == b"A" && msg.get(tag::HEART_BT_INT).and_then(parse_i64).is_some_and(|h| h < 0) {
            self.reject_logon(msg, "HeartBtInt must not be negative", now);
            return;
        }
        if let Err(reject) = self.validator.validate(&dict, msg) {
            if msg_type == b"A" {
                self.text.clear();
                reject.write_text(&mut self.text);
                let text = format!("Invalid Logon message: {}", String::from_utf8_lossy(&self.text));
                self.reject_logon(msg, &text, now);
            } else {
                self.send_reject(msg, reject, now);
            }
            return;
        }
        let Some(seq) = msg.seq_num() else {
            self.send_reject(
                msg,
                Reject::tag(RejectReason::IncorrectDataFormat, tag::MSG_SEQ_NUM as i32),
                now,
            );
            return;
        };
        match msg_type {
            b"A" => self.next_logon(msg, seq, now, app),
            b"0" => {
                if self.verify(msg, seq, true, true, now) {
                    self.incr_target();
                }
            }
            b"1" => {
                if self.verify(msg, seq, true, true, now) {
                    self.body.clear();
                    if let Some(id) = msg.get(tag::TEST_REQ_ID) {
                        self.put(tag::TEST_REQ_ID, id);
                    }
                    self.send(b"0", now);
                    self.incr_target();
                }
            }
            b"2" => self.next_resend_request(msg, seq, now),
            b"3" => {
                if self.verify(msg, seq, false, true, now) {
                    self.incr_if_expected(msg);
                }
            }
            b"4" => self.next_sequence_reset(msg, seq, now),
            b"5" => self.next_logout(msg, now),
            _ => {
                if self.verify(msg, seq, true, true, now) {
                    self.next_app(msg, now, app);
                }
            }
        }
    }

    /// Refuses a Logon: Logout with `text`, then disconnect.
    fn reject_logon(&mut self, msg: &Message<'_>, text: &str, now: Now) {
        self.send_logout(text, now);
        self.incr_if_expected(msg);
        self.disconnect(text);
    }

    fn incr_if_expected(&mut self, msg: &Message<'_>) {
        if msg.seq_num() == Some(self.store.next_target_seq()) {
            self.incr_target();
        }
    }

    fn next_logon(&mut self, msg: &Message<'_>, seq: u64, now: Now, app: &mut dyn SessionApp) {
        // a second Logon is only a sequence reset (ResetSeqNumFlag=Y) of the live session
        let relogon = self.st.logon_received;
        if relogon && !msg.flag(tag::RESET_SEQ_NUM_FLAG) {
            self.disconnect("Logon received on a session that is already logged on");
            return;
        }
        self.st.reset_received = msg.flag(tag::RESET_SEQ_NUM_FLAG);
        if !self.verify(msg, seq, false, true, now) {
            return;
        }
        if self.st.reset_received {
            if let Err(e) = self.store.reset() {
                self.fail(&e);
                return;
            }
            self.queue.clear();
            self.st.resend_range = None;
            // nothing stored is left to void
            self.unvoided.clear();
            self.store_error = None;
        }
        if !self.credentials_ok(msg) {
            self.reject_logon(msg, "Invalid Logon message: Username/Password rejected", now);
            return;
        }
        if !self.unvoided.is_empty() {
            // stored reports that must never be sent are not voided in the store: no resend may
            // happen on a session whose store cannot say so across a restart
            if let Err(e) = self.void_unvoided() {
                let text = format!("Session store failed, stored messages cannot be voided: {e}");
                self.reject_logon(msg, &text, now);
                return;
            }
        }
        if !self.owed.is_empty() && !self.st.reset_received {
            // answers the store could not take are stored before our Logon (it asks the
            // counterparty to resend-request them) or the Logon is refused
            if let Err(e) = self.store_owed(now) {
                let text = format!("Session store failed, messages cannot be stored: {e}");
                self.reject_logon(msg, &text, now);
                return;
            }
        }
        let use_789 = self.cfg.next_expected_msg_seq_num && self.cfg.dictionary.is_fix44();
        let next_sender = self.store.next_sender_seq();
        let peer_expects = if use_789 {
            msg.get_u64(tag::NEXT_EXPECTED_MSG_SEQ_NUM)
        } else {
            None
        };
        if let Some(n) = peer_expects.filter(|&n| n > next_sender) {
            let text = format!(
                "Tag 789 (NextExpectedMsgSeqNum) is higher than expected. Expected {next_sender}, Received {n}"
            );
            self.reject_logon(msg, &text, now);
            return;
        }
        self.st.logon_received = true;
        self.st.heartbeat_ms = msg.get_u64(tag::HEART_BT_INT).unwrap_or(0).saturating_mul(1000);
        let expected = self.store.next_target_seq();
        let in_sequence = seq <= expected;
        self.body.clear();
        self.put(tag::ENCRYPT_METHOD, b"0");
        self.put_u64(tag::HEART_BT_INT, self.st.heartbeat_ms / 1000);
        if self.st.reset_received {
            self.put(tag::RESET_SEQ_NUM_FLAG, b"Y");
        }
        if use_789 {
            self.put_u64(tag::NEXT_EXPECTED_MSG_SEQ_NUM, expected + u64::from(in_sequence));
        }
        self.send(b"A", now);
        if self.st.reset_received && !self.owed.is_empty() && self.store_owed(now).is_err() {
            // after a sequence reset they follow our Logon (a resend carries them)
            self.disconnect_store_failed();
        }
        self.st.reset_received = false;
        if in_sequence {
            self.incr_target();
        } else {
            if use_789 {
                // our 789 already asks for the gap: no separate ResendRequest
                self.st.resend_range = Some((expected, seq - 1));
            }
            self.target_too_high(msg, seq, now);
        }
        if let Some(n) = peer_expects.filter(|&n| n < next_sender) {
            self.resend(n, next_sender - 1, now);
        }
        if !relogon {
            app.on_logon();
        }
    }

    fn credentials_ok(&self, msg: &Message<'_>) -> bool {
        let user_ok = self
            .cfg
            .username
            .as_deref()
            .is_none_or(|u| msg.get_str(tag::USERNAME) == Some(u));
        let pass_ok = self
            .cfg
            .password
            .as_deref()
            .is_none_or(|p| msg.get_str(tag::PASSWORD) == Some(p));
        user_ok && pass_ok
    }

    fn next_logout(&mut self, msg: &Message<'_>, now: Now) {
        let seq = msg.seq_num().unwrap_or(0);
        if !self.verify(msg, seq, false, false, now) {
            return;
        }
        if self.st.logout_sent_at.is_none() {
            self.body.clear();
            self.send(b"5", now);
        }
        self.incr_if_expected(msg);
        self.disconnect("Logout");
    }

    fn next_resend_request(&mut self, msg: &Message<'_>, seq: u64, now: Now) {
        if !self.verify(msg, seq, false, true, now) {
            return;
        }
        if seq > self.store.next_target_seq() {
            // act on it now (no deadlock with our own ResendRequest); count it when its turn comes
            self.enqueue(msg, seq);
        }
        let begin = msg.get_u64(tag::BEGIN_SEQ_NO).unwrap_or(1);
        let end = msg.get_u64(tag::END_SEQ_NO).unwrap_or(0);
        self.resend(begin, end, now);
        self.incr_if_expected(msg);
    }

    fn next_sequence_reset(&mut self, msg: &Message<'_>, seq: u64, now: Now) {
        let gap_fill = msg.flag(tag::GAP_FILL_FLAG);
        if !self.verify(msg, seq, gap_fill, gap_fill, now) {
            return;
        }
        let Some(new_seq) = msg.get_u64(tag::NEW_SEQ_NO) else {
            return;
        };
        let expected = self.store.next_target_seq();
        if new_seq > expected {
            if let Err(e) = self.store.set_next_target_seq(new_seq) {
                self.fail(&e);
            }
            self.queue.retain(|&k, _| k >= new_seq);
        } else if new_seq < expected {
            self.send_reject(
                msg,
                Reject::tag(RejectReason::ValueIncorrect, tag::NEW_SEQ_NO as i32),
                now,
            );
        }
    }

    fn next_app(&mut self, msg: &Message<'_>, now: Now, app: &mut dyn SessionApp) {
        let mut outbox = std::mem::take(&mut self.outbox);
        outbox.clear();
        let result = app.on_message(msg, &mut outbox);
        self.incr_target();
        match result {
            Ok(()) => {
                for (msg_type, header, body) in outbox.iter() {
                    self.hdr.clear();
                    self.hdr.extend_from_slice(header);
                    self.body.clear();
                    self.body.extend_from_slice(body);
                    self.send_with_header(msg_type, 0, now);
                }
            }
            Err(reject) => self.send_business_reject(msg, &reject, now),
        }
        self.outbox = outbox;
    }

    /// The checks every message goes through once valid: logon state, SendingTime, CompIDs,
    /// MsgSeqNum too high / too low, PossDupFlag. False if the message must not be processed.
    fn verify(&mut self, msg: &Message<'_>, seq: u64, too_high: bool, too_low: bool, now: Now) -> bool {
        self.st.last_received_ms = now.mono_ms;
        self.st.test_requests = 0;
        let is_logon = msg.msg_type() == b"A";
        if !is_logon && !self.st.logon_received {
            self.disconnect("first message is not a Logon");
            return false;
        }
        if self.cfg.check_latency && !self.good_time(msg, now) {
            if is_logon {
                self.reject_logon(
                    msg,
                    "Invalid Logon message: SendingTime accuracy problem, field=52",
                    now,
                );
            } else {
                self.send_reject(
                    msg,
                    Reject::tag(RejectReason::SendingTimeAccuracyProblem, tag::SENDING_TIME as i32),
                    now,
                );
                self.send_logout("SendingTime accuracy problem, field=52", now);
            }
            return false;
        }
        let comp_ids_ok = msg.get(tag::SENDER_COMP_ID) == Some(self.cfg.target_comp_id.as_bytes())
            && msg.get(tag::TARGET_COMP_ID) == Some(self.cfg.sender_comp_id.as_bytes());
        if !comp_ids_ok {
            if is_logon {
                self.reject_logon(msg, "Invalid Logon message: CompID problem", now);
            } else {
                self.send_reject(msg, Reject::reason(RejectReason::CompIdProblem), now);
                self.send_logout("CompID problem", now);
            }
            return false;
        }
        if !self.st.reset_received {
            let expected = self.store.next_target_seq();
            if too_high && seq > expected {
                self.target_too_high(msg, seq, now);
                return false;
            }
            if too_low && seq < expected {
                if msg.flag(tag::POSS_DUP_FLAG) {
                    // a possible duplicate of what we already have: check it, then ignore it
                    self.valid_poss_dup(msg, now);
                } else {
                    let text = format!("MsgSeqNum too low, expecting {expected} but received {seq}");
                    self.send_logout(&text, now);
                    self.disconnect(&text);
                }
                return false;
            }
        }
        if msg.flag(tag::POSS_DUP_FLAG) && !self.valid_poss_dup(msg, now) {
            return false;
        }
        if too_high {
            if let Some((_, end)) = self.st.resend_range {
                if seq >= end {
                    self.st.resend_range = None;
                }
            }
        }
        true
    }

    fn good_time(&self, msg: &Message<'_>, now: Now) -> bool {
        let Some(sent) = msg.get(tag::SENDING_TIME).and_then(time::parse_utc_timestamp) else {
            return false;
        };
        (now.utc_ms - sent).unsigned_abs() / 1000 <= self.cfg.max_latency.as_secs()
    }

    /// PossDupFlag=Y needs OrigSendingTime (122) no later than SendingTime (except SequenceReset).
    fn valid_poss_dup(&mut self, msg: &Message<'_>, now: Now) -> bool {
        if msg.msg_type() == b"4" {
            return true;
        }
        let Some(orig) = msg.get(tag::ORIG_SENDING_TIME) else {
            self.send_reject(
                msg,
                Reject::tag(RejectReason::RequiredTagMissing, tag::ORIG_SENDING_TIME as i32),
                now,
            );
            return false;
        };
        let orig = time::parse_utc_timestamp(orig);
        let sent = msg.get(tag::SENDING_TIME).and_then(time::parse_utc_timestamp);
        if let (Some(orig), Some(sent)) = (orig, sent) {
            if orig > sent {
                let r = Reject::tag(RejectReason::SendingTimeAccuracyProblem, tag::ORIG_SENDING_TIME as i32);
                self.send_reject(msg, r, now);
                self.send_logout("SendingTime accuracy problem, field=122", now);
                return false;
            }
        }
        true
    }

    /// A gap: keep the message for later and ask for the missing ones (once per gap).
    pub(super) fn target_too_high(&mut self, msg: &Message<'_>, seq: u64, now: Now) {
        self.enqueue(msg, seq);
        if let Some((begin, _)) = self.st.resend_range {
            if seq >= begin {
                return;
            }
        }
        let expected = self.store.next_target_seq();
        self.body.clear();
        self.put_u64(tag::BEGIN_SEQ_NO, expected);
        // EndSeqNo 0: everything from BeginSeqNo on (FIX 4.2 and later)
        self.put(tag::END_SEQ_NO, b"0");
        self.send(b"2", now);
        self.st.resend_range = Some((expected, seq - 1));
    }

    fn enqueue(&mut self, msg: &Message<'_>, seq: u64) {
        if self.queue.len() < self.cfg.max_queued || self.queue.contains_key(&seq) {
            self.queue.insert(seq, msg.bytes().to_vec());
        }
    }

    /// Writes the reverse-routing header fields of an answer to `msg` into `self.hdr`.
    fn reverse_route(&mut self, msg: &Message<'_>) {
        self.hdr.clear();
        for (from, to) in ROUTES {
            if let Some(v) = msg.get(from).filter(|v| !v.is_empty()) {
                crate::fix::codec::push_u64(&mut self.hdr, u64::from(to));
                self.hdr.push(b'=');
                self.hdr.extend_from_slice(v);
                self.hdr.push(crate::fix::codec::SOH);
            }
        }
    }

    /// Session-level Reject (35=3) of `msg`.
    pub(super) fn send_reject(&mut self, msg: &Message<'_>, reject: Reject, now: Now) {
        if !self.st.logon_received {
            // nothing is answered before a Logon was accepted
            self.disconnect("invalid message before Logon");
            return;
        }
        let msg_type = msg.msg_type();
        let seq = msg.seq_num();
        let fix44 = self.cfg.dictionary.is_fix44();
        self.reverse_route(msg);
        self.body.clear();
        if let Some(seq) = seq {
            self.put_u64(tag::REF_SEQ_NUM, seq);
        }
        self.text.clear();
        reject.write_text(&mut self.text);
        let text = std::mem::take(&mut self.text);
        self.put(tag::TEXT, &text);
        self.text = text;
        if let Some(t) = reject
            .tag
            .filter(|&t| t > 0 || reject.reason == RejectReason::InvalidTagNumber)
        {
            let mut digits = Vec::with_capacity(12);
            crate::fix::codec::push_i64(&mut digits, i64::from(t));
            self.put(tag::REF_TAG_ID, &digits);
        }
        if !msg_type.is_empty() {
            self.put(tag::REF_MSG_TYPE, msg_type);
        }
        if reject.reason.in_version(fix44) {
            self.put_u64(tag::SESSION_REJECT_REASON, u64::from(reject.reason.code()));
        }
        let counted = msg_type != b"A" && msg_type != b"4" && seq == Some(self.store.next_target_seq());
        if counted {
            self.incr_target();
        }
        if self.send_with_header(b"3", 0, now).is_none() && counted {
            // a Reject is never resent (gap-filled): the message is not counted, so that the
            // counterparty's resend after its next Logon brings it again and it is answered
            if let Some(seq) = seq {
                let _ = self.store.set_next_target_seq(seq);
            }
        }
    }

    /// BusinessMessageReject (35=j) of `msg`.
    fn send_business_reject(&mut self, msg: &Message<'_>, reject: &BusinessReject, now: Now) {
        self.reverse_route(msg);
        self.body.clear();
        if let Some(seq) = msg.seq_num() {
            self.put_u64(tag::REF_SEQ_NUM, seq);
        }
        let mut text = reject.text.as_bytes().to_vec();
        if let Some(t) = reject.ref_tag {
            text.extend_from_slice(b", field=");
            crate::fix::codec::push_u64(&mut text, u64::from(t));
        }
        self.put(tag::TEXT, &text);
        self.put(tag::REF_MSG_TYPE, msg.msg_type());
        self.put_u64(tag::BUSINESS_REJECT_REASON, u64::from(reject.reason));
        self.send_with_header(b"j", 0, now);
    }
}

/// True if `msg_type` is a session-level message.
pub(super) fn is_admin(msg_type: &[u8]) -> bool {
    Dictionary::is_admin(msg_type)
}
