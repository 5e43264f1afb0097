//! Several writers and readers at once: two processes writing two sessions of one
//! project (and the index they share), a second writer on one session (Busy, in
//! this process and from another), a reader beside a writer, and threads sharing
//! one session handle with fsync on every append (group commit).
//!
//! The cross-process tests re-execute this test binary with `SESSIONKIT_CONC_CHILD`
//! naming the child's role and an ignored test as the child's entry point
//! (`--ignored --exact`), so a plain run never counts a child as a passing test.

use std::collections::HashSet;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sessionkit::{CreateOptions, Durability, ErrorKind, Store, StoreOptions};

#[path = "support/child.rs"]
mod support_child;
use support_child::test_child;

const CHILD_ENV: &str = "SESSIONKIT_CONC_CHILD";
/// Messages each process appends in the two-process test.
const PER_PROCESS: usize = 10_000;
/// A state update (and so an index write) every this many appends.
const STATE_EVERY: usize = 100;

fn options(home: &Path) -> StoreOptions {
    StoreOptions {
        home: Some(home.to_path_buf()),
        max_sessions: 0,
        // Compact the index journal as soon as it outgrows the index (every few
        // updates here), so that the writers race compactions as well as appends.
        index_journal_min_bytes: Some(0),
        ..StoreOptions::default()
    }
}

fn child_command(test: &str, role: &str) -> Command {
    let mut c = test_child(test);
    c.env(CHILD_ENV, role);
    c
}

fn child_role() -> Option<String> {
    std::env::var(CHILD_ENV).ok()
}

fn var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("child needs {name}"))
}

fn child_store() -> Store {
    Store::open(var("SK_ROOT"), options(Path::new(&var("SK_HOME")))).unwrap()
}

/// Every line of a log, parsed; panics on a torn or interleaved line.
fn parse_lines(path: &Path) -> Vec<Value> {
    let bytes = fs::read(path).unwrap();
    assert!(
        bytes.ends_with(b"\n"),
        "{}: last line has no newline",
        path.display()
    );
    bytes[..bytes.len() - 1]
        .split(|&b| b == b'\n')
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_slice::<Value>(line).unwrap_or_else(|e| {
                panic!(
                    "{} line {}: {e}: {:?}",
                    path.display(),
                    i + 1,
                    String::from_utf8_lossy(&line[..line.len().min(200)])
                )
            })
        })
        .collect()
}

/// The index as stored (the file, with its journal applied), not refolded from
/// the logs; the index file itself must parse too. Also returns the journal
/// generation the index names.
fn raw_index(store: &Store) -> (Value, Option<u64>) {
    let bytes = fs::read(store.index_path()).unwrap();
    let file: Value =
        serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("index does not parse: {e}"));
    let stored = store.read_index().unwrap().expect("an index");
    assert!(
        stored.journal.skipped.is_empty(),
        "unreadable journal lines: {:?}",
        stored.journal
    );
    (
        serde_json::to_value(&stored.index).unwrap(),
        file["journal"].as_u64(),
    )
}

fn raw_entry(index: &Value, id: &str) -> Option<Value> {
    index["sessions"]
        .as_array()?
        .iter()
        .find(|e| e["id"] == id)
        .cloned()
}

// ---------------------------------------------------------------------------
// Two processes, two sessions, one index.

/// Child: append `PER_PROCESS` messages to one session, updating state every
/// `STATE_EVERY` appends.
#[test]
#[ignore = "entry point of a child process of two_processes_write_two_sessions_and_the_index"]
fn child_writer() {
    assert_eq!(
        child_role().as_deref(),
        Some("writer"),
        "a child of two_processes_write_two_sessions_and_the_index"
    );
    let store = child_store();
    let tag = var("SK_TAG");
    let s = store.open_session(&var("SK_SESSION")).unwrap();
    for i in 0..PER_PROCESS {
        let role = if i.is_multiple_of(2) {
            "user"
        } else {
            "assistant"
        };
        s.append(json!({"role": role, "content": format!("{tag} {i}"), "meta": {"i": i}}))
            .unwrap();
        if (i + 1).is_multiple_of(STATE_EVERY) {
            let status = if (i / STATE_EVERY).is_multiple_of(2) {
                "processing"
            } else {
                "waiting_for_user"
            };
            s.update_state(json!({"status": status, "activeTokens": i + 1}))
                .unwrap();
        }
    }
    s.update_state(json!({"status": "completed"})).unwrap();
    s.close().unwrap();
}

