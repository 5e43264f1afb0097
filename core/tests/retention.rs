//! Retention (FORMAT.md §10.6): nothing is pruned unless the host sets
//! `max_sessions`; pruning moves sessions to the trash, where they are listed,
//! restorable with their subagents, blobs and file history, and purged by `gc`
//! only after the grace period. A move cut short is finished by the next
//! operation.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};
use sessionkit::{CreateOptions, DoctorOptions, Durability, ErrorKind, Store, StoreOptions};

struct Env {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    store: Store,
}

fn env_with(f: impl FnOnce(&mut StoreOptions)) -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    let home = tmp.path().join("home");
    fs::create_dir_all(&root).unwrap();
    let root = fs::canonicalize(&root).unwrap();
    let mut o = StoreOptions {
        home: Some(home.clone()),
        durability: Durability::Never,
        blob_threshold: 1024,
        ..StoreOptions::default()
    };
    f(&mut o);
    let store = Store::open(&root, o).unwrap();
    Env {
        _tmp: tmp,
        root,
        home,
        store,
    }
}

impl Env {
    fn reopen(&self, f: impl FnOnce(&mut StoreOptions)) -> Store {
        let mut o = self.store.options().clone();
        f(&mut o);
        Store::open(&self.root, o).unwrap()
    }
    fn dir(&self) -> PathBuf {
        self.store.dir().to_path_buf()
    }
    fn trash(&self, id: &str) -> PathBuf {
        self.dir().join("trash").join(id)
    }
    fn live_log(&self, id: &str) -> PathBuf {
        self.dir().join(format!("{id}.jsonl"))
    }
    fn listed(&self) -> Vec<String> {
        self.store
            .list_sessions()
            .unwrap()
            .into_iter()
            .map(|e| e.id)
            .collect()
    }
    fn trashed(&self) -> Vec<String> {
        self.store
            .list_trash()
            .unwrap()
            .into_iter()
            .map(|t| t.id)
            .collect()
    }
    fn blobs(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for d in fs::read_dir(self.dir().join("blobs")).into_iter().flatten() {
            for f in fs::read_dir(d.unwrap().path()).unwrap() {
                out.push(f.unwrap().path());
            }
        }
        out
    }
    /// Make every blob look older than the blob gc's grace period.
    fn age_blobs(&self) {
        let old = SystemTime::now() - sessionkit::BLOB_GC_GRACE - Duration::from_secs(60);
        for p in self.blobs() {
            fs::File::open(&p).unwrap().set_modified(old).unwrap();
        }
    }
    fn branches(&self) -> Vec<String> {
        self.store
            .file_history_sizes()
            .unwrap()
            .sessions
            .into_iter()
            .map(|s| s.session_id)
            .collect()
    }
    fn gc(&self, store: &Store) -> sessionkit::StoreGcReport {
        store.gc_all(&mut |_| {}).unwrap()
    }
}

fn big(tag: &str) -> String {
    format!("{tag}: {}", "payload line\n".repeat(400))
}

/// A session with a user input (a file-history snapshot of an edited file), a
/// large value stored as a blob and a subagent; closed.
fn rich_session(e: &Env, title: &str) -> String {
    let s = e
        .store
        .create_session(CreateOptions {
            title: Some(title.into()),
            ..CreateOptions::default()
        })
        .unwrap();
    fs::write(e.root.join("a.txt"), "before\n").unwrap();
    s.user_input(json!({"content": format!("{title}: edit a.txt")}))
        .unwrap();
    s.before_edit(&["a.txt"]).unwrap();
    fs::write(e.root.join("a.txt"), "after\n").unwrap();
    s.after_edit(&["a.txt"]).unwrap();
    s.append(json!({"role": "tool", "content": big(title)}))
        .unwrap();
    let ag = s.spawn_subagent(Some("helper"), json!({})).unwrap();
    ag.append(json!({"role": "user", "content": "look around"}))
        .unwrap();
    ag.finish(json!({}), false).unwrap();
    let id = s.id().to_string();
    s.close().unwrap();
    id
}

