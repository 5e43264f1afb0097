//! Fuzzed bytes through every C ABI entry point that takes JSON or a string,
//! on a real store in a temporary directory: the cargo-fuzz target `abi`
//! (fuzz/ builds this crate's sources as a program with `--cfg fuzzing`) and,
//! in the unit tests, its stable proptest form. Longer stable run:
//! `PROPTEST_CASES=10000 cargo test --release -p sessionkit-ffi --lib abi_fuzz`.
//!
//! An input is a program: an operation byte, then that operation's string
//! arguments, each ended by a NUL byte (a C string ends at its first NUL, so
//! that is all a C host can pass). `@S` in an argument stands for the id of a
//! session the store holds, `@M` for one of its message ids, `@P` for the
//! project directory and `@R` for a remote that cannot be reached (a Unix
//! socket that does not exist), so that inputs reach past the id checks.
//!
//! The remote calls (`sk_remote_*`, `sk_follower_*`) run on a handle to the
//! PostgreSQL server of `SESSIONKIT_TEST_PG`, each harness under a project
//! name of its own; without that server they are not run, except
//! `sk_remote_open`, which must then fail cleanly. `sk_remote_open` runs only
//! on options that name `@R` or are refused before connecting: any other
//! options would connect wherever the fuzzer points them (or to the
//! `SESSIONKIT_REMOTE` of the machine).
//!
//! The contract checked after every call: no crash or abort; a status the
//! header documents, never `SK_INTERNAL`; a failure has a last error that
//! names the function; results are UTF-8 (and JSON where documented); and a
//! refused call leaves every file of the home and the project byte-identical.

use std::collections::BTreeMap;
use std::ffi::{c_char, CStr, CString};
use std::path::{Path, PathBuf};
use std::ptr;

use crate::*;

/// Operations per input, at most: enough to combine a few calls.
const MAX_OPS: usize = 8;

/// Everything under `dir`, path to bytes (symlinks as their target's name).
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                out.insert(p.clone(), b"<dir>".to_vec());
                stack.push(p);
            } else if t.is_symlink() {
                let target = std::fs::read_link(&p).unwrap_or_default();
                out.insert(p, target.into_os_string().into_encoded_bytes());
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}

/// A fresh store with one open session of two messages and a subagent.
pub struct AbiFuzz {
    dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    store: *mut sk_store,
    session: *mut sk_session,
    subagent: *mut sk_subagent,
    session_id: String,
    message_id: String,
    /// A connection string no server answers (`@R`).
    dead_remote: String,
    /// Opened at the first remote call: NULL without a server.
    remote: Option<*mut sk_remote>,
}

fn cstr(s: &str) -> CString {
    CString::new(s).expect("no NUL in a harness string")
}

/// Take a string the library returned, and free it.
unsafe fn take(p: *mut c_char) -> Vec<u8> {
    assert!(!p.is_null(), "SK_OK with a NULL result");
    let bytes = unsafe { CStr::from_ptr(p) }.to_bytes().to_vec();
    unsafe { sk_string_free(p) };
    bytes
}

fn check_ok(status: sk_status, what: &str) {
    if status != sk_status::SK_OK {
        // SAFETY: borrowed, valid until the next call on this thread.
        let e = unsafe { CStr::from_ptr(sk_last_error()) };
        panic!("{what}: {status:?}: {e:?}");
    }
}

