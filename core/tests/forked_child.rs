//! A child process forked by the host inherits open sessions and subagents. It
//! may read through them and close them, but every write fails with
//! `InvalidInput` naming the session and both process ids, and leaves the log as
//! the parent wrote it; the parent keeps writing as before.
//!
//! One test in its own binary: `fork` copies only the calling thread, so no
//! other test may be running inside the library at that moment.

use std::fs;
use std::path::Path;

use serde_json::json;
use sessionkit::{CreateOptions, ErrorKind, Result, RewindMode, Store, StoreOptions};

/// What the child checks: each write refused with `InvalidInput` naming the
/// handle and both pids, each read answered. Returns the failures.
fn child_checks(
    s: sessionkit::Session,
    a: sessionkit::Subagent,
    parent: u32,
    first: &str,
) -> Vec<String> {
    let me = std::process::id();
    let mut failures = Vec::new();
    let mut refused = |what: &str, r: Result<()>, names: &str| match r {
        Err(e) if e.kind() == ErrorKind::InvalidInput => {
            let msg = e.to_string();
            for want in [
                names.to_string(),
                format!("process {parent}"),
                format!("process {me}"),
            ] {
                if !msg.contains(&want) {
                    failures.push(format!("{what}: {msg:?} does not mention {want:?}"));
                }
            }
        }
        Err(e) => failures.push(format!(
            "{what}: {:?} instead of InvalidInput: {e}",
            e.kind()
        )),
        Ok(()) => failures.push(format!("{what}: a write from the child succeeded")),
    };
    let sid = format!("session {}", s.id());
    let msg = || json!({"role": "user", "content": "from the child"});
    refused("append", s.append(msg()).map(drop), &sid);
    refused("append_batch", s.append_batch(vec![msg()]).map(drop), &sid);
    refused("user_input", s.user_input(msg()).map(drop), &sid);
    refused(
        "patch",
        s.patch_message(first, json!({"meta": {"x": 1}})),
        &sid,
    );
    refused("set_head", s.set_head(None), &sid);
    refused(
        "update_state",
        s.update_state(json!({"status": "failed"})).map(drop),
        &sid,
    );
    refused("rename", s.rename("child").map(drop), &sid);
    refused("sync", s.sync(), &sid);
    refused("flush_index", s.flush_index(), &sid);
    refused("track_read", s.track_read(&["a.txt"]), &sid);
    refused("before_edit", s.before_edit(&["a.txt"]).map(drop), &sid);
    refused(
        "rewind",
        s.rewind(first, RewindMode::Conversation, false).map(drop),
        &sid,
    );
    refused(
        "apply_compaction",
        s.apply_compaction(&[first.to_string()], json!("summary"))
            .map(drop),
        &sid,
    );
    refused(
        "spawn_subagent",
        s.spawn_subagent(None, json!({})).map(drop),
        &sid,
    );
    refused("open_subagent", s.open_subagent(a.id()).map(drop), &sid);
    let aid = format!("subagent {} of session {}", a.id(), s.id());
    refused("subagent append", a.append(msg()).map(drop), &aid);
    refused("subagent finish", a.finish(json!("done"), false), &aid);
    // Reads answer, from the log as the parent wrote it.
    match s.active_path() {
        Ok(p) if p.len() == 1 && p[0].id() == first => {}
        Ok(p) => failures.push(format!("active_path: {} messages", p.len())),
        Err(e) => failures.push(format!("active_path: {e}")),
    }
    if s.head().as_deref() != Some(first) {
        failures.push(format!("head: {:?}", s.head()));
    }
    if let Err(e) = a.read() {
        failures.push(format!("subagent read: {e}"));
    }
    drop(a);
    // Closing releases the child's copy only, without writing the index.
    if let Err(e) = s.close() {
        failures.push(format!("close: {e}"));
    }
    failures
}

/// Fork; run `child` in the child and exit with 0 if it found nothing wrong.
/// Returns the child's exit status.
fn in_forked_child(child: impl FnOnce() -> Vec<String>) -> i32 {
    // SAFETY: the test binary runs this one test; the child only uses the
    // library (no thread of its own) and leaves with `_exit`.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed: {}", std::io::Error::last_os_error());
    if pid == 0 {
        let code = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)) {
            Ok(failures) if failures.is_empty() => 0,
            Ok(failures) => {
                for f in failures {
                    eprintln!("child: {f}");
                }
                1
            }
            Err(_) => 2,
        };
        // SAFETY: ends the child without running the parent's destructors.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waits for the child just forked.
    let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(waited, pid, "waitpid: {}", std::io::Error::last_os_error());
    assert!(
        libc::WIFEXITED(status),
        "child ended abnormally: {status:#x}"
    );
    libc::WEXITSTATUS(status)
}

fn line_count(path: &Path) -> usize {
    fs::read_to_string(path).unwrap().lines().count()
}

#[test]
fn a_forked_child_reads_but_never_writes_through_inherited_handles() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    fs::write(project.path().join("a.txt"), "one").unwrap();
    let options = StoreOptions {
        home: Some(home.path().to_path_buf()),
        ..StoreOptions::default()
    };
    let store = Store::open(project.path(), options).unwrap();
    let s = store.create_session(CreateOptions::default()).unwrap();
    let first = s
        .append(json!({"role": "user", "content": "from the parent"}))
        .unwrap()
        .id()
        .to_string();
    s.flush_index().unwrap();
    let a = s.spawn_subagent(Some("helper"), json!({})).unwrap();
    a.append(json!({"role": "user", "content": "task"}))
        .unwrap();
    let log = s.path().to_path_buf();
    let sidechain = store.read_subagent(s.id(), "helper").unwrap();
    let (log_lines, side_messages) = (line_count(&log), sidechain.message_count());
    let entry = store.session_entry(s.id()).unwrap();

    let parent = std::process::id();
    let status = in_forked_child(|| {
        // SAFETY: the child takes over its copies of the handles, to close
        // them; it never uses the originals again and leaves with `_exit`,
        // so nothing is dropped twice.
        let (s, a) = unsafe { (std::ptr::read(&s), std::ptr::read(&a)) };
        child_checks(s, a, parent, &first)
    });
    assert_eq!(status, 0, "the child found failures (see its stderr)");

    // Nothing of the child's reached the log, the sidechain or the index.
    assert_eq!(line_count(&log), log_lines);
    let sidechain = store.read_subagent(s.id(), "helper").unwrap();
    assert_eq!(sidechain.message_count(), side_messages);
    assert_eq!(store.session_entry(s.id()).unwrap(), entry);
    // The parent still holds the lock, and writes on.
    assert_eq!(
        store.open_session(s.id()).map(drop).map_err(|e| e.kind()),
        Err(ErrorKind::Busy)
    );
    s.append(json!({"role": "assistant", "content": "still the parent"}))
        .unwrap();
    a.append(json!({"role": "assistant", "content": "working"}))
        .unwrap();
    assert_eq!(s.active_path().unwrap().len(), 2);
    drop(a);
    s.close().unwrap();
}
