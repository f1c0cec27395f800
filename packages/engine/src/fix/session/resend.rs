//! Answering a ResendRequest: application messages are sent again with PossDupFlag and
//! OrigSendingTime; admin messages (and anything missing from the store) are covered by
//! SequenceReset-GapFill.

use super::inbound::is_admin;
use super::{Now, Session};
use crate::fix::codec::{tag, Parser};

/// Header fields a resend rewrites.
const REWRITTEN: [i32; 9] = [8, 9, 35, 49, 56, 34, 52, 43, 122];

impl Session {
    /// Resends our messages `begin..=end` (`end` 0 or past our last: up to our last).
    pub(super) fn resend(&mut self, begin: u64, end: u64, now: Now) {
        let last_sent = self.store.next_sender_seq().saturating_sub(1);
        let end = if end == 0 || end > last_sent { last_sent } else { end };
        if begin == 0 || begin > end {
            return;
        }
        let mut stored: Vec<(u64, Vec<u8>)> = Vec::new();
        if let Err(e) = self
            .store
            .sent(begin, end, &mut |seq, m| stored.push((seq, m.to_vec())))
        {
            self.fail(&e);
            return;
        }
        let mut parser = Parser::new();
        let mut gap_begin = 0u64;
        let mut current = begin;
        let mut last = 0u64;
        let mut app_just_sent = false;
        for (seq, bytes) in &stored {
            let seq = *seq;
            app_just_sent = false;
            if current != seq && gap_begin == 0 {
                gap_begin = current;
            }
            let parsed = if self.is_unvoided(seq) {
                Err(()) // never to be sent (its void is not stored yet)
            } else {
                parser.parse(bytes).map_err(|_| ())
            };
            let Ok(msg) = parsed else {
                // unreadable, or never to be sent: covered by the gap fill
                if gap_begin == 0 {
                    gap_begin = seq;
                }
                current = seq + 1;
                last = seq;
                continue;
            };
            if is_admin(msg.msg_type()) {
                if gap_begin == 0 {
                    gap_begin = seq;
                }
            } else {
                if gap_begin != 0 {
                    self.gap_fill(gap_begin, seq, now);
                    gap_begin = 0;
                }
                let b = &mut self.builder;
                b.begin(msg.msg_type())
                    .field(tag::SENDER_COMP_ID, self.cfg.sender_comp_id.as_bytes())
                    .field(tag::TARGET_COMP_ID, self.cfg.target_comp_id.as_bytes())
                    .field_u64(tag::MSG_SEQ_NUM, seq)
                    .field(tag::POSS_DUP_FLAG, b"Y")
                    .field_timestamp(tag::SENDING_TIME, now.utc_ms);
                if let Some(orig) = msg.get(tag::SENDING_TIME) {
                    b.field(tag::ORIG_SENDING_TIME, orig);
                }
                for (t, v) in msg.fields() {
                    if !REWRITTEN.contains(&t) && t != tag::CHECK_SUM as i32 && t > 0 {
                        b.field(t as u32, v);
                    }
                }
                let out = b.finish(self.cfg.dictionary.begin_string().as_bytes());
                self.out.extend_from_slice(out);
                self.st.last_sent_ms = now.mono_ms;
                app_just_sent = true;
            }
            current = seq + 1;
            last = seq;
        }
        if gap_begin != 0 {
            self.gap_fill(gap_begin, last + 1, now);
        }
        let new_begin = if app_just_sent { last + 1 } else { begin };
        if end > last {
            // messages the store does not have (or none at all): fill up to our next seq
            self.gap_fill(new_begin, (end + 1).min(self.store.next_sender_seq()), now);
        }
    }

    /// SequenceReset-GapFill (35=4, 123=Y) sent as MsgSeqNum `begin`, telling the counterparty
    /// the next message is `new_seq`. Not stored: it stands in for messages already stored.
    fn gap_fill(&mut self, begin: u64, new_seq: u64, now: Now) {
        let b = &mut self.builder;
        b.begin(b"4")
            .field(tag::SENDER_COMP_ID, self.cfg.sender_comp_id.as_bytes())
            .field(tag::TARGET_COMP_ID, self.cfg.target_comp_id.as_bytes())
            .field_u64(tag::MSG_SEQ_NUM, begin)
            .field(tag::POSS_DUP_FLAG, b"Y")
            .field_timestamp(tag::SENDING_TIME, now.utc_ms)
            .field_timestamp(tag::ORIG_SENDING_TIME, now.utc_ms)
            .field_u64(tag::NEW_SEQ_NO, new_seq)
            .field(tag::GAP_FILL_FLAG, b"Y");
        let out = b.finish(self.cfg.dictionary.begin_string().as_bytes());
        self.out.extend_from_slice(out);
        self.st.last_sent_ms = now.mono_ms;
    }
}
