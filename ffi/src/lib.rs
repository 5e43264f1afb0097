//! sessionkit: the C ABI of the session store for coding agents.
//!
//! The header include/sessionkit.h is generated from the sessionkit-ffi crate
//! (ffi/) by cbindgen: this text is the crate's documentation, and each
//! function's comment is the function's.
//!
//! Requirements
//! ------------
//! The header needs C99 or C++11, or later (it includes <stdbool.h> and
//! <stdint.h> and uses // comments). `pkg-config --cflags --libs sessionkit`
//! gives the flags; add `--static` for libsessionkit.a, which also needs the
//! system libraries it lists.
//!
//! Conventions
//! -----------
//! Handles: sk_store, sk_session, sk_subagent, sk_view, sk_remote and
//!   sk_follower are opaque. Each is released by its *_close(&handle), which
//!   sets the caller's pointer to NULL; *_close(NULL) and
//!   *_close(&null_handle) do nothing. A closed handle used
//!   again is therefore NULL and gives SK_NULL_ARGUMENT. Using a stale copy of
//!   a closed pointer is undefined behaviour.
//! Status: every function that can fail returns an sk_status (0 = SK_OK; the
//!   numbers are fixed, see below). Out-parameters are written only on SK_OK.
//! Strings: arguments are NUL-terminated UTF-8 (SK_INVALID_UTF8 otherwise);
//!   messages, options and results are JSON text. Strings returned through a
//!   `char **` out-parameter belong to the caller and are freed with
//!   sk_string_free, and with nothing else.
//! Nullability: every pointer argument is required unless its documentation
//!   says it may be NULL (options, some ids): NULL gives SK_NULL_ARGUMENT. This
//!   includes every out-parameter: NULL is an error, never a way to ignore a
//!   result; pass a variable and free what it receives.
//! Errors: sk_last_error() returns a message for the last failed call on the
//!   calling thread, "<function>: <what was wrong>", borrowed and valid until
//!   the next status-returning call on that thread; every status-returning call
//!   clears it at its start. sk_last_errno() returns the operating system's
//!   error number behind it (ENOSPC, EACCES, ...), 0 if none. sk_version,
//!   sk_abi_version, sk_status_name, sk_last_error, sk_last_errno,
//!   sk_string_free and the *_close functions returning void do not touch it.
//! Panics: a panic inside the library never unwinds into C: the call returns
//!   SK_INTERNAL and the last error holds the panic's message and source
//!   location. Nothing is printed: at its first call the library installs a
//!   panic hook in its own copy of the Rust runtime, which keeps panics inside
//!   calls quiet and passes any other (one on a background thread) to Rust's
//!   default hook, which prints it to stderr. A Rust program that loads the
//!   library keeps its own runtime and hook, which the library does not touch.
//!
//! Store and defaults
//! ------------------
//! Home: sk_store_open keeps every project's sessions under one home directory:
//!   the `home` option, else $SESSIONKIT_HOME (if set and not empty), else
//!   $HOME/.sessionkit. A relative home is resolved against the current
//!   directory once, when the store is opened (a later chdir() does not move
//!   the store); an empty `home` option is SK_INVALID_INPUT. The sessions of a
//!   project are in <home>/projects/<code>/ (sk_store_info names it), created
//!   with mode 0700, files 0600.
//! Defaults: NULL or "" options are {"durability": "onSync", "maxSessions": 0,
//!   "trashGraceSecs": 604800, "busyTimeoutMs": 5000, "blobThreshold": 262144,
//!   "maxRecordBytes": 4194304}: appends are fsynced by sk_session_sync, and every session is
//!   kept. A host that sets maxSessions opts in to retention: creating or
//!   forking a session then moves the least recently updated sessions of the
//!   project beyond maxSessions to the trash (their logs and subagents; their
//!   file-history branches are kept), except sessions open for writing. The ids
//!   moved are returned once, in the "pruned" array of sk_session_info on the
//!   new session's handle; sk_store_list_trash lists them,
//!   sk_store_restore_session brings one back, and sk_store_gc purges those
//!   trashed more than trashGraceSecs ago.
//! Busy: a session (or subagent) open for writing holds an exclusive lock on
//!   its log. sk_session_open, sk_session_open_subagent, sk_store_rename_session
//!   and sk_store_delete_session try to take it for about 63 ms (tries 0.1 ms
//!   apart, doubling up to 4 ms) before they return SK_BUSY, so that a writer
//!   that is just closing does not make them fail; pruning tries each old
//!   session the same way and skips it if it stays busy. A shared writer
//!   (sk_session_open_shared, sk_session_open_conversation) holds the lock
//!   only for the moment of each write, waiting up to busyTimeoutMs for it,
//!   so any number of them, in any threads and processes, write one session. Index updates wait, without a
//!   time limit, for the project's lock file, which another process holds only
//!   while it writes the index.
//!
//! Limits
//! ------
//! Ids: session and subagent ids are 1 to 128 characters of A-Z a-z 0-9 . _ -,
//!   not starting with '.'; message ids 1 to 128 characters without control
//!   characters. Others are SK_INVALID_INPUT.
//! Sizes: a message's `content` or `contentParams` whose JSON is over
//!   blobThreshold bytes is stored once beside the log, so its size is bounded
//!   only by memory; the rest of a message's log line must fit in
//!   maxRecordBytes (SK_INVALID_INPUT otherwise).
//! Nesting: a log line holds at most 100 levels of JSON arrays and objects. A
//!   message object counts as one level; a patch, a state update, subagent
//!   metadata and a subagent result sit one level inside their record, so they
//!   may nest 99. Deeper values are SK_INVALID_INPUT and nothing is written.
//! Titles: an index title keeps the first 100 characters.
//! Errors: a last-error message over 16 KiB keeps its start and its end.
//!
//! Threads, fork() and unloading
//! -----------------------------
//! Threads: sk_store, sk_session, sk_subagent, sk_view, sk_remote and
//!   sk_follower may each be shared by any number of threads at once (the
//!   calls on one sk_remote or sk_follower take turns on its connection);
//!   only closing must not race other uses of the same handle. The last error
//!   is per thread.
//! Background threads: after a call that writes file-history snapshots
//!   (sk_session_user_input, sk_session_before_edit, sk_session_after_edit,
//!   sk_session_rewind, sk_session_restore_snapshot), the library may merge
//!   the snapshot pack files on its own thread, "sessionkit-background",
//!   started at the first merge and kept for the life of the process (it
//!   sleeps between merges, at most one merge per project at a time). No
//!   call waits for it. Reading a large log may also use a second thread for
//!   the length of the call.
//! fork(): a child inherits the parent's handles but may not write through
//!   them. A call through an inherited sk_session or sk_subagent that writes
//!   (appending, patching, state, head and title changes, sync, subagents) or
//!   uses the file history (snapshots, tracked files, changes, rewinds and
//!   their plans: loading it writes) fails with SK_INVALID_INPUT, naming the
//!   session and both process ids, and writes nothing. SK_INVALID_INPUT, not
//!   SK_BUSY: the handle is unusable in the child for good, and waiting would
//!   not help. Reads work (sk_session_id, _info, _read, _active_path,
//!   _model_view, _select_compaction; sk_store_* and sk_view_*), and *_close
//!   frees the child's copy without writing. While the child keeps its copy
//!   open, the session's lock stays held (the lock belongs to the open file
//!   both processes share; exec() closes it): a parent that closes and reopens
//!   the session then gets SK_BUSY. To write in the child, close the inherited
//!   handle, then open the session (once the parent has closed it) or fork it
//!   with sk_session_fork. A fork() waits for a running background pack
//!   merge to end (the library's own thread), and no merge starts while a fork
//!   is made; a child that merges starts its own thread. As with any library that uses threads and locks, fork() while
//!   another thread of the host is inside a sessionkit call may leave a lock
//!   held in the child for good: a child that will call sessionkit should be
//!   forked while no other host thread is in it.
//!   An inherited sk_remote or sk_follower shares its database connection
//!   with the parent: the child must neither use nor close it (closing it
//!   would end the parent's connection too); it opens its own instead.
//! Unloading: do not dlclose() the library. Its background thread runs its
//!   code until the process ends, and there is no call to stop it; load the
//!   library once for the life of the process.
#![allow(non_camel_case_types)]
// Built by `cargo fuzz` as the `abi` target's program (see abi_fuzz.rs).
#![cfg_attr(fuzzing, no_main)]

