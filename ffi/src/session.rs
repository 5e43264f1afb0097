//! `sk_session`: a session open for writing.

use std::ffi::c_char;

use serde_json::{json, Value};
use sessionkit::{
    group_results_json, responses::ItemsOptions, to_json_array, CompactionPolicy, CreateOptions,
    ForkOptions, RewindMode, Session,
};

use crate::store::{model_view_options, sk_store};
use crate::subagent::sk_subagent;
use crate::view::sk_view;
use crate::{
    arg_handle, arg_json, arg_object, arg_out, arg_str, arg_typed, guard, json_kind, opt_options,
    opt_str, put_handle, put_json, put_string, sk_status, take_handle, FfiError, FfiResult,
};

/// A session open for writing. Holds the session's exclusive writer lock until
/// it is closed: a second `sk_session_open` of the same id, in this or another
/// process, gets `SK_BUSY`.
///
/// Thread safety: an `sk_session` may be used from any number of threads at
/// once (appends are serialised); only `sk_session_close` must not run
/// concurrently with other uses of the handle.
///
/// Processes: only the process that opened it writes through it. In a child
/// forked after that, writes and file-history calls fail with
/// `SK_INVALID_INPUT`; reads and `sk_session_close` work (see "fork()" above).
pub struct sk_session {
    pub(crate) session: Session,
}

const PATHS_SHAPE: &str = "a JSON array of path strings";

unsafe fn arg_paths(p: *const c_char) -> FfiResult<Vec<String>> {
    // SAFETY: forwarded from the caller.
    unsafe { arg_typed(p, "paths_json", PATHS_SHAPE) }
}

unsafe fn arg_messages(p: *const c_char) -> FfiResult<Vec<Value>> {
    // SAFETY: forwarded from the caller.
    let v = unsafe { arg_json(p, "messages_json") }?;
    match v {
        Value::Array(items) => {
            if let Some((i, bad)) = items.iter().enumerate().find(|(_, m)| !m.is_object()) {
                return Err(FfiError::invalid(format!(
                    "argument `messages_json` must be a JSON array of message objects; item {i} is {}",
                    json_kind(bad)
                )));
            }
            Ok(items)
        }
        other => Err(FfiError::invalid(format!(
            "argument `messages_json` must be a JSON array of message objects, not {}",
            json_kind(&other)
        ))),
    }
}

/// The argument `groups_json`: a JSON array of arrays (of messages; each
/// message is checked by the core, per group).
pub(crate) unsafe fn arg_groups(p: *const c_char) -> FfiResult<Vec<Vec<Value>>> {
    // SAFETY: forwarded from the caller.
    let v = unsafe { arg_json(p, "groups_json") }?;
    let Value::Array(groups) = v else {
        return Err(FfiError::invalid(format!(
            "argument `groups_json` must be a JSON array of arrays of messages, not {}",
            json_kind(&v)
        )));
    };
    groups
        .into_iter()
        .enumerate()
        .map(|(i, g)| match g {
            Value::Array(messages) => Ok(messages),
            other => Err(FfiError::invalid(format!(
                "argument `groups_json` must be a JSON array of arrays of messages; item {i} is {}",
                json_kind(&other)
            ))),
        })
        .collect()
}

/// Start a new session. `options_json`: NULL, "" or `{"title": "...", "id":
/// "..."}` (a fresh UUIDv7 id when absent). Close the session with
/// `sk_session_close`.
///
/// Pruning: when the store's `maxSessions` is set (it is 0, keep all, by
/// default) and the project then has more sessions, the least recently
/// updated ones not open for writing are moved to the trash
/// (`sk_store_list_trash`, `sk_store_restore_session`). Their ids are the
/// `pruned` array of `sk_session_info` on the new handle.
///
/// Errors: `SK_CONFLICT` for an existing id, `SK_INVALID_INPUT` for bad options.
///
/// # Safety
///
/// `store` is NULL or a live handle; `options_json` is NULL or NUL-terminated;
/// `out_session` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sk_session_create(
    store: *const sk_store,
    options_json: *const c_char,
    out_session: *mut *mut sk_session,
) -> sk_status {
    guard("sk_session_create", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let opts = opt_options(options_json, CreateOptions::from_json)?;
            let out = arg_out(out_session, "out_session")?;
            put_handle(
                out,
                sk_session {
                    session: s.create_session(opts)?,
                },
            )
        }
    })
}

