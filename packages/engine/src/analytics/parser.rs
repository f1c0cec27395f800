//! Recursive-descent parser for statement text, and the canonical text of a parsed statement
//! (equal statements print equal: the statement set dedupes on it). Grammar: docs/analytics.md.
//!
//! ```text
//! statement = "select" select "from" stream [ "where" filter ] [ "group" "by" field ]
//!             [ "window" window ] [ "output" output ] END
//! select    = "*" | item { "," item }
//! item      = ( aggregate | field ) [ "as" name ]
//! aggregate = "count" "(" ( "*" | field ) ")" | fn "(" field ")" | "vwap" "(" field "," field ")"
//! stream    = pattern | "container" subject
//! window    = "length" integer | "time" duration | "none"
//! output    = "every" "event" | "last" "every" duration
//! ```

use std::time::Duration;

use super::lexer::{tokenize, Tok};
use super::pattern::Pattern;
use super::AnalyticsLimits;
use crate::filter::tokens::Cursor;
use crate::filter::{self, Expr, ParseError};

/// An aggregate function over the events in a key's window.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Agg {
    /// `count(*)`: events in the window.
    CountAll,
    /// `count(f)`: events in the window whose `f` is a number.
    Count(String),
    /// `sum(f)`.
    Sum(String),
    /// `avg(f)`: arithmetic mean.
    Avg(String),
    /// `min(f)`.
    Min(String),
    /// `max(f)`.
    Max(String),
    /// `first(f)`: `f` of the oldest event in the window.
    First(String),
    /// `last(f)`: `f` of the newest event in the window.
    Last(String),
    /// `stddev(f)`: sample standard deviation.
    Stddev(String),
    /// `vwap(price, volume)`: volume-weighted average price, `sum(price*volume) / sum(volume)`.
    Vwap(String, String),
}

impl Agg {
    /// The function's name.
    pub fn name(&self) -> &'static str {
        match self {
            Agg::CountAll | Agg::Count(_) => "count",
            Agg::Sum(_) => "sum",
            Agg::Avg(_) => "avg",
            Agg::Min(_) => "min",
            Agg::Max(_) => "max",
            Agg::First(_) => "first",
            Agg::Last(_) => "last",
            Agg::Stddev(_) => "stddev",
            Agg::Vwap(..) => "vwap",
        }
    }

    /// The result field name when no `as` is given: `count`, `vwap`, else `<fn>_<field>`.
    pub fn default_alias(&self) -> String {
        match self {
            Agg::CountAll | Agg::Vwap(..) => self.name().to_owned(),
            Agg::Count(f)
            | Agg::Sum(f)
            | Agg::Avg(f)
            | Agg::Min(f)
            | Agg::Max(f)
            | Agg::First(f)
            | Agg::Last(f)
            | Agg::Stddev(f) => format!("{}_{f}", self.name()),
        }
    }
}

/// What a select item computes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ItemKind {
    /// An aggregate.
    Agg(Agg),
    /// A field of the event, passed through (statements without aggregates only).
    Field(String),
}

/// One select item and the result field it writes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Item {
    /// What it computes.
    pub kind: ItemKind,
    /// The result field's name (the `as` name, or the default).
    pub alias: String,
}

/// Where a statement's events come from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Source {
    /// Updates of records whose subject matches the pattern.
    Pattern(Pattern),
    /// Updates of the records that are members of this container.
    Container(String),
}

/// What results are kept per.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum KeySpec {
    /// One result per source record (subject). The default.
    Subject,
    /// One result per value of this field.
    Field(String),
}

/// Which events a key's aggregates cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WindowSpec {
    /// Every event since the statement was created. The default.
    None,
    /// The last `n` events of the key.
    Length(u32),
    /// The events of the key that arrived less than this long ago (engine clock).
    Time(Duration),
}

/// When results are emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutputSpec {
    /// After every event (and every expiry) that changes a key's result. The default.
    EveryEvent,
    /// At most once per interval per key: the key's last result, at the end of each interval
    /// (aligned to the statement's creation) in which it changed.
    LastEvery(Duration),
}