use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::de::DeserializeOwned;
use serde_json::Value;
use sessionkit::Error;

#[cfg(any(test, fuzzing))]
mod abi_fuzz;
mod checkpoints;
mod config;
mod import;
mod remote;
mod session;
mod store;
mod subagent;
mod view;

pub use checkpoints::*;
pub use config::*;
pub use import::*;
pub use remote::*;
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
    /// This thread is inside a call: a panic becomes a status, not stderr text.
    static IN_CALL: Cell<bool> = const { Cell::new(false) };
    /// Where the last panic inside a call on this thread happened.
    static PANIC_AT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Install, once, a panic hook that keeps panics inside calls quiet (the status
/// and the last error report them, with their location) and hands every other
/// panic to the hook it replaced. The hook belongs to this library's own copy
/// of the Rust runtime, so a Rust host's hook is never touched.
fn install_panic_hook() {
    // Not a `Once`: a fork() while another thread waited on it would leave
    // the child waiting for good. Two racing first calls install it once.
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::AcqRel) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if IN_CALL.try_with(Cell::get).unwrap_or(false) {
            let at = info.location().map(|l| l.to_string());
            let _ = PANIC_AT.try_with(|p| *p.borrow_mut() = at);
        } else {
            previous(info);
        }
    }));
}

/// Run `body`, catching a panic without printing it.
fn quietly<T>(body: impl FnOnce() -> T) -> std::thread::Result<T> {
    install_panic_hook();
    let outer = IN_CALL.replace(true);
    let r = catch_unwind(AssertUnwindSafe(body));
    IN_CALL.set(outer);
    r
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
    match quietly(body) {
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
            let at = PANIC_AT
                .take()
                .map(|l| format!(" (at {l})"))
                .unwrap_or_default();
            set_last_error(
                function,
                &format!("internal error: panic caught at the C boundary: {what}{at}"),
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

/// An optional options object passed as `options_json`: NULL gives
/// `T::default()`, else `parse` of the text (which gives the defaults for "").
///
/// # Safety
///
/// `p` is NULL or NUL-terminated.
pub(crate) unsafe fn opt_options<T: Default>(
    p: *const c_char,
    parse: impl FnOnce(&str) -> sessionkit::Result<T>,
) -> FfiResult<T> {
    // SAFETY: forwarded from the caller.
    match unsafe { opt_str(p, "options_json") }? {
        None => Ok(T::default()),
        Some(text) => Ok(parse(text)?),
    }
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
    sessionkit::parse_json(&format!("argument `{name}`"), s).map_err(FfiError::from)
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

pub(crate) use sessionkit::type_name as json_kind;

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

/// Close a handle for a `*_close` function returning void: a panic while
/// dropping it is caught and, having no status to report it, dropped.
pub(crate) unsafe fn close_handle<T>(pp: *mut *mut T) {
    if quietly(|| {
        // SAFETY: forwarded from the caller.
        drop(unsafe { take_handle(pp) });
    })
    .is_err()
    {
        PANIC_AT.take();
    }
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

/// The table of enum values and defaults every interface shares, as JSON:
/// `{"enums": {"durability": [...], "status": [...], "rewindMode": [...],
/// "exportFormat", "importFormat", "memoryScope", "settingSource",
/// "writableSettingSource", "errorKind"}, "defaults": {"project": ".",
/// "storeOptions": {...}, "memoryScope": "project", "exportFormat": "jsonl",
/// "rewindMode": "both", "rewindTurns": 1, "rewindTurnsMode": "conversation",
/// "keepLastTurns": 2, "summaryTokens": 1000, "pushIntervalMs": 200,
/// "searchLimit": 20, "leaseTtlMs": 60000}}`. What an argument passed as NULL
/// (or an option left out) means.
///
/// Returns a static string: never NULL, never freed. Does not touch the last error.
#[no_mangle]
pub extern "C" fn sk_defaults() -> *const c_char {
    static DEFAULTS: std::sync::OnceLock<CString> = std::sync::OnceLock::new();
    DEFAULTS
        .get_or_init(|| CString::new(sessionkit::defaults_json()).expect("JSON text has no NUL"))
        .as_ptr()
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
    let _ = quietly(|| {
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
        assert!(msg.contains(&format!("(at {}:", file!())), "{msg}");
        assert_eq!(guard("sk_test", || Ok(())), sk_status::SK_OK);
        assert_eq!(unsafe { CStr::from_ptr(sk_last_error()) }.to_bytes(), b"");
    }

    const QUIET_CHILD: &str = "SK_TEST_QUIET_PANIC_CHILD";

    /// Run by `a_panic_inside_a_call_prints_nothing` in a child process (with
    /// `--ignored --exact`, so a plain run never counts it as passing).
    #[test]
    #[ignore = "entry point of a child process of a_panic_inside_a_call_prints_nothing"]
    fn quiet_panic_child() {
        assert!(
            std::env::var_os(QUIET_CHILD).is_some(),
            "a child of a_panic_inside_a_call_prints_nothing"
        );
        let st = guard("sk_test", || panic!("inside-a-call"));
        assert_eq!(st, sk_status::SK_INTERNAL);
        // A panic outside any call goes to the hook that was there before.
        let _ = catch_unwind(|| panic!("outside-any-call"));
    }

    #[test]
    fn a_panic_inside_a_call_prints_nothing() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--ignored",
                "--exact",
                "tests::quiet_panic_child",
                "--nocapture",
            ])
            .env(QUIET_CHILD, "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "child failed: {stderr}");
        assert!(!stderr.contains("inside-a-call"), "{stderr}");
        assert!(stderr.contains("outside-any-call"), "{stderr}");
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