/// Open an existing session for writing (repairing a torn tail and quarantining
/// unreadable lines; see `openReport` in `sk_session_info`).
///
/// Errors: `SK_NOT_FOUND`, `SK_BUSY` (another writer, in this process or
/// another, still holds it after about 63 ms of tries), `SK_INVALID_INPUT` (a
/// bad id such as "../x"), `SK_CORRUPT`, `SK_UNSUPPORTED`.
///
/// # Safety
///
/// `store` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
/// `out_session` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sk_session_open(
    store: *const sk_store,
    session_id: *const c_char,
    out_session: *mut *mut sk_session,
) -> sk_status {
    guard("sk_session_open", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let id = arg_str(session_id, "session_id")?;
            let out = arg_out(out_session, "out_session")?;
            put_handle(
                out,
                sk_session {
                    session: s.open_session(id)?,
                },
            )
        }
    })
}

/// Open an existing session as a *shared writer*: the handle takes the
/// session's writer lock only for the moment of each write (append, batch,
/// patch, state, head, pop, compaction), waiting up to the store's
/// `busyTimeoutMs` (5000 unless the store options say otherwise) for another
/// holder; under the lock it first reads what other writers appended, so each
/// write continues from the head at that moment. Any number of shared handles,
/// in any threads and processes, write one session. Close with
/// `sk_session_close`.
///
/// Errors: `SK_NOT_FOUND`, `SK_BUSY` (the lock stayed held past the timeout;
/// the message names the holder's process when the system says),
/// `SK_INVALID_INPUT` (a bad id such as "../x"), `SK_CORRUPT`, `SK_UNSUPPORTED`.
///
/// # Safety
///
/// `store` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
/// `out_session` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sk_session_open_shared(
    store: *const sk_store,
    session_id: *const c_char,
    out_session: *mut *mut sk_session,
) -> sk_status {
    guard("sk_session_open_shared", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let id = arg_str(session_id, "session_id")?;
            let out = arg_out(out_session, "out_session")?;
            put_handle(
                out,
                sk_session {
                    session: s.open_shared(id)?,
                },
            )
        }
    })
}

/// The conversation named `conversation_id` (any non-empty UTF-8 string of at
/// most 1,024 bytes: "user@example.com", "tenant/123") as a shared writer
/// (see `sk_session_open_shared`), created on first use. Its session id is
/// `sk_conversation_session_id`; the original id is kept in the header and the
/// index entry (`conversationId`) when the two differ.
///
/// Errors: `SK_INVALID_INPUT` (empty, too long, not UTF-8), `SK_BUSY`.
///
/// # Safety
///
/// `store` is NULL or a live handle; `conversation_id` is NULL or
/// NUL-terminated; `out_session` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sk_session_open_conversation(
    store: *const sk_store,
    conversation_id: *const c_char,
    out_session: *mut *mut sk_session,
) -> sk_status {
    guard("sk_session_open_conversation", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let id = arg_str(conversation_id, "conversation_id")?;
            let out = arg_out(out_session, "out_session")?;
            put_handle(
                out,
                sk_session {
                    session: s.open_conversation(id)?,
                },
            )
        }
    })
}

/// The session id that holds the conversation `conversation_id` (FORMAT.md
/// §3.3), as a plain string: the id itself when it is a valid session id,
/// else `c-`, a readable prefix and a hash. The same rule in every interface.
///
/// # Safety
///
/// `conversation_id` is NULL or NUL-terminated; `out_id` is NULL or writable.
/// Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_conversation_session_id(
    conversation_id: *const c_char,
    out_id: *mut *mut c_char,
) -> sk_status {
    guard("sk_conversation_session_id", || {
        // SAFETY: per the function's contract.
        unsafe {
            let id = arg_str(conversation_id, "conversation_id")?;
            let out = arg_out(out_id, "out_id")?;
            put_string(out, sessionkit::conversation_session_id(id)?)
        }
    })
}

/// Fork session `source_id` into a new session, open for writing.
/// `options_json`: NULL, "" or `{"at": messageId, "title": "..."}` (the source's
/// head and title when absent). The source is read without a lock. Like
/// `sk_session_create`, prunes the project to `maxSessions` (see `pruned` in
/// `sk_session_info`).
///
/// # Safety
///
/// `store` is NULL or a live handle; strings are NULL or NUL-terminated;
/// `out_session` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sk_session_fork(
    store: *const sk_store,
    source_id: *const c_char,
    options_json: *const c_char,
    out_session: *mut *mut sk_session,
) -> sk_status {
    guard("sk_session_fork", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let src = arg_str(source_id, "source_id")?;
            let opts = match opt_str(options_json, "options_json")? {
                Some(j) => ForkOptions::from_json(j)?,
                None => ForkOptions::default(),
            };
            let out = arg_out(out_session, "out_session")?;
            put_handle(
                out,
                sk_session {
                    session: s.fork_session(src, opts)?,
                },
            )
        }
    })
}