/// A parsed statement.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    /// The select items; empty for `select *` (every field of the event).
    pub items: Vec<Item>,
    /// The stream.
    pub source: Source,
    /// The `where` clause (`Expr::All` when absent).
    pub filter: Expr,
    /// The key.
    pub key: KeySpec,
    /// The window.
    pub window: WindowSpec,
    /// The output rate.
    pub output: OutputSpec,
}

impl Statement {
    /// True when the statement has no aggregate: a filtered stream of events.
    pub fn is_stream(&self) -> bool {
        !self.items.iter().any(|i| matches!(i.kind, ItemKind::Agg(_)))
    }
}

struct Parser<'a> {
    text: &'a str,
    cur: Cursor<Tok>,
    limits: &'a AnalyticsLimits,
}

/// Parses statement text. Errors name the 1-based character column and what was expected.
pub fn parse(text: &str, limits: &AnalyticsLimits) -> Result<Statement, ParseError> {
    if text.len() > limits.max_text_bytes {
        return Err(ParseError::new(
            text[..text.floor_char_boundary(limits.max_text_bytes)].chars().count() as u32 + 1,
            format!(
                "statement is {} bytes long; at most {} are allowed",
                text.len(),
                limits.max_text_bytes
            ),
        ));
    }
    let toks = tokenize(text)?;
    let mut p = Parser {
        text,
        cur: Cursor::new(toks),
        limits,
    };
    p.statement()
}

