//! Parser, canonical text, evaluation and every parse error path.

use std::collections::HashMap;

use super::*;
use crate::value::Value;

struct MapRow(HashMap<u32, Value>);
impl Row for MapRow {
    fn get(&self, field: u32) -> Option<&Value> {
        self.0.get(&field)
    }
}

fn names() -> Vec<&'static str> {
    vec!["price", "name", "flag", "when", "Last Price", "qty"]
}

fn compile(text: &str) -> Filter {
    let e = parse(text, &FilterLimits::default()).unwrap();
    Filter::compile(&e, &mut |n| {
        names().iter().position(|x| *x == n).map_or(99, |i| i as u32)
    })
}

fn row() -> MapRow {
    MapRow(HashMap::from([
        (0, Value::Number(101.5)),
        (1, Value::Str("Vodafone Group".into())),
        (2, Value::Bool(true)),
        (3, Value::Timestamp(1_893_456_000_000 + 1000)),
        (4, Value::Number(7.0)),
    ]))
}

fn err(text: &str) -> String {
    parse(text, &FilterLimits::default()).unwrap_err().to_string()
}

#[test]
fn evaluates_every_operator() {
    let r = row();
    let cases = [
        ("price = 101.5", true),
        ("price != 101.5", false),
        ("price < 102", true),
        ("price <= 101.5", true),
        ("price > 101.5", false),
        ("price >= 101.5", true),
        ("name = \"Vodafone Group\"", true),
        ("name < 'W'", true),
        ("name > 'vodafone'", false),
        ("name ~= 'VODAFONE group'", true),
        ("name contains 'fone G'", true),
        ("name contains 'fone g'", false),
        ("name icontains 'FONE g'", true),
        ("name startsWith 'Voda'", true),
        ("name STARTSWITH 'oda'", false),
        ("flag = true", true),
        ("flag != true", false),
        ("flag > false", true),
        ("when > 2030-01-01", true),
        ("when > 2030-01-01T00:00:01Z", false),
        ("when = 1893456001000", true),
        ("price > 1970-01-01", true),
        ("\"Last Price\" = 7", true),
        ("price in (1, 101.5)", true),
        ("name in ('a', 'Vodafone Group')", true),
        ("flag in (false)", false),
        ("when in (2030-01-01T00:00:01Z)", true),
        ("price in ('101.5')", false),
        ("not price > 200 and (name contains 'x' or flag = true)", true),
        ("price > 200 or not (flag = true and name startsWith 'V')", false),
        ("", true),
        // Range merges (one lower and one upper bound on a field), in every direction.
        ("price > 101 and price < 102", true),
        ("price < 102 and price >= 101.5", true),
        ("price > 101.5 and price <= 200", false),
        ("price >= 0 and price < 101.5", false),
        ("price <= 101.5 and name startsWith 'V' and price >= 101.5", true),
        ("qty > 0 and qty < 9", false),
        // Missing fields and type mismatches: every comparison is false, `!=` too.
        ("qty = 1", false),
        ("qty != 1", false),
        ("not qty = 1", true),
        ("name > 5", false),
        ("name != 5", false),
        ("price contains '1'", false),
        ("qty in (1)", false),
    ];
    for (text, want) in cases {
        assert_eq!(compile(text).matches(&r), want, "{text}");
    }
}

#[test]
fn fields_read_and_precedence() {
    let f = compile("name = 'a' or price > 1 and when < 2030-01-01 or name = 'b'");
    assert_eq!(f.fields(), &[0, 1, 3]);
    assert!(compile("").is_all());
    // `and` binds tighter than `or`.
    let e = parse("a = 1 or b = 2 and c = 3", &FilterLimits::default()).unwrap();
    assert!(matches!(&e, Expr::Or(items) if matches!(items[1], Expr::And(_))));
}

#[test]
fn canonical_text_is_normalised() {
    let pairs = [
        (
            "  price>=10  AND  Name CONTAINS \"x\" ",
            "price >= 10 and Name contains \"x\"",
        ),
        (
            "(a = 1 or (b = 2 or c = 3)) and d = 'q'",
            "(a = 1 or b = 2 or c = 3) and d = \"q\"",
        ),
        ("not (a = 1 and b = 2)", "not (a = 1 and b = 2)"),
        ("not not a = 1.50", "not not a = 1.5"),
        ("a in (3, 1, 2, 1)", "a in (1, 2, 3)"),
        (
            "'and' = 1 and \"x y\" startswith 'a\\'b'",
            "\"and\" = 1 and \"x y\" startsWith \"a'b\"",
        ),
        (
            "t > 2030-01-01T00:00:00Z and u < 2030-01-01T12:00:00+01:00",
            "t > 2030-01-01 and u < 2030-01-01T11:00:00Z",
        ),
        (
            "x = 1e3 and y = -0.5 and z = TRUE",
            "x = 1000 and y = -0.5 and z = true",
        ),
        ("a ~= 'X' or b icontains 'Y'", "a ~= \"X\" or b icontains \"Y\""),
    ];
    for (text, canon) in pairs {
        let e = parse(text, &FilterLimits::default()).unwrap();
        assert_eq!(e.to_string(), canon, "{text}");
        // The canonical text parses back to the same tree.
        assert_eq!(parse(canon, &FilterLimits::default()).unwrap(), e, "{canon}");
    }
}

