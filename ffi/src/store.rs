//! `sk_store`: the sessions of one project.

use std::ffi::c_char;

use sessionkit::{DoctorOptions, ModelViewOptions, SearchQuery, Store, StoreOptions};

use crate::view::sk_view;
use crate::{
    arg_handle, arg_out, arg_str, close_handle, guard, opt_options, opt_str, put_handle, put_json,
    put_string, sk_status, FfiResult,
};

/// The sessions of one project: an index and one log per session.
///
/// Thread safety: an `sk_store` may be used from any number of threads at once;
/// only `sk_store_close` must not run concurrently with other uses of the handle.
/// Sessions opened from a store stay valid after the store is closed.
pub struct sk_store {
    pub(crate) store: Store,
}

/// Parse an optional model-view options object (`{"lastN": n, "tokenBudget": n}`).
pub(crate) unsafe fn model_view_options(p: *const c_char) -> FfiResult<ModelViewOptions> {
    // SAFETY: forwarded from the caller.
    unsafe { opt_options(p, ModelViewOptions::from_json) }
}

/// Open (creating if needed) the store of the project rooted at `project_root`.
///
/// - `project_root`: an existing directory (required).
/// - `options_json`: NULL, "" or a JSON object of store options with camelCase
///   keys: `home` (a directory; relative to the current directory now),
///   `durability` ("never" | "onSync" | "always"), `maxSessions` (0, the
///   default, keeps all), `trashGraceSecs`, `busyTimeoutMs` (how long a shared
///   writer waits for a session's lock; 5000), `blobThreshold`, `maxRecordBytes`
///   (at least 1024), `deterministic`. Unknown keys are an error. Absent keys
///   take the defaults above ("Store and defaults"): the home is
///   $SESSIONKIT_HOME, else ~/.sessionkit, and no session is pruned.
/// - `out_store`: receives the new handle, to be closed with `sk_store_close`.
///
/// Creates the project's directory under the home if needed.
///
/// A project root that does not exist here opens its store when that store
/// exists (sessions imported from another machine or a moved project).
///
/// Errors: `SK_NULL_ARGUMENT`, `SK_INVALID_UTF8`, `SK_INVALID_INPUT` (bad
/// options, an empty `home`, no home at all, a project root that is not a
/// directory), `SK_NOT_FOUND` (no project root, nor a store for that path),
/// `SK_IO`, `SK_UNSUPPORTED`.
///
/// # Safety
///
/// String arguments are NULL or NUL-terminated; `out_store` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sk_store_open(
    project_root: *const c_char,
    options_json: *const c_char,
    out_store: *mut *mut sk_store,
) -> sk_status {
    guard("sk_store_open", || {
        // SAFETY: per the function's contract.
        unsafe {
            let root = arg_str(project_root, "project_root")?;
            let opts = opt_str(options_json, "options_json")?;
            let out = arg_out(out_store, "out_store")?;
            let options = match opts {
                Some(s) => StoreOptions::from_json(s)?,
                None => StoreOptions::default(),
            };
            let store = Store::open(root, options)?;
            put_handle(out, sk_store { store })
        }
    })
}

/// Close a store handle and set `*store` to NULL. `sk_store_close(NULL)` and a
/// pointer to a NULL handle do nothing. Sessions, subagents and views opened
/// from the store remain valid and must be closed on their own.
///
/// # Safety
///
/// `store` is NULL or points to a handle pointer from `sk_store_open` (or NULL);
/// no other thread uses the handle during or after the call.
#[no_mangle]
pub unsafe extern "C" fn sk_store_close(store: *mut *mut sk_store) {
    // SAFETY: per the function's contract.
    unsafe { close_handle(store) }
}

/// The store's place on disk, as a JSON object:
/// `{"projectRoot": "...", "dir": "...", "projectCode": "...", "indexPath": "..."}`.
/// `dir` is the directory holding the session logs.
///
/// # Safety
///
/// `store` is NULL or a live handle; `out_json` is NULL or writable. Free the
/// result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_info(
    store: *const sk_store,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_info", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &s.info())
        }
    })
}

/// The project's sessions, newest first: a JSON array of index entries (`id`,
/// `title`, `status`, `createdAt`, `updatedAt`, `messageCount`, `headId`, ...).
///
/// # Safety
///
/// `store` is NULL or a live handle; `out_json` is NULL or writable. Free the
/// result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_list_sessions(
    store: *const sk_store,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_list_sessions", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &s.list_sessions()?)
        }
    })
}

