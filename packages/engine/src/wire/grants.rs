//! Publish and order grants: the subjects one source may publish, compiled once from its
//! entitlement rules (the server's `auth.roles.source.publish` plus the user's own
//! `grants.publish`) and checked by the source-frame decoder against every `record.publish`
//! subject; and the instruments one trader may order (`order` rules and price tiers), checked by
//! the order submit path (`runtime::Engine::order_submit_frame`).
//!
//! Patterns follow apps/server/src/entitlements/patterns.ts: globs over `/`-separated segments;
//! `*` inside a segment matches any characters of that segment, a whole segment `**` matches zero
//! or more segments, `{user}` stands for the user's name, a leading `!` makes a deny rule (deny
//! wins over any allow). A subject is granted when an allow rule matches and no deny rule does.
//!
//! Matching allocates nothing and costs at most (pattern segments x subject segments) segment
//! comparisons: segments between two `**` are placed at their leftmost fit, which is exact for
//! globs (as for `*` within a segment).

use crate::error::{EngineError, Result};

/// Longest pattern, characters without the `!` (`MAX_PATTERN_CHARS` of patterns.ts).
pub const MAX_PATTERN_CHARS: usize = 512;
/// Most `**` segments in one pattern (`MAX_GLOBSTARS`).
pub const MAX_GLOBSTARS: usize = 2;
/// Most `*` wildcards inside segments of one pattern (`MAX_STARS`).
pub const MAX_STARS: usize = 4;
/// Most patterns in one set of grants (the server allows 1000 per role plus 1000 per user).
pub const MAX_PATTERNS: usize = 2000;

/// Deny rules the engine enforces on every source frame itself (`/TRADE` and `/BLOTTER` are
/// written by the order flow only; runtime/orders.rs refuses them with its own message): rules
/// that are `/**` minus these need no check here.
const ENGINE_PRIVATE_DENIES: [&str; 4] = ["!/TRADE/**", "!/BLOTTER/**", "!/TRADE", "!/BLOTTER"];

/// One segment of a pattern other than `**`: the literal pieces between its `*` wildcards
/// (`{user}` already replaced); one piece: no wildcard.
#[derive(Debug, Clone, PartialEq)]
struct Glob(Vec<Box<str>>);

impl Glob {
    fn matches(&self, seg: &[u8]) -> bool {
        let pieces = &self.0;
        let (first, last) = match pieces.as_slice() {
            [] => return seg.is_empty(),
            [only] => return seg == only.as_bytes(),
            [first, .., last] => (first.as_bytes(), last.as_bytes()),
        };
        if seg.len() < first.len() + last.len() || !seg.starts_with(first) || !seg.ends_with(last) {
            return false;
        }
        // leftmost fit of each middle piece: exact for `*` wildcards
        let mut mid = &seg[first.len()..seg.len() - last.len()];
        for piece in &pieces[1..pieces.len() - 1] {
            let p = piece.as_bytes();
            if p.is_empty() {
                continue;
            }
            match mid.windows(p.len()).position(|w| w == p) {
                Some(at) => mid = &mid[at + p.len()..],
                None => return false,
            }
        }
        true
    }
}

/// A compiled pattern: the segments before the first `**` (`head`), the runs of segments between
/// two `**` (`middle`), and those after the last one (`tail`).
#[derive(Debug, Clone, PartialEq)]
struct Pattern {
    head: Vec<Glob>,
    middle: Vec<Vec<Glob>>,
    tail: Vec<Glob>,
    /// Whether the pattern holds a `**` (otherwise only `head` is used).
    globstar: bool,
}

/// Takes the next segment off `rest` (`/seg/...`), or `None` when it is empty or not at a `/`.
fn take_seg<'s>(rest: &mut &'s [u8]) -> Option<&'s [u8]> {
    let (&b'/', after) = rest.split_first()? else {
        return None;
    };
    let end = after.iter().position(|&c| c == b'/').unwrap_or(after.len());
    let seg = &after[..end];
    *rest = &after[end..];
    Some(seg)
}

/// True when the segments at the start of `rest` match `run`; `rest` then starts after them.
fn take_run(rest: &mut &[u8], run: &[Glob]) -> bool {
    let mut probe = *rest;
    for g in run {
        match take_seg(&mut probe) {
            Some(seg) if g.matches(seg) => {}
            _ => return false,
        }
    }
    *rest = probe;
    true
}

