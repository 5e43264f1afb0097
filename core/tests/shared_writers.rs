//! Shared writers: many handles, in threads and processes, writing one
//! conversation, as frameworks and web servers do. Each write takes the
//! session's lock for its moment, continues from the head at that moment, and
//! never forks the session or loses another writer's messages.
//!
//! The cross-process tests re-execute this test binary with an ignored test as
//! the child's entry point (`--ignored --exact`), so a plain run never counts a
//! child as a passing test.

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sessionkit::{
    conversation_session_id, CreateOptions, ErrorKind, SessionView, Store, StoreOptions,
};

#[path = "support/child.rs"]
mod support_child;
use support_child::test_child;

fn options(home: &Path) -> StoreOptions {
    StoreOptions {
        home: Some(home.to_path_buf()),
        ..StoreOptions::default()
    }
}

fn store(dir: &tempfile::TempDir) -> Store {
    Store::open(dir.path(), options(&dir.path().join("home"))).unwrap()
}

fn child(test: &str, env: &[(&str, String)]) -> Command {
    let mut c = test_child(test);
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

fn var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("the child needs {name}"))
}

/// The messages of a view's active path.
fn active_values(view: &SessionView) -> Vec<Value> {
    view.active_path()
        .unwrap()
        .iter()
        .map(|m| m.value())
        .collect()
}

/// The active path's messages, checking that the log is one unbroken chain:
/// every message's parent is the message before it (no write forked it).
fn linear_path(store: &Store, id: &str) -> Vec<Value> {
    let view = store.read_session(id).unwrap();
    assert!(view.report().is_clean(), "{:?}", view.report());
    let path = active_values(&view);
    let all = view.tree().unwrap();
    assert_eq!(all.len(), path.len(), "a write forked the session");
    let mut parent = Value::Null;
    for m in &path {
        assert_eq!(m["parentId"], parent, "{m}");
        parent = m["id"].clone();
    }
    path
}

#[test]
fn two_handles_in_one_process_continue_each_others_writes() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let a = store.open_conversation("conv:42").unwrap();
    let b = store.open_conversation("conv:42").unwrap();
    assert!(a.is_shared() && b.is_shared());
    assert_eq!(a.id(), b.id());
    for i in 0..10 {
        let (w, other) = if i % 2 == 0 { (&a, &b) } else { (&b, &a) };
        w.append(json!({"role": "user", "content": format!("m{i}")}))
            .unwrap();
        // The other handle's batch lands after this one, whole.
        other
            .append_batch(vec![
                json!({"role": "assistant", "content": format!("r{i}a")}),
                json!({"role": "assistant", "content": format!("r{i}b")}),
            ])
            .unwrap();
    }
    let path = linear_path(&store, a.id());
    let contents: Vec<&str> = path
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    let want: Vec<String> = (0..10)
        .flat_map(|i| [format!("m{i}"), format!("r{i}a"), format!("r{i}b")])
        .collect();
    assert_eq!(contents, want);
    // Patching and moving the head to a message the other handle wrote.
    let last_of_a = path[27]["id"].as_str().unwrap().to_owned();
    b.patch_message(&last_of_a, json!({"meta": {"usage": {"output_tokens": 3}}}))
        .unwrap();
    a.close().unwrap();
    b.close().unwrap();
    let entry = store
        .session_entry(&conversation_session_id("conv:42").unwrap())
        .unwrap();
    assert_eq!(entry.message_count, 30);
    assert_eq!(entry.conversation_id.as_deref(), Some("conv:42"));
}

#[test]
fn pop_takes_the_newest_message_whoever_wrote_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let a = store.open_conversation("user@example.com").unwrap();
    let b = store.open_conversation("user@example.com").unwrap();
    a.append_responses_items(vec![json!({"role": "user", "content": "one"})])
        .unwrap();
    b.append_responses_items(vec![json!({"role": "user", "content": "two"})])
        .unwrap();
    let popped: Value = serde_json::from_str(&a.pop_responses_item().unwrap().unwrap()).unwrap();
    assert_eq!(popped["content"], "two");
    let popped: Value = serde_json::from_str(&b.pop_responses_item().unwrap().unwrap()).unwrap();
    assert_eq!(popped["content"], "one");
    assert!(a.pop_responses_item().unwrap().is_none());
    // Both items stay in the log.
    assert_eq!(store.read_session(a.id()).unwrap().tree().unwrap().len(), 2);
}

