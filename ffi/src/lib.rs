//! The C ABI of sessionkit.
//!
//! Conventions (the header `include/sessionkit.h` is generated from this crate by
//! cbindgen and repeats them):
//!
//! - Opaque handles: `sk_store`, `sk_session`, `sk_subagent`, `sk_view`. Each is
//!   released by its `*_close(&handle)` function, which sets the caller's pointer
//!   to NULL, so a closed handle used again is a NULL handle and gives
//!   `SK_NULL_ARGUMENT`. `*_close(NULL)` and `*_close(&null_handle)` do nothing.
//! - Every function that can fail returns an `sk_status`; results go through
//!   out-parameters, which are written only when the status is `SK_OK`.
//! - Messages, options and results cross as NUL-terminated UTF-8 JSON text. Strings
//!   the library returns (`char **out`) are owned by the caller and freed with
//!   `sk_string_free`, and with nothing else.
//! - A thread-local last-error message, cleared at the start of every call that
//!   returns an `sk_status`, says what went wrong; read it with `sk_last_error`,
//!   and the operating system's error number behind it with `sk_last_errno`.
//! - A panic never crosses the boundary: it becomes `SK_INTERNAL`.
//! - NULL where a pointer is required gives `SK_NULL_ARGUMENT`; text that is not
//!   UTF-8 gives `SK_INVALID_UTF8`; nothing crashes.
#![allow(non_camel_case_types)]

use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use serde::de::DeserializeOwned;
use serde_json::Value;
use sessionkit::Error;

mod session;
mod store;
mod subagent;
mod view;

pub use session::*;
pub use store::*;
pub use subagent::*;
pub use view::*;

/// The version of the C ABI. It changes only when a function's signature or
/// meaning changes incompatibly; adding functions or statuses keeps it.
pub const SK_ABI_VERSION: u32 = 1;

/// The result of every call that can fail. The numbers are fixed: 1 to 8 are the
/// error kinds of the Rust core (`sessionkit::ErrorKind`), 9 and 10 are the C
/// ABI's own. New numbers may be added; treat an unknown one as an error.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum sk_status {
    /// Success; the out-parameters were written.
    SK_OK = 0,
    /// A session, message, agent, snapshot or file that was asked for does not
    /// exist; also any file or directory of the store that the operating system
    /// reports missing (the message names the id or the path).
    SK_NOT_FOUND = 1,
    /// Another writer (in this or another process) holds the session's lock.
    SK_BUSY = 2,
    /// The operation clashes with the state on disk (an existing id, files changed
    /// outside the agent in a rewind).
    SK_CONFLICT = 3,
    /// An argument is invalid: bad JSON, JSON of the wrong shape, a bad id, a
    /// value over a limit.
    SK_INVALID_INPUT = 4,
    /// Stored data cannot be understood and cannot be repaired automatically.
    SK_CORRUPT = 5,
    /// The operating system reported an I/O error (other than a missing file,
    /// which is `SK_NOT_FOUND`); `sk_last_errno` gives its error number.
    SK_IO = 6,
    /// The store was written by a newer, incompatible format version.
    SK_UNSUPPORTED = 7,
    /// A bug in sessionkit: a panic caught at the boundary, a broken invariant.
    SK_INTERNAL = 8,
    /// A pointer argument that must not be NULL was NULL (this includes a handle
    /// that was closed, since closing sets it to NULL).
    SK_NULL_ARGUMENT = 9,
    /// A string argument is not valid UTF-8.
    SK_INVALID_UTF8 = 10,
}

impl sk_status {
    /// Every status, in the order of their numbers.
    const ALL: [sk_status; 11] = [
        sk_status::SK_OK,
        sk_status::SK_NOT_FOUND,
        sk_status::SK_BUSY,
        sk_status::SK_CONFLICT,
        sk_status::SK_INVALID_INPUT,
        sk_status::SK_CORRUPT,
        sk_status::SK_IO,
        sk_status::SK_UNSUPPORTED,
        sk_status::SK_INTERNAL,
        sk_status::SK_NULL_ARGUMENT,
        sk_status::SK_INVALID_UTF8,
    ];

