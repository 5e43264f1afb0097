//! `sk_remote` and `sk_follower`: a project's sessions shared through
//! PostgreSQL (docs/DISTRIBUTED.md), the core's `Remote` and `Follower`.

use std::ffi::c_char;
use std::sync::Mutex;
use std::time::Duration;

use sessionkit::{BackgroundPush, Follower, Lease, Remote, RemoteOptions, Store};

use crate::store::sk_store;
use crate::{
    arg_handle, arg_out, arg_str, close_handle, guard, opt_str, put_handle, put_json, put_string,
    sk_status, take_handle, FfiError, FfiResult,
};

/// A connection to the shared PostgreSQL database for the project of the store
/// it was opened from; it pushes from and pulls into that store.
///
/// Thread safety: an `sk_remote` may be used from any number of threads at
/// once (the calls take turns on its one connection); only `sk_remote_close`
/// must not run concurrently with other uses of the handle. It stays valid
/// after its store is closed.
pub struct sk_remote {
    remote: Remote,
    store: Store,
}

/// A session followed as other machines push it, on a connection of its own.
///
/// Thread safety: like `sk_remote` (calls take turns); it stays valid after
/// its remote is closed.
pub struct sk_follower {
    follower: Mutex<Follower>,
}

unsafe fn arg_lease(p: *const c_char) -> FfiResult<Lease> {
    // SAFETY: forwarded from the caller.
    Ok(Lease::from_json(unsafe { arg_str(p, "lease_json") }?)?)
}

/// Connect to the shared database for the project of `store`, creating or
/// migrating its schema (docs/DISTRIBUTED.md).
///
/// - `options_json`: NULL, "" or a JSON object: `url` (a libpq connection
///   string, `host=... dbname=...` or `postgresql://...`; default: the
///   environment variable SESSIONKIT_REMOTE, else the setting `remote.url`),
///   `project` (the name the project's sessions share on the remote; default:
///   the store's project code), `holder` (who takes leases, shown to others
///   who get SK_BUSY; default "<host name>:<process id>"), `leaseTtlMs` (how
///   long a lease lasts unless renewed; default 60000, at most a day),
///   `mapPaths` (`[{"from", "to"}]`, absolute paths: with no `project`, the
///   name is the project code of this store's root with the longest `to`
///   prefix replaced by its `from`, where the project sat on the machines
///   that pushed).
/// - `out_remote`: receives the handle, to be closed with `sk_remote_close`.
///
/// Blocks until the server answers or the connection fails (the string's
/// `connect_timeout` bounds it). TLS is set as in libpq, by `sslmode` and
/// `sslrootcert` in the string (docs/DISTRIBUTED.md).
///
/// Errors: `SK_INVALID_INPUT` (bad options or connection string, a project
/// or holder name empty, over 200 bytes or holding a control character, no
/// remote configured), `SK_IO` (the server cannot be reached or failed; the
/// message names it without credentials), `SK_UNSUPPORTED` (the database's schema is
/// newer than this library).
///
/// # Safety
///
/// `store` is NULL or a live handle; `options_json` is NULL or NUL-terminated;
/// `out_remote` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sk_remote_open(
    store: *const sk_store,
    options_json: *const c_char,
    out_remote: *mut *mut sk_remote,
) -> sk_status {
    guard("sk_remote_open", || {
        // SAFETY: per the function's contract.
        unsafe {
            let store = arg_handle(store, "store")?.store.clone();
            let options = match opt_str(options_json, "options_json")? {
                Some(o) => RemoteOptions::from_json(o)?,
                None => RemoteOptions::default(),
            };
            let out = arg_out(out_remote, "out_remote")?;
            let remote = Remote::connect(&store, options)?;
            put_handle(out, sk_remote { remote, store })
        }
    })
}

/// Close the connection, free the handle and set `*remote` to NULL.
/// `sk_remote_close(NULL)` and a pointer to a NULL handle do nothing. Leases
/// taken through it are not released (they expire); followers opened from it
/// stay valid.
///
/// # Safety
///
/// `remote` is NULL or points to a handle pointer from `sk_remote_open` (or
/// NULL); no other thread uses the handle during or after the call.
#[no_mangle]
pub unsafe extern "C" fn sk_remote_close(remote: *mut *mut sk_remote) {
    // SAFETY: per the function's contract.
    unsafe { close_handle(remote) }
}

