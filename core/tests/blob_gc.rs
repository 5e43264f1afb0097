//! `Store::gc_blobs`: blobs no log refers to are deleted once old enough; every
//! blob a session, a fork or a subagent refers to stays.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::json;
use sessionkit::{CreateOptions, Durability, ForkOptions, GcPhase, Store, StoreOptions};

fn store(home: &Path, project: &Path) -> Store {
    Store::open(
        project,
        StoreOptions {
            home: Some(home.to_path_buf()),
            durability: Durability::Never,
            blob_threshold: 1024,
            ..StoreOptions::default()
        },
    )
    .unwrap()
}

fn project_dir(store: &Store) -> PathBuf {
    store.index_path().parent().unwrap().to_path_buf()
}

fn blob_files(store: &Store) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let dir = project_dir(store).join("blobs");
    for d in std::fs::read_dir(&dir).into_iter().flatten() {
        for f in std::fs::read_dir(d.unwrap().path()).unwrap() {
            out.push(f.unwrap().path());
        }
    }
    out.sort();
    out
}

/// Make every blob look older than the grace period.
fn age_blobs(store: &Store) {
    let old = SystemTime::now() - sessionkit::BLOB_GC_GRACE - Duration::from_secs(60);
    for p in blob_files(store) {
        std::fs::File::open(&p).unwrap().set_modified(old).unwrap();
    }
}

fn big(tag: &str) -> String {
    format!("{tag}: {}", "payload line\n".repeat(400))
}

#[test]
fn deletes_only_unreferenced_old_blobs_and_reports_them() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(home.path(), project.path());

    let keep = s.create_session(CreateOptions::default()).unwrap();
    keep.append(json!({"role": "user", "content": big("kept")}))
        .unwrap();
    let forked_from = s.create_session(CreateOptions::default()).unwrap();
    forked_from
        .append(json!({"role": "user", "content": big("shared with a fork")}))
        .unwrap();
    let sub_owner = s.create_session(CreateOptions::default()).unwrap();
    let agent = sub_owner.spawn_subagent(Some("helper"), json!({})).unwrap();
    agent
        .append(json!({"role": "tool", "content": big("in a sidechain")}))
        .unwrap();
    let doomed = s.create_session(CreateOptions::default()).unwrap();
    doomed
        .append(json!({"role": "user", "content": big("deleted with its session")}))
        .unwrap();
    let doomed_id = doomed.id().to_string();
    let fork_src = forked_from.id().to_string();
    let (keep_id, sub_owner_id) = (keep.id().to_string(), sub_owner.id().to_string());
    drop(agent);
    for x in [keep, forked_from, sub_owner, doomed] {
        x.close().unwrap();
    }
    let fork = s.fork_session(&fork_src, ForkOptions::default()).unwrap();
    let fork_id = fork.id().to_string();
    fork.close().unwrap();
    s.delete_session(&fork_src).unwrap();
    s.delete_session(&doomed_id).unwrap();

    assert_eq!(blob_files(&s).len(), 4);
    let doomed_len: u64 = {
        // The one blob whose digest no remaining log names.
        let logs: String = walk_texts(&project_dir(&s));
        blob_files(&s)
            .iter()
            .filter(|p| {
                let name = p.file_name().unwrap().to_str().unwrap();
                !logs.contains(name)
            })
            .map(|p| std::fs::metadata(p).unwrap().len())
            .sum()
    };
    age_blobs(&s);

    let mut phases = Vec::new();
    let r = s
        .gc_blobs(&mut |p| {
            assert!(p.done <= p.total);
            phases.push(p.phase)
        })
        .unwrap();
    assert_eq!(r.blobs_before, 4);
    assert_eq!(r.blobs_removed, 1);
    assert_eq!(r.bytes_freed, doomed_len);
    assert!(r.bytes_freed > 0);
    assert!(phases.contains(&GcPhase::ScanningLogs) && phases.contains(&GcPhase::PruningBlobs));
    assert_eq!(blob_files(&s).len(), 3);

    // Everything still resumes with its content back in place.
    let text = |id: &str| {
        s.read_session(id).unwrap().active_path().unwrap()[0].value()["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(text(&keep_id), big("kept"));
    assert_eq!(text(&fork_id), big("shared with a fork"));
    let sidechain = s.read_subagent(&sub_owner_id, "helper").unwrap();
    assert_eq!(
        sidechain.active_path().unwrap()[0].value()["content"],
        big("in a sidechain")
    );

    // Nothing left to do.
    let again = s.gc_blobs(&mut |_| {}).unwrap();
    assert_eq!((again.blobs_removed, again.bytes_freed), (0, 0));
}

#[test]
fn young_or_reused_blobs_are_kept() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(home.path(), project.path());
    let a = s.create_session(CreateOptions::default()).unwrap();
    a.append(json!({"role": "user", "content": big("young")}))
        .unwrap();
    let id = a.id().to_string();
    a.close().unwrap();
    s.delete_session(&id).unwrap();

    // Unreferenced but just written: an append could be about to name it.
    let r = s.gc_blobs(&mut |_| {}).unwrap();
    assert_eq!((r.blobs_removed, r.kept_young), (0, 1));

    // Old, then stored again by another session: the reuse makes it young.
    age_blobs(&s);
    let b = s.create_session(CreateOptions::default()).unwrap();
    b.append(json!({"role": "user", "content": big("young")}))
        .unwrap();
    let modified = std::fs::metadata(&blob_files(&s)[0])
        .unwrap()
        .modified()
        .unwrap();
    assert!(SystemTime::now().duration_since(modified).unwrap() < Duration::from_secs(60));
    let r = s.gc_blobs(&mut |_| {}).unwrap();
    assert_eq!(r.blobs_removed, 0);
    assert_eq!(blob_files(&s).len(), 1);
}