#[test]
fn threads_with_their_own_handles_write_one_unbroken_chain() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let id = store
        .open_conversation("tenant/123")
        .unwrap()
        .id()
        .to_owned();
    std::thread::scope(|sc| {
        for t in 0..4 {
            let store = store.clone();
            sc.spawn(move || {
                let s = store.open_conversation("tenant/123").unwrap();
                for i in 0..50 {
                    s.append_batch(vec![
                        json!({"role": "user", "content": format!("t{t} {i} q")}),
                        json!({"role": "assistant", "content": format!("t{t} {i} a")}),
                    ])
                    .unwrap();
                }
                s.close().unwrap();
            });
        }
    });
    let path = linear_path(&store, &id);
    assert_eq!(path.len(), 400);
    // Each batch whole: its answer right after its question.
    for pair in path.chunks(2) {
        let q = pair[0]["content"].as_str().unwrap();
        let a = pair[1]["content"].as_str().unwrap();
        assert_eq!(q.strip_suffix(" q"), a.strip_suffix(" a"), "{q} / {a}");
    }
    let distinct: HashSet<&str> = path
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(distinct.len(), 400);
    assert_eq!(store.session_entry(&id).unwrap().message_count, 400);
}

/// What an `ACK` line of a child acknowledged (libtest may print the test's
/// name before the first one, on the same line).
fn acked_line(line: &str) -> Option<String> {
    line.find("ACK ").map(|at| line[at + 4..].to_owned())
}

/// Child: append `SK_N` batches of two to conversation `SK_CONV`, printing
/// each acknowledged batch's first content.
#[test]
#[ignore = "entry point of a child process of shared_writers"]
fn child_appends_batches() {
    let store = Store::open(var("SK_ROOT"), options(Path::new(&var("SK_HOME")))).unwrap();
    let s = store.open_conversation(&var("SK_CONV")).unwrap();
    let tag = var("SK_TAG");
    let n: usize = var("SK_N").parse().unwrap();
    for i in 0..n {
        let q = format!("{tag} {i} q");
        s.append_batch(vec![
            json!({"role": "user", "content": q}),
            json!({"role": "assistant", "content": format!("{tag} {i} a")}),
        ])
        .unwrap();
        println!("ACK {q}");
    }
    s.close().unwrap();
}

#[test]
fn four_processes_append_to_one_conversation_and_one_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let conv = "worker pool: 日本";
    let env = |tag: &str, n: usize| {
        vec![
            ("SK_ROOT", dir.path().display().to_string()),
            ("SK_HOME", dir.path().join("home").display().to_string()),
            ("SK_CONV", conv.to_string()),
            ("SK_TAG", tag.to_string()),
            ("SK_N", n.to_string()),
        ]
    };
    let spawn = |tag: &str, n: usize| {
        child("child_appends_batches", &env(tag, n))
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    // Four writers, and a fifth that is killed while it writes.
    let mut victim = spawn("victim", 100_000);
    let writers: Vec<_> = (0..4).map(|p| spawn(&format!("p{p}"), 200)).collect();
    std::thread::sleep(Duration::from_millis(300));
    victim.kill().unwrap();
    let victim_out = victim.wait_with_output().unwrap();
    let mut acked: Vec<String> = String::from_utf8_lossy(&victim_out.stdout)
        .lines()
        .filter_map(acked_line)
        .collect();
    for w in writers {
        let out = w.wait_with_output().unwrap();
        assert!(out.status.success(), "a writer failed: {out:?}");
        let lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(acked_line)
            .collect();
        assert_eq!(lines.len(), 200);
        acked.extend(lines);
    }
    let id = conversation_session_id(conv).unwrap();
    let path = active_values(&store.read_session(&id).unwrap());
    let contents: Vec<&str> = path
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    let present: HashSet<&str> = contents.iter().copied().collect();
    assert_eq!(present.len(), contents.len(), "a message was written twice");
    for q in &acked {
        assert!(present.contains(q.as_str()), "acknowledged {q:?} is lost");
    }
    // Every batch whole and in one piece on the path; only the killed
    // writer's last batch may be cut, and only at its end.
    let mut i = 0;
    while i < contents.len() {
        let q = contents[i].strip_suffix(" q").expect("a question");
        match contents.get(i + 1) {
            Some(a) => assert_eq!(a.strip_suffix(" a"), Some(q), "batch {q} interleaved"),
            None => assert!(q.starts_with("victim"), "batch {q} cut short"),
        }
        i += 2;
    }
    let mut parent = Value::Null;
    for m in &path {
        assert_eq!(m["parentId"], parent, "a write forked the session");
        parent = m["id"].clone();
    }
    assert!(path.len() >= 1600);
}

/// Child: hold the session exclusively and wait to be killed.
#[test]
#[ignore = "entry point of a child process of shared_writers"]
fn child_holds_the_session() {
    let store = Store::open(var("SK_ROOT"), options(Path::new(&var("SK_HOME")))).unwrap();
    let _s = store.open_session(&var("SK_ID")).unwrap();
    println!("HOLDING");
    std::thread::sleep(Duration::from_secs(600));
}