/// Flush the session's index entry, release its lock, free the handle and set
/// `*session` to NULL. The handle is freed and the lock released even when the
/// flush fails (the status says so). `sk_session_close(NULL)` and a pointer to a
/// NULL handle return `SK_OK` and do nothing. Subagents opened from the session
/// stay valid. In a child forked after the session was opened, frees the
/// child's copy only, without the flush (the parent keeps its lock).
///
/// # Safety
///
/// `session` is NULL or points to a session pointer from this library (or
/// NULL); no other thread uses the handle during or after the call.
#[no_mangle]
pub unsafe extern "C" fn sk_session_close(session: *mut *mut sk_session) -> sk_status {
    guard("sk_session_close", || {
        // SAFETY: per the function's contract.
        match unsafe { take_handle(session) } {
            Some(h) => Ok(h.session.close()?),
            None => Ok(()),
        }
    })
}

/// The session's id, as a plain string (not JSON).
///
/// # Safety
///
/// `session` is NULL or a live handle; `out_id` is NULL or writable. Free the
/// result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_id(
    session: *const sk_session,
    out_id: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_id", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let out = arg_out(out_id, "out_id")?;
            put_string(out, s.id().to_string())
        }
    })
}

/// The session as this writer knows it, as a JSON object: `{"id", "path",
/// "head": id|null, "entry": indexEntry, "openReport": readReport, "pruned":
/// [ids]}`. `pruned` lists the sessions deleted when this session was created
/// or forked (see `sk_session_create`); it is empty for `sk_session_open`.
///
/// # Safety
///
/// `session` is NULL or a live handle; `out_json` is NULL or writable. Free the
/// result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_info(
    session: *const sk_session,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_info", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &s.info())
        }
    })
}

/// Append one message (a JSON object: `role`, `content`, optionally `id`,
/// `parentId`, `meta`, ...). `out_message_json` receives it as stored (id,
/// parent and timestamp filled in).
///
/// Errors: `SK_INVALID_INPUT` for text that is not JSON or not an object, a bad
/// or duplicate id, a line over `maxRecordBytes` once large `content` went to
/// a blob, more than 100 levels of nesting (see "Limits" above), or a call in
/// a forked child.
///
/// # Safety
///
/// `session` is NULL or a live handle; `message_json` is NULL or NUL-terminated;
/// `out_message_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_append(
    session: *const sk_session,
    message_json: *const c_char,
    out_message_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_append", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let m = arg_object(message_json, "message_json")?;
            let out = arg_out(out_message_json, "out_message_json")?;
            put_string(out, s.append(m)?.json().to_string())
        }
    })
}

/// Append several groups of messages in one write, with a result per group.
/// `groups_json` is a JSON array of arrays of messages. Each group is checked
/// as if appended alone (as by `sk_session_append_batch`), after the groups
/// accepted before it; a refused group is not written. `out_results_json`
/// receives one entry per group: `{"ok": [messages as stored]}` or
/// `{"error": {"code": "INVALID_INPUT", "message": "...", "errno": null}}`.
/// The status is an error only when the write itself failed (nothing of the
/// accepted groups is acknowledged then) or an argument is bad.
///
/// # Safety
///
/// `session` is NULL or a live handle; `groups_json` is NULL or
/// NUL-terminated; `out_results_json` is NULL or writable. Free the result with
/// `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_append_groups(
    session: *const sk_session,
    groups_json: *const c_char,
    out_results_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_append_groups", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let groups = arg_groups(groups_json)?;
            let out = arg_out(out_results_json, "out_results_json")?;
            put_string(out, group_results_json(&s.append_groups(groups)?))
        }
    })
}

/// Append a JSON array of messages in one write: all are stored, or none.
/// `out_messages_json` receives them as stored (a JSON array). Each message is
/// checked as by `sk_session_append`; an error names the first bad one
/// ("batch message <i>").
///
/// # Safety
///
/// `session` is NULL or a live handle; `messages_json` is NULL or
/// NUL-terminated; `out_messages_json` is NULL or writable. Free the result with
/// `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_append_batch(
    session: *const sk_session,
    messages_json: *const c_char,
    out_messages_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_append_batch", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let ms = arg_messages(messages_json)?;
            let out = arg_out(out_messages_json, "out_messages_json")?;
            put_string(out, to_json_array(&s.append_batch(ms)?))
        }
    })
}

/// Update host-reported state (a JSON object: `status`, `thinking`,
/// `refusalReason`, `failureReason`, `lastToolCall`, `activeTokens`,
/// `childProcesses`, `title`). Logged and written to the index;
/// `out_entry_json` receives the updated index entry. The object may nest 99
/// levels (see "Limits" above).
///
/// # Safety
///
/// `session` is NULL or a live handle; `state_json` is NULL or NUL-terminated;
/// `out_entry_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_update_state(
    session: *const sk_session,
    state_json: *const c_char,
    out_entry_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_update_state", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let v = arg_object(state_json, "state_json")?;
            let out = arg_out(out_entry_json, "out_entry_json")?;
            put_json(out, &s.update_state(v)?)
        }
    })
}