fn plain_session(store: &Store, text: &str) -> String {
    let s = store.create_session(CreateOptions::default()).unwrap();
    s.append(json!({"role": "user", "content": text})).unwrap();
    let id = s.id().to_string();
    s.close().unwrap();
    id
}

fn texts(store: &Store, id: &str) -> Vec<Value> {
    store
        .read_session(id)
        .unwrap()
        .active_path()
        .unwrap()
        .iter()
        .map(|m| m.value()["content"].clone())
        .collect()
}

#[test]
fn default_options_keep_every_session() {
    assert_eq!(StoreOptions::default().max_sessions, 0);
    assert_eq!(StoreOptions::default().trash_grace_secs, 604_800);
    let e = env_with(|_| {});
    let mut ids = Vec::new();
    for i in 0..60 {
        let s = e.store.create_session(CreateOptions::default()).unwrap();
        assert!(s.pruned().is_empty(), "session {i} pruned {:?}", s.pruned());
        s.append(json!({"role": "user", "content": format!("hello {i}")}))
            .unwrap();
        ids.push(s.id().to_string());
        s.close().unwrap();
    }
    let mut listed = e.listed();
    listed.sort();
    let mut want = ids.clone();
    want.sort();
    assert_eq!(listed, want);
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(texts(&e.store, id), [json!(format!("hello {i}"))]);
    }
    assert!(e.trashed().is_empty());
    assert!(!e.dir().join("trash").exists());
    assert!(e.gc(&e.store).trash_purged.is_empty());
}

