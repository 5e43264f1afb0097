//! The index journal (FORMAT.md §10.7), as a user of the store sees it: updates
//! are appended to the journal rather than rewriting the index, listing shows them,
//! a compaction at the bound leaves the same index, a torn line costs nothing, and
//! every kind of change survives compactions and a fresh handle.

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::json;
use sessionkit::testing::IndexFile;
use sessionkit::{CreateOptions, ForkOptions, IndexEntry, Status, Store, StoreOptions};

fn options(home: &Path, journal_min: Option<u64>) -> StoreOptions {
    StoreOptions {
        home: Some(home.to_path_buf()),
        max_sessions: 0,
        index_journal_min_bytes: journal_min,
        ..StoreOptions::default()
    }
}

struct Env {
    _home: tempfile::TempDir,
    _project: tempfile::TempDir,
    store: Store,
}

fn env(journal_min: Option<u64>, max_sessions: usize) -> Env {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let o = StoreOptions {
        max_sessions,
        ..options(home.path(), journal_min)
    };
    let store = Store::open(project.path(), o).unwrap();
    Env {
        _home: home,
        _project: project,
        store,
    }
}

/// The index file alone, as an older reader sees it.
fn index_file(store: &Store) -> IndexFile {
    IndexFile::read(&store.index_path()).unwrap().unwrap()
}

fn journal_path(store: &Store) -> Option<PathBuf> {
    let g = index_file(store).journal?;
    Some(store.dir().join(format!(".sessions-index.{g}.journal")))
}

fn journal_files(store: &Store) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(store.dir())
        .unwrap()
        .map(|d| d.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".sessions-index."))
        .collect();
    v.sort();
    v
}

fn by_id(entries: &[IndexEntry]) -> HashMap<String, IndexEntry> {
    entries.iter().map(|e| (e.id.clone(), e.clone())).collect()
}

/// The index as stored (file + journal), checked to be fresh: every entry has the
/// length of its log, so nothing in it needs a refold.
fn stored_fresh(store: &Store) -> Vec<IndexEntry> {
    let stored = store.read_index().unwrap().unwrap();
    for e in &stored.index.sessions {
        let len = fs::metadata(store.log_path(&e.id).unwrap()).unwrap().len();
        assert_eq!(e.log_bytes, len, "stale entry {e:?}");
    }
    stored.index.sessions
}

fn session_with_a_message(store: &Store, text: &str) -> sessionkit::Session {
    let s = store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "user", "content": text})).unwrap();
    s.append(json!({"role": "assistant", "content": format!("re: {text}")}))
        .unwrap();
    s
}

#[test]
fn updates_are_journal_lines_and_listing_shows_them() {
    let e = env(None, 0);
    let store = &e.store;
    let s = session_with_a_message(store, "first");
    let other = session_with_a_message(store, "second");
    other.close().unwrap();
    s.sync().unwrap();
    let index_before = fs::read(store.index_path()).unwrap();
    let journal = journal_path(store).expect("the index names a journal");
    let journal_before = fs::read(&journal).unwrap();

    s.update_state(json!({"status": "processing", "activeTokens": 77}))
        .unwrap();

    // The index file was not rewritten; one line was appended to the journal.
    assert_eq!(fs::read(store.index_path()).unwrap(), index_before);
    let journal_after = fs::read(&journal).unwrap();
    assert!(journal_after.starts_with(&journal_before));
    let added = &journal_after[journal_before.len()..];
    assert_eq!(added.iter().filter(|&&b| b == b'\n').count(), 1);
    let line: serde_json::Value = serde_json::from_slice(added).unwrap();
    assert_eq!(line["entry"]["id"], s.id());
    assert_eq!(line["entry"]["status"], "processing");

    // Listing (and the index as stored) show it.
    let listed = by_id(&store.list_sessions().unwrap());
    assert_eq!(listed[s.id()].status, Status::Processing);
    assert_eq!(listed[s.id()].active_tokens, Some(77));
    assert_eq!(listed.len(), 2);
    let stored = by_id(&stored_fresh(store));
    assert_eq!(stored[s.id()].status, Status::Processing);
    // Listing a fresh index (with its journal) writes nothing.
    assert_eq!(fs::read(&journal).unwrap(), journal_after);
    assert_eq!(fs::read(store.index_path()).unwrap(), index_before);

    // Closing the last writer folds the journal into the index file.
    let id = s.id().to_string();
    s.close().unwrap();
    assert!(!journal.exists());
    let index_closed = fs::read(store.index_path()).unwrap();
    assert_eq!(by_id(&index_file(store).sessions)[&id], listed[&id]);
    // The session reopens from its entry, without a refold; a close that
    // changes nothing writes nothing.
    let again = store.open_session(&id).unwrap();
    assert_eq!(again.entry(), listed[&id]);
    again.close().unwrap();
    assert_eq!(fs::read(store.index_path()).unwrap(), index_closed);
    assert_eq!(journal_files(store), Vec::<String>::new());
}

