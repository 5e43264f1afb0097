//! One error type for the whole library. Each [`ErrorKind`] has a fixed number that
//! the C ABI returns and that the other bindings map to their own error classes.

use std::path::{Path, PathBuf};

/// The stable kinds of failure. The numbers are part of the C ABI and never change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ErrorKind {
    /// A session, message, agent or file that was asked for does not exist.
    NotFound = 1,
    /// Another writer holds the lock on the session.
    Busy = 2,
    /// The operation clashes with the state on disk (an existing id, a conflict in a rewind plan).
    Conflict = 3,
    /// The caller passed something invalid: bad JSON, a bad id, a value over a limit.
    InvalidInput = 4,
    /// Stored data cannot be understood and cannot be repaired automatically.
    Corrupt = 5,
    /// The operating system reported an I/O error.
    Io = 6,
    /// The store was written by a newer, incompatible format version.
    Unsupported = 7,
    /// A bug in sessionkit (a panic caught at a boundary, a broken invariant).
    Internal = 8,
}

impl ErrorKind {
    /// A short stable name, used by the bindings as an error code string.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "NOT_FOUND",
            ErrorKind::Busy => "BUSY",
            ErrorKind::Conflict => "CONFLICT",
            ErrorKind::InvalidInput => "INVALID_INPUT",
            ErrorKind::Corrupt => "CORRUPT",
            ErrorKind::Io => "IO",
            ErrorKind::Unsupported => "UNSUPPORTED",
            ErrorKind::Internal => "INTERNAL",
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
    /// The stable kind of this error, which the C ABI and bindings map from.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::NotFound(_) => ErrorKind::NotFound,
            Error::Busy(_) => ErrorKind::Busy,
            Error::Conflict(_) => ErrorKind::Conflict,
            Error::InvalidInput(_) => ErrorKind::InvalidInput,
            Error::Corrupt(_) => ErrorKind::Corrupt,
            Error::Io { .. } => ErrorKind::Io,
            Error::Unsupported(_) => ErrorKind::Unsupported,
            Error::Internal(_) => ErrorKind::Internal,
        }
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
