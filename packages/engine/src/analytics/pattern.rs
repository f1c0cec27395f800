//! Subject patterns of a statement's stream, with the same rules as entitlement patterns
//! (docs/configuration.md): `*` inside a segment matches any characters of that segment
//! (`/MKT/*`, `/FX/EUR*`), a whole segment `**` matches zero or more segments (`/MKT/**`, `/**`),
//! everything else is literal. Matching runs once per (subject, statement set change): the
//! statement set caches each subject's matching streams.

/// Most `**` segments in one pattern (as for entitlement rules).
pub const MAX_GLOBSTARS: usize = 2;
/// Most `*` wildcards inside segments of one pattern (as for entitlement rules).
pub const MAX_STARS: usize = 4;
/// Longest pattern in bytes (a subject is at most 256 bytes).
pub const MAX_PATTERN_BYTES: usize = 256;

/// A validated subject pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pattern {
    text: String,
    segments: Vec<String>,
}

impl Pattern {
    /// Parses `text`; the error says which rule it breaks.
    pub fn parse(text: &str) -> Result<Pattern, String> {
        if text.is_empty() || text.len() > MAX_PATTERN_BYTES {
            return Err(format!(
                "a subject pattern is 1..{MAX_PATTERN_BYTES} bytes, got {}",
                text.len()
            ));
        }
        let Some(body) = text.strip_prefix('/') else {
            return Err(format!("subject pattern '{text}' must start with '/'"));
        };
        let segments: Vec<String> = body.split('/').map(str::to_owned).collect();
        let globstars = segments.iter().filter(|s| *s == "**").count();
        let stars: usize = segments
            .iter()
            .filter(|s| *s != "**")
            .map(|s| s.matches('*').count())
            .sum();
        if globstars > MAX_GLOBSTARS || stars > MAX_STARS {
            return Err(format!(
                "subject pattern '{text}' has {globstars} '**' and {stars} '*'; at most {MAX_GLOBSTARS} and {MAX_STARS} are allowed"
            ));
        }
        for s in &segments {
            let ok = s == "**"
                || (!s.is_empty()
                    && s.chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '@' | ':' | '-' | '*')));
            if !ok {
                return Err(format!(
                    "segment '{s}' of subject pattern '{text}' must be '**' or subject characters [A-Za-z0-9_.@:-] with '*'"
                ));
            }
        }
        Ok(Pattern {
            text: text.to_owned(),
            segments,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// True when the pattern has no wildcard (it names one subject).
    pub fn is_literal(&self) -> bool {
        !self.text.contains('*')
    }

    /// True when the whole of `subject` matches.
    pub fn matches(&self, subject: &str) -> bool {
        let Some(body) = subject.strip_prefix('/') else {
            return false;
        };
        let subject: Vec<&str> = body.split('/').collect();
        let pattern: Vec<&str> = self.segments.iter().map(String::as_str).collect();
        match_segments(&pattern, &subject)
    }
}

impl std::fmt::Display for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// Pattern segments against subject segments (`**` backtracks; at most 2 of them, so the cost
/// stays polynomial of a small degree in the segment count).
fn match_segments(p: &[&str], s: &[&str]) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some((&"**", rest)) => (0..=s.len()).any(|skip| match_segments(rest, &s[skip..])),
        Some((seg, rest)) => match s.split_first() {
            Some((first, more)) => glob(seg.as_bytes(), first.as_bytes()) && match_segments(rest, more),
            None => false,
        },
    }
}

/// `*` (any run of characters) within one segment; everything else literal.
fn glob(p: &[u8], s: &[u8]) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some((b'*', rest)) => (0..=s.len()).any(|skip| glob(rest, &s[skip..])),
        Some((c, rest)) => s.first() == Some(c) && glob(rest, &s[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_like_entitlement_patterns() {
        let cases: &[(&str, &str, bool)] = &[
            ("/MKT/*", "/MKT/S0AA", true),
            ("/MKT/*", "/MKT", false),
            ("/MKT/*", "/MKT/S0AA/X", false),
            ("/MKT/*", "/FX/S0AA", false),
            ("/FX/EUR*", "/FX/EURUSD", true),
            ("/FX/EUR*", "/FX/USDEUR", false),
            ("/FX/*USD", "/FX/EURUSD", true),
            ("/MKT/**", "/MKT", true),
            ("/MKT/**", "/MKT/A/B/C", true),
            ("/**", "/anything/at/all", true),
            ("/A/**/Z", "/A/Z", true),
            ("/A/**/Z", "/A/B/C/Z", true),
            ("/A/**/Z", "/A/B/C/Y", false),
            ("/MKT/S0AA", "/MKT/S0AA", true),
            ("/MKT/S0AA", "/MKT/S0AB", false),
            ("/MKT/*", "MKT/S0AA", false),
        ];
        for &(p, s, want) in cases {
            assert_eq!(Pattern::parse(p).unwrap().matches(s), want, "{p} vs {s}");
        }
        assert!(Pattern::parse("/MKT/S0AA").unwrap().is_literal());
        assert!(!Pattern::parse("/MKT/*").unwrap().is_literal());
    }

    #[test]
    fn refuses_bad_patterns() {
        for (p, says) in [
            ("MKT/*", "must start with '/'"),
            ("/MKT/", "segment ''"),
            ("/MKT//X", "segment ''"),
            ("/MKT/a b", "segment 'a b'"),
            ("/**/**/**", "3 '**'"),
            ("/*/*/*/*/*", "5 '*'"),
            ("", "1..256 bytes"),
        ] {
            let e = Pattern::parse(p).unwrap_err();
            assert!(e.contains(says), "{p}: {e}");
        }
    }
}