    fn from_code(code: i32) -> Option<sk_status> {
        sk_status::ALL.into_iter().find(|s| *s as i32 == code)
    }

    /// The enumerator's name without `SK_`: for the core's kinds, the kind's
    /// name (a test holds them to `ErrorKind::name`).
    fn name(self) -> &'static CStr {
        match self {
            sk_status::SK_OK => c"OK",
            sk_status::SK_NOT_FOUND => c"NOT_FOUND",
            sk_status::SK_BUSY => c"BUSY",
            sk_status::SK_CONFLICT => c"CONFLICT",
            sk_status::SK_INVALID_INPUT => c"INVALID_INPUT",
            sk_status::SK_CORRUPT => c"CORRUPT",
            sk_status::SK_IO => c"IO",
            sk_status::SK_UNSUPPORTED => c"UNSUPPORTED",
            sk_status::SK_INTERNAL => c"INTERNAL",
            sk_status::SK_NULL_ARGUMENT => c"NULL_ARGUMENT",
            sk_status::SK_INVALID_UTF8 => c"INVALID_UTF8",
        }
    }

    /// The status of a core error kind: the one with the kind's number.
    fn from_kind(kind: sessionkit::ErrorKind) -> sk_status {
        sk_status::from_code(kind.code()).unwrap_or(sk_status::SK_INTERNAL)
    }
}

/// An error on its way to the caller: a status, the last-error message and the
/// operating system's error number (0 if none).
pub(crate) struct FfiError {
    status: sk_status,
    message: String,
    errno: c_int,
}

impl FfiError {
    pub(crate) fn new(status: sk_status, message: impl Into<String>) -> FfiError {
        FfiError {
            status,
            message: message.into(),
            errno: 0,
        }
    }
    pub(crate) fn invalid(message: impl Into<String>) -> FfiError {
        FfiError::new(sk_status::SK_INVALID_INPUT, message)
    }
}

impl From<Error> for FfiError {
    fn from(e: Error) -> FfiError {
        FfiError {
            errno: e.os_errno().unwrap_or(0),
            ..FfiError::new(sk_status::from_kind(e.kind()), e.to_string())
        }
    }
}

pub(crate) type FfiResult<T = ()> = Result<T, FfiError>;

/// Longest last-error message kept; longer ones (an error quoting a huge
/// argument) keep their first and last kilobytes and say how much was cut.
const MAX_ERROR_LEN: usize = 16 * 1024;

thread_local! {
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
    static LAST_ERRNO: Cell<c_int> = const { Cell::new(0) };
}

fn set_last_error(function: &str, message: &str) {
    let mut text = format!("{function}: {message}");
    if text.len() > MAX_ERROR_LEN {
        // Keep the start (what failed, with what) and the end (why), e.g. of a
        // message quoting a 100 MB argument.
        let mut head = MAX_ERROR_LEN - 1024;
        while !text.is_char_boundary(head) {
            head -= 1;
        }
        let mut tail = text.len() - 1024;
        while !text.is_char_boundary(tail) {
            tail += 1;
        }
        text = format!(
            "{}... ({} bytes cut) ...{}",
            &text[..head],
            tail - head,
            &text[tail..]
        );
    }
    let c = CString::new(text.replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = Some(c));
}

fn clear_last_error() {
    LAST_ERROR.with(|e| *e.borrow_mut() = None);
    LAST_ERRNO.with(|e| e.set(0));
}

/// Run the body of an export: clear the last error, catch panics, turn errors
/// into a status and a last-error message.
pub(crate) fn guard(function: &'static str, body: impl FnOnce() -> FfiResult) -> sk_status {
    clear_last_error();
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => sk_status::SK_OK,
        Ok(Err(e)) => {
            set_last_error(function, &e.message);
            LAST_ERRNO.with(|n| n.set(e.errno));
            e.status
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic payload".into());
            set_last_error(
                function,
                &format!("internal error: panic caught at the C boundary: {what}"),
            );
            sk_status::SK_INTERNAL
        }
    }
}

// ---- argument helpers -------------------------------------------------------

