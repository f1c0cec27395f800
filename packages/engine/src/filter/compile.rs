//! A parsed filter compiled for evaluation: field names resolved to field ids, literals pre-typed,
//! `in` lists split by type. A missing field (or one of another type) makes a comparison false.

use std::cmp::Ordering;

use super::parser::{Expr, Literal, Op};
use crate::value::Value;

/// Read access to one record's fields by interned field id.
pub trait Row {
    /// The current value of field `field`, `None` if absent or deleted.
    fn get(&self, field: u32) -> Option<&Value>;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rel {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Rel {
    #[inline]
    fn holds(self, o: Ordering) -> bool {
        match self {
            Rel::Eq => o == Ordering::Equal,
            Rel::Ne => o != Ordering::Equal,
            Rel::Lt => o == Ordering::Less,
            Rel::Le => o != Ordering::Greater,
            Rel::Gt => o == Ordering::Greater,
            Rel::Ge => o != Ordering::Less,
        }
    }
}

#[derive(Debug, Clone)]
enum Node {
    True,
    And(Box<[Node]>),
    Or(Box<[Node]>),
    Not(Box<Node>),
    /// Number or timestamp field vs a number/timestamp literal (epoch ms).
    Num {
        field: u32,
        rel: Rel,
        n: f64,
    },
    /// `field >(=) lo and field <(=) hi` merged: one field read, two compares.
    Range {
        field: u32,
        lo: f64,
        lo_incl: bool,
        hi: f64,
        hi_incl: bool,
    },
    /// String field vs string literal, byte order.
    Str {
        field: u32,
        rel: Rel,
        s: Box<str>,
    },
    /// Bool field vs bool literal (false < true).
    Bool {
        field: u32,
        rel: Rel,
        b: bool,
    },
    /// `~=`: the literal is pre-lowercased.
    IEq {
        field: u32,
        lower: Box<str>,
    },
    Contains {
        field: u32,
        s: Box<str>,
    },
    StartsWith {
        field: u32,
        s: Box<str>,
    },
    /// `icontains`: the literal is pre-lowercased.
    IContains {
        field: u32,
        lower: Box<str>,
    },
    /// `in`: numeric values sorted; strings sorted; bools as a 2-bit set.
    In {
        field: u32,
        nums: Box<[f64]>,
        strs: Box<[Box<str>]>,
        bools: u8,
    },
}

/// A compiled filter: evaluate with [`Filter::matches`]; [`Filter::fields`] lists the field ids it reads.
#[derive(Debug, Clone)]
pub struct Filter {
    root: Node,
    fields: Vec<u32>,
}

impl Filter {
    /// Compiles `expr`, resolving each field name to its id with `field_id` (e.g. the store's field interner).
    pub fn compile(expr: &Expr, field_id: &mut dyn FnMut(&str) -> u32) -> Filter {
        let mut fields = Vec::new();
        let root = node(expr, field_id, &mut fields);
        fields.sort_unstable();
        fields.dedup();
        Filter { root, fields }
    }

    /// Field ids read by the filter, sorted, without duplicates (empty for the match-all filter).
    pub fn fields(&self) -> &[u32] {
        &self.fields
    }

    /// True when the filter matches every row (the empty filter).
    pub fn is_all(&self) -> bool {
        matches!(self.root, Node::True)
    }

    /// Whether `row` passes the filter.
    #[inline]
    pub fn matches<R: Row + ?Sized>(&self, row: &R) -> bool {
        // The common single-range / single-comparison shapes without the recursive call.
        match &self.root {
            Node::Range {
                field,
                lo,
                lo_incl,
                hi,
                hi_incl,
            } => in_range(row.get(*field), *lo, *lo_incl, *hi, *hi_incl),
            Node::Num { field, rel, n } => num_holds(row.get(*field), *rel, *n),
            root => eval(root, row),
        }
    }
}

/// One operand of a filter's top-level `and`, as a column scan sees it: a numeric test on one
/// field, a string equality on one field (resolved to an interned symbol by the scan), or any
/// other predicate (evaluated row by row). A conjunction's operands may run in any order.
#[derive(Debug, Clone, Copy)]
pub enum Conjunct<'a> {
    /// A number/timestamp comparison or range on `field`: see [`Conjunct::test`].
    Numeric {
        /// Field id.
        field: u32,
        /// The node (a `Num` or `Range`).
        node: Pred<'a>,
    },
    /// `field = 'text'`: true exactly when the field is a string with these bytes.
    StrEq {
        /// Field id.
        field: u32,
        /// The literal.
        text: &'a str,
    },
    /// Anything else.
    Other(Pred<'a>),
}

/// A compiled predicate (part of a [`Filter`]), evaluated against a row.
#[derive(Debug, Clone, Copy)]
pub struct Pred<'a>(&'a Node);

impl Pred<'_> {
    /// Whether `row` passes this predicate.
    #[inline]
    pub fn matches<R: Row + ?Sized>(&self, row: &R) -> bool {
        eval(self.0, row)
    }

