//! What a user types, made into an FTS5 match expression: words, "quoted
//! phrases", `prefix*`, and `OR` between two terms; every other character is
//! quoted, so no input is an FTS5 syntax error and none reaches a column filter.

use crate::error::{Error, Result};

/// The longest query text, in bytes: what a person types or pastes to look
/// for, with room to spare. Longer is `InvalidInput`.
pub const MAX_SEARCH_QUERY_BYTES: usize = 16 * 1024;
/// The most terms (words, phrases, prefixes) a query may hold. The engine's
/// time grows with the square of the terms of a query (100,000 words took
/// half a minute), so more is `InvalidInput`.
pub const MAX_SEARCH_QUERY_TERMS: usize = 256;

/// The FTS5 expression for `text`: its terms ANDed (or ORed where the user
/// wrote `OR`), each one a quoted string so punctuation in code and paths
/// (`src/main.rs`, `a::b`) becomes a phrase of its tokens, not syntax.
pub(crate) fn to_match(text: &str) -> Result<String> {
    if text.len() > MAX_SEARCH_QUERY_BYTES {
        return Err(Error::invalid(format!(
            "search query text has {} bytes, more than the limit of {MAX_SEARCH_QUERY_BYTES} (MAX_SEARCH_QUERY_BYTES)",
            text.len()
        )));
    }
    if let Some(at) = text.find('\0') {
        return Err(Error::invalid(format!(
            "search query text holds a NUL byte at byte {at}"
        )));
    }
    let mut out: Vec<String> = Vec::new();
    let mut terms = 0;
    let mut chars = text.chars().peekable();
    let mut pending_or = false;
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let (term, quoted) = if c == '"' {
            chars.next();
            let mut t = String::new();
            for c in chars.by_ref() {
                if c == '"' {
                    break;
                }
                t.push(c);
            }
            (t, true)
        } else {
            let mut t = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() || c == '"' {
                    break;
                }
                t.push(c);
                chars.next();
            }
            (t, false)
        };
        if !quoted && term == "OR" {
            pending_or = !out.is_empty();
            continue;
        }
        let (body, prefix) = match term.strip_suffix('*') {
            Some(b) if !quoted && !b.is_empty() => (b, true),
            _ => (term.as_str(), false),
        };
        // A term of punctuation only has no token to match: drop it.
        if !body.chars().any(char::is_alphanumeric) {
            continue;
        }
        let phrase = format!(
            "\"{}\"{}",
            body.replace('"', "\"\""),
            if prefix { "*" } else { "" }
        );
        terms += 1;
        if terms > MAX_SEARCH_QUERY_TERMS {
            return Err(Error::invalid(format!(
                "search query has more than {MAX_SEARCH_QUERY_TERMS} terms (MAX_SEARCH_QUERY_TERMS)"
            )));
        }
        if pending_or {
            out.push("OR".into());
            pending_or = false;
        }
        out.push(phrase);
    }
    if out.is_empty() {
        return Err(Error::invalid(format!(
            "search query {text:?} has no word to look for"
        )));
    }
    Ok(out.join(" "))
}

#[cfg(test)]
mod tests {
    use super::to_match;

    #[test]
    fn words_phrases_prefixes_and_or() {
        assert_eq!(to_match("parse_config").unwrap(), "\"parse_config\"");
        assert_eq!(
            to_match("src/main.rs err*").unwrap(),
            "\"src/main.rs\" \"err\"*"
        );
        assert_eq!(to_match("\"two words\" x").unwrap(), "\"two words\" \"x\"");
        assert_eq!(to_match("a OR b").unwrap(), "\"a\" OR \"b\"");
        assert_eq!(to_match("say \"it's\"\"").unwrap(), "\"say\" \"it's\"");
        assert_eq!(
            to_match("NEAR( a:b ^c").unwrap(),
            "\"NEAR(\" \"a:b\" \"^c\""
        );
    }

    #[test]
    fn a_query_without_words_is_refused() {
        let err = to_match("  * \"\" -- ").unwrap_err();
        assert!(err.to_string().contains("no word"), "{err}");
    }
}