#[test]
fn two_processes_write_two_sessions_and_the_index() {
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let store = Store::open(root.path(), options(home.path())).unwrap();
    let ids: Vec<String> = (0..2)
        .map(|_| {
            let s = store.create_session(CreateOptions::default()).unwrap();
            let id = s.id().to_string();
            s.close().unwrap();
            id
        })
        .collect();
    let started = Instant::now();
    let mut children: Vec<_> = ids
        .iter()
        .enumerate()
        .map(|(n, id)| {
            child_command("child_writer", "writer")
                .env("SK_HOME", home.path())
                .env("SK_ROOT", root.path())
                .env("SK_SESSION", id)
                .env("SK_TAG", format!("p{n}"))
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // While they run, the index always parses and never loses either session,
    // whether a reader finds it between journal appends or compactions.
    let mut polls = 0;
    let mut generations = HashSet::new();
    while children.iter_mut().any(|c| c.try_wait().unwrap().is_none()) {
        let (index, generation) = raw_index(&store);
        generations.insert(generation);
        for id in &ids {
            assert!(
                raw_entry(&index, id).is_some(),
                "session {id} missing from the index: {index}"
            );
        }
        polls += 1;
        std::thread::sleep(Duration::from_millis(5));
    }
    for mut c in children {
        let mut err = String::new();
        c.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        let status = c.wait().unwrap();
        assert!(status.success(), "writer failed ({status}): {err}");
    }
    let (index, last_generation) = raw_index(&store);
    eprintln!(
        "two writers: {} appends each in {:.1}s, index polled {polls} times, {} journal \
         generations seen, the last {last_generation:?}",
        PER_PROCESS,
        started.elapsed().as_secs_f64(),
        generations.len()
    );
    // Each writer made about a hundred index updates: compactions happened
    // all along, not once.
    assert!(
        last_generation.is_some_and(|g| g >= 20),
        "too few compactions: generation {last_generation:?}"
    );
    // Compaction removed every older journal.
    let journals: Vec<String> = fs::read_dir(store.dir())
        .unwrap()
        .map(|d| d.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".sessions-index."))
        .collect();
    assert!(
        journals.len() <= 1,
        "journals of older generations left: {journals:?}"
    );

    for (n, id) in ids.iter().enumerate() {
        let log = store.log_path(id).unwrap();
        let lines = parse_lines(&log);
        let messages: Vec<&Value> = lines.iter().filter(|l| l["type"] == "message").collect();
        assert_eq!(messages.len(), PER_PROCESS, "session {id}");
        for (i, m) in messages.iter().enumerate() {
            assert_eq!(m["sessionId"], id.as_str());
            assert_eq!(
                m["content"],
                format!("p{n} {i}"),
                "session {id} message {i}"
            );
        }
        let states = lines.iter().filter(|l| l["type"] == "state").count();
        assert_eq!(states, PER_PROCESS / STATE_EVERY + 1, "session {id}");

        let view = store.read_session(id).unwrap();
        assert!(view.report().is_clean(), "{:?}", view.report());
        assert_eq!(view.active_path().unwrap().len(), PER_PROCESS);

        // The index as stored (not a refold) has the entry with the right counts.
        let entry = raw_entry(&index, id).unwrap_or_else(|| panic!("{id} lost from the index"));
        assert_eq!(entry["messageCount"], json!(PER_PROCESS), "{entry}");
        assert_eq!(entry["activeTokens"], json!(PER_PROCESS), "{entry}");
        assert_eq!(entry["status"], "completed", "{entry}");
        assert_eq!(entry["logBytes"], json!(fs::metadata(&log).unwrap().len()));
        assert_eq!(entry["headId"], messages.last().unwrap()["id"]);
    }
    assert_eq!(index["sessions"].as_array().unwrap().len(), 2);
    let listed: HashSet<String> = store
        .list_sessions()
        .unwrap()
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(listed, ids.iter().cloned().collect());
}

// ---------------------------------------------------------------------------
// A second writer on one session.

#[test]
fn second_writer_in_this_process_is_busy() {
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let store = Store::open(root.path(), options(home.path())).unwrap();
    let s = store.create_session(CreateOptions::default()).unwrap();
    let id = s.id().to_string();
    s.append(json!({"role": "user", "content": "mine"}))
        .unwrap();
    // Through the same store, another store value, and on another thread.
    let other = Store::open(root.path(), options(home.path())).unwrap();
    for st in [&store, &other] {
        let e = st.open_session(&id).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Busy, "{e}");
        assert!(e.to_string().contains(&id), "{e}");
        let e = st.rename_session(&id, "stolen").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Busy, "{e}");
        let e = st.delete_session(&id).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Busy, "{e}");
    }
    let (st, id2) = (other.clone(), id.clone());
    let e = std::thread::spawn(move || st.open_session(&id2).unwrap_err())
        .join()
        .unwrap();
    assert_eq!(e.kind(), ErrorKind::Busy, "{e}");
    // The held session is untouched and still writable; once closed, it opens.
    s.append(json!({"role": "assistant", "content": "still mine"}))
        .unwrap();
    s.close().unwrap();
    let again = other.open_session(&id).unwrap();
    assert_eq!(again.read().unwrap().message_count(), 2);
    assert_eq!(again.entry().title, "mine");
}