    /// Whether a field value `v` passes a single-field numeric predicate (`Numeric` conjuncts);
    /// false for any other predicate.
    #[inline]
    pub fn test(&self, v: Option<&Value>) -> bool {
        match *self.0 {
            Node::Num { rel, n, .. } => num_holds(v, rel, n),
            Node::Range {
                lo,
                lo_incl,
                hi,
                hi_incl,
                ..
            } => in_range(v, lo, lo_incl, hi, hi_incl),
            _ => false,
        }
    }
}

impl Pred<'_> {
    /// The numbers a single-field numeric predicate (`Numeric` conjuncts) accepts as one closed
    /// interval `[lo, hi]` (exclusive bounds moved to the next representable double), so a column
    /// scan tests `x >= lo && x <= hi` per row, which is false for NaN (a non-numeric cell) just
    /// as the predicate is false for a missing or non-numeric field. `None` for `!=` (two
    /// intervals) and for any other predicate: use [`Pred::test`].
    pub fn num_range(&self) -> Option<(f64, f64)> {
        let (lo, lo_incl, hi, hi_incl) = match *self.0 {
            Node::Num { rel, n, .. } => match rel {
                Rel::Eq => (n, true, n, true),
                Rel::Ne => return None,
                Rel::Lt => (f64::NEG_INFINITY, true, n, false),
                Rel::Le => (f64::NEG_INFINITY, true, n, true),
                Rel::Gt => (n, false, f64::INFINITY, true),
                Rel::Ge => (n, true, f64::INFINITY, true),
            },
            Node::Range {
                lo,
                lo_incl,
                hi,
                hi_incl,
                ..
            } => (lo, lo_incl, hi, hi_incl),
            _ => return None,
        };
        Some((
            if lo_incl { lo } else { lo.next_up() },
            if hi_incl { hi } else { hi.next_down() },
        ))
    }
}

impl Filter {
    /// The operands of the top-level `and` (one for any other root; none for the match-all
    /// filter): a row passes when it passes all of them.
    pub fn conjuncts(&self) -> Vec<Conjunct<'_>> {
        fn one(n: &Node) -> Conjunct<'_> {
            match n {
                Node::Num { field, .. } | Node::Range { field, .. } => Conjunct::Numeric {
                    field: *field,
                    node: Pred(n),
                },
                Node::Str { field, rel: Rel::Eq, s } => Conjunct::StrEq { field: *field, text: s },
                n => Conjunct::Other(Pred(n)),
            }
        }
        match &self.root {
            Node::True => Vec::new(),
            Node::And(items) => items.iter().map(one).collect(),
            n => vec![one(n)],
        }
    }
}

fn rel(op: Op) -> Rel {
    match op {
        Op::Eq => Rel::Eq,
        Op::Ne => Rel::Ne,
        Op::Lt => Rel::Lt,
        Op::Le => Rel::Le,
        Op::Gt => Rel::Gt,
        _ => Rel::Ge,
    }
}

