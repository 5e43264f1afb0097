//! The structure cache a resume leaves beside a large session log (FORMAT.md
//! §5.1), seen from the public API: it changes no view, follows appends, is not
//! copied by a fork, and goes with its session.

use serde_json::json;
use sessionkit::{CreateOptions, ForkOptions, Store, StoreOptions};

const CACHE: &str = "log.structure";

fn store(home: &std::path::Path, project: &std::path::Path) -> Store {
    Store::open(
        project,
        StoreOptions {
            home: Some(home.to_path_buf()),
            ..StoreOptions::default()
        },
    )
    .unwrap()
}

/// A session of about `kib` KiB of user and assistant messages.
fn big_session(s: &Store, kib: usize) -> String {
    let session = s.create_session(CreateOptions::default()).unwrap();
    let body = "the quick brown fox \\ \"jumps\" ".repeat(40);
    let batch: Vec<_> = (0..kib)
        .map(|i| {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            json!({"role": role, "content": format!("{i} {body}")})
        })
        .collect();
    session.append_batch(batch).unwrap();
    session.id().to_string()
}

fn path_json(s: &Store, id: &str) -> Vec<String> {
    let view = s.read_session(id).unwrap();
    let path = view.active_path().unwrap();
    path.iter().map(|m| m.json().to_string()).collect()
}

#[test]
fn a_resume_through_the_cache_sees_what_was_written_and_what_came_after() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(home.path(), project.path());
    let id = big_session(&s, 300);
    let cache = s.dir().join(&id).join(CACHE);
    assert!(!cache.exists());

    let first = path_json(&s, &id);
    assert_eq!(first.len(), 300);
    assert!(cache.is_file(), "a resume of a large log leaves its cache");
    assert_eq!(path_json(&s, &id), first);

    // A writer appends, rewinds and patches: the next resume sees it all.
    let w = s.open_session(&id).unwrap();
    let root = w
        .append(json!({"role": "user", "content": "one more"}))
        .unwrap();
    let tenth = s.read_session(&id).unwrap().active_path().unwrap()[10].clone();
    w.resume_at(tenth.id()).unwrap();
    let branch = w
        .append(json!({"role": "user", "content": "a branch"}))
        .unwrap();
    drop(w);
    let now = s.read_session(&id).unwrap();
    let path = now.active_path().unwrap();
    assert_eq!(path.len(), 12);
    assert_eq!(path.last().unwrap().id(), branch.id());
    assert!(now.log().contains(root.id()));
    assert_eq!(now.message_count(), 302);
}

#[test]
fn a_fork_does_not_take_the_sources_cache_and_delete_takes_the_sessions() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(home.path(), project.path());
    let id = big_session(&s, 200);
    let source = path_json(&s, &id);
    let fork = s.fork_session(&id, ForkOptions::default()).unwrap();
    let fork_id = fork.id().to_string();
    drop(fork);
    assert!(!s.dir().join(&fork_id).join(CACHE).exists());
    let forked = path_json(&s, &fork_id);
    assert_eq!(forked.len(), source.len());
    assert!(forked[0].contains(&fork_id) && !forked[0].contains(&id));

    let dir = s.dir().join(&id);
    assert!(dir.join(CACHE).is_file());
    s.delete_session(&id).unwrap();
    assert!(!dir.exists());
}

#[test]
fn gc_removes_a_cache_whose_log_is_gone_and_keeps_the_others() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(home.path(), project.path());
    let (kept, gone) = (big_session(&s, 200), big_session(&s, 200));
    path_json(&s, &kept);
    path_json(&s, &gone);
    let gone_dir = s.dir().join(&gone);
    let cache_len = std::fs::metadata(gone_dir.join(CACHE)).unwrap().len();
    // As if a reader wrote the cache while the session was being deleted.
    std::fs::remove_file(s.log_path(&gone).unwrap()).unwrap();

    let r = s.gc_temp_files().unwrap();
    assert_eq!((r.removed, r.bytes_freed), (1, cache_len));
    assert!(!gone_dir.exists());
    assert!(s.dir().join(&kept).join(CACHE).is_file());
    assert_eq!(path_json(&s, &kept).len(), 200);
}

/// A writer opening a cached log that ends in a torn line repairs it as it
/// would without the cache: the line is terminated and quarantined, and the
/// chain goes on from the last whole message.
#[test]
fn a_writer_opens_a_cached_log_with_a_torn_tail() {
    use std::io::Write;
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(home.path(), project.path());
    let id = big_session(&s, 200);
    let path = s.read_session(&id).unwrap().active_path().unwrap();
    assert!(s.dir().join(&id).join(CACHE).is_file());
    let log = s.log_path(&id).unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(&log)
        .unwrap()
        .write_all(br#"{"type":"message","id":"torn","role":"user","content":"cut sh"#)
        .unwrap();

    let w = s.open_session(&id).unwrap();
    assert!(w.open_report().torn_tail.is_some());
    let next = w
        .append(json!({"role": "user", "content": "after"}))
        .unwrap();
    assert_eq!(next.parent_id(), Some(path.last().unwrap().id()));
    drop(w);
    let view = s.read_session(&id).unwrap();
    // The repaired line stays in the log (FORMAT.md §9.3), skipped by readers.
    let report = view.report();
    assert!(report.torn_tail.is_none());
    assert_eq!(report.skipped.len(), 1, "{report:?}");
    assert_eq!(view.active_path().unwrap().len(), 201);
    let quarantined = std::fs::read_to_string(format!("{}.corrupt", log.display())).unwrap();
    assert!(quarantined.contains("cut sh"));
}