/// Change fields of a stored message with an RFC 7396 merge patch (a JSON
/// object), e.g. usage that arrives after the text. `SK_NOT_FOUND` for an
/// unknown message id; `SK_INVALID_INPUT` for a patch of `id`, `parentId`,
/// `role` and the like, or one nested more than 99 levels.
///
/// # Safety
///
/// `session` is NULL or a live handle; strings are NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn sk_session_patch(
    session: *const sk_session,
    message_id: *const c_char,
    patch_json: *const c_char,
) -> sk_status {
    guard("sk_session_patch", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let id = arg_str(message_id, "message_id")?;
            let p = arg_object(patch_json, "patch_json")?;
            Ok(s.patch_message(id, p)?)
        }
    })
}

/// Move the head to a message; later appends branch from there and the old
/// branch stays in the log. `message_id` may be NULL: the head moves to before
/// the first message. `SK_NOT_FOUND` for an unknown message id.
///
/// # Safety
///
/// `session` is NULL or a live handle; `message_id` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn sk_session_set_head(
    session: *const sk_session,
    message_id: *const c_char,
) -> sk_status {
    guard("sk_session_set_head", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let id = opt_str(message_id, "message_id")?;
            Ok(s.set_head(id)?)
        }
    })
}

/// Resume the conversation from a message (the head moves there). Unlike
/// `sk_session_set_head`, `message_id` is required.
///
/// # Safety
///
/// `session` is NULL or a live handle; `message_id` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn sk_session_resume_at(
    session: *const sk_session,
    message_id: *const c_char,
) -> sk_status {
    guard("sk_session_resume_at", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let id = arg_str(message_id, "message_id")?;
            Ok(s.resume_at(id)?)
        }
    })
}

/// Rename the session (its index title); `out_entry_json` receives the entry.
///
/// # Safety
///
/// `session` is NULL or a live handle; `title` is NULL or NUL-terminated;
/// `out_entry_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_rename(
    session: *const sk_session,
    title: *const c_char,
    out_entry_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_rename", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let t = arg_str(title, "title")?;
            let out = arg_out(out_entry_json, "out_entry_json")?;
            put_json(out, &s.rename(t)?)
        }
    })
}

/// Make every append so far durable (fsync the log, write the index).
///
/// # Safety
///
/// `session` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn sk_session_sync(session: *const sk_session) -> sk_status {
    guard("sk_session_sync", || {
        // SAFETY: per the function's contract.
        let s = unsafe { &arg_handle(session, "session")?.session };
        Ok(s.sync()?)
    })
}

/// Read this session's log back as a view (what every reader gets). Close it
/// with `sk_view_close`.
///
/// # Safety
///
/// `session` is NULL or a live handle; `out_view` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sk_session_read(
    session: *const sk_session,
    out_view: *mut *mut sk_view,
) -> sk_status {
    guard("sk_session_read", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let out = arg_out(out_view, "out_view")?;
            put_handle(out, sk_view::new(s.read()?))
        }
    })
}

/// The active path (root to head), as a JSON array of messages.
///
/// # Safety
///
/// `session` is NULL or a live handle; `out_json` is NULL or writable. Free the
/// result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_active_path(
    session: *const sk_session,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_active_path", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let out = arg_out(out_json, "out_json")?;
            put_string(out, to_json_array(&s.active_path()?))
        }
    })
}

/// What goes to the model, as a JSON array of messages. `options_json`: NULL, ""
/// or `{"lastN": n, "tokenBudget": n}`.
///
/// # Safety
///
/// `session` is NULL or a live handle; `options_json` is NULL or
/// NUL-terminated; `out_json` is NULL or writable. Free the result with
/// `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_model_view(
    session: *const sk_session,
    options_json: *const c_char,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_model_view", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let opts = model_view_options(options_json)?;
            let out = arg_out(out_json, "out_json")?;
            put_string(out, to_json_array(&s.model_view(&opts)?))
        }
    })
}