/// The project name the sessions are shared under, as a plain string.
///
/// # Safety
///
/// `remote` is NULL or a live handle; `out_project` is NULL or writable. Free
/// the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_remote_project(
    remote: *const sk_remote,
    out_project: *mut *mut c_char,
) -> sk_status {
    guard("sk_remote_project", || {
        // SAFETY: per the function's contract.
        unsafe {
            let r = &arg_handle(remote, "remote")?.remote;
            let out = arg_out(out_project, "out_project")?;
            put_string(out, r.project().to_string())
        }
    })
}

/// Who this handle takes leases as, as a plain string.
///
/// # Safety
///
/// `remote` is NULL or a live handle; `out_holder` is NULL or writable. Free
/// the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_remote_holder(
    remote: *const sk_remote,
    out_holder: *mut *mut c_char,
) -> sk_status {
    guard("sk_remote_holder", || {
        // SAFETY: per the function's contract.
        unsafe {
            let r = &arg_handle(remote, "remote")?.remote;
            let out = arg_out(out_holder, "out_holder")?;
            put_string(out, r.holder().to_string())
        }
    })
}

/// The schema version of the database (after the migration at open: this
/// library's).
///
/// Errors: `SK_IO` (the server failed or the connection was lost).
///
/// # Safety
///
/// `remote` is NULL or a live handle; `out_version` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sk_remote_schema_version(
    remote: *const sk_remote,
    out_version: *mut i64,
) -> sk_status {
    guard("sk_remote_schema_version", || {
        // SAFETY: per the function's contract.
        unsafe {
            let r = &arg_handle(remote, "remote")?.remote;
            let out = arg_out(out_version, "out_version")?;
            *out = r.schema_version()?;
            Ok(())
        }
    })
}

/// The project's sessions on the remote, by id: a JSON array of `{"id",
/// "pushedBytes", "entry", "leaseHolder"}`: the bytes of the log the database
/// holds, the index entry as last pushed (null before the first push) and the
/// holder of an unexpired lease (null if none).
///
/// Errors: `SK_IO`.
///
/// # Safety
///
/// `remote` is NULL or a live handle; `out_json` is NULL or writable. Free the
/// result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_remote_list(
    remote: *const sk_remote,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_remote_list", || {
        // SAFETY: per the function's contract.
        unsafe {
            let r = &arg_handle(remote, "remote")?.remote;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &r.list()?)
        }
    })
}

/// Take the lease of session `session_id`: while it is held, no other holder
/// can push lines to the session. `out_lease_json` receives the lease,
/// `{"sessionId", "holder", "token", "expiresMs"}`: `token` is the fencing
/// token (larger at every acquire), `expiresMs` the expiry in milliseconds
/// since the Unix epoch by the database's clock. Renew it before then with
/// `sk_remote_renew`; give it back with `sk_remote_release`.
///
/// Errors: `SK_BUSY` while another holder's lease has not expired (the last
/// error names the holder and the expiry), `SK_INVALID_INPUT` (an invalid id,
/// e.g. "../x" or ""), `SK_IO`.
///
/// # Safety
///
/// `remote` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
/// `out_lease_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_remote_acquire(
    remote: *const sk_remote,
    session_id: *const c_char,
    out_lease_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_remote_acquire", || {
        // SAFETY: per the function's contract.
        unsafe {
            let r = &arg_handle(remote, "remote")?.remote;
            let id = arg_str(session_id, "session_id")?;
            let out = arg_out(out_lease_json, "out_lease_json")?;
            put_json(out, &r.acquire(id)?)
        }
    })
}

/// Extend a lease (`lease_json` as `sk_remote_acquire` returned it) by the
/// handle's time to live; `out_lease_json` receives it with its new expiry.
///
/// Errors: `SK_BUSY` when another holder took the lease since (this holder may
/// no longer push), `SK_INVALID_INPUT` (not a lease), `SK_IO`.
///
/// # Safety
///
/// `remote` is NULL or a live handle; `lease_json` is NULL or NUL-terminated;
/// `out_lease_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_remote_renew(
    remote: *const sk_remote,
    lease_json: *const c_char,
    out_lease_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_remote_renew", || {
        // SAFETY: per the function's contract.
        unsafe {
            let r = &arg_handle(remote, "remote")?.remote;
            let lease = arg_lease(lease_json)?;
            let out = arg_out(out_lease_json, "out_lease_json")?;
            put_json(out, &r.renew(&lease)?)
        }
    })
}