impl Pattern {
    /// Compiles `body` (a pattern without its `!`) for `user`; `Err` is the rule broken.
    fn compile(body: &str, user: &str) -> std::result::Result<Self, String> {
        if body.is_empty() || body.len() > MAX_PATTERN_CHARS {
            return Err(format!("must be 1..{MAX_PATTERN_CHARS} characters, got {}", body.len()));
        }
        let Some(segments) = body.strip_prefix('/') else {
            return Err("must start with '/' (or '!/' for a deny rule)".into());
        };
        let (mut globstars, mut stars) = (0, 0);
        let mut runs: Vec<Vec<Glob>> = vec![Vec::new()];
        for seg in segments.split('/') {
            if seg == "**" {
                globstars += 1;
                runs.push(Vec::new());
                continue;
            }
            let rest = seg.replace("{user}", "");
            if seg.is_empty()
                || !rest
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || b"_.@:*-".contains(&c))
            {
                return Err(format!(
                    "segment '{seg}' must be '**' or subject characters [A-Za-z0-9_.@:-] with '*' and '{{user}}'"
                ));
            }
            stars += rest.bytes().filter(|&c| c == b'*').count();
            let pieces = seg.replace("{user}", user).split('*').map(Box::from).collect();
            if let Some(run) = runs.last_mut() {
                run.push(Glob(pieces));
            }
        }
        if globstars > MAX_GLOBSTARS || stars > MAX_STARS {
            return Err(format!(
                "has {globstars} '**' and {stars} '*'; at most {MAX_GLOBSTARS} and {MAX_STARS} are allowed"
            ));
        }
        let globstar = runs.len() > 1;
        let head = runs.remove(0);
        let tail = if globstar {
            runs.pop().unwrap_or_default()
        } else {
            Vec::new()
        };
        Ok(Pattern {
            head,
            middle: runs,
            tail,
            globstar,
        })
    }

    /// True when the whole of `subject` matches.
    fn matches(&self, subject: &str) -> bool {
        let mut rest = subject.as_bytes();
        if rest.first() != Some(&b'/') || !take_run(&mut rest, &self.head) {
            return false;
        }
        if !self.globstar {
            return rest.is_empty();
        }
        // the tail takes the last segments, the middle runs their leftmost fit in between
        let mut end = rest.len();
        for g in self.tail.iter().rev() {
            let Some(slash) = rest[..end].iter().rposition(|&c| c == b'/') else {
                return false;
            };
            if !g.matches(&rest[slash + 1..end]) {
                return false;
            }
            end = slash;
        }
        let mut mid = &rest[..end];
        for run in &self.middle {
            while !take_run(&mut mid, run) {
                if take_seg(&mut mid).is_none() {
                    return false;
                }
            }
        }
        true
    }
}

/// The allow and deny rules of one user for one action.
#[derive(Debug, Clone, PartialEq)]
struct Rules {
    allow: Vec<Pattern>,
    deny: Vec<Pattern>,
}

impl Rules {
    /// Compiles `patterns` (`!` for deny rules; `{user}` becomes `user`) of `action` (named in
    /// the count refusal). `BAD_REQUEST` naming the first invalid pattern and its index.
    fn compile<S: AsRef<str>>(user: &str, patterns: &[S], action: &str) -> Result<Self> {
        if patterns.len() > MAX_PATTERNS {
            return Err(EngineError::bad_request(
                format!("at most {MAX_PATTERNS} {action} patterns, got {}", patterns.len()),
                Some("patterns"),
                None,
            ));
        }
        if !user.bytes().all(|c| c.is_ascii_alphanumeric() || b"_.@-".contains(&c)) {
            return Err(EngineError::bad_request(
                format!("user '{user}' must be characters of [A-Za-z0-9_.@-]"),
                Some("user"),
                None,
            ));
        }
        let mut rules = Rules {
            allow: Vec::new(),
            deny: Vec::new(),
        };
        for (i, text) in patterns.iter().enumerate() {
            let text = text.as_ref();
            let (deny, body) = match text.strip_prefix('!') {
                Some(body) => (true, body),
                None => (false, text),
            };
            let pattern = Pattern::compile(body, user).map_err(|rule| {
                EngineError::bad_request(format!("pattern {i} ('{text}') {rule}"), Some("patterns"), None)
            })?;
            if deny {
                rules.deny.push(pattern);
            } else {
                rules.allow.push(pattern);
            }
        }
        Ok(rules)
    }

    /// True when an allow rule matches `subject` and no deny rule does.
    fn permits(&self, subject: &str) -> bool {
        self.allow.iter().any(|p| p.matches(subject)) && !self.deny.iter().any(|p| p.matches(subject))
    }
}

