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