impl Parser<'_> {
    fn expect_kw(&mut self, kw: &str, expected: &str) -> Result<(), ParseError> {
        if self.cur.peek().is_kw(kw) {
            self.cur.take();
            Ok(())
        } else {
            Err(self.cur.err(expected))
        }
    }

    fn expect_sym(&mut self, c: char, expected: &str) -> Result<(), ParseError> {
        if self.cur.peek() == &Tok::Sym(c) {
            self.cur.take();
            Ok(())
        } else {
            Err(self.cur.err(expected))
        }
    }

    fn statement(&mut self) -> Result<Statement, ParseError> {
        self.expect_kw("select", "expected 'select'")?;
        let items = self.select()?;
        self.expect_kw("from", "expected ',' or 'from' after the select list")?;
        let source = self.source()?;
        let mut st = Statement {
            items,
            source,
            filter: Expr::All,
            key: KeySpec::Subject,
            window: WindowSpec::None,
            output: OutputSpec::EveryEvent,
        };
        if self.cur.peek().is_kw("where") {
            self.cur.take();
            st.filter = self.filter()?;
        }
        if self.cur.peek().is_kw("group") {
            self.cur.take();
            self.expect_kw("by", "expected 'by' after 'group'")?;
            st.key = KeySpec::Field(self.field("expected a field name after 'group by'")?);
        }
        if self.cur.peek().is_kw("window") {
            let col = self.cur.col();
            self.cur.take();
            st.window = self.window()?;
            if st.window != WindowSpec::None && st.is_stream() {
                return Err(ParseError::new(
                    col,
                    "a window needs an aggregate: a statement without one is a filtered stream of events".into(),
                ));
            }
        }
        if self.cur.peek().is_kw("output") {
            self.cur.take();
            st.output = self.output()?;
        }
        if self.cur.peek() != &Tok::End {
            // only the clauses that may still follow the last one given
            let given = [
                st.filter != Expr::All,
                st.key != KeySpec::Subject,
                st.window != WindowSpec::None,
                st.output != OutputSpec::EveryEvent,
            ];
            let after = given.iter().rposition(|&g| g).map_or(0, |i| i + 1);
            let mut expected: Vec<&str> = ["'where'", "'group by'", "'window'", "'output'"][after..].to_vec();
            expected.push("end of statement");
            return Err(self.cur.err(&format!(
                "expected {} (clauses go in this order: where, group by, window, output)",
                expected.join(", ")
            )));
        }
        Ok(st)
    }

    fn select(&mut self) -> Result<Vec<Item>, ParseError> {
        if self.cur.peek() == &Tok::Sym('*') {
            self.cur.take();
            return Ok(Vec::new());
        }
        let mut items: Vec<Item> = Vec::new();
        let mut cols: Vec<u32> = Vec::new();
        loop {
            let col = self.cur.col();
            if items.len() >= self.limits.max_items {
                return Err(ParseError::new(
                    col,
                    format!("a statement selects at most {} items", self.limits.max_items),
                ));
            }
            let item = self.item()?;
            if let Some(prev) = items.iter().position(|i| i.alias == item.alias) {
                return Err(ParseError::new(
                    col,
                    format!(
                        "result field '{}' is already named by the item at {}; name this one with 'as'",
                        item.alias, cols[prev]
                    ),
                ));
            }
            if let Some(prev) = items.first() {
                let agg = |i: &Item| matches!(i.kind, ItemKind::Agg(_));
                if agg(prev) != agg(&item) {
                    return Err(ParseError::new(
                        col,
                        "a statement selects either aggregates or fields, not both (last(field) is the field's latest value)"
                            .into(),
                    ));
                }
            }
            items.push(item);
            cols.push(col);
            if self.cur.peek() != &Tok::Sym(',') {
                return Ok(items);
            }
            self.cur.take();
        }
    }

    fn item(&mut self) -> Result<Item, ParseError> {
        let kind = match (self.cur.peek().clone(), self.cur.peek_at(1) == &Tok::Sym('(')) {
            (Tok::Word(w), true) => ItemKind::Agg(self.aggregate(&w)?),
            (Tok::Word(_) | Tok::Str(_), false) => ItemKind::Field(self.field("expected a field")?),
            _ => return Err(self.cur.err("expected '*', an aggregate or a field")),
        };
        let alias = if self.cur.peek().is_kw("as") {
            self.cur.take();
            self.field("expected a result field name after 'as'")?
        } else {
            match &kind {
                ItemKind::Agg(a) => a.default_alias(),
                ItemKind::Field(f) => f.clone(),
            }
        };
        Ok(Item { kind, alias })
    }

    fn aggregate(&mut self, name: &str) -> Result<Agg, ParseError> {
        let lower = name.to_ascii_lowercase();
        let known = ["count", "sum", "avg", "min", "max", "first", "last", "stddev", "vwap"];
        if !known.contains(&lower.as_str()) {
            return Err(self
                .cur
                .err("expected an aggregate (count sum avg min max first last stddev vwap) before '('"));
        }
        self.cur.take();
        self.cur.take(); // '('
        let arg = |p: &mut Self| p.field(&format!("expected a field name in {lower}(...)"));
        let agg = match lower.as_str() {
            "count" if self.cur.peek() == &Tok::Sym('*') => {
                self.cur.take();
                Agg::CountAll
            }
            "count" => Agg::Count(arg(self)?),
            "sum" => Agg::Sum(arg(self)?),
            "avg" => Agg::Avg(arg(self)?),
            "min" => Agg::Min(arg(self)?),
            "max" => Agg::Max(arg(self)?),
            "first" => Agg::First(arg(self)?),
            "last" => Agg::Last(arg(self)?),
            "stddev" => Agg::Stddev(arg(self)?),
            _ => {
                let price = arg(self)?;
                self.expect_sym(',', "expected ',' and the volume field in vwap(price, volume)")?;
                Agg::Vwap(price, arg(self)?)
            }
        };
        self.expect_sym(')', &format!("expected ')' to close {lower}("))?;
        Ok(agg)
    }

    /// A field name: a bare word that is not a clause keyword, or a quoted string.
    fn field(&mut self, expected: &str) -> Result<String, ParseError> {
        match self.cur.peek().clone() {
            Tok::Word(w) if !RESERVED.iter().any(|k| k.eq_ignore_ascii_case(&w)) => {
                self.cur.take();
                Ok(w)
            }
            Tok::Str(s) if !s.is_empty() => {
                self.cur.take();
                Ok(s)
            }
            _ => Err(self.cur.err(expected)),
        }
    }

    fn source(&mut self) -> Result<Source, ParseError> {
        let container = self.cur.peek().is_kw("container");
        if container {
            self.cur.take();
        }
        let col = self.cur.col();
        let Tok::Subject(text) = self.cur.peek().clone() else {
            return Err(self.cur.err(if container {
                "expected the container's subject (like /CONTAINER/FX) after 'container'"
            } else {
                "expected a subject pattern (like /MKT/*) or 'container' after 'from'"
            }));
        };
        self.cur.take();
        let pattern = Pattern::parse(&text).map_err(|m| ParseError::new(col, m))?;
        if container {
            if !pattern.is_literal() {
                return Err(ParseError::new(
                    col,
                    format!("a container is one subject, not a pattern: '{text}'"),
                ));
            }
            return Ok(Source::Container(text));
        }
        Ok(Source::Pattern(pattern))
    }

    /// The `where` clause: the tokens up to the next clause at parenthesis depth 0 (a clause
    /// keyword followed by its second word, so a field named `window` still filters), parsed
    /// by the filter language with its columns moved to the statement's.
    fn filter(&mut self) -> Result<Expr, ParseError> {
        let start = self.cur.pos();
        let mut depth = 0i32;
        loop {
            let next = self.cur.peek_at(1);
            match self.cur.peek() {
                Tok::End => break,
                Tok::Sym('(') => depth += 1,
                Tok::Sym(')') => depth -= 1,
                t if depth == 0
                    && ((t.is_kw("group") && next.is_kw("by"))
                        || (t.is_kw("window") && ["length", "time", "none"].iter().any(|k| next.is_kw(k)))
                        || (t.is_kw("output") && (next.is_kw("every") || next.is_kw("last")))) =>
                {
                    break
                }
                _ => {}
            }
            self.cur.take();
        }
        if self.cur.pos() == start {
            return Err(self.cur.err("expected a filter after 'where'"));
        }
        let (from, to) = (self.cur.token(start).at, self.cur.token(self.cur.pos()).at);
        let shift = self.cur.token(start).col - 1;
        let limits = filter::FilterLimits {
            max_len: self.limits.max_text_bytes,
            ..filter::FilterLimits::default()
        };
        filter::parse(&self.text[from..to], &limits).map_err(|e| ParseError::new(e.column + shift, e.message))
    }

    fn window(&mut self) -> Result<WindowSpec, ParseError> {
        if self.cur.peek().is_kw("none") {
            self.cur.take();
            return Ok(WindowSpec::None);
        }
        if self.cur.peek().is_kw("length") {
            self.cur.take();
            let col = self.cur.col();
            let n = self.integer("expected the number of events after 'length'")?;
            if n == 0 || n > u64::from(self.limits.max_length) {
                return Err(ParseError::new(
                    col,
                    format!("a length window holds 1..{} events, got {n}", self.limits.max_length),
                ));
            }
            return Ok(WindowSpec::Length(n as u32));
        }
        if self.cur.peek().is_kw("time") {
            self.cur.take();
            let col = self.cur.col();
            let d = self.duration("after 'time'")?;
            if d > self.limits.max_time {
                return Err(ParseError::new(
                    col,
                    format!(
                        "a time window is at most {}, got {}",
                        duration_text(self.limits.max_time),
                        duration_text(d)
                    ),
                ));
            }
            return Ok(WindowSpec::Time(d));
        }
        Err(self.cur.err("expected 'length', 'time' or 'none' after 'window'"))
    }

    fn output(&mut self) -> Result<OutputSpec, ParseError> {
        if self.cur.peek().is_kw("every") {
            self.cur.take();
            self.expect_kw("event", "expected 'event' after 'output every'")?;
            return Ok(OutputSpec::EveryEvent);
        }
        if self.cur.peek().is_kw("last") {
            self.cur.take();
            self.expect_kw("every", "expected 'every' after 'output last'")?;
            let col = self.cur.col();
            let d = self.duration("after 'output last every'")?;
            if d > self.limits.max_time {
                return Err(ParseError::new(
                    col,
                    format!(
                        "an output interval is at most {}, got {}",
                        duration_text(self.limits.max_time),
                        duration_text(d)
                    ),
                ));
            }
            return Ok(OutputSpec::LastEvery(d));
        }
        Err(self
            .cur
            .err("expected 'every event' or 'last every <duration>' after 'output'"))
    }

    fn integer(&mut self, expected: &str) -> Result<u64, ParseError> {
        match self.cur.peek() {
            Tok::Num(s) => match s.parse::<u64>() {
                Ok(n) => {
                    self.cur.take();
                    Ok(n)
                }
                Err(_) => Err(self.cur.err(&format!("{expected} (a whole number)"))),
            },
            _ => Err(self.cur.err(expected)),
        }
    }

    /// `<whole number> <unit>` (the unit may touch the number: `2s`, `500ms`), at least 1 ms.
    fn duration(&mut self, after: &str) -> Result<Duration, ParseError> {
        let col = self.cur.col();
        let n = self.integer(&format!("expected a duration like 500 ms or 2 s {after}"))?;
        let unit_ms: u64 = match self.cur.peek() {
            Tok::Word(w) => match w.to_ascii_lowercase().as_str() {
                "ms" => 1,
                "s" | "sec" => 1_000,
                "min" => 60_000,
                "h" => 3_600_000,
                _ => return Err(self.cur.err("expected a time unit (ms, s, min, h)")),
            },
            _ => return Err(self.cur.err("expected a time unit (ms, s, min, h)")),
        };
        self.cur.take();
        match n.checked_mul(unit_ms) {
            Some(ms) if ms > 0 => Ok(Duration::from_millis(ms)),
            _ => Err(ParseError::new(col, format!("a duration is at least 1 ms, got {n}"))),
        }
    }
}