#[test]
fn compaction_at_the_bound_leaves_the_index_the_journal_gave() {
    // A bound of 0: compact when the journal would outgrow the index file.
    let e = env(Some(0), 0);
    let store = &e.store;
    let sessions: Vec<_> = (0..3)
        .map(|i| session_with_a_message(store, &format!("s{i}")))
        .collect();
    for s in &sessions {
        s.sync().unwrap();
    }
    let mut compactions = 0;
    let mut appends = 0;
    for round in 0..40u64 {
        let gen_before = index_file(store).journal;
        let applied_before = store.read_index().unwrap().unwrap().index;
        let s = &sessions[(round % 3) as usize];
        s.update_state(json!({"activeTokens": round})).unwrap();
        let file = index_file(store);
        let index_len = fs::metadata(store.index_path()).unwrap().len();
        let journal_len = journal_path(store)
            .and_then(|p| fs::metadata(p).ok())
            .map_or(0, |m| m.len());
        // The bound holds after every update.
        assert!(
            journal_len <= index_len,
            "round {round}: journal {journal_len} > index {index_len}"
        );
        if file.journal != gen_before {
            compactions += 1;
            // The new index is, entry for entry, the old index with its journal
            // applied, plus this update; the new journal is empty, the old gone.
            let mut want = by_id(&applied_before.sessions);
            want.insert(s.id().to_string(), s.entry());
            assert_eq!(by_id(&file.sessions), want, "round {round}");
            let mut sorted = file.sessions.clone();
            sorted.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then(b.id.cmp(&a.id)));
            assert_eq!(file.sessions, sorted, "a compacted index is sorted");
            assert_eq!(journal_len, 0);
            assert!(
                journal_files(store).is_empty(),
                "{:?}",
                journal_files(store)
            );
            assert!(file.journal > gen_before);
        } else {
            appends += 1;
        }
        assert_eq!(stored_fresh(store), store.list_sessions().unwrap());
    }
    assert!(
        compactions >= 5 && appends >= 5,
        "{compactions} compactions, {appends} appends"
    );
}