#[test]
fn every_parse_error_names_column_and_expectation() {
    let cases = [
        ("price >= ", "at 10: expected a value after '>=', found end of filter"),
        ("price >= 10 and", "at 16: expected a field name, 'not' or '(', found end of filter"),
        ("= 3", "at 1: expected a field name, 'not' or '(', found '='"),
        ("price 10", "at 7: expected an operator (= != < <= > >= ~= contains startsWith icontains in) after field 'price', found number 10"),
        ("name contains 5", "at 15: expected a quoted string after 'contains', found number 5"),
        ("name ~= true", "at 9: expected a quoted string after '~=', found 'true'"),
        ("(a = 1", "at 7: expected ')' to close the '(' at 1, found end of filter"),
        ("a = 1)", "at 6: expected 'and', 'or' or end of filter (this ')' closes nothing), found ')'"),
        ("a = 1 b = 2", "at 7: expected 'and', 'or' or end of filter, found field 'b'"),
        ("a in 1", "at 6: expected '(' after 'in', found number 1"),
        ("a in ()", "at 7: expected a value in the 'in' list, found ')'"),
        ("a in (1,)", "at 9: expected a value in the 'in' list, found ')'"),
        ("a in (1 2)", "at 9: expected ',' or ')' in the 'in' list, found number 2"),
        ("a = b", "at 5: expected a value after '=', found field 'b'"),
        ("a = 'abc", "at 5: unterminated string: expected a closing '"),
        ("a = \"x\\", "at 7: expected a character after '\\'"),
        ("a = 1 # b", "at 7: unexpected character '#'"),
        ("a = 2030-13-01", "at 5: expected a timestamp like 2030-01-01 or 2030-01-01T12:00:00Z, found '2030-13-01'"),
        ("a = 12abc", "at 5: expected a number, found '12abc'"),
        ("a = 1e999", "at 5: expected a number, found '1e999'"),
        ("not", "at 4: expected a field name, 'not' or '(', found end of filter"),
        ("a = 1 and or", "at 11: expected a field name, 'not' or '(', found 'or'"),
        ("é = 1", "at 1: unexpected character 'é'"),
    ];
    for (text, want) in cases {
        assert_eq!(err(text), want, "{text}");
    }
}

#[test]
fn limits_bound_length_depth_and_lists() {
    let limits = FilterLimits {
        max_len: 20,
        max_depth: 3,
        max_in_values: 3,
    };
    let e = parse("price > 1 and price < 1000", &limits).unwrap_err();
    assert_eq!(e.to_string(), "at 21: filter is 26 bytes long; at most 20 are allowed");
    assert!(parse("(((a = 1)))", &limits).is_ok());
    assert_eq!(
        parse("((not (a = 1)))", &limits).unwrap_err().to_string(),
        "at 7: filter nests deeper than 3 levels of 'not' and '('"
    );
    assert_eq!(
        parse("a in (1,2,3,4)", &limits).unwrap_err().to_string(),
        "at 13: an 'in' list holds at most 3 values"
    );
    // Deep nesting under the default limit is refused without recursion trouble.
    let deep = "(".repeat(10_000) + "a = 1" + &")".repeat(10_000);
    let e = parse(
        &deep,
        &FilterLimits {
            max_len: 1 << 20,
            ..FilterLimits::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.column, 33);
    let err = e.into_engine_error("filter");
    assert_eq!(err.code(), crate::ErrorCode::BadRequest);
    assert_eq!(err.field(), Some("filter"));
}

#[test]
fn num_range_accepts_exactly_what_the_predicate_accepts() {
    let texts = [
        "price = 2",
        "price != 2",
        "price < 2",
        "price <= 2",
        "price > 2",
        "price >= 2",
        "price > 1 and price < 3",
        "price >= 1 and price <= 3",
        "price > 1 and price <= 3",
        "price >= -0.5 and price < 0.5",
    ];
    let xs = [
        f64::NEG_INFINITY,
        -1.0,
        -0.5,
        -0.0,
        0.0,
        0.5,
        1.0,
        1.0f64.next_up(),
        2.0f64.next_down(),
        2.0,
        2.0f64.next_up(),
        3.0f64.next_down(),
        3.0,
        4.0,
        f64::MAX,
        f64::NAN,
    ];
    for t in texts {
        let f = compile(t);
        let conj = f.conjuncts();
        let [Conjunct::Numeric { node, .. }] = conj[..] else {
            panic!("{t}: one numeric conjunct expected");
        };
        match node.num_range() {
            None => assert_eq!(t, "price != 2", "only != has no single interval"),
            Some((lo, hi)) => {
                for x in xs {
                    let v = Value::Number(x);
                    let by_range = x >= lo && x <= hi;
                    assert_eq!(by_range, node.test(Some(&v)), "{t} at {x}");
                }
            }
        }
        assert!(!node.test(None), "{t}: a missing field fails");
    }
}