/// A required UTF-8 string argument.
pub(crate) unsafe fn arg_str<'a>(p: *const c_char, name: &str) -> FfiResult<&'a str> {
    if p.is_null() {
        return Err(FfiError::new(
            sk_status::SK_NULL_ARGUMENT,
            format!("argument `{name}` is NULL"),
        ));
    }
    // SAFETY: the caller promises a NUL-terminated string.
    let bytes = unsafe { CStr::from_ptr(p) };
    bytes.to_str().map_err(|e| {
        FfiError::new(
            sk_status::SK_INVALID_UTF8,
            format!(
                "argument `{name}` is not valid UTF-8 (first bad byte at offset {})",
                e.valid_up_to()
            ),
        )
    })
}

/// An optional UTF-8 string argument (NULL means absent).
pub(crate) unsafe fn opt_str<'a>(p: *const c_char, name: &str) -> FfiResult<Option<&'a str>> {
    if p.is_null() {
        Ok(None)
    } else {
        // SAFETY: forwarded from the caller.
        unsafe { arg_str(p, name) }.map(Some)
    }
}

/// A required JSON argument of any shape.
pub(crate) unsafe fn arg_json(p: *const c_char, name: &str) -> FfiResult<Value> {
    // SAFETY: forwarded from the caller.
    let s = unsafe { arg_str(p, name) }?;
    serde_json::from_str(s)
        .map_err(|e| FfiError::invalid(format!("argument `{name}` is not valid JSON: {e}")))
}

/// A required JSON argument of a given shape, described by `shape` in errors.
pub(crate) unsafe fn arg_typed<T: DeserializeOwned>(
    p: *const c_char,
    name: &str,
    shape: &str,
) -> FfiResult<T> {
    // SAFETY: forwarded from the caller.
    let v = unsafe { arg_json(p, name) }?;
    serde_json::from_value(v)
        .map_err(|e| FfiError::invalid(format!("argument `{name}` must be {shape}: {e}")))
}

/// A JSON object argument (a message, a patch, a state update).
pub(crate) unsafe fn arg_object(p: *const c_char, name: &str) -> FfiResult<Value> {
    // SAFETY: forwarded from the caller.
    let v = unsafe { arg_json(p, name) }?;
    if !v.is_object() {
        return Err(FfiError::invalid(format!(
            "argument `{name}` must be a JSON object, not {}",
            json_kind(&v)
        )));
    }
    Ok(v)
}

pub(crate) use sessionkit::records::type_name as json_kind;

/// A handle argument.
pub(crate) unsafe fn arg_handle<'a, T>(p: *const T, name: &str) -> FfiResult<&'a T> {
    if p.is_null() {
        return Err(FfiError::new(
            sk_status::SK_NULL_ARGUMENT,
            format!("handle `{name}` is NULL (never opened, or already closed)"),
        ));
    }
    // SAFETY: the caller promises a live handle from this library.
    Ok(unsafe { &*p })
}

/// An out-parameter; checked before any work is done.
pub(crate) fn arg_out<T>(p: *mut T, name: &str) -> FfiResult<*mut T> {
    if p.is_null() {
        return Err(FfiError::new(
            sk_status::SK_NULL_ARGUMENT,
            format!("out-parameter `{name}` is NULL"),
        ));
    }
    Ok(p)
}

/// Write a string result to a checked out-parameter.
pub(crate) unsafe fn put_string(out: *mut *mut c_char, s: String) -> FfiResult {
    let c = CString::new(s).map_err(|_| {
        FfiError::new(
            sk_status::SK_INTERNAL,
            "internal error: a result string contains a NUL byte",
        )
    })?;
    // SAFETY: `out` was checked non-NULL by `arg_out`.
    unsafe { *out = c.into_raw() };
    Ok(())
}

/// Write a JSON result to a checked out-parameter.
pub(crate) unsafe fn put_json<T: serde::Serialize>(out: *mut *mut c_char, v: &T) -> FfiResult {
    let s = serde_json::to_string(v).map_err(|e| {
        FfiError::new(
            sk_status::SK_INTERNAL,
            format!("internal error: cannot serialise a result: {e}"),
        )
    })?;
    // SAFETY: forwarded from the caller.
    unsafe { put_string(out, s) }
}

