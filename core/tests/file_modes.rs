//! A transcript is never readable by others: every file the library writes is
//! 0600 and every directory 0700, however permissive the process's umask, and
//! also after the operations that rewrite or add files (a rewind, a repair, a
//! fork, a compaction, a gc, an index rebuild, blobs, file history, the search
//! cache).
//!
//! Alone in its test binary: the umask is the whole process's.

#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::json;
use sessionkit::{
    CompactionPolicy, CreateOptions, DoctorOptions, ForkOptions, RewindMode, SearchQuery, Store,
    StoreOptions,
};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for d in std::fs::read_dir(dir).unwrap() {
        let p = d.unwrap().path();
        out.push(p.clone());
        if p.is_dir() && !p.is_symlink() {
            walk(&p, out);
        }
    }
}

/// Every entry under `home` that others could read, write or enter.
fn open_to_others(home: &Path) -> Vec<String> {
    let mut all = Vec::new();
    walk(home, &mut all);
    all.iter()
        .filter_map(|p| {
            let mode = std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777;
            (mode & 0o077 != 0).then(|| format!("{:o} {}", mode, p.display()))
        })
        .collect()
}

#[test]
fn every_file_is_private_under_a_permissive_umask() {
    // SAFETY: umask only sets the process's file-creation mask.
    unsafe { libc::umask(0) };
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("notes.txt"), "one\n").unwrap();
    let store = Store::open(
        project.path(),
        StoreOptions {
            home: Some(home.path().to_path_buf()),
            blob_threshold: 64,
            ..StoreOptions::default()
        },
    )
    .unwrap();
    let check = |after: &str| {
        let open = open_to_others(home.path());
        assert!(
            open.is_empty(),
            "after {after}, open to others:\n{}",
            open.join("\n")
        );
    };

    let s = store.create_session(CreateOptions::default()).unwrap();
    let u1 = s
        .user_input(json!({"content": "Edit the notes, and keep this secret"}))
        .unwrap();
    s.before_edit(&["notes.txt"]).unwrap();
    std::fs::write(project.path().join("notes.txt"), "two\n").unwrap();
    s.after_edit(&["notes.txt"]).unwrap();
    s.append(json!({"role": "assistant", "content": "x".repeat(500)}))
        .unwrap();
    let sub = s.spawn_subagent(Some("helper"), json!({})).unwrap();
    sub.append(json!({"role": "user", "content": "help"}))
        .unwrap();
    sub.finish(json!("done"), false).unwrap();
    drop(sub);
    s.user_input(json!({"content": "and again"})).unwrap();
    s.append(json!({"role": "assistant", "content": "ok"}))
        .unwrap();
    check("appends, a blob, a snapshot and a subagent");

    let plan = s
        .select_compaction(&CompactionPolicy {
            token_budget: 5,
            keep_last_turns: 1,
            summary_tokens: 1,
        })
        .unwrap()
        .expect("something to compact");
    s.apply_compaction(&plan.replaces, json!("summary"))
        .unwrap();
    check("a compaction");

    s.rewind(u1.id(), RewindMode::Both, false).unwrap();
    check("a rewind of files and conversation");

    let fork = store.fork_session(s.id(), ForkOptions::default()).unwrap();
    let fork_id = fork.id().to_string();
    fork.close().unwrap();
    let id = s.id().to_string();
    let log = s.path().to_path_buf();
    s.close().unwrap();
    check("a fork");

    // A torn tail and a line that is not JSON: the repair rewrites the tail and
    // writes a quarantine file.
    let mut bytes = std::fs::read(&log).unwrap();
    bytes.extend_from_slice(b"not json\n{\"type\":\"message\",\"id\":\"torn");
    std::fs::write(&log, bytes).unwrap();
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o600)).unwrap();
    store
        .doctor(&DoctorOptions { repair: true }, &mut |_| {})
        .unwrap();
    store.open_session(&id).unwrap().close().unwrap();
    check("a doctor repair and an open that quarantines");

    store.rebuild_index().unwrap();
    store.read_session(&fork_id).unwrap();
    store.gc_all(&mut |_| {}).unwrap();
    check("an index rebuild, a read (structure cache) and a gc");

    // The search cache holds every word of the transcripts: its files, and
    // SQLite's -wal and -shm files beside them, while a connection is open
    // and after a damaged file is set aside and built again.
    let query = SearchQuery {
        text: "secret".into(),
        ..SearchQuery::default()
    };
    assert!(!store.search(&query).unwrap().hits.is_empty());
    let held = rusqlite::Connection::open(store.dir().join("search/index.sqlite")).unwrap();
    held.execute_batch("BEGIN; SELECT count(*) FROM logs;")
        .unwrap();
    check("a search, with the cache open");
    drop(held);
    std::fs::write(store.dir().join("search/index-1.sqlite"), [0x5a; 8192]).unwrap();
    assert_eq!(store.search(&query).unwrap().set_aside.len(), 1);
    check("a damaged search cache set aside and rebuilt");

    // The walk saw what these operations write.
    let mut all = Vec::new();
    walk(home.path(), &mut all);
    let names: Vec<String> = all.iter().map(|p| p.display().to_string()).collect();
    for part in [
        ".corrupt",
        "/blobs/",
        "/subagents/",
        "/objects/",
        "sessions-index.json",
        "/search/index.sqlite",
        "/search/index-1.sqlite.damaged",
    ] {
        assert!(
            names.iter().any(|n| n.contains(part)),
            "no {part} under the home:\n{}",
            names.join("\n")
        );
    }
}