/// Give a lease back (`lease_json` as `sk_remote_acquire` or `sk_remote_renew`
/// returned it). A lease already taken over is left to its new holder.
///
/// Errors: `SK_INVALID_INPUT` (not a lease), `SK_IO`.
///
/// # Safety
///
/// `remote` is NULL or a live handle; `lease_json` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn sk_remote_release(
    remote: *const sk_remote,
    lease_json: *const c_char,
) -> sk_status {
    guard("sk_remote_release", || {
        // SAFETY: per the function's contract.
        unsafe {
            let r = &arg_handle(remote, "remote")?.remote;
            Ok(r.release(&arg_lease(lease_json)?)?)
        }
    })
}

/// Push the whole lines of local session `session_id` that the remote lacks,
/// with the blobs they name, in batches (an interrupted push resumes where the
/// remote stands; nothing is sent twice).
///
/// - `lease_json`: NULL to take the session's lease for the push and give it
///   back after, or a lease the caller holds (from `sk_remote_acquire`).
/// - `out_report_json`: receives `{"sessionId", "from", "to", "batches",
///   "blobs"}`: the bytes the remote held before and holds now, the
///   transactions that sent lines and the blobs uploaded.
///
/// Errors: `SK_BUSY` (another holder's lease, or the given lease was taken
/// over: its lines are refused), `SK_CONFLICT` (the local log does not
/// continue the remote one: fork), `SK_NOT_FOUND` (no such local session),
/// `SK_INVALID_INPUT` (an invalid id, a lease for another session, a line over
/// 64 MiB: the lines before it are pushed), `SK_IO`.
///
/// # Safety
///
/// `remote` is NULL or a live handle; string arguments are NULL or
/// NUL-terminated; `out_report_json` is NULL or writable. Free the result with
/// `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_remote_push(
    remote: *const sk_remote,
    session_id: *const c_char,
    lease_json: *const c_char,
    out_report_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_remote_push", || {
        // SAFETY: per the function's contract.
        unsafe {
            let h = arg_handle(remote, "remote")?;
            let id = arg_str(session_id, "session_id")?;
            let lease = match opt_str(lease_json, "lease_json")? {
                Some(l) => Some(Lease::from_json(l)?),
                None => None,
            };
            let out = arg_out(out_report_json, "out_report_json")?;
            let report = match &lease {
                Some(l) => h.remote.push_with(&h.store, id, l)?,
                None => h.remote.push(&h.store, id)?,
            };
            put_json(out, &report)
        }
    })
}

/// Bring the local copy of session `session_id` up to the remote's: the
/// missing lines are appended (a new log is created), the blobs they name
/// fetched, the index entry refolded. Pulling again fetches only new lines;
/// the pulled log is the pushed one byte for byte. `out_report_json` receives
/// `{"sessionId", "from", "to", "blobs"}` (bytes of the local log before and
/// after, blobs fetched).
///
/// Errors: `SK_NOT_FOUND` (the remote lacks the session, or holds no line of
/// it: leased but never pushed; no local log is made), `SK_BUSY` (the
/// session is open for writing here), `SK_CONFLICT` (the local log is not a
/// prefix of the remote one: fork), `SK_INVALID_INPUT` (an invalid id),
/// `SK_IO`.
///
/// # Safety
///
/// `remote` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
/// `out_report_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_remote_pull(
    remote: *const sk_remote,
    session_id: *const c_char,
    out_report_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_remote_pull", || {
        // SAFETY: per the function's contract.
        unsafe {
            let h = arg_handle(remote, "remote")?;
            let id = arg_str(session_id, "session_id")?;
            let out = arg_out(out_report_json, "out_report_json")?;
            put_json(out, &h.remote.pull(&h.store, id)?)
        }
    })
}

