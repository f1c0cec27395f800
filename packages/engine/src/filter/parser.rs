//! Recursive-descent parser for filter text, and the canonical text of a parsed filter.
//!
//! ```text
//! filter     = [ or ] END
//! or         = and { "or" and }
//! and        = unary { "and" unary }
//! unary      = "not" unary | "(" or ")" | comparison
//! comparison = field ( cmp value | "in" "(" value { "," value } ")" | strop string )
//! ```

use super::lexer::{keyword, tokenize, Tok};
use super::time::format_iso;
use super::tokens::Cursor;
use super::{FilterLimits, ParseError};

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// `=`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `~=`: case-insensitive string equality.
    IEq,
    /// `contains`: substring (byte-exact).
    Contains,
    /// `startsWith`: prefix (byte-exact).
    StartsWith,
    /// `icontains`: case-insensitive substring.
    IContains,
}

impl Op {
    /// Canonical spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Eq => "=",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::IEq => "~=",
            Op::Contains => "contains",
            Op::StartsWith => "startsWith",
            Op::IContains => "icontains",
        }
    }

    /// True for the string-only operators (`~= contains startsWith icontains`).
    pub fn string_only(self) -> bool {
        matches!(self, Op::IEq | Op::Contains | Op::StartsWith | Op::IContains)
    }
}

/// A typed literal.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// A finite number (also matches timestamp fields, as epoch ms).
    Num(f64),
    /// A string.
    Str(String),
    /// A timestamp, epoch ms (also matches number fields).
    Time(i64),
    /// true / false.
    Bool(bool),
}

/// A parsed filter.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// The empty filter: every row matches.
    All,
    /// All operands hold (2 or more, never directly nested `And`).
    And(Vec<Expr>),
    /// Any operand holds (2 or more, never directly nested `Or`).
    Or(Vec<Expr>),
    /// The operand does not hold.
    Not(Box<Expr>),
    /// `field op value`.
    Cmp {
        /// Field name.
        field: String,
        /// Operator.
        op: Op,
        /// Right-hand side.
        value: Literal,
    },
    /// `field in (values)`: canonical lists are sorted by canonical text, without duplicates.
    In {
        /// Field name.
        field: String,
        /// The values (at least one).
        values: Vec<Literal>,
    },
}

struct Parser<'a> {
    cur: Cursor<Tok>,
    limits: &'a FilterLimits,
}

/// Parses filter text (empty or blank = `Expr::All`). Errors name the column and the expected token.
pub fn parse(text: &str, limits: &FilterLimits) -> Result<Expr, ParseError> {
    if text.len() > limits.max_len {
        return Err(ParseError::new(
            text[..limits.max_len].chars().count() as u32 + 1,
            format!(
                "filter is {} bytes long; at most {} are allowed",
                text.len(),
                limits.max_len
            ),
        ));
    }
    let toks = tokenize(text)?;
    let mut p = Parser {
        cur: Cursor::new(toks),
        limits,
    };
    if p.cur.peek() == &Tok::End {
        return Ok(Expr::All);
    }
    let e = p.or(0)?;
    match p.cur.peek() {
        Tok::End => Ok(e),
        Tok::Sym(")") => Err(p
            .cur
            .err("expected 'and', 'or' or end of filter (this ')' closes nothing)")),
        _ => Err(p.cur.err("expected 'and', 'or' or end of filter")),
    }
}