fn node(e: &Expr, field_id: &mut dyn FnMut(&str) -> u32, fields: &mut Vec<u32>) -> Node {
    let mut id = |name: &str, fields: &mut Vec<u32>| {
        let f = field_id(name);
        fields.push(f);
        f
    };
    match e {
        Expr::All => Node::True,
        Expr::And(items) => {
            let nodes = merge_ranges(items.iter().map(|e| node(e, field_id, fields)).collect());
            if nodes.len() == 1 {
                nodes.into_iter().next().expect("one node")
            } else {
                Node::And(nodes.into())
            }
        }
        Expr::Or(items) => Node::Or(items.iter().map(|e| node(e, field_id, fields)).collect()),
        Expr::Not(e) => Node::Not(Box::new(node(e, field_id, fields))),
        Expr::Cmp { field, op, value } => {
            let field = id(field, fields);
            match (op, value) {
                (Op::IEq, Literal::Str(s)) => Node::IEq {
                    field,
                    lower: s.to_lowercase().into(),
                },
                (Op::Contains, Literal::Str(s)) => Node::Contains {
                    field,
                    s: s.as_str().into(),
                },
                (Op::StartsWith, Literal::Str(s)) => Node::StartsWith {
                    field,
                    s: s.as_str().into(),
                },
                (Op::IContains, Literal::Str(s)) => Node::IContains {
                    field,
                    lower: s.to_lowercase().into(),
                },
                (_, Literal::Num(n)) => Node::Num {
                    field,
                    rel: rel(*op),
                    n: *n,
                },
                (_, Literal::Time(ms)) => Node::Num {
                    field,
                    rel: rel(*op),
                    n: *ms as f64,
                },
                (_, Literal::Str(s)) => Node::Str {
                    field,
                    rel: rel(*op),
                    s: s.as_str().into(),
                },
                (_, Literal::Bool(b)) => Node::Bool {
                    field,
                    rel: rel(*op),
                    b: *b,
                },
            }
        }
        Expr::In { field, values } => {
            let field = id(field, fields);
            let mut nums = Vec::new();
            let mut strs = Vec::new();
            let mut bools = 0u8;
            for v in values {
                match v {
                    Literal::Num(n) => nums.push(*n),
                    Literal::Time(ms) => nums.push(*ms as f64),
                    Literal::Str(s) => strs.push(Box::<str>::from(s.as_str())),
                    Literal::Bool(b) => bools |= 1 << (*b as u8),
                }
            }
            nums.sort_by(f64::total_cmp);
            nums.dedup();
            strs.sort();
            strs.dedup();
            Node::In {
                field,
                nums: nums.into(),
                strs: strs.into(),
                bools,
            }
        }
    }
}

/// Merges one lower and one upper numeric bound on the same field (`and` operands) into a
/// `Range`; order of evaluation is otherwise kept.
fn merge_ranges(mut nodes: Vec<Node>) -> Vec<Node> {
    let mut i = 0;
    while i < nodes.len() {
        if let Node::Num { field, rel, n } = nodes[i] {
            let lower = matches!(rel, Rel::Gt | Rel::Ge);
            let upper = matches!(rel, Rel::Lt | Rel::Le);
            let partner = nodes.iter().enumerate().skip(i + 1).find_map(|(j, m)| match *m {
                Node::Num { field: f, rel: r, n: m }
                    if f == field
                        && ((lower && matches!(r, Rel::Lt | Rel::Le)) || (upper && matches!(r, Rel::Gt | Rel::Ge))) =>
                {
                    Some((j, r, m))
                }
                _ => None,
            });
            if let Some((j, r, m)) = partner {
                let (lo, lo_incl, hi, hi_incl) = if lower {
                    (n, rel == Rel::Ge, m, r == Rel::Le)
                } else {
                    (m, r == Rel::Ge, n, rel == Rel::Le)
                };
                nodes.remove(j);
                nodes[i] = Node::Range {
                    field,
                    lo,
                    lo_incl,
                    hi,
                    hi_incl,
                };
            }
        }
        i += 1;
    }
    nodes
}