/// Follow session `session_id` as others push it, from byte `from_offset` of
/// its log: a line boundary (0, or the length of a local copy), or a negative
/// number for where the remote stands now. The follower listens on a
/// connection of its own for each push's notification and reads anyway every
/// second when none comes. Close it with `sk_follower_close`.
///
/// Errors: `SK_NOT_FOUND` (the remote lacks the session), `SK_INVALID_INPUT`
/// (an invalid id, an offset past the remote's end), `SK_IO`.
///
/// # Safety
///
/// `remote` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
/// `out_follower` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sk_remote_follow(
    remote: *const sk_remote,
    session_id: *const c_char,
    from_offset: i64,
    out_follower: *mut *mut sk_follower,
) -> sk_status {
    guard("sk_remote_follow", || {
        // SAFETY: per the function's contract.
        unsafe {
            let r = &arg_handle(remote, "remote")?.remote;
            let id = arg_str(session_id, "session_id")?;
            let out = arg_out(out_follower, "out_follower")?;
            let from = u64::try_from(from_offset).ok();
            let follower = r.follow(id, from)?;
            put_handle(
                out,
                sk_follower {
                    follower: Mutex::new(follower),
                },
            )
        }
    })
}

/// Close a follower's connection, free the handle and set `*follower` to NULL.
/// `sk_follower_close(NULL)` and a pointer to a NULL handle do nothing.
///
/// # Safety
///
/// `follower` is NULL or points to a handle pointer from `sk_remote_follow`
/// (or NULL); no other thread uses the handle during or after the call.
#[no_mangle]
pub unsafe extern "C" fn sk_follower_close(follower: *mut *mut sk_follower) {
    // SAFETY: per the function's contract.
    unsafe { close_handle(follower) }
}

/// Run `f` on the follower; a panic in an earlier call (caught at the
/// boundary) leaves it usable, as its offset only moves with lines returned.
unsafe fn with_follower<T>(
    follower: *const sk_follower,
    f: impl FnOnce(&mut Follower) -> FfiResult<T>,
) -> FfiResult<T> {
    // SAFETY: forwarded from the caller.
    let h = unsafe { arg_handle(follower, "follower") }?;
    let mut guard = h.follower.lock().unwrap_or_else(|e| e.into_inner());
    f(&mut guard)
}

/// The byte offset of the log where the next lines start.
///
/// # Safety
///
/// `follower` is NULL or a live handle; `out_offset` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sk_follower_offset(
    follower: *const sk_follower,
    out_offset: *mut u64,
) -> sk_status {
    guard("sk_follower_offset", || {
        // SAFETY: per the function's contract.
        unsafe {
            let out = arg_out(out_offset, "out_offset")?;
            with_follower(follower, |f| {
                *out = f.offset();
                Ok(())
            })
        }
    })
}

/// The lines pushed past the follower's offset, in order, each once, waiting
/// up to `timeout_ms` milliseconds when there are none yet (0: do not wait).
/// `out_lines_json` receives a JSON array of strings, each one whole log line
/// with its "\n", so that their concatenation is the log's bytes from the old
/// offset to the new one; `[]` when none came in time. A line that is not
/// UTF-8 (a foreign writer's bytes) has its bad bytes replaced by U+FFFD here;
/// the offset still counts the bytes stored.
///
/// Errors: `SK_IO` (the connection was lost; the offset is unchanged, so a new
/// follower from `sk_follower_offset` goes on where this one stopped).
///
/// # Safety
///
/// `follower` is NULL or a live handle; `out_lines_json` is NULL or writable.
/// Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_follower_next(
    follower: *const sk_follower,
    timeout_ms: u32,
    out_lines_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_follower_next", || {
        // SAFETY: per the function's contract.
        unsafe {
            let out = arg_out(out_lines_json, "out_lines_json")?;
            let lines = with_follower(follower, |f| {
                Ok(f.next_lines(Duration::from_millis(u64::from(timeout_ms)))?)
            })?;
            let lines: Vec<String> = lines
                .iter()
                .map(|l| String::from_utf8_lossy(l).into_owned())
                .collect();
            put_json(out, &lines)
        }
    })
}

/// A session pushed in the background while this process writes it, on a
/// thread and a connection of its own (the core's `BackgroundPush`).
///
/// Thread safety: any number of threads may flush and read it at once; only
/// `sk_background_push_stop` and `_close` must not race other uses. A child
/// forked from the process that started it must neither use nor stop it: the
/// thread is the parent's (its calls fail with `SK_INVALID_INPUT` there).
pub struct sk_background_push {
    push: BackgroundPush,
}

