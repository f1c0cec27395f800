//! The acceptance test mode's application: a NewOrderSingle (and a SecurityDefinition) is
//! echoed back as a new message with the same header extras and body; a NewOrderSingle with
//! PossResend (97=Y) whose ClOrdID this session already saw is dropped. Everything else gets
//! the default answers (BusinessMessageReject "Unsupported Message Type").

use super::app::{Application, NewOrderSingle, SessionHandle, SessionId};
use crate::fix::codec::{tag, Message};
use crate::fix::dictionary::Dictionary;
use crate::fix::session::{BusinessReject, Outbox};
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

/// Header fields the session writes itself (not copied by the echo).
const SESSION_HEADER: [i32; 10] = [8, 9, 35, 49, 56, 34, 52, 43, 122, 10];

/// The echo application of the acceptance test mode.
#[derive(Debug, Default)]
pub struct EchoApplication {
    seen: Mutex<HashMap<SessionId, HashSet<Vec<u8>>>>,
}

impl EchoApplication {
    /// An echo application with no ClOrdIDs seen.
    pub fn new() -> EchoApplication {
        EchoApplication::default()
    }
}

/// Copies `msg` into `reply` as a new message of the same type.
pub(crate) fn echo(msg: &Message<'_>, reply: &mut Outbox) {
    let dict = Dictionary::for_begin_string(msg.begin_string());
    let mut w = reply.message(msg.msg_type());
    for (t, v) in msg.fields() {
        if SESSION_HEADER.contains(&t) || t <= 0 {
            continue;
        }
        let (header, empty_group) = match dict.as_ref() {
            Some(d) => (
                d.is_header_field(t),
                // a group with no entries is not written back (QuickFIX drops it too)
                v == b"0" && d.is_group_count(msg.msg_type(), t),
            ),
            None => (false, false),
        };
        if empty_group {
            continue;
        }
        if header {
            w.header(t as u32, v);
        } else {
            w.field(t as u32, v);
        }
    }
}

impl Application for EchoApplication {
    fn on_logon(&self, session: &SessionHandle) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.remove(session.id());
        }
    }

    fn on_new_order(
        &self,
        order: &NewOrderSingle<'_>,
        reply: &mut Outbox,
        session: &SessionHandle,
    ) -> Result<(), BusinessReject> {
        let msg = order.message();
        let id = msg.get(tag::CL_ORD_ID).unwrap_or_default().to_vec();
        let mut seen = self.seen.lock().map_err(|_| BusinessReject {
            reason: 4,
            ref_tag: None,
            text: "Application not available".into(),
        })?;
        let ids = seen.entry(session.id().clone()).or_default();
        if msg.flag(tag::POSS_RESEND) && ids.contains(&id) {
            return Ok(());
        }
        ids.insert(id);
        echo(msg, reply);
        Ok(())
    }

    fn on_message(
        &self,
        msg: &Message<'_>,
        reply: &mut Outbox,
        _session: &SessionHandle,
    ) -> Result<(), BusinessReject> {
        if msg.msg_type() == b"d" {
            echo(msg, reply);
            return Ok(());
        }
        Err(BusinessReject::unsupported_message_type())
    }
}