/// Ask a compaction policy what to compact; changes nothing. `policy_json`:
/// `{"tokenBudget": n, "keepLastTurns": n, "summaryTokens": n}` (`tokenBudget`
/// required). `out_plan_json` receives `{"replaces": [ids], "messages": [...],
/// "tokensBefore": n, "tokensAfter": n}`, or the JSON text `null` when the model
/// view already fits or nothing can go.
///
/// Errors: `SK_INVALID_INPUT` (a policy that is not a JSON object, or has an
/// unknown field or a value of the wrong type).
///
/// # Safety
///
/// `session` is NULL or a live handle; `policy_json` is NULL or NUL-terminated;
/// `out_plan_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_select_compaction(
    session: *const sk_session,
    policy_json: *const c_char,
    out_plan_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_select_compaction", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let p = arg_str(policy_json, "policy_json")?;
            let policy = CompactionPolicy::from_json(p)?;
            let out = arg_out(out_plan_json, "out_plan_json")?;
            put_json(out, &s.select_compaction(&policy)?)
        }
    })
}

/// Replace `replaces_json` (a JSON array of message ids: a contiguous run of the
/// model view, e.g. a plan's `replaces`) by a summary in the model's view.
/// `summary_json` is the summary's content as JSON: a string (e.g.
/// `"\"The user asked...\""`) or an array of content blocks. It is stored as an
/// invisible system message; `out_message_json` receives it as stored.
///
/// # Safety
///
/// `session` is NULL or a live handle; strings are NULL or NUL-terminated;
/// `out_message_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_apply_compaction(
    session: *const sk_session,
    replaces_json: *const c_char,
    summary_json: *const c_char,
    out_message_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_apply_compaction", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let replaces: Vec<String> = arg_typed(
                replaces_json,
                "replaces_json",
                "a JSON array of message ids",
            )?;
            let summary = arg_json(summary_json, "summary_json")?;
            let out = arg_out(out_message_json, "out_message_json")?;
            put_string(
                out,
                s.apply_compaction(&replaces, summary)?.json().to_string(),
            )
        }
    })
}

/// Start a subagent: a sidechain log and a metadata file under the session; the
/// main log records the spawn. `agent_id` may be NULL (a fresh id);
/// `meta_json` may be NULL (`{}`) or a JSON object (e.g. task, model) nested at
/// most 99 levels. Close the subagent with `sk_subagent_close`.
///
/// # Safety
///
/// `session` is NULL or a live handle; strings are NULL or NUL-terminated;
/// `out_subagent` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sk_session_spawn_subagent(
    session: *const sk_session,
    agent_id: *const c_char,
    meta_json: *const c_char,
    out_subagent: *mut *mut sk_subagent,
) -> sk_status {
    guard("sk_session_spawn_subagent", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let aid = opt_str(agent_id, "agent_id")?;
            let meta = if meta_json.is_null() {
                json!({})
            } else {
                arg_object(meta_json, "meta_json")?
            };
            let out = arg_out(out_subagent, "out_subagent")?;
            put_handle(out, sk_subagent::new(s.spawn_subagent(aid, meta)?))
        }
    })
}

/// Reopen a subagent of this session for writing (`SK_BUSY` while another
/// writer holds it, after trying for about 63 ms). Close it with
/// `sk_subagent_close`.
///
/// # Safety
///
/// `session` is NULL or a live handle; `agent_id` is NULL or NUL-terminated;
/// `out_subagent` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sk_session_open_subagent(
    session: *const sk_session,
    agent_id: *const c_char,
    out_subagent: *mut *mut sk_subagent,
) -> sk_status {
    guard("sk_session_open_subagent", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let aid = arg_str(agent_id, "agent_id")?;
            let out = arg_out(out_subagent, "out_subagent")?;
            put_handle(out, sk_subagent::new(s.open_subagent(aid)?))
        }
    })
}

/// Append a user message, taking a snapshot of the tracked files first (stored
/// as the message's `checkpointHash`). `message_json` is a message object whose
/// `role`, if present, must be "user". `out_message_json` receives it as stored.
/// Snapshots may start the background pack merge (see "Background threads").
///
/// # Safety
///
/// `session` is NULL or a live handle; `message_json` is NULL or NUL-terminated;
/// `out_message_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_user_input(
    session: *const sk_session,
    message_json: *const c_char,
    out_message_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_user_input", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let m = arg_object(message_json, "message_json")?;
            let out = arg_out(out_message_json, "out_message_json")?;
            put_string(out, s.user_input(m)?.json().to_string())
        }
    })
}

/// Record that the agent's tools read these files (`paths_json`: a JSON array of
/// paths relative to the project root, or absolute inside it).
///
/// # Safety
///
/// `session` is NULL or a live handle; `paths_json` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn sk_session_track_read(
    session: *const sk_session,
    paths_json: *const c_char,
) -> sk_status {
    guard("sk_session_track_read", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let paths = arg_paths(paths_json)?;
            Ok(s.track_read(&paths)?)
        }
    })
}