/// Push session `session_id` in the background while this process writes it:
/// take its lease on a connection of its own, then push what its log gained
/// every `interval_ms` milliseconds (10 to a third of the lease time) and renew
/// the lease on time, so that no append waits for the network. End it with
/// `sk_background_push_stop` (which pushes the rest and gives the lease back).
///
/// Errors: `SK_BUSY` (another holder has the lease), `SK_INVALID_INPUT` (an
/// invalid id or interval), `SK_NOT_FOUND`, `SK_IO`.
///
/// # Safety
///
/// `remote` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
/// `out_push` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sk_remote_push_in_background(
    remote: *const sk_remote,
    session_id: *const c_char,
    interval_ms: u32,
    out_push: *mut *mut sk_background_push,
) -> sk_status {
    guard("sk_remote_push_in_background", || {
        // SAFETY: per the function's contract.
        unsafe {
            let h = arg_handle(remote, "remote")?;
            let id = arg_str(session_id, "session_id")?;
            let out = arg_out(out_push, "out_push")?;
            let every = Duration::from_millis(u64::from(interval_ms));
            let push = h.remote.push_in_background(&h.store, id, every)?;
            put_handle(out, sk_background_push { push })
        }
    })
}

/// Push what the log holds now and wait for it. `out_report_json` receives
/// `{"sessionId", "from", "to", "batches", "blobs"}`.
///
/// Errors: `SK_BUSY` once the lease was taken over by another holder (nothing
/// more is pushed), `SK_IO` (the push failed; the next interval retries).
///
/// # Safety
///
/// `push` is NULL or a live handle; `out_report_json` is NULL or writable.
/// Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_background_push_flush(
    push: *const sk_background_push,
    out_report_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_background_push_flush", || {
        // SAFETY: per the function's contract.
        unsafe {
            let h = arg_handle(push, "push")?;
            let out = arg_out(out_report_json, "out_report_json")?;
            put_json(out, &h.push.flush()?)
        }
    })
}

/// Bytes of the session's log the remote holds, as of the last push.
///
/// # Safety
///
/// `push` is NULL or a live handle; `out_bytes` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sk_background_push_pushed(
    push: *const sk_background_push,
    out_bytes: *mut u64,
) -> sk_status {
    guard("sk_background_push_pushed", || {
        // SAFETY: per the function's contract.
        unsafe {
            let h = arg_handle(push, "push")?;
            let out = arg_out(out_bytes, "out_bytes")?;
            *out = h.push.pushed();
            Ok(())
        }
    })
}

/// Push the rest, give the lease back, end the thread, free the handle and set
/// `*push` to NULL (whatever the result, once `out_report_json` was given).
/// `out_report_json` receives the last push's report.
///
/// Errors: as `sk_background_push_flush`; `SK_NULL_ARGUMENT` for a NULL
/// handle or out-parameter (then nothing is stopped).
///
/// # Safety
///
/// `push` is NULL or points to a handle pointer from
/// `sk_remote_push_in_background` (or NULL); no other thread uses the handle
/// during or after the call. `out_report_json` is NULL or writable. Free the
/// result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_background_push_stop(
    push: *mut *mut sk_background_push,
    out_report_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_background_push_stop", || {
        // SAFETY: per the function's contract.
        unsafe {
            let out = arg_out(out_report_json, "out_report_json")?;
            let h = take_handle(push).ok_or_else(|| {
                FfiError::new(
                    sk_status::SK_NULL_ARGUMENT,
                    "handle `push` is NULL (never started, or already stopped)".to_string(),
                )
            })?;
            put_json(out, &h.push.stop()?)
        }
    })
}

/// Stop a background push without its report (the rest is pushed and the
/// lease given back, as `sk_background_push_stop` does; errors are dropped),
/// free the handle and set `*push` to NULL. NULL and a pointer to a NULL
/// handle do nothing.
///
/// # Safety
///
/// As `sk_background_push_stop`'s `push`.
#[no_mangle]
pub unsafe extern "C" fn sk_background_push_close(push: *mut *mut sk_background_push) {
    // SAFETY: per the function's contract.
    unsafe { close_handle(push) }
}
