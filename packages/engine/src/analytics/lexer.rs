//! Statement text -> tokens, each with its 1-based column (in characters) and byte offset.
//!
//! The lexer never interprets the `where` clause: the parser hands that clause's text to the
//! filter language (`crate::filter`), so here any character the filter language uses only has to
//! survive as a token (strings are lexed whole so a quoted `group by` does not end the clause).

use crate::filter::tokens::{quoted, Describe};
use crate::filter::ParseError;

/// A token kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// A bare word: `[A-Za-z_][A-Za-z0-9_.]*` (keywords are words; the parser compares them
    /// case-insensitively).
    Word(String),
    /// A number as written: `[0-9][0-9.]*` (the parser decides what it must be).
    Num(String),
    /// A quoted string (`"..."` or `'...'`, backslash escapes the next character).
    Str(String),
    /// A subject or subject pattern: `/` followed by anything up to whitespace, `(`, `)` or `,`.
    Subject(String),
    /// Any other single character (`*`, `(`, `)`, `,`, and the filter language's operators).
    Sym(char),
    /// End of the text.
    End,
}

/// A statement token and where it starts.
pub type Token = crate::filter::tokens::Token<Tok>;

impl Describe for Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Word(s) => format!("'{s}'"),
            Tok::Num(s) => format!("number {s}"),
            Tok::Str(s) => format!("string \"{s}\""),
            Tok::Subject(s) => format!("subject '{s}'"),
            Tok::Sym(c) => format!("'{c}'"),
            Tok::End => "end of statement".into(),
        }
    }
}

impl Tok {
    /// True when the token is the word `kw` (ASCII case-insensitive).
    pub fn is_kw(&self, kw: &str) -> bool {
        matches!(self, Tok::Word(w) if w.eq_ignore_ascii_case(kw))
    }
}

/// Splits `text` into tokens ending with `Tok::End`. The only error is an unterminated string.
pub fn tokenize(text: &str) -> Result<Vec<Token>, ParseError> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let at = |i: usize| chars.get(i).map_or(text.len(), |&(b, _)| b);
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i].1;
        let col = i as u32 + 1;
        let start = at(i);
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        let tok = if c == '"' || c == '\'' {
            let (s, after) = quoted(|k| chars.get(k).map(|&(_, ch)| ch), i)?;
            j = after;
            Tok::Str(s)
        } else if c.is_ascii_digit() {
            while chars.get(j).is_some_and(|&(_, ch)| ch.is_ascii_digit() || ch == '.') {
                j += 1;
            }
            Tok::Num(text[start..at(j)].to_owned())
        } else if c.is_ascii_alphabetic() || c == '_' {
            while chars
                .get(j)
                .is_some_and(|&(_, ch)| ch.is_ascii_alphanumeric() || ch == '_' || ch == '.')
            {
                j += 1;
            }
            Tok::Word(text[start..at(j)].to_owned())
        } else if c == '/' {
            while chars
                .get(j)
                .is_some_and(|&(_, ch)| !ch.is_whitespace() && !matches!(ch, '(' | ')' | ','))
            {
                j += 1;
            }
            Tok::Subject(text[start..at(j)].to_owned())
        } else {
            Tok::Sym(c)
        };
        out.push(Token { tok, col, at: start });
        i = j;
    }
    out.push(Token {
        tok: Tok::End,
        col: chars.len() as u32 + 1,
        at: text.len(),
    });
    Ok(out)
}