/// What one source (user) may publish: compiled once per login or configuration reload and
/// handed to the decoder with each of its frames.
#[derive(Debug, Clone, PartialEq)]
pub struct PublishGrants {
    user: String,
    role: String,
    /// `None`: the rules grant every subject the engine lets any source publish (no check).
    rules: Option<Rules>,
}

impl PublishGrants {
    /// Compiles `patterns` (as configured: `!` for deny rules; `{user}` becomes `user`) for
    /// `user` of `role` (both only named in refusals). `BAD_REQUEST` naming the first invalid
    /// pattern and its index (the server validates them when it loads the configuration).
    pub fn compile<S: AsRef<str>>(user: &str, role: &str, patterns: &[S]) -> Result<Self> {
        let rules = Rules::compile(user, patterns, "publish")?;
        let texts = || patterns.iter().map(AsRef::as_ref);
        let allows_all = texts().any(|t| t == "/**");
        let only_private_denies = texts()
            .filter(|t| t.starts_with('!'))
            .all(|t| ENGINE_PRIVATE_DENIES.contains(&t));
        Ok(PublishGrants {
            user: user.to_owned(),
            role: role.to_owned(),
            rules: (!(allows_all && only_private_denies)).then_some(rules),
        })
    }

    /// True when the rules need checking: false when they grant every subject the engine lets
    /// any source publish (`/**`, at most minus `/TRADE` and `/BLOTTER`).
    pub fn checks(&self) -> bool {
        self.rules.is_some()
    }

    /// True when the source may publish `subject`.
    pub fn permits(&self, subject: &str) -> bool {
        self.rules.as_ref().is_none_or(|rules| rules.permits(subject))
    }

    /// The `NOT_ENTITLED` refusal of a frame whose message `index` publishes `subject` (the
    /// server's wording: user, role, verb, subject; nothing of the frame is applied).
    pub fn refusal(&self, subject: &str, index: u32) -> EngineError {
        EngineError::NotEntitled {
            message: format!(
                "user '{}' (role {}) may not publish '{subject}'; nothing in this frame was applied",
                self.user, self.role
            ),
            field: Some("subject".into()),
            index: Some(index),
        }
    }
}

/// What one trader may order: the instruments of its `order` rules (its role's, then its own),
/// except the priced variants of other tiers (`/PRODUCT/X@T2` for a user not of tier T2, when T2
/// is a configured tier: only that tier's users may order it, as apps/server's entitlements.ts
/// rules it). Compiled once per login or configuration reload and handed to every order submit.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderGrants {
    user: String,
    role: String,
    rules: Rules,
    /// Configured tiers other than the user's own.
    other_tiers: Vec<Box<str>>,
}

impl OrderGrants {
    /// Compiles `patterns` for `user` of `role` (both named in refusals) of tier `tier` (`None`:
    /// no tier); `tiers`: every configured tier. `BAD_REQUEST` naming the first invalid pattern
    /// and its index (the server validates them when it loads the configuration).
    pub fn compile<S: AsRef<str>, T: AsRef<str>>(
        user: &str,
        role: &str,
        patterns: &[S],
        tier: Option<&str>,
        tiers: &[T],
    ) -> Result<Self> {
        let rules = Rules::compile(user, patterns, "order")?;
        let other_tiers = tiers
            .iter()
            .map(AsRef::as_ref)
            .filter(|t| Some(*t) != tier)
            .map(Box::from)
            .collect();
        Ok(OrderGrants {
            user: user.to_owned(),
            role: role.to_owned(),
            rules,
            other_tiers,
        })
    }

    /// True when the user may order `instrument`: not another tier's price (its last segment
    /// ending in `@<tier>` of a configured tier other than the user's), and the rules grant it.
    pub fn permits(&self, instrument: &str) -> bool {
        !self.other_tier(instrument) && self.rules.permits(instrument)
    }

    fn other_tier(&self, subject: &str) -> bool {
        let Some(at) = subject.rfind('@') else {
            return false;
        };
        let tier = &subject[at + 1..];
        !tier.contains('/') && self.other_tiers.iter().any(|t| &**t == tier)
    }