#[test]
fn a_torn_last_journal_line_is_ignored_and_ended_by_the_next_append() {
    let e = env(None, 0);
    let store = &e.store;
    let s = session_with_a_message(store, "hello");
    s.update_state(json!({"status": "completed"})).unwrap();
    let before = stored_fresh(store);
    let journal = journal_path(store).unwrap();
    let whole = fs::metadata(&journal).unwrap().len();
    // A writer killed in the middle of its line.
    let mut f = fs::OpenOptions::new().append(true).open(&journal).unwrap();
    f.write_all(br#"{"entry":{"id":"ghost","title":"half"#)
        .unwrap();
    drop(f);

    let stored = store.read_index().unwrap().unwrap();
    let torn = stored.journal.torn_tail.clone().expect("a torn tail");
    assert_eq!(torn.offset, whole);
    assert!(stored.journal.skipped.is_empty());
    assert_eq!(stored.index.sessions, before);
    assert_eq!(store.list_sessions().unwrap(), before);

    // The next update ends the torn line first: it becomes one skipped line, and
    // the update's own line is whole and applied.
    s.update_state(json!({"status": "failed", "failureReason": "boom"}))
        .unwrap();
    let bytes = fs::read(&journal).unwrap();
    assert_eq!(bytes[bytes.len() - 1], b'\n');
    let stored = store.read_index().unwrap().unwrap();
    assert!(stored.journal.torn_tail.is_none());
    assert_eq!(stored.journal.skipped.len(), 1, "{:?}", stored.journal);
    assert_eq!(stored.journal.skipped[0].offset, whole);
    let listed = by_id(&store.list_sessions().unwrap());
    assert_eq!(listed.len(), 1, "no ghost session");
    assert_eq!(listed[s.id()].status, Status::Failed);
    assert_eq!(listed[s.id()].failure_reason.as_deref(), Some("boom"));
}

#[test]
fn garbage_in_the_journal_costs_a_refold_not_an_entry() {
    let e = env(None, 0);
    let store = &e.store;
    let s = session_with_a_message(store, "hello");
    // Still open: closing would fold the journal into the index file.
    s.rename("Renamed").unwrap();
    // Lose the rename's line (and everything else in the journal) to NULs, as a
    // power loss may leave an appended block.
    let journal = journal_path(store).unwrap();
    let len = fs::metadata(&journal).unwrap().len() as usize;
    fs::write(
        &journal,
        vec![0u8; len - 1]
            .into_iter()
            .chain([b'\n'])
            .collect::<Vec<_>>(),
    )
    .unwrap();
    // Read by the next process (this one's handle remembers what it wrote).
    let store = &Store::open(store.project_root(), store.options().clone()).unwrap();
    let stored = store.read_index().unwrap().unwrap();
    assert_eq!(stored.journal.skipped.len(), 1);
    // The index entry fell back to a stale one; listing refolds the title from the
    // log's state record.
    let listed = store.list_sessions().unwrap();
    assert_eq!(listed[0].title, "Renamed");
    assert!(listed[0].title_set);
    assert_eq!(stored_fresh(store)[0].title, "Renamed");
    drop(s);
}

/// Run updates on `s` until the index has been compacted (its generation moved).
fn compact_through(store: &Store, s: &sessionkit::Session) {
    let g = index_file(store).journal;
    for i in 0..1000u64 {
        s.update_state(json!({"activeTokens": i})).unwrap();
        if index_file(store).journal != g {
            return;
        }
    }
    panic!("no compaction in 1000 updates");
}

#[test]
fn rename_delete_prune_fork_and_create_survive_compaction_and_reopen() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let opts = StoreOptions {
        max_sessions: 4,
        ..options(home.path(), Some(0))
    };
    let store = Store::open(project.path(), opts.clone()).unwrap();
    let names = ["oldest", "renamed", "deleted", "forked"];
    let mut ids = HashMap::new();
    for n in names {
        let s = session_with_a_message(&store, n);
        ids.insert(n, s.id().to_string());
        s.close().unwrap();
    }
    store
        .rename_session(&ids["renamed"], "A new title")
        .unwrap();
    store.delete_session(&ids["deleted"]).unwrap();
    let fork = store
        .fork_session(
            &ids["forked"],
            ForkOptions {
                title: Some("The fork".into()),
                ..ForkOptions::default()
            },
        )
        .unwrap();
    let fork_id = fork.id().to_string();
    fork.close().unwrap();
    // Four sessions now; one more prunes the oldest.
    let newest = session_with_a_message(&store, "newest");
    assert_eq!(newest.pruned(), [ids["oldest"].clone()]);
    let newest_id = newest.id().to_string();

    let check = |store: &Store, what: &str| {
        for entries in [store.list_sessions().unwrap(), stored_fresh(store)] {
            let got = by_id(&entries);
            let mut keys: Vec<&String> = got.keys().collect();
            keys.sort();
            let mut want = vec![&ids["renamed"], &ids["forked"], &fork_id, &newest_id];
            want.sort();
            assert_eq!(keys, want, "{what}");
            assert_eq!(got[&ids["renamed"]].title, "A new title", "{what}");
            assert!(got[&ids["renamed"]].title_set, "{what}");
            assert_eq!(got[&fork_id].title, "The fork", "{what}");
            let lineage = got[&fork_id].forked_from.as_ref().expect("lineage");
            assert_eq!(lineage.session_id, ids["forked"], "{what}");
            assert_eq!(got[&newest_id].title, "newest", "{what}");
        }
    };
    check(&store, "before compaction");
    // A fresh handle (no cache) reads the same from index + journal.
    check(
        &Store::open(project.path(), opts.clone()).unwrap(),
        "reopened",
    );
    compact_through(&store, &newest);
    newest.close().unwrap();
    check(&store, "after compaction");
    // An older reader, which sees the index file alone, finds every change in
    // it too once compacted.
    let file = by_id(&index_file(&store).sessions);
    assert_eq!(file.len(), 4);
    assert_eq!(file[&ids["renamed"]].title, "A new title");
    assert!(!file.contains_key(&ids["deleted"]) && !file.contains_key(&ids["oldest"]));
    drop(store);
    check(
        &Store::open(project.path(), opts).unwrap(),
        "reopened after compaction",
    );
}