#[inline(always)]
fn in_range(v: Option<&Value>, lo: f64, lo_incl: bool, hi: f64, hi_incl: bool) -> bool {
    match v.and_then(num_of) {
        Some(x) => (if lo_incl { x >= lo } else { x > lo }) && (if hi_incl { x <= hi } else { x < hi }),
        None => false,
    }
}

#[inline(always)]
fn num_holds(v: Option<&Value>, rel: Rel, n: f64) -> bool {
    match v.and_then(num_of) {
        Some(x) => x.partial_cmp(&n).is_some_and(|o| rel.holds(o)),
        None => false,
    }
}

#[inline]
fn num_of(v: &Value) -> Option<f64> {
    match v {
        Value::Number(x) => Some(*x),
        Value::Timestamp(t) => Some(*t as f64),
        _ => None,
    }
}

fn eval<R: Row + ?Sized>(n: &Node, row: &R) -> bool {
    match n {
        Node::True => true,
        Node::And(items) => items.iter().all(|n| eval(n, row)),
        Node::Or(items) => items.iter().any(|n| eval(n, row)),
        Node::Not(n) => !eval(n, row),
        Node::Num { field, rel, n } => num_holds(row.get(*field), *rel, *n),
        Node::Range {
            field,
            lo,
            lo_incl,
            hi,
            hi_incl,
        } => in_range(row.get(*field), *lo, *lo_incl, *hi, *hi_incl),
        Node::Str { field, rel, s } => match row.get(*field) {
            Some(Value::Str(v)) => rel.holds(v.as_bytes().cmp(s.as_bytes())),
            _ => false,
        },
        Node::Bool { field, rel, b } => match row.get(*field) {
            Some(Value::Bool(v)) => rel.holds(v.cmp(b)),
            _ => false,
        },
        Node::IEq { field, lower } => match row.get(*field) {
            Some(Value::Str(v)) => lower_eq(v, lower),
            _ => false,
        },
        Node::Contains { field, s } => match row.get(*field) {
            Some(Value::Str(v)) => v.contains(&**s),
            _ => false,
        },
        Node::StartsWith { field, s } => match row.get(*field) {
            Some(Value::Str(v)) => v.starts_with(&**s),
            _ => false,
        },
        Node::IContains { field, lower } => match row.get(*field) {
            Some(Value::Str(v)) => lower_contains(v, lower),
            _ => false,
        },
        Node::In {
            field,
            nums,
            strs,
            bools,
        } => match row.get(*field) {
            Some(Value::Str(v)) => strs.binary_search_by(|s| s.as_bytes().cmp(v.as_bytes())).is_ok(),
            Some(Value::Bool(b)) => bools & (1 << (*b as u8)) != 0,
            Some(v) => num_of(v).is_some_and(|x| nums.binary_search_by(|n| n.total_cmp(&x)).is_ok()),
            None => false,
        },
    }
}

/// `v` lower-cased equals `lower` (already lower-case), without allocating for ASCII text.
fn lower_eq(v: &str, lower: &str) -> bool {
    if v.is_ascii() {
        v.len() == lower.len() && v.bytes().zip(lower.bytes()).all(|(a, b)| a.to_ascii_lowercase() == b)
    } else {
        v.to_lowercase() == lower
    }
}

/// `v` lower-cased contains `lower` (already lower-case), without allocating for ASCII text.
fn lower_contains(v: &str, lower: &str) -> bool {
    if lower.is_empty() {
        return true;
    }
    if v.is_ascii() && lower.is_ascii() {
        let (v, n) = (v.as_bytes(), lower.as_bytes());
        v.len() >= n.len()
            && v.windows(n.len())
                .any(|w| w.iter().zip(n).all(|(a, b)| a.to_ascii_lowercase() == *b))
    } else {
        v.to_lowercase().contains(lower)
    }
}