/// Child: the session is held by the parent. Opening it must fail with Busy at
/// once, and reading it must work.
#[test]
#[ignore = "entry point of a child process of second_writer_in_another_process_is_busy"]
fn child_second_writer() {
    assert_eq!(
        child_role().as_deref(),
        Some("second-writer"),
        "a child of second_writer_in_another_process_is_busy"
    );
    let store = child_store();
    let id = var("SK_SESSION");
    let t = Instant::now();
    let e = store.open_session(&id).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Busy, "{e}");
    assert!(e.to_string().contains(&id), "{e}");
    assert!(t.elapsed() < Duration::from_secs(5), "open_session waited");
    let view = store.read_session(&id).unwrap();
    assert_eq!(view.message_count(), 3);
    println!("busy ok");
}

/// Child: hold the session open until stdin closes.
#[test]
#[ignore = "entry point of a child process of second_writer_in_another_process_is_busy"]
fn child_holder() {
    assert_eq!(
        child_role().as_deref(),
        Some("holder"),
        "a child of second_writer_in_another_process_is_busy"
    );
    let store = child_store();
    let s = store.open_session(&var("SK_SESSION")).unwrap();
    s.append(json!({"role": "user", "content": "held"}))
        .unwrap();
    println!("holding");
    std::io::stdout().flush().unwrap();
    let mut rest = String::new();
    std::io::stdin().read_to_string(&mut rest).unwrap();
    s.close().unwrap();
}

#[test]
fn second_writer_in_another_process_is_busy() {
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let store = Store::open(root.path(), options(home.path())).unwrap();
    let s = store.create_session(CreateOptions::default()).unwrap();
    let id = s.id().to_string();
    for i in 0..3 {
        s.append(json!({"role": "user", "content": format!("m{i}")}))
            .unwrap();
    }

    // This process holds the session; another one tries to open it.
    let out = child_command("child_second_writer", "second-writer")
        .env("SK_HOME", home.path())
        .env("SK_ROOT", root.path())
        .env("SK_SESSION", &id)
        .output()
        .unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("busy ok"),
        "child: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    s.close().unwrap();

    // Another process holds it; this one gets Busy, and the session opens once
    // that process is gone (closed normally, then killed while holding it).
    for kill in [false, true] {
        let mut child = child_command("child_holder", "holder")
            .env("SK_HOME", home.path())
            .env("SK_ROOT", root.path())
            .env("SK_SESSION", &id)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        // libtest may print "test child_holder ... " on the same line.
        while !line.trim_end().ends_with("holding") {
            line.clear();
            assert!(lines.read_line(&mut line).unwrap() > 0, "holder died");
        }
        let e = store.open_session(&id).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Busy, "{e}");
        assert!(store.read_session(&id).unwrap().message_count() >= 4);
        if kill {
            child.kill().unwrap();
        } else {
            drop(child.stdin.take());
        }
        child.wait().unwrap();
        let s = store.open_session(&id).unwrap();
        s.close().unwrap();
    }
    assert_eq!(store.read_session(&id).unwrap().message_count(), 5);
}

// ---------------------------------------------------------------------------
// A reader beside a writer.