#[test]
fn a_reference_spelled_with_escapes_or_on_a_bad_line_keeps_its_blob() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(home.path(), project.path());
    let a = s.create_session(CreateOptions::default()).unwrap();
    a.append(json!({"role": "user", "content": big("one")}))
        .unwrap();
    let b = s.create_session(CreateOptions::default()).unwrap();
    b.append(json!({"role": "user", "content": big("two")}))
        .unwrap();
    let (a_log, b_log) = (a.path().to_path_buf(), b.path().to_path_buf());
    a.close().unwrap();
    b.close().unwrap();
    // Another writer's spelling of the key (legal JSON), and a line broken so
    // the reader skips it.
    let text = std::fs::read_to_string(&a_log).unwrap();
    std::fs::write(&a_log, text.replace("\"sha256\"", "\"\\u0073ha256\"")).unwrap();
    let text = std::fs::read_to_string(&b_log).unwrap();
    std::fs::write(
        &b_log,
        text.replace("\"contentBlob\":{", "\"contentBlob\":{{"),
    )
    .unwrap();
    age_blobs(&s);
    let r = s.gc_blobs(&mut |_| {}).unwrap();
    assert_eq!((r.blobs_before, r.blobs_removed), (2, 0));
}

fn walk_texts(dir: &Path) -> String {
    let mut out = String::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() && !p.ends_with("blobs") {
            out.push_str(&walk_texts(&p));
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            out.push_str(&std::fs::read_to_string(&p).unwrap());
        }
    }
    out
}

/// `gc_temp_files` deletes the `.tmp-*` leftovers of a crash once older than the
/// grace period, wherever the library writes them, and nothing else.
#[test]
fn temp_file_leftovers_are_deleted_once_old() {
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = store(home.path(), project.path());
    let session = s.create_session(CreateOptions::default()).unwrap();
    session
        .append(json!({"role": "user", "content": big("in a blob")}))
        .unwrap();
    let agent = session.spawn_subagent(Some("helper"), json!({})).unwrap();
    agent
        .append(json!({"role": "user", "content": "hi"}))
        .unwrap();
    let dir = project_dir(&s);
    let blob_dir = blob_files(&s)[0].parent().unwrap().to_path_buf();
    let subagents = dir.join(session.id()).join("subagents");
    assert!(subagents.is_dir());

    let old = SystemTime::now() - sessionkit::BLOB_GC_GRACE - Duration::from_secs(60);
    let write = |p: PathBuf, bytes: usize, aged: bool| {
        std::fs::write(&p, vec![b'x'; bytes]).unwrap();
        if aged {
            std::fs::File::open(&p).unwrap().set_modified(old).unwrap();
        }
        p
    };
    let leftovers = [
        write(dir.join(".tmp-index1"), 100, true),
        write(subagents.join(".tmp-meta2"), 20, true),
        write(blob_dir.join(".tmp-blob3"), 3, true),
    ];
    let young = write(dir.join(".tmp-inflight"), 7, false);
    let not_temp = write(dir.join("notes.txt"), 5, true);
    let temp_dir = dir.join(".tmp-dir");
    std::fs::create_dir(&temp_dir).unwrap();
    std::os::unix::fs::symlink(&not_temp, dir.join(".tmp-link")).unwrap();
    let before: Vec<_> = [session.path().to_path_buf(), s.index_path()]
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();

    let r = s.gc_temp_files().unwrap();
    assert_eq!((r.removed, r.bytes_freed, r.kept_young), (3, 123, 1));
    assert!(leftovers.iter().all(|p| !p.exists()));
    assert!(young.exists() && not_temp.exists() && temp_dir.is_dir());
    assert!(dir.join(".tmp-link").symlink_metadata().is_ok());
    let after: Vec<_> = [session.path().to_path_buf(), s.index_path()]
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    assert_eq!(before, after);
    // The session still reads back whole, blob and subagent included.
    drop((agent, session));
    assert_eq!(s.list_sessions().unwrap().len(), 1);
    assert_eq!(s.gc_temp_files().unwrap().removed, 0);
}

#[test]
fn a_checkpoint_value_held_in_a_blob_stays_while_its_thread_lives() {
    use sessionkit::{ChannelValue, CheckpointPut, TypedValue};
    let tmp = tempfile::tempdir().unwrap();
    let s = store(&tmp.path().join("home"), tmp.path());
    // Bytes zstd cannot shrink below the 1 KiB threshold: a blob.
    let mut x: u64 = 88172645463325252;
    let value: Vec<u8> = (0..8192)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let put = CheckpointPut {
        checkpoint: json!({"id": "1", "channel_versions": {"c": 1}})
            .as_object()
            .unwrap()
            .clone(),
        values: vec![ChannelValue {
            channel: "c".into(),
            version: json!(1),
            value: Some(TypedValue {
                kind: "bytes".into(),
                bytes: value.clone(),
            }),
        }],
        ..CheckpointPut::default()
    };
    s.checkpoint_put("thread", put).unwrap();
    assert_eq!(blob_files(&s).len(), 1);
    age_blobs(&s);
    let report = s.gc_blobs(&mut |_| {}).unwrap();
    assert_eq!(report.blobs_removed, 0);
    let fresh = store(&tmp.path().join("home"), tmp.path());
    let t = fresh.checkpoint_get("thread", "", None).unwrap().unwrap();
    assert_eq!(t.values[0].1.bytes, value);
    // Deleted (in the trash) it is still restorable, so its blob stays too.
    fresh.checkpoint_delete_thread("thread").unwrap();
    assert_eq!(fresh.gc_blobs(&mut |_| {}).unwrap().blobs_removed, 0);
}
