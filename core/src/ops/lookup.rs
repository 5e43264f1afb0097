//! Look-up by unique id prefix: what a person types for a session or a message.

use crate::error::{Error, Result};
use crate::store::{StoreCore, ViewCore};

/// Candidates named in an ambiguous-prefix error; more are counted.
const SHOWN_CANDIDATES: usize = 8;

/// Resolve `prefix` among `ids`: the id equal to it, else the only id starting
/// with it. `what` names the kind of id ("session", "message") and `place`
/// (if not empty) where the ids come from, for errors.
pub(crate) fn unique_prefix<'a>(
    prefix: &str,
    ids: impl IntoIterator<Item = &'a str>,
    what: &str,
    place: &str,
) -> Result<String> {
    let place = if place.is_empty() {
        String::new()
    } else {
        format!(" {place}")
    };
    if prefix.is_empty() {
        return Err(Error::invalid(format!("an empty {what} id{place}")));
    }
    let mut found: Vec<&str> = Vec::new();
    for id in ids {
        if id == prefix {
            return Ok(id.to_string());
        }
        if id.starts_with(prefix) {
            found.push(id);
        }
    }
    match found.as_slice() {
        [one] => Ok(one.to_string()),
        [] => Err(Error::NotFound(format!(
            "no {what} id starts with {prefix:?}{place}"
        ))),
        many => {
            let mut names = many
                .iter()
                .take(SHOWN_CANDIDATES)
                .copied()
                .collect::<Vec<_>>()
                .join(", ");
            if many.len() > SHOWN_CANDIDATES {
                names.push_str(&format!(" and {} more", many.len() - SHOWN_CANDIDATES));
            }
            Err(Error::invalid(format!(
                "ambiguous: {what} id prefix {prefix:?} matches {} {what}s{place}: {names}",
                many.len()
            )))
        }
    }
}

/// The session of `store` whose id is `prefix` or the only one starting with it.
/// (Errors do not name the store: a caller knows which it asked.)
pub(crate) fn resolve_session(store: &StoreCore, prefix: &str) -> Result<String> {
    let ids = store.log_ids()?;
    let found = unique_prefix(prefix, ids.iter().map(String::as_str), "session", "");
    // A conversation id a framework used ("user@example.com") names its
    // session too (FORMAT.md §3.3).
    if let Err(Error::NotFound(_)) = &found {
        if let Ok(mapped) = crate::format::layout::conversation_session_id(prefix) {
            if ids.contains(&mapped) {
                return Ok(mapped);
            }
        }
    }
    found
}

/// The message of `view` (on any branch) whose id is `prefix` or the only one
/// starting with it.
pub(crate) fn resolve_message(view: &ViewCore, prefix: &str) -> Result<String> {
    unique_prefix(
        prefix,
        view.log().message_ids(),
        "message",
        &format!("in {}", view.log().path.display()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    const IDS: [&str; 4] = ["abc1", "abc2", "abd", "x"];

    #[test]
    fn exact_then_unique_prefix() {
        let r = |p| unique_prefix(p, IDS, "session", "in s");
        assert_eq!(r("abd").unwrap(), "abd");
        assert_eq!(r("ab").unwrap_err().kind(), ErrorKind::InvalidInput);
        assert_eq!(r("abc1").unwrap(), "abc1");
        assert_eq!(r("x").unwrap(), "x");
        // An exact id wins over the longer ids it is a prefix of.
        let with_prefix = ["ab", "abc"];
        assert_eq!(
            unique_prefix("ab", with_prefix, "session", "").unwrap(),
            "ab"
        );
    }

    #[test]
    fn errors_name_the_prefix_the_place_and_the_candidates() {
        let e = unique_prefix("zz", IDS, "session", "in store /s").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound);
        assert_eq!(
            e.to_string(),
            "not found: no session id starts with \"zz\" in store /s"
        );
        let e = unique_prefix("abc", IDS, "message", "in /l.jsonl").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
        assert_eq!(
            e.to_string(),
            "invalid input: ambiguous: message id prefix \"abc\" matches 2 messages in /l.jsonl: abc1, abc2"
        );
        let e = unique_prefix("", IDS, "session", "").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
        assert_eq!(e.to_string(), "invalid input: an empty session id");
        let many: Vec<String> = (0..10).map(|i| format!("m{i}")).collect();
        let e = unique_prefix("m", many.iter().map(String::as_str), "message", "here")
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("m6, m7 and 2 more"), "{e}");
    }
}
