//! The view filter language: text -> tokens (`lexer`) -> syntax tree (`parser`, with canonical
//! text) -> compiled form evaluated over records (`compile`). Grammar and semantics: docs/views.md.

pub mod compile;
pub mod lexer;
pub mod parser;
pub mod time;
pub mod tokens;

pub use compile::{Conjunct, Filter, Pred, Row};
pub use parser::{parse, Expr, Literal, Op};

use crate::error::EngineError;
use tidewire_protocol::limits::view_limits;

/// Bounds on filter text, checked before and while parsing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FilterLimits {
    /// Longest filter text in bytes. @default 4096
    pub max_len: usize,
    /// Deepest nesting of `(`...`)` and `not`. @default 32
    pub max_depth: u32,
    /// Most values in one `in (...)` list. @default 1024
    pub max_in_values: usize,
}

impl Default for FilterLimits {
    fn default() -> Self {
        Self {
            max_len: view_limits::MAX_FILTER_BYTES,
            max_depth: view_limits::MAX_FILTER_DEPTH,
            max_in_values: 1024,
        }
    }
}

/// A filter or sort that does not parse: where (1-based character column) and what was expected.
/// Displays as `at 14: expected a value after '>=', found end of filter`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based character column of the offending token (one past the end for "end of filter").
    pub column: u32,
    /// The reason, e.g. `expected a value after '>=', found end of filter`.
    pub message: String,
}

impl ParseError {
    /// An error at `column`.
    pub fn new(column: u32, message: String) -> Self {
        Self { column, message }
    }
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at {}: {}", self.column, self.message)
    }
}

impl std::error::Error for ParseError {}

impl ParseError {
    /// As a `BAD_REQUEST` naming `field` (`filter` or `sort`), message prefixed with the field.
    pub fn into_engine_error(self, field: &str) -> EngineError {
        EngineError::bad_request(format!("{field} {self}"), Some(field), None)
    }
}

#[cfg(test)]
mod tests;