/// A page of the project's sessions: `{"sessions": [...], "total": n}`, the
/// entries of `sk_store_list_sessions` from `offset`, at most `limit` of them,
/// and how many sessions there are.
///
/// `options_json`: NULL, "" or `{"offset": n, "limit": n}` (both optional:
/// offset 0, no limit). Unknown keys are `SK_INVALID_INPUT`.
///
/// # Safety
///
/// `store` is NULL or a live handle; `options_json` is NULL or NUL-terminated;
/// `out_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_list_page(
    store: *const sk_store,
    options_json: *const c_char,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_list_page", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let options = opt_options(options_json, sessionkit::ListOptions::from_json)?;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &s.list_page(&options)?)
        }
    })
}

/// One session's index entry, as a JSON object.
///
/// Errors: `SK_NOT_FOUND` for an unknown id, `SK_INVALID_INPUT` for an id that is
/// not a valid session id (e.g. "../x").
///
/// # Safety
///
/// `store` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
/// `out_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_session_entry(
    store: *const sk_store,
    session_id: *const c_char,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_session_entry", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let id = arg_str(session_id, "session_id")?;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &s.session_entry(id)?)
        }
    })
}

/// The full id of the session named by `prefix`: the session whose id is
/// `prefix`, else the only one whose id starts with it. `out_id` receives the
/// id (free it with `sk_string_free`).
///
/// Errors: `SK_NOT_FOUND` when no session id starts with `prefix`;
/// `SK_INVALID_INPUT` when several do (the last error names them) or `prefix`
/// is empty.
///
/// # Safety
///
/// `store` is NULL or a live handle; `prefix` is NULL or NUL-terminated;
/// `out_id` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sk_store_resolve_session(
    store: *const sk_store,
    prefix: *const c_char,
    out_id: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_resolve_session", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let prefix = arg_str(prefix, "prefix")?;
            let out = arg_out(out_id, "out_id")?;
            put_string(out, s.resolve_session(prefix)?)
        }
    })
}

/// The session a `/continue` would pick (the most recently updated one with
/// messages): its index entry as a JSON object, or the JSON text `null` when
/// there is none.
///
/// # Safety
///
/// `store` is NULL or a live handle; `out_json` is NULL or writable. Free the
/// result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_continue_session(
    store: *const sk_store,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_continue_session", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &s.continue_session()?)
        }
    })
}

/// Rename a session that no writer holds (`SK_BUSY` otherwise, after trying
/// for about 63 ms; a host holding the session renames with
/// `sk_session_rename`). `out_entry_json` receives the updated index entry.
///
/// # Safety
///
/// `store` is NULL or a live handle; strings are NULL or NUL-terminated;
/// `out_entry_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_rename_session(
    store: *const sk_store,
    session_id: *const c_char,
    title: *const c_char,
    out_entry_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_rename_session", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let id = arg_str(session_id, "session_id")?;
            let title = arg_str(title, "title")?;
            let out = arg_out(out_entry_json, "out_entry_json")?;
            put_json(out, &s.rename_session(id, title)?)
        }
    })
}

/// Delete a session: its index entry, log, sidecars and quarantine file.
/// `SK_BUSY` while a writer holds it (after trying for about 63 ms);
/// `SK_NOT_FOUND` for an unknown id.
///
/// # Safety
///
/// `store` is NULL or a live handle; `session_id` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn sk_store_delete_session(
    store: *const sk_store,
    session_id: *const c_char,
) -> sk_status {
    guard("sk_store_delete_session", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let id = arg_str(session_id, "session_id")?;
            Ok(s.delete_session(id)?)
        }
    })
}

/// The sessions in the project's trash (pruned beyond `maxSessions`, not yet
/// purged by `sk_store_gc`), most recently trashed first, as a JSON array of
/// `{"id", "trashedAt", "reason", "title", "updatedAt", "messageCount",
/// "purgeAfter"}`. Finishes any move into or out of the trash a crash cut short.
///
/// # Safety
///
/// `store` is NULL or a live handle; `out_json` is NULL or writable. Free the
/// result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_list_trash(
    store: *const sk_store,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_list_trash", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &s.list_trash()?)
        }
    })
}

/// Move a trashed session back into the project, with its subagents,
/// quarantine file and file history; `out_entry_json` receives its index
/// entry. `SK_NOT_FOUND` if it is not in the trash, `SK_CONFLICT` if a live
/// session has that id, `SK_INVALID_INPUT` for an invalid id.
///
/// # Safety
///
/// `store` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
/// `out_entry_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_restore_session(
    store: *const sk_store,
    session_id: *const c_char,
    out_entry_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_restore_session", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let id = arg_str(session_id, "session_id")?;
            let out = arg_out(out_entry_json, "out_entry_json")?;
            put_json(out, &s.restore_session(id)?)
        }
    })
}

