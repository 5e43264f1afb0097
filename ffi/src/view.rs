//! `sk_view`: a read-only session or sidechain, loaded without a lock.

use std::ffi::c_char;

use sessionkit::{to_json_array, SessionView};

use crate::store::model_view_options;
use crate::{arg_handle, arg_out, arg_str, close_handle, guard, put_json, put_string, sk_status};

/// A session (or a subagent's sidechain) as it was on disk when it was loaded.
/// Holds no lock and never changes.
///
/// Thread safety: an `sk_view` may be read from any number of threads at once;
/// only `sk_view_close` must not run concurrently with other uses.
pub struct sk_view {
    view: SessionView,
}

impl sk_view {
    pub(crate) fn new(view: SessionView) -> sk_view {
        sk_view { view }
    }
}

/// Close a view and set `*view` to NULL. NULL, or a pointer to NULL, does nothing.
///
/// # Safety
///
/// `view` is NULL or points to a view pointer from this library (or NULL); no
/// other thread uses the view during or after the call.
#[no_mangle]
pub unsafe extern "C" fn sk_view_close(view: *mut *mut sk_view) {
    // SAFETY: per the function's contract.
    unsafe { close_handle(view) }
}

/// What loading found, as a JSON object: `{"head": id|null, "header":
/// object|null, "messageCount": n, "report": readReport, "records": [...]}`.
/// `records` are the state and subagent records in log order; `report` is
/// FORMAT.md §9.1: `skipped` and `tornTail` (`{line, offset, length, kind,
/// reason}`), `brokenChains`, `duplicateIds`, `unknownRecords`, `missingBlobs`
/// (`{messageId, field, sha256}`), `warnings`.
///
/// # Safety
///
/// `view` is NULL or a live view; `out_json` is NULL or writable. Free the
/// result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_view_info(
    view: *const sk_view,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_view_info", || {
        // SAFETY: per the function's contract.
        unsafe {
            let v = &arg_handle(view, "view")?.view;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &v.info())
        }
    })
}

/// The messages from the root to the head, as a JSON array of message objects
/// (patches applied, blobs inlined).
///
/// # Safety
///
/// `view` is NULL or a live view; `out_json` is NULL or writable. Free the
/// result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_view_active_path(
    view: *const sk_view,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_view_active_path", || {
        // SAFETY: per the function's contract.
        unsafe {
            let v = &arg_handle(view, "view")?.view;
            let out = arg_out(out_json, "out_json")?;
            put_string(out, to_json_array(&v.active_path()?))
        }
    })
}

/// The active path for display: each message has `visible` and `compacted` as
/// booleans. A JSON array.
///
/// # Safety
///
/// `view` is NULL or a live view; `out_json` is NULL or writable. Free the
/// result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_view_ui(view: *const sk_view, out_json: *mut *mut c_char) -> sk_status {
    guard("sk_view_ui", || {
        // SAFETY: per the function's contract.
        unsafe {
            let v = &arg_handle(view, "view")?.view;
            let out = arg_out(out_json, "out_json")?;
            put_string(out, to_json_array(&v.ui_view()?))
        }
    })
}

/// What goes to the model, as a JSON array of messages. `options_json`: NULL, ""
/// or `{"lastN": n, "tokenBudget": n}`.
///
/// # Safety
///
/// `view` is NULL or a live view; `options_json` is NULL or NUL-terminated;
/// `out_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_view_model(
    view: *const sk_view,
    options_json: *const c_char,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_view_model", || {
        // SAFETY: per the function's contract.
        unsafe {
            let v = &arg_handle(view, "view")?.view;
            let opts = model_view_options(options_json)?;
            let out = arg_out(out_json, "out_json")?;
            put_string(out, to_json_array(&v.model_view(&opts)?))
        }
    })
}

/// One message by id (patches applied, blobs inlined), as a JSON object.
/// `SK_NOT_FOUND` for an unknown id.
///
/// # Safety
///
/// `view` is NULL or a live view; `message_id` is NULL or NUL-terminated;
/// `out_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_view_message(
    view: *const sk_view,
    message_id: *const c_char,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_view_message", || {
        // SAFETY: per the function's contract.
        unsafe {
            let v = &arg_handle(view, "view")?.view;
            let id = arg_str(message_id, "message_id")?;
            let out = arg_out(out_json, "out_json")?;
            put_string(out, v.message(id)?.json().to_string())
        }
    })
}

/// The full id of the message named by `prefix` (on any branch): the message
/// whose id is `prefix`, else the only one whose id starts with it. `out_id`
/// receives the id (free it with `sk_string_free`).
///
/// Errors: `SK_NOT_FOUND` when no message id starts with `prefix`;
/// `SK_INVALID_INPUT` when several do (the last error names them) or `prefix`
/// is empty.
///
/// # Safety
///
/// `view` is NULL or a live view; `prefix` is NULL or NUL-terminated; `out_id`
/// is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sk_view_resolve_message(
    view: *const sk_view,
    prefix: *const c_char,
    out_id: *mut *mut c_char,
) -> sk_status {
    guard("sk_view_resolve_message", || {
        // SAFETY: per the function's contract.
        unsafe {
            let v = &arg_handle(view, "view")?.view;
            let prefix = arg_str(prefix, "prefix")?;
            let out = arg_out(out_id, "out_id")?;
            put_string(out, v.resolve_message(prefix)?)
        }
    })
}

/// Every message with its place in the tree, in log order: a JSON array of
/// `{"id", "parentId", "role", "timestamp", "preview", "children",
/// "onActivePath", "isHead", "compacted"}`.
///
/// # Safety
///
/// `view` is NULL or a live view; `out_json` is NULL or writable. Free the
/// result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_view_tree(
    view: *const sk_view,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_view_tree", || {
        // SAFETY: per the function's contract.
        unsafe {
            let v = &arg_handle(view, "view")?.view;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &v.tree()?)
        }
    })
}

/// The branches of the session, one per leaf: a JSON array of `{"leafId",
/// "length", "forkPointId", "isActive", "lastTimestamp"}`.
///
/// # Safety
///
/// `view` is NULL or a live view; `out_json` is NULL or writable. Free the
/// result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_view_branches(
    view: *const sk_view,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_view_branches", || {
        // SAFETY: per the function's contract.
        unsafe {
            let v = &arg_handle(view, "view")?.view;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &v.branches()?)
        }
    })
}