#[test]
fn reader_beside_a_writer_never_blocks_nor_sees_a_partial_line() {
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let store = Store::open(root.path(), options(home.path())).unwrap();
    let s = store.create_session(CreateOptions::default()).unwrap();
    let id = s.id().to_string();
    const N: usize = 2000;
    // Content is a function of the index, so the reader can check every message.
    fn content(i: usize) -> String {
        let len = if i.is_multiple_of(20) {
            20_000 + i
        } else {
            10 + i % 200
        };
        format!("{i}:{}", "r".repeat(len))
    }
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let (store, id, done) = (store.clone(), id.clone(), done.clone());
        std::thread::spawn(move || {
            let mut reads = 0u64;
            let mut torn_seen = 0u64;
            let mut last_count = 0;
            let mut slowest = Duration::ZERO;
            loop {
                let finished = done.load(Ordering::Acquire);
                let t = Instant::now();
                let view = store.read_session(&id).unwrap();
                let path = view.active_path().unwrap();
                slowest = slowest.max(t.elapsed());
                reads += 1;
                let r = view.report();
                assert!(r.skipped.is_empty(), "read {reads}: {r:?}");
                assert!(r.broken_chains.is_empty() && r.duplicate_ids.is_empty());
                if r.torn_tail.is_some() {
                    // A write still in progress at the end of the file: reported,
                    // never handed out as a message.
                    torn_seen += 1;
                }
                assert!(path.len() >= last_count, "the view went backwards");
                last_count = path.len();
                for (i, m) in path.iter().enumerate() {
                    let v: Value = serde_json::from_str(m.json()).expect("whole message");
                    assert_eq!(v["content"].as_str(), Some(content(i).as_str()));
                }
                if finished {
                    assert!(r.torn_tail.is_none(), "torn tail after the writer finished");
                    return (reads, torn_seen, last_count, slowest);
                }
            }
        })
    };
    let t = Instant::now();
    for i in 0..N {
        s.append(json!({"role": "user", "content": content(i)}))
            .unwrap();
        if i.is_multiple_of(100) {
            s.update_state(json!({"activeTokens": i})).unwrap();
            // Let the reader in between bursts, so the two overlap for a while.
            std::thread::sleep(Duration::from_millis(3));
        }
    }
    let write_time = t.elapsed();
    done.store(true, Ordering::Release);
    let (reads, torn_seen, count, slowest) = reader.join().unwrap();
    eprintln!(
        "reader: {reads} reads while {N} appends ran ({:.2}s), {torn_seen} with a \
         write in progress at the end, slowest read {:?}",
        write_time.as_secs_f64(),
        slowest
    );
    assert_eq!(count, N);
    assert!(reads >= 3, "the reader hardly ran beside the writer");
    s.close().unwrap();
}

// ---------------------------------------------------------------------------
// Threads sharing one session, fsync on every append.

#[test]
fn threads_share_a_session_with_group_commit() {
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let store = Store::open(
        root.path(),
        StoreOptions {
            durability: Durability::Always,
            ..options(home.path())
        },
    )
    .unwrap();
    let s = store.create_session(CreateOptions::default()).unwrap();
    let id = s.id().to_string();
    s.close().unwrap();
    // A fresh handle, so the count covers the appends only.
    let s = Arc::new(store.open_session(&id).unwrap());
    assert_eq!(s.fsync_count(), 0);
    const THREADS: usize = 8;
    const EACH: usize = 50;
    // All threads start appending at once, so that their appends overlap: one
    // thread's fsync is under way while the others write and wait for it.
    let start = Arc::new(std::sync::Barrier::new(THREADS));
    let t = Instant::now();
    let handles: Vec<_> = (0..THREADS)
        .map(|th| {
            let s = s.clone();
            let start = start.clone();
            std::thread::spawn(move || {
                start.wait();
                (0..EACH)
                    .map(|i| {
                        s.append(json!({"role": "user", "content": format!("t{th} m{i}")}))
                            .unwrap()
                            .id()
                            .to_string()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let returned: HashSet<String> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let appends = THREADS * EACH;
    let fsyncs = s.fsync_count();
    eprintln!(
        "group commit: {appends} appends from {THREADS} threads, {fsyncs} fsyncs, {:.2}s",
        t.elapsed().as_secs_f64()
    );
    assert_eq!(returned.len(), appends, "ids are unique");
    assert!(fsyncs >= 1, "durability Always never synced");
    // Group commit: appends that wait for one fsync share it, so concurrent
    // writers need fewer fsyncs than appends.
    assert!(
        (fsyncs as usize) < appends,
        "no append shared an fsync: {fsyncs} fsyncs for {appends} appends from {THREADS} threads"
    );
    let s = Arc::into_inner(s).unwrap();
    s.close().unwrap();

    let view = store.read_session(&id).unwrap();
    assert!(view.report().is_clean(), "{:?}", view.report());
    let path = view.active_path().unwrap();
    assert_eq!(path.len(), appends, "appends serialise into one chain");
    let on_disk: HashSet<String> = path.iter().map(|m| m.id().to_string()).collect();
    assert_eq!(on_disk, returned);
    // Each thread's messages are in its own order.
    for th in 0..THREADS {
        let mine: Vec<String> = path
            .iter()
            .filter_map(|m| m.value()["content"].as_str().map(str::to_owned))
            .filter(|c| c.starts_with(&format!("t{th} ")))
            .collect();
        let want: Vec<String> = (0..EACH).map(|i| format!("t{th} m{i}")).collect();
        assert_eq!(mine, want);
    }
    let lines = parse_lines(&store.log_path(&id).unwrap());
    assert_eq!(lines.len(), appends + 1, "header + messages, nothing else");
}
