//! Filter/sort text -> tokens, each with its 1-based column (in characters) and byte offset.

use super::time::parse_iso;
use super::tokens::{quoted, Describe};
use super::ParseError;

/// A token kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// A bare field name: `[A-Za-z_][A-Za-z0-9_.]*` that is not a keyword.
    Ident(String),
    /// A quoted string (`"..."` or `'...'`, backslash escapes the next character).
    Str(String),
    /// A finite number literal.
    Num(f64),
    /// A timestamp literal (`2030-01-01`, `2030-01-01T12:00:00Z`), epoch ms.
    Time(i64),
    /// An operator or punctuation: `= != < <= > >= ~= ( ) ,`.
    Sym(&'static str),
    /// A keyword (lower-cased canonical spelling): `and or not in contains startswith icontains true false asc desc`.
    Kw(&'static str),
    /// End of the text.
    End,
}

/// A filter or sort token and where it starts.
pub type Token = super::tokens::Token<Tok>;

const KEYWORDS: [&str; 11] = [
    "and",
    "or",
    "not",
    "in",
    "contains",
    "startswith",
    "icontains",
    "true",
    "false",
    "asc",
    "desc",
];

/// The keyword `word` spells (case-insensitive), if any.
pub fn keyword(word: &str) -> Option<&'static str> {
    KEYWORDS.iter().copied().find(|k| k.eq_ignore_ascii_case(word))
}

impl Describe for Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("field '{s}'"),
            Tok::Str(s) => format!("string \"{s}\""),
            Tok::Num(n) => format!("number {n}"),
            Tok::Time(ms) => format!("timestamp {}", super::time::format_iso(*ms)),
            Tok::Sym(s) => format!("'{s}'"),
            Tok::Kw(k) => format!("'{}'", if *k == "startswith" { "startsWith" } else { k }),
            Tok::End => "end of filter".into(),
        }
    }
}

/// Splits `text` into tokens ending with `Tok::End`. Errors name the column of the bad character.
pub fn tokenize(text: &str) -> Result<Vec<Token>, ParseError> {
    let chars: Vec<char> = text.chars().collect();
    // byte offset of each character, and of the end
    let mut offsets: Vec<usize> = text.char_indices().map(|(b, _)| b).collect();
    offsets.push(text.len());
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let col = i as u32 + 1;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
        let sym = match two.as_str() {
            "!=" => Some("!="),
            "<=" => Some("<="),
            ">=" => Some(">="),
            "~=" => Some("~="),
            _ => None,
        };
        if let Some(s) = sym {
            out.push(Token {
                tok: Tok::Sym(s),
                col,
                at: offsets[i],
            });
            i += 2;
            continue;
        }
        let one = match c {
            '=' => Some("="),
            '<' => Some("<"),
            '>' => Some(">"),
            '(' => Some("("),
            ')' => Some(")"),
            ',' => Some(","),
            _ => None,
        };
        if let Some(s) = one {
            out.push(Token {
                tok: Tok::Sym(s),
                col,
                at: offsets[i],
            });
            i += 1;
            continue;
        }
        if c == '"' || c == '\'' {
            let (s, after) = quoted(|k| chars.get(k).copied(), i)?;
            out.push(Token {
                tok: Tok::Str(s),
                col,
                at: offsets[i],
            });
            i = after;
            continue;
        }
        if c.is_ascii_digit() || (c == '-' && chars.get(i + 1).is_some_and(char::is_ascii_digit)) {
            let mut j = i + 1;
            while j < chars.len() && (chars[j].is_ascii_alphanumeric() || matches!(chars[j], '.' | ':' | '-' | '+')) {
                // A sign only continues a number after an exponent or inside a date/time.
                if matches!(chars[j], '-' | '+')
                    && !matches!(chars[j - 1], 'e' | 'E')
                    && !looks_like_date(&chars[i..=j])
                {
                    break;
                }
                j += 1;
            }
            let word: String = chars[i..j].iter().collect();
            let tok = if looks_like_date(&chars[i..j]) {
                match parse_iso(&word) {
                    Some(ms) => Tok::Time(ms),
                    None => {
                        return Err(ParseError::new(
                            col,
                            format!("expected a timestamp like 2030-01-01 or 2030-01-01T12:00:00Z, found '{word}'"),
                        ))
                    }
                }
            } else {
                match word.parse::<f64>() {
                    Ok(n)
                        if n.is_finite()
                            && !word.contains(|ch: char| ch.is_ascii_alphabetic() && ch != 'e' && ch != 'E') =>
                    {
                        Tok::Num(n)
                    }
                    _ => return Err(ParseError::new(col, format!("expected a number, found '{word}'"))),
                }
            };
            out.push(Token {
                tok,
                col,
                at: offsets[i],
            });
            i = j;
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' {
            let mut j = i + 1;
            while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '_' || chars[j] == '.') {
                j += 1;
            }
            let word: String = chars[i..j].iter().collect();
            let tok = match keyword(&word) {
                Some(k) => Tok::Kw(k),
                None => Tok::Ident(word),
            };
            out.push(Token {
                tok,
                col,
                at: offsets[i],
            });
            i = j;
            continue;
        }
        return Err(ParseError::new(col, format!("unexpected character '{c}'")));
    }
    out.push(Token {
        tok: Tok::End,
        col: chars.len() as u32 + 1,
        at: text.len(),
    });
    Ok(out)
}

/// `dddd-` at the start: the word is meant as a date.
fn looks_like_date(w: &[char]) -> bool {
    w.len() >= 5 && w[..4].iter().all(char::is_ascii_digit) && w[4] == '-'
}
