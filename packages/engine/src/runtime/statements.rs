//! The statement side of `Engine`: `statement.create` / `statement.close` of sessions, the
//! server's own (config) statements, and the refusal of source publishes under `/STAT/` (result
//! records are written by the engine only).

use super::{Engine, Msg};
use crate::error::{EngineError, Result};
use crate::hub::{is_stat_subject, Command, StatementQuota};
use crate::wire::Publish;

fn stat_error(subject: &str, field: String, index: Option<u32>) -> EngineError {
    EngineError::NotEntitled {
        message: format!("'{subject}' is under /STAT/: statement results are published by the engine only"),
        field: Some(field),
        index,
    }
}

/// NOT_ENTITLED (naming the message index and `subject`) when a source frame publishes under
/// `/STAT/`; nothing of the frame is accepted then.
pub(super) fn refuse_stat_publishes(batch: &[Publish]) -> Result<()> {
    match batch.iter().position(|p| is_stat_subject(&p.subject)) {
        Some(i) => Err(stat_error(&batch[i].subject, "subject".into(), Some(i as u32))),
        None => Ok(()),
    }
}

/// NOT_ENTITLED when a source's `container.publish` targets a container under `/STAT/` (the
/// engine keeps `/STAT/<name>`). Result records may be members of a source's containers.
pub(super) fn refuse_stat_container(subject: &str) -> Result<()> {
    if is_stat_subject(subject) {
        return Err(stat_error(subject, "subject".into(), None));
    }
    Ok(())
}

impl Engine {
    /// `statement.create` for session `sid` within the user's `quota`; `statement.created` or an
    /// `error` arrives in the session's frames (docs/analytics.md).
    pub fn statement_create(
        &self,
        sid: u32,
        req_id: u32,
        name: String,
        text: String,
        quota: StatementQuota,
    ) -> Result<()> {
        self.send(Command::StatementCreate {
            sid,
            req_id,
            name,
            text,
            quota,
        })
    }

    /// `statement.close`: releases one of session `sid`'s references to statement `name`.
    pub fn statement_close(&self, sid: u32, req_id: u32, name: String) -> Result<()> {
        self.send(Command::StatementClose { sid, req_id, name })
    }

    /// Creates a server statement (from the configuration), held for the engine's life, and
    /// returns its canonical text once the engine thread made it. Errors: those of a session's
    /// create (BAD_REQUEST naming the column, or the name), UNAVAILABLE past `timeout`.
    pub fn create_server_statement(&self, name: String, text: String, timeout: std::time::Duration) -> Result<String> {
        self.ask(|tx| Msg::ServerStatement(name, text, tx), timeout)?
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::config::EngineConfig;
    use crate::error::ErrorCode;
    use crate::hub::ContainerOp;
    use crate::runtime::Waker;

    struct NoWake;
    impl Waker for NoWake {
        fn wake(&self) {}
    }

    #[test]
    fn sources_may_not_publish_under_stat() {
        let engine = Engine::start(EngineConfig::default()).unwrap();
        for subject in ["/STAT/vwap/MKT/A", "/STAT"] {
            let frame = format!(
                r#"[{{"type":"record.publish","subject":"/MKT/A","fields":{{"p":1}}}},{{"type":"record.publish","subject":"{subject}","fields":{{"vwap":1}}}}]"#
            );
            let e = engine.ingest(frame.as_bytes()).unwrap_err();
            assert_eq!(e.code(), ErrorCode::NotEntitled);
            assert_eq!((e.index(), e.field()), (Some(1), Some("subject")));
            assert!(e.to_string().contains("published by the engine only"), "{e}");
        }
        let e = engine
            .container_publish("/STAT/vwap".into(), vec![ContainerOp::Clear])
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotEntitled);
        // a source's own container may hold result records
        engine
            .container_publish(
                "/C/MINE".into(),
                vec![ContainerOp::Add(vec!["/STAT/vwap/MKT/A".into()])],
            )
            .unwrap();
        assert_eq!(engine.stats().publishes_in, 0);
        engine.shutdown().unwrap();
    }

    /// The engine thread wakes for a time window's expiry with nothing else to do: the result
    /// record a session subscribed to drops to an empty window.
    #[test]
    fn a_time_window_expires_on_a_quiet_engine() {
        let engine = Engine::start(EngineConfig::default()).unwrap();
        let text = "select count(*) as n from /MKT/* window time 100 ms";
        let canonical = engine
            .create_server_statement("quiet".into(), text.into(), Duration::from_secs(5))
            .unwrap();
        assert_eq!(canonical, text);
        let e = engine
            .create_server_statement("bad".into(), "select n from".into(), Duration::from_secs(5))
            .unwrap_err();
        assert_eq!((e.code(), e.field()), (ErrorCode::BadRequest, Some("statement")));
        let w = engine.register_worker(Box::new(NoWake)).unwrap();
        let sid = engine.open_session(w, "u", "").unwrap();
        engine.subscribe(sid, 1, vec!["/STAT/quiet/MKT/A".into()]).unwrap();
        engine
            .ingest(br#"[{"type":"record.publish","subject":"/MKT/A","fields":{"p":1}}]"#)
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut text = String::new();
        while !text.contains(r#""fields":{"n":0}"#) && Instant::now() < deadline {
            match engine.drain(w).unwrap() {
                Some(d) => text.push_str(&String::from_utf8_lossy(&d.data)),
                None => std::thread::yield_now(),
            }
        }
        assert!(text.contains(r#""fields":{"n":1}"#), "{text}");
        assert!(
            text.contains(r#""fields":{"n":0}"#),
            "the window emptied with no event: {text}"
        );
        engine.shutdown().unwrap();
    }
}
