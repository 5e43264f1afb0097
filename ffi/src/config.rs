//! Settings, instruction files and memory (docs/SETTINGS.md) through a store
//! handle: arguments in, the core's results out as JSON.

use std::os::raw::c_char;
use std::path::Path;

use sessionkit::{InstructionOptions, MemoryScope, SettingSource, SettingsOptions};

use crate::{
    arg_handle, arg_json, arg_out, arg_str, guard, opt_options, opt_str, put_json, put_string,
};
use crate::{sk_status, sk_store};

/// The effective settings of the store's user and project.
///
/// - `options_json`: NULL, "" or `{"sources": ["user", "project", "local",
///   "host"], "overrides": {...}}` (default: every source; `overrides` are the
///   `host` source, nearest of all).
/// - `out_settings_json` receives `{"values": {...}, "origins": {"dotted.key":
///   source}, "sources": [{"source", "path", "status": "loaded" | "missing" |
///   "skipped" | "error", "version", "migrations", "readOnly", "error",
///   "warning"}]}`. A malformed file is reported in its source's `error`
///   (file, line, column); the other sources still load.
///
/// Errors: `SK_INVALID_INPUT` (bad options).
///
/// # Safety
///
/// `store` is NULL or a live handle; `options_json` is NULL or NUL-terminated;
/// `out_settings_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_settings(
    store: *const sk_store,
    options_json: *const c_char,
    out_settings_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_settings", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let options = opt_options(options_json, SettingsOptions::from_json)?;
            let out = arg_out(out_settings_json, "out_settings_json")?;
            put_json(out, &s.settings(&options))
        }
    })
}

/// Set the dotted `key` (`"instructions.names"`) to `value_json` in the
/// settings file of `source` (`"user"`, `"project"` or `"local"`); a JSON
/// `null` is written and removes the key from the sources below. Atomic and
/// locked; an older file is backed up once (`<file>.v<N>.bak`) and rewritten in
/// the current shape.
///
/// - `out_write_json` receives `{"path", "existed", "backup", "migrations"}`.
///
/// Errors: `SK_INVALID_INPUT` (unknown source, `host`, bad key or JSON, a
/// non-object on the key's path, a file that would be larger than 1 MiB or
/// nest more than 100 levels, a file that is not a regular file or resolves
/// outside the project; nothing is written);
/// `SK_CORRUPT` (the file is malformed: file, line, column); `SK_UNSUPPORTED`
/// (the file is of a newer version, never rewritten).
///
/// # Safety
///
/// `store` is NULL or a live handle; the strings are NULL or NUL-terminated;
/// `out_write_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_set_setting(
    store: *const sk_store,
    source: *const c_char,
    key: *const c_char,
    value_json: *const c_char,
    out_write_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_set_setting", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let source = SettingSource::parse(arg_str(source, "source")?)?;
            let key = arg_str(key, "key")?;
            let value = arg_json(value_json, "value_json")?;
            let out = arg_out(out_write_json, "out_write_json")?;
            put_json(out, &s.set_setting(source, key, value)?)
        }
    })
}

/// Remove the dotted `key` from the settings file of `source`, so the sources
/// below show through; `existed` in `out_write_json` says whether it was there.
/// A file made larger than 1 MiB by hand (which readers report in error) is
/// repaired by unsetting what made it so: the write is accepted when the file
/// it leaves is within the limit.
///
/// Errors: as `sk_store_set_setting`.
///
/// # Safety
///
/// `store` is NULL or a live handle; the strings are NULL or NUL-terminated;
/// `out_write_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_unset_setting(
    store: *const sk_store,
    source: *const c_char,
    key: *const c_char,
    out_write_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_unset_setting", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let source = SettingSource::parse(arg_str(source, "source")?)?;
            let key = arg_str(key, "key")?;
            let out = arg_out(out_write_json, "out_write_json")?;
            put_json(out, &s.unset_setting(source, key)?)
        }
    })
}

/// Rewrite the settings file of `source` in the current shape, applying its
/// pending migrations and keeping the older file as `<file>.v<N>.bak` first;
/// nothing else changes. `out_write_json` receives `{"path", "existed",
/// "backup", "migrations"}` (`backup` null and `migrations` empty when the file
/// was current already).
///
/// Errors: as `sk_store_set_setting` (a file of a newer version is
/// `SK_UNSUPPORTED`, never downgraded).
///
/// # Safety
///
/// `store` is NULL or a live handle; `source` is NULL or NUL-terminated;
/// `out_write_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_migrate_settings(
    store: *const sk_store,
    source: *const c_char,
    out_write_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_migrate_settings", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let source = SettingSource::parse(arg_str(source, "source")?)?;
            let out = arg_out(out_write_json, "out_write_json")?;
            put_json(out, &s.migrate_settings(source)?)
        }
    })
}

