//! A graph checkpointer's threads (LangGraph's saver contract, FORMAT.md §24):
//! checkpoints, pending writes and channel values, as JSON with the
//! serializer's bytes in base64.

use std::ffi::c_char;

use sessionkit::{CheckpointPut, CheckpointQuery, CheckpointWrites, PruneStrategy};

use crate::store::sk_store;
use crate::{
    arg_handle, arg_out, arg_str, arg_typed, guard, opt_str, put_json, put_string, sk_status,
};

/// Store a checkpoint of thread `thread_id` (any string, mapped to a session
/// like a conversation id), with the values of its new channel versions, in
/// one write. `put_json`: `{"ns", "checkpoint" (the checkpoint without
/// channel_values; "id" required), "metadata", "parentId", "values": [{"channel",
/// "version", "value": {"type", "bytes" (base64)} | null}]}`. A value the thread
/// holds already is not stored again; a checkpoint id stored before is replaced.
///
/// # Safety
///
/// `store` is NULL or a live handle; the strings are NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn sk_checkpoint_put(
    store: *const sk_store,
    thread_id: *const c_char,
    put_json: *const c_char,
) -> sk_status {
    guard("sk_checkpoint_put", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let thread = arg_str(thread_id, "thread_id")?;
            let put = CheckpointPut::from_json(arg_str(put_json, "put_json")?)?;
            Ok(s.checkpoint_put(thread, put)?)
        }
    })
}

/// Store the writes a task made, pending on a checkpoint. `writes_json`:
/// `{"ns", "checkpointId", "taskId", "taskPath", "writes": [{"channel", "value":
/// {"type", "bytes" (base64)}}]}`. A write at an index the task wrote before is
/// kept as first written, except to `__error__`, `__scheduled__`,
/// `__interrupt__` and `__resume__`, which are replaced.
///
/// # Safety
///
/// `store` is NULL or a live handle; the strings are NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn sk_checkpoint_put_writes(
    store: *const sk_store,
    thread_id: *const c_char,
    writes_json: *const c_char,
) -> sk_status {
    guard("sk_checkpoint_put_writes", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let thread = arg_str(thread_id, "thread_id")?;
            let w = CheckpointWrites::from_json(arg_str(writes_json, "writes_json")?)?;
            Ok(s.checkpoint_put_task_writes(thread, w)?)
        }
    })
}

/// Checkpoint `checkpoint_id` (NULL: the newest) of namespace `ns` of a
/// thread: `out_json` receives `{"threadId", "ns", "id", "parentId",
/// "checkpoint", "metadata", "values": {channel: {"type", "bytes"}}, "writes":
/// [{"taskId", "channel", "value", "taskPath", "idx"}], "pendingSends"}`, or
/// `null` when there is none.
///
/// # Safety
///
/// `store` is NULL or a live handle; the strings are NULL or NUL-terminated
/// (`checkpoint_id` may be NULL); `out_json` is NULL or writable. Free the
/// result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_checkpoint_get(
    store: *const sk_store,
    thread_id: *const c_char,
    ns: *const c_char,
    checkpoint_id: *const c_char,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_checkpoint_get", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let thread = arg_str(thread_id, "thread_id")?;
            let ns = arg_str(ns, "ns")?;
            let id = opt_str(checkpoint_id, "checkpoint_id")?;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &s.checkpoint_get(thread, ns, id)?)
        }
    })
}

/// The checkpoints `query_json` selects (`{"threadId", "ns", "checkpointId",
/// "filter", "before", "limit"}`, each optional; NULL or empty selects all),
/// newest first within each thread and namespace, as a JSON array of what
/// `sk_checkpoint_get` returns.
///
/// # Safety
///
/// `store` is NULL or a live handle; `query_json` is NULL or NUL-terminated;
/// `out_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_checkpoint_list(
    store: *const sk_store,
    query_json: *const c_char,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_checkpoint_list", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let q = CheckpointQuery::from_json(opt_str(query_json, "query_json")?.unwrap_or(""))?;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &s.checkpoint_list(&q)?)
        }
    })
}

/// Move a thread's session to the trash (restorable with
/// `sk_store_restore_session`). A thread that does not exist is not an error.
///
/// # Safety
///
/// `store` is NULL or a live handle; `thread_id` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn sk_checkpoint_delete_thread(
    store: *const sk_store,
    thread_id: *const c_char,
) -> sk_status {
    guard("sk_checkpoint_delete_thread", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            Ok(s.checkpoint_delete_thread(arg_str(thread_id, "thread_id")?)?)
        }
    })
}