impl AbiFuzz {
    pub fn new() -> AbiFuzz {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let home = dir.path().join("home");
        let project = dir.path().join("project");
        std::fs::create_dir(&project).expect("the project directory");
        std::fs::write(project.join("a.txt"), "a\n").expect("a project file");
        let mut f = AbiFuzz {
            dir,
            home,
            project,
            store: ptr::null_mut(),
            session: ptr::null_mut(),
            subagent: ptr::null_mut(),
            session_id: String::new(),
            message_id: String::new(),
            dead_remote: String::new(),
            remote: None,
        };
        f.dead_remote = format!("host={} port=1", f.dir.path().join("no-server").display());
        let options = serde_json::json!({"home": f.home, "maxSessions": 0}).to_string();
        let root = cstr(f.project.to_str().expect("a UTF-8 temporary path"));
        // SAFETY: valid strings and out-parameters throughout.
        unsafe {
            check_ok(
                sk_store_open(root.as_ptr(), cstr(&options).as_ptr(), &mut f.store),
                "open the store",
            );
            check_ok(
                sk_session_create(f.store, ptr::null(), &mut f.session),
                "create a session",
            );
            let mut out = ptr::null_mut();
            check_ok(sk_session_id(f.session, &mut out), "session id");
            f.session_id = String::from_utf8(take(out)).expect("a UTF-8 id");
            let user = cstr(r#"{"role": "user", "content": "hello"}"#);
            check_ok(
                sk_session_user_input(f.session, user.as_ptr(), &mut out),
                "user input",
            );
            let m: serde_json::Value =
                serde_json::from_slice(&take(out)).expect("a message as JSON");
            f.message_id = m["id"].as_str().expect("a message id").to_string();
            let reply = cstr(r#"{"role": "assistant", "content": "hi"}"#);
            check_ok(
                sk_session_append(f.session, reply.as_ptr(), &mut out),
                "append",
            );
            drop(take(out));
            check_ok(
                sk_session_spawn_subagent(
                    f.session,
                    cstr("helper").as_ptr(),
                    ptr::null(),
                    &mut f.subagent,
                ),
                "spawn a subagent",
            );
        }
        f
    }

    /// The arguments of one operation with `@S`, `@M` and `@P` replaced.
    fn substitute(&self, arg: &[u8]) -> CString {
        let mut out = Vec::with_capacity(arg.len());
        let mut i = 0;
        while i < arg.len() {
            let rest = &arg[i..];
            let with: Option<&[u8]> = if rest.starts_with(b"@S") {
                Some(self.session_id.as_bytes())
            } else if rest.starts_with(b"@M") {
                Some(self.message_id.as_bytes())
            } else if rest.starts_with(b"@P") {
                Some(self.project.as_os_str().as_encoded_bytes())
            } else if rest.starts_with(b"@R") {
                Some(self.dead_remote.as_bytes())
            } else {
                None
            };
            match with {
                Some(w) => {
                    out.extend_from_slice(w);
                    i += 2;
                }
                None => {
                    out.push(arg[i]);
                    i += 1;
                }
            }
        }
        CString::new(out).expect("arguments are split at NUL bytes")
    }

    /// Run `data` as a program of operations (see the module's comment).
    pub fn run(&mut self, data: &[u8]) {
        let mut rest = data;
        for _ in 0..MAX_OPS {
            let Some((&op, tail)) = rest.split_first() else {
                return;
            };
            let op = usize::from(op) % OPS.len();
            let (name, arity, _) = OPS[op];
            let mut args = Vec::with_capacity(arity);
            let mut tail = tail;
            for _ in 0..arity {
                let end = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
                args.push(self.substitute(&tail[..end]));
                tail = tail.get(end + 1..).unwrap_or(&[]);
            }
            rest = tail;
            if skip(name, &args) || self.skip_remote(name, &args) {
                continue;
            }
            self.call(op, &args);
        }
    }

    /// Whether a remote call is left out: `sk_remote_open` with options that
    /// could connect somewhere real, any other without a server to call.
    fn skip_remote(&mut self, name: &str, args: &[CString]) -> bool {
        if name == "sk_remote_open" {
            let text = args[0].as_bytes();
            return match serde_json::from_slice::<serde_json::Value>(text) {
                Ok(serde_json::Value::Object(o)) => {
                    o.get("url").and_then(|u| u.as_str()) != Some(self.dead_remote.as_str())
                }
                // Empty options take the machine's remote; others are refused.
                _ => text.trim_ascii().is_empty(),
            };
        }
        (name.starts_with("sk_remote_") || name.starts_with("sk_follower_"))
            && self.remote().is_null()
    }

    /// The harness's remote on the test server, opened once; NULL without one.
    fn remote(&mut self) -> *mut sk_remote {
        if let Some(r) = self.remote {
            return r;
        }
        let mut r = ptr::null_mut();
        if let Some(url) = std::env::var("SESSIONKIT_TEST_PG")
            .ok()
            .filter(|u| !u.is_empty())
        {
            // A project name of its own: harnesses never meet on the server.
            let project = format!(
                "abi-fuzz-{}-{}",
                std::process::id(),
                self.dir.path().file_name().unwrap_or_default().display()
            );
            let options = serde_json::json!({"url": url, "project": project, "holder": "fuzz"});
            // SAFETY: a live store, a valid string and out-parameter.
            unsafe {
                check_ok(
                    sk_remote_open(self.store, cstr(&options.to_string()).as_ptr(), &mut r),
                    "open the remote",
                );
            }
        }
        self.remote = Some(r);
        r
    }

    fn call(&mut self, op: usize, args: &[CString]) {
        let (name, _, json_result) = OPS[op];
        let before = tree(self.dir.path());
        let mut out: *mut c_char = ptr::null_mut();
        // SAFETY: live handles, NUL-terminated arguments, writable out-parameters.
        let status = unsafe { self.dispatch(op, args, &mut out) };
        let code = status as i32;
        assert!(
            (0..=10).contains(&code) && status != sk_status::SK_INTERNAL,
            "{name}({args:?}): {status:?}: {:?}",
            unsafe { CStr::from_ptr(sk_last_error()) }
        );
        assert_ne!(
            status,
            sk_status::SK_NULL_ARGUMENT,
            "{name}: no NULL was passed"
        );
        if status == sk_status::SK_OK {
            if !out.is_null() {
                // SAFETY: a string this library returned.
                let bytes = unsafe { take(out) };
                let text = std::str::from_utf8(&bytes)
                    .unwrap_or_else(|e| panic!("{name}: a result that is not UTF-8: {e}"));
                if json_result {
                    serde_json::from_str::<serde_json::Value>(text)
                        .unwrap_or_else(|e| panic!("{name}: a result that is not JSON: {e}"));
                }
            }
            return;
        }
        assert!(out.is_null(), "{name}: an out-parameter written on failure");
        // SAFETY: borrowed, valid until the next call on this thread.
        let message = unsafe { CStr::from_ptr(sk_last_error()) }.to_string_lossy();
        assert!(
            message.starts_with(&format!("{name}: ")) && message.len() > name.len() + 2,
            "{name}({args:?}): {status:?} with the last error {message:?}"
        );
        let after = tree(self.dir.path());
        if before != after {
            let changed: Vec<_> = after
                .keys()
                .chain(before.keys())
                .filter(|p| before.get(*p) != after.get(*p))
                .collect();
            panic!("{name}({args:?}) refused ({status:?}: {message}) but changed {changed:?}");
        }
    }

    /// Call operation `op`; a string result (and only one) goes to `out`.
    unsafe fn dispatch(&mut self, op: usize, a: &[CString], out: &mut *mut c_char) -> sk_status {
        let st = self.store;
        let se = self.session;
        let sa = self.subagent;
        let re = self.remote.unwrap_or(ptr::null_mut());
        let p = |i: usize| a[i].as_ptr();
        let truthy = |i: usize| a[i].as_bytes().first().is_some_and(|b| b & 1 == 1);
        unsafe {
            match OPS[op].0 {
                "sk_store_open" => {
                    let mut s = ptr::null_mut();
                    let r = sk_store_open(p(0), p(1), &mut s);
                    sk_store_close(&mut s);
                    r
                }
                "sk_list_all_sessions" => sk_list_all_sessions(p(0), out),
                "sk_checkpoint_put" => sk_checkpoint_put(st, p(0), p(1)),
                "sk_checkpoint_put_writes" => sk_checkpoint_put_writes(st, p(0), p(1)),
                "sk_checkpoint_get" => sk_checkpoint_get(st, p(0), p(1), p(2), out),
                "sk_checkpoint_list" => sk_checkpoint_list(st, p(0), out),
                "sk_checkpoint_delete_thread" => sk_checkpoint_delete_thread(st, p(0)),
                "sk_checkpoint_copy_thread" => sk_checkpoint_copy_thread(st, p(0), p(1)),
                "sk_checkpoint_prune" => sk_checkpoint_prune(st, p(0), p(1)),
                "sk_checkpoint_delete_for_runs" => sk_checkpoint_delete_for_runs(st, p(0)),
                "sk_checkpoint_delta_history" => {
                    sk_checkpoint_delta_history(st, p(0), p(1), p(2), p(3), out)
                }
                "sk_next_channel_version" => sk_next_channel_version(p(0), out),
                "sk_store_settings" => sk_store_settings(st, p(0), out),
                "sk_store_set_setting" => sk_store_set_setting(st, p(0), p(1), p(2), out),
                "sk_store_unset_setting" => sk_store_unset_setting(st, p(0), p(1), out),
                "sk_store_migrate_settings" => sk_store_migrate_settings(st, p(0), out),
                "sk_store_instructions" => sk_store_instructions(st, p(0), p(1), out),
                "sk_store_memory_write" => {
                    sk_store_memory_write(st, p(0), p(1), p(2), truthy(3), out)
                }
                "sk_store_memory_delete" => sk_store_memory_delete(st, p(0), p(1)),
                "sk_store_memory_list" => sk_store_memory_list(st, p(0), out),
                "sk_store_memory_read" => sk_store_memory_read(st, p(0), p(1), out),
                "sk_store_export_session" => sk_store_export_session(st, p(0), p(1), out),
                "sk_session_create" => {
                    let mut s = ptr::null_mut();
                    let r = sk_session_create(st, p(0), &mut s);
                    // Only on success: a failed call's last error must survive.
                    if r == sk_status::SK_OK {
                        check_ok(sk_session_close(&mut s), "close a created session");
                    }
                    r
                }
                "sk_session_open" => {
                    let mut s = ptr::null_mut();
                    let r = sk_session_open(st, p(0), &mut s);
                    // Only on success: a failed call's last error must survive.
                    if r == sk_status::SK_OK {
                        check_ok(sk_session_close(&mut s), "close an opened session");
                    }
                    r
                }
                "sk_session_fork" => {
                    let mut s = ptr::null_mut();
                    let r = sk_session_fork(st, p(0), p(1), &mut s);
                    // Only on success: a failed call's last error must survive.
                    if r == sk_status::SK_OK {
                        check_ok(sk_session_close(&mut s), "close a fork");
                    }
                    r
                }
                "sk_store_session_entry" => sk_store_session_entry(st, p(0), out),
                "sk_store_resolve_session" => sk_store_resolve_session(st, p(0), out),
                "sk_store_rename_session" => sk_store_rename_session(st, p(0), p(1), out),
                "sk_store_delete_session" => sk_store_delete_session(st, p(0)),
                "sk_store_read_session" => self.with_view(|v| sk_store_read_session(st, p(0), v)),
                "sk_store_model_view" => sk_store_model_view(st, p(0), p(1), out),
                "sk_store_list_subagents" => sk_store_list_subagents(st, p(0), out),
                "sk_store_read_subagent" => {
                    self.with_view(|v| sk_store_read_subagent(st, p(0), p(1), v))
                }
                "sk_store_doctor" => sk_store_doctor(st, p(0), out),
                "sk_store_search" => sk_store_search(st, p(0), out),
                "sk_store_restore_session" => sk_store_restore_session(st, p(0), out),
                "sk_session_append" => sk_session_append(se, p(0), out),
                "sk_session_append_batch" => sk_session_append_batch(se, p(0), out),
                "sk_session_append_groups" => sk_session_append_groups(se, p(0), out),
                "sk_session_update_state" => sk_session_update_state(se, p(0), out),
                "sk_session_patch" => sk_session_patch(se, p(0), p(1)),
                "sk_session_set_head" => sk_session_set_head(se, p(0)),
                "sk_session_resume_at" => sk_session_resume_at(se, p(0)),
                "sk_session_rename" => sk_session_rename(se, p(0), out),
                "sk_session_model_view" => sk_session_model_view(se, p(0), out),
                "sk_session_select_compaction" => sk_session_select_compaction(se, p(0), out),
                "sk_session_apply_compaction" => sk_session_apply_compaction(se, p(0), p(1), out),
                "sk_session_spawn_subagent" => {
                    let mut s = ptr::null_mut();
                    let r = sk_session_spawn_subagent(se, p(0), p(1), &mut s);
                    sk_subagent_close(&mut s);
                    r
                }
                "sk_session_open_subagent" => {
                    let mut s = ptr::null_mut();
                    let r = sk_session_open_subagent(se, p(0), &mut s);
                    sk_subagent_close(&mut s);
                    r
                }
                "sk_session_user_input" => sk_session_user_input(se, p(0), out),
                "sk_session_track_read" => sk_session_track_read(se, p(0)),
                "sk_session_before_edit" => sk_session_before_edit(se, p(0), out),
                "sk_session_after_edit" => sk_session_after_edit(se, p(0), out),
                "sk_session_external_changes" => sk_session_external_changes(se, p(0), out),
                "sk_session_ensure_unchanged" => sk_session_ensure_unchanged(se, p(0)),
                "sk_session_rewind_plan" => sk_session_rewind_plan(se, p(0), out),
                "sk_session_rewind_preview" => sk_session_rewind_preview(se, p(0), p(1), out),
                "sk_session_rewind" => sk_session_rewind(se, p(0), p(1), truthy(2), out),
                "sk_session_snapshot_plan" => sk_session_snapshot_plan(se, p(0), out),
                "sk_session_restore_snapshot" => {
                    sk_session_restore_snapshot(se, p(0), truthy(1), out)
                }
                "sk_session_rewind_turns" => {
                    let turns = a[0].to_str().ok().and_then(|t| t.parse().ok()).unwrap_or(0);
                    sk_session_rewind_turns(se, turns, p(1), truthy(2), out)
                }
                "sk_session_responses_items" => sk_session_responses_items(se, p(0), out),
                "sk_session_append_responses_items" => {
                    sk_session_append_responses_items(se, p(0), out)
                }
                "sk_session_replace_responses_items_with_compaction" => {
                    sk_session_replace_responses_items_with_compaction(se, p(0), out)
                }
                "sk_store_branch_file_history" => sk_store_branch_file_history(st, p(0), p(1)),
                "sk_checkpoint_summaries" => sk_checkpoint_summaries(st, p(0), out),
                "sk_store_memory_path" => sk_store_memory_path(st, p(0), out),
                "sk_store_log_path" => sk_store_log_path(st, p(0), out),
                "sk_session_open_or_create" => {
                    let mut s = ptr::null_mut();
                    let r = sk_session_open_or_create(st, p(0), &mut s);
                    // Only on success: a failed call's last error must survive.
                    if r == sk_status::SK_OK {
                        check_ok(sk_session_close(&mut s), "close an opened session");
                    }
                    r
                }
                "sk_subagent_append" => sk_subagent_append(sa, p(0), out),
                "sk_subagent_append_batch" => sk_subagent_append_batch(sa, p(0), out),
                "sk_subagent_append_groups" => sk_subagent_append_groups(sa, p(0), out),
                "sk_subagent_finish" => sk_subagent_finish(sa, p(0), truthy(1)),
                "sk_view_model" => self.on_view(|v| sk_view_model(v, p(0), out)),
                "sk_view_message" => self.on_view(|v| sk_view_message(v, p(0), out)),
                "sk_view_resolve_message" => {
                    self.on_view(|v| sk_view_resolve_message(v, p(0), out))
                }
                "sk_remote_open" => {
                    let mut r = ptr::null_mut();
                    let s = sk_remote_open(st, p(0), &mut r);
                    sk_remote_close(&mut r);
                    s
                }
                "sk_remote_list" => sk_remote_list(re, out),
                "sk_remote_acquire" => sk_remote_acquire(re, p(0), out),
                "sk_remote_renew" => sk_remote_renew(re, p(0), out),
                "sk_remote_release" => sk_remote_release(re, p(0)),
                // An empty lease stands for NULL: take the lease for the push.
                "sk_remote_push" => {
                    let lease = if a[1].is_empty() { ptr::null() } else { p(1) };
                    sk_remote_push(re, p(0), lease, out)
                }
                "sk_remote_pull" => sk_remote_pull(re, p(0), out),
                // The offset is the argument's decimal number, else -1 (the end).
                "sk_remote_follow" => {
                    let from = a[1]
                        .to_str()
                        .ok()
                        .and_then(|t| t.parse().ok())
                        .unwrap_or(-1);
                    let mut f = ptr::null_mut();
                    let r = sk_remote_follow(re, p(0), from, &mut f);
                    if r == sk_status::SK_OK {
                        let mut at = 0;
                        check_ok(sk_follower_offset(f, &mut at), "the follower's offset");
                        let r = sk_follower_next(f, 0, out);
                        sk_follower_close(&mut f);
                        return r;
                    }
                    r
                }
                "sk_remote_push_in_background" => {
                    let every = a[1].to_str().ok().and_then(|t| t.parse().ok()).unwrap_or(0);
                    let mut bp = ptr::null_mut();
                    let r = sk_remote_push_in_background(re, p(0), every, &mut bp);
                    if r == sk_status::SK_OK {
                        let mut n = 0;
                        check_ok(sk_background_push_pushed(bp, &mut n), "the pushed length");
                        let r = sk_background_push_flush(bp, out);
                        if r == sk_status::SK_OK {
                            sk_string_free(*out);
                            *out = ptr::null_mut();
                            return sk_background_push_stop(&mut bp, out);
                        }
                        sk_background_push_close(&mut bp);
                        return r;
                    }
                    r
                }
                other => unreachable!("no dispatch for {other}"),
            }
        }
    }

    /// Open a view with `open` and close it again.
    unsafe fn with_view(&self, open: impl FnOnce(*mut *mut sk_view) -> sk_status) -> sk_status {
        let mut v = ptr::null_mut();
        let r = open(&mut v);
        unsafe { sk_view_close(&mut v) };
        r
    }

    /// Run `call` on a fresh view of the session.
    unsafe fn on_view(&self, call: impl FnOnce(*const sk_view) -> sk_status) -> sk_status {
        let mut v = ptr::null_mut();
        unsafe {
            check_ok(sk_session_read(self.session, &mut v), "read the session");
            let r = call(v);
            sk_view_close(&mut v);
            r
        }
    }
}

impl Drop for AbiFuzz {
    fn drop(&mut self) {
        // SAFETY: handles this harness opened; closing sets them to NULL.
        unsafe {
            if let Some(r) = self.remote.as_mut() {
                sk_remote_close(r);
            }
            sk_subagent_close(&mut self.subagent);
            let _ = sk_session_close(&mut self.session);
            sk_store_close(&mut self.store);
        }
    }
}

impl Default for AbiFuzz {
    fn default() -> AbiFuzz {
        AbiFuzz::new()
    }
}

/// Arguments that would make the library read or write outside the temporary
/// directory (another home, the whole disk) are not run: the store is real.
fn skip(name: &str, args: &[CString]) -> bool {
    let names_home = |a: &CString| {
        serde_json::from_slice::<serde_json::Value>(a.as_bytes())
            .ok()
            .is_some_and(|v| v.get("home").is_some())
    };
    match name {
        "sk_store_open" => args
            .get(1)
            .is_none_or(|a| a.as_bytes().trim_ascii().is_empty() || names_home(a)),
        // Without a home in its options it would list the user's real one.
        "sk_list_all_sessions" => !args.first().is_some_and(names_home),
        _ => false,
    }
}

/// Every operation: its C name, how many string arguments it takes, and
/// whether its string result is JSON. The first byte of an operation picks one
/// (modulo the length), so the order is part of the seeds' meaning: append
/// only.
pub const OPS: &[(&str, usize, bool)] = &[
    ("sk_store_open", 2, false),
    ("sk_list_all_sessions", 1, true),
    ("sk_store_settings", 1, true),
    ("sk_store_set_setting", 3, true),
    ("sk_store_unset_setting", 2, true),
    ("sk_store_instructions", 2, true),
    ("sk_store_memory_write", 4, true),
    ("sk_store_memory_delete", 2, false),
    ("sk_store_memory_list", 1, true),
    ("sk_store_memory_read", 2, false),
    ("sk_store_export_session", 2, false),
    ("sk_session_create", 1, false),
    ("sk_session_open", 1, false),
    ("sk_session_fork", 2, false),
    ("sk_store_session_entry", 1, true),
    ("sk_store_resolve_session", 1, false),
    ("sk_store_rename_session", 2, true),
    ("sk_store_delete_session", 1, false),
    ("sk_store_read_session", 1, false),
    ("sk_store_model_view", 2, true),
    ("sk_store_list_subagents", 1, true),
    ("sk_store_read_subagent", 2, false),
    ("sk_store_doctor", 1, true),
    ("sk_store_search", 1, true),
    ("sk_session_append", 1, true),
    ("sk_session_append_batch", 1, true),
    ("sk_session_append_groups", 1, true),
    ("sk_session_update_state", 1, true),
    ("sk_session_patch", 2, false),
    ("sk_session_set_head", 1, false),
    ("sk_session_resume_at", 1, false),
    ("sk_session_rename", 1, true),
    ("sk_session_model_view", 1, true),
    ("sk_session_select_compaction", 1, true),
    ("sk_session_apply_compaction", 2, true),
    ("sk_session_spawn_subagent", 2, false),
    ("sk_session_open_subagent", 1, false),
    ("sk_session_user_input", 1, true),
    ("sk_session_track_read", 1, false),
    ("sk_session_before_edit", 1, false),
    ("sk_session_after_edit", 1, false),
    ("sk_session_external_changes", 1, true),
    ("sk_session_ensure_unchanged", 1, false),
    ("sk_session_rewind_plan", 1, true),
    ("sk_session_rewind_preview", 2, true),
    ("sk_session_rewind", 3, true),
    ("sk_session_snapshot_plan", 1, true),
    ("sk_session_restore_snapshot", 2, true),
    ("sk_subagent_append", 1, true),
    ("sk_subagent_append_batch", 1, true),
    ("sk_subagent_append_groups", 1, true),
    ("sk_subagent_finish", 2, false),
    ("sk_view_model", 1, true),
    ("sk_view_message", 1, true),
    ("sk_view_resolve_message", 1, false),
    ("sk_remote_open", 1, false),
    ("sk_remote_list", 0, true),
    ("sk_remote_acquire", 1, true),
    ("sk_remote_renew", 1, true),
    ("sk_remote_release", 1, false),
    ("sk_remote_push", 2, true),
    ("sk_remote_pull", 1, true),
    ("sk_remote_follow", 2, true),
    ("sk_store_migrate_settings", 1, true),
    ("sk_remote_push_in_background", 2, true),
    ("sk_store_restore_session", 1, true),
    ("sk_checkpoint_put", 2, false),
    ("sk_checkpoint_put_writes", 2, false),
    ("sk_checkpoint_get", 3, true),
    ("sk_checkpoint_list", 1, true),
    ("sk_checkpoint_delete_thread", 1, false),
    ("sk_checkpoint_copy_thread", 2, false),
    ("sk_checkpoint_prune", 2, false),
    ("sk_checkpoint_delete_for_runs", 1, false),
    ("sk_checkpoint_delta_history", 4, true),
    ("sk_next_channel_version", 1, false),
    ("sk_session_rewind_turns", 3, true),
    ("sk_session_responses_items", 1, true),
    ("sk_session_append_responses_items", 1, true),
    (
        "sk_session_replace_responses_items_with_compaction",
        1,
        true,
    ),
    ("sk_store_branch_file_history", 2, false),
    ("sk_checkpoint_summaries", 1, true),
    ("sk_store_memory_path", 1, true),
    ("sk_store_log_path", 1, true),
    ("sk_session_open_or_create", 1, false),
];

/// Seeds: each fixture log's lines as messages, batches, state, patches and
/// titles, a deep nesting, odd ids, and one call of every operation with
/// plausible arguments. `root` is the repository's root.
pub fn seeds(root: &Path) -> Vec<Vec<u8>> {
    let op = |name: &str| OPS.iter().position(|o| o.0 == name).expect("a known op") as u8;
    let prog = |name: &str, args: &[&[u8]]| {
        let mut v = vec![op(name)];
        for a in args {
            v.extend_from_slice(a);
            v.push(0);
        }
        v
    };
    let mut out = Vec::new();
    let mut logs: Vec<PathBuf> = std::fs::read_dir(root.join("tests/fixtures/logs"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    logs.sort();
    for log in logs {
        let Ok(bytes) = std::fs::read(&log) else {
            continue;
        };
        let lines: Vec<&[u8]> = bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .take(8)
            .collect();
        for l in &lines {
            out.push(prog("sk_session_append", &[l]));
        }
        let batch = [b"[".as_slice(), &lines.join(&b","[..]), b"]"].concat();
        out.push(prog("sk_session_append_batch", &[&batch]));
        out.push(prog("sk_subagent_append_batch", &[&batch]));
        let groups = [b"[".as_slice(), &batch, b",[],", &batch, b"]"].concat();
        out.push(prog("sk_session_append_groups", &[&groups]));
        out.push(prog("sk_subagent_append_groups", &[&groups]));
        if let Some(l) = lines.first() {
            out.push(prog("sk_session_update_state", &[l]));
            out.push(prog("sk_session_patch", &[b"@M", l]));
            out.push(prog("sk_session_rename", &[l]));
            out.push(prog("sk_subagent_finish", &[l, b"1"]));
        }
    }
    let deep = [vec![b'['; 5000], vec![b']'; 5000]].concat();
    let deep_msg = [br#"{"role":"user","content":"#.as_slice(), &deep, b"}"].concat();
    let plausible: &[(&str, &[&[u8]])] = &[
        ("sk_store_open", &[b"@P", br#"{"maxSessions": 3}"#]),
        ("sk_list_all_sessions", &[br#"{"home": "/nonexistent-sessionkit-home"}"#]),
        ("sk_store_settings", &[br#"{"sources": ["user", "project"], "overrides": {"a": 1}}"#]),
        ("sk_store_set_setting", &[b"project", b"model.name", br#""x""#]),
        ("sk_store_unset_setting", &[b"local", b"model.name"]),
        ("sk_store_instructions", &[b"@P", b"{}"]),
        ("sk_store_memory_write", &[b"project", b"notes", b"remember", b"1"]),
        ("sk_store_memory_delete", &[b"user", b"notes"]),
        ("sk_store_memory_list", &[b"project"]),
        ("sk_store_memory_read", &[b"project", b"notes"]),
        ("sk_store_export_session", &[b"@S", b"markdown"]),
        ("sk_session_create", &[br#"{"title": "t", "meta": {"a": 1}}"#]),
        ("sk_session_open", &[b"@S"]),
        ("sk_session_fork", &[b"@S", br#"{"atMessageId": "@M"}"#]),
        ("sk_store_session_entry", &[b"@S"]),
        ("sk_store_resolve_session", &[b"0"]),
        ("sk_store_rename_session", &[b"@S", b"a title"]),
        ("sk_store_delete_session", &[b"../@S"]),
        ("sk_store_restore_session", &[b"@S"]),
        ("sk_store_read_session", &[b"@S"]),
        ("sk_store_model_view", &[b"@S", br#"{"lastN": 1, "tokenBudget": 18446744073709551615}"#]),
        ("sk_store_list_subagents", &[b"@S"]),
        ("sk_store_read_subagent", &[b"@S", b"helper"]),
        ("sk_store_doctor", &[br#"{"repair": false}"#]),
        ("sk_store_search", &[br#"{"query": "hello", "limit": 5}"#]),
        ("sk_session_append", &[&deep_msg]),
        ("sk_session_append", &[b"{\"role\":\"user\",\"content\":\"\xff\xfe\"}"]),
        ("sk_session_append", &[br#"{"id": "a\u0000b", "role": "user", "content": "x"}"#]),
        ("sk_session_append_batch", &[br#"[{"role": "user", "content": "a", "id": "d"}, {"role": "user", "content": "b", "id": "d"}]"#]),
        ("sk_session_update_state", &[br#"{"status": "completed", "tokens": {"input": 18446744073709551615}}"#]),
        ("sk_session_set_head", &[b"@M"]),
        ("sk_session_resume_at", &[b"@M"]),
        ("sk_session_model_view", &[br#"{"tokenBudget": 10}"#]),
        ("sk_session_select_compaction", &[br#"{"keepLast": 1, "summaryTokens": 18446744073709551615}"#]),
        ("sk_session_apply_compaction", &[br#"["@M"]"#, br#"{"role": "assistant", "content": "sum"}"#]),
        ("sk_session_spawn_subagent", &[b"other", br#"{"task": "t"}"#]),
        ("sk_session_open_subagent", &[b"helper"]),
        ("sk_session_user_input", &[br#"{"role": "user", "content": "again"}"#]),
        ("sk_session_track_read", &[br#"["a.txt"]"#]),
        ("sk_session_before_edit", &[br#"["a.txt", "../outside"]"#]),
        ("sk_session_after_edit", &[br#"["a.txt"]"#]),
        ("sk_session_external_changes", &[br#"["a.txt"]"#]),
        ("sk_session_ensure_unchanged", &[br#"["a.txt"]"#]),
        ("sk_session_rewind_plan", &[b"@M"]),
        ("sk_session_rewind_preview", &[b"@M", b"both"]),
        ("sk_session_rewind", &[b"@M", b"files", b"0"]),
        ("sk_session_rewind_turns", &[b"1", b"conversation", b"0"]),
        ("sk_session_responses_items", &[br#"{"limit": 2, "modelView": true}"#]),
        ("sk_session_append_responses_items", &[br#"[{"role": "user", "content": "hi"}]"#]),
        (
            "sk_session_replace_responses_items_with_compaction",
            &[br#"[{"type": "compaction", "encrypted_content": "x"}]"#],
        ),
        ("sk_store_branch_file_history", &[b"@S", b"0000000000000000000000000000000000000000"]),
        ("sk_checkpoint_summaries", &[b"@S"]),
        ("sk_store_memory_path", &[b"project"]),
        ("sk_store_log_path", &[b"@S"]),
        ("sk_session_open_or_create", &[b"fresh-one"]),
        ("sk_session_snapshot_plan", &[b"HEAD"]),
        ("sk_session_restore_snapshot", &[b"0000000000000000000000000000000000000000", b"1"]),
        ("sk_subagent_append", &[br#"{"role": "assistant", "content": "x"}"#]),
        ("sk_subagent_finish", &[br#"{"ok": true}"#, b"0"]),
        ("sk_view_model", &[br#"{"lastN": 0}"#]),
        ("sk_view_message", &[b"@M"]),
        ("sk_view_resolve_message", &[b"0"]),
        ("sk_remote_open", &[br#"{"url": "@R", "holder": "h"}"#]),
        ("sk_remote_open", &[br#"{"url": "@R", "leaseTtlMs": 0}"#]),
        ("sk_remote_list", &[]),
        ("sk_remote_acquire", &[b"@S"]),
        ("sk_remote_renew", &[br#"{"sessionId": "@S", "holder": "fuzz", "token": 1, "expiresMs": 0}"#]),
        ("sk_remote_release", &[br#"{"sessionId": "@S", "holder": "fuzz", "token": 1, "expiresMs": 0}"#]),
        ("sk_remote_push", &[b"@S", b""]),
        ("sk_remote_push", &[b"../@S", b""]),
        ("sk_remote_pull", &[b"@S"]),
        ("sk_remote_follow", &[b"@S", b"0"]),
        ("sk_store_migrate_settings", &[b"project"]),
        ("sk_remote_push_in_background", &[b"@S", b"20"]),
        ("sk_checkpoint_put", &[b"t/1", br#"{"checkpoint": {"id": "1", "channel_versions": {"m": 1}}, "metadata": {"run_id": "r"}, "values": [{"channel": "m", "version": 1, "value": {"type": "json", "bytes": "WyJoaSJd"}}]}"#]),
        ("sk_checkpoint_put", &[b"@S", br#"{"checkpoint": {"id": "2"}, "parentId": "1"}"#]),
        ("sk_checkpoint_put_writes", &[b"t/1", br#"{"checkpointId": "1", "taskId": "t", "writes": [{"channel": "__interrupt__", "value": {"type": "json", "bytes": "MQ=="}}]}"#]),
        ("sk_checkpoint_get", &[b"t/1", b"", b"1"]),
        ("sk_checkpoint_list", &[br#"{"threadId": "t/1", "filter": {"run_id": "r"}, "limit": 1}"#]),
        ("sk_checkpoint_delete_thread", &[b"t/1"]),
        ("sk_checkpoint_copy_thread", &[b"t/1", b"t/2"]),
        ("sk_checkpoint_prune", &[br#"["t/1"]"#, b"keep_latest"]),
        ("sk_checkpoint_delete_for_runs", &[br#"["r"]"#]),
        ("sk_checkpoint_delta_history", &[b"t/1", b"", b"1", br#"["m"]"#]),
        ("sk_next_channel_version", &[b"\"00000000000000000000000000000007.5\""]),
    ];
    for (name, args) in plausible {
        out.push(prog(name, args));
    }
    out.push(
        [
            prog("sk_remote_push", &[b"@S", b""]),
            prog("sk_remote_follow", &[b"@S", b"0"]),
            prog("sk_remote_list", &[]),
            // Open for writing here: busy, and nothing changes.
            prog("sk_remote_pull", &[b"@S"]),
        ]
        .concat(),
    );
    out
}

#[cfg(fuzzing)]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    AbiFuzz::new().run(data);
});

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::sync::OnceLock;

    use proptest::prelude::*;

    use super::AbiFuzz;

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    fn seeds() -> &'static [Vec<u8>] {
        static SEEDS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
        SEEDS.get_or_init(|| super::seeds(&root()))
    }

    #[test]
    fn every_seed_runs_within_the_contract() {
        assert!(seeds().len() > 100, "the fixture logs were not found");
        for seed in seeds() {
            AbiFuzz::new().run(seed);
        }
    }

    /// One seed damaged: bytes changed, inserted or cut, or another seed joined.
    fn damaged() -> impl Strategy<Value = Vec<u8>> {
        let n = seeds().len();
        (
            0..n,
            0..n,
            proptest::collection::vec((any::<u16>(), any::<u8>(), 0u8..4), 0..6),
        )
            .prop_map(|(a, b, edits)| {
                let mut v = seeds()[a].clone();
                for (at, byte, how) in edits {
                    let at = usize::from(at) % (v.len() + 1);
                    match how {
                        0 if at < v.len() => v[at] = byte,
                        1 => v.insert(at, byte),
                        2 => v.truncate(at),
                        _ => v.extend_from_slice(&seeds()[b]),
                    }
                }
                v
            })
    }

    proptest! {
        // The seed is printed; PROPTEST_RNG_SEED=<seed> reruns a failure's inputs.
        #![proptest_config(ProptestConfig {
            cases: 48,
            rng_seed: proptest::test_runner::RngSeed::Fixed(sessionkit::testing::proptest_seed()),
            ..ProptestConfig::default()
        })]

        #[test]
        fn damaged_seeds_run_within_the_contract(data in damaged()) {
            AbiFuzz::new().run(&data);
        }

        #[test]
        fn arbitrary_bytes_run_within_the_contract(
            data in proptest::collection::vec(any::<u8>(), 0..512)
        ) {
            AbiFuzz::new().run(&data);
        }
    }

    /// Writes the seeds as files into `$SESSIONKIT_FUZZ_SEEDS` (fuzz/seed.sh).
    #[test]
    #[ignore = "writes the cargo-fuzz corpus; run by fuzz/seed.sh"]
    fn write_seeds() {
        let dir = std::env::var_os("SESSIONKIT_FUZZ_SEEDS").expect("SESSIONKIT_FUZZ_SEEDS");
        std::fs::create_dir_all(&dir).expect("the corpus directory");
        for (i, seed) in seeds().iter().enumerate() {
            std::fs::write(Path::new(&dir).join(format!("seed-{i:04}")), seed).expect("a seed");
        }
    }
}
