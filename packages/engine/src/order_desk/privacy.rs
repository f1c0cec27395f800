//! Private subjects: `/TRADE/<user>/<orderId>` trade records and `/BLOTTER/<user>` blotters belong to
//! one user. Only a session of that user may subscribe to or view them; no source may publish them
//! (the engine does, when a transition is durable).

/// Prefix of trade records: `/TRADE/<user>/<orderId>`.
pub const TRADE_PREFIX: &str = "/TRADE/";
/// Prefix of blotters: `/BLOTTER/<user>`.
pub const BLOTTER_PREFIX: &str = "/BLOTTER/";

/// True for `/TRADE`, `/BLOTTER` and anything under them (the engine's own namespace).
pub fn is_private(subject: &str) -> bool {
    subject == "/TRADE"
        || subject == "/BLOTTER"
        || subject.starts_with(TRADE_PREFIX)
        || subject.starts_with(BLOTTER_PREFIX)
}

/// The user a private subject belongs to: `/TRADE/u/42` -> `u`, `/BLOTTER/u` -> `u`; `Some("")` for
/// a private subject without a user part (nobody owns it); `None` for a public subject.
pub fn owner(subject: &str) -> Option<&str> {
    if let Some(rest) = subject.strip_prefix(TRADE_PREFIX) {
        return Some(rest.split('/').next().unwrap_or(""));
    }
    if let Some(rest) = subject.strip_prefix(BLOTTER_PREFIX) {
        return Some(rest);
    }
    is_private(subject).then_some("")
}

/// `Err(message)` when a session of `user` may not read `subject` (another user's trade record or
/// blotter); the message names the subject.
pub fn check_read(user: &str, subject: &str) -> Result<(), String> {
    match owner(subject) {
        Some(o) if o.is_empty() || o != user => Err(format!(
            "'{subject}' is private to {}; a session of user '{user}' may only read its own /TRADE/{user}/... and /BLOTTER/{user}",
            if o.is_empty() { "no user" } else { "another user" }
        )),
        _ => Ok(()),
    }
}

/// `Err(message)` when `user` cannot own trade records: its name must be one subject segment
/// (`[A-Za-z0-9_.@:-]`, 1-64 bytes) so `/TRADE/<user>/<id>` and `/BLOTTER/<user>` are subjects
/// the user can subscribe to.
pub fn check_owner_name(user: &str) -> Result<(), String> {
    let ok = !user.is_empty()
        && user.len() <= 64
        && user
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'@' | b':' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "user name {user:?} cannot own trade records: /TRADE/<user>/<orderId> needs 1-64 bytes of [A-Za-z0-9_.@:-]"
        ))
    }
}

/// The subject of order `order_id`'s trade record.
pub fn trade_subject(user: &str, order_id: u64) -> String {
    format!("{TRADE_PREFIX}{user}/{order_id}")
}

/// The subject of `user`'s blotter container.
pub fn blotter_subject(user: &str) -> String {
    format!("{BLOTTER_PREFIX}{user}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_and_reads() {
        assert_eq!(owner("/TRADE/alice/42"), Some("alice"));
        assert_eq!(owner("/BLOTTER/alice"), Some("alice"));
        assert_eq!(owner("/TRADE"), Some(""));
        assert_eq!(owner("/BLOTTER/"), Some(""));
        assert_eq!(owner("/FX/EURUSD"), None);
        assert_eq!(owner("/TRADES/x"), None, "only the exact namespace is private");
        assert!(check_read("alice", "/TRADE/alice/1").is_ok());
        assert!(check_read("alice", "/BLOTTER/alice").is_ok());
        assert!(check_read("alice", "/FX/EURUSD").is_ok());
        assert!(check_read("alice", "/BLOTTER/bob")
            .unwrap_err()
            .contains("/BLOTTER/bob"));
        assert!(check_read("alice", "/TRADE/bob/1").is_err());
        assert!(check_read("alice", "/TRADE/alice2/1").is_err());
        assert!(check_read("", "/BLOTTER/").is_err(), "an empty owner matches nobody");
        assert!(is_private("/TRADE/x") && is_private("/BLOTTER") && !is_private("/TRADER"));
        assert_eq!(trade_subject("u", 7), "/TRADE/u/7");
        assert!(check_owner_name("alice.b-2@x").is_ok());
        for bad in ["", "a b", "a/b", "é", &"x".repeat(65)] {
            assert!(check_owner_name(bad).is_err(), "{bad:?}");
        }
        assert_eq!(blotter_subject("u"), "/BLOTTER/u");
    }
}
