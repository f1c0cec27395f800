//! The life of a simulated user connection that logs in and then sends requests: the view users
//! (view_conn.rs) and the order clients (order_conn.rs). The fan-out users (conn.rs) subscribe
//! after login and have a state machine of their own.

/// Where a connection is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserState {
    Connecting,
    Upgrading,
    LoggingIn,
    /// Logged in: requests are sent as they come.
    Live,
    Closed,
}

/// What the worker must do after a connection handled an event.
#[derive(Debug, PartialEq, Eq)]
pub enum UserOutcome {
    Nothing,
    /// The user just logged in.
    LoggedIn,
    /// The connection ended; `was_live` tells a failed login from a drop.
    Closed {
        reason: String,
        was_live: bool,
    },
}

/// A worker's count of its users: connecting (not logged in yet), live, and the drops (live users
/// whose connection ended) since the last report, with the last drop's reason.
#[derive(Debug, Default)]
pub struct UserCounts {
    pub connecting: usize,
    pub live: u64,
    pub dropped: u64,
    pub drop_reason: Option<String>,
}

impl UserCounts {
    /// A connecting user logged in.
    pub fn logged_in(&mut self) {
        self.connecting -= 1;
        self.live += 1;
    }

    /// A user's connection ended for `reason`: a live one is a drop; one that never logged in
    /// leaves the connecting count and gets its reason back (a failed connect, the caller's to
    /// report).
    pub fn closed(&mut self, reason: String, was_live: bool) -> Option<String> {
        if was_live {
            self.live -= 1;
            self.dropped += 1;
            self.drop_reason = Some(reason);
            None
        } else {
            self.connecting -= 1;
            Some(reason)
        }
    }

    /// A user closed on purpose (not a drop).
    pub fn left(&mut self, was_live: bool) {
        if was_live {
            self.live -= 1;
        } else {
            self.connecting -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::UserCounts;

    #[test]
    fn counts_logins_drops_failed_connects_and_quiet_closes() {
        let mut c = UserCounts {
            connecting: 3,
            ..UserCounts::default()
        };
        c.logged_in();
        c.logged_in();
        assert_eq!((c.connecting, c.live), (1, 2));
        assert_eq!(c.closed("gone".into(), true), None);
        assert_eq!((c.live, c.dropped, c.drop_reason.as_deref()), (1, 1, Some("gone")));
        assert_eq!(c.closed("refused".into(), false).as_deref(), Some("refused"));
        assert_eq!((c.connecting, c.dropped), (0, 1), "a failed connect is not a drop");
        c.left(true);
        assert_eq!((c.live, c.dropped), (0, 1), "a quiet close is not a drop");
    }
}
