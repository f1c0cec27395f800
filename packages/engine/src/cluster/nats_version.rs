//! Which nats-server versions Tidewire's cluster mode runs safely on, from the version a server
//! names (`nats-server --version`, or `version` in the INFO it sends a client). Two faults of
//! nats-server decide it (docs/operations.md, "NATS"):
//!
//! - before 2.12, a stream's replicas can come out of a lost quorum holding different messages at
//!   one seq (nats-io/nats-server#6944, in 2.12); the order stream's writers then stop on a
//!   divergence. (2.12.15 still showed such a divergence in a few test runs in ten after a lost
//!   quorum: docs/operations.md, "NATS".)
//! - from 2.14.0 (seen up to 2.15.3, the newest checked), a JetStream publish to a replicated
//!   stream that is refused for a `Nats-Expected-Last-Msg-Id` that does not match stops the
//!   stream on every replica ("critical write error: last msgid mismatch"): it takes no more
//!   writes. The order stream fences a term's messages with that header, so the first fence that
//!   refuses a stale writer takes the order stream down.

/// The version `.ci/run`, the test harnesses and `deploy/local-cluster.sh` install.
pub const PINNED: (u32, u32, u32) = (2, 12, 15);

/// The first version whose replicas keep in step after a lost quorum (nats-io/nats-server#6944).
pub const DESYNC_FIXED_IN: (u32, u32, u32) = (2, 12, 0);

/// The first version that stops a stream on a refused `Nats-Expected-Last-Msg-Id`.
pub const MSG_ID_FENCE_BROKEN_FROM: (u32, u32, u32) = (2, 14, 0);

/// The newest version checked for the `Nats-Expected-Last-Msg-Id` fault (it has it).
pub const MSG_ID_FENCE_CHECKED_UP_TO: (u32, u32, u32) = (2, 15, 3);

/// What a nats-server version means for cluster mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NatsVersion {
    /// Neither known fault.
    Good((u32, u32, u32)),
    /// Older than [`DESYNC_FIXED_IN`]: replicas can desync after a lost quorum.
    DesyncAfterLostQuorum((u32, u32, u32)),
    /// [`MSG_ID_FENCE_BROKEN_FROM`] or newer: a refused last-message-id fence stops the stream.
    FenceStopsStream((u32, u32, u32)),
    /// No `major.minor.patch` in what the server said.
    Unreadable,
}

/// `(major, minor, patch)` from `2.12.15`, `v2.12.15` or `nats-server: v2.12.15`; a pre-release
/// or build suffix (`2.12.0-RC.1`) does not change the number. `None` when it names no such
/// version.
pub fn parse(text: &str) -> Option<(u32, u32, u32)> {
    let v = text.trim().rsplit(' ').next()?.trim_start_matches('v');
    let core = v.split(['-', '+']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u32>().ok());
    let version = (parts.next()??, parts.next()??, parts.next()??);
    parts.next().is_none().then_some(version)
}

/// Classifies the version `text` names (see [`parse`]).
pub fn classify(text: &str) -> NatsVersion {
    match parse(text) {
        None => NatsVersion::Unreadable,
        Some(v) if v < DESYNC_FIXED_IN => NatsVersion::DesyncAfterLostQuorum(v),
        Some(v) if v >= MSG_ID_FENCE_BROKEN_FROM => NatsVersion::FenceStopsStream(v),
        Some(v) => NatsVersion::Good(v),
    }
}

fn dotted((a, b, c): (u32, u32, u32)) -> String {
    format!("{a}.{b}.{c}")
}

impl NatsVersion {
    /// Whether cluster mode runs safely on it.
    pub fn is_good(&self) -> bool {
        matches!(self, NatsVersion::Good(_))
    }

