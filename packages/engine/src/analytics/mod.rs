//! Streaming analytics statements: a small SQL-like language over record updates (a stream of
//! records matching a subject pattern or in a container, a filter in the view filter language, a
//! key, a window, aggregates, an output rate), computed incrementally on the engine thread.
//! Grammar and semantics: docs/analytics.md.
//!
//! - `lexer`, `parser`: text -> [`Statement`] with canonical text; errors name the column.
//! - `pattern`: subject patterns (`/MKT/*`), the rules of entitlement patterns.
//! - `window`: one key's window and running aggregates, O(1) per event.
//! - `statement`: a compiled statement: its keys, windows, time queue and output.
//! - `set`: [`StatementSet`]: many statements, identical ones computed once, events routed by
//!   subject and by the filter's `field = 'text'` conjunct, time driven by the caller's clock.
//!
//! The hub (`hub/statements.rs`) feeds [`StatementSet::on_record`] with each applied source
//! publish and [`StatementSet::advance`] with the engine clock, and applies the result rows of
//! an [`Output`] as `/STAT/<name>/<key>` records.

mod lexer;
pub mod parser;
pub mod pattern;
mod set;
mod statement;
mod window;

use std::time::Duration;

pub use parser::{parse, Agg, Item, ItemKind, KeySpec, OutputSpec, Source, Statement, WindowSpec};
pub use pattern::Pattern;
pub use set::{result_subject, AnalyticsStats, StatementSet, MAX_NAME_BYTES};

use crate::value::Value;

/// Bounds on statements, checked when one is created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnalyticsLimits {
    /// Longest statement text in bytes. @default 4096
    pub max_text_bytes: usize,
    /// Most select items in one statement. @default 32
    pub max_items: usize,
    /// Largest `window length`, events. @default 100,000
    pub max_length: u32,
    /// Longest `window time` and `output last every`. @default 1 h
    pub max_time: Duration,
    /// Most events one statement's time windows hold together; past it the oldest leave early
    /// (counted in [`AnalyticsStats::evicted_early`]). @default 1,000,000
    pub max_time_events: usize,
    /// Most keys one statement keeps; an event that would add another is not counted (counted
    /// in [`AnalyticsStats::keys_refused`]). @default 100,000
    pub max_keys: usize,
    /// Most distinct statements (identical ones count once). @default 10,000
    pub max_statements: usize,
}

impl Default for AnalyticsLimits {
    fn default() -> Self {
        Self {
            max_text_bytes: 4096,
            max_items: 32,
            max_length: 100_000,
            max_time: Duration::from_secs(3600),
            max_time_events: 1_000_000,
            max_keys: 100_000,
            max_statements: 10_000,
        }
    }
}

/// A statement's computation: identical statements (same canonical text) share one id. Ids are
/// never reused within a [`StatementSet`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StatementId(pub u32);

/// One result: the statement, the key (an index into the statement's keys, stable for the
/// statement's life: see [`StatementSet::key_text`]) and the result fields
/// ([`Output::fields`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResultRow {
    /// The computation.
    pub statement: StatementId,
    /// The key's index in the statement.
    pub key: u32,
    start: u32,
    end: u32,
}

/// Result rows, appended by [`StatementSet::on_record`] and [`StatementSet::advance`]; the
/// caller publishes them and [`Output::clear`]s the buffer (its allocations are reused).
#[derive(Debug, Default, Clone)]
pub struct Output {
    rows: Vec<ResultRow>,
    fields: Vec<(u32, Option<Value>)>,
}

impl Output {
    /// An empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Drops the rows, keeping the allocations.
    pub fn clear(&mut self) {
        self.rows.clear();
        self.fields.clear();
    }

    /// The rows in the order they were produced.
    pub fn rows(&self) -> &[ResultRow] {
        &self.rows
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when there is no row.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The result fields of `row`: (field id, value); `None` = no value (an aggregate of an
    /// empty window, or a selected field the event lacks): the result record deletes the field.
    pub fn fields(&self, row: &ResultRow) -> &[(u32, Option<Value>)] {
        &self.fields[row.start as usize..row.end as usize]
    }

    /// Starts a row; fields pushed until [`Output::end_row`] belong to it.
    #[inline]
    fn begin_row(&mut self) -> u32 {
        self.fields.len() as u32
    }

    #[inline]
    fn end_row(&mut self, statement: StatementId, key: u32, start: u32) {
        self.rows.push(ResultRow {
            statement,
            key,
            start,
            end: self.fields.len() as u32,
        });
    }
}

#[cfg(test)]
mod parser_tests;
#[cfg(test)]
mod prop_tests;
#[cfg(test)]
mod set_tests;
