//! Import of other agents' transcripts, listing every project of a home, and
//! export: the calls that convert between sessionkit and other shapes.

use std::ffi::c_char;
use std::path::PathBuf;

use sessionkit::{ExportFormat, ExportToOptions, ImportOptions, StoreOptions};

use crate::store::sk_store;
use crate::{arg_handle, arg_out, arg_str, guard, opt_str, put_json, put_string, sk_status};

/// Import other agents' transcripts: Claude Code, Codex CLI, pi, Gemini CLI,
/// Copilot CLI, opencode databases, seed-style logs (FORMAT.md §22).
///
/// - `paths_json`: a JSON array of paths, each a transcript file or a
///   directory searched for `*.jsonl` files and opencode databases (required).
/// - `options_json`: NULL, "" or a JSON object: `from` ("claude-code" |
///   "codex" | "deepcode" | "pi" | "gemini-cli" |
///   "copilot-cli" | "opencode"; detected per file when
///   absent), `project` (the project to import into; by default the one each
///   source names, whether or not its directory exists here), `mapPaths` (`[{"from", "to"}]`: prefixes
///   of the named working directory to remap, absolute paths), `store`
///   (store options as for `sk_store_open`).
/// - `out_report_json`: receives `{"sources": [{"path", "format", "outcome":
///   "imported" | "upToDate" | "changed" | "failed", "error", "project",
///   "notice", "sessionId", "agentId", "created", "lines", "messagesAdded",
///   "recordsAdded", "skipped": [{"line", "reason"}], "unmapped": [...]}],
///   "messagesAdded", "failed"}`. A source that could not be imported is in the
///   report, not the status.
///
/// Only regular files are read (a link to one is followed); a source larger
/// than 1 GiB, or naming a relative working directory, fails in the report.
///
/// Errors, before anything is read or written: `SK_NULL_ARGUMENT`,
/// `SK_INVALID_UTF8`, `SK_INVALID_INPUT` (bad JSON or options, an empty
/// `project` or one that is not a directory, a path mapping that is not two
/// absolute paths, an empty `store.home`, an empty
/// path, a path that is a FIFO, a device or a socket), `SK_NOT_FOUND` (a path
/// or the `project` that does not exist), `SK_IO`.
///
/// # Safety
///
/// String arguments are NULL or NUL-terminated; `out_report_json` is NULL or
/// writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_import(
    paths_json: *const c_char,
    options_json: *const c_char,
    out_report_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_import", || {
        // SAFETY: per the function's contract.
        unsafe {
            let paths = sessionkit::parse_json("paths_json", arg_str(paths_json, "paths_json")?)?;
            let paths: Vec<PathBuf> = serde_json::from_value(paths).map_err(|e| {
                sessionkit::Error::InvalidInput(format!(
                    "paths_json must be an array of path strings: {e}"
                ))
            })?;
            let options = match opt_str(options_json, "options_json")? {
                Some(o) => ImportOptions::from_json(o)?,
                None => ImportOptions::default(),
            };
            let out = arg_out(out_report_json, "out_report_json")?;
            put_json(out, &sessionkit::import(&paths, &options, &mut |_| {})?)
        }
    })
}

/// The sessions of every project in a home: a JSON array of `{"projectCode",
/// "projectRoot", "sessions": [index entry], "error"}` by project code.
///
/// - `options_json`: NULL, "" or store options as for `sk_store_open` (only
///   `home` matters here).
///
/// Errors: `SK_INVALID_INPUT` (bad options, no home), `SK_IO`.
///
/// # Safety
///
/// `options_json` is NULL or NUL-terminated; `out_json` is NULL or writable.
/// Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_list_all_sessions(
    options_json: *const c_char,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_list_all_sessions", || {
        // SAFETY: per the function's contract.
        unsafe {
            let options = match opt_str(options_json, "options_json")? {
                Some(o) => StoreOptions::from_json(o)?,
                None => StoreOptions::default(),
            };
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &sessionkit::list_all_sessions(&options)?)
        }
    })
}

/// A session's active path as text: `format` "jsonl" (seed-style, one message
/// per line), "markdown" (a transcript, tool calls folded) or "json" (one
/// array of the UI view's messages). Blobs are inlined.
///
/// Errors: `SK_NOT_FOUND` (unknown session), `SK_INVALID_INPUT` (an unknown
/// format or an invalid id).
///
/// # Safety
///
/// `store` is NULL or a live handle; string arguments are NULL or
/// NUL-terminated; `out_text` is NULL or writable. Free the result with
/// `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_export_session(
    store: *const sk_store,
    session_id: *const c_char,
    format: *const c_char,
    out_text: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_export_session", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let id = arg_str(session_id, "session_id")?;
            let format: ExportFormat = arg_str(format, "format")?.parse()?;
            let out = arg_out(out_text, "out_text")?;
            put_string(out, s.export_session(id, format)?)
        }
    })
}

/// Write session `session_id`'s active path into another agent's own store,
/// where that agent lists and resumes it (FORMAT.md §22.9, §22.10).
///
/// - `options_json`: `{"to": "claude-code" | "codex", "home": "/abs/dir",
///   "modelProvider": "openai"}`; `to` is required. `home` is the agent's
///   home (default `$CLAUDE_CONFIG_DIR`, else `~/.claude`; `$CODEX_HOME`,
///   else `~/.codex`); `modelProvider` is for `codex` only.
/// - `out_json` receives `{"to", "path", "nativeId", "idSource": "session" |
///   "derived", "items", "dropped", "written", "resumeCommand", "notice"}`.
///
/// Errors, nothing written: `SK_NOT_FOUND` (unknown session),
/// `SK_INVALID_INPUT` (bad options JSON, an unknown target, a relative home,
/// `modelProvider` for `claude-code`), `SK_CONFLICT` (the file exists with
/// other contents: left as it is), `SK_IO`.
///
/// # Safety
///
/// `store` is NULL or a live handle; string arguments are NULL or
/// NUL-terminated; `out_json` is NULL or writable. Free the result with
/// `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_export_to(
    store: *const sk_store,
    session_id: *const c_char,
    options_json: *const c_char,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_export_to", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let id = arg_str(session_id, "session_id")?;
            let options = ExportToOptions::from_json(arg_str(options_json, "options_json")?)?;
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &s.export_to(id, &options)?)
        }
    })
}