#[test]
fn an_index_written_without_a_journal_is_compacted_on_the_next_update() {
    // As an older library leaves it: no `journal` field, a journal behind.
    let e = env(None, 0);
    let store = &e.store;
    let s = session_with_a_message(store, "hello");
    s.update_state(json!({"status": "processing"})).unwrap();
    let mut file = store.read_index().unwrap().unwrap().index;
    let old_gen = file.journal.take().unwrap();
    fs::write(store.index_path(), file.to_bytes()).unwrap();
    assert_eq!(
        store.read_index().unwrap().unwrap().journal.generation,
        None
    );

    s.update_state(json!({"status": "completed"})).unwrap();
    let file = index_file(store);
    assert!(file.journal.unwrap() > old_gen);
    assert!(
        journal_files(store).is_empty(),
        "{:?}",
        journal_files(store)
    );
    assert_eq!(file.sessions[0].status, Status::Completed);
    assert_eq!(store.list_sessions().unwrap()[0].status, Status::Completed);
}

#[test]
fn gc_removes_journals_the_index_does_not_name_once_old() {
    let e = env(None, 0);
    let store = &e.store;
    let s = session_with_a_message(store, "hello");
    s.close().unwrap();
    let current = journal_path(store).unwrap();
    let orphan = store.dir().join(".sessions-index.999.journal");
    let young = store.dir().join(".sessions-index.1000.journal");
    for p in [&current, &orphan, &young] {
        fs::write(p, b"{\"remove\":\"x\"}\n").unwrap();
    }
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for p in [&current, &orphan] {
        fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
    let r = store.gc_temp_files().unwrap();
    assert_eq!((r.removed, r.kept_young), (1, 1), "{r:?}");
    assert!(current.exists() && young.exists() && !orphan.exists());
}

/// The entry of `id` in `sessions-index.json` read alone, as a tool that knows
/// nothing of the journal reads it.
fn entry_in_index_file(store: &Store, id: &str) -> serde_json::Value {
    let text = fs::read(store.index_path()).unwrap();
    let index: serde_json::Value = serde_json::from_slice(&text).unwrap();
    index["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == id)
        .unwrap_or_else(|| panic!("no entry for {id} in the index file: {index}"))
        .clone()
}

#[test]
fn closing_a_writer_leaves_the_index_file_complete_on_its_own() {
    let e = env(None, 0);
    let store = &e.store;
    let a = session_with_a_message(store, "a");
    let b = session_with_a_message(store, "b");
    a.update_state(json!({"status": "completed"})).unwrap();
    let b_last = b
        .append(json!({"role": "user", "content": "more"}))
        .unwrap();
    b.update_state(json!({"status": "waiting_for_user"}))
        .unwrap();
    let a_last = a
        .append(json!({"role": "assistant", "content": "done"}))
        .unwrap();
    let a_id = a.id().to_string();
    let b_id = b.id().to_string();

    // Closing `a` (b still open) writes both entries, as they are, into the file.
    a.close().unwrap();
    let ea = entry_in_index_file(store, &a_id);
    assert_eq!(ea["status"], "completed");
    assert_eq!(ea["messageCount"], 3);
    assert_eq!(ea["headId"], a_last.id());
    let eb = entry_in_index_file(store, &b_id);
    assert_eq!(eb["status"], "waiting_for_user");
    assert_eq!(eb["messageCount"], 3);
    assert_eq!(eb["headId"], b_last.id());
    assert_eq!(journal_files(store), Vec::<String>::new());

    // `b` appends without an index update, then is dropped without `close`.
    let b_end = b
        .append(json!({"role": "assistant", "content": "bye"}))
        .unwrap();
    drop(b);
    let eb = entry_in_index_file(store, &b_id);
    assert_eq!(eb["messageCount"], 4);
    assert_eq!(eb["headId"], b_end.id());
    assert_eq!(eb["status"], "waiting_for_user");
    assert_eq!(journal_files(store), Vec::<String>::new());
    let len = fs::metadata(store.log_path(&b_id).unwrap()).unwrap().len();
    assert_eq!(eb["logBytes"], len, "the entry is fresh against its log");

    // Opening and closing with nothing changed writes nothing.
    let before = fs::read(store.index_path()).unwrap();
    let mtime = fs::metadata(store.index_path())
        .unwrap()
        .modified()
        .unwrap();
    store.open_session(&a_id).unwrap().close().unwrap();
    assert_eq!(fs::read(store.index_path()).unwrap(), before);
    assert_eq!(
        fs::metadata(store.index_path())
            .unwrap()
            .modified()
            .unwrap(),
        mtime
    );
    assert_eq!(journal_files(store), Vec::<String>::new());
}