/// The instruction files that apply to the directory `dir`, in order: the
/// user's, then from the repository root down to `dir`, each followed by its
/// `@path` includes.
///
/// - `options_json`: NULL, "" or `{"names": ["AGENTS.md", ...],
///   "maxIncludeDepth": n}` (default: the settings', else AGENTS.md, CLAUDE.md, 5).
/// - `out_json` receives `{"dir", "root", "names", "maxIncludeDepth", "files":
///   [{"path", "level": "user" | "project" | "include", "includedFrom",
///   "depth", "content"}], "problems": [{"kind": "cycle" | "depthLimit" |
///   "outsideRoots" | "notFound" | "tooLarge" | "unreadable", "path",
///   "includedFrom", "message"}]}`.
///
/// Errors: `SK_NOT_FOUND` (no such directory, or `dir` is not a directory);
/// `SK_INVALID_INPUT` (bad options, a name that is not a plain file name or
/// holds a NUL or another control character).
///
/// # Safety
///
/// `store` is NULL or a live handle; the strings are NULL or NUL-terminated;
/// `out_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_instructions(
    store: *const sk_store,
    dir: *const c_char,
    options_json: *const c_char,
    out_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_instructions", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let dir = arg_str(dir, "dir")?;
            let options = match opt_str(options_json, "options_json")? {
                Some(o) => InstructionOptions::from_json(o)?,
                None => InstructionOptions::default(),
            };
            let out = arg_out(out_json, "out_json")?;
            put_json(out, &s.instructions(Path::new(dir), &options)?)
        }
    })
}

/// Add (`replace` false) or update (`replace` true) the memory `name` of
/// `scope` (`"project"` or `"user"`) with the text `content`.
///
/// - `out_entry_json` receives `{"name", "path", "bytes", "summary"}`.
///
/// Errors: `SK_CONFLICT` (adding a name taken); `SK_NOT_FOUND` (updating an
/// unknown name); `SK_INVALID_INPUT` (a name that could leave the directory,
/// an unknown scope, text over 1 MiB, a symlinked directory or file).
///
/// # Safety
///
/// `store` is NULL or a live handle; the strings are NULL or NUL-terminated;
/// `out_entry_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_memory_write(
    store: *const sk_store,
    scope: *const c_char,
    name: *const c_char,
    content: *const c_char,
    replace: bool,
    out_entry_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_memory_write", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let scope = MemoryScope::parse(arg_str(scope, "scope")?)?;
            let name = arg_str(name, "name")?;
            let content = arg_str(content, "content")?;
            let out = arg_out(out_entry_json, "out_entry_json")?;
            let entry = if replace {
                s.update_memory(scope, name, content)?
            } else {
                s.add_memory(scope, name, content)?
            };
            put_json(out, &entry)
        }
    })
}

/// Delete the memory `name` of `scope`.
///
/// Errors: `SK_NOT_FOUND` (unknown name); `SK_INVALID_INPUT` (as
/// `sk_store_memory_write`).
///
/// # Safety
///
/// `store` is NULL or a live handle; the strings are NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn sk_store_memory_delete(
    store: *const sk_store,
    scope: *const c_char,
    name: *const c_char,
) -> sk_status {
    guard("sk_store_memory_delete", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let scope = MemoryScope::parse(arg_str(scope, "scope")?)?;
            Ok(s.delete_memory(scope, arg_str(name, "name")?)?)
        }
    })
}

/// The memories of `scope`, by name: `out_list_json` receives `[{"name",
/// "path", "bytes", "summary"}]`.
///
/// Errors: `SK_INVALID_INPUT` (unknown scope, a symlinked directory).
///
/// # Safety
///
/// `store` is NULL or a live handle; `scope` is NULL or NUL-terminated;
/// `out_list_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_memory_list(
    store: *const sk_store,
    scope: *const c_char,
    out_list_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_memory_list", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let scope = MemoryScope::parse(arg_str(scope, "scope")?)?;
            let out = arg_out(out_list_json, "out_list_json")?;
            put_json(out, &s.list_memories(scope)?)
        }
    })
}

/// The text of the memory `name` of `scope`, into `out_content` (not JSON).
///
/// Errors: `SK_NOT_FOUND` (unknown name); `SK_INVALID_INPUT` (as
/// `sk_store_memory_write`).
///
/// # Safety
///
/// `store` is NULL or a live handle; the strings are NULL or NUL-terminated;
/// `out_content` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_memory_read(
    store: *const sk_store,
    scope: *const c_char,
    name: *const c_char,
    out_content: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_memory_read", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let scope = MemoryScope::parse(arg_str(scope, "scope")?)?;
            let name = arg_str(name, "name")?;
            let out = arg_out(out_content, "out_content")?;
            put_string(out, s.read_memory(scope, name)?)
        }
    })
}

/// The directory holding the memories of `scope` ("project" or "user"), as a
/// JSON string (whether or not it exists yet).
///
/// # Safety
///
/// `store` is NULL or a live handle; `scope` is NULL or NUL-terminated;
/// `out_path_json` is NULL or writable. Free the result with `sk_string_free`.
#[no_mangle]
pub unsafe extern "C" fn sk_store_memory_path(
    store: *const sk_store,
    scope: *const c_char,
    out_path_json: *mut *mut c_char,
) -> sk_status {
    guard("sk_store_memory_path", || {
        // SAFETY: per the function's contract.
        unsafe {
            let s = &arg_handle(store, "store")?.store;
            let scope = MemoryScope::parse(arg_str(scope, "scope")?)?;
            let out = arg_out(out_path_json, "out_path_json")?;
            put_json(out, &s.memory_path(scope))
        }
    })
}