/// Write a handle result to a checked out-parameter.
pub(crate) unsafe fn put_handle<T>(out: *mut *mut T, v: T) -> FfiResult {
    // SAFETY: `out` was checked non-NULL by `arg_out`.
    unsafe { *out = Box::into_raw(Box::new(v)) };
    Ok(())
}

/// Take a handle back from the caller's pointer, setting it to NULL.
pub(crate) unsafe fn take_handle<T>(pp: *mut *mut T) -> Option<Box<T>> {
    if pp.is_null() {
        return None;
    }
    // SAFETY: the caller promises `pp` points to a handle pointer (or NULL) of
    // this library that no other thread uses.
    unsafe {
        let p = *pp;
        *pp = std::ptr::null_mut();
        if p.is_null() {
            None
        } else {
            Some(Box::from_raw(p))
        }
    }
}

// ---- library-wide functions -------------------------------------------------

/// The library's version, e.g. "0.1.0" (the same as `SK_VERSION` in the header
/// the program was compiled with, unless it runs against another build).
///
/// Returns a static string: never NULL, never freed. Does not touch the last error.
#[no_mangle]
pub extern "C" fn sk_version() -> *const c_char {
    static VERSION: &CStr = {
        const V: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
        match CStr::from_bytes_with_nul(V.as_bytes()) {
            Ok(c) => c,
            Err(_) => panic!("version contains a NUL"),
        }
    };
    VERSION.as_ptr()
}

/// The ABI version of the library (`SK_ABI_VERSION` of the header it was built
/// with). A program compares it with its own `SK_ABI_VERSION` to detect a library
/// that is not compatible. Does not touch the last error.
#[no_mangle]
pub extern "C" fn sk_abi_version() -> u32 {
    SK_ABI_VERSION
}

/// A static name for a status number ("OK", "NOT_FOUND", ...; "UNKNOWN" for a
/// number this library does not define). Never NULL, never freed. Does not
/// touch the last error.
#[no_mangle]
pub extern "C" fn sk_status_name(status: i32) -> *const c_char {
    match sk_status::from_code(status) {
        Some(s) => s.name().as_ptr(),
        None => c"UNKNOWN".as_ptr(),
    }
}

/// The message of the last error on this thread, e.g. `"sk_session_open: not
/// found: session 0190..."`: the function's name, then what was wrong.
///
/// Returns a borrowed string, owned by the library and valid until the next call
/// of a status-returning function on this thread (each such call clears it at its
/// start). Returns "" (never NULL) when the last call succeeded. Do not free it.
/// Messages longer than 16 KiB keep their start and end, with the cut marked. Does not itself clear the last error.
#[no_mangle]
pub extern "C" fn sk_last_error() -> *const c_char {
    LAST_ERROR.with(|e| match &*e.borrow() {
        Some(c) => c.as_ptr(),
        None => c"".as_ptr(),
    })
}

/// The operating system's error number (`errno`) behind the last error on this
/// thread, e.g. `ENOSPC` (disk full) or `EACCES` (permission denied), also when
/// it came through the file history's git library; 0 when the last call
/// succeeded or its error did not come from the operating system. Set and
/// cleared with the message of `sk_last_error`. Does not itself clear the last
/// error.
#[no_mangle]
pub extern "C" fn sk_last_errno() -> c_int {
    LAST_ERRNO.with(Cell::get)
}