    /// The `NOT_ENTITLED` refusal of an order for `instrument` (the server's wording: user, role,
    /// verb, subject; `field` `instrument`).
    pub fn refusal(&self, instrument: &str) -> EngineError {
        EngineError::NotEntitled {
            message: format!("user '{}' (role {}) may not order '{instrument}'", self.user, self.role),
            field: Some("instrument".into()),
            index: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, subject: &str) -> bool {
        m_for(pattern, subject, "alice")
    }

    fn m_for(pattern: &str, subject: &str, user: &str) -> bool {
        PublishGrants::compile(user, "source", &[pattern, "!/NEVER"])
            .expect("valid pattern")
            .permits(subject)
    }

    /// The cases of patterns.ts's tests (entitlements.test.ts), same answers.
    #[test]
    fn star_within_a_segment_and_globstar_across_segments() {
        assert!(m("/FX/*", "/FX/EURUSD"));
        assert!(m("/FX/*", "/FX/EURUSD@T2"));
        assert!(!m("/FX/*", "/FX/A/B"));
        assert!(!m("/FX/*", "/FX"));
        assert!(m("/FX/EUR*", "/FX/EURUSD"));
        assert!(!m("/FX/EUR*", "/FX/GBPUSD"));
        assert!(m("/PRODUCT/**", "/PRODUCT/A/B/C"));
        assert!(m("/PRODUCT/**", "/PRODUCT"));
        assert!(!m("/PRODUCT/**", "/PRODUCTS/A"));
        assert!(m("/**", "/anything/at/all"));
        assert!(m("/a/**/z", "/a/z"));
        assert!(m("/a/**/z", "/a/b/c/z"));
        assert!(!m("/a/**/z", "/a/b/c/y"));
        assert!(!m("/a/**/z", "/z"));
        assert!(m("/**/z", "/z"));
        assert!(m("/a/**/m/**/z", "/a/m/z"));
        assert!(m("/a/**/m/n/**/z", "/a/b/m/m/n/c/z"));
        assert!(!m("/a/**/m/n/**/z", "/a/m/z/n/z"));
        assert!(m("/a/*b*c", "/a/xbyc"));
        assert!(m("/a/*b*c*", "/a/bc"));
        assert!(!m("/a/*b*c", "/a/cb"));
        assert!(m("/a/x*x", "/a/xx"));
        assert!(!m("/a/xx*xx", "/a/xxx"));
    }

    #[test]
    fn the_rest_is_literal_including_user() {
        assert!(!m("/A.B", "/AxB"));
        assert!(m("/A.B", "/A.B"));
        assert!(m("/BLOTTER/{user}", "/BLOTTER/alice"));
        assert!(!m("/BLOTTER/{user}", "/BLOTTER/bob"));
        assert!(!m("/BLOTTER/{user}", "/BLOTTER/alicex"));
        assert!(m_for("/TRADE/{user}/**", "/TRADE/a.b/1", "a.b"));
        assert!(!m_for("/TRADE/{user}/**", "/TRADE/aXb/1", "a.b"));
        assert!(m_for("/U/x{user}*", "/U/xbob-1", "bob"));
    }

    #[test]
    fn deny_wins_and_default_rules_need_no_check() {
        let g = PublishGrants::compile("feed", "source", &["/**", "!/SECRET/**"]).unwrap();
        assert!(g.checks());
        assert!(g.permits("/FX/EURUSD"));
        assert!(!g.permits("/SECRET/A"));
        assert!(!g.permits("/SECRET"));
        let all = PublishGrants::compile("feed", "source", &["/**", "!/TRADE/**", "!/BLOTTER/**"]).unwrap();
        assert!(!all.checks());
        assert!(all.permits("/TRADE/alice/1")); // the engine refuses it with its own message
        assert!(PublishGrants::compile("feed", "source", &["/FX/**"]).unwrap().checks());
        let none = PublishGrants::compile::<&str>("feed", "source", &[]).unwrap();
        assert!(none.checks() && !none.permits("/FX/EURUSD"));
        let e = g.refusal("/SECRET/A", 3);
        assert_eq!(
            e.to_string(),
            "user 'feed' (role source) may not publish '/SECRET/A'; nothing in this frame was applied"
        );
        assert_eq!(
            (e.code().as_str(), e.field(), e.index()),
            ("NOT_ENTITLED", Some("subject"), Some(3))
        );
    }

    #[test]
    fn order_grants_follow_the_rules_and_keep_other_tiers_prices() {
        let g = OrderGrants::compile(
            "alice",
            "trader",
            &["/FX/*", "/PRODUCT/*", "!/PRODUCT/SECRET"],
            Some("T1"),
            &["T1", "T2"],
        )
        .expect("valid patterns");
        assert!(g.permits("/FX/EURUSD"));
        assert!(g.permits("/PRODUCT/X@T1"));
        assert!(!g.permits("/PRODUCT/X@T2")); // another tier's price
        assert!(g.permits("/PRODUCT/X@T3")); // not a configured tier: an ordinary subject
        assert!(!g.permits("/PRODUCT/SECRET"));
        assert!(!g.permits("/TRADE/alice/1"));
        assert!(!g.permits("/FX/A/B"));
        let untiered = OrderGrants::compile("bob", "admin", &["/**"], None, &["T1"]).unwrap();
        assert!(!untiered.permits("/PRODUCT/X@T1"));
        assert!(untiered.permits("/PRODUCT/X"));
        assert!(OrderGrants::compile::<&str, &str>("bob", "trader", &[], None, &[])
            .unwrap()
            .permits("/FX/EURUSD")
            .eq(&false));
        let e = g.refusal("/PRODUCT/SECRET");
        assert_eq!(
            e.to_string(),
            "user 'alice' (role trader) may not order '/PRODUCT/SECRET'"
        );
        assert_eq!(
            (e.code().as_str(), e.field(), e.index()),
            ("NOT_ENTITLED", Some("instrument"), None)
        );
        let bad = OrderGrants::compile("alice", "trader", &["/ok", "FX"], None, &["T1"]).expect_err("invalid");
        assert_eq!((bad.code().as_str(), bad.field()), ("BAD_REQUEST", Some("patterns")));
    }

    #[test]
    fn invalid_patterns_are_refused_with_the_rule() {
        for bad in [
            "",
            "!",
            "FX/*",
            "/FX//A",
            "/FX/{usr}",
            "/a b",
            "/(x)",
            "/**/**/**",
            "/*a*b*c*d*e",
        ] {
            let e = PublishGrants::compile("u", "source", &["/ok", bad]).expect_err(bad);
            assert_eq!(
                (e.code().as_str(), e.field()),
                ("BAD_REQUEST", Some("patterns")),
                "{bad}"
            );
            assert!(e.to_string().starts_with("pattern 1 "), "{e}");
        }
        for good in ["/**", "!/TRADE/**", "/BLOTTER/{user}", "/FX/EUR*", "/a/**/b/**"] {
            assert!(PublishGrants::compile("u", "source", &[good]).is_ok(), "{good}");
        }
        assert!(PublishGrants::compile("a/b", "source", &["/**"]).is_err());
    }

    /// Against a brute-force reference (all splits tried) over small alphabets: the leftmost-fit
    /// placement gives the same answers.
    #[test]
    fn agrees_with_a_brute_force_matcher() {
        fn reference(p: &[&str], s: &[&str]) -> bool {
            fn glob(p: &[u8], s: &[u8]) -> bool {
                match p.split_first() {
                    None => s.is_empty(),
                    Some((b'*', rest)) => (0..=s.len()).any(|i| glob(rest, &s[i..])),
                    Some((c, rest)) => s.first() == Some(c) && glob(rest, &s[1..]),
                }
            }
            match p.split_first() {
                None => s.is_empty(),
                Some((&"**", rest)) => (0..=s.len()).any(|i| reference(rest, &s[i..])),
                Some((g, rest)) => !s.is_empty() && glob(g.as_bytes(), s[0].as_bytes()) && reference(rest, &s[1..]),
            }
        }
        let segs = ["a", "b", "ab", "ba", "aab"];
        let globs = ["a", "b", "*", "a*", "*b", "*a*", "**"];
        let mut subjects: Vec<Vec<&str>> = vec![vec![]];
        for _ in 0..4 {
            let longer: Vec<Vec<&str>> = subjects
                .iter()
                .filter(|s| s.len() < 4)
                .flat_map(|s| segs.iter().map(move |x| [s.as_slice(), &[*x]].concat()))
                .collect();
            subjects.extend(longer);
        }
        subjects.sort();
        subjects.dedup();
        let mut patterns: Vec<Vec<&str>> = vec![vec![]];
        for _ in 0..4 {
            let longer: Vec<Vec<&str>> = patterns
                .iter()
                .filter(|p| p.len() < 3)
                .flat_map(|p| globs.iter().map(move |g| [p.as_slice(), &[*g]].concat()))
                .collect();
            patterns.extend(longer);
        }
        patterns.sort();
        patterns.dedup();
        let mut checked = 0;
        for p in patterns.iter().filter(|p| !p.is_empty()) {
            let text = format!("/{}", p.join("/"));
            let Ok(g) = PublishGrants::compile("u", "source", &[text.as_str(), "!/NEVER"]) else {
                continue; // over the wildcard caps
            };
            for s in subjects.iter().filter(|s| !s.is_empty()) {
                let subject = format!("/{}", s.join("/"));
                assert_eq!(g.permits(&subject), reference(p, s), "{text} vs {subject}");
                checked += 1;
            }
        }
        assert!(checked > 100_000, "{checked}");
    }
}