/// Words that end or start a clause: a field spelled like one is quoted.
const RESERVED: [&str; 8] = ["select", "from", "where", "group", "by", "window", "output", "as"];

/// A field name as canonical text: bare when it reads back as the same field, else quoted.
pub fn field_text(name: &str) -> String {
    if RESERVED.iter().any(|k| k.eq_ignore_ascii_case(name)) {
        // reserved words are ASCII letters: nothing to escape
        format!("\"{name}\"")
    } else {
        filter::parser::field_text(name)
    }
}

/// A duration as canonical text: the largest unit (h, min, s, ms) that divides it exactly.
pub fn duration_text(d: Duration) -> String {
    let ms = d.as_millis();
    for (unit, size) in [("h", 3_600_000), ("min", 60_000), ("s", 1_000)] {
        if ms.is_multiple_of(size) {
            return format!("{} {unit}", ms / size);
        }
    }
    format!("{ms} ms")
}

impl std::fmt::Display for Agg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Agg::CountAll => f.write_str("count(*)"),
            Agg::Vwap(p, v) => write!(f, "vwap({}, {})", field_text(p), field_text(v)),
            Agg::Count(x)
            | Agg::Sum(x)
            | Agg::Avg(x)
            | Agg::Min(x)
            | Agg::Max(x)
            | Agg::First(x)
            | Agg::Last(x)
            | Agg::Stddev(x) => write!(f, "{}({})", self.name(), field_text(x)),
        }
    }
}

