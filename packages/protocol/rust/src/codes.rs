// Generated from packages/protocol/schema/protocol.json by packages/protocol/scripts/generate.mjs.
// Do not edit: edit the schema and run `npm run generate -w @tidewire/protocol`.

//! Error codes of `error` frames and WebSocket close codes.

/// A stable error code of `error` frames; `as_str` is its wire spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// The frame is not JSON, is a binary frame, or is not a JSON object/array where one is required. A text frame that is not valid UTF-8 is not answered: the WebSocket layer cuts the connection (1006).
    BadFrame,
    /// A field is missing, has the wrong type or breaks a rule; `message` names the field and rule.
    BadRequest,
    /// `type` names no message this endpoint accepts.
    UnknownType,
    /// The request needs a logged-in session; send `session.login` first.
    NotLoggedIn,
    /// `session.login` was sent on a session that is already logged in.
    AlreadyLoggedIn,
    /// Unknown user or wrong password.
    BadCredentials,
    /// The token is malformed, forged or expired; log in with a password again.
    BadToken,
    /// The user's role or rules do not allow this subject or action.
    NotEntitled,
    /// A configured limit (subscriptions, window size, ...) would be exceeded; `message` names it.
    LimitExceeded,
    /// Too many requests per second; retry after a pause.
    RateLimited,
    /// The named subject, view or order does not exist.
    NotFound,
    /// The server is starting or shutting down (retry on another connection), or the feature is off
    /// on this server (orders without `orders.journalDir`; `message` names the setting).
    Unavailable,
    /// A server fault; logged with the session id.
    Internal,
}

impl ErrorCode {
    /// Every code, in documentation order.
    pub const ALL: &[ErrorCode] = &[
        ErrorCode::BadFrame,
        ErrorCode::BadRequest,
        ErrorCode::UnknownType,
        ErrorCode::NotLoggedIn,
        ErrorCode::AlreadyLoggedIn,
        ErrorCode::BadCredentials,
        ErrorCode::BadToken,
        ErrorCode::NotEntitled,
        ErrorCode::LimitExceeded,
        ErrorCode::RateLimited,
        ErrorCode::NotFound,
        ErrorCode::Unavailable,
        ErrorCode::Internal,
    ];

