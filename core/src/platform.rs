//! The platform boundary: every call the core makes that depends on the
//! operating system goes through this module, behind small safe functions.
//!
//! Supported: Linux (tested). Other Unix systems should work. Windows would need
//! another implementation of this module.

use std::io;

/// The error number behind a message that ends with the system's text for it,
/// as libgit2 writes its OS errors ("failed to make directory '/x': Not a
/// directory"): libgit2 clears `errno` once it has written the text, so the
/// number is only found again from the text.
pub(crate) fn errno_from_message(message: &str) -> Option<i32> {
    // Past the largest error number of Linux (133) and of the BSDs and macOS.
    (1..256).find(|&n| {
        let text = errno_text(n);
        !text.is_empty()
            && (message == text
                || message
                    .strip_suffix(text.as_str())
                    .is_some_and(|m| m.ends_with(": ")))
    })
}

/// The system's text for error number `n` (`strerror`), as the standard library
/// gives it in "Not a directory (os error 20)".
fn errno_text(n: i32) -> String {
    let shown = io::Error::from_raw_os_error(n).to_string();
    let suffix = format!(" (os error {n})");
    match shown.strip_suffix(&suffix) {
        Some(text) if !text.starts_with("Unknown error") => text.to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_number_is_found_again_from_its_text() {
        for n in [2, 13, 20, 28, 36] {
            let text = errno_text(n);
            assert!(!text.is_empty(), "{n}");
            let msg = format!("failed to make directory '/tmp/x': {text}");
            assert_eq!(errno_from_message(&msg), Some(n), "{msg}");
            assert_eq!(errno_from_message(&text), Some(n));
        }
        assert_eq!(errno_from_message("object not found"), None);
        assert_eq!(errno_from_message(""), None);
        // Only a whole text after ": " counts ("Is a directory" is not "a directory").
        let text = errno_text(21);
        assert_eq!(errno_from_message(&format!("x{text}")), None);
    }
}