impl Parser<'_> {
    fn or(&mut self, depth: u32) -> Result<Expr, ParseError> {
        let mut items = vec![self.and(depth)?];
        while self.cur.peek() == &Tok::Kw("or") {
            self.cur.take();
            items.push(self.and(depth)?);
        }
        Ok(flatten(items, true))
    }

    fn and(&mut self, depth: u32) -> Result<Expr, ParseError> {
        let mut items = vec![self.unary(depth)?];
        while self.cur.peek() == &Tok::Kw("and") {
            self.cur.take();
            items.push(self.unary(depth)?);
        }
        Ok(flatten(items, false))
    }

    fn unary(&mut self, depth: u32) -> Result<Expr, ParseError> {
        match self.cur.peek() {
            Tok::Kw("not") | Tok::Sym("(") if depth >= self.limits.max_depth => {
                let col = self.cur.col();
                Err(ParseError::new(
                    col,
                    format!(
                        "filter nests deeper than {} levels of 'not' and '('",
                        self.limits.max_depth
                    ),
                ))
            }
            Tok::Kw("not") => {
                self.cur.take();
                Ok(Expr::Not(Box::new(self.unary(depth + 1)?)))
            }
            Tok::Sym("(") => {
                let open = self.cur.take().col;
                let e = self.or(depth + 1)?;
                if self.cur.peek() != &Tok::Sym(")") {
                    return Err(self.cur.err(&format!("expected ')' to close the '(' at {open}")));
                }
                self.cur.take();
                Ok(e)
            }
            _ => self.comparison(),
        }
    }

    fn comparison(&mut self) -> Result<Expr, ParseError> {
        let field = match self.cur.peek() {
            Tok::Ident(s) | Tok::Str(s) => s.clone(),
            _ => return Err(self.cur.err("expected a field name, 'not' or '('")),
        };
        self.cur.take();
        let op_tok = self.cur.peek().clone();
        let op = match op_tok {
            Tok::Sym("=") => Op::Eq,
            Tok::Sym("!=") => Op::Ne,
            Tok::Sym("<") => Op::Lt,
            Tok::Sym("<=") => Op::Le,
            Tok::Sym(">") => Op::Gt,
            Tok::Sym(">=") => Op::Ge,
            Tok::Sym("~=") => Op::IEq,
            Tok::Kw("contains") => Op::Contains,
            Tok::Kw("startswith") => Op::StartsWith,
            Tok::Kw("icontains") => Op::IContains,
            Tok::Kw("in") => {
                self.cur.take();
                return self.in_list(field);
            }
            _ => {
                return Err(self.cur.err(&format!(
                    "expected an operator (= != < <= > >= ~= contains startsWith icontains in) after field '{field}'"
                )))
            }
        };
        self.cur.take();
        let after = op.as_str();
        if op.string_only() {
            return match self.cur.peek().clone() {
                Tok::Str(s) => {
                    self.cur.take();
                    Ok(Expr::Cmp {
                        field,
                        op,
                        value: Literal::Str(s),
                    })
                }
                _ => Err(self.cur.err(&format!("expected a quoted string after '{after}'"))),
            };
        }
        let value = self.literal(&format!("expected a value after '{after}'"))?;
        Ok(Expr::Cmp { field, op, value })
    }

    fn literal(&mut self, expected: &str) -> Result<Literal, ParseError> {
        let lit = match self.cur.peek() {
            Tok::Num(n) => Literal::Num(*n),
            Tok::Str(s) => Literal::Str(s.clone()),
            Tok::Time(ms) => Literal::Time(*ms),
            Tok::Kw("true") => Literal::Bool(true),
            Tok::Kw("false") => Literal::Bool(false),
            _ => return Err(self.cur.err(expected)),
        };
        self.cur.take();
        Ok(lit)
    }

    fn in_list(&mut self, field: String) -> Result<Expr, ParseError> {
        if self.cur.peek() != &Tok::Sym("(") {
            return Err(self.cur.err("expected '(' after 'in'"));
        }
        self.cur.take();
        let mut values = vec![self.literal("expected a value in the 'in' list")?];
        loop {
            match self.cur.peek() {
                Tok::Sym(",") => {
                    self.cur.take();
                    if values.len() >= self.limits.max_in_values {
                        return Err(ParseError::new(
                            self.cur.col(),
                            format!("an 'in' list holds at most {} values", self.limits.max_in_values),
                        ));
                    }
                    values.push(self.literal("expected a value in the 'in' list")?);
                }
                Tok::Sym(")") => {
                    self.cur.take();
                    break;
                }
                _ => return Err(self.cur.err("expected ',' or ')' in the 'in' list")),
            }
        }
        let mut keyed: Vec<(String, Literal)> = values.into_iter().map(|v| (literal_text(&v), v)).collect();
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
        keyed.dedup_by(|a, b| a.0 == b.0);
        Ok(Expr::In {
            field,
            values: keyed.into_iter().map(|(_, v)| v).collect(),
        })
    }
}

fn flatten(mut items: Vec<Expr>, or: bool) -> Expr {
    if items.len() == 1 {
        return items.pop().expect("one item");
    }
    let mut out = Vec::with_capacity(items.len());
    for e in items {
        match e {
            Expr::Or(inner) if or => out.extend(inner),
            Expr::And(inner) if !or => out.extend(inner),
            e => out.push(e),
        }
    }
    if or {
        Expr::Or(out)
    } else {
        Expr::And(out)
    }
}

/// A field name as canonical text: bare if it lexes as an identifier, else double-quoted.
pub fn field_text(name: &str) -> String {
    let mut chars = name.chars();
    let bare = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        && keyword(name).is_none();
    if bare {
        name.to_owned()
    } else {
        quote(name)
    }
}

fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// A literal as canonical text (numbers as JavaScript prints them, timestamps as ISO).
pub fn literal_text(v: &Literal) -> String {
    match v {
        Literal::Num(n) => ryu_js::Buffer::new().format(*n).to_owned(),
        Literal::Str(s) => quote(s),
        Literal::Time(ms) => format_iso(*ms),
        Literal::Bool(b) => b.to_string(),
    }
}

impl std::fmt::Display for Expr {
    /// Canonical text: single spaces, lower-case keywords, `startsWith`, double-quoted strings,
    /// parentheses only where precedence needs them. Equal filters print equal.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expr::All => Ok(()),
            Expr::And(items) | Expr::Or(items) => {
                let sep = if matches!(self, Expr::And(_)) { " and " } else { " or " };
                for (i, e) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(sep)?;
                    }
                    if matches!(e, Expr::Or(_)) && matches!(self, Expr::And(_)) {
                        write!(f, "({e})")?;
                    } else {
                        write!(f, "{e}")?;
                    }
                }
                Ok(())
            }
            Expr::Not(e) => match **e {
                Expr::And(_) | Expr::Or(_) => write!(f, "not ({e})"),
                _ => write!(f, "not {e}"),
            },
            Expr::Cmp { field, op, value } => {
                write!(f, "{} {} {}", field_text(field), op.as_str(), literal_text(value))
            }
            Expr::In { field, values } => {
                write!(f, "{} in (", field_text(field))?;
                for (i, v) in values.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    f.write_str(&literal_text(v))?;
                }
                f.write_str(")")
            }
        }
    }
}