/// Load a session for reading, without a lock (it never blocks a writer). The
/// view reflects the log as it was when loaded; close it with `sk_view_close`.
///
/// # Safety
///
/// `store` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
/// `out_view` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sk_store_read_session(
    store: *const sk_store,
    session_id: *const c_char,
    out_view: *mut *mut sk_view,
) -> sk_status {
    guard("sk_store_read_session", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let id = arg_str(session_id, "session_id")?;
            let out = arg_out(out_view, "out_view")?;
            put_handle(out, sk_view::new(s.read_session(id)?))
        }
    })
}

/// What goes to the model on resume of a session (read from the end of its log
/// back to the latest compaction), as a JSON array of messages.
///
/// `options_json`: NULL, "" or `{"lastN": n, "tokenBudget": n}`.
///
/// # Safety
///
/// `store` is NULL or a live handle; strings are NULL or NUL-terminated;
/// `out_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_model_view(
    store: *const sk_store,
    session_id: *const c_char,
    options_json: *const c_char,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_model_view", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let id = arg_str(session_id, "session_id")?;
            let opts = model_view_options(options_json)?;
            let out = arg_out(out_json, "out_json")?;
            put_string(out, sessionkit::to_json_array(&s.model_view(id, &opts)?))
        }
    })
}

/// The subagents of a session: a JSON array of their metadata objects (`agentId`,
/// `status`, `meta`, `result`, ...), oldest first.
///
/// # Safety
///
/// `store` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
/// `out_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_list_subagents(
    store: *const sk_store,
    session_id: *const c_char,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_list_subagents", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let id = arg_str(session_id, "session_id")?;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &s.list_subagents(id)?)
        }
    })
}

/// Load a subagent's sidechain for reading, without a lock. Close the view with
/// `sk_view_close`.
///
/// # Safety
///
/// `store` is NULL or a live handle; strings are NULL or NUL-terminated;
/// `out_view` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sk_store_read_subagent(
    store: *const sk_store,
    session_id: *const c_char,
    agent_id: *const c_char,
    out_view: *mut *mut sk_view,
) -> sk_status {
    guard("sk_store_read_subagent", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let sid = arg_str(session_id, "session_id")?;
            let aid = arg_str(agent_id, "agent_id")?;
            let out = arg_out(out_view, "out_view")?;
            put_handle(out, sk_view::new(s.read_subagent(sid, aid)?))
        }
    })
}

/// Rebuild the index from the session logs. `out_report_json` receives
/// `{"sessions": n, "problems": [[id, readReport], ...]}`.
///
/// # Safety
///
/// `store` is NULL or a live handle; `out_report_json` is NULL or writable.
/// Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_rebuild_index(
    store: *const sk_store,
    out_report_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_rebuild_index", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let out = arg_out(out_report_json, "out_report_json")?;
            put_json(out, &s.rebuild_index()?)
        }
    })
}

/// Collect the project's garbage, as `sessionkit gc` does: file-history objects
/// that no session's branch reaches, blobs that no log refers to and `.tmp-*`
/// files a crash left (those two once older than 15 minutes).
/// `out_report_json` receives the report: the file history's counts
/// (`branches`, `objectsBefore`, `objectsAfter`, `bytesBefore`, `bytesAfter`,
/// `bytesFreed`), with `blobs` and `tempFiles` objects beside them, and
/// `trashPurged`: the ids of the trashed sessions purged, their
/// `trashGraceSecs` over (they go first, so their objects and blobs are freed).
///
/// # Safety
///
/// `store` is NULL or a live handle; `out_report_json` is NULL or writable.
/// Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_gc(
    store: *const sk_store,
    out_report_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_gc", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let out = arg_out(out_report_json, "out_report_json")?;
            put_json(out, &s.gc_all(&mut |_| {})?)
        }
    })
}

/// The size of each session's file history, as a JSON report.
///
/// # Safety
///
/// `store` is NULL or a live handle; `out_report_json` is NULL or writable.
/// Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_file_history_sizes(
    store: *const sk_store,
    out_report_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_file_history_sizes", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let out = arg_out(out_report_json, "out_report_json")?;
            put_json(out, &s.file_history_sizes()?)
        }
    })
}