    /// The operator warning for a version that is not good (the problem and the fix); `None`
    /// for a good one.
    pub fn warning(&self) -> Option<String> {
        let fix = format!(
            "run nats-server v{} (go install github.com/nats-io/nats-server/v2@v{}; docs/operations.md, \"NATS\")",
            dotted(PINNED),
            dotted(PINNED)
        );
        match *self {
            NatsVersion::Good(_) => None,
            NatsVersion::DesyncAfterLostQuorum(v) => Some(format!(
                "nats-server v{} is older than v{}: after a lost quorum the order stream's replicas can hold different \
                 messages at one seq (nats-io/nats-server#6944) and the nodes stop on the divergence; {fix}",
                dotted(v),
                dotted(DESYNC_FIXED_IN)
            )),
            NatsVersion::FenceStopsStream(v) => Some(format!(
                "nats-server v{} (v{} and later, at least up to v{}) stops a stream for good when it refuses a publish \
                 on Nats-Expected-Last-Msg-Id: the first time two order writers overlap, the order stream takes no \
                 more orders; {fix}",
                dotted(v),
                dotted(MSG_ID_FENCE_BROKEN_FROM),
                dotted(MSG_ID_FENCE_CHECKED_UP_TO)
            )),
            NatsVersion::Unreadable => Some(format!("the NATS server names no version Tidewire can read; {fix}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_version_lines_and_info_versions() {
        assert_eq!(parse("nats-server: v2.12.15\n"), Some((2, 12, 15)));
        assert_eq!(parse("2.15.2"), Some((2, 15, 2)));
        assert_eq!(parse("nats-server: v2.9.10"), Some((2, 9, 10)));
        assert_eq!(parse("nats-server: v2.12.0-RC.1"), Some((2, 12, 0)));
        assert_eq!(parse("2.14.0+build"), Some((2, 14, 0)));
        assert_eq!(parse("nats-server: v2.15"), None);
        assert_eq!(parse("nats-server: v2.15.2.1"), None);
        assert_eq!(parse(""), None);
        assert_eq!(parse("v2.x.1"), None);
    }

    #[test]
    fn classifies_by_number_not_text() {
        assert_eq!(classify("2.9.10"), NatsVersion::DesyncAfterLostQuorum((2, 9, 10)));
        assert_eq!(classify("2.10.29"), NatsVersion::DesyncAfterLostQuorum((2, 10, 29)));
        assert_eq!(classify("2.11.17"), NatsVersion::DesyncAfterLostQuorum((2, 11, 17)));
        assert_eq!(classify("2.12.0"), NatsVersion::Good((2, 12, 0)));
        assert_eq!(classify("nats-server: v2.12.15"), NatsVersion::Good((2, 12, 15)));
        assert_eq!(classify("2.13.9"), NatsVersion::Good((2, 13, 9)));
        assert_eq!(classify("2.14.0"), NatsVersion::FenceStopsStream((2, 14, 0)));
        assert_eq!(classify("2.14.10"), NatsVersion::FenceStopsStream((2, 14, 10)));
        assert_eq!(classify("2.15.2"), NatsVersion::FenceStopsStream((2, 15, 2)));
        assert_eq!(classify("2.15.3"), NatsVersion::FenceStopsStream((2, 15, 3)));
        assert_eq!(classify("3.0.0"), NatsVersion::FenceStopsStream((3, 0, 0)));
        assert_eq!(classify("dev"), NatsVersion::Unreadable);
        assert!(classify(&dotted(PINNED)).is_good());
    }

    #[test]
    fn warns_with_the_problem_and_the_fix_only_for_a_bad_version() {
        assert_eq!(classify("2.12.15").warning(), None);
        let w = classify("2.15.2").warning().unwrap();
        assert!(
            w.contains("v2.15.2") && w.contains("Nats-Expected-Last-Msg-Id") && w.contains("v2.12.15"),
            "{w}"
        );
        let w = classify("2.9.10").warning().unwrap();
        assert!(
            w.contains("v2.9.10") && w.contains("lost quorum") && w.contains("v2.12.15"),
            "{w}"
        );
        assert!(classify("").warning().unwrap().contains("v2.12.15"));
    }
}