/// Track these files and snapshot every tracked file, before a tool edits them.
/// `out_snapshot` receives the snapshot id (a plain string, not JSON). May
/// start the background pack merge (see "Background threads").
///
/// # Safety
///
/// `session` is NULL or a live handle; `paths_json` is NULL or NUL-terminated;
/// `out_snapshot` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_before_edit(
    session: *const sk_session,
    paths_json: *const c_char,
    out_snapshot: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_before_edit", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let paths = arg_paths(paths_json)?;
            let out = arg_out(out_snapshot, "out_snapshot")?;
            put_string(out, s.before_edit(&paths)?)
        }
    })
}

/// Snapshot every tracked file after a tool edited `paths_json` (tracked from
/// now on). `out_snapshot` receives the snapshot id (a plain string). May start
/// the background pack merge (see "Background threads").
///
/// # Safety
///
/// `session` is NULL or a live handle; `paths_json` is NULL or NUL-terminated;
/// `out_snapshot` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_after_edit(
    session: *const sk_session,
    paths_json: *const c_char,
    out_snapshot: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_after_edit", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let paths = arg_paths(paths_json)?;
            let out = arg_out(out_snapshot, "out_snapshot")?;
            put_string(out, s.after_edit(&paths)?)
        }
    })
}

/// The files this session tracks: a JSON array of paths relative to the project
/// root.
///
/// # Safety
///
/// `session` is NULL or a live handle; `out_json` is NULL or writable. Free the
/// result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_tracked_files(
    session: *const sk_session,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_tracked_files", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &s.tracked_files()?)
        }
    })
}

/// For each path of `paths_json`: whether the file changed on disk since the
/// agent last read or edited it. A JSON array of `{"path", "status"}`.
///
/// # Safety
///
/// `session` is NULL or a live handle; `paths_json` is NULL or NUL-terminated;
/// `out_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_external_changes(
    session: *const sk_session,
    paths_json: *const c_char,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_external_changes", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let paths = arg_paths(paths_json)?;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &s.external_changes(&paths)?)
        }
    })
}

/// `SK_OK` if none of `paths_json` changed on disk since the agent read it;
/// `SK_CONFLICT`, naming the files in the last error, otherwise. Files never
/// read pass.
///
/// # Safety
///
/// `session` is NULL or a live handle; `paths_json` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn sk_session_ensure_unchanged(
    session: *const sk_session,
    paths_json: *const c_char,
) -> sk_status {
    guard("sk_session_ensure_unchanged", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let paths = arg_paths(paths_json)?;
            Ok(s.ensure_unchanged_since_read(&paths)?)
        }
    })
}

/// The user messages a rewind can go back to (visible, uncompacted, on the
/// active path, oldest first), each with whether its files can be restored and
/// the changes since: a JSON array.
///
/// # Safety
///
/// `session` is NULL or a live handle; `out_json` is NULL or writable. Free the
/// result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_undo_candidates(
    session: *const sk_session,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_undo_candidates", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &s.undo_candidates()?)
        }
    })
}

/// The dry run of rewinding the files to before a user message: for each file,
/// restore, recreate or delete, and any conflict. Changes nothing. A JSON object.
///
/// # Safety
///
/// `session` is NULL or a live handle; `message_id` is NULL or NUL-terminated;
/// `out_plan_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_rewind_plan(
    session: *const sk_session,
    message_id: *const c_char,
    out_plan_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_rewind_plan", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let id = arg_str(message_id, "message_id")?;
            let out = arg_out(out_plan_json, "out_plan_json")?;
            put_json(out, &s.rewind_plan(id)?)
        }
    })
}

/// What rewinding to before a user message in `mode` ("files",
/// "conversation" or "both") would do, changing nothing: `out_json` receives
/// `{"messageId", "mode", "plan": rewindPlan|null, "head": {"from": id|null,
/// "to": id|null}}`. `plan` (as from `sk_session_rewind_plan`) is null for
/// "conversation"; `head.to` is where the head goes (null: before the first
/// message), the same as `head.from` for "files".
///
/// Errors: `SK_NOT_FOUND` for an unknown message (or, unless the mode is
/// "conversation", one without a snapshot); `SK_INVALID_INPUT` for a message
/// that is not a user message or an unknown mode.
///
/// # Safety
///
/// `session` is NULL or a live handle; strings are NULL or NUL-terminated;
/// `out_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_rewind_preview(
    session: *const sk_session,
    message_id: *const c_char,
    mode: *const c_char,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_rewind_preview", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let id = arg_str(message_id, "message_id")?;
            let mode: RewindMode = arg_str(mode, "mode")?.parse()?;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &s.rewind_preview(id, mode)?)
        }
    })
}

