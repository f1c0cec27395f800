//! `EngineError`: every failure a caller can act on, with the stable protocol code
//! (packages/protocol/schema/protocol.json) it maps to.

use thiserror::Error;

/// A stable protocol error code: generated from packages/protocol/schema/protocol.json (the
/// engine produces `BAD_FRAME`, `BAD_REQUEST`, `UNKNOWN_TYPE`, `NOT_ENTITLED`, `LIMIT_EXCEEDED`,
/// `NOT_FOUND`, `UNAVAILABLE` and `INTERNAL`).
pub use tidewire_protocol::ErrorCode;

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