#[test]
fn pruning_moves_to_the_trash_and_restore_brings_everything_back() {
    let e = env_with(|o| o.max_sessions = 3);
    let oldest = rich_session(&e, "oldest");
    let b = plain_session(&e.store, "b");
    let c = plain_session(&e.store, "c");
    let d = e.store.create_session(CreateOptions::default()).unwrap();
    assert_eq!(
        d.pruned(),
        std::slice::from_ref(&oldest),
        "reported, never silent"
    );
    let d_id = d.id().to_string();
    d.close().unwrap();

    // Moved, not deleted: the log, its sidecars and a record of why.
    let t = e.trash(&oldest);
    assert!(!e.live_log(&oldest).exists());
    assert!(!e.dir().join(&oldest).exists());
    assert!(t.join(format!("{oldest}.jsonl")).is_file());
    assert!(t.join(&oldest).join("subagents/helper.jsonl").is_file());
    let record: Value = serde_json::from_slice(&fs::read(t.join("trashed.json")).unwrap()).unwrap();
    assert_eq!(record["id"], json!(oldest));
    assert_eq!(record["reason"], json!("pruned"));
    assert_eq!(record["entry"]["title"], json!("oldest"));
    for p in [&t, &t.join("trashed.json"), &e.dir().join("trash")] {
        let mode = fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert!(mode & 0o077 == 0, "{} is {mode:o}", p.display());
    }

    // Listed in the trash only.
    assert!(!e.listed().contains(&oldest));
    assert_eq!(
        e.store.read_session(&oldest).unwrap_err().kind(),
        ErrorKind::NotFound
    );
    let trash = e.store.list_trash().unwrap();
    assert_eq!(trash.len(), 1);
    let ts = &trash[0];
    assert_eq!(
        (ts.id.as_str(), ts.reason.as_str(), ts.title.as_str()),
        (oldest.as_str(), "pruned", "oldest")
    );
    assert_eq!(ts.message_count, 2);
    let at = |s: &str| humantime::parse_rfc3339(s).unwrap();
    assert_eq!(
        at(&ts.purge_after)
            .duration_since(at(&ts.trashed_at))
            .unwrap(),
        Duration::from_secs(604_800)
    );
    let v = serde_json::to_value(ts).unwrap();
    for k in [
        "id",
        "trashedAt",
        "reason",
        "title",
        "updatedAt",
        "messageCount",
        "purgeAfter",
    ] {
        assert!(v.get(k).is_some(), "{k} in {v}");
    }

    // Until purged, gc keeps its blobs and its file history, and doctor is happy.
    e.age_blobs();
    let blobs = e.blobs();
    assert!(!blobs.is_empty());
    let report = e.gc(&e.store);
    assert!(report.trash_purged.is_empty(), "{report:?}");
    assert_eq!(report.blobs.blobs_removed, 0, "{report:?}");
    assert_eq!(e.blobs(), blobs);
    assert!(e.store.prune_orphan_file_history().unwrap().is_empty());
    assert!(e.branches().contains(&oldest));
    assert!(e.store.check_file_history().unwrap().orphan_refs.is_empty());
    let doc = e
        .store
        .doctor(&DoctorOptions { repair: false }, &mut |_| {})
        .unwrap();
    assert!(doc.ok, "{doc:?}");

    // Restore: everything back, the index entry re-added (no prune on restore).
    let entry = e.store.restore_session(&oldest).unwrap();
    assert_eq!(entry.id, oldest);
    assert_eq!(entry.title, "oldest");
    assert!(!t.exists());
    assert!(e.trashed().is_empty());
    let mut listed = e.listed();
    listed.sort();
    let mut want = vec![oldest.clone(), b, c, d_id];
    want.sort();
    assert_eq!(listed, want);
    let msgs = texts(&e.store, &oldest);
    assert_eq!(msgs[0], json!("oldest: edit a.txt"));
    assert_eq!(msgs[1], json!(big("oldest")));
    let side = e.store.read_subagent(&oldest, "helper").unwrap();
    assert_eq!(side.active_path().unwrap().len(), 1);
    // Its file history is whole: undo still restores the file.
    let s = e.store.open_session(&oldest).unwrap();
    let first = s.active_path().unwrap()[0].id().to_string();
    s.rewind(&first, sessionkit::RewindMode::Files, false)
        .unwrap();
    assert_eq!(
        fs::read_to_string(e.root.join("a.txt")).unwrap(),
        "before\n"
    );
    assert_eq!(
        e.store.restore_session(&oldest).unwrap_err().kind(),
        ErrorKind::NotFound
    );
}

#[test]
fn gc_purges_after_the_grace_period_and_says_which() {
    let e = env_with(|o| o.max_sessions = 1);
    let old = rich_session(&e, "old");
    let newer = e.store.create_session(CreateOptions::default()).unwrap();
    assert_eq!(newer.pruned(), std::slice::from_ref(&old));
    newer.close().unwrap();
    e.age_blobs();

    // A week's grace by default: nothing goes.
    assert!(e.gc(&e.store).trash_purged.is_empty());
    assert_eq!(e.trashed(), std::slice::from_ref(&old));

    let now = e.reopen(|o| o.trash_grace_secs = 0);
    let report = e.gc(&now);
    assert_eq!(report.trash_purged, std::slice::from_ref(&old));
    assert!(!e.trash(&old).exists());
    assert!(now.list_trash().unwrap().is_empty());
    assert!(!e.branches().contains(&old));
    // The purge left the blob unreferenced; the same gc deleted it.
    assert_eq!(report.blobs.blobs_removed, 1, "{report:?}");
    assert!(e.blobs().is_empty());
    assert_eq!(
        now.restore_session(&old).unwrap_err().kind(),
        ErrorKind::NotFound
    );
    assert!(e.gc(&now).trash_purged.is_empty());
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["trashPurged"], json!([old]));
}

