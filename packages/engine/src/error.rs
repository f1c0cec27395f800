//! `EngineError`: every failure a caller can act on, with the stable protocol code
//! (packages/protocol/src/codes.ts) it maps to.

use thiserror::Error;

/// A stable protocol error code (see packages/protocol/src/codes.ts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// Not valid UTF-8 JSON, or not an object/array where one is required.
    BadFrame,
    /// A field is missing, has the wrong type or breaks a rule.
    BadRequest,
    /// `type` names no message this endpoint accepts.
    UnknownType,
    /// The session's user may not see or publish this subject (private trade records, blotters).
    NotEntitled,
    /// A configured limit would be exceeded.
    LimitExceeded,
    /// The named engine, worker or session does not exist.
    NotFound,
    /// The engine is shut down.
    Unavailable,
    /// An engine fault (a thread died); retrying on a new engine may help.
    Internal,
}

impl ErrorCode {
    /// The wire spelling, e.g. `"BAD_REQUEST"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadFrame => "BAD_FRAME",
            ErrorCode::BadRequest => "BAD_REQUEST",
            ErrorCode::UnknownType => "UNKNOWN_TYPE",
            ErrorCode::NotEntitled => "NOT_ENTITLED",
            ErrorCode::LimitExceeded => "LIMIT_EXCEEDED",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::Unavailable => "UNAVAILABLE",
            ErrorCode::Internal => "INTERNAL",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An engine error: one variant per thing a caller can fix. `message` names the field,
/// the value and the rule; `field`/`index` locate it inside a request or source frame.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum EngineError {
    /// The source frame is not JSON, or not an array/object of messages.
    #[error("{message}")]
    BadFrame {
        /// Human-readable reason.
        message: String,
        /// Index of the offending element of a source frame, if the frame itself parsed.
        index: Option<u32>,
    },
    /// A message or argument breaks a rule of the protocol or the config.
    #[error("{message}")]
    BadRequest {
        /// Human-readable: field, value, rule.
        message: String,
        /// Dotted path of the offending field (`fields.bid`, `subjects.3`), if any.
        field: Option<String>,
        /// Index of the offending message in a source frame, if any.
        index: Option<u32>,
    },
    /// A source frame message has a `type` other than `record.publish`.
    #[error("{message}")]
    UnknownType {
        /// Human-readable reason.
        message: String,
        /// Index of the offending message in the frame.
        index: Option<u32>,
    },
    /// A configured limit would be exceeded (subscriptions, fields per record).
    #[error("{message}")]
    LimitExceeded {
        /// Human-readable: which limit, its value.
        message: String,
    },
    /// The engine, worker or session id is unknown.
    #[error("{message}")]
    NotFound {
        /// Human-readable: what was not found.
        message: String,
    },
    /// The caller may not touch this subject (a source publishing under `/TRADE/` or `/BLOTTER/`).
    #[error("{message}")]
    NotEntitled {
        /// Human-readable: the subject and the rule.
        message: String,
        /// Dotted path of the offending field (`subject`), if any.
        field: Option<String>,
        /// Index of the offending message in a source frame, if any.
        index: Option<u32>,
    },
    /// A feature is not configured (orders without a journal directory); `message` names the setting.
    #[error("{message}")]
    NotConfigured {
        /// Human-readable: what is off and which setting turns it on.
        message: String,
    },
    /// The engine has been shut down.
    #[error("engine {engine_id} is shut down")]
    Unavailable {
        /// The engine's id.
        engine_id: u32,
    },
    /// The engine thread died or could not start.
    #[error("{message}")]
    Internal {
        /// Human-readable reason.
        message: String,
    },
}

impl EngineError {
    /// A `BAD_REQUEST` naming `field` (and, in source frames, the message `index`).
    pub fn bad_request(message: impl Into<String>, field: Option<&str>, index: Option<u32>) -> Self {
        EngineError::BadRequest {
            message: message.into(),
            field: field.map(str::to_owned),
            index,
        }
    }

    /// The protocol code of this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            EngineError::BadFrame { .. } => ErrorCode::BadFrame,
            EngineError::BadRequest { .. } => ErrorCode::BadRequest,
            EngineError::UnknownType { .. } => ErrorCode::UnknownType,
            EngineError::LimitExceeded { .. } => ErrorCode::LimitExceeded,
            EngineError::NotFound { .. } => ErrorCode::NotFound,
            EngineError::NotEntitled { .. } => ErrorCode::NotEntitled,
            EngineError::NotConfigured { .. } | EngineError::Unavailable { .. } => ErrorCode::Unavailable,
            EngineError::Internal { .. } => ErrorCode::Internal,
        }
    }

    /// Dotted path of the offending field, when the error names one.
    pub fn field(&self) -> Option<&str> {
        match self {
            EngineError::BadRequest { field, .. } | EngineError::NotEntitled { field, .. } => field.as_deref(),
            _ => None,
        }
    }

    /// Index of the offending message in a source frame, when known.
    pub fn index(&self) -> Option<u32> {
        match self {
            EngineError::BadRequest { index, .. }
            | EngineError::NotEntitled { index, .. }
            | EngineError::UnknownType { index, .. }
            | EngineError::BadFrame { index, .. } => *index,
            _ => None,
        }
    }
}

/// Result alias used across the engine.
pub type Result<T, E = EngineError> = std::result::Result<T, E>;