#[test]
fn a_shared_writer_waits_for_an_exclusive_holder_then_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let opts = StoreOptions {
        busy_timeout_ms: 300,
        ..options(&dir.path().join("home"))
    };
    let store = Store::open(dir.path(), opts).unwrap();
    let shared = store.open_conversation("held").unwrap();
    let id = shared.id().to_owned();
    let mut holder = child(
        "child_holds_the_session",
        &[
            ("SK_ROOT", dir.path().display().to_string()),
            ("SK_HOME", dir.path().join("home").display().to_string()),
            ("SK_ID", id.clone()),
        ],
    )
    .stdout(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let mut out = std::io::BufReader::new(holder.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("HOLDING") {
        line.clear();
        assert!(
            std::io::BufRead::read_line(&mut out, &mut line).unwrap() > 0,
            "child died"
        );
    }
    let start = Instant::now();
    let err = shared
        .append(json!({"role": "user", "content": "blocked"}))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Busy);
    assert!(start.elapsed() >= Duration::from_millis(300));
    let pid = holder.id();
    assert!(err.to_string().contains(&format!("process {pid}")), "{err}");
    // A killed holder lets go: the next write goes through.
    holder.kill().unwrap();
    holder.wait().unwrap();
    shared
        .append(json!({"role": "user", "content": "after"}))
        .unwrap();
    assert_eq!(linear_path(&store, &id).len(), 1);
}

#[test]
fn a_torn_line_left_by_a_killed_writer_is_set_aside_by_the_next_write() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let s = store.open_conversation("torn").unwrap();
    s.append(json!({"role": "user", "content": "before"}))
        .unwrap();
    let path = store.log_path(s.id()).unwrap();
    // What a writer killed in the middle of its write leaves.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut f, br#"{"id":"cut","role":"user","cont"#).unwrap();
    s.append(json!({"role": "user", "content": "after"}))
        .unwrap();
    let view = store.read_session(s.id()).unwrap();
    let contents: Vec<Value> = active_values(&view)
        .into_iter()
        .map(|m| m["content"].clone())
        .collect();
    assert_eq!(contents, [json!("before"), json!("after")]);
    assert_eq!(view.report().skipped.len(), 1);
    assert!(Path::new(&format!("{}.corrupt", path.display())).exists());
}

#[test]
fn any_conversation_id_stays_inside_the_store_and_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let ids = [
        "user@example.com",
        "conv:42",
        "tenant/123",
        "with space",
        "日本語の会話",
        "../x",
        "../../etc/passwd",
        "..",
        "blobs",
        "plain-id_1.0",
    ];
    for conv in ids {
        let s = store.open_conversation(conv).unwrap();
        s.append(json!({"role": "user", "content": conv})).unwrap();
        let log = store.log_path(s.id()).unwrap();
        assert_eq!(log.parent().unwrap(), store.dir(), "{conv:?}");
        s.close().unwrap();
        let again = store.open_conversation(conv).unwrap();
        assert_eq!(linear_path(&store, again.id()).len(), 1, "{conv:?}");
    }
    let listed = store.list_sessions().unwrap();
    assert_eq!(listed.len(), ids.len());
    for conv in ids {
        let e = listed
            .iter()
            .find(|e| e.id == conversation_session_id(conv).unwrap())
            .unwrap();
        let shown = e.conversation_id.as_deref().unwrap_or(&e.id);
        assert_eq!(shown, conv);
    }
    // Nothing was written outside the project's store directory.
    let escaped: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "home")
        .collect();
    assert!(escaped.is_empty(), "{escaped:?}");
    for bad in ["", &"x".repeat(1025)] {
        let err = store.open_conversation(bad).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
    }
}

#[test]
fn an_exclusive_handle_still_refuses_a_second_writer() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let s = store.create_session(CreateOptions::default()).unwrap();
    assert!(!s.is_shared());
    assert_eq!(
        store.open_session(s.id()).unwrap_err().kind(),
        ErrorKind::Busy
    );
    // A shared handle opens (it takes no lock to open but for a moment)...
    let opts = StoreOptions {
        busy_timeout_ms: 100,
        ..options(&dir.path().join("home"))
    };
    let impatient = Store::open(dir.path(), opts).unwrap();
    assert_eq!(
        impatient.open_shared(s.id()).unwrap_err().kind(),
        ErrorKind::Busy
    );
    let id = s.id().to_owned();
    s.close().unwrap();
    let shared = impatient.open_shared(&id).unwrap();
    shared
        .append(json!({"role": "user", "content": "now"}))
        .unwrap();
}

#[test]
fn erasing_a_conversation_keeps_its_id_and_its_shared_handle() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let s = store.open_conversation("user@example.com").unwrap();
    s.append(json!({"role": "user", "content": "secret"}))
        .unwrap();
    let s = s.erase().unwrap();
    assert!(s.is_shared());
    let other = store.open_conversation("user@example.com").unwrap();
    other
        .append(json!({"role": "user", "content": "fresh"}))
        .unwrap();
    s.append(json!({"role": "assistant", "content": "hi"}))
        .unwrap();
    assert_eq!(linear_path(&store, s.id()).len(), 2);
    let entry = store.session_entry(s.id()).unwrap();
    assert_eq!(entry.conversation_id.as_deref(), Some("user@example.com"));
}