#[test]
fn restore_refuses_a_live_id_and_bad_ids_and_writes_nothing() {
    let e = env_with(|o| o.max_sessions = 1);
    let a = plain_session(&e.store, "first a");
    let b = plain_session(&e.store, "b");
    assert_eq!(e.trashed(), std::slice::from_ref(&a));
    // A new session under the trashed id: the live one wins.
    let again = e
        .store
        .create_session(CreateOptions {
            id: Some(a.clone()),
            ..CreateOptions::default()
        })
        .unwrap();
    assert_eq!(again.pruned(), std::slice::from_ref(&b));
    again
        .append(json!({"role": "user", "content": "second a"}))
        .unwrap();
    let err = e.store.restore_session(&a).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
    assert!(err.to_string().contains(&a), "{err}");
    drop(again);
    assert_eq!(texts(&e.store, &a), [json!("second a")]);
    assert!(e.trash(&a).join(format!("{a}.jsonl")).exists());

    let before = snapshot(&e.home);
    for bad in ["../x", "", ".hidden", "a/b", "trash", "blobs", "x.jsonl"] {
        let err = e.store.restore_session(bad).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{bad:?}: {err}");
    }
    let err = e.store.restore_session("no-such-session").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    assert!(err.to_string().contains("no-such-session"), "{err}");
    assert_eq!(snapshot(&e.home), before);
    assert_eq!(
        e.store
            .create_session(CreateOptions {
                id: Some("trash".into()),
                ..CreateOptions::default()
            })
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidInput
    );
}

/// Every path under `dir` with its length (the project lock file aside).
fn snapshot(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for f in fs::read_dir(&d).unwrap() {
            let p = f.unwrap().path();
            let m = fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p.clone());
            }
            out.push((p, if m.is_dir() { 0 } else { m.len() }));
        }
    }
    out.sort();
    out
}

#[test]
fn delete_is_still_a_real_delete() {
    let e = env_with(|o| o.max_sessions = 5);
    let a = plain_session(&e.store, "a");
    e.store.delete_session(&a).unwrap();
    assert!(!e.live_log(&a).exists());
    assert!(!e.dir().join("trash").exists());
    assert!(e.trashed().is_empty());
}

#[test]
fn a_move_cut_short_is_finished_by_the_next_operation() {
    let e = env_with(|o| o.max_sessions = 1);
    let a = rich_session(&e, "a");
    plain_session(&e.store, "b");
    let t = e.trash(&a);
    let trashed_log = t.join(format!("{a}.jsonl"));

    // A prune stopped before its last step (the log still live, the sidecar
    // and the record already in the trash): the session is live, and the next
    // operation moves its sidecar back.
    fs::rename(&trashed_log, e.live_log(&a)).unwrap();
    assert!(t.join(&a).join("subagents").exists());
    assert!(e.trashed().is_empty(), "list_trash finishes it");
    assert!(!t.exists());
    assert!(e.listed().contains(&a));
    assert_eq!(
        e.store
            .read_subagent(&a, "helper")
            .unwrap()
            .active_path()
            .unwrap()
            .len(),
        1
    );

    // The same through gc, which also keeps the session's blob and branch.
    let c = e.store.create_session(CreateOptions::default()).unwrap();
    assert!(c.pruned().contains(&a), "{:?}", c.pruned());
    c.close().unwrap();
    fs::rename(&trashed_log, e.live_log(&a)).unwrap();
    e.age_blobs();
    let report = e.gc(&e.store);
    assert!(report.trash_purged.is_empty());
    assert_eq!(report.blobs.blobs_removed, 0, "{report:?}");
    assert!(!t.exists());
    assert!(e.dir().join(&a).join("subagents/helper.jsonl").exists());
    assert!(e.branches().contains(&a));

    // A purge stopped after removing the log: the next gc finishes it.
    let d = e.store.create_session(CreateOptions::default()).unwrap();
    assert!(d.pruned().contains(&a), "{:?}", d.pruned());
    d.close().unwrap();
    fs::remove_file(&trashed_log).unwrap();
    let report = e.gc(&e.store);
    assert!(!t.exists(), "{report:?}");
    assert!(!e.branches().contains(&a));
    assert!(!e.listed().contains(&a));
}