    /// The wire spelling, e.g. `"BAD_REQUEST"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadFrame => "BAD_FRAME",
            ErrorCode::BadRequest => "BAD_REQUEST",
            ErrorCode::UnknownType => "UNKNOWN_TYPE",
            ErrorCode::NotLoggedIn => "NOT_LOGGED_IN",
            ErrorCode::AlreadyLoggedIn => "ALREADY_LOGGED_IN",
            ErrorCode::BadCredentials => "BAD_CREDENTIALS",
            ErrorCode::BadToken => "BAD_TOKEN",
            ErrorCode::NotEntitled => "NOT_ENTITLED",
            ErrorCode::LimitExceeded => "LIMIT_EXCEEDED",
            ErrorCode::RateLimited => "RATE_LIMITED",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::Unavailable => "UNAVAILABLE",
            ErrorCode::Internal => "INTERNAL",
        }
    }

    /// Whether sending the same request again (later, unchanged) can succeed.
    pub fn retryable(self) -> bool {
        matches!(self, ErrorCode::RateLimited | ErrorCode::Unavailable | ErrorCode::Internal)
    }

    /// The code spelled `s` on the wire, if any.
    pub fn parse(s: &str) -> Option<ErrorCode> {
        match s {
            "BAD_FRAME" => Some(ErrorCode::BadFrame),
            "BAD_REQUEST" => Some(ErrorCode::BadRequest),
            "UNKNOWN_TYPE" => Some(ErrorCode::UnknownType),
            "NOT_LOGGED_IN" => Some(ErrorCode::NotLoggedIn),
            "ALREADY_LOGGED_IN" => Some(ErrorCode::AlreadyLoggedIn),
            "BAD_CREDENTIALS" => Some(ErrorCode::BadCredentials),
            "BAD_TOKEN" => Some(ErrorCode::BadToken),
            "NOT_ENTITLED" => Some(ErrorCode::NotEntitled),
            "LIMIT_EXCEEDED" => Some(ErrorCode::LimitExceeded),
            "RATE_LIMITED" => Some(ErrorCode::RateLimited),
            "NOT_FOUND" => Some(ErrorCode::NotFound),
            "UNAVAILABLE" => Some(ErrorCode::Unavailable),
            "INTERNAL" => Some(ErrorCode::Internal),
            _ => None,
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A WebSocket close code the server uses (1000-1015: RFC 6455; 4000-4999: Tidewire's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CloseCode {
    /// Normal close requested by the peer.
    Normal,
    /// Server shutting down (SIGINT/SIGTERM); reconnect to another node or later.
    GoingAway,
    /// A frame was larger than the endpoint's max frame size, `limits.maxClientFrameBytes` /
    /// `maxSourceFrameBytes` (closed by the transport, no error frame first). A frame above twice the
    /// limit is cut by uWebSockets.js before the server sees it: the peer gets 1006.
    FrameTooLarge,
    /// No successful `session.login` within `limits.loginTimeoutMs`, or (when
    /// `limits.firstFrameTimeoutMs` is set) no complete WebSocket frame that long after the upgrade
    /// (reason `no complete frame within N ms of the upgrade`).
    LoginTimeout,
    /// The session's token expired or its user was removed/disabled: a config reload removed the user
    /// or changed its password or role.
    AuthRevoked,
    /// The client did not read fast enough: its outbox stayed over the limit; see `reason`.
    SlowConsumer,
    /// An administrator closed the session; `reason` says why.
    Kicked,
    /// Too many protocol violations on one connection: more than `limits.maxProtocolErrors` error
    /// replies, or `limits.failedLoginsPerConnection` (5) failed logins.
    ProtocolViolation,
    /// A source kept publishing after `source.pause`: more than `limits.sourceOverrunBytes` arrived
    /// before `source.resume`. Reconnect, then publish only while not paused.
    SourceOverrun,
    /// Over a connection limit: too many connections from this address (`limits.maxConnectionsPerIp`,
    /// at open) or sessions of this user (`limits.maxConnectionsPerUser`, at login, after a
    /// `LIMIT_EXCEEDED` error); `reason` says which.
    TooManyConnections,
}

impl CloseCode {
    /// Every close code, in documentation order.
    pub const ALL: &[CloseCode] = &[
        CloseCode::Normal,
        CloseCode::GoingAway,
        CloseCode::FrameTooLarge,
        CloseCode::LoginTimeout,
        CloseCode::AuthRevoked,
        CloseCode::SlowConsumer,
        CloseCode::Kicked,
        CloseCode::ProtocolViolation,
        CloseCode::SourceOverrun,
        CloseCode::TooManyConnections,
    ];

    /// The numeric code sent in the close frame.
    pub fn code(self) -> u16 {
        match self {
            CloseCode::Normal => 1000,
            CloseCode::GoingAway => 1001,
            CloseCode::FrameTooLarge => 1009,
            CloseCode::LoginTimeout => 4001,
            CloseCode::AuthRevoked => 4003,
            CloseCode::SlowConsumer => 4008,
            CloseCode::Kicked => 4010,
            CloseCode::ProtocolViolation => 4002,
            CloseCode::SourceOverrun => 4013,
            CloseCode::TooManyConnections => 4029,
        }
    }

    /// The name, e.g. `"SLOW_CONSUMER"`.
    pub fn name(self) -> &'static str {
        match self {
            CloseCode::Normal => "NORMAL",
            CloseCode::GoingAway => "GOING_AWAY",
            CloseCode::FrameTooLarge => "FRAME_TOO_LARGE",
            CloseCode::LoginTimeout => "LOGIN_TIMEOUT",
            CloseCode::AuthRevoked => "AUTH_REVOKED",
            CloseCode::SlowConsumer => "SLOW_CONSUMER",
            CloseCode::Kicked => "KICKED",
            CloseCode::ProtocolViolation => "PROTOCOL_VIOLATION",
            CloseCode::SourceOverrun => "SOURCE_OVERRUN",
            CloseCode::TooManyConnections => "TOO_MANY_CONNECTIONS",
        }
    }

    /// Whether a client reconnects after it.
    pub fn reconnect(self) -> bool {
        matches!(
            self,
            CloseCode::GoingAway | CloseCode::LoginTimeout | CloseCode::SlowConsumer | CloseCode::SourceOverrun
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_code_parses_back_from_its_wire_spelling() {
        for &code in ErrorCode::ALL {
            assert_eq!(ErrorCode::parse(code.as_str()), Some(code));
            assert_eq!(code.to_string(), code.as_str());
        }
        assert_eq!(ErrorCode::parse("bad_request"), None);
        assert_eq!(ErrorCode::ALL.len(), 13);
        assert_eq!(ErrorCode::ALL.iter().filter(|c| c.retryable()).count(), 3);
    }

    #[test]
    fn close_codes_are_distinct() {
        let mut codes: Vec<u16> = CloseCode::ALL.iter().map(|c| c.code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), 10);
        assert_eq!(CloseCode::ALL.iter().filter(|c| c.reconnect()).count(), 4);
    }
}