/// Verify the store, as `sessionkit doctor` does: the index against the logs,
/// every session and subagent log (unreadable lines, torn tails, broken chains,
/// blobs) and the file history against the logs.
///
/// - `options_json`: NULL, "" or `{"repair": bool}`. Without `repair` nothing
///   is written and no lock is taken; with it, what can be fixed without loss
///   is fixed (torn tails terminated, unreadable lines quarantined, the index
///   rebuilt, file-history refs of deleted sessions deleted).
/// - `out_report_json` receives the report: `{"store", "ok", "repair",
///   "index": {"state", "needsRebuild", ...}, "logs": [{"id", "path", "ok",
///   "problems", "notices", "repaired", ...}], "fileHistory": {...},
///   "repaired": [...]}`. Problems found are in the report, not the status:
///   `ok` is false when any remain.
///
/// Errors: `SK_INVALID_INPUT` (bad options); `SK_IO` when the store directory
/// cannot be read. A log that a writer holds cannot be repaired: that is said
/// in its `repaired` list, not by the status.
///
/// # Safety
///
/// `store` is NULL or a live handle; `options_json` is NULL or NUL-terminated;
/// `out_report_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_doctor(
    store: *const sk_store,
    options_json: *const c_char,
    out_report_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_doctor", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let options = match opt_str(options_json, "options_json")? {
                Some(o) => DoctorOptions::from_json(o)?,
                None => DoctorOptions::default(),
            };
            let out = arg_out(out_report_json, "out_report_json")?;
            put_json(out, &s.doctor(&options, &mut |_| {})?)
        }
    })
}

/// Full-text search over the project's sessions (or every project's in the
/// home), best match first; the search cache is brought up to date from the
/// logs first (FORMAT.md §23).
///
/// - `query_json`: `{"text": "...", "all": bool, "role", "session", "since",
///   "until", "tool", "limit"}`; only `text` is required. `text` holds words
///   (all must match), `"phrases"`, `prefix*` and `OR`.
/// - `out_json` receives `{"hits": [{"project", "sessionId", "messageId",
///   "role", "timestamp", "tools", "snippet", "score"}], "indexedBytes",
///   "setAside", "stale"}`; in a snippet the matches are between `«` and `»`.
///
/// Errors: `SK_INVALID_INPUT` (bad query JSON, no word to look for, a text
/// over 16 KiB or of more than 256 terms, a NUL in the text, a control
/// character in another string, a time that is not RFC 3339 or a date),
/// refused before any cache file is opened; `SK_IO` when a log or the cache
/// cannot be read or written.
///
/// # Safety
///
/// `store` is NULL or a live handle; `query_json` is NULL or NUL-terminated;
/// `out_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_search(
    store: *const sk_store,
    query_json: *const c_char,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_search", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let query = SearchQuery::from_json(arg_str(query_json, "query_json")?)?;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &s.search(&query)?)
        }
    })
}

/// The ids of the project's session logs, sorted, as a JSON array: read from
/// the directory, so it works when the index is missing or unreadable.
///
/// # Safety
///
/// `store` is NULL or a live handle; `out_json` is NULL or writable. Free the
/// result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_session_ids(
    store: *const sk_store,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_session_ids", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &s.session_ids()?)
        }
    })
}

/// Check the links between the session logs and the file history, reading
/// only: refs of sessions whose log is gone, refs whose chain of snapshots
/// reaches a missing commit, and `checkpointHash`es that name no snapshot of
/// their session, as a JSON object. Takes no writer lock.
///
/// # Safety
///
/// `store` is NULL or a live handle; `out_json` is NULL or writable. Free the
/// result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_check_file_history(
    store: *const sk_store,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_check_file_history", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &s.check_file_history()?)
        }
    })
}

/// Delete the file-history refs (branches and pending restores) of sessions
/// whose log no longer exists and that are not in the trash; `out_json`
/// receives the refs deleted, a JSON array. A ref that moved meanwhile is
/// left alone.
///
/// # Safety
///
/// `store` is NULL or a live handle; `out_json` is NULL or writable. Free the
/// result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_prune_orphan_file_history(
    store: *const sk_store,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_prune_orphan_file_history", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &s.prune_orphan_file_history()?)
        }
    })
}

/// Start the file-history branch of session `session_id` at `snapshot` (for a
/// fork: the snapshot of the message forked at). `SK_CONFLICT` if the session
/// already has a branch.
///
/// # Safety
///
/// `store` is NULL or a live handle; the strings are NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn sk_store_branch_file_history(
    store: *const sk_store,
    session_id: *const c_char,
    snapshot: *const c_char,
) -> sk_status {
    guard("sk_store_branch_file_history", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let id = arg_str(session_id, "session_id")?;
            let snap = arg_str(snapshot, "snapshot")?;
            Ok(s.branch_file_history(id, snap)?)
        }
    })
}

/// Where the log of session `session_id` lives (whether or not it exists), as
/// a JSON string. `SK_INVALID_INPUT` if the id is not a valid session id, so
/// that no id names a path outside the store.
///
/// # Safety
///
/// `store` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
/// `out_path_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_log_path(
    store: *const sk_store,
    session_id: *const c_char,
    out_path_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_log_path", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let id = arg_str(session_id, "session_id")?;
            let out = arg_out(out_path_json, "out_path_json")?;
            put_json(out, &s.log_path(id)?)
        }
    })
}