/// Rewind to before a user message. `mode` is "files", "conversation" or
/// "both". Files are restored to the message's snapshot unless one changed
/// outside the agent since the last snapshot (`SK_CONFLICT`, naming the files),
/// which `force` overrides; the conversation head moves to the message's parent.
/// `out_result_json` receives what was done and how to undo it (`undoSnapshot`).
/// Restoring files may start the background pack merge.
///
/// # Safety
///
/// `session` is NULL or a live handle; strings are NULL or NUL-terminated;
/// `out_result_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_rewind(
    session: *const sk_session,
    message_id: *const c_char,
    mode: *const c_char,
    force: bool,
    out_result_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_rewind", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let id = arg_str(message_id, "message_id")?;
            let mode: RewindMode = arg_str(mode, "mode")?.parse()?;
            let out = arg_out(out_result_json, "out_result_json")?;
            put_json(out, &s.rewind(id, mode, force)?)
        }
    })
}

/// The dry run of restoring the tracked files to a snapshot of this session
/// (e.g. a rewind's `undoSnapshot`). A JSON object like `sk_session_rewind_plan`.
///
/// # Safety
///
/// `session` is NULL or a live handle; `snapshot` is NULL or NUL-terminated;
/// `out_plan_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_snapshot_plan(
    session: *const sk_session,
    snapshot: *const c_char,
    out_plan_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_snapshot_plan", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let snap = arg_str(snapshot, "snapshot")?;
            let out = arg_out(out_plan_json, "out_plan_json")?;
            put_json(out, &s.snapshot_plan(snap)?)
        }
    })
}

/// Restore the tracked files to a snapshot of this session, with the same checks
/// as a rewind (`force` overrides a conflict). Restoring a rewind's
/// `undoSnapshot` undoes it. `out_result_json` receives what was done. May
/// start the background pack merge.
///
/// # Safety
///
/// `session` is NULL or a live handle; `snapshot` is NULL or NUL-terminated;
/// `out_result_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_restore_snapshot(
    session: *const sk_session,
    snapshot: *const c_char,
    force: bool,
    out_result_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_restore_snapshot", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let snap = arg_str(snapshot, "snapshot")?;
            let out = arg_out(out_result_json, "out_result_json")?;
            put_json(out, &s.restore_snapshot(snap, force)?)
        }
    })
}

/// The newest file snapshot of the session (a commit id, as a JSON string), or
/// `null` before the first.
///
/// # Safety
///
/// `session` is NULL or a live handle; `out_json` is NULL or writable. Free the
/// result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_last_snapshot(
    session: *const sk_session,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_last_snapshot", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &s.last_snapshot()?)
        }
    })
}

/// Rewind to before the `turns`-th latest user input (1: the latest turn; the
/// candidates are `sk_session_undo_candidates`), as `sk_session_rewind` does,
/// in `mode` ("files", "conversation" or "both"; `sk_defaults` names the
/// default a binding uses, "conversation"). `SK_INVALID_INPUT` when `turns`
/// is 0 or more than there are.
///
/// # Safety
///
/// `session` is NULL or a live handle; `mode` is NULL or NUL-terminated;
/// `out_result_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_rewind_turns(
    session: *const sk_session,
    turns: u32,
    mode: *const c_char,
    force: bool,
    out_result_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_rewind_turns", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let mode: RewindMode = arg_str(mode, "mode")?.parse()?;
            let out = arg_out(out_result_json, "out_result_json")?;
            put_json(out, &s.rewind_turns(turns as usize, mode, force)?)
        }
    })
}

/// Write the session's index entry now (it is written at close, and by every
/// state update, otherwise).
///
/// # Safety
///
/// `session` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn sk_session_flush_index(session: *const sk_session) -> sk_status {
    guard("sk_session_flush_index", || {
        // SAFETY: per the function's contract.
        unsafe { Ok(arg_handle(session, "session")?.session.flush_index()?) }
    })
}

/// Delete the session for good and start it again, empty, under its id:
/// `*session` is closed and set to NULL whatever the outcome, and
/// `out_session` receives the new handle on success.
///
/// # Safety
///
/// `session` is NULL or points to a session pointer from this library (or
/// NULL) that no other thread uses; `out_session` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sk_session_erase(
    session: *mut *mut sk_session,
    out_session: *mut *mut sk_session,
) -> sk_status {
    guard("sk_session_erase", || {
        // SAFETY: per the function's contract.
        unsafe {
            let out = arg_out(out_session, "out_session")?;
            let Some(h) = take_handle(session) else {
                return Err(FfiError::new(
                    sk_status::SK_NULL_ARGUMENT,
                    "argument `session` is NULL".to_string(),
                ));
            };
            put_handle(
                out,
                sk_session {
                    session: h.session.erase()?,
                },
            )
        }
    })
}

