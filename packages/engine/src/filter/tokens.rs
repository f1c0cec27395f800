//! What the filter, sort and statement languages share: a token with where it starts, a cursor
//! over a token list that ends with an end token, and the quoted-string rule.

use super::ParseError;

/// How a token kind reads in an error message ("found ...").
pub trait Describe {
    /// The token as the message names it, e.g. `'>='` or `end of filter`.
    fn describe(&self) -> String;
}

/// A token and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Token<T> {
    /// What it is.
    pub tok: T,
    /// 1-based character column of its first character.
    pub col: u32,
    /// Byte offset of its first character in the text.
    pub at: usize,
}

/// A parser's place in a token list. The list ends with an end token; reading past it keeps
/// returning that end token.
pub struct Cursor<T> {
    toks: Vec<Token<T>>,
    pos: usize,
}

impl<T: Clone + Describe> Cursor<T> {
    /// A cursor at the first of `toks`, which ends with the end token (so it is never empty).
    pub fn new(toks: Vec<Token<T>>) -> Self {
        debug_assert!(!toks.is_empty(), "a token list ends with its end token");
        Self { toks, pos: 0 }
    }

    /// The current token's kind.
    pub fn peek(&self) -> &T {
        &self.toks[self.pos].tok
    }

    /// The kind `ahead` tokens further on (the end token past the end).
    pub fn peek_at(&self, ahead: usize) -> &T {
        &self.toks[(self.pos + ahead).min(self.toks.len() - 1)].tok
    }

    /// The current token's column.
    pub fn col(&self) -> u32 {
        self.toks[self.pos].col
    }

    /// The current token's index (for `token` later).
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// The token at index `i` (an index `pos` returned).
    pub fn token(&self, i: usize) -> &Token<T> {
        &self.toks[i.min(self.toks.len() - 1)]
    }

    /// Takes the current token and moves on (staying on the end token).
    pub fn take(&mut self) -> Token<T> {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    /// An error at the current token: `{expected}, found {token}`.
    pub fn err(&self, expected: &str) -> ParseError {
        let t = &self.toks[self.pos];
        ParseError::new(t.col, format!("{expected}, found {}", t.tok.describe()))
    }
}

/// Reads the string whose opening quote (`"` or `'`) is character `open`, with `char_at(i)`
/// giving character `i` of the text. A backslash takes the next character as it is. Returns the
/// string and the index after its closing quote; errors name the column of the opening quote
/// (unterminated) or of the last backslash.
pub fn quoted(char_at: impl Fn(usize) -> Option<char>, open: usize) -> Result<(String, usize), ParseError> {
    let quote = char_at(open).unwrap_or('"');
    let mut s = String::new();
    let mut j = open + 1;
    loop {
        match char_at(j) {
            None => {
                return Err(ParseError::new(
                    open as u32 + 1,
                    format!("unterminated string: expected a closing {quote}"),
                ))
            }
            Some('\\') => match char_at(j + 1) {
                Some(e) => {
                    s.push(e);
                    j += 2;
                }
                None => {
                    return Err(ParseError::new(
                        j as u32 + 1,
                        "expected a character after '\\'".to_string(),
                    ))
                }
            },
            Some(q) if q == quote => return Ok((s, j + 1)),
            Some(o) => {
                s.push(o);
                j += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    enum K {
        A,
        End,
    }

    impl Describe for K {
        fn describe(&self) -> String {
            format!("{self:?}")
        }
    }

    #[test]
    fn the_cursor_stays_on_the_end_token() {
        let toks = vec![
            Token {
                tok: K::A,
                col: 1,
                at: 0,
            },
            Token {
                tok: K::End,
                col: 3,
                at: 2,
            },
        ];
        let mut c = Cursor::new(toks);
        assert_eq!((c.peek(), c.peek_at(5), c.col(), c.pos()), (&K::A, &K::End, 1, 0));
        assert_eq!(c.take().tok, K::A);
        assert_eq!(c.take().tok, K::End);
        assert_eq!((c.peek(), c.pos(), c.token(9).at), (&K::End, 1, 2));
        assert_eq!(c.err("expected A").to_string(), "at 3: expected A, found End");
    }

    #[test]
    fn quoted_strings_unescape_and_name_their_errors() {
        let read = |t: &str, open: usize| {
            let cs: Vec<char> = t.chars().collect();
            quoted(|i| cs.get(i).copied(), open).map_err(|e| e.to_string())
        };
        assert_eq!(read(r#"x "a\"b" y"#, 2), Ok((r#"a"b"#.to_string(), 8)));
        assert_eq!(read("'it''", 0), Ok(("it".to_string(), 4)));
        assert_eq!(
            read("é 'ü", 2),
            Err("at 3: unterminated string: expected a closing '".to_string())
        );
        assert_eq!(
            read(r#""ab\"#, 0),
            Err(r"at 4: expected a character after '\'".to_string())
        );
    }
}
