//! napi: the engine's private-record rule (`orders::privacy::check_read`) for the server, which
//! refuses a `record.subscribe` the engine would refuse before handing it over (so the refusal is
//! an error it counts). One rule, here in Rust; the server calls it instead of a copy.

use napi_derive::napi;

use crate::order_desk::privacy::check_read;

/// The first subject a session of one user may not read, and why.
#[napi(object)]
pub struct PrivateRefusal {
    /// Position of the subject in the list asked about.
    pub index: u32,
    /// The engine's NOT_ENTITLED message naming the subject.
    pub message: String,
}

/// The first of `subjects` a session of `user` may not read (another user's `/TRADE/<user>/...`
/// record or `/BLOTTER/<user>`, or `/TRADE` / `/BLOTTER` themselves), with the engine's message;
/// null when it may read them all. Pure: the rule `subscribe` and `viewCreate` apply.
#[napi]
pub fn first_private_refusal(user: String, subjects: Vec<String>) -> Option<PrivateRefusal> {
    subjects.iter().enumerate().find_map(|(i, subject)| {
        check_read(&user, subject).err().map(|message| PrivateRefusal {
            index: i as u32,
            message,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_first_refused_subject_with_the_engine_message() {
        let subjects = ["/FX/EURUSD", "/BLOTTER/alice", "/BLOTTER/bob", "/TRADE/bob/7"];
        let asked = |user: &str| first_private_refusal(user.into(), subjects.iter().map(|s| s.to_string()).collect());
        let refusal = asked("alice").expect("bob's blotter is refused");
        assert_eq!(refusal.index, 2);
        assert_eq!(Err(refusal.message), check_read("alice", "/BLOTTER/bob"));
        assert_eq!(asked("bob").expect("alice's blotter is refused").index, 1);
        assert!(first_private_refusal("alice".into(), vec!["/FX/EURUSD".into(), "/BLOTTER/alice".into()]).is_none());
    }
}