/// Copy every checkpoint, write and value of thread `source` into thread
/// `target` (created if needed). Nothing happens when `source` does not exist.
///
/// # Safety
///
/// `store` is NULL or a live handle; the strings are NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn sk_checkpoint_copy_thread(
    store: *const sk_store,
    source: *const c_char,
    target: *const c_char,
) -> sk_status {
    guard("sk_checkpoint_copy_thread", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let source = arg_str(source, "source")?;
            let target = arg_str(target, "target")?;
            Ok(s.checkpoint_copy_thread(source, target)?)
        }
    })
}

/// Prune the threads of `thread_ids_json` (a JSON array of strings):
/// `strategy` `"keep_latest"` keeps the newest checkpoint of each namespace,
/// `"delete"` moves the threads to the trash.
///
/// # Safety
///
/// `store` is NULL or a live handle; the strings are NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn sk_checkpoint_prune(
    store: *const sk_store,
    thread_ids_json: *const c_char,
    strategy: *const c_char,
) -> sk_status {
    guard("sk_checkpoint_prune", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let ids: Vec<String> =
                arg_typed(thread_ids_json, "thread_ids_json", "an array of strings")?;
            let strategy: PruneStrategy = arg_str(strategy, "strategy")?.parse()?;
            Ok(s.checkpoint_prune(&ids, strategy)?)
        }
    })
}

/// Remove, in every thread, the checkpoints whose `metadata.run_id` is in
/// `run_ids_json` (a JSON array of strings), with their writes.
///
/// # Safety
///
/// `store` is NULL or a live handle; `run_ids_json` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn sk_checkpoint_delete_for_runs(
    store: *const sk_store,
    run_ids_json: *const c_char,
) -> sk_status {
    guard("sk_checkpoint_delete_for_runs", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let ids: Vec<String> = arg_typed(run_ids_json, "run_ids_json", "an array of strings")?;
            Ok(s.checkpoint_delete_for_runs(&ids)?)
        }
    })
}

/// For each channel of `channels_json` (a JSON array of strings), the writes
/// on the path to checkpoint `checkpoint_id` (NULL: the newest of `ns`) back
/// to the nearest ancestor holding a value for it: `out_json` receives
/// `[{"channel", "writes", "seed"}]` (`seed` `null` when no ancestor holds one).
///
/// # Safety
///
/// `store` is NULL or a live handle; the strings are NULL or NUL-terminated
/// (`checkpoint_id` may be NULL); `out_json` is NULL or writable. Free the
/// result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_checkpoint_delta_history(
    store: *const sk_store,
    thread_id: *const c_char,
    ns: *const c_char,
    checkpoint_id: *const c_char,
    channels_json: *const c_char,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_checkpoint_delta_history", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let thread = arg_str(thread_id, "thread_id")?;
            let ns = arg_str(ns, "ns")?;
            let id = opt_str(checkpoint_id, "checkpoint_id")?;
            let channels: Vec<String> =
                arg_typed(channels_json, "channels_json", "an array of strings")?;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &s.checkpoint_delta_history(thread, ns, id, &channels)?)
        }
    })
}

/// The channel version after `current_json` (JSON: `null`, a number or a
/// version this made; NULL means `null`), as a string in `out_version`.
///
/// # Safety
///
/// `current_json` is NULL or NUL-terminated; `out_version` is NULL or
/// writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_next_channel_version(
    current_json: *const c_char,
    out_version: *mut *mut c_char,
) -> sk_status {
    guard("sk_next_channel_version", || {
        // SAFETY: per the function's contract.
        unsafe {
            let current = match opt_str(current_json, "current_json")? {
                Some(t) => Some(sessionkit::parse_json("argument `current_json`", t)?),
                None => None,
            };
            let out = arg_out(out_version, "out_version")?;
            put_string(out, sessionkit::next_channel_version(current.as_ref())?)
        }
    })
}

/// The checkpoints session `session_id` holds (a checkpointer's thread),
/// without their values, oldest first in each namespace, as a JSON array:
/// what `sessionkit show` lists. Empty for a session of messages only.
///
/// # Safety
///
/// `store` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
/// `out_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_checkpoint_summaries(
    store: *const sk_store,
    session_id: *const c_char,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_checkpoint_summaries", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let id = arg_str(session_id, "session_id")?;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &s.checkpoint_summaries(id)?)
        }
    })
}
