//! One error type for the whole library. Each [`ErrorKind`] has a fixed number that
//! the C ABI returns and that the other bindings map to their own error classes.

use std::path::{Path, PathBuf};

/// Defines [`ErrorKind`] from one table, so that each kind's number, name and
/// description are written once: every binding derives its error codes from it.
macro_rules! error_kinds {
    ($($kind:ident = $code:literal, $name:literal, $description:literal;)+) => {
        /// The stable kinds of failure. The numbers are part of the C ABI and never
        /// change; the names are the error codes of the other bindings.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(i32)]
        pub enum ErrorKind {
            $(#[doc = $description] $kind = $code,)+
        }

        impl ErrorKind {
            /// Every kind, in the order of their numbers.
            pub const ALL: &'static [ErrorKind] = &[$(ErrorKind::$kind),+];

            /// A short stable name (`NOT_FOUND`, ...), used by the bindings as an
            /// error code string.
            pub const fn name(self) -> &'static str {
                match self {
                    $(ErrorKind::$kind => $name,)+
                }
            }

            /// What the kind means, in one line.
            pub const fn description(self) -> &'static str {
                match self {
                    $(ErrorKind::$kind => $description,)+
                }
            }
        }
    };
}

error_kinds! {
    NotFound = 1, "NOT_FOUND",
        "A session, message, agent, snapshot or file that was asked for does not exist.";
    Busy = 2, "BUSY",
        "Another writer, in this or another process, holds the session's lock.";
    Conflict = 3, "CONFLICT",
        "The operation clashes with the state on disk (an existing id, files changed outside the agent).";
    InvalidInput = 4, "INVALID_INPUT",
        "The caller passed something invalid: bad JSON, a bad id, a value over a limit.";
    Corrupt = 5, "CORRUPT",
        "Stored data cannot be understood and cannot be repaired automatically.";
    Io = 6, "IO",
        "The operating system reported an I/O error.";
    Unsupported = 7, "UNSUPPORTED",
        "The store was written by a newer, incompatible format version.";
    Internal = 8, "INTERNAL",
        "A bug in sessionkit (a panic caught at a boundary, a broken invariant).";
}

impl ErrorKind {
    /// The kind's fixed number (the C ABI's status).
    pub const fn code(self) -> i32 {
        self as i32
    }

    /// The kind with number `code`, if there is one.
    pub fn from_code(code: i32) -> Option<ErrorKind> {
        ErrorKind::ALL.iter().copied().find(|k| k.code() == code)
    }

    /// The kind of an error of the operating system: `NotFound` when the file
    /// or directory does not exist, `Io` otherwise.
    pub fn of_io(e: &std::io::Error) -> ErrorKind {
        match e.kind() {
            std::io::ErrorKind::NotFound => ErrorKind::NotFound,
            _ => ErrorKind::Io,
        }
    }
}

/// Every failure the library reports. Messages say what was wrong and with what.
/// Each variant is one [`ErrorKind`] (see there for when it occurs); match on
/// [`Error::kind`] rather than on the message text.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// [`ErrorKind::NotFound`]; the message names what is missing.
    #[error("not found: {0}")]
    NotFound(String),
    /// [`ErrorKind::Busy`]; the message names the session or lock.
    #[error("busy: {0}")]
    Busy(String),
    /// [`ErrorKind::Conflict`]; the message names the conflicting ids or files.
    #[error("conflict: {0}")]
    Conflict(String),
    /// [`ErrorKind::InvalidInput`]; the message says which input and why.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// [`ErrorKind::Corrupt`]; the message names the file and what is wrong.
    #[error("corrupt: {0}")]
    Corrupt(String),
    /// [`ErrorKind::Io`]: an operating-system error on a path.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file or directory the failed call was about.
        path: PathBuf,
        /// What the operating system reported.
        #[source]
        source: std::io::Error,
    },
    /// [`ErrorKind::Unsupported`]; the message names the version found.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// [`ErrorKind::Internal`]: a bug in sessionkit.
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    /// The stable kind. A missing file or directory is `NotFound` whichever
    /// path reported it: an `Io` error saying so (its message names the path)
    /// has that kind too, like the `NotFound` errors that name the session.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::NotFound(_) => ErrorKind::NotFound,
            Error::Busy(_) => ErrorKind::Busy,
            Error::Conflict(_) => ErrorKind::Conflict,
            Error::InvalidInput(_) => ErrorKind::InvalidInput,
            Error::Corrupt(_) => ErrorKind::Corrupt,
            Error::Io { source, .. } => ErrorKind::of_io(source),
            Error::Unsupported(_) => ErrorKind::Unsupported,
            Error::Internal(_) => ErrorKind::Internal,
        }
    }

    /// The operating system's error number behind this error (ENOSPC, EACCES,
    /// ...), also when it came through libgit2 (file history); `None` when the
    /// error did not come from the operating system.
    pub fn os_errno(&self) -> Option<i32> {
        match self {
            Error::Io { source, .. } => source.raw_os_error().or_else(|| {
                source
                    .get_ref()?
                    .downcast_ref::<SystemError>()
                    .and_then(|e| e.errno)
            }),
            _ => None,
        }
    }

    /// An error of the operating system reported as text, by libgit2: its error
    /// number is read back from the text, so that it survives.
    pub(crate) fn system(path: &Path, message: String) -> Error {
        let errno = crate::platform::errno_from_message(&message);
        let kind = errno.map_or(std::io::ErrorKind::Other, |n| {
            std::io::Error::from_raw_os_error(n).kind()
        });
        Error::io(
            path,
            std::io::Error::new(kind, SystemError { message, errno }),
        )
    }

    pub(crate) fn io(path: &Path, source: std::io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn invalid(msg: impl Into<String>) -> Error {
        Error::InvalidInput(msg.into())
    }
}

/// An error of the operating system that a library reported as text: the text,
/// and the error number found in it.
#[derive(Debug)]
struct SystemError {
    message: String,
    errno: Option<i32>,
}

impl std::fmt::Display for SystemError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SystemError {}

/// The result of every fallible call of the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Attach a path to an `io::Result`.
pub(crate) trait IoContext<T> {
    fn at(self, path: &Path) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn at(self, path: &Path) -> Result<T> {
        self.map_err(|e| Error::io(path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_numbers_kinds_from_one_without_gaps_and_names_them_once() {
        for (i, k) in ErrorKind::ALL.iter().enumerate() {
            assert_eq!(k.code(), i as i32 + 1, "{k:?}");
            assert_eq!(ErrorKind::from_code(k.code()), Some(*k));
            assert!(
                k.name()
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b == b'_'),
                "{k:?}: {}",
                k.name()
            );
            assert!(k.description().ends_with('.') && !k.description().contains('\n'));
        }
        let mut names: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ErrorKind::ALL.len());
        assert_eq!(ErrorKind::from_code(0), None);
        assert_eq!(ErrorKind::from_code(ErrorKind::ALL.len() as i32 + 1), None);
        // The numbers are ABI: these never change.
        assert_eq!(ErrorKind::NotFound.code(), 1);
        assert_eq!(ErrorKind::Io.code(), 6);
        assert_eq!(ErrorKind::Internal.code(), 8);
    }
}