impl std::fmt::Display for Statement {
    /// Canonical text: lower-case keywords, single spaces, every alias spelled out, default
    /// clauses left out, the filter in its canonical form, durations in the largest exact unit.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("select ")?;
        if self.items.is_empty() {
            f.write_str("*")?;
        }
        for (i, item) in self.items.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            match &item.kind {
                ItemKind::Agg(a) => write!(f, "{a}")?,
                ItemKind::Field(x) => f.write_str(&field_text(x))?,
            }
            write!(f, " as {}", field_text(&item.alias))?;
        }
        match &self.source {
            Source::Pattern(p) => write!(f, " from {p}")?,
            Source::Container(c) => write!(f, " from container {c}")?,
        }
        if self.filter != Expr::All {
            write!(f, " where {}", self.filter)?;
        }
        if let KeySpec::Field(k) = &self.key {
            write!(f, " group by {}", field_text(k))?;
        }
        match self.window {
            WindowSpec::None => {}
            WindowSpec::Length(n) => write!(f, " window length {n}")?,
            WindowSpec::Time(d) => write!(f, " window time {}", duration_text(d))?,
        }
        if let OutputSpec::LastEvery(d) = self.output {
            write!(f, " output last every {}", duration_text(d))?;
        }
        Ok(())
    }
}
