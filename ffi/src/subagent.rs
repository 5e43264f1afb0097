//! `sk_subagent`: a subagent's sidechain, open for writing.

use std::ffi::c_char;

use serde_json::Value;
use sessionkit::{group_results_json, to_json_array, Subagent};

use crate::view::sk_view;
use crate::{
    arg_handle, arg_json, arg_object, arg_out, close_handle, guard, json_kind, put_handle,
    put_string, sk_status, FfiError,
};

/// A subagent's sidechain log, open for writing (its lock is exclusive, like a
/// session's). Closing its session does not close it.
///
/// Thread safety: an `sk_subagent` may be used from any number of threads at
/// once; only `sk_subagent_close` must not run concurrently with other uses.
///
/// Processes: as an `sk_session`, only the process that opened it writes
/// through it (`SK_INVALID_INPUT` in a forked child; see "fork()" above).
pub struct sk_subagent {
    agent: Subagent,
}

impl sk_subagent {
    pub(crate) fn new(agent: Subagent) -> sk_subagent {
        sk_subagent { agent }
    }
}

/// Release the subagent's lock, free the handle and set `*subagent` to NULL.
/// NULL, or a pointer to NULL, does nothing. In a forked child, frees the
/// child's copy only.
///
/// # Safety
///
/// `subagent` is NULL or points to a subagent pointer from this library (or
/// NULL); no other thread uses the handle during or after the call.
#[no_mangle]
pub unsafe extern "C" fn sk_subagent_close(subagent: *mut *mut sk_subagent) {
    // SAFETY: per the function's contract.
    unsafe { close_handle(subagent) }
}

/// The subagent's id, as a plain string (not JSON).
///
/// # Safety
///
/// `subagent` is NULL or a live handle; `out_id` is NULL or writable. Free the
/// result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_subagent_id(
    subagent: *const sk_subagent,
    out_id: *mut *mut c_char,
) -> sk_status {
    guard("sk_subagent_id", || {
        // SAFETY: per the function's contract.
        unsafe {
            let a = &arg_handle(subagent, "subagent")?.agent;
            let out = arg_out(out_id, "out_id")?;
            put_string(out, a.id().to_string())
        }
    })
}

/// Append one message (a JSON object) to the sidechain; `out_message_json`
/// receives it as stored. Errors as for `sk_session_append`.
///
/// # Safety
///
/// `subagent` is NULL or a live handle; `message_json` is NULL or
/// NUL-terminated; `out_message_json` is NULL or writable. Free the result with
/// `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_subagent_append(
    subagent: *const sk_subagent,
    message_json: *const c_char,
    out_message_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_subagent_append", || {
        // SAFETY: per the function's contract.
        unsafe {
            let a = &arg_handle(subagent, "subagent")?.agent;
            let m = arg_object(message_json, "message_json")?;
            let out = arg_out(out_message_json, "out_message_json")?;
            put_string(out, a.append(m)?.json().to_string())
        }
    })
}

/// Append a JSON array of messages to the sidechain in one write (all or none);
/// `out_messages_json` receives them as stored.
///
/// # Safety
///
/// `subagent` is NULL or a live handle; `messages_json` is NULL or
/// NUL-terminated; `out_messages_json` is NULL or writable. Free the result with
/// `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_subagent_append_batch(
    subagent: *const sk_subagent,
    messages_json: *const c_char,
    out_messages_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_subagent_append_batch", || {
        // SAFETY: per the function's contract.
        unsafe {
            let a = &arg_handle(subagent, "subagent")?.agent;
            let ms = match arg_json(messages_json, "messages_json")? {
                Value::Array(items) if items.iter().all(Value::is_object) => items,
                other => {
                    return Err(FfiError::invalid(format!(
                        "argument `messages_json` must be a JSON array of message objects, not {}",
                        if other.is_array() {
                            "an array with a non-object item"
                        } else {
                            json_kind(&other)
                        }
                    )))
                }
            };
            let out = arg_out(out_messages_json, "out_messages_json")?;
            put_string(out, to_json_array(&a.append_batch(ms)?))
        }
    })
}

/// Append several groups of messages in one write, with a result per group,
/// as `sk_session_append_groups` does.
///
/// # Safety
///
/// `subagent` is NULL or a live handle; `groups_json` is NULL or
/// NUL-terminated; `out_results_json` is NULL or writable. Free the result with
/// `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_subagent_append_groups(
    subagent: *const sk_subagent,
    groups_json: *const c_char,
    out_results_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_subagent_append_groups", || {
        // SAFETY: per the function's contract.
        unsafe {
            let a = &arg_handle(subagent, "subagent")?.agent;
            let groups = crate::session::arg_groups(groups_json)?;
            let out = arg_out(out_results_json, "out_results_json")?;
            put_string(out, group_results_json(&a.append_groups(groups)?))
        }
    })
}

/// Record the subagent's result (any JSON value nested at most 99 levels): in
/// its metadata (status "completed", or "failed" when `failed`) and as a result
/// record in the main session's log.
///
/// # Safety
///
/// `subagent` is NULL or a live handle; `result_json` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn sk_subagent_finish(
    subagent: *const sk_subagent,
    result_json: *const c_char,
    failed: bool,
) -> sk_status {
    guard("sk_subagent_finish", || {
        // SAFETY: per the function's contract.
        unsafe {
            let a = &arg_handle(subagent, "subagent")?.agent;
            let r = arg_json(result_json, "result_json")?;
            Ok(a.finish(r, failed)?)
        }
    })
}

/// Read the sidechain back as a view; close it with `sk_view_close`.
///
/// # Safety
///
/// `subagent` is NULL or a live handle; `out_view` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sk_subagent_read(
    subagent: *const sk_subagent,
    out_view: *mut *mut sk_view,
) -> sk_status {
    guard("sk_subagent_read", || {
        // SAFETY: per the function's contract.
        unsafe {
            let a = &arg_handle(subagent, "subagent")?.agent;
            let out = arg_out(out_view, "out_view")?;
            put_handle(out, sk_view::new(a.read()?))
        }
    })
}

#[cfg(test)]
mod tests {
    fn send_sync<T: Send + Sync>() {}

    #[test]
    fn handles_are_send_and_sync() {
        send_sync::<super::sk_subagent>();
        send_sync::<crate::sk_session>();
        send_sync::<crate::sk_store>();
        send_sync::<crate::sk_view>();
        send_sync::<crate::sk_remote>();
        send_sync::<crate::sk_follower>();
    }
}