/// The session's OpenAI Responses input items (what the OpenAI Agents SDK
/// keeps), oldest first, as a JSON array. `options_json`: NULL, "" or
/// `{"limit": n, "modelView": bool}`: the last `limit` of the active path (all
/// when absent), or with `modelView` the model view (compaction applied).
///
/// # Safety
///
/// `session` is NULL or a live handle; `options_json` is NULL or
/// NUL-terminated; `out_json` is NULL or writable. Free the result with
/// `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_responses_items(
    session: *const sk_session,
    options_json: *const c_char,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_responses_items", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let o = match opt_str(options_json, "options_json")? {
                Some(j) => ItemsOptions::from_json(j)?,
                None => ItemsOptions::default(),
            };
            let out = arg_out(out_json, "out_json")?;
            put_string(out, s.responses_items(o.limit, o.model_view)?)
        }
    })
}

/// Append OpenAI Responses input items (a JSON array of objects) as messages,
/// in one write; nothing is written if one is refused. `out_messages_json`
/// receives the stored messages.
///
/// # Safety
///
/// `session` is NULL or a live handle; `items_json` is NULL or NUL-terminated;
/// `out_messages_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_append_responses_items(
    session: *const sk_session,
    items_json: *const c_char,
    out_messages_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_append_responses_items", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let items = arg_items(items_json)?;
            let out = arg_out(out_messages_json, "out_messages_json")?;
            put_string(out, to_json_array(&s.append_responses_items(items)?))
        }
    })
}

/// Make `items_json` (a Responses `compaction` item, then the items kept after
/// it) the session's history as the model sees it, keeping the originals: the
/// OpenAI Agents SDK's `replaceHistoryWithCompaction`, in one write.
/// `out_messages_json` receives the stored messages.
///
/// # Safety
///
/// `session` is NULL or a live handle; `items_json` is NULL or NUL-terminated;
/// `out_messages_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_replace_responses_items_with_compaction(
    session: *const sk_session,
    items_json: *const c_char,
    out_messages_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_replace_responses_items_with_compaction", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let items = arg_items(items_json)?;
            let out = arg_out(out_messages_json, "out_messages_json")?;
            put_string(
                out,
                to_json_array(&s.replace_responses_items_with_compaction(items)?),
            )
        }
    })
}

/// Move the head back over the latest message: `out_item_json` receives its
/// Responses item, or `null` when the session has no head. The message stays
/// in the log, on a branch.
///
/// # Safety
///
/// `session` is NULL or a live handle; `out_item_json` is NULL or writable.
/// Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_pop_responses_item(
    session: *const sk_session,
    out_item_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_session_pop_responses_item", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let out = arg_out(out_item_json, "out_item_json")?;
            put_string(
                out,
                s.pop_responses_item()?.unwrap_or_else(|| "null".into()),
            )
        }
    })
}

/// The argument `items_json`: a JSON array (the core checks each item).
unsafe fn arg_items(p: *const c_char) -> FfiResult<Vec<Value>> {
    // SAFETY: forwarded from the caller.
    match unsafe { arg_json(p, "items_json") }? {
        Value::Array(items) => Ok(items),
        other => Err(FfiError::invalid(format!(
            "argument `items_json` must be a JSON array of Responses items, not {}",
            json_kind(&other)
        ))),
    }
}

/// Open session `session_id` for writing, creating it with that id if it does
/// not exist yet (as an adapter given a fresh id by its host must). Two
/// processes racing to create it both end up opening the one session (one of
/// them then gets `SK_BUSY`, as for `sk_session_open`).
///
/// # Safety
///
/// `store` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
/// `out_session` is NULL or writable. Close the session with `sk_session_close`.
#[no_mangle]
pub unsafe extern "C" fn sk_session_open_or_create(
    store: *const sk_store,
    session_id: *const c_char,
    out_session: *mut *mut sk_session,
) -> sk_status {
    guard("sk_session_open_or_create", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let id = arg_str(session_id, "session_id")?;
            let out = arg_out(out_session, "out_session")?;
            put_handle(
                out,
                sk_session {
                    session: s.open_or_create_session(id)?,
                },
            )
        }
    })
}

/// How many times this handle fsynced its log (group commit shares one fsync
/// between concurrent appends), into `out_count`.
///
/// # Safety
///
/// `session` is NULL or a live handle; `out_count` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sk_session_fsync_count(
    session: *const sk_session,
    out_count: *mut u64,
) -> sk_status {
    guard("sk_session_fsync_count", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(session, "session")?.session;
            let out = arg_out(out_count, "out_count")?;
            *out = s.fsync_count();
            Ok(())
        }
    })
}