/// Free a string that this library returned through a `char **` out-parameter.
/// `sk_string_free(NULL)` does nothing. Does not touch the last error.
///
/// # Safety
///
/// `s` is NULL or a string returned by this library that was not freed yet; it
/// must not be used afterwards. Strings from `sk_version`, `sk_status_name` and
/// `sk_last_error` are not to be freed.
#[no_mangle]
pub unsafe extern "C" fn sk_string_free(s: *mut c_char) {
    if s.is_null() {
        return;
    }
    let _ = catch_unwind(|| {
        // SAFETY: the caller promises `s` came from `CString::into_raw` here.
        drop(unsafe { CString::from_raw(s) });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_internal_with_a_message() {
        let st = guard("sk_test", || panic!("boom"));
        assert_eq!(st, sk_status::SK_INTERNAL);
        let msg = unsafe { CStr::from_ptr(sk_last_error()) }.to_str().unwrap();
        assert!(msg.starts_with("sk_test: internal error: panic"), "{msg}");
        assert!(msg.contains("boom"), "{msg}");
        assert_eq!(guard("sk_test", || Ok(())), sk_status::SK_OK);
        assert_eq!(unsafe { CStr::from_ptr(sk_last_error()) }.to_bytes(), b"");
    }

    #[test]
    fn the_last_errno_is_the_errors_and_cleared_by_the_next_call() {
        let os = |n| Error::Io {
            path: "/x".into(),
            source: std::io::Error::from_raw_os_error(n),
        };
        let st = guard("sk_test", || Err(os(28).into()));
        assert_eq!((st, sk_last_errno()), (sk_status::SK_IO, 28));
        // A missing file is SK_NOT_FOUND, and keeps its number too.
        let st = guard("sk_test", || Err(os(2).into()));
        assert_eq!((st, sk_last_errno()), (sk_status::SK_NOT_FOUND, 2));
        let st = guard("sk_test", || Err(FfiError::invalid("bad")));
        assert_eq!((st, sk_last_errno()), (sk_status::SK_INVALID_INPUT, 0));
        guard("sk_test", || Err(os(13).into()));
        assert_eq!(guard("sk_test", || Ok(())), sk_status::SK_OK);
        assert_eq!(sk_last_errno(), 0);
    }

    #[test]
    fn version_is_the_crate_version() {
        let v = unsafe { CStr::from_ptr(sk_version()) };
        assert_eq!(v.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
        assert_eq!(v.to_str().unwrap(), sessionkit::VERSION);
        assert_eq!(sk_abi_version(), SK_ABI_VERSION);
    }

    #[test]
    fn long_messages_are_cut() {
        let big = format!("{} is bad", "x".repeat(1 << 20));
        let st = guard("sk_test", || Err(FfiError::invalid(big.clone())));
        let msg = unsafe { CStr::from_ptr(sk_last_error()) }.to_str().unwrap();
        assert!(msg.starts_with("sk_test: xxx") && msg.ends_with("xxx is bad"));
        assert_eq!(st, sk_status::SK_INVALID_INPUT);
        let msg = unsafe { CStr::from_ptr(sk_last_error()) }.to_str().unwrap();
        assert!(msg.len() < MAX_ERROR_LEN + 64);
        assert!(msg.contains("bytes cut) ..."), "{}", &msg[msg.len() - 40..]);
    }

    /// `sk_status` spells its numbers out for cbindgen; they and the names
    /// must be the core's table.
    #[test]
    fn every_error_kind_has_the_status_of_its_number_and_name() {
        use sessionkit::ErrorKind;
        let name_of = |n: i32| {
            unsafe { CStr::from_ptr(sk_status_name(n)) }
                .to_str()
                .unwrap()
        };
        for &k in ErrorKind::ALL {
            let s = sk_status::from_kind(k);
            assert_eq!(s as i32, k.code(), "{k:?}");
            assert_eq!(format!("{s:?}"), format!("SK_{}", k.name()));
            assert_eq!(name_of(k.code()), k.name());
        }
        // The C ABI's own statuses lie outside the core's numbers.
        for (i, s) in sk_status::ALL.into_iter().enumerate() {
            assert_eq!(s as i32, i as i32, "{s:?}");
            assert_eq!(format!("{s:?}"), format!("SK_{}", name_of(i as i32)));
            let own = matches!(
                s,
                sk_status::SK_OK | sk_status::SK_NULL_ARGUMENT | sk_status::SK_INVALID_UTF8
            );
            assert_eq!(
                sessionkit::ErrorKind::from_code(i as i32).is_none(),
                own,
                "{s:?}"
            );
        }
        assert_eq!(name_of(sk_status::ALL.len() as i32), "UNKNOWN");
        assert_eq!(name_of(-1), "UNKNOWN");
    }
}
